/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * swfsim_log.c: the simulator's messages on stderr, prefixed "swfsim:":
 * progress (silenced by --quiet) and warnings (always).
 */

#include <stdarg.h>
#include <stdio.h>

#include "swfsim.h"

void swfsim_log(swfsim_t *sim, const char *fmt, ...)
{
    va_list ap;

    if (NULL != sim && sim->cfg.quiet) {
        return;
    }
    va_start(ap, fmt);
    fputs("swfsim: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

void swfsim_warn(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    fputs("swfsim: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}
