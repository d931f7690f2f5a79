/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_bip_lost.c: btl_bip and a peer lost for good
 * (docs/fault-tolerance.md, section 1), on a hand-made component state
 * (a real device with an empty queue, two peers without a connection;
 * the component's sources against libopen-pal). Each peer has a send
 * waiting for credit in its FIFO, a medium send waiting for its ACK and a
 * btl_get waiting in the receive FIFO. Once one peer is lost its endpoint
 * refuses sends and reads at once with OPAL_ERR_UNREACH; the next
 * progress call completes its three operations with OPAL_ERR_UNREACH and
 * reports it once, NONFATAL under fault tolerance (mpi_ft_enable
 * registered true, as mpirun --with-ft ulfm sets it), FATAL without; the
 * other peer's operations are untouched.
 */

#include "opal_config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "test_ft.h"

#include "btl_bip_endpoint.h"
#include "btl_bip_frag.h"
#include "test_bip_state.h"

/* per peer k (0, 1): [0] the send in the FIFO, [1] the one awaiting its
 * ACK, [2] the get */
static int done[2][3];
static int status[2][3];

static void bip_lost_des_cb(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *ep,
                            struct mca_btl_base_descriptor_t *des, int rc)
{
    int k = (int) ((intptr_t) des->des_cbdata >> 4), op = (int) ((intptr_t) des->des_cbdata & 15);

    (void) btl;
    (void) ep;
    ++done[k][op];
    status[k][op] = rc;
}

static void bip_lost_get_cb(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *ep,
                            void *local_address, struct mca_btl_base_registration_handle_t *h,
                            void *context, void *cbdata, int rc)
{
    int k = (int) (intptr_t) cbdata;

    (void) btl;
    (void) ep;
    (void) local_address;
    (void) h;
    (void) context;
    ++done[k][2];
    status[k][2] = rc;
}

static void frag_setup(mca_btl_bip_frag_t *frag, unsigned char *data, size_t len, int k, int op)
{
    OBJ_CONSTRUCT(frag, mca_btl_bip_frag_t);
    frag->data = data;
    frag->segments[0].seg_addr.pval = data;
    frag->segments[0].seg_len = len;
    frag->base.des_segments = frag->segments;
    frag->base.des_segment_count = 1;
    frag->base.des_flags = 0; /* the caller keeps it */
    frag->base.des_cbfunc = bip_lost_des_cb;
    frag->base.des_cbdata = (void *) (intptr_t) ((k << 4) | op);
}

static void run_lost(bool ft)
{
    mca_btl_bip_component_t *c = &mca_btl_bip_component;
    char dir[] = "/tmp/test_bip_lost.XXXXXX";
    mca_btl_bip_endpoint_t *eps = calloc(3, sizeof(*eps));
    opal_proc_t procs[3];
    mca_btl_bip_frag_t frags[2][2], later;
    mca_btl_bip_rreq_t *rreqs[2];
    unsigned char data[2][2][32], buf[64];
    uint32_t pb;

    assert_non_null(eps);
    test_ft_set(ft);
    test_bip_state_init(dir, false);
    c->endpoints = eps;
    c->nprocs = 3;
    c->max_eps = 3;
    c->lost_pending = 0;
    mca_btl_bip_module.error_cb = test_ft_error_cb;
    mca_btl_bip_module.short_limit = 16;
    test_ft_reports_reset();
    memset(done, 0, sizeof(done));
    memset(procs, 0, sizeof(procs));

    for (int i = 0; i < 3; ++i) {
        OBJ_CONSTRUCT(&eps[i], mca_btl_bip_endpoint_t);
        eps[i].peer_rank = i;
        eps[i].proc = &procs[i];
        procs[i].proc_name.vpid = (uint32_t) i;
    }
    for (int k = 0; k < 2; ++k) {
        mca_btl_bip_endpoint_t *ep = &eps[k + 1];

        /* connected, every credit spent: a send waits in the FIFO */
        ep->state = MCA_BTL_BIP_EP_CONNECTED;
        assert_int_equal(0, tc_credits_init(&ep->cr, 2));
        while (0 == tc_credits_try_send(&ep->cr, &pb)) {
        }
        frag_setup(&frags[k][0], data[k][0], 8, k, 0);
        assert_int_equal(OPAL_SUCCESS,
                         mca_btl_bip_send(&mca_btl_bip_module.super, ep, &frags[k][0].base, 1));
        assert_int_equal(1, (int) tc_credits_queued(&ep->cr));
        /* a medium send whose REQ went */
        frag_setup(&frags[k][1], data[k][1], 32, k, 1);
        frags[k][1].endpoint = ep;
        frags[k][1].ctl = MCA_BTL_BIP_REQ;
        opal_list_append(&ep->await_ack, &frags[k][1].base.super.super);
        /* a get beyond the posted-receive limit, waiting in the FIFO */
        rreqs[k] = OBJ_NEW(mca_btl_bip_rreq_t);
        rreqs[k]->ep = ep;
        rreqs[k]->kind = MCA_BTL_BIP_ACK_GET;
        rreqs[k]->buf = buf;
        rreqs[k]->size = sizeof(buf);
        rreqs[k]->cbfunc = bip_lost_get_cb;
        rreqs[k]->cbdata = (void *) (intptr_t) k;
        opal_list_append(&c->recv_fifo, &rreqs[k]->super);
    }
    (void) mca_btl_bip_component_progress();
    assert_int_equal(0, test_ft_reports);

    /* peer 1 is lost: refused at once, completed and reported by progress */
    mca_btl_bip_endpoint_lost(&eps[1], "the peer process is gone (test)");
    frag_setup(&later, buf, 8, 0, 0);
    test_ft_assert_refused(&mca_btl_bip_module.super, &eps[1], &later.base);
    assert_int_equal(OPAL_ERR_UNREACH,
                     mca_btl_bip_get(&mca_btl_bip_module.super, &eps[1], buf, 0, NULL, NULL, 8, 0,
                                     0, bip_lost_get_cb, NULL, NULL));
    assert_int_equal(0, test_ft_reports); /* from progress, not from inside a call */
    (void) mca_btl_bip_component_progress();
    test_ft_assert_reported(1, ft, &procs[1]);
    for (int op = 0; op < 3; ++op) {
        assert_int_equal(1, done[0][op]);
        assert_int_equal(OPAL_ERR_UNREACH, status[0][op]);
    }
    assert_int_equal(0, (int) tc_credits_queued(&eps[1].cr));
    assert_true(opal_list_is_empty(&eps[1].await_ack));
    assert_int_equal(1, (int) opal_list_get_size(&c->recv_fifo));

    /* once per peer; the other peer undisturbed */
    mca_btl_bip_endpoint_lost(&eps[1], "again");
    for (int i = 0; i < 10; ++i) {
        (void) mca_btl_bip_component_progress();
    }
    assert_int_equal(1, test_ft_reports);
    for (int op = 0; op < 3; ++op) {
        assert_int_equal(1, done[0][op]);
        assert_int_equal(0, done[1][op]);
    }
    assert_int_equal(MCA_BTL_BIP_EP_CONNECTED, eps[2].state);
    assert_int_equal(1, (int) tc_credits_queued(&eps[2].cr));
    assert_int_equal(1, (int) opal_list_get_size(&eps[2].await_ack));

    /* teardown of what stays with peer 2 (no callbacks) */
    (void) tc_credits_drain(&eps[2].cr);
    (void) opal_list_remove_first(&eps[2].await_ack);
    (void) opal_list_remove_first(&c->recv_fifo);
    OBJ_RELEASE(rreqs[1]);
    c->endpoints = NULL;
    c->nprocs = 0;
    c->max_eps = 0;
    free(eps);
    test_bip_state_fini(dir);
}

int main(void)
{
    return test_ft_lost_main("test_bip_lost", MCA_BTL_BIP_SRCDIR, run_lost);
}
