/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/*
 * btl_via_progress.c: the progress loop of btl_via (both modules: the
 * component registers one progress function): receive completions off
 * the devices' CQs handed to ob1 in place, their credits taken and their
 * descriptors posted again (the credit we return); the harvest of
 * credits a send needs before progress runs; send and RDMA completions
 * owed a callback.
 */

#include "opal_config.h"

#include "btl_via.h"
#include "tc_atomic.h"
#include "tc_ompi.h"
#include "btl_via_endpoint.h"
#include "btl_via_frag.h"


/* one receive completion: hand it to ob1 (in place), take the credits it
 * carries, re-post the descriptor (which is the credit we return) */
static void mca_btl_via_handle_recv(mca_btl_via_endpoint_t *ep, vipl_desc_t *d)
{
    mca_btl_via_component_t *c = &mca_btl_via_component;
    uint32_t imm = d->imm_data;
    uint32_t kind = MCA_BTL_VIA_IMM_KIND(imm);

    if (OPAL_UNLIKELY(d->status & VIPL_STATUS_ERROR_MASK)) {
        vipl_vi_error_t why = VIPL_VIERR_NONE;
        bool was_failed;

        (void) vipl_query_vi(ep->vi, NULL, &why);
        OPAL_THREAD_LOCK(&ep->lock);
        was_failed = MCA_BTL_VIA_EP_FAILED == ep->state;
        ep->state = MCA_BTL_VIA_EP_FAILED;
        mca_btl_via_endpoint_fail_locked(ep);
        OPAL_THREAD_UNLOCK(&ep->lock);
        /* a peer that finalized disconnects its VIs: not an error */
        if (!was_failed && VIPL_VIERR_DISCONNECTED != why) {
            mca_btl_via_fatal_peer(ep,
                                   VIPL_VIERR_PEER_GONE == why ? "the peer process is gone"
                                                               : vipl_status_string(d->status));
        }
        return;
    }
    /* a PUT_DONE may carry a length: verbs reports the RDMA write's (its
     * buffer holds nothing); a CREDIT never does */
    if (OPAL_UNLIKELY(!(d->status & VIPL_STATUS_IMMEDIATE) || 0 == kind ||
                      kind >= MCA_BTL_VIA_KIND_MAX ||
                      (MCA_BTL_VIA_KIND_CREDIT == kind && 0 != d->length))) {
        mca_btl_via_fatal_peer(ep, "malformed message (bad immediate data)");
        return;
    }
    if (OPAL_LIKELY(MCA_BTL_VIA_KIND_AM == kind)) {
        mca_btl_base_tag_t tag = (mca_btl_base_tag_t) MCA_BTL_VIA_IMM_TAGOF(imm);
        const mca_btl_active_message_callback_t *reg = mca_btl_base_active_message_trigger + tag;
        mca_btl_base_segment_t segment;

        if (OPAL_LIKELY(NULL != reg->cbfunc)) {
            segment.seg_addr.pval = d->ds[0].addr;
            segment.seg_len = d->length;
            tc_ompi_deliver(reg, MCA_BTL_VIA_EP_BTL(ep), ep, tag, &segment, 1);
        } else {
            BTL_ERROR(("btl:via: message with unregistered tag %u from vpid %u dropped",
                       (unsigned) tag, ep->vpid));
        }
    } else if (MCA_BTL_VIA_KIND_PUT_DONE == kind) {
        mca_btl_via_count(&c->put_notices, 1);
    }

    OPAL_THREAD_LOCK(&ep->lock);
    if (MCA_BTL_VIA_EP_FAILED != ep->state) {
        /* the descriptor is posted again before its credits count; a
         * credit-only message came in the reserved descriptor and is owed
         * nothing (common/tc_credits) */
        if (VIPL_SUCCESS != vipl_post_recv(ep->vi, d) ||
            0 !=
                (MCA_BTL_VIA_KIND_CREDIT == kind
                     ? tc_credits_received_credit_only(&ep->credits, MCA_BTL_VIA_IMM_CREDITS(imm))
                     : tc_credits_received(&ep->credits, MCA_BTL_VIA_IMM_CREDITS(imm)))) {
            ep->state = MCA_BTL_VIA_EP_FAILED;
            mca_btl_via_endpoint_fail_locked(ep);
            OPAL_THREAD_UNLOCK(&ep->lock);
            mca_btl_via_fatal_peer(ep, "credit accounting broken (more credits than granted)");
            return;
        }
        /* credits came back: the queued sends go; the peer may need ours
         * (most messages leave nothing to do: no calls then) */
        if (OPAL_UNLIKELY(tc_credits_queued(&ep->credits) > 0 ||
                          tc_credits_need_credit_only(&ep->credits))) {
            mca_btl_via_endpoint_flush_locked(ep);
        }
        if (ep->outstanding > 0) {
            mca_btl_via_endpoint_reap_locked(ep);
        }
    }
    OPAL_THREAD_UNLOCK(&ep->lock);
}

/* a send the done list held: its callback now */
static void mca_btl_via_complete_frag(opal_list_item_t *item)
{
    mca_btl_via_frag_complete((mca_btl_via_frag_t *) item);
}

/* a put or get the done list held: its callback, then the op goes */
static void mca_btl_via_complete_rdma(opal_list_item_t *item)
{
    mca_btl_via_rdma_op_t *op = (mca_btl_via_rdma_op_t *) item;

    tc_ompi_rdma_cb_call(&op->cb, MCA_BTL_VIA_EP_BTL(op->cb.endpoint), op->status);
    if (OPAL_SUCCESS != op->status && OPAL_ERR_BAD_PARAM != op->status) {
        mca_btl_via_fatal_peer(op->cb.endpoint, "RDMA to a peer that is gone");
    }
    OBJ_DESTRUCT(&op->super);
    free(op);
}

static int mca_btl_via_progress_slow(void)
{
    mca_btl_via_component_t *c = &mca_btl_via_component;
    int count = 0;

    if (OPAL_UNLIKELY(c->num_connecting > 0)) {
        for (uint32_t i = 0; i < c->nprocs; ++i) {
            if (NULL != c->endpoints[i] && MCA_BTL_VIA_EP_CONNECTING == c->endpoints[i]->state) {
                mca_btl_via_endpoint_try_connect(c->endpoints[i]);
            }
        }
    }
    /* send completions of providers that complete later (verbs, ofi) */
    for (int i = 0; c->poll_sends && i < c->num_active; ++i) {
        mca_btl_via_endpoint_t *ep = c->active[i];

        if (ep->dev->poll_sends && (ep->outstanding > 0 || tc_credits_queued(&ep->credits) > 0)) {
            OPAL_THREAD_LOCK(&ep->lock);
            mca_btl_via_endpoint_reap_locked(ep);
            mca_btl_via_endpoint_flush_locked(ep);
            OPAL_THREAD_UNLOCK(&ep->lock);
        }
    }
    count += tc_ompi_done_list_drain(&c->completed_frags, mca_btl_via_complete_frag);
    count += tc_ompi_done_list_drain(&c->completed_rdma, mca_btl_via_complete_rdma);
    return count;
}

/* the receive CQ has one consumer at a time under threads (tc_guard_t:
 * acquire to take, release to drop) */
static inline bool mca_btl_via_progress_enter(void)
{
    return !opal_using_threads() || tc_guard_try_enter(&mca_btl_via_component.progress_guard);
}

static inline void mca_btl_via_progress_leave(void)
{
    if (opal_using_threads()) {
        tc_guard_leave(&mca_btl_via_component.progress_guard);
    }
}

/* the next receive completion: the ones a send held back first (they
 * left the CQ earlier), then the CQ's; false when there is none */
/* the next receive completion off the devices' CQs (each device in
 * turn, so that one busy device does not starve the other); false when
 * there is none */
static bool mca_btl_via_cq_next(vipl_vi_t **vi, vipl_desc_t **d)
{
    mca_btl_via_component_t *c = &mca_btl_via_component;
    bool is_recv;

    for (int i = 0; i < MCA_BTL_VIA_NUM_DEVS; ++i) {
        int k = (c->next_dev + i) % MCA_BTL_VIA_NUM_DEVS;
        vipl_cq_t *cq = c->devs[k].recv_cq;

        if (NULL == cq) {
            continue;
        }
        while (VIPL_SUCCESS == vipl_cq_done(cq, vi, &is_recv)) {
            if (VIPL_SUCCESS == vipl_recv_done(*vi, d)) {
                c->next_dev = (k + 1) % MCA_BTL_VIA_NUM_DEVS;
                return true;
            }
        }
    }
    return false;
}

static bool mca_btl_via_next_recv(vipl_vi_t **vi, vipl_desc_t **d)
{
    mca_btl_via_component_t *c = &mca_btl_via_component;

    if (OPAL_UNLIKELY(c->held_count > 0)) {
        *vi = c->held[c->held_head].vi;
        *d = c->held[c->held_head].d;
        c->held_head = (c->held_head + 1) % c->held_cap;
        --c->held_count;
        return true;
    }
    return mca_btl_via_cq_next(vi, d);
}

void mca_btl_via_harvest_credits(void)
{
    mca_btl_via_component_t *c = &mca_btl_via_component;

    if (OPAL_UNLIKELY(!c->live)) {
        return;
    }
    /* a thread in progress reads the CQ now and flushes what its credits
     * allow */
    if (!mca_btl_via_progress_enter()) {
        return;
    }
    while (c->held_count < c->held_cap) {
        mca_btl_via_endpoint_t *ep;
        vipl_vi_t *vi;
        vipl_desc_t *d;
        uint32_t imm, kind;
        bool sound;

        if (!mca_btl_via_cq_next(&vi, &d)) {
            break;
        }
        ep = (mca_btl_via_endpoint_t *) vi->user;
        imm = d->imm_data;
        kind = MCA_BTL_VIA_IMM_KIND(imm);
        sound = NULL != ep && !(d->status & VIPL_STATUS_ERROR_MASK) &&
            (d->status & VIPL_STATUS_IMMEDIATE) && 0 != kind && kind < MCA_BTL_VIA_KIND_MAX;
        /* (a PUT_DONE may carry the RDMA write's length, a CREDIT not) */
        if (sound && MCA_BTL_VIA_KIND_AM != kind &&
            (MCA_BTL_VIA_KIND_PUT_DONE == kind || 0 == d->length)) {
            /* a credit-only message or a put notice: nothing for the PML;
             * handled whole, so that the reserved descriptor is posted
             * again before its credits count (common/tc_credits) */
            mca_btl_via_handle_recv(ep, d);
            continue;
        }
        /* everything else waits for progress, in order; errors and
         * malformed messages are reported there */
        c->held[(c->held_head + c->held_count) % c->held_cap] =
            (mca_btl_via_held_t){.vi = vi, .d = d};
        ++c->held_count;
        if (!sound || MCA_BTL_VIA_KIND_AM != kind || 0 == MCA_BTL_VIA_IMM_CREDITS(imm)) {
            continue;
        }
        /* its credits name descriptors the peer has posted again: usable
         * now; the message counts in B when progress posts its own
         * descriptor again */
        OPAL_THREAD_LOCK(&ep->lock);
        if (MCA_BTL_VIA_EP_FAILED != ep->state &&
            0 == tc_credits_returned(&ep->credits, MCA_BTL_VIA_IMM_CREDITS(imm))) {
            d->imm_data = imm & ~(MCA_BTL_VIA_IMM_CREDIT_MAX << MCA_BTL_VIA_IMM_CREDIT_SHIFT);
            if (tc_credits_queued(&ep->credits) > 0) {
                mca_btl_via_endpoint_flush_locked(ep);
            }
            if (ep->outstanding > 0) {
                mca_btl_via_endpoint_reap_locked(ep);
            }
        }
        OPAL_THREAD_UNLOCK(&ep->lock);
    }
    mca_btl_via_progress_leave();
}

int mca_btl_via_component_progress(void)
{
    mca_btl_via_component_t *c = &mca_btl_via_component;
    int count = 0;

    if (OPAL_UNLIKELY(!c->live)) {
        return 0;
    }
    if (!mca_btl_via_progress_enter()) {
        return 0;
    }
    /* peers asking for a VI we have not made: every 16th call (a rank
     * that only receives must still bring its VI up) */
    if (c->any_lazy && 0 == (++c->wait_tick & 15)) {
        count += mca_btl_via_accept_requests();
    }
    for (unsigned int n = 0; n < c->poll_batch; ++n) {
        vipl_vi_t *vi;
        vipl_desc_t *d;

        if (!mca_btl_via_next_recv(&vi, &d)) {
            break;
        }
        if (NULL == vi->user) {
            continue;
        }
        mca_btl_via_handle_recv((mca_btl_via_endpoint_t *) vi->user, d);
        ++count;
    }
    if (OPAL_UNLIKELY(c->num_connecting > 0 || !tc_ompi_done_list_empty(&c->completed_frags) ||
                      !tc_ompi_done_list_empty(&c->completed_rdma) ||
                      (c->poll_sends && c->num_active > 0))) {
        count += mca_btl_via_progress_slow();
    }
    mca_btl_via_progress_leave();
    return count;
}
