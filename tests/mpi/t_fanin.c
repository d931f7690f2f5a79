/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * t_fanin.c: fan-in with ANY_SOURCE/ANY_TAG. Every rank in turn is the
 * root; all others send it a burst of messages with varying tags and sizes.
 * The root receives them with blocking wildcard receives and then with
 * pre-posted wildcard Irecvs completed by Waitany, checking status, per-
 * source order and data. A last phase checks tag selectivity: receives by
 * descending tag must pick the matching message, not the oldest one.
 */

#include "tmpi.h"

#include <stdio.h>
#include <stdlib.h>

#define NMSG 30
#define NTAGS 32
#define NSEL 10
#define TAG_SEL_BASE 100

static const size_t fan_sizes[] = {
    1, 0, 33, 2048, 2049, 70000, 5, 4096, 160000, 12287, 9,
};
#define NFAN ((int) (sizeof(fan_sizes) / sizeof(fan_sizes[0])))
#define MAXLEN ((size_t) 160000)

static size_t msg_len(int src, int i)
{
    return fan_sizes[(i + src) % NFAN];
}

static int msg_tag(int src, int i)
{
    return (src * 13 + i) % NTAGS;
}

static uint32_t msg_seq(int root, int mode, int i)
{
    return (uint32_t) (root * 10000 + mode * 1000 + i);
}

static void send_burst(int root, int mode, uint8_t **sbufs)
{
    MPI_Request reqs[NMSG];

    for (int i = 0; i < NMSG; i++) {
        size_t len = msg_len(tmpi_rank, i);

        tmpi_fill(sbufs[i], len, tmpi_rank, msg_seq(root, mode, i));
        MPI_Isend(sbufs[i], (int) len, MPI_BYTE, root, msg_tag(tmpi_rank, i), MPI_COMM_WORLD,
                  &reqs[i]);
    }
    MPI_Waitall(NMSG, reqs, MPI_STATUSES_IGNORE);
}

/* Checks one wildcard receive against the next message expected from its
 * source. */
static void check_one(int root, int mode, const MPI_Status *st, const uint8_t *buf, int *next)
{
    int src = st->MPI_SOURCE, i;

    if (src < 0 || src >= tmpi_size || src == root || next[src] >= NMSG) {
        tmpi_error("fan-in: unexpected message from %d", src);
        return;
    }
    i = next[src]++;
    if (0 == tmpi_check_status(st, src, msg_tag(src, i), (int) msg_len(src, i), "fan-in status")) {
        tmpi_check(buf, msg_len(src, i), src, msg_seq(root, mode, i), "fan-in data");
    }
}

static void root_blocking(int root, uint8_t *rbuf, int *next)
{
    MPI_Status st;

    for (int n = 0; n < NMSG * (tmpi_size - 1); n++) {
        MPI_Recv(rbuf, (int) MAXLEN, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        check_one(root, 0, &st, rbuf, next);
    }
}

static void root_waitany(int root, uint8_t **rbufs, int *next)
{
    int total = NMSG * (tmpi_size - 1);
    MPI_Request *reqs = tmpi_malloc(sizeof(MPI_Request) * total);
    MPI_Status *sts = tmpi_malloc(sizeof(MPI_Status) * total);

    for (int n = 0; n < total; n++) {
        MPI_Irecv(rbufs[n], (int) MAXLEN, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,
                  &reqs[n]);
    }
    /* The senders start only once every receive is posted. */
    MPI_Barrier(MPI_COMM_WORLD);
    for (int n = 0; n < total; n++) {
        MPI_Status st;
        int idx;

        MPI_Waitany(total, reqs, &idx, &st);
        if (MPI_UNDEFINED == idx) {
            tmpi_error("waitany: no active request left");
            break;
        }
        sts[idx] = st;
    }
    /* Wildcard receives match in posting order, so walking them in that
     * order must show each source's messages in the order they were sent. */
    for (int n = 0; n < total; n++) {
        check_one(root, 1, &sts[n], rbufs[n], next);
    }
    free(sts);
    free(reqs);
}

/* The lower rank of each pair sends NSEL messages with ascending tags; the
 * higher one receives them by descending tag. */
static void selectivity(uint8_t **sbufs, uint8_t *rbuf)
{
    int peer = tmpi_rank ^ 1;
    MPI_Request reqs[NSEL];
    MPI_Status st;

    if (peer >= tmpi_size) {
        return;
    }
    if (tmpi_rank < peer) {
        for (int k = 0; k < NSEL; k++) {
            size_t len = msg_len(tmpi_rank, k);

            tmpi_fill(sbufs[k], len, tmpi_rank, msg_seq(0, 7, k));
            MPI_Isend(sbufs[k], (int) len, MPI_BYTE, peer, TAG_SEL_BASE + k, MPI_COMM_WORLD,
                      &reqs[k]);
        }
        MPI_Waitall(NSEL, reqs, MPI_STATUSES_IGNORE);
    } else {
        for (int k = NSEL - 1; k >= 0; k--) {
            MPI_Recv(rbuf, (int) MAXLEN, MPI_BYTE, peer, TAG_SEL_BASE + k, MPI_COMM_WORLD, &st);
            if (0 ==
                tmpi_check_status(&st, peer, TAG_SEL_BASE + k, (int) msg_len(peer, k),
                                  "selectivity status")) {
                tmpi_check(rbuf, msg_len(peer, k), peer, msg_seq(0, 7, k), "selectivity data");
            }
        }
    }
}

int main(int argc, char **argv)
{
    uint8_t **sbufs, **rbufs;
    int *next;
    int total;
    char detail[80];

    tmpi_init(&argc, &argv, "fanin");
    if (tmpi_size < 2) {
        tmpi_error("needs at least 2 ranks");
        return tmpi_finish(NULL);
    }
    total = NMSG * (tmpi_size - 1);
    sbufs = tmpi_malloc(sizeof(*sbufs) * NMSG);
    for (int i = 0; i < NMSG; i++) {
        sbufs[i] = tmpi_malloc(MAXLEN);
    }
    rbufs = tmpi_malloc(sizeof(*rbufs) * total);
    for (int n = 0; n < total; n++) {
        rbufs[n] = tmpi_malloc(MAXLEN);
    }
    next = tmpi_malloc(sizeof(int) * tmpi_size);

    for (int root = 0; root < tmpi_size; root++) {
        /* Mode 0: blocking wildcard receives. */
        for (int p = 0; p < tmpi_size; p++) {
            next[p] = 0;
        }
        if (root == tmpi_rank) {
            root_blocking(root, rbufs[0], next);
        } else {
            send_burst(root, 0, sbufs);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }

    for (int root = 0; root < tmpi_size; root++) {
        /* Mode 1: pre-posted wildcard receives completed by Waitany. */
        for (int p = 0; p < tmpi_size; p++) {
            next[p] = 0;
        }
        if (root == tmpi_rank) {
            root_waitany(root, rbufs, next);
        } else {
            MPI_Barrier(MPI_COMM_WORLD);
            send_burst(root, 1, sbufs);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }

    selectivity(sbufs, rbufs[0]);

    for (int n = 0; n < total; n++) {
        free(rbufs[n]);
    }
    for (int i = 0; i < NMSG; i++) {
        free(sbufs[i]);
    }
    free(rbufs);
    free(sbufs);
    free(next);
    snprintf(detail, sizeof(detail), "%d messages per sender per root, tag selectivity", NMSG);
    return tmpi_finish(detail);
}
