/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * t_rma_lockrace.c: exclusive-lock writers race shared-lock readers on
 * rank 0's 4 MiB window, and no reader may ever see a torn window. Rank 0
 * writes its own window with local stores under an exclusive lock on
 * itself; other even ranks write all of it with MPI_Put under an exclusive
 * lock; odd ranks Get 256 KiB, 1 MiB or 4 MiB of it under a shared lock.
 * Every write fills the whole window with one generation: 8-byte words
 * holding the generation and a value of the word's index, so a Get that
 * mixes two generations, or bytes of a half-done write, shows up. Sizes
 * far above every eager limit: a Get's reply leaves through the PML's
 * rendezvous, which reads the window after the send was started, and the
 * lock must not pass to a writer before that read is done. Names no osc
 * component.
 */

#include "tmpi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WIN_BYTES (4u << 20)
#define WORDS (WIN_BYTES / 8)
#define ROUNDS 40

static uint64_t lockrace_word(uint32_t gen, size_t i)
{
    return ((uint64_t) gen << 32) | (uint32_t) ((uint32_t) i * 2654435761u ^ gen);
}

static void lockrace_fill(uint64_t *w, uint32_t gen)
{
    for (size_t i = 0; i < WORDS; i++) {
        w[i] = lockrace_word(gen, i);
    }
}

/* 0 when the n words from index first are one generation's, whole. */
static int lockrace_check(const uint64_t *w, size_t first, size_t n, uint32_t *gen)
{
    *gen = (uint32_t) (w[0] >> 32);
    for (size_t i = 0; i < n; i++) {
        if (w[i] != lockrace_word(*gen, first + i)) {
            return 1;
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    static const size_t sizes[3] = {256u << 10, 1u << 20, 4u << 20};
    uint64_t *base = NULL, *buf;
    MPI_Win win;
    MPI_Request done;
    int torn = 0, gets = 0, writes = 0;
    char detail[160];

    tmpi_init(&argc, &argv, "rma_lockrace");
    buf = tmpi_malloc(WIN_BYTES);
    if (0 == tmpi_rank) {
        base = tmpi_malloc(WIN_BYTES);
        lockrace_fill(base, 0);
    }
    MPI_Win_create(base, 0 == tmpi_rank ? WIN_BYTES : 0, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);

    /* readers do ROUNDS gets, then join the barrier; writers keep writing
     * until every reader has joined it, so the readers race writers all
     * along */
    if (0 == (tmpi_rank & 1)) {
        int flag = 0;
        uint32_t r = 0;
        MPI_Ibarrier(MPI_COMM_WORLD, &done);
        while (!flag || r < 2) {
            /* a generation no other write uses */
            uint32_t gen = 1 + (uint32_t) tmpi_rank + (uint32_t) tmpi_size * r++;
            MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
            if (0 == tmpi_rank) {
                lockrace_fill(base, gen);
            } else {
                lockrace_fill(buf, gen);
                MPI_Put(buf, WIN_BYTES, MPI_BYTE, 0, 0, WIN_BYTES, MPI_BYTE, win);
            }
            MPI_Win_unlock(0, win);
            writes++;
            if (!flag) {
                MPI_Test(&done, &flag, MPI_STATUS_IGNORE);
            }
        }
    } else {
        for (uint32_t r = 0; r < ROUNDS; r++) {
            /* from the front or from the back of the window */
            size_t len = sizes[(r + (uint32_t) tmpi_rank) % 3];
            size_t off = (r & 1) ? WIN_BYTES - len : 0;
            uint32_t gen;
            memset(buf, 0xa5, len);
            MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
            MPI_Get(buf, (int) len, MPI_BYTE, 0, (MPI_Aint) off, (int) len, MPI_BYTE, win);
            MPI_Win_unlock(0, win);
            gets++;
            if (lockrace_check(buf, off / 8, len / 8, &gen)) {
                torn++;
                tmpi_error("round %u: Get of %zu bytes at %zu is torn (starts as generation %u)", r,
                           len, off, gen);
            }
        }
        MPI_Ibarrier(MPI_COMM_WORLD, &done);
        MPI_Wait(&done, MPI_STATUS_IGNORE);
    }
    if (tmpi_rank & 1) {
        printf("rank %d: %d of %d gets torn\n", tmpi_rank, torn, gets);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (0 == tmpi_rank) {
        uint32_t gen;
        if (lockrace_check(base, 0, WORDS, &gen)) {
            tmpi_error("the window is torn at the end (generation %u at the front)", gen);
        }
    }
    MPI_Win_free(&win);
    free(base);
    free(buf);
    snprintf(detail, sizeof(detail),
             "%d gets per reader, %d writes on rank 0, gets of 256 KiB to 4 MiB", ROUNDS, writes);
    return tmpi_finish(detail);
}
