/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * swfsim_clock.c: the simulator's real-time clocks: microseconds for the
 * wait deadlines and seconds for the report's wall times (monotonic, so
 * that a changed system time moves neither).
 */

#include <time.h>

#include "swfsim.h"

uint64_t swfsim_now_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t) ts.tv_sec * 1000000ull + (uint64_t) ts.tv_nsec / 1000u;
}

double swfsim_wall(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}
