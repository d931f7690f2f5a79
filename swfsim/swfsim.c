/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * swfsim.c: entry point of the swfsim program (the work is in
 * libswfsim_core, so that tests can run a simulator in a child process).
 */

#include "swfsim.h"

int main(int argc, char **argv)
{
    return swfsim_main(argc, argv);
}
