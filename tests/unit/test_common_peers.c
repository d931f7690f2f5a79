/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_common_peers.c: the peer table of common/tc_peers (own job by
 * vpid, other jobs appended): indexes, names back, limits, bad
 * arguments, and two threads adding the same names at once.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "tc_peers.h"

static void test_peers_own_job(void **state)
{
    tc_peers_t t;
    uint32_t idx = 99;
    uint64_t name = 0;

    (void) state;
    assert_int_equal(0, tc_peers_init(&t, 7, 4, 2));
    assert_int_equal(6, tc_peers_capacity(&t));
    assert_int_equal(0, tc_peers_index(&t, tc_peers_name(7, 3), false, &idx));
    assert_int_equal(3, idx);
    assert_int_equal(-ERANGE, tc_peers_index(&t, tc_peers_name(7, 4), true, &idx));
    assert_int_equal(0, tc_peers_name_of(&t, 2, &name));
    assert_true(tc_peers_name(7, 2) == name);
    assert_int_equal(-ENOENT, tc_peers_name_of(&t, 4, &name));
    tc_peers_fini(&t);
}

static void test_peers_other_jobs(void **state)
{
    tc_peers_t t;
    uint32_t idx = 0, again = 0;
    uint64_t name = 0;

    (void) state;
    assert_int_equal(0, tc_peers_init(&t, 7, 4, 2));
    /* not met and not added */
    assert_int_equal(-ENOENT, tc_peers_index(&t, tc_peers_name(8, 0), false, &idx));
    assert_int_equal(0, tc_peers_index(&t, tc_peers_name(8, 0), true, &idx));
    assert_int_equal(4, idx);
    /* the same vpid of another job is another process */
    assert_int_equal(0, tc_peers_index(&t, tc_peers_name(9, 0), true, &idx));
    assert_int_equal(5, idx);
    assert_int_equal(0, tc_peers_index(&t, tc_peers_name(8, 0), true, &again));
    assert_int_equal(4, again);
    assert_int_equal(0, tc_peers_index(&t, tc_peers_name(9, 0), false, &again));
    assert_int_equal(5, again);
    /* full */
    assert_int_equal(-ENOSPC, tc_peers_index(&t, tc_peers_name(8, 1), true, &idx));
    assert_int_equal(0, tc_peers_name_of(&t, 5, &name));
    assert_true(tc_peers_name(9, 0) == name);
    assert_int_equal(-ENOENT, tc_peers_name_of(&t, 6, &name));
    assert_int_equal(-ENOENT, tc_peers_name_of(&t, UINT32_MAX, &name));
    tc_peers_fini(&t);
    /* fini twice is harmless */
    tc_peers_fini(&t);
}

static void test_peers_bad_init(void **state)
{
    tc_peers_t t;
    uint32_t idx;

    (void) state;
    assert_int_equal(-EINVAL, tc_peers_init(&t, 1, 0, 4));
    tc_peers_fini(&t);
    assert_int_equal(-EINVAL, tc_peers_init(&t, 1, UINT32_MAX, 1));
    tc_peers_fini(&t);
    /* no room for other jobs: each is refused */
    assert_int_equal(0, tc_peers_init(&t, 1, 2, 0));
    assert_int_equal(-ENOSPC, tc_peers_index(&t, tc_peers_name(2, 0), true, &idx));
    tc_peers_fini(&t);
}

/* two threads add the same 64 names: each name gets one index, both
 * threads see the same one, and the 64 indexes are distinct */
#define PEERS_THREADED 64
typedef struct {
    tc_peers_t *t;
    uint32_t idx[PEERS_THREADED];
} peers_arg_t;

static void *peers_adder(void *p)
{
    peers_arg_t *a = p;

    for (uint32_t i = 0; i < PEERS_THREADED; ++i) {
        if (0 != tc_peers_index(a->t, tc_peers_name(100 + i % 3, i), true, &a->idx[i])) {
            a->idx[i] = UINT32_MAX;
        }
    }
    return NULL;
}

static void test_peers_threads(void **state)
{
    tc_peers_t t;
    peers_arg_t a = {.t = &t}, b = {.t = &t};
    pthread_t th;
    uint8_t seen[PEERS_THREADED + 8] = {0};

    (void) state;
    assert_int_equal(0, tc_peers_init(&t, 7, 8, PEERS_THREADED));
    assert_int_equal(0, pthread_create(&th, NULL, peers_adder, &a));
    peers_adder(&b);
    assert_int_equal(0, pthread_join(th, NULL));
    for (uint32_t i = 0; i < PEERS_THREADED; ++i) {
        uint64_t name = 0;

        assert_int_equal(a.idx[i], b.idx[i]);
        assert_true(a.idx[i] >= 8 && a.idx[i] < 8 + PEERS_THREADED);
        assert_int_equal(0, seen[a.idx[i]]);
        seen[a.idx[i]] = 1;
        assert_int_equal(0, tc_peers_name_of(&t, a.idx[i], &name));
        assert_true(tc_peers_name(100 + i % 3, i) == name);
    }
    tc_peers_fini(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_peers_own_job),
        cmocka_unit_test(test_peers_other_jobs),
        cmocka_unit_test(test_peers_bad_init),
        cmocka_unit_test(test_peers_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
