/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * swf_launchenv.c: an MPI program that hands its private simulator things
 * it must not inherit: a descriptor above 1024 without close-on-exec and
 * a blocked signal, both set up before MPI_Init starts the simulator
 * (tests/swf/launch.sh checks what the simulator saw).
 */

#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    sigset_t set;
    int rank;

    if (dup2(1, 1500) < 0) {
        perror("dup2");
        return 1;
    }
    sigemptyset(&set);
    sigaddset(&set, SIGUSR2);
    sigprocmask(SIG_BLOCK, &set, NULL);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Barrier(MPI_COMM_WORLD);
    if (0 == rank) {
        printf("PASS launchenv\n");
    }
    MPI_Finalize();
    return 0;
}
