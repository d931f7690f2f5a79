/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * t_sendspin.c: a message handed to MPI_Send reaches its receiver while the
 * sender makes no MPI progress. The pattern of an MCS lock over a shared
 * window (MPICH's rma/mutex_bench_shm): a rank passes the lock on with a
 * 0-byte MPI_Send, then spins on shared memory (a compare-and-swap of
 * osc/sm) and calls no MPI function until the receiver has answered
 * through that memory. Every odd rank sends SENDSPIN_ROUNDS 0-byte messages
 * to the even ranks in turn and, after each, spins on a counter in a shared
 * window (MPI_Win_allocate_shared) that the receiver bumps once MPI_Recv
 * returned the message. The rounds are many more than any transport's
 * credits or queue slots, so a transport that keeps a send back until the
 * sender's next progress call (for credit it has not read, or for a
 * connection) hangs here. The receiver checks source, tag (the sender's
 * sequence number: non-overtaking) and count of every message.
 */

#include "tmpi.h"

#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define SENDSPIN_ROUNDS 600
#define SENDSPIN_TAG_MOD 30000
/* after this long without an answer a diagnostic line is printed (the
 * spin goes on: the runner's timeout decides) */
#define SENDSPIN_NOTE_S 30

/* the even rank that odd rank s sends its round r to */
static int sendspin_dest(int s, int r, int n_even)
{
    return 2 * ((s / 2 + r) % n_even);
}

static double sendspin_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

int main(int argc, char **argv)
{
    MPI_Comm shm;
    MPI_Win win;
    int shm_size;
    int n_even;
    int *mine;
    char detail[128] = "";

    tmpi_init(&argc, &argv, "sendspin");
    n_even = (tmpi_size + 1) / 2;

    /* one counter per (receiver, sender) pair, in the receiver's part of a
     * shared window: the sender reads it without calling MPI */
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, tmpi_rank, MPI_INFO_NULL, &shm);
    MPI_Comm_size(shm, &shm_size);
    if (shm_size != tmpi_size) {
        /* the ranks must share memory: every transport is tested on one host */
        tmpi_error("the ranks are not on one host (%d of %d share memory)", shm_size, tmpi_size);
        MPI_Comm_free(&shm);
        return tmpi_finish("");
    }
    MPI_Win_allocate_shared((MPI_Aint) (tmpi_size * sizeof(int)), sizeof(int), MPI_INFO_NULL, shm,
                            &mine, &win);
    for (int i = 0; i < tmpi_size; ++i) {
        __atomic_store_n(&mine[i], 0, __ATOMIC_RELAXED);
    }
    MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
    MPI_Win_sync(win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_sync(win);

    if (tmpi_rank & 1) {
        int *acks[tmpi_size];
        int sent[tmpi_size];

        for (int e = 0; e < tmpi_size; ++e) {
            MPI_Aint sz;
            int disp;

            acks[e] = NULL;
            sent[e] = 0;
            if (0 == (e & 1)) {
                MPI_Win_shared_query(win, e, &sz, &disp, &acks[e]);
            }
        }
        for (int r = 0; r < SENDSPIN_ROUNDS; ++r) {
            int e = sendspin_dest(tmpi_rank, r, n_even);
            int *ack = &acks[e][tmpi_rank];
            double t0 = sendspin_now();
            bool noted = false;

            MPI_Send(NULL, 0, MPI_BYTE, e, sent[e] % SENDSPIN_TAG_MOD, MPI_COMM_WORLD);
            ++sent[e];
            /* no MPI call until the receiver has it */
            while (__atomic_load_n(ack, __ATOMIC_ACQUIRE) < sent[e]) {
                if (!noted && sendspin_now() - t0 > SENDSPIN_NOTE_S) {
                    fprintf(stderr,
                            "sendspin: rank %d: round %d: message %d to rank %d not received "
                            "after %d s; still waiting\n",
                            tmpi_rank, r, sent[e], e, SENDSPIN_NOTE_S);
                    noted = true;
                }
                sched_yield();
            }
        }
    } else {
        int expect[tmpi_size];
        int got[tmpi_size];
        int total = 0;

        for (int s = 0; s < tmpi_size; ++s) {
            expect[s] = 0;
            got[s] = 0;
            for (int r = 0; (s & 1) && r < SENDSPIN_ROUNDS; ++r) {
                expect[s] += sendspin_dest(s, r, n_even) == tmpi_rank;
            }
            total += expect[s];
        }
        for (int i = 0; i < total; ++i) {
            MPI_Status st;
            int src;

            MPI_Recv(NULL, 0, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            src = st.MPI_SOURCE;
            if (src < 0 || src >= tmpi_size) {
                tmpi_error("message from no rank (source %d, tag %d)", src, st.MPI_TAG);
                break;
            }
            if (got[src] >= expect[src]) {
                tmpi_error("one message more than rank %d sent here (tag %d)", src, st.MPI_TAG);
            }
            tmpi_check_status(&st, src, got[src] % SENDSPIN_TAG_MOD, 0, "0-byte hand-off");
            ++got[src];
            __atomic_store_n(&mine[src], got[src], __ATOMIC_RELEASE);
        }
    }

    snprintf(detail, sizeof(detail), "%d senders, %d spins after a 0-byte send each", tmpi_size / 2,
             SENDSPIN_ROUNDS);
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win);
    MPI_Comm_free(&shm);
    return tmpi_finish(detail);
}
