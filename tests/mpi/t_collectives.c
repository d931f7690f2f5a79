/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * t_collectives.c: collectives on large buffers with verified contents: bcast
 * from every root (odd sizes up to 8 MiB), allreduce (sum of rank-dependent
 * integers, exact), alltoall and allgather with per-block patterns, and a
 * reduce to every root.
 */

#include "tmpi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const size_t bcast_sizes[] = {
    1, 2049, 65537, 1048577, 8 * 1024 * 1024,
};
#define NBCAST ((int) (sizeof(bcast_sizes) / sizeof(bcast_sizes[0])))
#define ALLREDUCE_COUNT (1024 * 1024 + 3)
#define A2A_BLOCK ((size_t) 256 * 1024 + 1)
#define AG_BLOCK ((size_t) 1024 * 1024 + 7)

static int32_t contrib(int rank, size_t i)
{
    /* Small enough that the sum over a few ranks cannot overflow. */
    return (int32_t) (((uint32_t) i * 2654435761u >> 8) % 100000) - 50000 + rank * 3;
}

static void test_bcast(void)
{
    uint8_t *buf = tmpi_malloc(bcast_sizes[NBCAST - 1]);

    for (int root = 0; root < tmpi_size; root++) {
        for (int i = 0; i < NBCAST; i++) {
            uint32_t seq = (uint32_t) (root * 100 + i);

            if (tmpi_rank == root) {
                tmpi_fill(buf, bcast_sizes[i], root, seq);
            } else {
                memset(buf, 0, bcast_sizes[i]);
            }
            MPI_Bcast(buf, (int) bcast_sizes[i], MPI_BYTE, root, MPI_COMM_WORLD);
            tmpi_check(buf, bcast_sizes[i], root, seq, "bcast");
        }
    }
    free(buf);
}

static void test_allreduce(void)
{
    int32_t *in = tmpi_malloc(sizeof(int32_t) * ALLREDUCE_COUNT);
    int32_t *out = tmpi_malloc(sizeof(int32_t) * ALLREDUCE_COUNT);

    for (size_t i = 0; i < ALLREDUCE_COUNT; i++) {
        in[i] = contrib(tmpi_rank, i);
    }
    MPI_Allreduce(in, out, ALLREDUCE_COUNT, MPI_INT32_T, MPI_SUM, MPI_COMM_WORLD);
    for (size_t i = 0; i < ALLREDUCE_COUNT; i++) {
        int32_t want = 0;

        for (int r = 0; r < tmpi_size; r++) {
            want += contrib(r, i);
        }
        if (out[i] != want) {
            tmpi_error("allreduce: element %zu is %d, want %d", i, out[i], want);
            break;
        }
    }

    /* Reduce to each root: only the root's buffer is defined. */
    for (int root = 0; root < tmpi_size; root++) {
        MPI_Reduce(in, out, 4099, MPI_INT32_T, MPI_MAX, root, MPI_COMM_WORLD);
        if (tmpi_rank != root) {
            continue;
        }
        for (size_t i = 0; i < 4099; i++) {
            /* contrib grows with rank, so the last rank holds the max. */
            if (out[i] != contrib(tmpi_size - 1, i)) {
                tmpi_error("reduce(max) to %d: element %zu wrong", root, i);
                break;
            }
        }
    }
    free(in);
    free(out);
}

static void test_alltoall(void)
{
    uint8_t *sbuf = tmpi_malloc(A2A_BLOCK * tmpi_size);
    uint8_t *rbuf = tmpi_malloc(A2A_BLOCK * tmpi_size);

    /* Block for destination d carries sequence d. */
    for (int d = 0; d < tmpi_size; d++) {
        tmpi_fill(sbuf + d * A2A_BLOCK, A2A_BLOCK, tmpi_rank, (uint32_t) d);
    }
    MPI_Alltoall(sbuf, (int) A2A_BLOCK, MPI_BYTE, rbuf, (int) A2A_BLOCK, MPI_BYTE, MPI_COMM_WORLD);
    for (int s = 0; s < tmpi_size; s++) {
        tmpi_check(rbuf + s * A2A_BLOCK, A2A_BLOCK, s, (uint32_t) tmpi_rank, "alltoall");
    }
    free(sbuf);
    free(rbuf);
}

static void test_allgather(void)
{
    uint8_t *sbuf = tmpi_malloc(AG_BLOCK);
    uint8_t *rbuf = tmpi_malloc(AG_BLOCK * tmpi_size);

    tmpi_fill(sbuf, AG_BLOCK, tmpi_rank, 77);
    MPI_Allgather(sbuf, (int) AG_BLOCK, MPI_BYTE, rbuf, (int) AG_BLOCK, MPI_BYTE, MPI_COMM_WORLD);
    for (int s = 0; s < tmpi_size; s++) {
        tmpi_check(rbuf + s * AG_BLOCK, AG_BLOCK, s, 77, "allgather");
    }
    free(sbuf);
    free(rbuf);
}

int main(int argc, char **argv)
{
    tmpi_init(&argc, &argv, "collectives");
    test_bcast();
    test_allreduce();
    test_alltoall();
    test_allgather();
    MPI_Barrier(MPI_COMM_WORLD);
    return tmpi_finish("bcast/allreduce/reduce/alltoall/allgather");
}
