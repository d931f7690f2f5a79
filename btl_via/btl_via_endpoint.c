/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/*
 * btl_via_endpoint.c: one peer: its receive buffers (in NIC memory, so a
 * send from the peer is one copy), the peer-to-peer connection of its
 * VI, sends with piggy-backed credits, the FIFO of sends waiting for
 * credit, reaping of send completions and failure.
 */

#include "opal_config.h"

#include <stdlib.h>
#include <string.h>

#include "opal/util/show_help.h"

#include "btl_via.h"
#include "btl_via_endpoint.h"
#include "btl_via_frag.h"
#include "tc_atomic.h"
#include "tc_mem.h"

static int mca_btl_via_endpoint_post_recv(mca_btl_via_endpoint_t *ep, uint32_t i)
{
    vipl_desc_t *d = ep->rdescs + i;

    d->control = VIPL_CONTROL_OP_SEND;
    d->seg_count = 1;
    d->ds[0].addr = ep->rbufs + (size_t) i * MCA_BTL_VIA_RX_STRIDE(ep->dev);
    d->ds[0].handle = ep->rhandle;
    d->ds[0].length = ep->dev->recv_size;
    d->context = ep;
    return VIPL_SUCCESS == vipl_post_recv(ep->vi, d) ? OPAL_SUCCESS : OPAL_ERROR;
}

mca_btl_via_endpoint_t *mca_btl_via_endpoint_create(struct opal_proc_t *proc, uint32_t vpid,
                                                    int dev_index, const vipl_vi_address_t *remote)
{
    mca_btl_via_component_t *c = &mca_btl_via_component;
    mca_btl_via_endpoint_t *ep = calloc(1, sizeof(*ep));

    if (NULL == ep) {
        return NULL;
    }
    OBJ_CONSTRUCT(&ep->lock, opal_mutex_t);
    OBJ_CONSTRUCT(&ep->rdma_wait, opal_list_t);
    ep->proc = proc;
    ep->vpid = vpid;
    ep->dev = &c->devs[dev_index];
    ep->dev_index = dev_index;
    if (MCA_BTL_VIA_DEV_NET == dev_index) {
        /* the network NIC has a peer now: its requests are looked for often */
        tc_atomic_store_relaxed(&c->net_wait_always, 1);
    }
    ep->remote = *remote;
    ep->state = MCA_BTL_VIA_EP_IDLE;
    if (0 != tc_credits_init(&ep->credits, ep->dev->recv_descriptors)) {
        OBJ_DESTRUCT(&ep->rdma_wait);
        OBJ_DESTRUCT(&ep->lock);
        free(ep);
        return NULL;
    }
    return ep;
}

/* what a bring-up made, undone (the VI stays when receives went to it:
 * they cannot be taken back; it goes with the device) */
static void mca_btl_via_endpoint_undo(mca_btl_via_endpoint_t *ep, uint32_t posted)
{
    mca_btl_via_dev_t *dev = ep->dev;

    if (NULL != ep->vi) {
        ep->vi->user = NULL;
        if (posted > 0) {
            /* receives posted on an idle VI: the VI goes with them, before
             * it ever connected, and the peer stays unreachable; it must
             * not complete into the buffers freed below */
            vipl_destroy_vi(ep->vi);
            dev->vis[ep->vpid] = NULL;
        }
        ep->vi = NULL;
    }
    if (0 != ep->rhandle) {
        (void) vipl_deregister_mem(dev->nic, ep->rbufs, ep->rhandle);
        ep->rhandle = 0;
    }
    if (NULL != ep->rbufs) {
        vipl_mem_free(dev->nic, ep->rbufs);
        ep->rbufs = NULL;
    }
    if (NULL != ep->credit_frag) {
        OBJ_RELEASE(ep->credit_frag);
    }
    free(ep->rdescs);
    ep->rdescs = NULL;
}

int mca_btl_via_endpoint_bring_up_locked(mca_btl_via_endpoint_t *ep)
{
    mca_btl_via_component_t *c = &mca_btl_via_component;
    mca_btl_via_dev_t *dev = ep->dev;
    size_t bytes = (size_t) dev->recv_descriptors * MCA_BTL_VIA_RX_STRIDE(dev);
    vipl_mem_attrs_t ma = {.ptag = dev->ptag};
    uint32_t posted = 0;
    vipl_return_t rc;

    if (MCA_BTL_VIA_EP_IDLE != ep->state) {
        return MCA_BTL_VIA_EP_FAILED == ep->state ? OPAL_ERR_UNREACH : OPAL_SUCCESS;
    }
    if (NULL == dev->vis[ep->vpid]) {
        /* made now, on first use: the discriminator names it to the peer
         * (our vpid in its table, its vpid in ours) */
        vipl_vi_attrs_t va = dev->vi_attrs;

        va.has_discriminator = true;
        va.discriminator = ep->vpid;
        rc = vipl_create_vi(dev->nic, &va, NULL, dev->recv_cq, dev->vis + ep->vpid);
        if (VIPL_SUCCESS != rc) {
            dev->vis[ep->vpid] = NULL;
            opal_show_help("help-mpi-btl-via.txt", "vi create failed", true,
                           opal_process_info.nodename, vipl_strerror(rc));
            ep->state = MCA_BTL_VIA_EP_FAILED;
            return OPAL_ERR_UNREACH;
        }
        mca_btl_via_count(&c->vis_created[ep->dev_index], 1);
    }
    ep->vi = dev->vis[ep->vpid];
    ep->rdescs = calloc(dev->recv_descriptors, sizeof(*ep->rdescs));
    ep->rbufs = vipl_mem_alloc(dev->nic, bytes);
    if (NULL == ep->rdescs || NULL == ep->rbufs ||
        NULL == (ep->credit_frag = mca_btl_via_credit_frag_new(dev, ep)) ||
        VIPL_SUCCESS != vipl_register_mem(dev->nic, ep->rbufs, bytes, &ma, &ep->rhandle)) {
        goto fail;
    }
    /* the receives cycle through every buffer: written in now, so that
     * no message meets a page for the first time (docs/common.md) */
    if (MCA_BTL_VIA_DEV_NET == ep->dev_index) {
        (void) tc_mem_prefault(ep->rbufs, bytes, &c->ofi_prefault_left);
    }
    ep->vi->user = ep;
    /* VIA: receives are posted before the connection, so that nothing
     * the peer sends can find the queue empty */
    for (uint32_t i = 0; i < dev->recv_descriptors; ++i) {
        if (OPAL_SUCCESS != mca_btl_via_endpoint_post_recv(ep, i)) {
            goto fail;
        }
        ++posted;
    }
    rc = vipl_connect_peer_request(ep->vi, &ep->remote);
    if (VIPL_SUCCESS != rc) {
        opal_show_help("help-mpi-btl-via.txt", "connect failed", true, opal_process_info.nodename,
                       (int) ep->vpid, vipl_strerror(rc));
        goto fail;
    }
    ep->state = MCA_BTL_VIA_EP_CONNECTING;
    (void) OPAL_THREAD_ADD_FETCH32(&c->num_connecting, 1);
    opal_output_verbose(20, c->output, "btl:via: VI to peer %u made (%s), connecting", ep->vpid,
                        vipl_query_nic(dev->nic)->provider);
    return OPAL_SUCCESS;

fail:
    mca_btl_via_endpoint_undo(ep, posted);
    ep->state = MCA_BTL_VIA_EP_FAILED;
    return OPAL_ERR_UNREACH;
}

void mca_btl_via_endpoint_destroy(mca_btl_via_endpoint_t *ep)
{
    mca_btl_via_component_t *c = &mca_btl_via_component;

    OPAL_THREAD_LOCK(&ep->lock);
    if (MCA_BTL_VIA_EP_CONNECTING == ep->state) {
        (void) OPAL_THREAD_ADD_FETCH32(&c->num_connecting, -1);
    }
    if (NULL != ep->vi) {
        (void) vipl_disconnect(ep->vi);
        mca_btl_via_endpoint_reap_locked(ep);
    }
    ep->state = MCA_BTL_VIA_EP_FAILED;
    mca_btl_via_endpoint_fail_locked(ep);
    OPAL_THREAD_UNLOCK(&ep->lock);
    if (NULL != ep->vi) {
        ep->vi->user = NULL;
    }
    tc_credits_fini(&ep->credits);
    if (NULL != ep->credit_frag) {
        OBJ_RELEASE(ep->credit_frag);
    }
    if (0 != ep->rhandle) {
        (void) vipl_deregister_mem(ep->dev->nic, ep->rbufs, ep->rhandle);
    }
    if (NULL != ep->rbufs) {
        vipl_mem_free(ep->dev->nic, ep->rbufs);
    }
    free(ep->rdescs);
    OBJ_DESTRUCT(&ep->rdma_wait);
    OBJ_DESTRUCT(&ep->lock);
    free(ep);
}

void mca_btl_via_endpoint_use(mca_btl_via_endpoint_t *ep)
{
    if (OPAL_UNLIKELY(MCA_BTL_VIA_EP_IDLE == ep->state)) {
        int rc;

        OPAL_THREAD_LOCK(&ep->lock);
        rc = mca_btl_via_endpoint_bring_up_locked(ep);
        OPAL_THREAD_UNLOCK(&ep->lock);
        if (OPAL_SUCCESS != rc) {
            mca_btl_via_endpoint_lost(ep, "the VI to the peer could not be made");
            return;
        }
    }
    if (OPAL_UNLIKELY(MCA_BTL_VIA_EP_CONNECTING == ep->state)) {
        mca_btl_via_endpoint_try_connect(ep);
    }
}

void mca_btl_via_endpoint_try_connect(mca_btl_via_endpoint_t *ep)
{
    mca_btl_via_component_t *c = &mca_btl_via_component;
    vipl_return_t rc;

    OPAL_THREAD_LOCK(&ep->lock);
    if (MCA_BTL_VIA_EP_CONNECTING != ep->state) {
        OPAL_THREAD_UNLOCK(&ep->lock);
        return;
    }
    rc = vipl_connect_peer_done(ep->vi);
    if (VIPL_NOT_DONE == rc) {
        OPAL_THREAD_UNLOCK(&ep->lock);
        return;
    }
    (void) OPAL_THREAD_ADD_FETCH32(&c->num_connecting, -1);
    if (VIPL_SUCCESS != rc) {
        ep->state = MCA_BTL_VIA_EP_FAILED;
        mca_btl_via_endpoint_fail_locked(ep);
        OPAL_THREAD_UNLOCK(&ep->lock);
        mca_btl_via_endpoint_lost(ep, "the connection of the VI failed");
        return;
    }
    ep->state = MCA_BTL_VIA_EP_CONNECTED;
    opal_output_verbose(20, c->output, "btl:via: VI to peer %u connected", ep->vpid);
    /* sends queued while connecting leave now, in order; a provider that
     * completes at once (emu) has their completions ready: take them, or
     * a peer that never sends to us leaves them unreaped (and ob1's send
     * waiting for its callback) */
    mca_btl_via_endpoint_flush_locked(ep);
    mca_btl_via_endpoint_reap_locked(ep);
    OPAL_THREAD_UNLOCK(&ep->lock);
    OPAL_THREAD_LOCK(&c->lock);
    if (!ep->active) {
        ep->active = true;
        /* progress walks the list without c->lock: the slot is written
         * before the count that shows it (a sending thread preempted
         * between the two left progress a NULL endpoint) */
        c->active[c->num_active] = ep;
        tc_atomic_store_release(&c->num_active, c->num_active + 1);
    }
    OPAL_THREAD_UNLOCK(&c->lock);
}

/* post one send descriptor carrying frag with `credits` piggy-backed */
static int mca_btl_via_endpoint_post(mca_btl_via_endpoint_t *ep, mca_btl_via_frag_t *frag,
                                     uint32_t credits)
{
    vipl_desc_t *d = &frag->desc;
    const bool inplace = 2 == frag->base.des_segment_count;
    vipl_return_t rc;

    d->control = VIPL_CONTROL_OP_SEND | VIPL_CONTROL_IMMEDIATE;
    /* max_inline 0 (verbs) means no inline send at all: an empty CREDIT
     * message flagged INLINE would be refused */
    if (!inplace && frag->segments[0].seg_len <= ep->dev->nic->attrs.max_inline &&
        0 != ep->dev->nic->attrs.max_inline) {
        /* the NIC copies it at post: no check of the send buffer's
         * registration on the latency path (it is ours, registered once) */
        d->control |= VIPL_CONTROL_INLINE;
    }
    d->imm_data =
        frag->imm | ((credits & MCA_BTL_VIA_IMM_CREDIT_MAX) << MCA_BTL_VIA_IMM_CREDIT_SHIFT);
    d->seg_count = 1;
    d->ds[0].length = (uint32_t) frag->segments[0].seg_len;
    if (inplace) {
        /* the payload from the user's buffer, which the NIC reads without
         * a registration (attrs.local_unregistered) */
        d->seg_count = 2;
        d->ds[1].addr = frag->segments[1].seg_addr.pval;
        d->ds[1].handle = 0;
        d->ds[1].length = (uint32_t) frag->segments[1].seg_len;
    }
    d->context = frag;
    rc = vipl_post_send(ep->vi, d);
    if (OPAL_UNLIKELY(VIPL_ERROR_RESOURCE == rc)) {
        /* the send queue is full: take what completed and try once more */
        mca_btl_via_endpoint_reap_locked(ep);
        rc = vipl_post_send(ep->vi, d);
    }
    if (OPAL_UNLIKELY(VIPL_ERROR_RESOURCE == rc)) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    if (OPAL_UNLIKELY(VIPL_SUCCESS != rc)) {
        /* refused for good (a broken VI, a descriptor the provider will
         * never take): said aloud, and the endpoint fails, instead of
         * retrying what cannot go (a one-way stream stalled on it) */
        opal_output(0, "btl:via: vpid %u: the provider refused a send descriptor (%s)", ep->vpid,
                    vipl_strerror(rc));
        ep->state = MCA_BTL_VIA_EP_FAILED;
        return OPAL_ERR_UNREACH;
    }
    ++ep->outstanding;
    return OPAL_SUCCESS;
}

/* a credit-only message when the peer is about to run out, in the
 * endpoint's own descriptor: the send pool may be all queued sends
 * waiting for the peer's credits, which wait for ours */
static void mca_btl_via_endpoint_credit_locked(mca_btl_via_endpoint_t *ep)
{
    mca_btl_via_frag_t *frag = ep->credit_frag;
    uint32_t piggy;

    if (!tc_credits_need_credit_only(&ep->credits)) {
        return;
    }
    if (ep->credit_busy) {
        mca_btl_via_endpoint_reap_locked(ep);
        if (ep->credit_busy) {
            return; /* flushed again once its completion is reaped */
        }
    }
    frag->segments[0].seg_len = 0;
    if (0 != tc_credits_take_credit_only(&ep->credits, &piggy)) {
        return;
    }
    if (OPAL_SUCCESS != mca_btl_via_endpoint_post(ep, frag, piggy)) {
        tc_credits_cancel_credit_only(&ep->credits, piggy);
        return;
    }
    ep->credit_busy = true;
}

/* Credits back before the peer runs short: once we owe it half of its
 * credits and have no queued send to carry them, an ordinary message
 * without payload (kind RETURN, counted as one) returns them, so that a
 * one-way stream does not stop for a round trip every N-1 messages,
 * which is when the credit-only message of the last credit goes.  Only
 * with N >= 4: the message owes the peer one credit, below N/2, so no
 * answer of the same kind follows it. */
void mca_btl_via_endpoint_return_locked(mca_btl_via_endpoint_t *ep)
{
    static const uint64_t nothing = 0;
    const uint32_t n = ep->credits.n;
    mca_btl_via_frag_t *frag;
    uint32_t piggy;

    if (n < 4 || tc_credits_owed(&ep->credits) < n / 2 || MCA_BTL_VIA_EP_CONNECTED != ep->state ||
        0 != tc_credits_try_send(&ep->credits, &piggy)) {
        return;
    }
    if (NULL != ep->dev->ops->post_inline && 0 != ep->dev->nic->attrs.max_inline) {
        if (VIPL_SUCCESS ==
            vipl_post_inline(ep->vi, &nothing, 0,
                             MCA_BTL_VIA_IMM(MCA_BTL_VIA_KIND_RETURN, 0, piggy))) {
            return;
        }
    } else if (NULL != (frag = mca_btl_via_frag_alloc(ep->dev, ep))) {
        frag->kind = MCA_BTL_VIA_FRAG_INTERNAL;
        frag->imm = MCA_BTL_VIA_IMM(MCA_BTL_VIA_KIND_RETURN, 0, 0);
        frag->segments[0].seg_len = 0;
        if (OPAL_SUCCESS == mca_btl_via_endpoint_post(ep, frag, piggy)) {
            return;
        }
        mca_btl_via_frag_return(frag);
    }
    /* not now: the credit-only message of the last credit still comes */
    tc_credits_cancel(&ep->credits, NULL, piggy);
}

int mca_btl_via_endpoint_try_send_locked(mca_btl_via_endpoint_t *ep, mca_btl_via_frag_t *frag)
{
    uint32_t piggy;

    if (OPAL_UNLIKELY(MCA_BTL_VIA_EP_FAILED == ep->state)) {
        return OPAL_ERR_UNREACH;
    }
    if (OPAL_LIKELY(MCA_BTL_VIA_EP_CONNECTED == ep->state) &&
        0 == tc_credits_try_send(&ep->credits, &piggy)) {
        int rc = mca_btl_via_endpoint_post(ep, frag, piggy);

        if (OPAL_LIKELY(OPAL_SUCCESS == rc)) {
            return OPAL_SUCCESS;
        }
        tc_credits_cancel(&ep->credits, NULL, piggy);
        if (OPAL_ERR_UNREACH == rc) {
            mca_btl_via_endpoint_fail_locked(ep);
            return rc;
        }
    }
    return OPAL_ERR_OUT_OF_RESOURCE;
}

int mca_btl_via_endpoint_send_locked(mca_btl_via_endpoint_t *ep, mca_btl_via_frag_t *frag)
{
    int rc = mca_btl_via_endpoint_try_send_locked(ep, frag);

    if (OPAL_LIKELY(OPAL_ERR_OUT_OF_RESOURCE != rc)) {
        return rc;
    }
    /* no credit (no receive descriptor free at the peer), or not
     * connected yet: wait in order (MPI-BIP's software FIFO) */
    tc_list_item_init(&frag->link);
    tc_credits_defer(&ep->credits, &frag->link);
    return OPAL_SUCCESS;
}

void mca_btl_via_endpoint_flush_locked(mca_btl_via_endpoint_t *ep)
{
    tc_list_item_t *it;
    uint32_t piggy;

    if (MCA_BTL_VIA_EP_CONNECTED != ep->state) {
        return;
    }
    while (NULL != (it = tc_credits_next_ready(&ep->credits, &piggy))) {
        mca_btl_via_frag_t *frag = TC_CONTAINER_OF(it, mca_btl_via_frag_t, link);

        int rc = mca_btl_via_endpoint_post(ep, frag, piggy);

        if (OPAL_SUCCESS != rc) {
            tc_credits_cancel(&ep->credits, it, piggy);
            if (OPAL_ERR_UNREACH == rc) {
                mca_btl_via_endpoint_fail_locked(ep);
                return;
            }
            break;
        }
    }
    mca_btl_via_endpoint_credit_locked(ep);
}

void mca_btl_via_endpoint_reap_locked(mca_btl_via_endpoint_t *ep)
{
    mca_btl_via_component_t *c = &mca_btl_via_component;
    vipl_desc_t *d;
    bool broken = false;

again:
    while (ep->outstanding > 0 && VIPL_SUCCESS == vipl_send_done(ep->vi, &d)) {
        bool failed = 0 != (d->status & VIPL_STATUS_ERROR_MASK);

        --ep->outstanding;
        broken |= failed;
        if (mca_btl_via_ctx_is_rdma(d->context)) {
            mca_btl_via_rdma_op_t *op = mca_btl_via_ctx_rdma(d->context);

            if (failed && OPAL_SUCCESS == op->status) {
                op->status = (d->status & VIPL_STATUS_RDMA_PROT_ERROR) ? OPAL_ERR_BAD_PARAM
                                                                       : OPAL_ERR_UNREACH;
            }
            if (0 == --op->remaining) {
                (void) OPAL_THREAD_ADD_FETCH32(&c->rdma_inflight, -1);
                tc_ompi_done_list_push(&c->completed_rdma, &op->super);
            }
        } else {
            mca_btl_via_frag_t *frag = d->context;

            if (MCA_BTL_VIA_FRAG_CREDIT == frag->kind) {
                ep->credit_busy = false;
                continue;
            }
            if (MCA_BTL_VIA_FRAG_INTERNAL == frag->kind) {
                mca_btl_via_frag_return(frag);
                continue;
            }
            frag->status = failed ? OPAL_ERR_UNREACH : OPAL_SUCCESS;
            tc_ompi_done_list_push(&c->completed_frags, &frag->base.super.super);
        }
    }
    if (OPAL_UNLIKELY(broken) && MCA_BTL_VIA_EP_CONNECTED == ep->state) {
        ep->state = MCA_BTL_VIA_EP_FAILED;
    }
    /* room made: waiting puts and gets go (emu moves them at the next
     * poll of the send queue: now) */
    if (OPAL_UNLIKELY(!opal_list_is_empty(&ep->rdma_wait)) && mca_btl_via_rdma_start_locked(ep) &&
        !ep->dev->poll_sends) {
        goto again;
    }
}

void mca_btl_via_endpoint_fail_locked(mca_btl_via_endpoint_t *ep)
{
    mca_btl_via_component_t *c = &mca_btl_via_component;
    tc_list_item_t *it;

    while (NULL != (it = tc_credits_drain(&ep->credits))) {
        mca_btl_via_frag_t *frag = TC_CONTAINER_OF(it, mca_btl_via_frag_t, link);

        if (MCA_BTL_VIA_FRAG_INTERNAL == frag->kind) {
            mca_btl_via_frag_return(frag);
            continue;
        }
        frag->status = OPAL_ERR_UNREACH;
        tc_ompi_done_list_push(&c->completed_frags, &frag->base.super.super);
    }
    if (!opal_list_is_empty(&ep->rdma_wait) && MCA_BTL_VIA_EP_CONNECTED != ep->state) {
        (void) mca_btl_via_rdma_start_locked(ep);
    }
}
