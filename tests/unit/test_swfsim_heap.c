/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_swfsim_heap.c: the simulator's event queue: events come out in
 * time order, events with equal times in insertion order, and the queue
 * survives growth and interleaved pushes and pops.
 */

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <cmocka.h>

#include "swfsim.h"

static void push(swfsim_heap_t *h, uint64_t t, uint32_t tag)
{
    swfsim_event_t ev = {.time = t, .type = SWFSIM_EV_CMD, .node = tag};
    assert_int_equal(swfsim_heap_push(h, &ev), 0);
}

static void test_empty(void **state)
{
    swfsim_heap_t h;
    swfsim_event_t ev;

    (void) state;
    swfsim_heap_init(&h);
    assert_null(swfsim_heap_top(&h));
    assert_int_equal(swfsim_heap_pop(&h, &ev), -1);
    swfsim_heap_fini(&h);
}

static void test_order(void **state)
{
    static const uint64_t times[] = {50, 10, 40, 10, 30, 20, 0, 99, 20, 10};
    swfsim_heap_t h;
    swfsim_event_t ev;
    uint64_t last = 0;

    (void) state;
    swfsim_heap_init(&h);
    for (uint32_t i = 0; i < 10; i++) {
        push(&h, times[i], i);
    }
    assert_int_equal(swfsim_heap_top(&h)->time, 0);
    for (int i = 0; i < 10; i++) {
        assert_int_equal(swfsim_heap_pop(&h, &ev), 0);
        assert_true(ev.time >= last);
        last = ev.time;
    }
    assert_int_equal(h.len, 0);
    swfsim_heap_fini(&h);
}

static void test_ties_stable(void **state)
{
    swfsim_heap_t h;
    swfsim_event_t ev;

    (void) state;
    swfsim_heap_init(&h);
    /* 300 events at three times, pushed interleaved */
    for (uint32_t i = 0; i < 300; i++) {
        push(&h, (uint64_t) (i % 3) * 100, i);
    }
    for (uint64_t t = 0; t < 3; t++) {
        uint32_t prev = 0;
        for (int k = 0; k < 100; k++) {
            assert_int_equal(swfsim_heap_pop(&h, &ev), 0);
            assert_int_equal(ev.time, t * 100);
            assert_int_equal(ev.node % 3, t);
            if (k > 0) {
                assert_true(ev.node > prev); /* insertion order kept */
            }
            prev = ev.node;
        }
    }
    swfsim_heap_fini(&h);
}

static void test_random_interleaved(void **state)
{
    swfsim_heap_t h;
    swfsim_event_t ev;
    uint32_t x = 7;
    uint64_t now = 0;
    size_t count = 0;

    (void) state;
    swfsim_heap_init(&h);
    /* a simulation-like pattern: pop the earliest, push later ones */
    for (int i = 0; i < 20000; i++) {
        x = x * 1664525u + 1013904223u;
        if (0 == count || (x >> 16) % 3 != 0) {
            push(&h, now + (x >> 20) % 1000, (uint32_t) i);
            count++;
        } else {
            assert_int_equal(swfsim_heap_pop(&h, &ev), 0);
            assert_true(ev.time >= now);
            now = ev.time;
            count--;
        }
    }
    while (0 == swfsim_heap_pop(&h, &ev)) {
        assert_true(ev.time >= now);
        now = ev.time;
        count--;
    }
    assert_int_equal(count, 0);
    swfsim_heap_fini(&h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_order),
        cmocka_unit_test(test_ties_stable),
        cmocka_unit_test(test_random_interleaved),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
