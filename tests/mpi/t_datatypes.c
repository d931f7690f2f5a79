/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * t_datatypes.c: derived datatypes between the ranks of each pair: strided
 * vectors, indexed blocks of varying length and a 2-D subarray, sent
 * non-contiguous and received contiguous, and the other way round (the gaps
 * of the receive buffer must stay untouched), small and multi-MiB.
 */

#include "tmpi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GAP_VALUE ((int32_t) 0x7eadbeef)

/* Element values depend on source rank, element index and case. */
static int32_t elem(int src, size_t idx, int kase)
{
    return (int32_t) (((uint32_t) idx * 2654435761u) ^ ((uint32_t) src << 24) ^
                      ((uint32_t) kase * 0x9e3779b9u));
}

/* One layout: a datatype describing count ints picked out of an array of
 * extent ints; map[i] is the array index of the i-th picked element. */
struct layout {
    const char *name;
    MPI_Datatype type;
    size_t count;
    size_t extent;
    size_t *map;
};

static void make_vector(struct layout *l, int nblocks, int blocklen, int stride)
{
    l->name = "vector";
    MPI_Type_vector(nblocks, blocklen, stride, MPI_INT32_T, &l->type);
    MPI_Type_commit(&l->type);
    l->count = (size_t) nblocks * blocklen;
    l->extent = (size_t) (nblocks - 1) * stride + blocklen;
    l->map = tmpi_malloc(sizeof(size_t) * l->count);
    for (size_t b = 0, k = 0; b < (size_t) nblocks; b++) {
        for (size_t j = 0; j < (size_t) blocklen; j++) {
            l->map[k++] = b * stride + j;
        }
    }
}

static void make_indexed(struct layout *l, int nblocks)
{
    int *lens = tmpi_malloc(sizeof(int) * nblocks);
    int *displs = tmpi_malloc(sizeof(int) * nblocks);
    size_t pos = 0, k = 0;

    l->name = "indexed";
    l->count = 0;
    for (int b = 0; b < nblocks; b++) {
        lens[b] = 1 + (b * 7) % 29;
        pos += 1 + (size_t) (b % 5);
        displs[b] = (int) pos;
        pos += (size_t) lens[b];
        l->count += (size_t) lens[b];
    }
    l->extent = pos;
    MPI_Type_indexed(nblocks, lens, displs, MPI_INT32_T, &l->type);
    MPI_Type_commit(&l->type);
    l->map = tmpi_malloc(sizeof(size_t) * l->count);
    for (int b = 0; b < nblocks; b++) {
        for (int j = 0; j < lens[b]; j++) {
            l->map[k++] = (size_t) displs[b] + j;
        }
    }
    free(lens);
    free(displs);
}

static void make_subarray(struct layout *l, int rows, int cols)
{
    int sizes[2] = {rows, cols};
    int sub[2] = {rows / 2, cols / 3};
    int starts[2] = {rows / 4, cols / 5};
    size_t k = 0;

    l->name = "subarray";
    MPI_Type_create_subarray(2, sizes, sub, starts, MPI_ORDER_C, MPI_INT32_T, &l->type);
    MPI_Type_commit(&l->type);
    l->count = (size_t) sub[0] * sub[1];
    l->extent = (size_t) rows * cols;
    l->map = tmpi_malloc(sizeof(size_t) * l->count);
    for (int r = 0; r < sub[0]; r++) {
        for (int c = 0; c < sub[1]; c++) {
            l->map[k++] = (size_t) (starts[0] + r) * cols + starts[1] + c;
        }
    }
}

static void free_layout(struct layout *l)
{
    MPI_Type_free(&l->type);
    free(l->map);
}

/* dir 0: typed send, contiguous receive; dir 1: contiguous send, typed
 * receive. The lower rank of the pair sends. */
static void run_case(const struct layout *l, int peer, int kase, int dir)
{
    int sender = tmpi_rank < peer;
    int32_t *full = tmpi_malloc(sizeof(int32_t) * l->extent);
    int32_t *packed = tmpi_malloc(sizeof(int32_t) * l->count);
    MPI_Status st;

    if (sender) {
        if (0 == dir) {
            for (size_t i = 0; i < l->extent; i++) {
                full[i] = GAP_VALUE;
            }
            for (size_t k = 0; k < l->count; k++) {
                full[l->map[k]] = elem(tmpi_rank, k, kase);
            }
            MPI_Send(full, 1, l->type, peer, kase, MPI_COMM_WORLD);
        } else {
            for (size_t k = 0; k < l->count; k++) {
                packed[k] = elem(tmpi_rank, k, kase);
            }
            MPI_Send(packed, (int) l->count, MPI_INT32_T, peer, kase, MPI_COMM_WORLD);
        }
    } else if (0 == dir) {
        MPI_Recv(packed, (int) l->count, MPI_INT32_T, peer, kase, MPI_COMM_WORLD, &st);
        tmpi_check_status(&st, peer, kase, (int) (sizeof(int32_t) * l->count), "typed send");
        for (size_t k = 0; k < l->count; k++) {
            if (packed[k] != elem(peer, k, kase)) {
                tmpi_error("%s (%zu ints) typed send: element %zu wrong", l->name, l->count, k);
                break;
            }
        }
    } else {
        /* Gaps hold a marker that must survive the typed receive. */
        uint8_t *picked = calloc(l->extent, 1);

        for (size_t i = 0; i < l->extent; i++) {
            full[i] = GAP_VALUE;
        }
        MPI_Recv(full, 1, l->type, peer, kase, MPI_COMM_WORLD, &st);
        tmpi_check_status(&st, peer, kase, (int) (sizeof(int32_t) * l->count), "typed receive");
        for (size_t k = 0; k < l->count; k++) {
            picked[l->map[k]] = 1;
            if (full[l->map[k]] != elem(peer, k, kase)) {
                tmpi_error("%s (%zu ints) typed receive: element %zu wrong", l->name, l->count, k);
                break;
            }
        }
        for (size_t i = 0; i < l->extent; i++) {
            if (!picked[i] && full[i] != GAP_VALUE) {
                tmpi_error("%s (%zu ints) typed receive: gap at %zu written", l->name, l->count, i);
                break;
            }
        }
        free(picked);
    }
    free(full);
    free(packed);
}

int main(int argc, char **argv)
{
    struct layout layouts[8];
    int n = 0, peer;
    char detail[80];

    tmpi_init(&argc, &argv, "datatypes");
    peer = tmpi_rank ^ 1;

    /* Small (eager) and large (rendezvous, many fragments) of each kind. */
    make_vector(&layouts[n++], 5, 3, 7);
    make_vector(&layouts[n++], 200, 1, 2);
    make_vector(&layouts[n++], 1000, 257, 300);
    make_vector(&layouts[n++], 1 << 19, 2, 3);
    make_indexed(&layouts[n++], 40);
    make_indexed(&layouts[n++], 20000);
    make_subarray(&layouts[n++], 30, 50);
    make_subarray(&layouts[n++], 1500, 1000);

    if (peer < tmpi_size) {
        for (int i = 0; i < n; i++) {
            for (int dir = 0; dir < 2; dir++) {
                run_case(&layouts[i], peer, i * 2 + dir, dir);
            }
        }
    }
    for (int i = 0; i < n; i++) {
        free_layout(&layouts[i]);
    }
    snprintf(detail, sizeof(detail), "%d layouts (vector/indexed/subarray)", n);
    return tmpi_finish(detail);
}
