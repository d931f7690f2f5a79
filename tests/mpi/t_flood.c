/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * t_flood.c: flow control under pressure. Both ranks of each pair start
 * thousands of small sends to each other at once (every 97th one medium)
 * and tell the peer when all are started; each receiver posts nothing
 * until that notice arrived, so every message piles up in the unexpected
 * queue while the senders run out of credits and must queue in software.
 * Then all are received in order and checked. Nonblocking sends keep the
 * test correct MPI whatever the transports' eager limits are.
 */

#include "tmpi.h"

#include <stdio.h>
#include <stdlib.h>

#define NFLOOD 3000
#define TAG_FLOOD 31
#define TAG_DONE 32
#define MAXLEN ((size_t) 8193)

static size_t msg_len(int i)
{
    if (i % 97 == 96) {
        return MAXLEN;
    }
    return (size_t) (i * 7) % 257;
}

int main(int argc, char **argv)
{
    int peer;
    uint8_t **sbufs, *rbuf;
    MPI_Request *reqs;
    MPI_Status st;
    char detail[64];

    tmpi_init(&argc, &argv, "flood");
    peer = tmpi_rank ^ 1;
    sbufs = tmpi_malloc(sizeof(*sbufs) * NFLOOD);
    for (int i = 0; i < NFLOOD; i++) {
        sbufs[i] = tmpi_malloc(msg_len(i));
    }
    rbuf = tmpi_malloc(MAXLEN);
    reqs = tmpi_malloc(sizeof(MPI_Request) * (NFLOOD + 1));

    if (peer < tmpi_size) {
        for (int i = 0; i < NFLOOD; i++) {
            tmpi_fill(sbufs[i], msg_len(i), tmpi_rank, (uint32_t) i);
            MPI_Isend(sbufs[i], (int) msg_len(i), MPI_BYTE, peer, TAG_FLOOD, MPI_COMM_WORLD,
                      &reqs[i]);
        }
        MPI_Isend(NULL, 0, MPI_BYTE, peer, TAG_DONE, MPI_COMM_WORLD, &reqs[NFLOOD]);

        /* Only now receive: everything the peer sent is unexpected. */
        MPI_Recv(NULL, 0, MPI_BYTE, peer, TAG_DONE, MPI_COMM_WORLD, &st);
        for (int i = 0; i < NFLOOD; i++) {
            MPI_Recv(rbuf, (int) MAXLEN, MPI_BYTE, peer, TAG_FLOOD, MPI_COMM_WORLD, &st);
            if (0 == tmpi_check_status(&st, peer, TAG_FLOOD, (int) msg_len(i), "flood status")) {
                tmpi_check(rbuf, msg_len(i), peer, (uint32_t) i, "flood data");
            }
        }
        MPI_Waitall(NFLOOD + 1, reqs, MPI_STATUSES_IGNORE);
    }

    for (int i = 0; i < NFLOOD; i++) {
        free(sbufs[i]);
    }
    free(sbufs);
    free(rbuf);
    free(reqs);
    snprintf(detail, sizeof(detail), "%d unexpected messages each way per pair", NFLOOD);
    return tmpi_finish(detail);
}
