/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * t_threadmsg.c: MPI_THREAD_MULTIPLE with many small blocking messages.
 * Ranks are paired (0-1, 2-3, ...); in each round 1 to NTHREADS threads
 * per rank stream blocking 0-, 1- and some larger (rendezvous-sized)
 * messages from one side of the pair to the other, every thread on its
 * own tag, and each message is checked (source, tag, length, bytes and
 * its place in the thread's sequence: MPI keeps the order within a tag).
 * Threads that are done wait for the others in a spinning thread
 * barrier, as MPICH's threads/pt2pt/threads does: a transport whose
 * progress hands its core to such a spinning sibling, or loses a message
 * or its notification between threads, stalls here.
 * TRANSPORTS_THREADMSG_MSGS (100..2000) lowers the message counts
 * for a transport whose every message is slow by design (swf's timed
 * torus) so that the run stays well inside the runner's time limit.
 */

#include "tmpi.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NTHREADS 4
#define MSGS 2000 /* per thread and round for the small sizes, at 2 ranks */
#define MSGS_LARGE 50
#define MAXLEN 40000 /* above the eager limit of every transport here */

static const size_t threadmsg_sizes[] = {0, 1, MAXLEN};
#define NSIZES ((int) (sizeof(threadmsg_sizes) / sizeof(threadmsg_sizes[0])))

typedef struct {
    int id;
    int nthreads;
    int peer;   /* MPI_PROC_NULL: this rank has no partner */
    int sender; /* this side sends in this round */
    size_t len;
    int msgs;
    uint32_t round;
    uint8_t *buf;
} threadmsg_arg_t;

/* a spinning barrier of the round's threads (no yield, no sleep) */
static atomic_int threadmsg_bar_count;
static atomic_int threadmsg_bar_gen;

static void threadmsg_barrier(int n)
{
    int gen = atomic_load(&threadmsg_bar_gen);

    if (atomic_fetch_add(&threadmsg_bar_count, 1) == n - 1) {
        atomic_store(&threadmsg_bar_count, 0);
        atomic_fetch_add(&threadmsg_bar_gen, 1);
        return;
    }
    while (atomic_load(&threadmsg_bar_gen) == gen) {
        /* spin */
    }
}

/* messages per thread and round: for the small sizes MSGS at 2 ranks,
 * fewer per pair in larger jobs; for the large size MSGS_LARGE; both
 * scaled down by TRANSPORTS_THREADMSG_MSGS (100..MSGS) */
static int threadmsg_count(int size, size_t len)
{
    const char *env = getenv("TRANSPORTS_THREADMSG_MSGS");
    int msgs = MSGS;
    int pairs = size < 2 ? 1 : size / 2;
    int n;

    if (NULL != env && atoi(env) >= 100 && atoi(env) <= MSGS) {
        msgs = atoi(env);
    }
    if (len > 1) {
        n = MSGS_LARGE * msgs / MSGS;
        return n < 10 ? 10 : n;
    }
    n = msgs / (pairs * pairs);
    return n < 100 ? 100 : n;
}

static uint32_t threadmsg_seq(const threadmsg_arg_t *a, int i)
{
    return (a->round << 20) ^ ((uint32_t) a->id << 16) ^ (uint32_t) i;
}

static void *threadmsg_main(void *arg)
{
    threadmsg_arg_t *a = arg;
    int tag = 100 + a->id;
    char label[96];
    MPI_Status st;

    threadmsg_barrier(a->nthreads);
    for (int i = 0; i < a->msgs && MPI_PROC_NULL != a->peer; ++i) {
        uint32_t seq = threadmsg_seq(a, i);

        if (a->sender) {
            tmpi_fill(a->buf, a->len, tmpi_rank, seq);
            MPI_Send(a->buf, (int) a->len, MPI_BYTE, a->peer, tag, MPI_COMM_WORLD);
        } else {
            memset(a->buf, 0, a->len);
            MPI_Recv(a->buf, (int) a->len, MPI_BYTE, a->peer, tag, MPI_COMM_WORLD, &st);
            snprintf(label, sizeof(label), "round %u thread %d/%d message %d (%zu bytes)", a->round,
                     a->id, a->nthreads, i, a->len);
            if (0 != tmpi_check_status(&st, a->peer, tag, (int) a->len, label) ||
                0 != tmpi_check(a->buf, a->len, a->peer, seq, label)) {
                break; /* one report per thread and round is enough */
            }
        }
    }
    threadmsg_barrier(a->nthreads);
    return NULL;
}

int main(int argc, char **argv)
{
    threadmsg_arg_t args[NTHREADS];
    pthread_t tid[NTHREADS];
    int provided = tmpi_init_thread(&argc, &argv, "threadmsg", MPI_THREAD_MULTIPLE);
    int peer, rounds = 0;
    long messages = 0;
    char detail[128];

    if (MPI_THREAD_MULTIPLE != provided) {
        tmpi_error("MPI_THREAD_MULTIPLE asked, level %d provided", provided);
        return tmpi_finish("no MPI_THREAD_MULTIPLE");
    }
    /* pairs 0-1, 2-3, ...; the last rank of an odd job only joins the
     * collectives */
    peer = tmpi_rank ^ 1;
    if (peer >= tmpi_size) {
        peer = MPI_PROC_NULL;
    }
    for (int t = 0; t < NTHREADS; ++t) {
        args[t].buf = tmpi_malloc(MAXLEN);
    }
    for (int s = 0; s < NSIZES; ++s) {
        size_t len = threadmsg_sizes[s];

        /* both directions, each with 1 .. NTHREADS threads */
        for (int dir = 0; dir < 2; ++dir) {
            for (int nt = 1; nt <= NTHREADS; ++nt) {
                atomic_store(&threadmsg_bar_count, 0);
                MPI_Barrier(MPI_COMM_WORLD);
                for (int t = 0; t < nt; ++t) {
                    args[t].id = t;
                    args[t].nthreads = nt;
                    args[t].peer = peer;
                    args[t].sender = ((tmpi_rank & 1) == dir);
                    args[t].len = len;
                    /* fewer per pair in larger jobs: more ranks and
                     * their spinning threads share the same cores
                     * (2000 at 2 ranks, 500 at 4) */
                    args[t].msgs = threadmsg_count(tmpi_size, len);
                    args[t].round = (uint32_t) rounds;
                }
                /* the main thread is thread 0, as in MPICH's test */
                for (int t = 1; t < nt; ++t) {
                    if (0 != pthread_create(&tid[t], NULL, threadmsg_main, &args[t])) {
                        tmpi_error("pthread_create failed");
                        MPI_Abort(MPI_COMM_WORLD, 1);
                    }
                }
                threadmsg_main(&args[0]);
                for (int t = 1; t < nt; ++t) {
                    pthread_join(tid[t], NULL);
                }
                /* a collective right after the streams, as in MPICH's test */
                {
                    long mine = tmpi_errors, all = 0;

                    MPI_Reduce(&mine, &all, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
                }
                messages += (long) nt * args[0].msgs;
                rounds++;
            }
        }
    }
    for (int t = 0; t < NTHREADS; ++t) {
        free(args[t].buf);
    }
    snprintf(detail, sizeof(detail), "%d rounds, up to %d threads, %ld messages per pair", rounds,
             NTHREADS, messages);
    return tmpi_finish(detail);
}
