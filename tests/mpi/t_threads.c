/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * t_threads.c: MPI_THREAD_MULTIPLE. Four threads per rank at once, each
 * with its own tag space, do blocking sends and receives, non-blocking
 * batches, Sendrecv and large (RDMA-sized, several MiB) transfers with a
 * ring of peers, and verify every byte. A transport that lets two threads
 * race on shared state (a DMA queue, a send queue, a progress guard, an
 * allocator) loses, corrupts or duplicates a message, or hangs.
 */

#include "tmpi.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NTHREADS 4
#define PASSES 3
#define BATCH 8

/* small, eager, around the rings' slots, pipeline fragments, RDMA */
static const size_t threads_sizes[] = {
    0, 1, 100, 2100, 8193, 65537, 1024 * 1024 + 1, 4 * 1024 * 1024 + 5,
};
#define NSIZES ((int) (sizeof(threads_sizes) / sizeof(threads_sizes[0])))
#define MAXLEN (4 * 1024 * 1024 + 5)
#define BATCHLEN (1024 * 1024 + 1)

typedef struct {
    int id;
    int to; /* this thread sends to `to` and receives from `from` */
    int from;
    uint8_t *sbuf[BATCH];
    uint8_t *rbuf[BATCH];
} threads_arg_t;

/* the sequence number of message n of thread t: distinct everywhere */
static uint32_t threads_seq(int t, int pass, int n)
{
    return (uint32_t) (t * 100000 + pass * 1000 + n);
}

static int threads_tag(int t, int n)
{
    return t * 1000 + n;
}

static void threads_verify(threads_arg_t *a, const MPI_Status *st, const uint8_t *buf, size_t len,
                           int tag, uint32_t seq, const char *what)
{
    char label[96];

    snprintf(label, sizeof(label), "thread %d %s", a->id, what);
    tmpi_check_status(st, a->from, tag, (int) len, label);
    tmpi_check(buf, len, a->from, seq, label);
}

/* blocking send, the receive posted first so that a ring cannot deadlock */
static void threads_blocking_send(threads_arg_t *a, int pass, int n, size_t len)
{
    int tag = threads_tag(a->id, n);
    uint32_t seq = threads_seq(a->id, pass, n);
    MPI_Request rq;
    MPI_Status st;

    tmpi_fill(a->sbuf[0], len, tmpi_rank, seq);
    memset(a->rbuf[0], 0, len);
    MPI_Irecv(a->rbuf[0], (int) len, MPI_BYTE, a->from, tag, MPI_COMM_WORLD, &rq);
    MPI_Send(a->sbuf[0], (int) len, MPI_BYTE, a->to, tag, MPI_COMM_WORLD);
    MPI_Wait(&rq, &st);
    threads_verify(a, &st, a->rbuf[0], len, tag, seq, "Send/Irecv");
}

/* blocking receive, the send started first */
static void threads_blocking_recv(threads_arg_t *a, int pass, int n, size_t len)
{
    int tag = threads_tag(a->id, n);
    uint32_t seq = threads_seq(a->id, pass, n);
    MPI_Request rq;
    MPI_Status st;

    tmpi_fill(a->sbuf[0], len, tmpi_rank, seq);
    memset(a->rbuf[0], 0, len);
    MPI_Isend(a->sbuf[0], (int) len, MPI_BYTE, a->to, tag, MPI_COMM_WORLD, &rq);
    MPI_Recv(a->rbuf[0], (int) len, MPI_BYTE, a->from, tag, MPI_COMM_WORLD, &st);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    threads_verify(a, &st, a->rbuf[0], len, tag, seq, "Isend/Recv");
}

static void threads_sendrecv(threads_arg_t *a, int pass, int n, size_t len)
{
    int tag = threads_tag(a->id, n);
    uint32_t seq = threads_seq(a->id, pass, n);
    MPI_Status st;

    tmpi_fill(a->sbuf[0], len, tmpi_rank, seq);
    memset(a->rbuf[0], 0, len);
    MPI_Sendrecv(a->sbuf[0], (int) len, MPI_BYTE, a->to, tag, a->rbuf[0], (int) len, MPI_BYTE,
                 a->from, tag, MPI_COMM_WORLD, &st);
    threads_verify(a, &st, a->rbuf[0], len, tag, seq, "Sendrecv");
}

/* BATCH messages of mixed sizes in flight at once, one tag each, and
 * the same tag used twice in a row so that order within a tag counts */
static void threads_batch(threads_arg_t *a, int pass, int n0)
{
    MPI_Request rq[2 * BATCH];
    MPI_Status st[2 * BATCH];
    size_t len[BATCH];

    for (int i = 0; i < BATCH; ++i) {
        int n = n0 + i;
        /* one RDMA-sized message per batch (slot 0), the rest up to 1 MiB */
        len[i] = threads_sizes[(n * 3 + pass) % (0 == i ? NSIZES : NSIZES - 1)];
        memset(a->rbuf[i], 0, len[i]);
        MPI_Irecv(a->rbuf[i], (int) len[i], MPI_BYTE, a->from, threads_tag(a->id, n0 + i / 2),
                  MPI_COMM_WORLD, &rq[i]);
    }
    for (int i = 0; i < BATCH; ++i) {
        int n = n0 + i;
        tmpi_fill(a->sbuf[i], len[i], tmpi_rank, threads_seq(a->id, pass, n));
        MPI_Isend(a->sbuf[i], (int) len[i], MPI_BYTE, a->to, threads_tag(a->id, n0 + i / 2),
                  MPI_COMM_WORLD, &rq[BATCH + i]);
    }
    MPI_Waitall(2 * BATCH, rq, st);
    for (int i = 0; i < BATCH; ++i) {
        threads_verify(a, &st[i], a->rbuf[i], len[i], threads_tag(a->id, n0 + i / 2),
                       threads_seq(a->id, pass, n0 + i), "batch");
    }
}

static void *threads_main(void *arg)
{
    threads_arg_t *a = arg;
    int n = 0;

    for (int pass = 0; pass < PASSES; ++pass) {
        for (int s = 0; s < NSIZES; ++s) {
            /* threads start at different sizes, so large and small mix */
            size_t len = threads_sizes[(s + a->id * 2) % NSIZES];

            threads_blocking_send(a, pass, n++, len);
            threads_blocking_recv(a, pass, n++, len);
            threads_sendrecv(a, pass, n++, len);
        }
        threads_batch(a, pass, n);
        n += BATCH;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    pthread_t tid[NTHREADS];
    threads_arg_t args[NTHREADS];
    int provided = tmpi_init_thread(&argc, &argv, "threads", MPI_THREAD_MULTIPLE);
    char detail[96];

    if (MPI_THREAD_MULTIPLE != provided) {
        tmpi_error("MPI_THREAD_MULTIPLE asked, level %d provided", provided);
        return tmpi_finish("no MPI_THREAD_MULTIPLE");
    }
    for (int t = 0; t < NTHREADS; ++t) {
        /* thread t talks to the rank k to the right and hears from the rank
         * k to the left; with 4 ranks the threads cover every distance */
        int k = tmpi_size > 1 ? 1 + t % (tmpi_size - 1) : 0;

        args[t].id = t;
        args[t].to = (tmpi_rank + k) % tmpi_size;
        args[t].from = (tmpi_rank - k + tmpi_size) % tmpi_size;
        for (int i = 0; i < BATCH; ++i) {
            args[t].sbuf[i] = tmpi_malloc(0 == i ? MAXLEN : BATCHLEN);
            args[t].rbuf[i] = tmpi_malloc(0 == i ? MAXLEN : BATCHLEN);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (int t = 0; t < NTHREADS; ++t) {
        if (0 != pthread_create(&tid[t], NULL, threads_main, &args[t])) {
            tmpi_error("pthread_create failed");
            tid[t] = 0;
        }
    }
    for (int t = 0; t < NTHREADS; ++t) {
        if (0 != tid[t]) {
            pthread_join(tid[t], NULL);
        }
    }
    for (int t = 0; t < NTHREADS; ++t) {
        for (int i = 0; i < BATCH; ++i) {
            free(args[t].sbuf[i]);
            free(args[t].rbuf[i]);
        }
    }
    snprintf(detail, sizeof(detail), "%d threads x %d messages", NTHREADS,
             PASSES * (3 * NSIZES + BATCH));
    return tmpi_finish(detail);
}
