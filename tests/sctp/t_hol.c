/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * t_hol.c: small messages keep flowing while a large transfer is in flight.
 *
 * Rank 0 sends a large message (argv[1] MiB, patterned) to rank 1 and,
 * while it is in flight, runs 8-byte round trips with rank 1. Rank 1
 * answers each one with whether its large receive has completed. Printed:
 * round trips completed during the transfer and their mean time, against
 * round trips on an idle connection. Data of every message is checked;
 * times are reported, never asserted (the machine may be loaded).
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static unsigned char pat(size_t i)
{
    return (unsigned char) (i * 13 + (i >> 12));
}

int main(int argc, char **argv)
{
    int rank, errors = 0;
    size_t big = (size_t) (argc > 1 ? atoi(argv[1]) : 64) << 20;
    unsigned char *buf;
    long during = 0;
    double t_idle = 0, t_during = 0;
    const int idle_rounds = 200;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    buf = malloc(big);
    if (NULL == buf) {
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (rank > 1) {
        goto done;
    }
    /* idle round trips first: the baseline */
    for (int i = 0; i < idle_rounds + 10; ++i) {
        int64_t v = i, r = -1;
        double t0 = MPI_Wtime();
        if (0 == rank) {
            MPI_Send(&v, 1, MPI_INT64_T, 1, 2, MPI_COMM_WORLD);
            MPI_Recv(&r, 1, MPI_INT64_T, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (r != i) {
                errors++;
            }
        } else {
            MPI_Recv(&r, 1, MPI_INT64_T, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(&r, 1, MPI_INT64_T, 0, 3, MPI_COMM_WORLD);
        }
        if (i >= 10) {
            t_idle += MPI_Wtime() - t0;
        }
    }
    if (0 == rank) {
        MPI_Request req;
        int64_t done = 0;
        for (size_t i = 0; i < big; ++i) {
            buf[i] = pat(i);
        }
        MPI_Isend(buf, (int) big, MPI_BYTE, 1, 1, MPI_COMM_WORLD, &req);
        for (int64_t i = 0; !done; ++i) {
            int64_t reply[2];
            double t0 = MPI_Wtime();
            int flag;
            MPI_Send(&i, 1, MPI_INT64_T, 1, 2, MPI_COMM_WORLD);
            MPI_Recv(reply, 2, MPI_INT64_T, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (reply[0] != i) {
                errors++;
            }
            done = reply[1];
            if (!done) {
                t_during += MPI_Wtime() - t0;
                during++;
            }
            MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
        }
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        {
            int64_t stop = -1;
            MPI_Send(&stop, 1, MPI_INT64_T, 1, 2, MPI_COMM_WORLD);
        }
    } else {
        MPI_Request req;
        int flag = 0;
        MPI_Irecv(buf, (int) big, MPI_BYTE, 0, 1, MPI_COMM_WORLD, &req);
        for (;;) {
            int64_t v, reply[2];
            MPI_Recv(&v, 1, MPI_INT64_T, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (v < 0) {
                break;
            }
            if (!flag) {
                MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
            }
            reply[0] = v;
            reply[1] = flag;
            MPI_Send(reply, 2, MPI_INT64_T, 0, 3, MPI_COMM_WORLD);
        }
        for (size_t i = 0; i < big; ++i) {
            if (buf[i] != pat(i)) {
                errors++;
                break;
            }
        }
    }
done:
    MPI_Allreduce(MPI_IN_PLACE, &errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (0 == rank) {
        printf("t_hol: %zu MiB in flight: %ld small round trips during it, mean %.1f us "
               "(idle: %.1f us), %d errors\n",
               big >> 20, during, during ? t_during / during * 1e6 : 0.0,
               t_idle / idle_rounds * 1e6, errors);
    }
    free(buf);
    MPI_Finalize();
    return errors ? 1 : 0;
}
