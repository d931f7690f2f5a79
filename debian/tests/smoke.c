/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * smoke.c: the installed packages' smoke test program. Each rank sends
 * patterned buffers (eager, medium and rendezvous sizes) around a ring and
 * checks what it receives, then an allreduce, then an MPI_Put and MPI_Get
 * in fence epochs, each checked. Exit status 0 when every check held.
 */

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned char smoke_byte(int rank, size_t i)
{
    return (unsigned char) ((size_t) rank * 31u + i * 7u + (i >> 8));
}

static int smoke_ring(int rank, int size, size_t len)
{
    int next = (rank + 1) % size, prev = (rank + size - 1) % size, bad = 0;
    unsigned char *out = malloc(len ? len : 1), *in = malloc(len ? len : 1);
    size_t i;

    if (NULL == out || NULL == in) {
        fprintf(stderr, "smoke: rank %d: out of memory\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (i = 0; i < len; i++) {
        out[i] = smoke_byte(rank, i);
        in[i] = 0;
    }
    MPI_Sendrecv(out, (int) len, MPI_BYTE, next, 7, in, (int) len, MPI_BYTE, prev, 7,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (i = 0; i < len; i++) {
        if (in[i] != smoke_byte(prev, i)) {
            fprintf(stderr, "smoke: rank %d: %zu bytes from %d differ at %zu\n", rank, len, prev,
                    i);
            bad = 1;
            break;
        }
    }
    free(out);
    free(in);
    return bad;
}

int main(int argc, char **argv)
{
    static const size_t lens[] = {0, 1, 100, 4096, 65536, 1 << 20, 4 << 20};
    int rank, size, bad = 0, allbad = 0, sum = 0, next, prev, i;
    int win_buf[4], got[4];
    MPI_Win win;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    next = (rank + 1) % size;
    prev = (rank + size - 1) % size;

    for (i = 0; i < (int) (sizeof(lens) / sizeof(lens[0])); i++) {
        bad |= smoke_ring(rank, size, lens[i]);
    }

    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (sum != size * (size - 1) / 2) {
        fprintf(stderr, "smoke: rank %d: allreduce gave %d\n", rank, sum);
        bad = 1;
    }

    /* one-sided: put into the next rank's window, get from the previous */
    for (i = 0; i < 4; i++) {
        win_buf[i] = -1;
    }
    MPI_Win_create(win_buf, sizeof(win_buf), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_fence(0, win);
    for (i = 0; i < 4; i++) {
        got[i] = 1000 * rank + i;
    }
    MPI_Put(got, 4, MPI_INT, next, 0, 4, MPI_INT, win);
    MPI_Win_fence(0, win);
    for (i = 0; i < 4; i++) {
        if (win_buf[i] != 1000 * prev + i) {
            fprintf(stderr, "smoke: rank %d: put word %d is %d\n", rank, i, win_buf[i]);
            bad = 1;
        }
        got[i] = -1;
    }
    MPI_Get(got, 4, MPI_INT, prev, 0, 4, MPI_INT, win);
    MPI_Win_fence(0, win);
    for (i = 0; i < 4; i++) {
        /* prev's window holds what prev's own predecessor put there */
        int want = 1000 * ((prev + size - 1) % size) + i;

        if (got[i] != want) {
            fprintf(stderr, "smoke: rank %d: get word %d is %d, not %d\n", rank, i, got[i], want);
            bad = 1;
        }
    }
    MPI_Win_free(&win);

    MPI_Allreduce(&bad, &allbad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (0 == rank) {
        printf("smoke: %d ranks: %s\n", size, allbad ? "FAILED" : "ok");
    }
    MPI_Finalize();
    return allbad ? 1 : 0;
}
