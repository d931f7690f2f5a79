/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * tc_mem.c: tc_mem_prefault, writing a buffer's pages in ahead of use.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tc_atomic.h"
#include "tc_mem.h"

size_t tc_mem_prefault(void *addr, size_t len, size_t *budget)
{
    uintptr_t start, end, page;
    long ps = sysconf(_SC_PAGESIZE);

    if (NULL == addr || 0 == len) {
        return 0;
    }
    if (NULL != budget) {
        /* take the bytes out of the budget first: threads that make
         * buffers at once share it */
        size_t left = tc_atomic_load_relaxed(budget), take;

        do {
            take = len < left ? len : left;
        } while (0 != take && !tc_atomic_cswap_weak(budget, &left, left - take));
        len = take;
    }
    if (0 == len) {
        return 0;
    }
    page = ps > 0 ? (uintptr_t) ps : 4096u;
    start = (uintptr_t) addr;
    if (len > UINTPTR_MAX - start) {
        len = (size_t) (UINTPTR_MAX - start);
    }
    end = start + len;
#ifdef MADV_POPULATE_WRITE
    {
        /* madvise wants a page-aligned start; the pages overlapping the
         * range are the ones meant */
        uintptr_t a = start & ~(page - 1);

        if (0 == madvise((void *) a, (size_t) (end - a), MADV_POPULATE_WRITE)) {
            goto done;
        }
        /* a kernel that knows the advice takes it for an empty range:
         * then the memory was refused (not writable, no memory left) and
         * is left as it is; else (before 5.14) the pages are touched */
        if (0 == madvise((void *) a, 0, MADV_POPULATE_WRITE)) {
            if (NULL != budget) {
                (void) tc_atomic_fetch_add(budget, len);
            }
            return 0;
        }
    }
#endif
    /* one byte a page, read and written back */
    for (uintptr_t p = start; p < end; p = (p & ~(page - 1)) + page) {
        volatile char *c = (volatile char *) p;

        *c = *c;
    }
done:
    return len;
}
