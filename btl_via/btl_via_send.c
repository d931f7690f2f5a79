/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/*
 * btl_via_send.c: btl_send and btl_sendi.  A message is one VIA send
 * descriptor from a registered send buffer into the receive descriptor
 * the peer pre-posted; its immediate data carries the tag and the
 * credits we return (btl_via_hdr.h), so the payload is ob1's bytes alone.
 * A send without credit waits in the endpoint's FIFO; send always
 * completes through the callback from progress.  sendi sends now or not
 * at all; when it cannot, it may hand back a descriptor for btl_send
 * (see there why).
 */

#include "opal_config.h"

#include <string.h>

#include "opal/datatype/opal_convertor.h"

#include "btl_via.h"
#include "tc_ompi.h"
#include "btl_via_endpoint.h"
#include "btl_via_frag.h"

/* Before a send: an endpoint without its VI gets one (VIs are made on
 * first use), a connection still pending is looked at now, and credits
 * that arrived are read now, so that the message goes on the wire before
 * the call returns whenever the peer has a receive descriptor for it. A
 * sender that goes on without progress (spinning on shared memory, as an
 * MCS lock over osc/sm does) would otherwise hold it back until its next
 * progress call, and the receiver that waits for it forever. */
static void mca_btl_via_send_ready(struct mca_btl_base_endpoint_t *endpoint)
{
    if (OPAL_UNLIKELY(MCA_BTL_VIA_EP_CONNECTED != endpoint->state)) {
        /* the VI is made at the first message to the peer */
        mca_btl_via_endpoint_use(endpoint);
    }
    if (OPAL_UNLIKELY(tc_credits_available(&endpoint->credits) < 2 ||
                      tc_credits_queued(&endpoint->credits) > 0)) {
        mca_btl_via_harvest_credits();
    }
}

int mca_btl_via_send(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                     struct mca_btl_base_descriptor_t *descriptor, mca_btl_base_tag_t tag)
{
    mca_btl_via_frag_t *frag = (mca_btl_via_frag_t *) descriptor;
    bool waiting;
    int rc;

    (void) btl;
    frag->endpoint = endpoint;
    frag->kind = MCA_BTL_VIA_FRAG_SEND;
    frag->imm = MCA_BTL_VIA_IMM(MCA_BTL_VIA_KIND_AM, tag, 0);
    /* ob1 relies on the callback (as with vader): always give it */
    frag->base.des_flags |= MCA_BTL_DES_SEND_ALWAYS_CALLBACK;

    mca_btl_via_send_ready(endpoint);
    OPAL_THREAD_LOCK(&endpoint->lock);
    rc = mca_btl_via_endpoint_send_locked(endpoint, frag);
    if (OPAL_LIKELY(OPAL_SUCCESS == rc) && !endpoint->dev->poll_sends) {
        /* emu completes a send as it posts it; a network provider later,
         * and its completions are read by progress: a read here would cost
         * the provider a poll of its sockets on every message */
        mca_btl_via_endpoint_reap_locked(endpoint);
    }
    waiting = tc_credits_queued(&endpoint->credits) > 0;
    OPAL_THREAD_UNLOCK(&endpoint->lock);
    if (OPAL_UNLIKELY(waiting)) {
        /* queued: credits that came in meanwhile send it now (the sender
         * may make no progress call before the receiver needs it) */
        mca_btl_via_harvest_credits();
    }
    return rc;
}

/* A message that fits the NIC's inline area goes with neither a
 * fragment nor a completion to reap: ob1's header and the payload (read
 * in place) are handed to vipl_post_inline2, which the NIC has copied
 * (gathered) when it returns.  Only for contiguous data (the convertor
 * is not moved), so that the fragment path can still take the message
 * when this one cannot send now. */
static inline int mca_btl_via_sendi_inline(struct mca_btl_base_endpoint_t *ep,
                                           struct opal_convertor_t *convertor, void *header,
                                           size_t header_size, size_t payload_size,
                                           mca_btl_base_tag_t tag)
{
    void *payload = NULL;
    uint32_t piggy;
    int rc = OPAL_ERR_OUT_OF_RESOURCE;

    if (0 != payload_size) {
        opal_convertor_get_current_pointer(convertor, &payload);
    }
    OPAL_THREAD_LOCK(&ep->lock);
    if (OPAL_LIKELY(MCA_BTL_VIA_EP_CONNECTED == ep->state) &&
        0 == tc_credits_try_send(&ep->credits, &piggy)) {
        if (OPAL_LIKELY(VIPL_SUCCESS ==
                        vipl_post_inline2(ep->vi, header, (uint32_t) header_size, payload,
                                          (uint32_t) payload_size,
                                          MCA_BTL_VIA_IMM(MCA_BTL_VIA_KIND_AM, tag, piggy)))) {
            rc = OPAL_SUCCESS;
        } else {
            /* the provider's queue is full, or the VI broke: the
             * fragment path says which and keeps the order */
            tc_credits_cancel(&ep->credits, NULL, piggy);
        }
    }
    OPAL_THREAD_UNLOCK(&ep->lock);
    return rc;
}

int mca_btl_via_sendi(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                      struct opal_convertor_t *convertor, void *header, size_t header_size,
                      size_t payload_size, uint8_t order, uint32_t flags, mca_btl_base_tag_t tag,
                      mca_btl_base_descriptor_t **descriptor)
{
    const size_t length = header_size + payload_size;
    mca_btl_via_frag_t *frag;
    int rc;

    if (OPAL_UNLIKELY(MCA_BTL_VIA_EP_FAILED == endpoint->state)) {
        /* a lost peer: refused for good, and no descriptor (ob1 reads it
         * whatever we return) */
        if (NULL != descriptor) {
            *descriptor = NULL;
        }
        return OPAL_ERR_UNREACH;
    }
    if (OPAL_UNLIKELY(length > endpoint->dev->recv_size)) {
        goto no_resource;
    }
    mca_btl_via_send_ready(endpoint);
    if (OPAL_UNLIKELY(MCA_BTL_VIA_EP_CONNECTED != endpoint->state ||
                      tc_credits_available(&endpoint->credits) < 2 ||
                      tc_credits_queued(&endpoint->credits) > 0)) {
        goto no_resource;
    }
    if (length <= endpoint->dev->nic->attrs.max_inline && length <= VIPL_INLINE2_STACK &&
        NULL != endpoint->dev->ops->post_inline &&
        (0 == payload_size || !opal_convertor_need_buffers(convertor)) &&
        OPAL_SUCCESS ==
            mca_btl_via_sendi_inline(endpoint, convertor, header, header_size, payload_size, tag)) {
        return OPAL_SUCCESS;
    }
    frag = mca_btl_via_frag_alloc(endpoint->dev, endpoint);
    if (OPAL_UNLIKELY(NULL == frag)) {
        goto no_resource;
    }
    frag->kind = MCA_BTL_VIA_FRAG_INTERNAL;
    frag->imm = MCA_BTL_VIA_IMM(MCA_BTL_VIA_KIND_AM, tag, 0);
    tc_ompi_sendi_copy(frag->data, header, header_size, convertor, payload_size);
    frag->segments[0].seg_len = length;

    /* sendi succeeds only for a message on the wire: ob1 completes the
     * request at once, so a message left waiting for credit would need a
     * progress call nobody may make (a process blocked in the runtime, as
     * in MPI_Comm_connect, holds the credits unread that would free it) */
    OPAL_THREAD_LOCK(&endpoint->lock);
    rc = mca_btl_via_endpoint_try_send_locked(endpoint, frag);
    if (OPAL_LIKELY(OPAL_SUCCESS == rc) && !endpoint->dev->poll_sends) {
        mca_btl_via_endpoint_reap_locked(endpoint);
    }
    OPAL_THREAD_UNLOCK(&endpoint->lock);
    if (OPAL_UNLIKELY(OPAL_SUCCESS != rc)) {
        mca_btl_via_frag_return(frag);
        if (OPAL_ERR_UNREACH == rc) {
            if (NULL != descriptor) {
                *descriptor = NULL;
            }
            return rc;
        }
        goto no_resource;
    }
    return OPAL_SUCCESS;

no_resource:
    /* Open MPI 5.0's ob1 sends ACK and FIN through sendi and, handed no
     * descriptor, parks them on a list that only a later send completion
     * retries: with at most one send waiting (maybe a sendi without
     * callback) no completion may come, so hand back a descriptor for
     * btl_send, which queues it in order (t_pingpong and t_probe hung with
     * 4 receive descriptors).  With more waiting, one of them is a send
     * with a callback: refuse, so that the queue cannot take the whole
     * send pool (t_manyreq hung over via-copy) */
    if (NULL != descriptor) {
        size_t queued;

        OPAL_THREAD_LOCK(&endpoint->lock);
        queued = tc_credits_queued(&endpoint->credits);
        OPAL_THREAD_UNLOCK(&endpoint->lock);
        *descriptor = queued < 2 ? mca_btl_via_alloc(btl, endpoint, order, length, flags) : NULL;
    }
    return OPAL_ERR_OUT_OF_RESOURCE;
}
