/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * btl_bip_send.c: the three regimes of MPI-BIP as ob1 reaches them.
 *   btl_sendi, btl_send of <= the reach's short limit: SHORT, data inline
 *       in one slot of the receiver's static queue (MPICH's short protocol);
 *   btl_send of more (ob1's eager and pipeline fragments up to
 *       max_send_size): the three-way protocol, REQ -> ACK (a receive
 *       posted at the receiver) -> the data by a large send;
 *   btl_get (ob1's RGET for messages above the eager limit): rendezvous;
 *       by default (btl_bip_large_read) the receiver reads the data by CMA
 *       in fragments of frag_size; otherwise MPI-BIP's way: the receiver
 *       posts its user buffer and ACKs, the owner of the data writes it in
 *       fragments of frag_size. ob1 cuts a message into groups of
 *       btl_get_limit bytes (one ACK each in the second form).
 * Every control message goes through the credits of btl_bip_endpoint.c.
 */

#include "opal_config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "opal/datatype/opal_convertor.h"

#include "tc_ompi.h"

#include "btl_bip.h"
#include "btl_bip_endpoint.h"
#include "btl_bip_frag.h"

int mca_btl_bip_send(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                     struct mca_btl_base_descriptor_t *descriptor, mca_btl_base_tag_t tag)
{
    mca_btl_bip_frag_t *frag = (mca_btl_bip_frag_t *) descriptor;
    size_t size = 0;

    (void) btl;
    for (uint32_t i = 0; i < frag->base.des_segment_count; ++i) {
        size += frag->segments[i].seg_len;
    }
    frag->size = size;
    frag->tag = tag;
    frag->endpoint = endpoint;
    frag->internal = false;
    frag->ctl = size <= endpoint->module->short_limit ? MCA_BTL_BIP_SHORT : MCA_BTL_BIP_REQ;
    /* ob1 relies on the callback (as with vader): always give it */
    frag->base.des_flags |= MCA_BTL_DES_SEND_ALWAYS_CALLBACK;
    return mca_btl_bip_endpoint_send_ctl(endpoint, frag);
}

int mca_btl_bip_sendi(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                      struct opal_convertor_t *convertor, void *header, size_t header_size,
                      size_t payload_size, uint8_t order, uint32_t flags, mca_btl_base_tag_t tag,
                      mca_btl_base_descriptor_t **descriptor)
{
    const size_t length = header_size + payload_size;
    mca_btl_bip_hdr_t *hdr;
    unsigned char *dst;
    uint32_t pb;

    (void) btl;
    (void) order;
    (void) flags;
    if (OPAL_UNLIKELY(length > endpoint->module->short_limit)) {
        goto no_resource;
    }
    if (OPAL_UNLIKELY(MCA_BTL_BIP_EP_FAILED == endpoint->state)) {
        /* no descriptor either: ob1 reads it whatever we return */
        if (NULL != descriptor) {
            *descriptor = NULL;
        }
        return OPAL_ERR_UNREACH;
    }
    OPAL_THREAD_LOCK(&endpoint->lock);
    if (OPAL_UNLIKELY(MCA_BTL_BIP_EP_CONNECTED != endpoint->state ||
                      0 != tc_credits_try_send(&endpoint->cr, &pb))) {
        OPAL_THREAD_UNLOCK(&endpoint->lock);
        goto no_resource;
    }
    if (OPAL_UNLIKELY(0 != bip_ssend_reserve(endpoint->peer, (void **) &dst))) {
        /* cannot happen while the credits are right; let send report it */
        tc_credits_cancel(&endpoint->cr, NULL, pb);
        OPAL_THREAD_UNLOCK(&endpoint->lock);
        goto no_resource;
    }
    hdr = (mca_btl_bip_hdr_t *) dst;
    hdr->type = MCA_BTL_BIP_SHORT;
    hdr->tag = tag;
    hdr->credits = (uint16_t) pb;
    hdr->len = (uint32_t) length;
    dst += sizeof(*hdr);
    tc_ompi_sendi_copy(dst, header, header_size, convertor, payload_size);
    (void) bip_ssend_publish(endpoint->peer, (uint32_t) (sizeof(*hdr) + length));
    mca_btl_bip_count(&mca_btl_bip_component.cnt.short_sent, 1);
    OPAL_THREAD_UNLOCK(&endpoint->lock);
    return OPAL_SUCCESS;

no_resource:
    if (NULL != descriptor) {
        *descriptor = mca_btl_bip_alloc(btl, endpoint, order, length, flags);
    }
    return OPAL_ERR_OUT_OF_RESOURCE;
}

int mca_btl_bip_get(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                    void *local_address, uint64_t remote_address,
                    struct mca_btl_base_registration_handle_t *local_handle,
                    struct mca_btl_base_registration_handle_t *remote_handle, size_t size,
                    int flags, int order, mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext,
                    void *cbdata)
{
    mca_btl_bip_rreq_t *rreq;

    (void) btl;
    (void) remote_handle;
    (void) flags;
    (void) order;
    if (OPAL_UNLIKELY(MCA_BTL_BIP_EP_CONNECTED != endpoint->state)) {
        return OPAL_ERR_UNREACH;
    }
    if (mca_btl_bip_component.large_read &&
        (bip_peer_can_read(endpoint->peer) ||
         (NULL != remote_handle && 0 != remote_handle->key.key))) {
        /* the receiver moves the whole group alone: no ACK, no turn of
         * the sender's progress (the source range is the one ob1 put in
         * its RGET header, as with vader's CMA read; over ofi within the
         * region its handle names). CMA reads within the call; ofi posts
         * its fi_reads and progress runs the callback once they are done */
        mca_btl_bip_rget_t *rg = malloc(sizeof(*rg));
        int rc;

        if (OPAL_UNLIKELY(NULL == rg)) {
            return OPAL_ERR_OUT_OF_RESOURCE;
        }
        rg->cb = tc_ompi_rdma_cb(endpoint, local_address, local_handle, cbfunc, cbcontext, cbdata);
        rg->size = size;
        /* counted before the start: a reap in another thread may see it */
        (void) tc_atomic_add_fetch(&mca_btl_bip_component.reads_in_flight, 1);
        rc = bip_read_start(endpoint->peer, local_address, remote_address,
                            NULL != remote_handle ? &remote_handle->key : NULL, size, rg);
        if (1 == rc) {
            return OPAL_SUCCESS;
        }
        (void) tc_atomic_add_fetch(&mca_btl_bip_component.reads_in_flight, -1);
        free(rg);
        if (OPAL_UNLIKELY(0 != rc)) {
            BTL_ERROR(("btl:bip: large read of %zu bytes from rank %d failed: %s", size,
                       endpoint->peer_rank, strerror(-rc)));
            mca_btl_bip_endpoint_lost(endpoint,
                                      -ESRCH == rc ? "the peer process is gone"
                                                   : "a large read was refused (bad address)");
            return OPAL_ERR_UNREACH;
        }
        /* reads run outside any lock: threads count atomically */
        mca_btl_bip_count(&mca_btl_bip_component.cnt.large_reads, 1);
        mca_btl_bip_count(&mca_btl_bip_component.cnt.bytes_read, size);
        cbfunc(btl, endpoint, local_address, local_handle, cbcontext, cbdata, OPAL_SUCCESS);
        return OPAL_SUCCESS;
    }
    rreq = OBJ_NEW(mca_btl_bip_rreq_t);
    if (OPAL_UNLIKELY(NULL == rreq)) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    rreq->ep = endpoint;
    rreq->kind = MCA_BTL_BIP_ACK_GET;
    rreq->buf = local_address;
    rreq->size = size;
    rreq->remote_addr = remote_address;
    rreq->local_handle = local_handle;
    rreq->cbfunc = cbfunc;
    rreq->cbcontext = cbcontext;
    rreq->cbdata = cbdata;
    /* post the receive (or queue it behind max_posted), then ACK */
    mca_btl_bip_post_or_defer(rreq);
    return OPAL_SUCCESS;
}
