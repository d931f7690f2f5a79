/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_sctp_pool.c: unit tests of btl/sctp's pool allocator.
 *
 * Every size class with patterned blocks (no block overlaps another or
 * loses data), reuse after free, calloc on a reused block, realloc
 * within and across classes, blocks from glibc passed to the pool's
 * free, a block freed by another thread, and the redirection of
 * usrsctp's allocations: installed into the linked libusrsctp, a stack
 * opened, used and closed on top of it, and refused for a library that
 * is not loaded.
 */
#include "tc_config.h"

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_pattern.h"

#include "btl_sctp_pool.h"

#if TC_HAVE_USRSCTP
#include <usrsctp.h>
#endif

/* Many live blocks of every size up to the largest class, each filled
 * with its own pattern, all verified before any is freed. */
static void test_patterns_all_sizes(void **state)
{
    enum { N = 600 };
    unsigned char *b[N];
    size_t len[N];
    (void) state;

    for (int i = 0; i < N; ++i) {
        len[i] = 1 + ((size_t) i * 2654435761u) % 65536;
        if (i < 40) {
            len[i] = (size_t) 1 << (i % 17); /* the exact powers of two too */
        }
        b[i] = btl_sctp_pool_malloc(len[i]);
        assert_non_null(b[i]);
        assert_true(btl_sctp_pool_owns(b[i]));
        assert_int_equal(0, (uintptr_t) b[i] % 16);
        test_pattern_fill(b[i], len[i], (unsigned) i);
    }
    for (int i = 0; i < N; ++i) {
        assert_true(test_pattern_check(b[i], len[i], (unsigned) i));
    }
    for (int i = 0; i < N; ++i) {
        btl_sctp_pool_free(b[i]);
    }
    assert_true(btl_sctp_pool_reserved_bytes() > 0);
}

/* A freed block is handed out again for its class; calloc zeroes it. */
static void test_reuse_and_calloc(void **state)
{
    unsigned char *a, *b, *c;
    (void) state;

    a = btl_sctp_pool_malloc(2048);
    assert_non_null(a);
    memset(a, 0xa5, 2048);
    btl_sctp_pool_free(a);
    b = btl_sctp_pool_malloc(2000); /* same class */
    assert_ptr_equal(a, b);
    btl_sctp_pool_free(b);
    c = btl_sctp_pool_calloc(16, 128);
    assert_ptr_equal(a, c);
    for (size_t i = 0; i < 2048; ++i) {
        assert_int_equal(0, c[i]);
    }
    btl_sctp_pool_free(c);
    assert_null(btl_sctp_pool_calloc(SIZE_MAX / 2, 4)); /* overflow refused */
}

static void test_pool_realloc(void **state)
{
    unsigned char *p, *q;
    (void) state;

    p = btl_sctp_pool_realloc(NULL, 100);
    assert_non_null(p);
    test_pattern_fill(p, 100, 7);
    q = btl_sctp_pool_realloc(p, 120); /* still within its 128-byte class */
    assert_ptr_equal(p, q);
    q = btl_sctp_pool_realloc(p, 5000);
    assert_non_null(q);
    assert_true(btl_sctp_pool_owns(q));
    assert_true(test_pattern_check(q, 100, 7));
    p = btl_sctp_pool_realloc(q, 200000); /* beyond the classes: glibc */
    assert_non_null(p);
    assert_false(btl_sctp_pool_owns(p));
    assert_true(test_pattern_check(p, 100, 7));
    q = btl_sctp_pool_realloc(p, 300000); /* glibc to glibc */
    assert_non_null(q);
    assert_true(test_pattern_check(q, 100, 7));
    assert_null(btl_sctp_pool_realloc(q, 0)); /* frees */
}

/* Blocks larger than a run, and blocks glibc made, go back to glibc. */
static void test_glibc_blocks(void **state)
{
    unsigned char *big, *g;
    (void) state;

    big = btl_sctp_pool_malloc(65537);
    assert_non_null(big);
    assert_false(btl_sctp_pool_owns(big));
    test_pattern_fill(big, 65537, 3);
    assert_true(test_pattern_check(big, 65537, 3));
    btl_sctp_pool_free(big);
    g = malloc(64);
    assert_non_null(g);
    assert_false(btl_sctp_pool_owns(g));
    btl_sctp_pool_free(g); /* the redirected free takes glibc's blocks */
    btl_sctp_pool_free(NULL);
}

typedef struct xthread {
    unsigned char *block;
    unsigned char *again;
} xthread_t;

static void *free_elsewhere(void *arg)
{
    xthread_t *x = (xthread_t *) arg;
    btl_sctp_pool_free(x->block);
    x->again = btl_sctp_pool_malloc(3000); /* this thread's list has it now */
    return NULL;
}

static void test_cross_thread_free(void **state)
{
    xthread_t x;
    pthread_t t;
    (void) state;

    x.block = btl_sctp_pool_malloc(3000);
    assert_non_null(x.block);
    test_pattern_fill(x.block, 3000, 11);
    assert_int_equal(0, pthread_create(&t, NULL, free_elsewhere, &x));
    assert_int_equal(0, pthread_join(t, NULL));
    assert_ptr_equal(x.block, x.again);
    btl_sctp_pool_free(x.again);
}

/* One thread allocates, another frees (usrsctp's packets made by the
 * sending thread and freed by the one that drives progress): the blocks
 * must come back to the allocating thread, or the pool grows by a batch
 * every round. */
#define XPROD_ROUNDS 60
#define XPROD_BLOCKS 1024
#define XPROD_SIZE 2048

typedef struct xprod {
    void **blocks;
} xprod_t;

static void *free_batch(void *arg)
{
    xprod_t *x = (xprod_t *) arg;
    for (int i = 0; i < XPROD_BLOCKS; ++i) {
        btl_sctp_pool_free(x->blocks[i]);
    }
    return NULL;
}

static void test_producer_consumer_bounded(void **state)
{
    void *blocks[XPROD_BLOCKS];
    xprod_t x = {.blocks = blocks};
    size_t before, grown;
    (void) state;

    before = btl_sctp_pool_reserved_bytes();
    for (int r = 0; r < XPROD_ROUNDS; ++r) {
        pthread_t t;
        for (int i = 0; i < XPROD_BLOCKS; ++i) {
            blocks[i] = btl_sctp_pool_malloc(XPROD_SIZE);
            assert_non_null(blocks[i]);
            test_pattern_fill(blocks[i], XPROD_SIZE, (unsigned) (r * XPROD_BLOCKS + i));
        }
        for (int i = 0; i < XPROD_BLOCKS; ++i) {
            assert_true(
                test_pattern_check(blocks[i], XPROD_SIZE, (unsigned) (r * XPROD_BLOCKS + i)));
        }
        assert_int_equal(0, pthread_create(&t, NULL, free_batch, &x));
        assert_int_equal(0, pthread_join(t, NULL));
    }
    grown = btl_sctp_pool_reserved_bytes() - before;
    /* one round is 2 MiB; allow a few rounds' worth, not one per round */
    if (grown > (size_t) 4 * XPROD_BLOCKS * XPROD_SIZE) {
        fail_msg("the pool grew by %zu bytes over %d rounds of %d bytes", grown, XPROD_ROUNDS,
                 XPROD_BLOCKS * XPROD_SIZE);
    }
}

static void test_install_unknown_library(void **state)
{
    char why[160] = "";
    (void) state;
    if (btl_sctp_pool_installed()) {
        skip(); /* an earlier test installed it: the call would return 0 */
    }
    assert_int_equal(-ENOENT, btl_sctp_pool_install("libno-such-library", why, sizeof(why)));
    assert_non_null(strstr(why, "libno-such-library"));
    assert_false(btl_sctp_pool_installed());
}

#if TC_HAVE_USRSCTP
static int null_output(void *addr, void *buf, size_t len, uint8_t tos, uint8_t df)
{
    (void) addr;
    (void) buf;
    (void) len;
    (void) tos;
    (void) df;
    return 0;
}

/* usrsctp's allocations land in the pool once installed: a stack comes
 * up, sockets are made and closed, and it shuts down cleanly. */
static void test_install_usrsctp(void **state)
{
    char why[160] = "";
    size_t before;
    struct socket *so;
    /* usrsctp runs without threads here: its allocations count on ours */
    (void) state;

    assert_int_equal(0, btl_sctp_pool_install("libusrsctp", why, sizeof(why)));
    assert_true(btl_sctp_pool_installed());
    assert_int_equal(0, btl_sctp_pool_install("libusrsctp", why, sizeof(why))); /* again */
    before = btl_sctp_pool_thread_allocs();
    usrsctp_init_nothreads(0, null_output, NULL);
    for (int i = 0; i < 4; ++i) {
        so = usrsctp_socket(AF_CONN, SOCK_SEQPACKET, IPPROTO_SCTP, NULL, NULL, 0, NULL);
        assert_non_null(so);
        usrsctp_close(so);
    }
    for (int tries = 0; tries < 100 && 0 != usrsctp_finish(); ++tries) {
        usrsctp_handle_timers(10);
    }
    assert_true(btl_sctp_pool_thread_allocs() >= before + 4); /* a socket or more each */
}
#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_install_unknown_library),
        cmocka_unit_test(test_patterns_all_sizes),
        cmocka_unit_test(test_reuse_and_calloc),
        cmocka_unit_test(test_pool_realloc),
        cmocka_unit_test(test_glibc_blocks),
        cmocka_unit_test(test_cross_thread_free),
        cmocka_unit_test(test_producer_consumer_bounded),
#if TC_HAVE_USRSCTP
        cmocka_unit_test(test_install_usrsctp),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
