/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * t_cleanup.c: btl_sci leaves no file named sci.* on disk, while a job runs
 * (each segment is removed once its peers mapped it) nor after it, also
 * when a rank is SIGKILLed. The test itself is tests/lib/tr_cleanup.h.
 */
#define _GNU_SOURCE
#include "../lib/tr_cleanup.h"

int main(int argc, char **argv)
{
    return tr_cleanup_main(argc, argv, "sci");
}
