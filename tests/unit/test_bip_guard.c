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

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "tc_unit.h"
#include "test_bip_state.h"

#define BIP_GUARD_CALLS 200000

static void test_bip_guard_two_threads(void **state)
{
    mca_btl_bip_component_t *c = &mca_btl_bip_component;
    char dir[] = "/tmp/test_bip_guard.XXXXXX";

    (void) state;
    test_bip_state_init(dir, true);
    tc_unit_progress_threads(mca_btl_bip_component_progress, BIP_GUARD_CALLS);
    /* every call that held the guard counted down once */
    assert_true(c->progress_calls < (1u << 30));
    assert_true(c->progress_calls >= (1u << 30) - 2 * BIP_GUARD_CALLS);
    test_bip_state_fini(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bip_guard_two_threads),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
