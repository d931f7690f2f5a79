/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * swf_endless.c: a ping-pong between rank pairs that runs until the job is
 * ended from outside (the simulator-dies test kills the simulator under
 * it). It prints one "ENDLESS running" line per rank, with its pid, once
 * traffic flows. A bound on the iterations keeps a broken test from
 * running forever.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <mpi.h>

int main(int argc, char **argv)
{
    char buf[4096];
    int rank, size, peer;
    long i;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    peer = rank ^ 1;
    memset(buf, rank, sizeof(buf));
    for (i = 0; i < 100000000L; i++) {
        if (peer < size) {
            if (0 == (rank & 1)) {
                MPI_Send(buf, sizeof(buf), MPI_BYTE, peer, 1, MPI_COMM_WORLD);
                MPI_Recv(buf, sizeof(buf), MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(buf, sizeof(buf), MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(buf, sizeof(buf), MPI_BYTE, peer, 1, MPI_COMM_WORLD);
            }
        }
        if (100 == i) {
            printf("ENDLESS running rank=%d pid=%d\n", rank, (int) getpid());
            fflush(stdout);
        }
    }
    MPI_Finalize();
    return 0;
}
