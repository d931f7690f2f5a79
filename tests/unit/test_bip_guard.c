/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_bip_guard.c: btl_bip's progress guard under threads, checked by
 * ThreadSanitizer (this program and the component sources in it are built
 * with -fsanitize=thread; a report makes it exit non-zero). Two threads
 * call the component's progress many times on a hand-made component state
 * (a real device, an empty queue); every call that takes the guard
 * writes the component's state (the liveness countdown). The guard must
 * be taken with an acquire and given back with a release: taken with a
 * relaxed swap and given back with a write barrier and a plain store, no
 * ordering joins one holder's writes to the next holder's (and the plain
 * store races with the other thread's swap), which the sanitizer reports.
 */

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "bip_device.h"
#include "btl_bip.h"

#define BIP_GUARD_CALLS 200000

static void *bip_guard_thread(void *arg)
{
    (void) arg;
    for (int i = 0; i < BIP_GUARD_CALLS; ++i) {
        (void) mca_btl_bip_component_progress();
    }
    return NULL;
}

static void test_bip_guard_two_threads(void **state)
{
    mca_btl_bip_component_t *c = &mca_btl_bip_component;
    char dir[] = "/tmp/test_bip_guard.XXXXXX";
    bip_dev_params_t p = {.job_key = "g",
                          .rank = 0,
                          .expected_peers = 0,
                          .nslots = 4,
                          .slot_size = 64,
                          .max_posted = 2,
                          .frag_size = 4096};
    pthread_t t[2];

    (void) state;
    assert_non_null(mkdtemp(dir));
    p.dir = dir;
    assert_int_equal(0, bip_open(&p, &c->dev));
    OBJ_CONSTRUCT(&c->posted, opal_list_t);
    OBJ_CONSTRUCT(&c->recv_fifo, opal_list_t);
    tc_ompi_done_list_construct(&c->completed_frags);
    c->threads = true;
    c->unlinked = true;
    c->poll_batch = 4;
    c->check_interval = 1u << 30;
    c->progress_calls = 1u << 30;
    c->output = -1;
    for (int i = 0; i < 2; ++i) {
        assert_int_equal(0, pthread_create(&t[i], NULL, bip_guard_thread, NULL));
    }
    for (int i = 0; i < 2; ++i) {
        assert_int_equal(0, pthread_join(t[i], NULL));
    }
    /* every call that held the guard counted down once */
    assert_true(c->progress_calls < (1u << 30));
    assert_true(c->progress_calls >= (1u << 30) - 2 * BIP_GUARD_CALLS);
    bip_close(c->dev);
    c->dev = NULL;
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bip_guard_two_threads),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
