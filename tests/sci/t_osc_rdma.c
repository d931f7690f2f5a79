/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * t_osc_rdma.c: MPI one-sided communication through Open MPI's own
 * osc/rdma component over btl_sci (run with --mca osc rdma --mca btl
 * self,sci): put, get, accumulate, fetch_and_op, compare_and_swap, with
 * fence and with lock/unlock (exclusive and shared) and flush.  Every
 * value is checked; a pattern, not only sizes.  Prints one result line;
 * exits non-zero on any mismatch.
 */

#include <mpi.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 4096        /* elements of the window per rank */
#define BIG (1 << 20) /* elements for the large put/get */

static int errors;

#define CHECK(cond, ...)                            \
    do {                                            \
        if (!(cond)) {                              \
            if (errors < 10) {                      \
                fprintf(stderr, "rank %d: ", rank); \
                fprintf(stderr, __VA_ARGS__);       \
                fputc('\n', stderr);                \
            }                                       \
            ++errors;                               \
        }                                           \
    } while (0)

static int64_t pat(int owner, int writer, int i)
{
    return ((int64_t) owner << 40) ^ ((int64_t) writer << 24) ^ (int64_t) i * 2654435761LL;
}

int main(int argc, char **argv)
{
    int rank, size, total_errors = 0;
    int64_t *base, *big_base;
    MPI_Win win, bigwin;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    MPI_Win_allocate(N * sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD, &base,
                     &win);
    MPI_Win_allocate((MPI_Aint) BIG * sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL,
                     MPI_COMM_WORLD, &big_base, &bigwin);

    /* 1. put with fence: every rank writes its slice of the right neighbour */
    {
        int right = (rank + 1) % size, left = (rank + size - 1) % size;
        int64_t *src = malloc(N * sizeof(int64_t));
        for (int i = 0; i < N; ++i) {
            base[i] = -1;
            src[i] = pat(right, rank, i);
        }
        MPI_Win_fence(0, win);
        MPI_Put(src, N, MPI_INT64_T, right, 0, N, MPI_INT64_T, win);
        MPI_Win_fence(0, win);
        for (int i = 0; i < N; ++i) {
            CHECK(base[i] == pat(rank, left, i), "put: [%d] = %lld", i, (long long) base[i]);
        }
        free(src);
    }

    /* 2. get with fence, odd counts and offsets */
    {
        int right = (rank + 1) % size;
        int64_t *dst = calloc(N, sizeof(int64_t));
        for (int i = 0; i < N; ++i) {
            base[i] = pat(rank, 99, i);
        }
        MPI_Win_fence(0, win);
        MPI_Get(dst + 3, N - 7, MPI_INT64_T, right, 5, N - 7, MPI_INT64_T, win);
        MPI_Win_fence(0, win);
        for (int i = 0; i < N - 7; ++i) {
            CHECK(dst[3 + i] == pat(right, 99, 5 + i), "get: [%d]", i);
        }
        free(dst);
    }

    /* 3. large put/get (8 MiB) through the DMA engine, lock/unlock */
    {
        int right = (rank + 1) % size, left = (rank + size - 1) % size;
        int64_t *src = malloc((size_t) BIG * sizeof(int64_t));
        for (int i = 0; i < BIG; ++i) {
            src[i] = pat(right, rank, i);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, bigwin);
        MPI_Put(src, BIG, MPI_INT64_T, right, 0, BIG, MPI_INT64_T, bigwin);
        MPI_Win_unlock(right, bigwin);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, bigwin);
        for (int i = 0; i < BIG; ++i) {
            CHECK(big_base[i] == pat(rank, left, i), "big put: [%d]", i);
        }
        MPI_Win_unlock(rank, bigwin);
        MPI_Barrier(MPI_COMM_WORLD);
        memset(src, 0, (size_t) BIG * sizeof(int64_t));
        MPI_Win_lock(MPI_LOCK_SHARED, left, 0, bigwin);
        MPI_Get(src, BIG, MPI_INT64_T, left, 0, BIG, MPI_INT64_T, bigwin);
        MPI_Win_unlock(left, bigwin);
        for (int i = 0; i < BIG; ++i) {
            int ll = (left + size - 1) % size;
            CHECK(src[i] == pat(left, ll, i), "big get: [%d]", i);
        }
        free(src);
        MPI_Barrier(MPI_COMM_WORLD);
    }

    /* 4. fetch_and_op: every rank adds rank+1 to a counter at rank 0, 100
     * times, under a shared lock; the fetched values must all differ */
    {
        const int reps = 100;
        int64_t *seen = malloc(reps * sizeof(int64_t));
        MPI_Win_fence(0, win);
        if (0 == rank) {
            base[0] = 0;
            base[1] = 0;
        }
        MPI_Win_fence(0, win);
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
        for (int r = 0; r < reps; ++r) {
            int64_t one = 1, old = -1;
            MPI_Fetch_and_op(&one, &old, MPI_INT64_T, 0, 0, MPI_SUM, win);
            MPI_Win_flush(0, win);
            seen[r] = old;
            if (r > 0) {
                CHECK(old > seen[r - 1], "fetch_and_op not increasing: %lld after %lld",
                      (long long) old, (long long) seen[r - 1]);
            }
            int64_t v = rank + 1;
            MPI_Accumulate(&v, 1, MPI_INT64_T, 0, 1, 1, MPI_INT64_T, MPI_SUM, win);
        }
        MPI_Win_unlock(0, win);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Win_fence(0, win);
        if (0 == rank) {
            int64_t want = 0;
            for (int p = 0; p < size; ++p) {
                want += (int64_t) reps * (p + 1);
            }
            CHECK(base[0] == (int64_t) reps * size, "fetch_and_op total %lld", (long long) base[0]);
            CHECK(base[1] == want, "accumulate total %lld, want %lld", (long long) base[1],
                  (long long) want);
        }
        MPI_Win_fence(0, win);
        free(seen);
    }

    /* 5. compare_and_swap: a ticket lock at rank 0 protecting a counter at
     * the last rank, incremented by get + put inside the critical section */
    {
        const int reps = 20;
        MPI_Win_fence(0, win);
        if (0 == rank) {
            base[2] = -1; /* lock word: -1 free */
        }
        if (size - 1 == rank) {
            base[3] = 0; /* counter */
        }
        MPI_Win_fence(0, win);
        MPI_Win_lock_all(0, win);
        for (int r = 0; r < reps; ++r) {
            int64_t mine = rank, freev = -1, old;
            do {
                MPI_Compare_and_swap(&mine, &freev, &old, MPI_INT64_T, 0, 2, win);
                MPI_Win_flush(0, win);
            } while (old != -1);
            int64_t cnt;
            MPI_Get(&cnt, 1, MPI_INT64_T, size - 1, 3, 1, MPI_INT64_T, win);
            MPI_Win_flush(size - 1, win);
            cnt += 1;
            MPI_Put(&cnt, 1, MPI_INT64_T, size - 1, 3, 1, MPI_INT64_T, win);
            MPI_Win_flush(size - 1, win);
            MPI_Compare_and_swap(&freev, &mine, &old, MPI_INT64_T, 0, 2, win);
            MPI_Win_flush(0, win);
            CHECK(old == rank, "cswap release saw %lld", (long long) old);
        }
        MPI_Win_unlock_all(win);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Win_fence(0, win);
        if (size - 1 == rank) {
            CHECK(base[3] == (int64_t) reps * size, "cswap-protected counter %lld, want %d",
                  (long long) base[3], reps * size);
        }
        MPI_Win_fence(0, win);
    }

    /* 6. a window over user memory (MPI_Win_create): osc/rdma then uses the
     * BTL's put/get and atomics on the peer's registered memory */
    {
        const int reps = 50;
        int64_t *mem = calloc(N, sizeof(int64_t));
        int64_t *src = malloc(N * sizeof(int64_t));
        int right = (rank + 1) % size, left = (rank + size - 1) % size;
        MPI_Win cwin;

        MPI_Win_create(mem, N * sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD,
                       &cwin);
        for (int i = 0; i < N; ++i) {
            src[i] = pat(right, rank, i);
        }
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, cwin);
        MPI_Put(src + 16, N - 16, MPI_INT64_T, right, 16, N - 16, MPI_INT64_T, cwin);
        MPI_Win_unlock(right, cwin);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, cwin);
        for (int i = 16; i < N; ++i) {
            CHECK(mem[i] == pat(rank, left, i), "create put: [%d]", i);
        }
        MPI_Win_unlock(rank, cwin);
        MPI_Barrier(MPI_COMM_WORLD);

        MPI_Win_lock_all(0, cwin);
        for (int r = 0; r < reps; ++r) {
            int64_t one = 1, old = -1, mine = rank + 1, zero = 0;
            MPI_Fetch_and_op(&one, &old, MPI_INT64_T, 0, 0, MPI_SUM, cwin);
            MPI_Win_flush(0, cwin);
            CHECK(old >= 0 && old < (int64_t) reps * size, "create fetch_and_op old %lld",
                  (long long) old);
            /* each rank owns word 1+rank at the last rank: set it with CAS */
            MPI_Compare_and_swap(&mine, &zero, &old, MPI_INT64_T, size - 1, 1 + rank, cwin);
            MPI_Win_flush(size - 1, cwin);
            CHECK(old == (r ? mine : 0), "create cswap round %d saw %lld", r, (long long) old);
        }
        MPI_Win_unlock_all(cwin);
        MPI_Barrier(MPI_COMM_WORLD);
        if (0 == rank) {
            CHECK(mem[0] == (int64_t) reps * size, "create fetch_and_op total %lld",
                  (long long) mem[0]);
        }
        if (size - 1 == rank) {
            for (int p = 0; p < size; ++p) {
                CHECK(mem[1 + p] == p + 1, "create cswap word %d = %lld", p,
                      (long long) mem[1 + p]);
            }
        }
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Win_free(&cwin);
        free(src);
        free(mem);
    }

    MPI_Win_free(&bigwin);
    MPI_Win_free(&win);
    MPI_Allreduce(&errors, &total_errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (0 == rank) {
        printf("%s osc_rdma: put/get/big put+get/fetch_and_op/accumulate/compare_and_swap, "
               "fence and lock/unlock, allocate and create windows, %d ranks, %d errors\n",
               total_errors ? "FAIL" : "PASS", size, total_errors);
    }
    MPI_Finalize();
    return total_errors ? 1 : 0;
}
