/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_sci_expose.c: the set of memory btl_sci exposes to its peers
 * (btl_sci_expose.h), which the target side of its atomics checks.  An
 * address is accepted only inside a range registered and not yet
 * deregistered, exactly as asked for: the cases the registration cache
 * would wrongly accept (and the old check did) are refused:
 * - a released registration (still cached on the LRU, e.g. after
 *   MPI_Win_free, its memory reused by the heap);
 * - the page-rounded tail of a registration;
 * - a gap inside the union the cache merged from two registrations.
 */

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "btl_sci_expose.h"
#include "tc_rcache.h"

static int expose_reg(void *ctx, void *base, size_t len, void **handle)
{
    (void) ctx;
    (void) base;
    (void) len;
    *handle = NULL;
    return 0;
}

static int expose_dereg(void *ctx, void *base, size_t len, void *handle)
{
    (void) ctx;
    (void) base;
    (void) len;
    (void) handle;
    return 0;
}

/* what the cache says about [addr, addr+width): found or not */
static int cache_finds(tc_rcache_t *c, uint64_t addr, size_t width)
{
    tc_rcache_reg_t *r;

    if (0 != tc_rcache_find(c, (void *) (uintptr_t) addr, width, &r)) {
        return 0;
    }
    tc_rcache_put(c, r);
    return 1;
}

static void test_exact_live_ranges(void **state)
{
    size_t page = (size_t) sysconf(_SC_PAGESIZE);
    tc_rcache_params_t p = {.provider = {.reg = expose_reg, .dereg = expose_dereg}};
    tc_rcache_t *cache = tc_rcache_create(&p);
    mca_btl_sci_expose_set_t set = {0};
    mca_btl_sci_expose_t win1, win2, merged;
    tc_rcache_reg_t *r1, *r2, *r3;
    uint8_t *a = mmap(NULL, 4 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    uint64_t base = (uint64_t) (uintptr_t) a;
    (void) state;

    assert_non_null(cache);
    assert_true(MAP_FAILED != (void *) a);

    /* a window of 100 bytes at the start of a page */
    assert_int_equal(0, tc_rcache_get(cache, a, 100, &r1));
    mca_btl_sci_expose_add(&set, &win1, base, 100);
    assert_true(mca_btl_sci_expose_covers(&set, base, 8));
    assert_true(mca_btl_sci_expose_covers(&set, base + 96, 4));
    assert_false(mca_btl_sci_expose_covers(&set, base + 96, 8)); /* crosses the end */
    /* the page-rounded tail: the cache accepts it, the set does not */
    assert_true(cache_finds(cache, base + 200, 8));
    assert_false(mca_btl_sci_expose_covers(&set, base + 200, 8));

    /* a second window in the next-but-one page, then a registration
     * overlapping both: the cache merges one union over the gap */
    assert_int_equal(0, tc_rcache_get(cache, a + 2 * page, 64, &r2));
    mca_btl_sci_expose_add(&set, &win2, base + 2 * page, 64);
    assert_int_equal(0, tc_rcache_get(cache, a + 50, 2 * page, &r3));
    mca_btl_sci_expose_add(&set, &merged, base + 50, 2 * page);
    mca_btl_sci_expose_remove(&set, &merged);
    tc_rcache_put(cache, r3);
    /* the gap [base+100, base+2*page) was exposed only by the merged one */
    assert_true(cache_finds(cache, base + page + 8, 8));
    assert_false(mca_btl_sci_expose_covers(&set, base + page + 8, 8));
    assert_true(mca_btl_sci_expose_covers(&set, base + 2 * page + 56, 8));

    /* released (MPI_Win_free): still cached on the LRU, no longer exposed */
    mca_btl_sci_expose_remove(&set, &win1);
    tc_rcache_put(cache, r1);
    assert_true(cache_finds(cache, base + 8, 8));
    assert_false(mca_btl_sci_expose_covers(&set, base + 8, 8));
    mca_btl_sci_expose_remove(&set, &win2);
    tc_rcache_put(cache, r2);
    assert_false(mca_btl_sci_expose_covers(&set, base + 2 * page, 8));
    assert_int_equal(0, (int) set.count);
    assert_null(set.head);

    /* an address range that wraps around is never covered */
    mca_btl_sci_expose_add(&set, &win1, base, 100);
    assert_false(mca_btl_sci_expose_covers(&set, UINT64_MAX - 3, 8));
    assert_false(mca_btl_sci_expose_covers(&set, base + 8, UINT64_MAX));
    mca_btl_sci_expose_remove(&set, &win1);

    assert_int_equal(0, (int) tc_rcache_destroy(cache));
    munmap(a, 4 * page);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact_live_ranges),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
