/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * swf_threads.c: four threads per rank ping-pong between ranks 0 and 1 at
 * the same time, each on its own tag, under MPI_THREAD_MULTIPLE: sends
 * and progress of several threads share one simulator connection. Data is
 * checked in every message.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <mpi.h>

#define THREADS 4
#define ROUNDS 200
#define BYTES 3000

static int rank;
static int errors[THREADS];

static void *worker(void *arg)
{
    int tag = (int) (long) arg, i, k;
    unsigned char buf[BYTES];

    for (i = 0; i < ROUNDS; i++) {
        if (0 == rank) {
            for (k = 0; k < BYTES; k++) {
                buf[k] = (unsigned char) (k * 3 + i + tag * 17);
            }
            MPI_Send(buf, BYTES, MPI_BYTE, 1, tag, MPI_COMM_WORLD);
            MPI_Recv(buf, BYTES, MPI_BYTE, 1, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            for (k = 0; k < BYTES; k++) {
                if (buf[k] != (unsigned char) (k * 5 + i + tag * 17)) {
                    errors[tag]++;
                    break;
                }
            }
        } else if (1 == rank) {
            MPI_Recv(buf, BYTES, MPI_BYTE, 0, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            for (k = 0; k < BYTES; k++) {
                if (buf[k] != (unsigned char) (k * 3 + i + tag * 17)) {
                    errors[tag]++;
                    break;
                }
            }
            for (k = 0; k < BYTES; k++) {
                buf[k] = (unsigned char) (k * 5 + i + tag * 17);
            }
            MPI_Send(buf, BYTES, MPI_BYTE, 0, tag, MPI_COMM_WORLD);
        }
    }
    return NULL;
}

int main(int argc, char **argv)
{
    pthread_t t[THREADS];
    int provided, i, mine = 0, total = 0;

    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (MPI_THREAD_MULTIPLE != provided) {
        if (0 == rank) {
            printf("PASS threads: MPI_THREAD_MULTIPLE not provided (%d), skipped\n", provided);
        }
        MPI_Finalize();
        return 0;
    }
    for (i = 0; i < THREADS; i++) {
        pthread_create(&t[i], NULL, worker, (void *) (long) i);
    }
    for (i = 0; i < THREADS; i++) {
        pthread_join(t[i], NULL);
        mine += errors[i];
    }
    MPI_Reduce(&mine, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (0 == rank) {
        printf("%s threads: %d threads x %d round trips of %d B, %d errors\n",
               total ? "FAIL" : "PASS", THREADS, ROUNDS, BYTES, total);
    }
    MPI_Finalize();
    return total ? 1 : 0;
}
