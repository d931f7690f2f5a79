/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * btl_bip_recv.c: the receiving side and progress of btl_bip. Progress
 * reads the static receive queue (one consumer), hands SHORT data to ob1
 * in place, answers REQ by posting a receive (MPI-BIP 3.3's three-way
 * protocol: a temporary buffer at the receiver), does the large send an
 * ACK asks for, applies credits after each slot is freed, and completes
 * posted receives as their data lands. Receives beyond max_posted wait in
 * a software FIFO and are ACKed when they leave it (MPI-BIP 3.4).
 */

#include "opal_config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "opal/util/show_help.h"

#include "btl_bip.h"
#include "tc_atomic.h"
#include "tc_mpring.h"
#include "btl_bip_endpoint.h"
#include "btl_bip_frag.h"

OBJ_CLASS_INSTANCE(mca_btl_bip_rreq_t, opal_list_item_t, NULL, NULL);

/* ------------------------------------------------------------------ */
/* posted receives                                                      */

/* the ACK that tells the peer where the data goes, from the receive's
 * fields (read while the receive cannot go away) */
static void mca_btl_bip_ack_fill(const mca_btl_bip_rreq_t *rreq, mca_btl_bip_ack_t *ack)
{
    memset(ack, 0, sizeof(*ack));
    ack->kind = (uint32_t) rreq->kind;
    ack->seq = rreq->seq;
    ack->addr = rreq->remote_addr;
    ack->size = rreq->size;
    ack->handle = rreq->handle;
}

static void mca_btl_bip_ack_send(mca_btl_bip_endpoint_t *ep, const mca_btl_bip_ack_t *ack)
{
    mca_btl_bip_frag_t *frag = mca_btl_bip_frag_alloc(ep);

    if (OPAL_UNLIKELY(NULL == frag)) {
        mca_btl_bip_endpoint_lost(ep, "out of fragments for an ACK");
        return;
    }
    frag->internal = true;
    frag->ctl = MCA_BTL_BIP_ACK;
    frag->ack = *ack;
    if (MCA_BTL_BIP_ACK_GET == ack->kind) {
        mca_btl_bip_count(&mca_btl_bip_component.cnt.get_acks, 1);
    }
    if (OPAL_SUCCESS != mca_btl_bip_endpoint_send_ctl(ep, frag)) {
        mca_btl_bip_frag_return(frag);
    }
}

static void mca_btl_bip_send_ack(mca_btl_bip_rreq_t *rreq)
{
    mca_btl_bip_ack_t ack;

    mca_btl_bip_ack_fill(rreq, &ack);
    mca_btl_bip_ack_send(rreq->ep, &ack);
}

void mca_btl_bip_post_or_defer(mca_btl_bip_rreq_t *rreq)
{
    mca_btl_bip_component_t *c = &mca_btl_bip_component;
    mca_btl_bip_endpoint_t *ep = rreq->ep;
    mca_btl_bip_ack_t ack;
    int rc = -EAGAIN;

    OPAL_THREAD_LOCK(&c->lock);
    if (opal_list_is_empty(&c->recv_fifo)) {
        rc = bip_peer_post_recv(rreq->ep->peer, rreq->buf, rreq->size, &rreq->handle);
    }
    if (0 == rc) {
        rreq->is_posted = true;
        /* once on the list, progress may fail the peer and free the
         * receive: the ACK is made before the lock goes */
        mca_btl_bip_ack_fill(rreq, &ack);
        opal_list_append(&c->posted, &rreq->super);
    } else {
        /* beyond the posted-receive limit: wait in order (3.4) */
        rreq->is_posted = false;
        opal_list_append(&c->recv_fifo, &rreq->super);
        c->cnt.recv_deferred++;
        mca_btl_bip_hwm(&c->cnt.recv_fifo_hwm, opal_list_get_size(&c->recv_fifo));
    }
    OPAL_THREAD_UNLOCK(&c->lock);
    if (0 == rc) {
        mca_btl_bip_ack_send(ep, &ack);
    }
}

static void mca_btl_bip_rreq_complete(mca_btl_bip_rreq_t *rreq)
{
    if (MCA_BTL_BIP_ACK_MEDIUM == rreq->kind) {
        const mca_btl_active_message_callback_t *reg =
            mca_btl_base_active_message_trigger + rreq->tag;
        mca_btl_base_segment_t segment;

        if (OPAL_LIKELY(NULL != reg->cbfunc)) {
            segment.seg_addr.pval = rreq->buf;
            segment.seg_len = rreq->size;
            tc_ompi_deliver(reg, &rreq->ep->module->super, rreq->ep, rreq->tag, &segment, 1);
        }
        free(rreq->buf);
    } else {
        rreq->cbfunc(&rreq->ep->module->super, rreq->ep, rreq->buf,
                     (struct mca_btl_base_registration_handle_t *) rreq->local_handle,
                     rreq->cbcontext, rreq->cbdata, OPAL_SUCCESS);
    }
    OBJ_RELEASE(rreq);
}

int mca_btl_bip_poll_posted(void)
{
    mca_btl_bip_component_t *c = &mca_btl_bip_component;
    opal_list_t done;
    mca_btl_bip_rreq_t *rreq, *next, *ack_chain = NULL, *ack_tail = NULL;
    int count = 0;

    OBJ_CONSTRUCT(&done, opal_list_t);
    OPAL_THREAD_LOCK(&c->lock);
    OPAL_LIST_FOREACH_SAFE(rreq, next, &c->posted, mca_btl_bip_rreq_t)
    {
        long got = NULL != rreq->ep->peer ? bip_peer_recv_test(rreq->ep->peer, rreq->handle) : -1;

        if (got == (long) rreq->size) {
            bip_peer_recv_unpost(rreq->ep->peer, rreq->handle);
            opal_list_remove_item(&c->posted, &rreq->super);
            opal_list_append(&done, &rreq->super);
        }
    }
    /* slots freed: receives waiting in the FIFO may be posted now */
    while (NULL != (rreq = (mca_btl_bip_rreq_t *) opal_list_get_first(&c->recv_fifo)) &&
           &rreq->super != opal_list_get_end(&c->recv_fifo)) {
        if (NULL == rreq->ep->peer ||
            0 != bip_peer_post_recv(rreq->ep->peer, rreq->buf, rreq->size, &rreq->handle)) {
            break;
        }
        (void) opal_list_remove_first(&c->recv_fifo);
        rreq->is_posted = true;
        opal_list_append(&c->posted, &rreq->super);
        /* the ACK goes once the lock is dropped; no data can reach the
         * receive before it, so the receive stays where it is; in FIFO
         * order, as the sender expects its MEDIUM ACKs */
        rreq->next_ack = NULL;
        if (NULL == ack_chain) {
            ack_chain = rreq;
        } else {
            ack_tail->next_ack = rreq;
        }
        ack_tail = rreq;
    }
    OPAL_THREAD_UNLOCK(&c->lock);

    while (NULL != ack_chain) {
        rreq = ack_chain;
        ack_chain = rreq->next_ack;
        mca_btl_bip_send_ack(rreq);
    }
    while (NULL != (rreq = (mca_btl_bip_rreq_t *) opal_list_remove_first(&done))) {
        mca_btl_bip_rreq_complete(rreq);
        ++count;
    }
    OBJ_DESTRUCT(&done);
    return count;
}

/* ------------------------------------------------------------------ */
/* control messages                                                     */

/* a large send the peer asked for by ACK: OPAL_SUCCESS, or the error the
 * send completes with (the peer is already reported to the PML) */
static int mca_btl_bip_do_large(mca_btl_bip_endpoint_t *ep, uint32_t handle,
                                const struct iovec *iov, int iovcnt, size_t size)
{
    int rc = bip_send_large(ep->peer, handle, 0, iov, iovcnt, size);

    if (OPAL_UNLIKELY(0 != rc)) {
        BTL_ERROR(("btl:bip: large send of %zu bytes to local rank %d failed: %s", size,
                   ep->peer_rank, strerror(-rc)));
        mca_btl_bip_endpoint_lost(
            ep, -ESRCH == rc ? "the peer process is gone" : "a large send was refused (bad ACK)");
        return -ESRCH == rc ? OPAL_ERR_UNREACH : OPAL_ERROR;
    }
    mca_btl_bip_count(&mca_btl_bip_component.cnt.bytes_large, size);
    return OPAL_SUCCESS;
}

static void mca_btl_bip_handle_ack(mca_btl_bip_endpoint_t *ep, const mca_btl_bip_ack_t *ack)
{
    if (MCA_BTL_BIP_ACK_MEDIUM == ack->kind) {
        mca_btl_bip_frag_t *frag;
        struct iovec iov[2];
        int rc;

        /* ACKs come in REQ order: it must answer the oldest REQ */
        OPAL_THREAD_LOCK(&ep->lock);
        frag = (mca_btl_bip_frag_t *) opal_list_get_first(&ep->await_ack);
        if (OPAL_UNLIKELY(opal_list_is_empty(&ep->await_ack) || frag->seq != ack->seq ||
                          frag->size != ack->size)) {
            OPAL_THREAD_UNLOCK(&ep->lock);
            mca_btl_bip_endpoint_lost(ep, "ACK for no pending request (protocol error)");
            return;
        }
        (void) opal_list_remove_first(&ep->await_ack);
        OPAL_THREAD_UNLOCK(&ep->lock);
        for (uint32_t i = 0; i < frag->base.des_segment_count; ++i) {
            iov[i].iov_base = frag->segments[i].seg_addr.pval;
            iov[i].iov_len = frag->segments[i].seg_len;
        }
        rc = mca_btl_bip_do_large(ep, ack->handle, iov, (int) frag->base.des_segment_count,
                                  frag->size);
        /* the data is in the receiver's buffer, or the send failed: the
         * PML hears which */
        mca_btl_bip_frag_complete(frag, rc);
    } else if (MCA_BTL_BIP_ACK_GET == ack->kind) {
        struct iovec iov = {.iov_base = (void *) (uintptr_t) ack->addr, .iov_len = ack->size};

        /* the device checks the write against the receive posted there */
        (void) mca_btl_bip_do_large(ep, ack->handle, &iov, 1, ack->size);
    } else {
        mca_btl_bip_endpoint_lost(ep, "unknown ACK kind (protocol error)");
    }
}

static void mca_btl_bip_handle_req(mca_btl_bip_endpoint_t *ep, uint8_t tag,
                                   const mca_btl_bip_req_t *req)
{
    mca_btl_bip_rreq_t *rreq;

    if (OPAL_UNLIKELY(req->size > ep->module->super.btl_max_send_size ||
                      req->size <= ep->module->short_limit)) {
        mca_btl_bip_endpoint_lost(ep, "REQ with a size outside the medium range (protocol error)");
        return;
    }
    rreq = OBJ_NEW(mca_btl_bip_rreq_t);
    if (OPAL_UNLIKELY(NULL == rreq)) {
        mca_btl_bip_endpoint_lost(ep, "out of memory for a receive");
        return;
    }
    /* MPICH's three-way protocol: a temporary buffer at the receiver */
    rreq->buf = malloc(req->size);
    if (OPAL_UNLIKELY(NULL == rreq->buf)) {
        OBJ_RELEASE(rreq);
        mca_btl_bip_endpoint_lost(ep, "out of memory for a receive");
        return;
    }
    rreq->ep = ep;
    rreq->kind = MCA_BTL_BIP_ACK_MEDIUM;
    rreq->size = req->size;
    rreq->seq = req->seq;
    rreq->tag = tag;
    rreq->remote_addr = 0;
    mca_btl_bip_post_or_defer(rreq);
}

/* the slot of the message just peeked goes back to the queue */
static inline void mca_btl_bip_release(mca_btl_bip_component_t *c)
{
    if (NULL != c->shmq && !c->peeked_dev) {
        tc_mpring_release(c->shmq);
    } else {
        c->peeked_dev = false;
        bip_srecv_release(c->dev);
    }
}

/* Next message of the static queue: the shm ring inline when it is the
 * device's only queue (no call on an empty poll), else the device's turn
 * between its queues. The sender's stamp becomes its job rank (a stamp
 * outside the map stays as it is: handle_msg checks every rank). */
static inline int mca_btl_bip_peek(mca_btl_bip_component_t *c, const void **msg, uint32_t *len,
                                   uint32_t *src)
{
    int rc;

    if (NULL == c->shmq) {
        return bip_srecv_peek(c->dev, msg, len, src);
    }
    rc = tc_mpring_peek(c->shmq, msg, len, src);
    if (0 == rc && *src < c->shm_map_len) {
        *src = tc_atomic_load_acquire(&c->shm_map[*src]);
    }
    if (OPAL_UNLIKELY(-EAGAIN == rc && c->ofi_lazy) &&
        0 == (++c->lazy_polls & (MCA_BTL_BIP_LAZY_POLLS - 1))) {
        /* ofi opened for other jobs and nobody there yet: a first
         * message of another job's process is read now and then (each
         * look is a system call of the provider's) */
        rc = bip_srecv_peek_other(c->dev, msg, len, src);
        if (0 == rc) {
            c->peeked_dev = true;
            tc_atomic_store_release(&c->ofi_active, 1);
        }
    }
    return rc;
}

/* one message of the static queue; the slot is released here */
static void mca_btl_bip_handle_msg(const unsigned char *msg, uint32_t len, uint32_t src)
{
    mca_btl_bip_component_t *c = &mca_btl_bip_component;
    mca_btl_bip_endpoint_t *ep;
    mca_btl_bip_hdr_t hdr;

    if (OPAL_UNLIKELY(src >= c->max_eps || src == c->my_vpid || len < sizeof(hdr))) {
        mca_btl_bip_release(c);
        BTL_ERROR(("btl:bip: message from unknown rank %u or too short (%u B) dropped", src, len));
        return;
    }
    ep = c->endpoints + src;
    memcpy(&hdr, msg, sizeof(hdr));
    if (OPAL_UNLIKELY(MCA_BTL_BIP_EP_UNUSED == ep->state && src >= c->nprocs)) {
        /* another job's process met first by its message (5.0's
         * connect/accept adds it with 0 processes): its endpoint now */
        (void) mca_btl_bip_endpoint_of_index(src);
    }
    if (OPAL_UNLIKELY(MCA_BTL_BIP_EP_CONNECTED != ep->state)) {
        mca_btl_bip_release(c);
        return;
    }

    switch (hdr.type) {
    case MCA_BTL_BIP_SHORT: {
        const mca_btl_active_message_callback_t *reg =
            mca_btl_base_active_message_trigger + hdr.tag;

        if (OPAL_UNLIKELY(hdr.len > len - sizeof(hdr) || NULL == reg->cbfunc)) {
            mca_btl_bip_release(c);
            mca_btl_bip_endpoint_lost(ep, "SHORT with a bad length or tag (protocol error)");
            return;
        }
        {
            mca_btl_base_segment_t segment;

            /* in place: zero copy out of the slot */
            segment.seg_addr.pval = (void *) (msg + sizeof(hdr));
            segment.seg_len = hdr.len;
            tc_ompi_deliver(reg, &ep->module->super, ep, hdr.tag, &segment, 1);
        }
        mca_btl_bip_release(c);
        /* credits only after the slot is free */
        mca_btl_bip_endpoint_credits_in(ep, hdr.credits, false);
        break;
    }
    case MCA_BTL_BIP_REQ: {
        mca_btl_bip_req_t req;

        if (OPAL_UNLIKELY(len < sizeof(hdr) + sizeof(req))) {
            mca_btl_bip_release(c);
            mca_btl_bip_endpoint_lost(ep, "short REQ (protocol error)");
            return;
        }
        memcpy(&req, msg + sizeof(hdr), sizeof(req));
        mca_btl_bip_release(c);
        mca_btl_bip_endpoint_credits_in(ep, hdr.credits, false);
        mca_btl_bip_handle_req(ep, hdr.tag, &req);
        break;
    }
    case MCA_BTL_BIP_ACK: {
        mca_btl_bip_ack_t ack;

        if (OPAL_UNLIKELY(len < sizeof(hdr) + sizeof(ack))) {
            mca_btl_bip_release(c);
            mca_btl_bip_endpoint_lost(ep, "short ACK (protocol error)");
            return;
        }
        memcpy(&ack, msg + sizeof(hdr), sizeof(ack));
        mca_btl_bip_release(c);
        mca_btl_bip_endpoint_credits_in(ep, hdr.credits, false);
        mca_btl_bip_handle_ack(ep, &ack);
        break;
    }
    case MCA_BTL_BIP_CREDIT:
        mca_btl_bip_release(c);
        mca_btl_bip_endpoint_credits_in(ep, hdr.credits, true);
        break;
    default:
        mca_btl_bip_release(c);
        mca_btl_bip_endpoint_lost(ep, "unknown control message type (protocol error)");
        break;
    }
}

/* ------------------------------------------------------------------ */
/* progress                                                             */

static void mca_btl_bip_progress_slow(void)
{
    mca_btl_bip_component_t *c = &mca_btl_bip_component;

    for (uint32_t i = 0; i < c->max_eps; ++i) {
        mca_btl_bip_endpoint_t *ep = c->endpoints + i;
        bool waiting;

        if (MCA_BTL_BIP_EP_CONNECTED != ep->state) {
            continue;
        }
        /* only a peer we wait for (credits, an ACK, data) can fail us: one
         * that finalized and left in order is no error */
        OPAL_THREAD_LOCK(&ep->lock);
        waiting = tc_credits_queued(&ep->cr) > 0 || !opal_list_is_empty(&ep->await_ack);
        OPAL_THREAD_UNLOCK(&ep->lock);
        if (!waiting) {
            mca_btl_bip_rreq_t *rreq;

            OPAL_THREAD_LOCK(&c->lock);
            OPAL_LIST_FOREACH(rreq, &c->posted, mca_btl_bip_rreq_t)
            {
                waiting = waiting || rreq->ep == ep;
            }
            OPAL_LIST_FOREACH(rreq, &c->recv_fifo, mca_btl_bip_rreq_t)
            {
                waiting = waiting || rreq->ep == ep;
            }
            OPAL_THREAD_UNLOCK(&c->lock);
        }
        if (waiting && 0 != bip_peer_alive(ep->peer)) {
            mca_btl_bip_endpoint_lost(ep, "the peer process is gone");
        }
    }
}

/* asynchronous btl_get reads (ofi) that finished: their callbacks, from
 * progress only (one thread at a time under the progress guard) */
int mca_btl_bip_reap_reads(void)
{
    mca_btl_bip_component_t *c = &mca_btl_bip_component;
    int count = 0;
    void *cookie;
    int status;

    while (1 == bip_read_reap(c->dev, &cookie, &status)) {
        mca_btl_bip_rget_t *rg = cookie;
        int rc = OPAL_SUCCESS;

        (void) tc_atomic_add_fetch(&c->reads_in_flight, -1);
        if (OPAL_LIKELY(0 == status)) {
            mca_btl_bip_count(&c->cnt.large_reads, 1);
            mca_btl_bip_count(&c->cnt.bytes_read, rg->size);
        } else {
            BTL_ERROR(("btl:bip: large read of %zu bytes from rank %d failed: %s", rg->size,
                       rg->cb.endpoint->peer_rank, strerror(-status)));
            mca_btl_bip_endpoint_lost(rg->cb.endpoint,
                                      -ESRCH == status ? "the peer process is gone"
                                                       : "a large read was refused (bad address)");
            rc = OPAL_ERR_UNREACH;
        }
        tc_ompi_rdma_cb_call(&rg->cb, &rg->cb.endpoint->module->super, rc);
        free(rg);
        ++count;
    }
    return count;
}

/* SHORTs sent in place (bip_ssend_gather) that the provider is done
 * with: their callbacks, from progress only */
int mca_btl_bip_reap_sends(void)
{
    mca_btl_bip_component_t *c = &mca_btl_bip_component;
    int count = 0;
    void *cookie;
    int status;

    while (1 == bip_ssend_reap(c->dev, &cookie, &status)) {
        mca_btl_bip_frag_t *frag = cookie;

        (void) tc_atomic_add_fetch(&c->sends_in_flight, -1);
        if (OPAL_UNLIKELY(0 != status)) {
            mca_btl_bip_endpoint_lost(frag->endpoint, "the peer process is gone");
        }
        mca_btl_bip_frag_complete(frag, 0 == status ? OPAL_SUCCESS : OPAL_ERR_UNREACH);
        ++count;
    }
    return count;
}

/* a send the done list held: its callback now */
static void mca_btl_bip_complete_done(opal_list_item_t *item)
{
    mca_btl_bip_frag_complete((mca_btl_bip_frag_t *) item, OPAL_SUCCESS);
}

int mca_btl_bip_component_progress(void)
{
    mca_btl_bip_component_t *c = &mca_btl_bip_component;
    int count = 0;

    if (OPAL_UNLIKELY(NULL == c->dev)) {
        return 0;
    }
    /* one consumer of the queue at a time (tc_guard_t: acquire to take,
     * release to drop) */
    if (c->threads && !tc_guard_try_enter(&c->progress_guard)) {
        return 0;
    }
    if (OPAL_UNLIKELY(c->ofi_lazy) && 0 != tc_atomic_load_acquire(&c->ofi_active)) {
        /* a peer over ofi: the device's turn between its queues from now
         * on (switched here, where no message is in hand) */
        c->ofi_lazy = false;
        c->shmq = NULL;
    }

    for (unsigned int n = 0; n < c->poll_batch; ++n) {
        const void *msg;
        uint32_t len, src;
        int rc = mca_btl_bip_peek(c, &msg, &len, &src);

        if (OPAL_LIKELY(-EAGAIN == rc)) {
            break;
        }
        if (OPAL_UNLIKELY(0 != rc)) {
            BTL_ERROR(("btl:bip: corrupt slot in the static receive queue"));
            break;
        }
        mca_btl_bip_handle_msg(msg, len, src);
        ++count;
    }

    if (OPAL_UNLIKELY(!opal_list_is_empty(&c->posted) || !opal_list_is_empty(&c->recv_fifo))) {
        count += mca_btl_bip_poll_posted();
    }

    if (0 != tc_atomic_load_acquire(&c->reads_in_flight)) {
        count += mca_btl_bip_reap_reads();
    }

    if (0 != tc_atomic_load_acquire(&c->sends_in_flight)) {
        count += mca_btl_bip_reap_sends();
    }

    if (!tc_ompi_done_list_empty(&c->completed_frags)) {
        count += tc_ompi_done_list_drain(&c->completed_frags, mca_btl_bip_complete_done);
    }

    if (OPAL_UNLIKELY(!c->unlinked)) {
        /* one load until every peer has mapped the queue, then the file goes */
        c->unlinked = 0 != bip_unlink_when_connected(c->dev);
    }
    if (OPAL_UNLIKELY(0 != tc_atomic_load_relaxed(&c->lost_pending))) {
        count += mca_btl_bip_lost_progress();
    }
    if (OPAL_UNLIKELY(0 == --c->progress_calls)) {
        /* a countdown, not a division per call */
        c->progress_calls = c->check_interval;
        mca_btl_bip_progress_slow();
    }

    if (c->threads) {
        tc_guard_leave(&c->progress_guard);
    }
    return count;
}
