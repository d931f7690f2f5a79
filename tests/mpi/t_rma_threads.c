/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * t_rma_threads.c: MPI one-sided communication from several threads at
 * once (MPI_THREAD_MULTIPLE): inside one lock_all epoch every thread of
 * every rank does fetch_and_op on one shared counter, accumulates into a
 * second one, and put / flush / get round trips on its own slot at every
 * rank. Checks that every fetched value is unique, the counters' totals and
 * the slots' contents. Names no osc component.
 */

#include "tmpi.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NTHREADS 4
#define ITERS 50

static MPI_Win win;
static long *fetched;

static void *worker(void *arg)
{
    int t = (int) (long) arg;
    long one = 1;

    for (int i = 0; i < ITERS; i++) {
        int target = (tmpi_rank + i) % tmpi_size;
        long v = (long) tmpi_rank * 1000000 + t * 10000 + i, back = -1;
        MPI_Aint slot = 16 + (MPI_Aint) (tmpi_rank * NTHREADS + t) * 8;
        if (MPI_SUCCESS !=
                MPI_Fetch_and_op(&one, &fetched[t * ITERS + i], MPI_LONG, 0, 0, MPI_SUM, win) ||
            MPI_SUCCESS != MPI_Accumulate(&one, 1, MPI_LONG, 0, 8, 1, MPI_LONG, MPI_SUM, win) ||
            MPI_SUCCESS != MPI_Put(&v, 1, MPI_LONG, target, slot, 1, MPI_LONG, win) ||
            MPI_SUCCESS != MPI_Win_flush(target, win) ||
            MPI_SUCCESS != MPI_Get(&back, 1, MPI_LONG, target, slot, 1, MPI_LONG, win) ||
            MPI_SUCCESS != MPI_Win_flush(target, win)) {
            tmpi_error("thread %d: an RMA call failed", t);
            break;
        }
        if (back != v) {
            tmpi_error("thread %d iteration %d: read back %ld, wrote %ld", t, i, back, v);
        }
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided = 0;
    pthread_t th[NTHREADS];
    long *base, *all = NULL;
    size_t bytes;

    tmpi_name = "rma_threads";
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &tmpi_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &tmpi_size);
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (provided < MPI_THREAD_MULTIPLE) {
        tmpi_error("MPI_THREAD_MULTIPLE not provided (%d)", provided);
        return tmpi_finish("no thread support");
    }
    bytes = 16 + (size_t) tmpi_size * NTHREADS * 8;
    base = tmpi_malloc(bytes);
    memset(base, 0, bytes);
    fetched = tmpi_malloc(NTHREADS * ITERS * sizeof(long));
    MPI_Win_create(base, bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    MPI_Win_lock_all(0, win);
    for (long t = 0; t < NTHREADS; t++) {
        pthread_create(&th[t], NULL, worker, (void *) t);
    }
    for (int t = 0; t < NTHREADS; t++) {
        pthread_join(th[t], NULL);
    }
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    if (0 == tmpi_rank) {
        all = tmpi_malloc((size_t) tmpi_size * NTHREADS * ITERS * sizeof(long));
    }
    MPI_Gather(fetched, NTHREADS * ITERS, MPI_LONG, all, NTHREADS * ITERS, MPI_LONG, 0,
               MPI_COMM_WORLD);
    if (0 == tmpi_rank) {
        long n = (long) tmpi_size * NTHREADS * ITERS, bad = 0;
        char *seen = calloc(n, 1);
        if (base[0] != n || base[1] != n) {
            tmpi_error("counters %ld / %ld, expected %ld", base[0], base[1], n);
        }
        for (long i = 0; i < n; i++) {
            if ((all[i] < 0 || all[i] >= n || seen[all[i]]++) && bad++ < 3) {
                tmpi_error("fetch_and_op value %ld twice or out of range", all[i]);
            }
        }
        free(seen);
        free(all);
    }
    MPI_Win_free(&win);
    free(base);
    free(fetched);
    return tmpi_finish("4 threads per rank, lock_all");
}
