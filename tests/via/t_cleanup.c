/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * t_cleanup.c: btl_via leaves no file named via.* on disk, while a job runs
 * (a NIC's emu segment name is removed once all its peers attached) nor
 * after it, also when a rank is SIGKILLed. Every rank first exchanges a
 * checked value with every other rank, so every VI is connected. The test
 * itself is tests/lib/tr_cleanup.h.
 */
#define _GNU_SOURCE
#include "../lib/tr_cleanup.h"

int main(int argc, char **argv)
{
    return tr_cleanup_main(argc, argv, "via");
}
