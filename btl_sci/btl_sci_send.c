/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * btl_sci_send.c: btl_send and btl_sendi.  Both write header and payload
 * straight into the next slot of the ring in the receiver's segment and
 * then the slot's sequence word (CHEMPI: data, then the ready flag).
 * sendi allocates nothing; send defers its fragment while the ring has no
 * free slot (the slots are the credits) and always completes through the
 * callback from progress.  To a peer through the ofi provider, a payload
 * prepare_src left in the sender's memory goes out from there in the
 * slot's one write, and the fragment completes once it was read.
 */

#include "opal_config.h"

#include <stddef.h>
#include <string.h>

#include "opal/datatype/opal_convertor.h"

#include "tc_ompi.h"

#include "btl_sci.h"
#include "btl_sci_endpoint.h"
#include "btl_sci_frag.h"

bool mca_btl_sci_frag_publish(mca_btl_sci_endpoint_t *ep, void *dst, mca_btl_sci_frag_t *frag)
{
    const mca_btl_base_segment_t *tail = frag->segments + 1;
    const bool inplace = 2 == frag->base.des_segment_count;
    const size_t hlen = frag->segments[0].seg_len;
    const uint32_t len = (uint32_t) (hlen + (inplace ? tail->seg_len : 0));

    memcpy(dst, frag->data, hlen);
    if (inplace) {
        if (ep->write_through) {
            /* header from the shadow, payload from where it is */
            (void) tc_ring_publish(&ep->out, len, frag->tagword);
            if (mca_btl_sci_endpoint_flush_slot_from(ep, hlen, frag)) {
                return true;
            }
            memcpy((unsigned char *) dst + hlen, tail->seg_addr.pval, tail->seg_len);
            mca_btl_sci_endpoint_flush_slot(ep, len);
            return false;
        }
        memcpy((unsigned char *) dst + hlen, tail->seg_addr.pval, tail->seg_len);
    }
    mca_btl_sci_endpoint_publish(ep, len, frag->tagword);
    return false;
}

void mca_btl_sci_send_reaped(mca_btl_sci_cookie_t *cookie, sci_error_t status)
{
    mca_btl_sci_frag_t *frag =
        (mca_btl_sci_frag_t *) ((char *) cookie - offsetof(mca_btl_sci_frag_t, cookie));
    int rc = OPAL_SUCCESS;

    if (OPAL_UNLIKELY(SCI_ERR_OK != status)) {
        mca_btl_sci_endpoint_lost(frag->endpoint, "a send to the process failed (process gone)");
        rc = OPAL_ERR_UNREACH;
    }
    mca_btl_sci_frag_complete(frag, rc);
}

int mca_btl_sci_send(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                     struct mca_btl_base_descriptor_t *descriptor, mca_btl_base_tag_t tag)
{
    mca_btl_sci_component_t *c = &mca_btl_sci_component;
    mca_btl_sci_frag_t *frag = (mca_btl_sci_frag_t *) descriptor;
    void *dst = NULL;

    (void) btl;
    if (OPAL_UNLIKELY(MCA_BTL_SCI_EP_FAILED == endpoint->state)) {
        return OPAL_ERR_UNREACH;
    }
    frag->tagword = MCA_BTL_SCI_TAGWORD(MCA_BTL_SCI_KIND_AM, tag);
    frag->endpoint = endpoint;
    /* ob1 relies on the callback (as with vader): always give it */
    frag->base.des_flags |= MCA_BTL_DES_SEND_ALWAYS_CALLBACK;

    OPAL_THREAD_LOCK(&endpoint->lock);
    if (OPAL_LIKELY(opal_list_is_empty(&endpoint->pending))) {
        dst = mca_btl_sci_endpoint_reserve(endpoint);
    }
    if (OPAL_LIKELY(NULL != dst)) {
        bool posted = mca_btl_sci_frag_publish(endpoint, dst, frag);

        OPAL_THREAD_UNLOCK(&endpoint->lock);
        if (!posted) {
            tc_ompi_done_list_push(&c->completed_frags, &frag->base.super.super);
        }
        return OPAL_SUCCESS;
    }

    /* no free slot (no credit): wait in order in the endpoint's FIFO */
    mca_btl_sci_endpoint_defer(endpoint, frag);
    OPAL_THREAD_UNLOCK(&endpoint->lock);
    return OPAL_SUCCESS;
}

int mca_btl_sci_sendi(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                      struct opal_convertor_t *convertor, void *header, size_t header_size,
                      size_t payload_size, uint8_t order, uint32_t flags, mca_btl_base_tag_t tag,
                      mca_btl_base_descriptor_t **descriptor)
{
    const size_t length = header_size + payload_size;
    unsigned char *dst;

    if (OPAL_UNLIKELY(MCA_BTL_SCI_EP_FAILED == endpoint->state)) {
        /* no descriptor either: ob1 reads it whatever we return */
        if (NULL != descriptor) {
            *descriptor = NULL;
        }
        return OPAL_ERR_UNREACH;
    }
    if (OPAL_UNLIKELY(length > endpoint->module->slot_size)) {
        goto no_resource;
    }

    OPAL_THREAD_LOCK(&endpoint->lock);
    /* deferred frags go first: checked under the lock, or another thread's
     * defer between the check and the reserve would be overtaken */
    dst = OPAL_LIKELY(opal_list_is_empty(&endpoint->pending))
        ? mca_btl_sci_endpoint_reserve(endpoint)
        : NULL;
    if (OPAL_UNLIKELY(NULL == dst)) {
        OPAL_THREAD_UNLOCK(&endpoint->lock);
        goto no_resource;
    }
    /* remote stores: header, then payload, then (publish) the sequence */
    tc_ompi_sendi_copy(dst, header, header_size, convertor, payload_size);
    mca_btl_sci_endpoint_publish(endpoint, (uint32_t) length,
                                 MCA_BTL_SCI_TAGWORD(MCA_BTL_SCI_KIND_AM, tag));
    OPAL_THREAD_UNLOCK(&endpoint->lock);
    return OPAL_SUCCESS;

no_resource:
    /* a descriptor for the caller to pack into and btl_send, which waits
     * for a credit in order: Open MPI 5.0's ob1 sends its control messages
     * (ACK, FIN) through sendi and, without one, parks them on a list that
     * only a later completion retries (a hang once the traffic stops) */
    if (NULL != descriptor) {
        *descriptor = mca_btl_sci_alloc(btl, endpoint, order, length, flags);
    }
    return OPAL_ERR_OUT_OF_RESOURCE;
}
