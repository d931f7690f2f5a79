/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * t_order.c: MPI's non-overtaking rule with eager and rendezvous sizes all
 * in flight at once, between every pair of ranks:
 *   A. receives posted before the sends start (expected path),
 *   B. receives posted only after every send was started (unexpected path),
 *   C. ANY_TAG and ANY_SOURCE receives of messages with varying tags: each
 *      sender's messages must still arrive in the order they were sent.
 */

#include "tmpi.h"

#include <stdio.h>
#include <stdlib.h>

#define NMSG 40
#define TAG_DATA 11
#define TAG_GO 12
#define NTAGS 7

/* Mixed sizes cycling over every protocol (eager, ring slot, pipeline,
 * rendezvous); a large message is followed by small ones that could
 * overtake it. */
static const size_t order_sizes[] = {
    0, 1, 100, 2049, 65537, 1, 4097, 13000, 0, 131073, 7, 300001, 64, 1048577, 2, 12289, 8,
};
#define NORDER ((int) (sizeof(order_sizes) / sizeof(order_sizes[0])))
#define MAXLEN ((size_t) 1048577)
/* Receive buffers are a little larger than the message: the count must
 * still be exact. */
#define SLACK 16

static size_t msg_len(int i)
{
    return order_sizes[i % NORDER];
}

/* Sequence numbers differ by phase so a stale message is caught. */
static uint32_t msg_seq(int phase, int dst, int i)
{
    return (uint32_t) (phase * 100000 + dst * 1000 + i);
}

static int msg_tag(int phase, int i)
{
    return phase == 2 ? i % NTAGS : TAG_DATA;
}

/* Starts every send of one phase to every peer; sbufs[peer][i]. */
static void start_sends(int phase, uint8_t ***sbufs, MPI_Request *reqs, int *nreq)
{
    for (int p = 0; p < tmpi_size; p++) {
        if (p == tmpi_rank) {
            continue;
        }
        for (int i = 0; i < NMSG; i++) {
            size_t len = msg_len(i);

            tmpi_fill(sbufs[p][i], len, tmpi_rank, msg_seq(phase, p, i));
            MPI_Isend(sbufs[p][i], (int) len, MPI_BYTE, p, msg_tag(phase, i), MPI_COMM_WORLD,
                      &reqs[(*nreq)++]);
        }
    }
}

static void phase_preposted(uint8_t ***sbufs, uint8_t ***rbufs, MPI_Request *reqs)
{
    MPI_Status *st = tmpi_malloc(sizeof(MPI_Status) * 2 * NMSG * tmpi_size);
    int nreq = 0;

    for (int p = 0; p < tmpi_size; p++) {
        if (p == tmpi_rank) {
            continue;
        }
        for (int i = 0; i < NMSG; i++) {
            MPI_Irecv(rbufs[p][i], (int) msg_len(i) + SLACK, MPI_BYTE, p, TAG_DATA, MPI_COMM_WORLD,
                      &reqs[nreq++]);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    start_sends(0, sbufs, reqs, &nreq);
    MPI_Waitall(nreq, reqs, st);

    nreq = 0;
    for (int p = 0; p < tmpi_size; p++) {
        if (p == tmpi_rank) {
            continue;
        }
        for (int i = 0; i < NMSG; i++, nreq++) {
            tmpi_check_status(&st[nreq], p, TAG_DATA, (int) msg_len(i), "preposted status");
            tmpi_check(rbufs[p][i], msg_len(i), p, msg_seq(0, tmpi_rank, i), "preposted data");
        }
    }
    free(st);
}

static void phase_late(uint8_t ***sbufs, uint8_t *rbuf, MPI_Request *reqs)
{
    MPI_Status st;
    int nreq = 0;

    start_sends(1, sbufs, reqs, &nreq);
    /* Tell every peer that all our sends are under way. */
    for (int p = 0; p < tmpi_size; p++) {
        if (p != tmpi_rank) {
            MPI_Isend(NULL, 0, MPI_BYTE, p, TAG_GO, MPI_COMM_WORLD, &reqs[nreq++]);
        }
    }
    for (int p = 0; p < tmpi_size; p++) {
        if (p == tmpi_rank) {
            continue;
        }
        MPI_Recv(NULL, 0, MPI_BYTE, p, TAG_GO, MPI_COMM_WORLD, &st);
        for (int i = 0; i < NMSG; i++) {
            MPI_Recv(rbuf, (int) MAXLEN, MPI_BYTE, p, TAG_DATA, MPI_COMM_WORLD, &st);
            if (0 == tmpi_check_status(&st, p, TAG_DATA, (int) msg_len(i), "late status")) {
                tmpi_check(rbuf, msg_len(i), p, msg_seq(1, tmpi_rank, i), "late data");
            }
        }
    }
    MPI_Waitall(nreq, reqs, MPI_STATUSES_IGNORE);
}

static void phase_wildcard(uint8_t ***sbufs, uint8_t *rbuf, MPI_Request *reqs)
{
    int *next = tmpi_malloc(sizeof(int) * tmpi_size);
    int nreq = 0, total = NMSG * (tmpi_size - 1);
    MPI_Status st;

    for (int p = 0; p < tmpi_size; p++) {
        next[p] = 0;
    }
    start_sends(2, sbufs, reqs, &nreq);
    for (int n = 0; n < total; n++) {
        int src, i;

        /* Half of them by source with any tag, half fully wild. */
        if (n < total / 2) {
            src = (tmpi_rank + 1 + n % (tmpi_size - 1)) % tmpi_size;
            if (next[src] >= NMSG / 2) {
                /* This peer had its share; take from anyone instead. */
                src = MPI_ANY_SOURCE;
            }
        } else {
            src = MPI_ANY_SOURCE;
        }
        MPI_Recv(rbuf, (int) MAXLEN, MPI_BYTE, src, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        src = st.MPI_SOURCE;
        if (src < 0 || src >= tmpi_size || src == tmpi_rank || next[src] >= NMSG) {
            tmpi_error("wildcard: unexpected message from %d", src);
            continue;
        }
        i = next[src]++;
        if (0 == tmpi_check_status(&st, src, msg_tag(2, i), (int) msg_len(i), "wildcard order")) {
            tmpi_check(rbuf, msg_len(i), src, msg_seq(2, tmpi_rank, i), "wildcard data");
        }
    }
    MPI_Waitall(nreq, reqs, MPI_STATUSES_IGNORE);
    free(next);
}

int main(int argc, char **argv)
{
    uint8_t ***sbufs, ***rbufs, *rbuf;
    MPI_Request *reqs;
    char detail[80];

    tmpi_init(&argc, &argv, "order");
    if (tmpi_size < 2) {
        tmpi_error("needs at least 2 ranks");
        return tmpi_finish(NULL);
    }
    sbufs = tmpi_malloc(sizeof(*sbufs) * tmpi_size);
    rbufs = tmpi_malloc(sizeof(*rbufs) * tmpi_size);
    for (int p = 0; p < tmpi_size; p++) {
        sbufs[p] = tmpi_malloc(sizeof(**sbufs) * NMSG);
        rbufs[p] = tmpi_malloc(sizeof(**rbufs) * NMSG);
        for (int i = 0; i < NMSG; i++) {
            sbufs[p][i] = p == tmpi_rank ? NULL : tmpi_malloc(msg_len(i));
            rbufs[p][i] = p == tmpi_rank ? NULL : tmpi_malloc(msg_len(i) + SLACK);
        }
    }
    rbuf = tmpi_malloc(MAXLEN);
    reqs = tmpi_malloc(sizeof(MPI_Request) * (2 * NMSG + 1) * tmpi_size);

    phase_preposted(sbufs, rbufs, reqs);
    phase_late(sbufs, rbuf, reqs);
    phase_wildcard(sbufs, rbuf, reqs);

    for (int p = 0; p < tmpi_size; p++) {
        for (int i = 0; i < NMSG; i++) {
            free(sbufs[p][i]);
            free(rbufs[p][i]);
        }
        free(sbufs[p]);
        free(rbufs[p]);
    }
    free(sbufs);
    free(rbufs);
    free(rbuf);
    free(reqs);
    snprintf(detail, sizeof(detail), "%d messages per pair per phase, preposted/late/wildcard",
             NMSG);
    return tmpi_finish(detail);
}
