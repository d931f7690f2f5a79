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

/* under ep->lock: after credits came back or a descriptor was posted
 * again, the sends queued for want of them go, the peer gets a
 * credit-only message when it needs ours, and sends that completed are
 * taken (most messages leave nothing to do: no calls then) */
static inline void mca_btl_via_after_credits_locked(mca_btl_via_endpoint_t *ep)
{
    if (OPAL_UNLIKELY(tc_credits_queued(&ep->credits) > 0 ||
                      tc_credits_need_credit_only(&ep->credits))) {
        mca_btl_via_endpoint_flush_locked(ep);
    }
    if (OPAL_UNLIKELY(2 * tc_credits_owed(&ep->credits) >= ep->credits.n)) {
        mca_btl_via_endpoint_return_locked(ep);
    }
    if (ep->outstanding > 0) {
        mca_btl_via_endpoint_reap_locked(ep);
    }
}

/* under ep->lock: the accounting broke (the peer returned more credits
 * than it holds, or sent more than we granted): the endpoint fails;
 * returns with the lock released */
static void mca_btl_via_credit_fail_unlock(mca_btl_via_endpoint_t *ep)
{
    ep->state = MCA_BTL_VIA_EP_FAILED;
    mca_btl_via_endpoint_fail_locked(ep);
    OPAL_THREAD_UNLOCK(&ep->lock);
    mca_btl_via_endpoint_lost(ep, "credit accounting broken (more credits than granted)");
}

/* The descriptors of delivered messages, posted again (and then counted
 * in the credits we owe the peer) at the next progress call or harvest:
 * the re-post is off the path between a message's arrival and the
 * return of the receive that waited for it (docs/btl_via.md, section 8).
 * Under the progress guard. */
static void mca_btl_via_repost(void)
{
    mca_btl_via_component_t *c = &mca_btl_via_component;
    uint32_t n = c->repost_count;

    c->repost_count = 0;
    for (uint32_t i = 0; i < n; ++i) {
        mca_btl_via_endpoint_t *ep = c->repost[i].ep;

        OPAL_THREAD_LOCK(&ep->lock);
        if (MCA_BTL_VIA_EP_FAILED == ep->state) {
            OPAL_THREAD_UNLOCK(&ep->lock);
            continue;
        }
        if (VIPL_SUCCESS != vipl_post_recv(ep->vi, c->repost[i].d) ||
            0 != tc_credits_received(&ep->credits, 0)) {
            mca_btl_via_credit_fail_unlock(ep);
            continue;
        }
        mca_btl_via_after_credits_locked(ep);
        OPAL_THREAD_UNLOCK(&ep->lock);
    }
}

/* one receive completion: the credits it carries taken, handed to ob1
 * in place, its descriptor posted again at the next progress call (an
 * ordinary message) or now (a credit-only message or a put notice,
 * whose reserved or lent descriptor is posted before its credits count:
 * common/tc_credits) */
static void mca_btl_via_handle_recv(mca_btl_via_endpoint_t *ep, vipl_desc_t *d)
{
    mca_btl_via_component_t *c = &mca_btl_via_component;
    uint32_t imm = d->imm_data;
    int cls = mca_btl_via_rx_class(d->status, imm, d->length, ep->dev->recv_size);

    if (OPAL_LIKELY(MCA_BTL_VIA_RX_AM == cls)) {
        mca_btl_base_tag_t tag = (mca_btl_base_tag_t) MCA_BTL_VIA_IMM_TAGOF(imm);
        const mca_btl_active_message_callback_t *reg = mca_btl_base_active_message_trigger + tag;
        mca_btl_base_segment_t segment;

        if (0 != MCA_BTL_VIA_IMM_CREDITS(imm)) {
            /* they name descriptors the peer posted again: usable now */
            OPAL_THREAD_LOCK(&ep->lock);
            if (MCA_BTL_VIA_EP_FAILED == ep->state) {
                OPAL_THREAD_UNLOCK(&ep->lock);
                return;
            }
            if (0 != tc_credits_returned(&ep->credits, MCA_BTL_VIA_IMM_CREDITS(imm))) {
                mca_btl_via_credit_fail_unlock(ep);
                return;
            }
            mca_btl_via_after_credits_locked(ep);
            OPAL_THREAD_UNLOCK(&ep->lock);
        }
        if (OPAL_LIKELY(NULL != reg->cbfunc)) {
            segment.seg_addr.pval = d->ds[0].addr;
            segment.seg_len = d->length;
            tc_ompi_deliver(reg, MCA_BTL_VIA_EP_BTL(ep), ep, tag, &segment, 1);
        } else {
            BTL_ERROR(("btl:via: message with unregistered tag %u from vpid %u dropped",
                       (unsigned) tag, ep->vpid));
        }
        c->repost[c->repost_count++] = (mca_btl_via_repost_t){.ep = ep, .d = d};
        return;
    }
    if (OPAL_UNLIKELY(MCA_BTL_VIA_RX_ERROR == cls)) {
        vipl_vi_error_t why = VIPL_VIERR_NONE;

        (void) vipl_query_vi(ep->vi, NULL, &why);
        OPAL_THREAD_LOCK(&ep->lock);
        ep->state = MCA_BTL_VIA_EP_FAILED;
        mca_btl_via_endpoint_fail_locked(ep);
        OPAL_THREAD_UNLOCK(&ep->lock);
        /* a peer that finalized disconnects its VIs: not an error (a
         * send the broken VI flushed may have failed the endpoint
         * first: reported here, once) */
        if (VIPL_VIERR_DISCONNECTED != why) {
            mca_btl_via_endpoint_lost(ep,
                                      VIPL_VIERR_PEER_GONE == why ? "the peer process is gone"
                                                                  : vipl_status_string(d->status));
        }
        return;
    }
    if (OPAL_UNLIKELY(MCA_BTL_VIA_RX_MALFORMED == cls)) {
        mca_btl_via_endpoint_lost(ep, "malformed message (bad immediate data)");
        return;
    }
    if (MCA_BTL_VIA_RX_PUT_DONE == cls) {
        mca_btl_via_count(&c->put_notices, 1);
    }
    OPAL_THREAD_LOCK(&ep->lock);
    if (MCA_BTL_VIA_EP_FAILED == ep->state) {
        OPAL_THREAD_UNLOCK(&ep->lock);
        return;
    }
    if (VIPL_SUCCESS != vipl_post_recv(ep->vi, d) ||
        0 !=
            (MCA_BTL_VIA_RX_CREDIT == cls
                 ? tc_credits_received_credit_only(&ep->credits, MCA_BTL_VIA_IMM_CREDITS(imm))
                 : tc_credits_received(&ep->credits, MCA_BTL_VIA_IMM_CREDITS(imm)))) {
        mca_btl_via_credit_fail_unlock(ep);
        return;
    }
    mca_btl_via_after_credits_locked(ep);
    OPAL_THREAD_UNLOCK(&ep->lock);
}

/* a send the done list held: its callback now (a failed one after the
 * report of its peer) */
static void mca_btl_via_complete_frag(opal_list_item_t *item)
{
    mca_btl_via_frag_t *frag = (mca_btl_via_frag_t *) item;

    if (OPAL_UNLIKELY(OPAL_SUCCESS != frag->status) && NULL != frag->endpoint) {
        mca_btl_via_endpoint_failed_op(frag->endpoint);
    }
    mca_btl_via_frag_complete(frag);
}

/* a put or get the done list held: its callback, then the op goes */
static void mca_btl_via_complete_rdma(opal_list_item_t *item)
{
    mca_btl_via_rdma_op_t *op = (mca_btl_via_rdma_op_t *) item;

    if (OPAL_SUCCESS != op->status && OPAL_ERR_BAD_PARAM != op->status) {
        mca_btl_via_endpoint_lost(op->cb.endpoint, "RDMA to a peer that is gone");
    }
    tc_ompi_rdma_cb_call(&op->cb, MCA_BTL_VIA_EP_BTL(op->cb.endpoint), op->status);
    OBJ_DESTRUCT(&op->super);
    free(op);
}

static int mca_btl_via_progress_slow(void)
{
    mca_btl_via_component_t *c = &mca_btl_via_component;
    int count = 0, n;

    if (OPAL_UNLIKELY(c->num_connecting > 0)) {
        for (uint32_t i = 0; i < c->max_eps; ++i) {
            mca_btl_via_endpoint_t *ep = tc_atomic_load_acquire(&c->endpoints[i]);

            if (NULL != ep && MCA_BTL_VIA_EP_CONNECTING == ep->state) {
                mca_btl_via_endpoint_try_connect(ep);
            }
        }
    }
    /* send completions of providers that complete later (verbs, ofi) */
    n = c->poll_sends ? tc_atomic_load_acquire(&c->num_active) : 0;
    for (int i = 0; i < n; ++i) {
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

/* the next receive completion off the devices' CQs (each in turn, so
 * that one busy device does not starve the other); false when there is
 * none */
static inline bool mca_btl_via_cq_next(vipl_vi_t **vi, vipl_desc_t **d)
{
    mca_btl_via_component_t *c = &mca_btl_via_component;

    for (int i = 0; i < c->num_cqs; ++i) {
        int k = c->next_cq + i < c->num_cqs ? c->next_cq + i : c->next_cq + i - c->num_cqs;

        /* a device without a VI yet has nothing to report (the ofi NIC
         * opened for other jobs on a single host): not polled */
        if (OPAL_UNLIKELY(0 == tc_atomic_load_relaxed(&c->vis_created[c->cq_dev[k]]))) {
            continue;
        }
        /* the CQ's function, kept at init: an empty poll (the receiver's
         * inner loop) reads no ops table */
        if (VIPL_SUCCESS == c->cq_recv[k](c->cqs[k], vi, d)) {
            c->next_cq = k + 1 < c->num_cqs ? k + 1 : 0;
            return true;
        }
    }
    return false;
}

/* the next receive completion: the ones a send held back first (they
 * left the CQ earlier), then the CQs'; false when there is none */
static inline bool mca_btl_via_next_recv(vipl_vi_t **vi, vipl_desc_t **d)
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
    if (c->repost_count > 0) {
        mca_btl_via_repost();
    }
    while (c->held_count < c->held_cap) {
        mca_btl_via_endpoint_t *ep;
        vipl_vi_t *vi;
        vipl_desc_t *d;
        uint32_t imm;
        int cls;

        if (!mca_btl_via_cq_next(&vi, &d)) {
            break;
        }
        ep = (mca_btl_via_endpoint_t *) vi->user;
        imm = d->imm_data;
        cls = NULL != ep ? mca_btl_via_rx_class(d->status, imm, d->length, ep->dev->recv_size)
                         : MCA_BTL_VIA_RX_ERROR;
        if (MCA_BTL_VIA_RX_CREDIT == cls || MCA_BTL_VIA_RX_RETURN == cls ||
            MCA_BTL_VIA_RX_PUT_DONE == cls) {
            /* credits or a put notice: nothing for the PML; handled
             * whole, so that the descriptor is posted again before its
             * credits count (common/tc_credits) */
            mca_btl_via_handle_recv(ep, d);
            continue;
        }
        /* everything else waits for progress, in order; errors and
         * malformed messages are reported there */
        c->held[(c->held_head + c->held_count) % c->held_cap] =
            (mca_btl_via_held_t){.vi = vi, .d = d};
        ++c->held_count;
        if (MCA_BTL_VIA_RX_AM != cls || 0 == MCA_BTL_VIA_IMM_CREDITS(imm)) {
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
    if (c->repost_count > 0) {
        mca_btl_via_repost();
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
