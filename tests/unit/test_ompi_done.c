/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_ompi_done.c: the completed-fragments list (tc_ompi_done_list_t)
 * under threads: producers push while one consumer pops (as sends
 * complete on any thread while progress delivers); every item comes out
 * exactly once and each producer's items in the order pushed; drain
 * hands every item in order.
 */

#include "opal_config.h"

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tc_ompi.h"

#define DONE_PRODUCERS 4
#define DONE_PER_PRODUCER 20000

typedef struct done_item {
    opal_list_item_t super;
    int producer;
    int seq;
} done_item_t;

typedef struct done_producer {
    tc_ompi_done_list_t *list;
    done_item_t *items;
} done_producer_t;

static void *done_producer_main(void *arg)
{
    done_producer_t *p = arg;

    for (int i = 0; i < DONE_PER_PRODUCER; ++i) {
        tc_ompi_done_list_push(p->list, &p->items[i].super);
    }
    return NULL;
}

static void test_done_list_single_thread(void **state)
{
    tc_ompi_done_list_t d;
    done_item_t it[3];

    (void) state;
    tc_ompi_done_list_construct(&d);
    assert_true(tc_ompi_done_list_empty(&d));
    assert_null(tc_ompi_done_list_pop(&d));
    for (int i = 0; i < 3; ++i) {
        OBJ_CONSTRUCT(&it[i].super, opal_list_item_t);
        tc_ompi_done_list_push(&d, &it[i].super);
    }
    assert_false(tc_ompi_done_list_empty(&d));
    for (int i = 0; i < 3; ++i) {
        assert_ptr_equal(tc_ompi_done_list_pop(&d), &it[i].super);
    }
    assert_null(tc_ompi_done_list_pop(&d));
    assert_true(tc_ompi_done_list_empty(&d));
    for (int i = 0; i < 3; ++i) {
        OBJ_DESTRUCT(&it[i].super);
    }
    tc_ompi_done_list_destruct(&d);
}

static opal_list_item_t *drained[4];
static int ndrained;

static void done_drain_one(opal_list_item_t *item)
{
    assert_true(ndrained < 4);
    drained[ndrained++] = item;
}

/* drain hands every item, oldest first, and counts them */
static void test_done_list_drain(void **state)
{
    tc_ompi_done_list_t d;
    done_item_t it[3];

    (void) state;
    tc_ompi_done_list_construct(&d);
    ndrained = 0;
    assert_int_equal(tc_ompi_done_list_drain(&d, done_drain_one), 0);
    for (int i = 0; i < 3; ++i) {
        OBJ_CONSTRUCT(&it[i].super, opal_list_item_t);
        tc_ompi_done_list_push(&d, &it[i].super);
    }
    assert_int_equal(tc_ompi_done_list_drain(&d, done_drain_one), 3);
    assert_int_equal(ndrained, 3);
    for (int i = 0; i < 3; ++i) {
        assert_ptr_equal(drained[i], &it[i].super);
        OBJ_DESTRUCT(&it[i].super);
    }
    assert_true(tc_ompi_done_list_empty(&d));
    tc_ompi_done_list_destruct(&d);
}

static void test_done_list_threads(void **state)
{
    tc_ompi_done_list_t d;
    done_producer_t prod[DONE_PRODUCERS];
    pthread_t tid[DONE_PRODUCERS];
    int next[DONE_PRODUCERS] = {0};
    long got = 0;

    (void) state;
    opal_set_using_threads(true);
    tc_ompi_done_list_construct(&d);
    for (int p = 0; p < DONE_PRODUCERS; ++p) {
        prod[p].list = &d;
        prod[p].items = calloc(DONE_PER_PRODUCER, sizeof(done_item_t));
        assert_non_null(prod[p].items);
        for (int i = 0; i < DONE_PER_PRODUCER; ++i) {
            OBJ_CONSTRUCT(&prod[p].items[i].super, opal_list_item_t);
            prod[p].items[i].producer = p;
            prod[p].items[i].seq = i;
        }
    }
    for (int p = 0; p < DONE_PRODUCERS; ++p) {
        assert_int_equal(pthread_create(&tid[p], NULL, done_producer_main, &prod[p]), 0);
    }
    /* the consumer, racing with the producers */
    while (got < (long) DONE_PRODUCERS * DONE_PER_PRODUCER) {
        done_item_t *it = (done_item_t *) tc_ompi_done_list_pop(&d);

        if (NULL == it) {
            continue;
        }
        assert_in_range(it->producer, 0, DONE_PRODUCERS - 1);
        /* once each, in the producer's order */
        assert_int_equal(it->seq, next[it->producer]);
        ++next[it->producer];
        ++got;
    }
    for (int p = 0; p < DONE_PRODUCERS; ++p) {
        assert_int_equal(pthread_join(tid[p], NULL), 0);
        assert_int_equal(next[p], DONE_PER_PRODUCER);
    }
    assert_null(tc_ompi_done_list_pop(&d));
    assert_true(tc_ompi_done_list_empty(&d));
    tc_ompi_done_list_destruct(&d);
    for (int p = 0; p < DONE_PRODUCERS; ++p) {
        for (int i = 0; i < DONE_PER_PRODUCER; ++i) {
            OBJ_DESTRUCT(&prod[p].items[i].super);
        }
        free(prod[p].items);
    }
    opal_set_using_threads(false);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_done_list_single_thread),
        cmocka_unit_test(test_done_list_drain),
        cmocka_unit_test(test_done_list_threads),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
