/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_sci_guard.c: btl_sci's progress guard under threads, checked by
 * ThreadSanitizer (this program and the component sources in it are built
 * with -fsanitize=thread; a report makes it exit non-zero). Two threads
 * call the component's progress many times on a hand-made component state
 * (one peer, connecting, no device); every call that takes the guard
 * writes the component's state (the progress-call count, the sweep it
 * starts). The guard must be taken with an acquire and given back with a
 * release (tc_guard_t): with a relaxed swap, a write barrier and a plain
 * store no ordering joins one holder's writes to the next holder's, which
 * the sanitizer reports.
 */

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "btl_sci.h"
#include "btl_sci_endpoint.h"

#define SCI_GUARD_CALLS 100000

static void *sci_guard_thread(void *arg)
{
    (void) arg;
    for (int i = 0; i < SCI_GUARD_CALLS; ++i) {
        (void) mca_btl_sci_component_progress();
    }
    return NULL;
}

static void test_sci_guard_two_threads(void **state)
{
    mca_btl_sci_component_t *c = &mca_btl_sci_component;
    uint64_t bell = 0; /* our doorbell: nobody rings */
    mca_btl_sci_endpoint_t *eps = calloc(2, sizeof(*eps));
    mca_btl_sci_endpoint_t *conn[2] = {NULL, NULL}, *sweep[2] = {NULL, NULL};
    pthread_t t[2];

    (void) state;
    assert_non_null(eps);
    OBJ_CONSTRUCT(&c->pending_endpoints, opal_list_t);
    tc_ompi_done_list_construct(&c->completed_frags);
    OBJ_CONSTRUCT(&c->lock, opal_mutex_t);
    c->doorbell = (uint8_t *) &bell;
    c->running = true;
    c->local_rank = 0;
    c->num_local = 2;
    c->endpoints = eps;
    c->connected = conn;
    c->sweep = sweep;
    c->num_connected = c->num_active = c->num_unconnected = 0;
    c->sweep_interval = 16;
    c->progress_calls = 0;
    c->output = -1;
    for (int i = 0; i < 2; ++i) {
        OBJ_CONSTRUCT(&eps[i], mca_btl_sci_endpoint_t);
        eps[i].peer_rank = i;
        eps[i].module = &mca_btl_sci_module;
    }
    eps[1].state = MCA_BTL_SCI_EP_CONNECTING;

    opal_set_using_threads(true);
    for (int i = 0; i < 2; ++i) {
        assert_int_equal(0, pthread_create(&t[i], NULL, sci_guard_thread, NULL));
    }
    for (int i = 0; i < 2; ++i) {
        assert_int_equal(0, pthread_join(t[i], NULL));
    }
    opal_set_using_threads(false);
    /* every call that held the guard counted once, none twice */
    assert_true(c->progress_calls > 0);
    assert_true(c->progress_calls <= 2u * SCI_GUARD_CALLS);

    OBJ_DESTRUCT(&c->pending_endpoints);
    c->doorbell = NULL;
    c->running = false;
    c->endpoints = NULL;
    c->connected = c->sweep = NULL;
    free(eps);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sci_guard_two_threads),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
