/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * swf_alltoall.c: repeated MPI_Alltoall with verified data, the workload
 * behind the torus timing note (how much wall time one simulated second
 * costs). Usage: swf_alltoall [bytes per pair, default 1024] [rounds,
 * default 200]. Rank 0 prints one "ALLTOALL" line with the wall time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <mpi.h>

int main(int argc, char **argv)
{
    int rank, size, i, r, errors = 0, total_errors = 0;
    long bytes = argc > 1 ? atol(argv[1]) : 1024, rounds = argc > 2 ? atol(argv[2]) : 200;
    unsigned char *sbuf, *rbuf;
    double t0, t1;
    long k;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (bytes < 1) {
        bytes = 1;
    }
    sbuf = malloc((size_t) bytes * size);
    rbuf = malloc((size_t) bytes * size);
    if (NULL == sbuf || NULL == rbuf) {
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    for (r = 0; r < rounds; r++) {
        for (i = 0; i < size; i++) {
            for (k = 0; k < bytes; k++) {
                sbuf[(long) i * bytes + k] = (unsigned char) (rank * 31 + i * 7 + r + k);
            }
        }
        MPI_Alltoall(sbuf, (int) bytes, MPI_BYTE, rbuf, (int) bytes, MPI_BYTE, MPI_COMM_WORLD);
        for (i = 0; i < size; i++) {
            for (k = 0; k < bytes; k++) {
                if (rbuf[(long) i * bytes + k] != (unsigned char) (i * 31 + rank * 7 + r + k)) {
                    errors++;
                    break;
                }
            }
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    t1 = MPI_Wtime();
    MPI_Reduce(&errors, &total_errors, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (0 == rank) {
        printf("ALLTOALL np=%d bytes=%ld rounds=%ld wall=%.3f s errors=%d\n", size, bytes, rounds,
               t1 - t0, total_errors);
        printf("%s alltoall: np=%d %ld rounds of %ld B per pair, %d errors\n",
               total_errors ? "FAIL" : "PASS", size, rounds, bytes, total_errors);
    }
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return total_errors ? 1 : 0;
}
