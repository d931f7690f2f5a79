/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * t_mt.c: btl_via under MPI_THREAD_MULTIPLE.  Every rank runs 4 threads;
 * thread t of rank r exchanges messages with thread t of every other rank
 * (tag t), sizes from 0 B to 1 MiB so that sends, credit waits and RDMA
 * all run from several threads at once.  Every byte is checked.
 */
#include <mpi.h>

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NTHREADS 4
#define ROUNDS 20

static int rank, size;
static int errors[NTHREADS];

static uint8_t pat(int from, int to, int t, int round, size_t i)
{
    return (uint8_t) (from * 131 + to * 31 + t * 7 + round * 3 + i * 13 + (i >> 9));
}

static void *worker(void *arg)
{
    int t = (int) (intptr_t) arg;
    static const size_t sizes[] = {0, 1, 8, 100, 4000, 4097, 65536, 300000, 1048576};
    const int nsizes = (int) (sizeof(sizes) / sizeof(sizes[0]));
    size_t max = sizes[nsizes - 1];
    uint8_t *s = malloc(max), *r = malloc(max);

    for (int round = 0; round < ROUNDS; ++round) {
        size_t len = sizes[(round + t) % nsizes];
        for (int peer = 0; peer < size; ++peer) {
            MPI_Request req[2];

            if (peer == rank) {
                continue;
            }
            for (size_t i = 0; i < len; ++i) {
                s[i] = pat(rank, peer, t, round, i);
            }
            memset(r, 0, len);
            MPI_Irecv(r, (int) len, MPI_BYTE, peer, t, MPI_COMM_WORLD, &req[0]);
            MPI_Isend(s, (int) len, MPI_BYTE, peer, t, MPI_COMM_WORLD, &req[1]);
            MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
            for (size_t i = 0; i < len; ++i) {
                if (r[i] != pat(peer, rank, t, round, i)) {
                    ++errors[t];
                    break;
                }
            }
        }
    }
    free(s);
    free(r);
    return NULL;
}

int main(int argc, char **argv)
{
    pthread_t th[NTHREADS];
    int provided, local = 0, total = 0;

    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (provided < MPI_THREAD_MULTIPLE) {
        if (0 == rank) {
            printf("SKIP mt: MPI_THREAD_MULTIPLE not provided\n");
        }
        MPI_Finalize();
        return 77;
    }
    for (int t = 0; t < NTHREADS; ++t) {
        pthread_create(&th[t], NULL, worker, (void *) (intptr_t) t);
    }
    for (int t = 0; t < NTHREADS; ++t) {
        pthread_join(th[t], NULL);
        local += errors[t];
    }
    MPI_Allreduce(&local, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (0 == rank) {
        printf("%s mt: %d ranks x %d threads x %d rounds, 0 B..1 MiB, %d errors\n",
               total ? "FAIL" : "PASS", size, NTHREADS, ROUNDS, total);
    }
    MPI_Finalize();
    return total ? 1 : 0;
}
