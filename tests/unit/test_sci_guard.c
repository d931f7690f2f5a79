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

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tc_unit.h"
#include "test_sci_state.h"

#define SCI_GUARD_CALLS 100000

static void test_sci_guard_two_threads(void **state)
{
    mca_btl_sci_component_t *c = &mca_btl_sci_component;
    test_sci_state_t s;

    (void) state;
    test_sci_state_init(&s, 2, 16);
    s.eps[1].state = MCA_BTL_SCI_EP_CONNECTING;

    opal_set_using_threads(true);
    tc_unit_progress_threads(mca_btl_sci_component_progress, SCI_GUARD_CALLS);
    opal_set_using_threads(false);
    /* every call that held the guard counted once, none twice */
    assert_true(c->progress_calls > 0);
    assert_true(c->progress_calls <= 2u * SCI_GUARD_CALLS);

    test_sci_state_fini(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sci_guard_two_threads),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
