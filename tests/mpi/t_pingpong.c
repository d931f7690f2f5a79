/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * t_pingpong.c: ping-pong from 0 B to 8 MiB over every size around the
 * transports' thresholds, with patterned data, guard bytes after each
 * receive buffer, and a ring shift so that every rank talks to a second
 * peer. Ranks pair as (0,1), (2,3), ...; an odd last rank joins the ring only.
 */

#include "tmpi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GUARD_LEN 64
#define GUARD_BYTE 0x5a
#define REPEATS 2

static int check_guard(const uint8_t *buf, size_t len, const char *what)
{
    for (size_t i = 0; i < GUARD_LEN; i++) {
        if (buf[len + i] != GUARD_BYTE) {
            tmpi_error("%s: len %zu: byte %zu past the end was overwritten", what, len, i);
            return 1;
        }
    }
    return 0;
}

/* One exchange with peer: the lower rank sends first. */
static void pingpong(uint8_t *sbuf, uint8_t *rbuf, size_t len, int peer, uint32_t seq)
{
    MPI_Status st;
    int first = tmpi_rank < peer;

    tmpi_fill(sbuf, len, tmpi_rank, seq);
    memset(rbuf, GUARD_BYTE, len + GUARD_LEN);

    for (int turn = 0; turn < 2; turn++) {
        if ((turn == 0) == first) {
            MPI_Send(sbuf, (int) len, MPI_BYTE, peer, 7, MPI_COMM_WORLD);
        } else {
            /* Offer more room than needed: the count must still be exact. */
            MPI_Recv(rbuf, (int) (len + GUARD_LEN), MPI_BYTE, peer, 7, MPI_COMM_WORLD, &st);
            tmpi_check_status(&st, peer, 7, (int) len, "pingpong status");
            tmpi_check(rbuf, len, peer, seq, "pingpong data");
            check_guard(rbuf, len, "pingpong");
        }
    }
}

static void ring(uint8_t *sbuf, uint8_t *rbuf, size_t len, uint32_t seq)
{
    int right = (tmpi_rank + 1) % tmpi_size;
    int left = (tmpi_rank + tmpi_size - 1) % tmpi_size;
    MPI_Status st;

    tmpi_fill(sbuf, len, tmpi_rank, seq);
    memset(rbuf, GUARD_BYTE, len + GUARD_LEN);
    MPI_Sendrecv(sbuf, (int) len, MPI_BYTE, right, 9, rbuf, (int) (len + GUARD_LEN), MPI_BYTE, left,
                 9, MPI_COMM_WORLD, &st);
    tmpi_check_status(&st, left, 9, (int) len, "ring status");
    tmpi_check(rbuf, len, left, seq, "ring data");
    check_guard(rbuf, len, "ring");
}

int main(int argc, char **argv)
{
    size_t max = 0;
    uint8_t *sbuf, *rbuf;
    int peer;
    char detail[64];

    tmpi_init(&argc, &argv, "pingpong");
    for (int i = 0; i < tmpi_nsizes; i++) {
        max = tmpi_sizes[i] > max ? tmpi_sizes[i] : max;
    }
    sbuf = tmpi_malloc(max);
    rbuf = tmpi_malloc(max + GUARD_LEN);
    peer = tmpi_rank ^ 1;

    for (int i = 0; i < tmpi_nsizes; i++) {
        for (uint32_t r = 0; r < REPEATS; r++) {
            uint32_t seq = (uint32_t) i * REPEATS + r;

            if (peer < tmpi_size) {
                pingpong(sbuf, rbuf, tmpi_sizes[i], peer, seq);
            }
            if (tmpi_size > 1) {
                ring(sbuf, rbuf, tmpi_sizes[i], seq);
            }
        }
    }

    free(sbuf);
    free(rbuf);
    snprintf(detail, sizeof(detail), "%d sizes 0..%zu B", tmpi_nsizes, max);
    return tmpi_finish(detail);
}
