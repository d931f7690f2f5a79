/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_common_hash.c: unit tests of tc_hash (64-bit keys) and tc_list:
 * random inserts, replacements and removals checked against a reference
 * array, growth, key 0 and all-ones keys, iteration, and FIFO order.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tc_hash.h"
#include "tc_list.h"

static void test_hash_basic(void **state)
{
    tc_hash_t h;
    void *v;
    int a, b;
    (void) state;

    assert_int_equal(tc_hash_init(&h, 0), 0);
    assert_false(tc_hash_get(&h, 0, &v));
    assert_int_equal(tc_hash_put(&h, 0, &a), 0);
    assert_int_equal(tc_hash_put(&h, UINT64_MAX, &b), 0);
    assert_true(tc_hash_get(&h, 0, &v));
    assert_ptr_equal(v, &a);
    assert_true(tc_hash_get(&h, UINT64_MAX, &v));
    assert_ptr_equal(v, &b);
    /* Replace keeps the count. */
    assert_int_equal(tc_hash_put(&h, 0, &b), 0);
    assert_int_equal(tc_hash_count(&h), 2);
    assert_true(tc_hash_get(&h, 0, &v));
    assert_ptr_equal(v, &b);
    assert_true(tc_hash_remove(&h, 0, &v));
    assert_ptr_equal(v, &b);
    assert_false(tc_hash_remove(&h, 0, NULL));
    assert_int_equal(tc_hash_count(&h), 1);
    tc_hash_fini(&h);
    /* A finalised (or zeroed) map is usable again: put initialises. */
    assert_false(tc_hash_get(&h, 5, NULL));
    assert_int_equal(tc_hash_put(&h, 5, &a), 0);
    assert_true(tc_hash_get(&h, 5, NULL));
    tc_hash_fini(&h);
}

static void test_hash_random_vs_reference(void **state)
{
    enum { KEYS = 3000 };
    tc_hash_t h;
    uint64_t *keys = malloc(KEYS * sizeof(*keys));
    int *present = calloc(KEYS, sizeof(*present));
    size_t count = 0;
    (void) state;

    assert_int_equal(tc_hash_init(&h, 4), 0);
    srand(777);
    for (int i = 0; i < KEYS; i++) {
        /* Sequential ids mixed with clustered and wild ones. */
        keys[i] = (i % 3 == 0) ? (uint64_t) i
            : (i % 3 == 1)     ? ((uint64_t) i << 32)
                               : ((uint64_t) rand() << 20) ^ (uint64_t) i;
    }
    for (int step = 0; step < 100000; step++) {
        int k = rand() % KEYS;
        void *v;
        if (rand() % 3) {
            assert_int_equal(tc_hash_put(&h, keys[k], &present[k]), 0);
            if (!present[k]) {
                present[k] = 1;
                count++;
            }
        } else {
            bool had = tc_hash_remove(&h, keys[k], &v);
            assert_int_equal(had, present[k]);
            if (had) {
                assert_ptr_equal(v, &present[k]);
                present[k] = 0;
                count--;
            }
        }
        assert_int_equal(tc_hash_count(&h), count);
        if (0 == step % 10000) {
            for (int j = 0; j < KEYS; j++) {
                assert_int_equal(tc_hash_get(&h, keys[j], &v), present[j]);
                if (present[j]) {
                    assert_ptr_equal(v, &present[j]);
                }
            }
        }
    }
    /* Iteration visits every key once. */
    {
        size_t pos = 0, seen = 0;
        uint64_t key;
        void *v;
        while (tc_hash_next(&h, &pos, &key, &v)) {
            int *p = v;
            assert_int_equal(*p, 1);
            assert_int_equal(keys[p - present], key);
            seen++;
        }
        assert_int_equal(seen, count);
    }
    tc_hash_fini(&h);
    free(keys);
    free(present);
}

typedef struct item {
    tc_list_item_t link;
    int id;
} item_t;

static void test_list_fifo(void **state)
{
    tc_list_t l;
    item_t it[5];
    tc_list_item_t *p, *tmp;
    int expect = 0;
    (void) state;

    tc_list_init(&l);
    assert_true(tc_list_is_empty(&l));
    assert_null(tc_list_pop_front(&l));
    for (int i = 0; i < 5; i++) {
        it[i].id = i;
        tc_list_item_init(&it[i].link);
        tc_list_append(&l, &it[i].link);
    }
    assert_int_equal(tc_list_size(&l), 5);
    assert_ptr_equal(tc_list_last(&l), &it[4].link);
    /* Remove the odd ones while iterating. */
    TC_LIST_FOREACH_SAFE(p, tmp, &l)
    {
        if (TC_CONTAINER_OF(p, item_t, link)->id % 2) {
            tc_list_remove(&l, p);
        }
    }
    tc_list_prepend(&l, &it[3].link);
    assert_ptr_equal(tc_list_next(&l, tc_list_first(&l)), &it[0].link);
    assert_int_equal(TC_CONTAINER_OF(tc_list_pop_front(&l), item_t, link)->id, 3);
    while (NULL != (p = tc_list_pop_front(&l))) {
        assert_int_equal(TC_CONTAINER_OF(p, item_t, link)->id, expect);
        expect += 2;
    }
    assert_int_equal(expect, 6);
    assert_int_equal(tc_list_size(&l), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hash_basic),
        cmocka_unit_test(test_hash_random_vs_reference),
        cmocka_unit_test(test_list_fifo),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
