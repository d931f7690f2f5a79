/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_sci_pending.c: btl_sci's deferred sends to a peer that is still
 * connecting.  A send to an endpoint whose peer segment is not mapped yet
 * waits on the endpoint's pending list; progress retries it and, when it
 * cannot be pushed, asks whether the peer is alive.  An endpoint that is
 * still connecting has no sequence yet: it must be left waiting, never
 * reported to the PML as a dead peer (ob1 would abort the job).
 *
 * The component's progress runs here on a hand-made component state (one
 * peer, connecting, no device): the test links the component's sources
 * and libopen-pal, not the device's segments.  Connecting is not retried
 * (num_unconnected stays 0): only the pending path is under test.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "btl_sci_frag.h"
#include "test_sci_state.h"

static int sci_pending_errors;

static void sci_pending_error_cb(struct mca_btl_base_module_t *btl, int32_t flags,
                                 struct opal_proc_t *proc, char *info)
{
    (void) btl;
    (void) flags;
    (void) proc;
    (void) info;
    ++sci_pending_errors;
}

static void test_sci_pending_connecting_not_dead(void **state)
{
    mca_btl_sci_component_t *c = &mca_btl_sci_component;
    test_sci_state_t s;
    mca_btl_sci_frag_t frag;
    mca_btl_sci_endpoint_t *ep;

    (void) state;
    test_sci_state_init(&s, 2, 1024);
    mca_btl_sci_module.error_cb = sci_pending_error_cb;
    sci_pending_errors = 0;

    ep = &s.eps[1];
    ep->state = MCA_BTL_SCI_EP_CONNECTING;
    assert_null(ep->seq);

    /* what a send does when the endpoint cannot take the message yet */
    OBJ_CONSTRUCT(&frag, mca_btl_sci_frag_t);
    mca_btl_sci_endpoint_defer(ep, &frag);
    assert_true(ep->waiting);

    for (int i = 0; i < 100; ++i) {
        (void) mca_btl_sci_component_progress();
    }

    /* still waiting for the connection: nothing reported, nothing lost */
    assert_int_equal(0, sci_pending_errors);
    assert_int_equal(MCA_BTL_SCI_EP_CONNECTING, ep->state);
    assert_true(ep->waiting);
    assert_int_equal(1, (int) opal_list_get_size(&ep->pending));
    assert_ptr_equal(&frag, opal_list_get_first(&ep->pending));
    assert_int_equal(1, (int) opal_list_get_size(&c->pending_endpoints));

    /* the connection failed meanwhile (reported by connect): progress
     * drops the endpoint from its list without a second report */
    ep->state = MCA_BTL_SCI_EP_FAILED;
    (void) mca_btl_sci_component_progress();
    assert_int_equal(0, sci_pending_errors);
    assert_false(ep->waiting);
    assert_int_equal(0, (int) opal_list_get_size(&c->pending_endpoints));

    (void) opal_list_remove_first(&ep->pending);
    test_sci_state_fini(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sci_pending_connecting_not_dead),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
