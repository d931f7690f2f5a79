/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_common_rcache.c: unit tests of tc_rcache with a mock provider that
 * tracks live registrations: hits and reference counts, growth over
 * overlapping ranges, adjacent ranges, LRU eviction under count and byte
 * bounds, invalidation by munmap (through a munmap wrapper that calls
 * tc_rcache_invalidate first, as Open MPI's release hook does), a
 * registration invalidated while in use, provider failure, a random
 * workload checked against the provider's view, and two threads racing.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "tc_atomic.h"
#include "tc_rcache.h"

#define MOCK_MAX 1024

typedef struct mock_reg {
    uintptr_t base;
    size_t len;
    bool live;
} mock_reg_t;

typedef struct mock {
    mock_reg_t regs[MOCK_MAX];
    int nregs; /* slots used */
    int live;  /* live registrations */
    int reg_calls;
    int dereg_calls;
    int fail_next;            /* fail this many reg calls with -ENOMEM */
    tc_rcache_t *unmap_cache; /* the next reg call invalidates its range there, */
    int unmap_next;           /* as an munmap in another thread would */
} mock_t;

static size_t page;

static int mock_reg(void *ctx, void *base, size_t len, void **handle)
{
    mock_t *m = ctx;
    int slot;

    /* Registrations are page aligned and page sized. */
    assert_int_equal((uintptr_t) base % page, 0);
    assert_int_equal(len % page, 0);
    if (m->fail_next > 0) {
        m->fail_next--;
        return -ENOMEM;
    }
    if (m->unmap_next > 0) {
        m->unmap_next--;
        (void) tc_rcache_invalidate(m->unmap_cache, base, len);
    }
    /* Reuse the slot of a deregistered entry. */
    for (slot = 0; slot < m->nregs && m->regs[slot].live; slot++) {
    }
    assert_true(slot < MOCK_MAX);
    m->regs[slot] = (mock_reg_t){.base = (uintptr_t) base, .len = len, .live = true};
    *handle = &m->regs[slot];
    if (slot == m->nregs) {
        m->nregs++;
    }
    m->live++;
    m->reg_calls++;
    return 0;
}

static int mock_dereg(void *ctx, void *base, size_t len, void *handle)
{
    mock_t *m = ctx;
    mock_reg_t *r = handle;

    /* Exactly once, with the values given at registration. */
    assert_true(r->live);
    assert_int_equal(r->base, (uintptr_t) base);
    assert_int_equal(r->len, len);
    r->live = false;
    m->live--;
    m->dereg_calls++;
    return 0;
}

static tc_rcache_t *make_cache(mock_t *m, size_t max_count, size_t max_bytes)
{
    tc_rcache_params_t p = {
        .provider = {.reg = mock_reg, .dereg = mock_dereg, .ctx = m},
        .max_unused_count = max_count,
        .max_unused_bytes = max_bytes,
    };
    memset(m, 0, sizeof(*m));
    return tc_rcache_create(&p);
}

/* A page-aligned arena; the cache never touches the memory itself. */
static uint8_t *arena(size_t pages)
{
    void *p = mmap(NULL, pages * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(MAP_FAILED != p);
    return p;
}

/* End of a test with the mock provider: nothing is still referenced, the
 * cache deregisters everything it holds, and the arena goes. */
static void finish(tc_rcache_t *c, const mock_t *m, uint8_t *a, size_t pages)
{
    assert_int_equal(tc_rcache_destroy(c), 0);
    assert_int_equal(m->live, 0);
    munmap(a, pages * page);
}

static int setup(void **state)
{
    (void) state;
    page = (size_t) sysconf(_SC_PAGESIZE);
    return 0;
}

static void test_create_rejects_bad_params(void **state)
{
    tc_rcache_params_t p = {0};
    (void) state;
    assert_null(tc_rcache_create(NULL));
    assert_null(tc_rcache_create(&p));
}

static void test_hit_miss_refcount(void **state)
{
    mock_t m;
    tc_rcache_t *c = make_cache(&m, 0, 0);
    uint8_t *a = arena(8);
    tc_rcache_reg_t *r1, *r2, *r3;
    tc_rcache_stats_t st;
    (void) state;

    assert_int_equal(tc_rcache_get(c, a, 0, &r1), -EINVAL);
    assert_int_equal(tc_rcache_get(c, (void *) (UINTPTR_MAX - 10), 100, &r1), -EINVAL);
    /* An unaligned request gets whole pages. */
    assert_int_equal(tc_rcache_get(c, a + 100, 2 * page, &r1), 0);
    assert_int_equal(r1->base, (uintptr_t) a);
    assert_int_equal(r1->len, 3 * page);
    /* Anything inside is a hit on the same registration. */
    assert_int_equal(tc_rcache_get(c, a + page, 10, &r2), 0);
    assert_ptr_equal(r1, r2);
    assert_int_equal(tc_rcache_find(c, a + 2 * page, page, &r3), 0);
    assert_ptr_equal(r1, r3);
    assert_int_equal(tc_rcache_find(c, a + 3 * page, 1, &r3), -ENOENT);
    assert_int_equal(m.reg_calls, 1);
    tc_rcache_get_stats(c, &st);
    assert_int_equal(st.hits, 2);
    assert_int_equal(st.misses, 1);
    assert_int_equal(st.unused, 0);

    tc_rcache_put(c, r1);
    tc_rcache_put(c, r2);
    tc_rcache_get_stats(c, &st);
    assert_int_equal(st.unused, 0);
    tc_rcache_put(c, r3);
    /* Unused now, but cached: no deregistration. */
    tc_rcache_get_stats(c, &st);
    assert_int_equal(st.unused, 1);
    assert_int_equal(st.unused_bytes, 3 * page);
    assert_int_equal(m.dereg_calls, 0);
    /* Reuse from the LRU. */
    assert_int_equal(tc_rcache_get(c, a, 1, &r1), 0);
    assert_int_equal(m.reg_calls, 1);
    tc_rcache_retain(c, r1);
    tc_rcache_put(c, r1);
    tc_rcache_put(c, r1);
    finish(c, &m, a, 8);
}

/* A request that extends a registration gets one covering the union; the
 * old one is deregistered at once if unused, on its last put if not. */
static void test_overlap_growth(void **state)
{
    mock_t m;
    tc_rcache_t *c = make_cache(&m, 0, 0);
    uint8_t *a = arena(16);
    tc_rcache_reg_t *r1, *r2, *r3, *r4;
    tc_rcache_stats_t st;
    (void) state;

    /* Unused old registration. */
    assert_int_equal(tc_rcache_get(c, a, 2 * page, &r1), 0);
    tc_rcache_put(c, r1);
    assert_int_equal(tc_rcache_get(c, a + page, 3 * page, &r2), 0);
    assert_int_equal(r2->base, (uintptr_t) a);
    assert_int_equal(r2->len, 4 * page);
    assert_int_equal(m.dereg_calls, 1);
    assert_int_equal(m.live, 1);
    /* The old range is served by the grown registration. */
    assert_int_equal(tc_rcache_find(c, a, page, &r3), 0);
    assert_ptr_equal(r3, r2);
    tc_rcache_put(c, r3);

    /* In-use old registration: r2 stays valid for its holder. */
    assert_int_equal(tc_rcache_get(c, a + 3 * page, 4 * page, &r4), 0);
    assert_int_equal(r4->base, (uintptr_t) a);
    assert_int_equal(r4->len, 7 * page);
    assert_int_equal(m.live, 2);
    assert_true(tc_rcache_reg_is_stale(r2));
    assert_false(tc_rcache_reg_is_stale(r4));
    tc_rcache_get_stats(c, &st);
    assert_int_equal(st.cached, 1);
    assert_int_equal(st.zombies, 1);
    assert_int_equal(m.dereg_calls, 1);
    tc_rcache_put(c, r2);
    assert_int_equal(m.dereg_calls, 2);
    assert_int_equal(m.live, 1);
    tc_rcache_get_stats(c, &st);
    assert_int_equal(st.zombies, 0);

    /* A request spanning two registrations and a gap merges all three. */
    tc_rcache_put(c, r4);
    assert_int_equal(tc_rcache_get(c, a + 10 * page, page, &r1), 0);
    tc_rcache_put(c, r1);
    assert_int_equal(tc_rcache_get(c, a + 5 * page, 6 * page, &r2), 0);
    assert_int_equal(r2->base, (uintptr_t) a);
    assert_int_equal(r2->len, 11 * page);
    assert_int_equal(m.live, 1);
    tc_rcache_put(c, r2);
    finish(c, &m, a, 16);
}

/* Adjacent ranges stay separate; each serves its own lookups. */
static void test_adjacent_ranges(void **state)
{
    mock_t m;
    tc_rcache_t *c = make_cache(&m, 0, 0);
    uint8_t *a = arena(8);
    tc_rcache_reg_t *r1, *r2, *r3;
    (void) state;

    assert_int_equal(tc_rcache_get(c, a, 2 * page, &r1), 0);
    assert_int_equal(tc_rcache_get(c, a + 2 * page, 2 * page, &r2), 0);
    assert_ptr_not_equal(r1, r2);
    assert_int_equal(m.live, 2);
    assert_int_equal(tc_rcache_find(c, a + 2 * page - 1, 1, &r3), 0);
    assert_ptr_equal(r3, r1);
    tc_rcache_put(c, r3);
    assert_int_equal(tc_rcache_find(c, a + 2 * page, 1, &r3), 0);
    assert_ptr_equal(r3, r2);
    tc_rcache_put(c, r3);
    /* The last byte of one and the first of the other: neither covers. */
    assert_int_equal(tc_rcache_find(c, a + 2 * page - 1, 2, &r3), -ENOENT);
    /* Invalidating one page of r2 leaves r1 alone. */
    tc_rcache_put(c, r2);
    assert_int_equal(tc_rcache_invalidate(c, a + 2 * page, 1), 1);
    assert_int_equal(tc_rcache_find(c, a, 1, &r3), 0);
    assert_ptr_equal(r3, r1);
    tc_rcache_put(c, r3);
    tc_rcache_put(c, r1);
    finish(c, &m, a, 8);
}

/* Count bound: the least recently used unused registrations go first. */
static void test_eviction_count(void **state)
{
    mock_t m;
    tc_rcache_t *c = make_cache(&m, 3, 0);
    uint8_t *a = arena(20);
    tc_rcache_reg_t *r[5], *t;
    tc_rcache_stats_t st;
    (void) state;

    for (int i = 0; i < 5; i++) {
        /* Gaps between them so that nothing merges. */
        assert_int_equal(tc_rcache_get(c, a + 2 * i * page, page, &r[i]), 0);
    }
    /* In use: nothing can be evicted, whatever the bound. */
    assert_int_equal(m.live, 5);
    for (int i = 0; i < 5; i++) {
        tc_rcache_put(c, r[i]);
    }
    /* Put order 0..4: 0 and 1 are the oldest. */
    assert_int_equal(m.live, 3);
    assert_int_equal(tc_rcache_find(c, a, 1, &t), -ENOENT);
    assert_int_equal(tc_rcache_find(c, a + 2 * page, 1, &t), -ENOENT);
    /* Touch 2, then add a new one: 3 is now the oldest and goes. */
    assert_int_equal(tc_rcache_find(c, a + 4 * page, 1, &t), 0);
    tc_rcache_put(c, t);
    assert_int_equal(tc_rcache_get(c, a + 12 * page, page, &t), 0);
    tc_rcache_put(c, t);
    assert_int_equal(tc_rcache_find(c, a + 6 * page, 1, &t), -ENOENT);
    assert_int_equal(tc_rcache_find(c, a + 4 * page, 1, &t), 0);
    tc_rcache_put(c, t);
    tc_rcache_get_stats(c, &st);
    assert_int_equal(st.unused, 3);
    assert_int_equal(st.evictions, 3);
    assert_int_equal(m.live, 3);
    tc_rcache_flush(c);
    assert_int_equal(m.live, 0);
    finish(c, &m, a, 20);
}

/* Byte bound: unused registrations never exceed it. */
static void test_eviction_bytes(void **state)
{
    mock_t m;
    tc_rcache_t *c = make_cache(&m, 0, 5 * page);
    uint8_t *a = arena(40);
    tc_rcache_reg_t *r;
    tc_rcache_stats_t st;
    (void) state;

    for (int i = 0; i < 8; i++) {
        /* Registrations of 1, 2, 3, 1, 2, 3 ... pages, 5 pages apart. */
        assert_int_equal(tc_rcache_get(c, a + 5 * i * page, (size_t) (i % 3 + 1) * page, &r), 0);
        tc_rcache_put(c, r);
        tc_rcache_get_stats(c, &st);
        assert_true(st.unused_bytes <= 5 * page);
    }
    /* Sizes 1,2,3,1,2,3,1,2 pages: at the end 6 (1 page) and 7 (2 pages)
     * fit, and 5 (3 pages) was evicted to make room for 7. */
    tc_rcache_get_stats(c, &st);
    assert_int_equal(st.unused_bytes, 3 * page);
    assert_int_equal(tc_rcache_find(c, a + 35 * page, 1, &r), 0);
    tc_rcache_put(c, r);
    assert_int_equal(tc_rcache_find(c, a + 30 * page, 1, &r), 0);
    tc_rcache_put(c, r);
    assert_int_equal(tc_rcache_find(c, a + 25 * page, 1, &r), -ENOENT);
    /* A registration larger than the bound is not kept once unused. */
    assert_int_equal(tc_rcache_get(c, a, 6 * page, &r), 0);
    tc_rcache_put(c, r);
    tc_rcache_get_stats(c, &st);
    assert_true(st.unused_bytes <= 5 * page);
    assert_int_equal(tc_rcache_find(c, a, 1, &r), -ENOENT);
    finish(c, &m, a, 40);
}

/* What Open MPI's release hook does: report the range, then unmap. */
static tc_rcache_t *hooked_cache;
static int test_munmap(void *addr, size_t len)
{
    tc_rcache_invalidate(hooked_cache, addr, len);
    return munmap(addr, len);
}

static void test_invalidate_by_munmap(void **state)
{
    mock_t m;
    tc_rcache_t *c = make_cache(&m, 0, 0);
    uint8_t *a = arena(4), *b = arena(4);
    tc_rcache_reg_t *r;
    tc_rcache_stats_t st;
    (void) state;

    hooked_cache = c;
    assert_int_equal(tc_rcache_get(c, a, 4 * page, &r), 0);
    memset(a, 0x5a, 4 * page);
    tc_rcache_put(c, r);
    assert_int_equal(tc_rcache_get(c, b, page, &r), 0);
    tc_rcache_put(c, r);
    /* Unmap only the middle of a: the whole registration goes. */
    assert_int_equal(test_munmap(a + page, page), 0);
    tc_rcache_get_stats(c, &st);
    assert_int_equal(st.invalidations, 1);
    assert_int_equal(st.cached, 1);
    assert_int_equal(tc_rcache_find(c, a, 1, &r), -ENOENT);
    assert_int_equal(tc_rcache_find(c, a + 3 * page, 1, &r), -ENOENT);
    /* find() collected the pending deregistration. */
    assert_int_equal(m.dereg_calls, 1);
    assert_int_equal(m.live, 1);
    /* Unrelated memory stays cached. */
    assert_int_equal(tc_rcache_find(c, b, page, &r), 0);
    tc_rcache_put(c, r);
    /* New memory at a recycled address is registered afresh. */
    assert_int_equal(test_munmap(b, 4 * page), 0);
    tc_rcache_release_pending(c);
    assert_int_equal(m.live, 0);
    b = mmap(b, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(MAP_FAILED != b);
    assert_int_equal(tc_rcache_get(c, b, page, &r), 0);
    assert_int_equal(m.reg_calls, 3);
    tc_rcache_put(c, r);
    assert_int_equal(tc_rcache_destroy(c), 0);
    assert_int_equal(m.live, 0);
    munmap(a, page);
    munmap(a + 2 * page, 2 * page);
    munmap(b, page);
}

/* The range is unmapped while get() registers it, before it had any
 * registration (nothing to detach): the registration made of the old
 * mapping must not be cached or returned. */
static void test_invalidate_during_registration(void **state)
{
    mock_t m;
    tc_rcache_t *c = make_cache(&m, 0, 0);
    uint8_t *a = arena(2);
    tc_rcache_reg_t *r;
    (void) state;

    m.unmap_cache = c;
    m.unmap_next = 1;
    assert_int_equal(tc_rcache_get(c, a, page, &r), 0);
    /* the first registration was thrown away, the second one kept */
    assert_int_equal(m.reg_calls, 2);
    assert_int_equal(m.dereg_calls, 1);
    assert_int_equal(m.live, 1);
    tc_rcache_put(c, r);
    finish(c, &m, a, 2);
}

/* Invalidated while in use: never returned again, deregistered only when
 * the last reference drops. */
static void test_invalidate_in_use(void **state)
{
    mock_t m;
    tc_rcache_t *c = make_cache(&m, 0, 0);
    uint8_t *a = arena(4);
    tc_rcache_reg_t *r1, *r2, *r3;
    tc_rcache_stats_t st;
    (void) state;

    assert_int_equal(tc_rcache_get(c, a, 2 * page, &r1), 0);
    tc_rcache_retain(c, r1);
    r2 = r1;
    assert_int_equal(tc_rcache_invalidate(c, a, page), 1);
    tc_rcache_release_pending(c);
    assert_true(tc_rcache_reg_is_stale(r1));
    assert_int_equal(m.dereg_calls, 0);
    assert_int_equal(tc_rcache_find(c, a, page, &r3), -ENOENT);
    /* A new get registers anew instead of reusing the stale one. */
    assert_int_equal(tc_rcache_get(c, a, page, &r3), 0);
    assert_ptr_not_equal(r3, r1);
    assert_int_equal(m.live, 2);
    /* Invalidating again does not touch the stale one twice. */
    assert_int_equal(tc_rcache_invalidate(c, a, 4 * page), 1);
    tc_rcache_put(c, r1);
    assert_int_equal(m.dereg_calls, 0);
    tc_rcache_put(c, r2);
    assert_int_equal(m.dereg_calls, 1);
    tc_rcache_put(c, r3);
    assert_int_equal(m.dereg_calls, 2);
    tc_rcache_get_stats(c, &st);
    assert_int_equal(st.zombies, 0);
    assert_int_equal(st.cached, 0);
    assert_int_equal(m.live, 0);
    /* destroy() reports references still held. */
    assert_int_equal(tc_rcache_get(c, a, page, &r1), 0);
    assert_int_equal(tc_rcache_destroy(c), 1);
    assert_int_equal(m.live, 0);
    munmap(a, 4 * page);
}

/* Registration failure: evict unused registrations and retry once. */
static void test_provider_failure(void **state)
{
    mock_t m;
    tc_rcache_t *c = make_cache(&m, 0, 0);
    uint8_t *a = arena(8);
    tc_rcache_reg_t *r;
    (void) state;

    assert_int_equal(tc_rcache_get(c, a + 4 * page, page, &r), 0);
    tc_rcache_put(c, r);
    m.fail_next = 1;
    assert_int_equal(tc_rcache_get(c, a, page, &r), 0);
    /* The unused registration was flushed to make room. */
    assert_int_equal(m.live, 1);
    tc_rcache_put(c, r);
    m.fail_next = 2;
    assert_int_equal(tc_rcache_get(c, a + 2 * page, page, &r), -ENOMEM);
    assert_int_equal(m.live, 0);
    finish(c, &m, a, 8);
}

/* Random gets, puts and invalidations: every registration handed out
 * covers its request and is live at the provider, and the cache's tree
 * always agrees with the provider's view. */
static void test_random_workload(void **state)
{
    enum { PAGES = 256, HELD = 32 };
    mock_t *m = malloc(sizeof(*m));
    tc_rcache_t *c = make_cache(m, 8, 40 * page);
    uint8_t *a = arena(PAGES);
    tc_rcache_reg_t *held[HELD] = {0};
    tc_rcache_stats_t st;
    (void) state;

    srand(12345);
    for (int step = 0; step < 20000; step++) {
        int k = rand() % HELD;
        int op = rand() % 10;
        if (op < 6) {
            size_t off = (size_t) (rand() % (PAGES * (int) page - 1));
            size_t len = 1 + (size_t) (rand() % (8 * (int) page));
            if (off + len > PAGES * page) {
                len = PAGES * page - off;
            }
            if (NULL != held[k]) {
                tc_rcache_put(c, held[k]);
                held[k] = NULL;
            }
            assert_int_equal(tc_rcache_get(c, a + off, len, &held[k]), 0);
            assert_true(held[k]->base <= (uintptr_t) a + off);
            assert_true(held[k]->base + held[k]->len >= (uintptr_t) a + off + len);
            assert_true(((mock_reg_t *) held[k]->handle)->live);
        } else if (op < 9) {
            if (NULL != held[k]) {
                tc_rcache_put(c, held[k]);
                held[k] = NULL;
            }
        } else {
            size_t off = (size_t) (rand() % PAGES) * page;
            tc_rcache_invalidate(c, a + off, page * (size_t) (1 + rand() % 4));
        }
        /* Live at the provider = in the tree + zombies (+ garbage, which
         * every call but invalidate collects). */
        tc_rcache_release_pending(c);
        tc_rcache_get_stats(c, &st);
        assert_int_equal((size_t) m->live, st.cached + st.zombies);
        assert_true(st.unused <= 8);
        assert_true(st.unused_bytes <= 40 * page);
    }
    for (int k = 0; k < HELD; k++) {
        if (NULL != held[k]) {
            tc_rcache_put(c, held[k]);
        }
    }
    finish(c, m, a, PAGES);
    free(m);
}

/* Two threads share a cache: gets, puts and invalidations race. The
 * provider counts live registrations under its own lock; at the end every
 * registration is gone and no handed-out registration ever failed to
 * cover its request (checked in the threads, reported here). */
typedef struct mt_ctx {
    pthread_mutex_t lock;
    int live;
    int bad;
} mt_ctx_t;

typedef struct mt_arg {
    tc_rcache_t *cache;
    mt_ctx_t *ctx;
    uint8_t *base;
    size_t pages;
    unsigned seed;
} mt_arg_t;

static int mt_reg(void *ctx, void *base, size_t len, void **handle)
{
    mt_ctx_t *m = ctx;
    (void) base;
    (void) len;
    pthread_mutex_lock(&m->lock);
    m->live++;
    pthread_mutex_unlock(&m->lock);
    *handle = NULL;
    return 0;
}

static int mt_dereg(void *ctx, void *base, size_t len, void *handle)
{
    mt_ctx_t *m = ctx;
    (void) base;
    (void) len;
    (void) handle;
    pthread_mutex_lock(&m->lock);
    m->live--;
    pthread_mutex_unlock(&m->lock);
    return 0;
}

static void *mt_worker(void *p)
{
    mt_arg_t *a = p;
    tc_rcache_reg_t *held[8] = {0};

    for (int step = 0; step < 5000; step++) {
        int k = rand_r(&a->seed) % 8;
        int op = rand_r(&a->seed) % 10;
        if (NULL != held[k]) {
            tc_rcache_put(a->cache, held[k]);
            held[k] = NULL;
        }
        if (op < 7) {
            size_t off = (size_t) rand_r(&a->seed) % (a->pages * page - 1);
            size_t len = 1 + (size_t) rand_r(&a->seed) % (4 * page);
            if (off + len > a->pages * page) {
                len = a->pages * page - off;
            }
            if (0 != tc_rcache_get(a->cache, a->base + off, len, &held[k]) ||
                held[k]->base > (uintptr_t) a->base + off ||
                held[k]->base + held[k]->len < (uintptr_t) a->base + off + len) {
                tc_atomic_fetch_add_relaxed(&a->ctx->bad, 1);
                held[k] = NULL;
            }
        } else if (op < 9) {
            size_t off = ((size_t) rand_r(&a->seed) % a->pages) * page;
            tc_rcache_invalidate(a->cache, a->base + off, page);
        }
    }
    for (int k = 0; k < 8; k++) {
        if (NULL != held[k]) {
            tc_rcache_put(a->cache, held[k]);
        }
    }
    return NULL;
}

static void test_two_threads(void **state)
{
    mt_ctx_t ctx = {.lock = PTHREAD_MUTEX_INITIALIZER};
    tc_rcache_params_t p = {
        .provider = {.reg = mt_reg, .dereg = mt_dereg, .ctx = &ctx},
        .max_unused_count = 16,
    };
    tc_rcache_t *c = tc_rcache_create(&p);
    uint8_t *a = arena(64);
    pthread_t th[2];
    mt_arg_t args[2];
    tc_rcache_stats_t st;
    (void) state;

    for (int i = 0; i < 2; i++) {
        args[i] =
            (mt_arg_t){.cache = c, .ctx = &ctx, .base = a, .pages = 64, .seed = 17u + (unsigned) i};
        assert_int_equal(pthread_create(&th[i], NULL, mt_worker, &args[i]), 0);
    }
    for (int i = 0; i < 2; i++) {
        assert_int_equal(pthread_join(th[i], NULL), 0);
    }
    assert_int_equal(ctx.bad, 0);
    tc_rcache_release_pending(c);
    tc_rcache_get_stats(c, &st);
    assert_int_equal(st.zombies, 0);
    assert_int_equal((size_t) ctx.live, st.cached);
    assert_true(st.unused <= 16);
    assert_int_equal(tc_rcache_destroy(c), 0);
    assert_int_equal(ctx.live, 0);
    munmap(a, 64 * page);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_create_rejects_bad_params),
        cmocka_unit_test(test_hit_miss_refcount),
        cmocka_unit_test(test_overlap_growth),
        cmocka_unit_test(test_adjacent_ranges),
        cmocka_unit_test(test_eviction_count),
        cmocka_unit_test(test_eviction_bytes),
        cmocka_unit_test(test_invalidate_by_munmap),
        cmocka_unit_test(test_invalidate_during_registration),
        cmocka_unit_test(test_invalidate_in_use),
        cmocka_unit_test(test_provider_failure),
        cmocka_unit_test(test_random_workload),
        cmocka_unit_test(test_two_threads),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
