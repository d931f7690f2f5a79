/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_sci_lost.c: btl_sci and a peer lost for good
 * (docs/fault-tolerance.md, section 1), on a hand-made component state
 * (this process and two peers, no device; the component's sources against
 * libopen-pal). The endpoint of the lost peer refuses sends at once with
 * OPAL_ERR_UNREACH; the next progress call completes the send deferred to
 * it with OPAL_ERR_UNREACH and reports it once, NONFATAL under fault
 * tolerance (mpi_ft_enable registered true, as mpirun --with-ft ulfm sets
 * it) and FATAL without; the other peer's deferred send is untouched.
 */

#include "opal_config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_ft.h"

#include "btl_sci_frag.h"
#include "test_sci_state.h"

static int completions[2];
static int completion_status[2];

static void sci_lost_des_cb(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *ep,
                            struct mca_btl_base_descriptor_t *des, int status)
{
    int k = (int) (intptr_t) des->des_cbdata;

    (void) btl;
    (void) ep;
    ++completions[k];
    completion_status[k] = status;
}

static void run_lost(bool ft)
{
    test_sci_state_t s;
    mca_btl_sci_endpoint_t *eps;
    mca_btl_sci_frag_t frags[2], later;

    test_ft_set(ft);
    test_sci_state_init(&s, 3, 1024);
    eps = s.eps;
    mca_btl_sci_module.error_cb = test_ft_error_cb;
    test_ft_reports_reset();
    memset(completions, 0, sizeof(completions));

    /* two peers that cannot take a message yet: a send waits on each */
    for (int k = 0; k < 2; ++k) {
        mca_btl_sci_endpoint_t *ep = &eps[k + 1];

        ep->state = MCA_BTL_SCI_EP_CONNECTING;
        OBJ_CONSTRUCT(&frags[k], mca_btl_sci_frag_t);
        frags[k].module = &mca_btl_sci_module;
        frags[k].base.des_segments = frags[k].segments;
        frags[k].base.des_segment_count = 1;
        frags[k].base.des_flags = 0; /* the caller keeps it */
        frags[k].base.des_cbfunc = sci_lost_des_cb;
        frags[k].base.des_cbdata = (void *) (intptr_t) k;
        assert_int_equal(OPAL_SUCCESS,
                         mca_btl_sci_send(&mca_btl_sci_module.super, ep, &frags[k].base, 1));
        assert_true(ep->waiting);
    }
    (void) mca_btl_sci_component_progress();
    assert_int_equal(0, test_ft_reports);
    assert_int_equal(0, completions[0] + completions[1]);

    /* peer 1 is lost: refused at once, completed and reported by progress */
    mca_btl_sci_endpoint_lost(&eps[1], "the peer process is gone (test)");
    OBJ_CONSTRUCT(&later, mca_btl_sci_frag_t);
    later.module = &mca_btl_sci_module;
    test_ft_assert_refused(&mca_btl_sci_module.super, &eps[1], &later.base);
    assert_int_equal(OPAL_ERR_UNREACH,
                     mca_btl_sci_put(&mca_btl_sci_module.super, &eps[1], &s.bell, 0, NULL, NULL, 8,
                                     0, 0, NULL, NULL, NULL));
    assert_int_equal(0, test_ft_reports); /* from progress, not from inside a call */
    (void) mca_btl_sci_component_progress();
    test_ft_assert_reported(1, ft, &s.procs[1]);
    assert_int_equal(1, completions[0]);
    assert_int_equal(OPAL_ERR_UNREACH, completion_status[0]);
    assert_int_equal(0, (int) opal_list_get_size(&eps[1].pending));
    assert_false(eps[1].waiting);

    /* once per peer; the other peer undisturbed */
    mca_btl_sci_endpoint_lost(&eps[1], "again");
    for (int i = 0; i < 10; ++i) {
        (void) mca_btl_sci_component_progress();
    }
    assert_int_equal(1, test_ft_reports);
    assert_int_equal(1, completions[0]);
    assert_int_equal(0, completions[1]);
    assert_int_equal(MCA_BTL_SCI_EP_CONNECTING, eps[2].state);
    assert_true(eps[2].waiting);
    assert_ptr_equal(&frags[1], opal_list_get_first(&eps[2].pending));

    /* a peer that left in order is no loss */
    eps[2].state = MCA_BTL_SCI_EP_FAILED;
    (void) opal_list_remove_first(&eps[2].pending);
    mca_btl_sci_endpoint_lost(&eps[2], "after its finalize");
    (void) mca_btl_sci_component_progress();
    assert_int_equal(1, test_ft_reports);

    test_sci_state_fini(&s);
}

int main(void)
{
    return test_ft_lost_main("test_sci_lost", MCA_BTL_SCI_SRCDIR, run_lost);
}
