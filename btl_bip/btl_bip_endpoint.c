/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * btl_bip_endpoint.c: connection to one peer's queue, and the sending
 * side of MPI-BIP's control messages: credits (section 3.5) with the
 * per-peer software FIFO (section 3.4), forced credit-only messages, and
 * the encoding of SHORT, REQ, ACK and CREDIT into a queue slot.
 */

#include "opal_config.h"

#include <errno.h>
#include <string.h>

#include "opal/util/show_help.h"

#include "btl_bip.h"
#include "btl_bip_endpoint.h"
#include "btl_bip_frag.h"

static void mca_btl_bip_endpoint_construct(mca_btl_bip_endpoint_t *ep)
{
    ep->proc = NULL;
    ep->peer_rank = -1;
    ep->state = MCA_BTL_BIP_EP_UNUSED;
    ep->peer = NULL;
    ep->module = &mca_btl_bip_module;
    ep->next_seq = 0;
    ep->next_ack_seq = 0;
    ep->lost = 0;
    ep->lost_why = NULL;
    memset(&ep->cr, 0, sizeof(ep->cr));
    tc_list_init(&ep->cr.fifo);
    OBJ_CONSTRUCT(&ep->await_ack, opal_list_t);
    OBJ_CONSTRUCT(&ep->lock, opal_mutex_t);
}

static void mca_btl_bip_endpoint_destruct(mca_btl_bip_endpoint_t *ep)
{
    mca_btl_bip_endpoint_disconnect(ep);
    OBJ_DESTRUCT(&ep->await_ack);
    OBJ_DESTRUCT(&ep->lock);
}

OBJ_CLASS_INSTANCE(mca_btl_bip_endpoint_t, opal_object_t, mca_btl_bip_endpoint_construct,
                   mca_btl_bip_endpoint_destruct);

int mca_btl_bip_endpoint_connect(mca_btl_bip_endpoint_t *ep, const bip_peer_info_t *info)
{
    mca_btl_bip_component_t *c = &mca_btl_bip_component;
    int rc;

    OPAL_THREAD_LOCK(&ep->lock);
    if (MCA_BTL_BIP_EP_CONNECTED == ep->state) {
        OPAL_THREAD_UNLOCK(&ep->lock);
        return OPAL_SUCCESS;
    }
    /* every process created its queue before the modex: it is there */
    rc = bip_peer_connect_info(c->dev, info, &ep->peer);
    if (0 != rc) {
        ep->state = MCA_BTL_BIP_EP_FAILED;
        OPAL_THREAD_UNLOCK(&ep->lock);
        opal_show_help("help-mpi-btl-bip.txt", "connect failed", true, opal_process_info.nodename,
                       ep->peer_rank, strerror(-rc));
        return OPAL_ERROR;
    }
    /* the module of the provider that reaches it: ob1 hears of this peer
     * through that module only */
    ep->module = 0 == strcmp(bip_peer_provider(ep->peer), "ofi") ? &mca_btl_bip_ofi_module
                                                                 : &mca_btl_bip_module;
    if (&mca_btl_bip_ofi_module == ep->module) {
        /* progress reads the ofi queue at every call from now on */
        tc_atomic_store_release(&c->ofi_active, 1);
    }
    if (0 == strcmp(bip_peer_provider(ep->peer), "shm") && 2 == c->num_local) {
        /* the peer's queue has no other producer (the node-local ranks are
         * fixed at init), our sends to it hold ep->lock when threads are
         * on, and the credits (returned only after a slot was consumed)
         * keep us off slots in use: claims without a compare-and-swap and
         * without reading the slot (the component set our queue alike) */
        bip_peer_set_sole_sender(ep->peer);
    }
    (void) tc_credits_init(&ep->cr, c->credits);
    ep->state = MCA_BTL_BIP_EP_CONNECTED;
    OPAL_THREAD_UNLOCK(&ep->lock);
    opal_output_verbose(20, c->output, "btl:bip: connected to rank %d (%s)", ep->peer_rank,
                        bip_peer_provider(ep->peer));
    return OPAL_SUCCESS;
}

void mca_btl_bip_endpoint_disconnect(mca_btl_bip_endpoint_t *ep)
{
    tc_list_item_t *it;
    opal_list_item_t *item;

    /* queued sends and sends waiting for an ACK die with the connection */
    while (NULL != (it = tc_credits_drain(&ep->cr))) {
        mca_btl_bip_frag_t *frag = TC_CONTAINER_OF(it, mca_btl_bip_frag_t, link);
        if (frag->internal || (frag->base.des_flags & MCA_BTL_DES_FLAGS_BTL_OWNERSHIP)) {
            mca_btl_bip_frag_return(frag);
        }
    }
    while (NULL != (item = opal_list_remove_first(&ep->await_ack))) {
        mca_btl_bip_frag_t *frag = (mca_btl_bip_frag_t *) item;
        if (frag->base.des_flags & MCA_BTL_DES_FLAGS_BTL_OWNERSHIP) {
            mca_btl_bip_frag_return(frag);
        }
    }
    if (NULL != ep->peer) {
        bip_peer_disconnect(ep->peer);
        ep->peer = NULL;
    }
    tc_credits_fini(&ep->cr);
    ep->state = MCA_BTL_BIP_EP_UNUSED;
}

/* a SHORT sent from the fragment's memory: our header and ob1's copied
 * into the message's head, the data in place. 0 (sent or in flight: the
 * fragment completes from progress) or -ENOTSUP (copy it instead) */
static int mca_btl_bip_endpoint_post_gather(mca_btl_bip_endpoint_t *ep, mca_btl_bip_frag_t *frag,
                                            uint32_t credits)
{
    mca_btl_bip_component_t *c = &mca_btl_bip_component;
    uint64_t head[BIP_GATHER_HEAD_MAX / 8];
    mca_btl_bip_hdr_t hdr = {.type = MCA_BTL_BIP_SHORT,
                             .tag = frag->tag,
                             .credits = (uint16_t) credits,
                             .len = (uint32_t) frag->size};
    uint32_t head_len = sizeof(hdr);
    const mca_btl_base_segment_t *seg = frag->segments;
    struct iovec iov;
    int rc;

    _Static_assert(BIP_GATHER_HEAD_MAX % 8 == 0, "gather head in whole words");
    memcpy(head, &hdr, sizeof(hdr));
    if (2 == frag->base.des_segment_count) {
        /* prepare_src in place: ob1's header, then the user's data */
        if (seg[0].seg_len > BIP_GATHER_HEAD_MAX - sizeof(hdr)) {
            return -ENOTSUP;
        }
        memcpy((char *) head + sizeof(hdr), seg[0].seg_addr.pval, seg[0].seg_len);
        head_len += (uint32_t) seg[0].seg_len;
        ++seg;
    } else if (1 != frag->base.des_segment_count) {
        return -ENOTSUP;
    }
    iov.iov_base = seg->seg_addr.pval;
    iov.iov_len = seg->seg_len;
    /* counted before the send: a reap in another thread may see it */
    (void) tc_atomic_add_fetch(&c->sends_in_flight, 1);
    rc = bip_ssend_gather(ep->peer, head, head_len, &iov, 1, frag);
    if (1 != rc) {
        (void) tc_atomic_add_fetch(&c->sends_in_flight, -1);
    }
    if (-ENOTSUP == rc || -ENOMEM == rc || -EMSGSIZE == rc) {
        return -ENOTSUP; /* the copying way decides */
    }
    mca_btl_bip_count(&c->cnt.short_sent, 1);
    if (OPAL_UNLIKELY(rc < 0)) {
        /* as a failed publish: the peer is reported, ob1 hears of it */
        mca_btl_bip_endpoint_lost(ep, "the peer process is gone");
    }
    if (1 != rc) {
        mca_btl_bip_frag_done_later(frag);
    }
    return 0;
}

/* a message for the peer's queue: header, then the body */
int mca_btl_bip_endpoint_post(mca_btl_bip_endpoint_t *ep, mca_btl_bip_frag_t *frag,
                              uint32_t credits)
{
    mca_btl_bip_hdr_t *hdr;
    unsigned char *dst;
    uint32_t len = sizeof(*hdr);
    int rc;

    if (MCA_BTL_BIP_SHORT == frag->ctl && ep->module->gather &&
        frag->size >= ep->module->gather_min &&
        -ENOTSUP != mca_btl_bip_endpoint_post_gather(ep, frag, credits)) {
        return 0;
    }
    rc = bip_ssend_reserve(ep->peer, (void **) &dst);
    if (OPAL_UNLIKELY(0 != rc)) {
        /* the credits say there is room: a full queue is a protocol error */
        return rc;
    }
    hdr = (mca_btl_bip_hdr_t *) dst;
    hdr->credits = (uint16_t) credits;
    hdr->len = 0;
    switch (frag->ctl) {
    case MCA_BTL_BIP_SHORT: {
        unsigned char *p = dst + sizeof(*hdr);

        hdr->type = MCA_BTL_BIP_SHORT;
        hdr->tag = frag->tag;
        for (uint32_t i = 0; i < frag->base.des_segment_count; ++i) {
            memcpy(p, frag->segments[i].seg_addr.pval, frag->segments[i].seg_len);
            p += frag->segments[i].seg_len;
        }
        hdr->len = (uint32_t) frag->size;
        len += (uint32_t) frag->size;
        mca_btl_bip_count(&mca_btl_bip_component.cnt.short_sent, 1);
        break;
    }
    case MCA_BTL_BIP_REQ: {
        mca_btl_bip_req_t req = {.seq = frag->seq, .size = frag->size};

        hdr->type = MCA_BTL_BIP_REQ;
        hdr->tag = frag->tag;
        memcpy(dst + sizeof(*hdr), &req, sizeof(req));
        len += sizeof(req);
        mca_btl_bip_count(&mca_btl_bip_component.cnt.req_sent, 1);
        break;
    }
    case MCA_BTL_BIP_ACK:
        hdr->type = MCA_BTL_BIP_ACK;
        hdr->tag = 0;
        memcpy(dst + sizeof(*hdr), &frag->ack, sizeof(frag->ack));
        len += sizeof(frag->ack);
        break;
    default: /* CREDIT: header only */
        hdr->type = MCA_BTL_BIP_CREDIT;
        hdr->tag = 0;
        break;
    }
    (void) bip_ssend_publish(ep->peer, len);

    /* what happens to the fragment once its message is in the queue */
    if (MCA_BTL_BIP_REQ == frag->ctl) {
        /* waits for the receiver's ACK, in REQ order */
        opal_list_append(&ep->await_ack, &frag->base.super.super);
    } else if (MCA_BTL_BIP_SHORT == frag->ctl || MCA_BTL_BIP_ACK == frag->ctl) {
        mca_btl_bip_frag_done_later(frag);
    }
    return 0;
}

static void mca_btl_bip_endpoint_protocol_error(mca_btl_bip_endpoint_t *ep, int rc)
{
    BTL_ERROR(("btl:bip: local rank %d: the static receive queue refused a message the credits "
               "allowed (%s): protocol error",
               ep->peer_rank, strerror(-rc)));
    mca_btl_bip_endpoint_lost(ep, "static receive queue overflow (protocol error)");
}

/* a credit-only message is due: B = N-1, or, to a peer on another host,
 * B >= N/2 (tc_credits.h: a stream then never waits a round trip for the
 * credit-only message of the last credit) */
static inline bool mca_btl_bip_endpoint_owes_credits(const mca_btl_bip_endpoint_t *ep)
{
    return tc_credits_need_credit_only(&ep->cr) ||
        (ep->module->early_return && tc_credits_want_return(&ep->cr));
}

/* queued sends that have credit now, then a forced credit-only message
 * (caller holds ep->lock) */
static void mca_btl_bip_endpoint_flush_locked(mca_btl_bip_endpoint_t *ep)
{
    tc_list_item_t *it;
    uint32_t pb;
    int rc;

    while (NULL != (it = tc_credits_next_ready(&ep->cr, &pb))) {
        mca_btl_bip_frag_t *frag = TC_CONTAINER_OF(it, mca_btl_bip_frag_t, link);

        rc = mca_btl_bip_endpoint_post(ep, frag, pb);
        if (OPAL_UNLIKELY(0 != rc)) {
            tc_credits_cancel(&ep->cr, it, pb);
            mca_btl_bip_endpoint_protocol_error(ep, rc);
            return;
        }
    }
    if (mca_btl_bip_endpoint_owes_credits(ep) && 0 == tc_credits_take_credit_only(&ep->cr, &pb)) {
        mca_btl_bip_frag_t credit;

        credit.ctl = MCA_BTL_BIP_CREDIT;
        rc = mca_btl_bip_endpoint_post(ep, &credit, pb);
        if (OPAL_UNLIKELY(0 != rc)) {
            tc_credits_cancel_credit_only(&ep->cr, pb);
            mca_btl_bip_endpoint_protocol_error(ep, rc);
            return;
        }
        mca_btl_bip_count(&mca_btl_bip_component.cnt.credit_only_sent, 1);
    }
}

int mca_btl_bip_endpoint_send_ctl(mca_btl_bip_endpoint_t *ep, mca_btl_bip_frag_t *frag)
{
    mca_btl_bip_component_t *c = &mca_btl_bip_component;
    uint32_t pb;
    int rc;

    OPAL_THREAD_LOCK(&ep->lock);
    if (OPAL_UNLIKELY(MCA_BTL_BIP_EP_CONNECTED != ep->state)) {
        OPAL_THREAD_UNLOCK(&ep->lock);
        return OPAL_ERR_UNREACH;
    }
    if (MCA_BTL_BIP_REQ == frag->ctl) {
        frag->seq = ep->next_seq++;
    }
    if (OPAL_LIKELY(0 == tc_credits_try_send(&ep->cr, &pb))) {
        rc = mca_btl_bip_endpoint_post(ep, frag, pb);
        if (OPAL_UNLIKELY(0 != rc)) {
            tc_credits_cancel(&ep->cr, NULL, pb);
            OPAL_THREAD_UNLOCK(&ep->lock);
            mca_btl_bip_endpoint_protocol_error(ep, rc);
            return OPAL_ERROR;
        }
        OPAL_THREAD_UNLOCK(&ep->lock);
        return OPAL_SUCCESS;
    }
    /* no credit (or earlier sends waiting): the software FIFO, in order */
    tc_credits_defer(&ep->cr, &frag->link);
    mca_btl_bip_count(&c->cnt.deferred, 1);
    mca_btl_bip_hwm(&c->cnt.fifo_hwm, tc_credits_queued(&ep->cr));
    OPAL_THREAD_UNLOCK(&ep->lock);
    return OPAL_SUCCESS;
}

void mca_btl_bip_endpoint_credits_in(mca_btl_bip_endpoint_t *ep, uint32_t credits, bool credit_only)
{
    int rc;

    OPAL_THREAD_LOCK(&ep->lock);
    if (OPAL_UNLIKELY(MCA_BTL_BIP_EP_CONNECTED != ep->state)) {
        OPAL_THREAD_UNLOCK(&ep->lock);
        return;
    }
    rc = credit_only ? tc_credits_received_credit_only(&ep->cr, credits)
                     : tc_credits_received(&ep->cr, credits);
    if (OPAL_UNLIKELY(0 != rc)) {
        OPAL_THREAD_UNLOCK(&ep->lock);
        BTL_ERROR(("btl:bip: local rank %d returned %u credits or sent beyond its credits "
                   "(C=%u B=%u N=%u): protocol error",
                   ep->peer_rank, credits, tc_credits_available(&ep->cr), tc_credits_owed(&ep->cr),
                   ep->cr.n));
        mca_btl_bip_endpoint_lost(ep, "bad credits in a control message");
        return;
    }
    /* most messages leave nothing to do here: no call then */
    if (OPAL_UNLIKELY(tc_credits_queued(&ep->cr) > 0 || mca_btl_bip_endpoint_owes_credits(ep))) {
        mca_btl_bip_endpoint_flush_locked(ep);
    }
    OPAL_THREAD_UNLOCK(&ep->lock);
}
