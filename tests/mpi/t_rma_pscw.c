/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * t_rma_pscw.c: a target overwrites its window as soon as its epoch ends,
 * and the data an origin got in that epoch must be the window as it was
 * before. Ranks pair up (0 with 1, 2 with 3, ...); the odd one rank out of
 * an odd count only joins the window. The even rank of a pair Gets
 * 256 KiB and 4 MiB of the odd rank's window, first in PSCW epochs (the
 * target refills its window right after MPI_Win_wait returns), then in
 * fence epochs (the target refills right after the closing fence). Sizes
 * far above every eager limit: the replies leave through the PML's
 * rendezvous, which reads the window after the send was started. Names no
 * osc component.
 */

#include "tmpi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WIN_BYTES (4u << 20)
#define SMALL_BYTES (256u << 10)
#define PSCW_ROUNDS 24
#define FENCE_ROUNDS 8

int main(int argc, char **argv)
{
    MPI_Group world, peer_group;
    MPI_Win win;
    char *base, *small, *big;
    int peer, origin, active, mixed = 0, gets = 0;
    char detail[160];

    tmpi_init(&argc, &argv, "rma_pscw");
    peer = tmpi_rank ^ 1;
    active = peer < tmpi_size;
    origin = 0 == (tmpi_rank & 1);

    base = tmpi_malloc(WIN_BYTES);
    small = tmpi_malloc(SMALL_BYTES);
    big = tmpi_malloc(WIN_BYTES);
    tmpi_fill(base, WIN_BYTES, tmpi_rank, 0);
    MPI_Win_create(base, WIN_BYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    if (active) {
        MPI_Group_incl(world, 1, &peer, &peer_group);
    }

    for (uint32_t r = 0; active && r < PSCW_ROUNDS; r++) {
        uint32_t seq = 2 * r; /* the window's contents during epoch r */
        if (!origin) {
            tmpi_fill(base, WIN_BYTES, tmpi_rank, seq);
            MPI_Win_post(peer_group, 0, win);
            MPI_Win_wait(win);
            /* the epoch is over: the window is ours again */
            tmpi_fill(base, WIN_BYTES, tmpi_rank, seq + 1);
        } else {
            memset(small, 0, SMALL_BYTES);
            memset(big, 0, WIN_BYTES);
            MPI_Win_start(peer_group, 0, win);
            MPI_Get(small, SMALL_BYTES, MPI_BYTE, peer, 0, SMALL_BYTES, MPI_BYTE, win);
            MPI_Get(big, WIN_BYTES, MPI_BYTE, peer, 0, WIN_BYTES, MPI_BYTE, win);
            MPI_Win_complete(win);
            mixed += 0 != tmpi_check(small, SMALL_BYTES, peer, seq, "pscw get 256 KiB");
            mixed += 0 != tmpi_check(big, WIN_BYTES, peer, seq, "pscw get 4 MiB");
            gets += 2;
        }
    }
    if (active && origin) {
        printf("rank %d: pscw: %d of %d gets mixed with the target's later writes\n", tmpi_rank,
               mixed, gets);
    }

    /* fence epochs; every rank takes part in the fences */
    for (uint32_t r = 0; r < FENCE_ROUNDS; r++) {
        uint32_t seq = 1000 + 2 * r;
        int m0 = mixed;
        if (active && !origin) {
            tmpi_fill(base, WIN_BYTES, tmpi_rank, seq);
        }
        MPI_Win_fence(0, win);
        if (active && origin) {
            MPI_Get(big, WIN_BYTES, MPI_BYTE, peer, 0, WIN_BYTES, MPI_BYTE, win);
        }
        MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
        if (active && !origin) {
            tmpi_fill(base, WIN_BYTES, tmpi_rank, seq + 1);
        }
        if (active && origin) {
            mixed += 0 != tmpi_check(big, WIN_BYTES, peer, seq, "fence get 4 MiB");
            gets++;
            if (mixed != m0) {
                printf("rank %d: fence round %u mixed\n", tmpi_rank, r);
            }
        }
        MPI_Barrier(MPI_COMM_WORLD); /* the next round's fill after the check */
    }

    if (active) {
        MPI_Group_free(&peer_group);
    }
    MPI_Group_free(&world);
    MPI_Win_free(&win);
    free(base);
    free(small);
    free(big);
    snprintf(detail, sizeof(detail), "%d PSCW + %d fence rounds, gets of 256 KiB and 4 MiB",
             PSCW_ROUNDS, FENCE_ROUNDS);
    return tmpi_finish(detail);
}
