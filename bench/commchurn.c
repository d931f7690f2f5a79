/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * commchurn.c: the wall time of communicator churn, the pattern of library
 * and solver setup: N times MPI_Comm_dup, one MPI_Allreduce of an int on
 * the new communicator, MPI_Comm_free; every 8th round also an
 * MPI_Comm_split by parity with an allreduce on it. The sums are checked.
 * Rank 0 prints "comms_s,<seconds>" (the slowest rank's time).
 */

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int rank, size, rounds = 200, i, in, out, errors = 0, all_errors = 0;
    double t0, t, tmax;
    MPI_Comm dup, half;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc > 1) {
        rounds = atoi(argv[1]);
        if (rounds <= 0) {
            rounds = 1;
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    for (i = 0; i < rounds; i++) {
        MPI_Comm_dup(MPI_COMM_WORLD, &dup);
        in = rank + i;
        MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_SUM, dup);
        if (out != size * (size - 1) / 2 + size * i) {
            errors++;
        }
        if (0 == i % 8) {
            int hsize;

            MPI_Comm_split(dup, rank % 2, rank, &half);
            MPI_Comm_size(half, &hsize);
            in = 1;
            MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_SUM, half);
            if (out != hsize) {
                errors++;
            }
            MPI_Comm_free(&half);
        }
        MPI_Comm_free(&dup);
    }
    t = MPI_Wtime() - t0;
    MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&errors, &all_errors, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (0 == rank) {
        if (all_errors) {
            fprintf(stderr, "comms: %d wrong sums\n", all_errors);
        }
        printf("comms_s,%.6f\n", tmax);
    }
    MPI_Finalize();
    return all_errors ? 1 : 0;
}
