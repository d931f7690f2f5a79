/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * tmpi.c: pattern generation and checking, error counting and the result
 * line shared by the MPI test programs.
 */

#include "tmpi.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const size_t tmpi_sizes[] = {
    0,
    1,
    2,
    7,
    8,
    63,
    64,
    65,
    255,
    256,
    257,
    1023,
    1024,
    1025,
    2047,
    2048,
    2049,
    4095,
    4096,
    4097,
    4096 + 64 - 14, /* sci's and via's eager limit on one host less ob1's match header */
    4096 + 64 - 14 + 1,
    8191,
    8192,
    8193,
    12 * 1024 - 1,
    12 * 1024,
    12 * 1024 + 1,
    32 * 1024 - 1,
    32 * 1024,
    32 * 1024 + 1,
    64 * 1024 - 1,
    64 * 1024,
    64 * 1024 + 1,
    128 * 1024 - 1,
    128 * 1024,
    128 * 1024 + 1,
    256 * 1024 + 3,
    1024 * 1024 - 1,
    1024 * 1024,
    1024 * 1024 + 1,
    3 * 1024 * 1024 + 5,
    8 * 1024 * 1024,
};
const int tmpi_nsizes = (int) (sizeof(tmpi_sizes) / sizeof(tmpi_sizes[0]));

const char *tmpi_name = "?";
int tmpi_rank = -1;
int tmpi_size = 0;
long tmpi_errors = 0;

/* Enough detail to debug; a flood of lines helps nobody. */
#define TMPI_MAX_REPORTS 10

void tmpi_init(int *argc, char ***argv, const char *name)
{
    tmpi_name = name;
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &tmpi_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &tmpi_size);
    /* A full pipe must not reorder or lose the result line. */
    setvbuf(stdout, NULL, _IOLBF, 0);
}

int tmpi_init_thread(int *argc, char ***argv, const char *name, int required)
{
    int provided = MPI_THREAD_SINGLE;

    tmpi_name = name;
    MPI_Init_thread(argc, argv, required, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &tmpi_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &tmpi_size);
    setvbuf(stdout, NULL, _IOLBF, 0);
    return provided;
}

void tmpi_fill(void *buf, size_t len, int src, uint32_t seq)
{
    uint8_t *p = buf;

    for (size_t i = 0; i < len; i++) {
        p[i] = tmpi_byte(i, src, seq);
    }
}

int tmpi_check(const void *buf, size_t len, int src, uint32_t seq, const char *what)
{
    const uint8_t *p = buf;

    for (size_t i = 0; i < len; i++) {
        if (p[i] != tmpi_byte(i, src, seq)) {
            size_t bad = 0;

            for (size_t j = i; j < len; j++) {
                bad += (p[j] != tmpi_byte(j, src, seq));
            }
            tmpi_error("%s: len %zu from rank %d seq %u: first bad byte at "
                       "%zu (got 0x%02x want 0x%02x), %zu bad bytes",
                       what, len, src, seq, i, p[i], tmpi_byte(i, src, seq), bad);
            return 1;
        }
    }
    return 0;
}

void tmpi_error(const char *fmt, ...)
{
    va_list ap;

    /* atomic: the threaded tests report from several threads */
    if (__atomic_add_fetch(&tmpi_errors, 1, __ATOMIC_RELAXED) > TMPI_MAX_REPORTS) {
        return;
    }
    fprintf(stderr, "%s: rank %d: ", tmpi_name, tmpi_rank);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fflush(stderr);
}

int tmpi_check_status(const MPI_Status *st, int src, int tag, int count, const char *what)
{
    int got = -1;

    MPI_Get_count(st, MPI_BYTE, &got);
    if ((src != MPI_ANY_SOURCE && st->MPI_SOURCE != src) ||
        (tag != MPI_ANY_TAG && st->MPI_TAG != tag) || got != count) {
        tmpi_error("%s: status source %d tag %d count %d, want %d %d %d", what, st->MPI_SOURCE,
                   st->MPI_TAG, got, src, tag, count);
        return 1;
    }
    return 0;
}

int tmpi_finish(const char *detail)
{
    long total = 0;

    MPI_Allreduce(&tmpi_errors, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (0 == tmpi_rank) {
        printf("%s %s: np=%d %s%s%ld errors\n", total ? "FAIL" : "PASS", tmpi_name, tmpi_size,
               detail ? detail : "", detail ? ", " : "", total);
        fflush(stdout);
    }
    MPI_Finalize();
    return total ? 1 : 0;
}

void *tmpi_malloc(size_t len)
{
    /* malloc(0) may return NULL; the tests still want a valid pointer. */
    void *p = malloc(len ? len : 1);

    if (NULL == p) {
        fprintf(stderr, "%s: rank %d: out of memory (%zu bytes)\n", tmpi_name, tmpi_rank, len);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return p;
}
