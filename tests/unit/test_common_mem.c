/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_common_mem.c: unit tests of tc_mem_prefault: every page of a fresh
 * mapping present afterwards (mincore), the budget honoured and reduced,
 * an unaligned start, contents kept, memory that cannot be written left
 * alone, and the empty cases.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "tc_mem.h"

#define NPAGES 64

static size_t page;

static char *fresh(void)
{
    void *p = mmap(NULL, NPAGES * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

    assert_true(MAP_FAILED != p);
    return p;
}

/* pages of [p, p + NPAGES pages) present, as a bitmap of mincore */
static int resident(char *p, unsigned char *vec)
{
    int n = 0;

    assert_int_equal(mincore(p, NPAGES * page, vec), 0);
    for (int i = 0; i < NPAGES; i++) {
        n += vec[i] & 1;
    }
    return n;
}

static void test_whole_mapping(void **state)
{
    unsigned char vec[NPAGES];
    char *p = fresh();
    (void) state;

    assert_int_equal(resident(p, vec), 0);
    assert_int_equal(tc_mem_prefault(p, NPAGES * page, NULL), NPAGES * page);
    assert_int_equal(resident(p, vec), NPAGES);
    /* written in, still zero */
    for (size_t i = 0; i < NPAGES * page; i += 997) {
        assert_int_equal(p[i], 0);
    }
    munmap(p, NPAGES * page);
}

static void test_budget(void **state)
{
    unsigned char vec[NPAGES];
    char *p = fresh();
    size_t budget = 3 * page + 100;
    (void) state;

    assert_int_equal(tc_mem_prefault(p, NPAGES * page, &budget), 3 * page + 100);
    assert_int_equal(budget, 0);
    /* the pages the first 3 pages + 100 bytes overlap: 4 */
    assert_int_equal(resident(p, vec), 4);
    for (int i = 0; i < NPAGES; i++) {
        assert_int_equal(vec[i] & 1, i < 4);
    }
    /* an empty budget does nothing */
    assert_int_equal(tc_mem_prefault(p + 10 * page, page, &budget), 0);
    assert_int_equal(resident(p, vec), 4);
    /* a budget larger than the range: reduced by the range only */
    budget = 100 * page;
    assert_int_equal(tc_mem_prefault(p + 8 * page, 2 * page, &budget), 2 * page);
    assert_int_equal(budget, 98 * page);
    assert_int_equal(resident(p, vec), 6);
    munmap(p, NPAGES * page);
}

static void test_unaligned_start(void **state)
{
    unsigned char vec[NPAGES];
    char *p = fresh();
    (void) state;

    /* from the middle of page 5 to the middle of page 7 */
    assert_int_equal(tc_mem_prefault(p + 5 * page + 123, 2 * page, NULL), 2 * page);
    assert_int_equal(resident(p, vec), 3);
    assert_true(vec[5] & 1);
    assert_true(vec[6] & 1);
    assert_true(vec[7] & 1);
    munmap(p, NPAGES * page);
}

static void test_contents_kept(void **state)
{
    size_t len = 1 << 20;
    unsigned char *b = malloc(len);
    (void) state;

    assert_non_null(b);
    for (size_t i = 0; i < len; i++) {
        b[i] = (unsigned char) (i * 131u + 7u);
    }
    assert_int_equal(tc_mem_prefault(b + 1, len - 1, NULL), len - 1);
    for (size_t i = 0; i < len; i++) {
        assert_int_equal(b[i], (unsigned char) (i * 131u + 7u));
    }
    free(b);
}

static void test_read_only_left_alone(void **state)
{
    size_t budget = 8 * page;
    void *p = mmap(NULL, 4 * page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    (void) state;

    assert_true(MAP_FAILED != p);
    /* the kernel refuses to populate it writable; nothing is written (a
     * write would kill the test) and the budget stays */
    assert_int_equal(tc_mem_prefault(p, 4 * page, &budget), 0);
    assert_int_equal(budget, 8 * page);
    munmap(p, 4 * page);
}

static void test_empty(void **state)
{
    char b[16];
    size_t budget = 0;
    (void) state;

    assert_int_equal(tc_mem_prefault(NULL, 4096, NULL), 0);
    assert_int_equal(tc_mem_prefault(b, 0, NULL), 0);
    assert_int_equal(tc_mem_prefault(b, sizeof(b), &budget), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_whole_mapping),  cmocka_unit_test(test_budget),
        cmocka_unit_test(test_unaligned_start), cmocka_unit_test(test_contents_kept),
        cmocka_unit_test(test_read_only_left_alone), cmocka_unit_test(test_empty),
    };

    page = (size_t) sysconf(_SC_PAGESIZE);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
