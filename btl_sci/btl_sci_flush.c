/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * btl_sci_flush.c: the protocol's publish points on a write-through
 * mapping (the ofi provider: SCIMemWrite/SCIFlush instead of stores into
 * mapped remote memory).  A ring slot goes out as one publish: length,
 * tag and payload, then the sequence word the receiver polls, which the
 * owner sees only after the bytes (a payload left in the sender's buffer
 * goes out from there in the same write); the Completed counter is one 8-byte
 * flush, every credit_batch consumed slots.  A failed
 * flush is not reported here: the peer's sequence says so at the next
 * check (the sweep, or a send that waits for a slot).
 */

#include "opal_config.h"

#include "btl_sci.h"
#include "btl_sci_endpoint.h"
#include "btl_sci_frag.h"

void mca_btl_sci_endpoint_flush_slot(mca_btl_sci_endpoint_t *ep, uint32_t len)
{
    const tc_ring_producer_t *p = &ep->out;
    const uint8_t *slot = p->slots + (size_t) ((p->head - 1) & (p->nslots - 1)) * p->stride;
    size_t off = (size_t) (slot - (const uint8_t *) ep->rbase);
    const size_t seq_bytes = sizeof(((tc_ring_slot_hdr_t *) 0)->seq);

    (void) sci_flush_publish(ep->rseg, off + seq_bytes,
                             sizeof(tc_ring_slot_hdr_t) - seq_bytes + len, off);
}

/* the slot just published, its first hlen payload bytes from the shadow
 * and the rest from where frag's second segment lies, in one write;
 * true when the device took it (sci_dma_reap returns the frag once the
 * buffer was read), false when it cannot (the caller copies) */
bool mca_btl_sci_endpoint_flush_slot_from(mca_btl_sci_endpoint_t *ep, size_t hlen,
                                          struct mca_btl_sci_frag_t *frag)
{
    const tc_ring_producer_t *p = &ep->out;
    const uint8_t *slot = p->slots + (size_t) ((p->head - 1) & (p->nslots - 1)) * p->stride;
    size_t off = (size_t) (slot - (const uint8_t *) ep->rbase);
    const size_t seq_bytes = sizeof(((tc_ring_slot_hdr_t *) 0)->seq);

    /* counted first: progress in another thread may reap it at once */
    (void) tc_atomic_add_fetch(&mca_btl_sci_component.dma_posted, 1);
    if (SCI_ERR_OK ==
        sci_flush_publish_from(
            ep->rseg, off + seq_bytes, sizeof(tc_ring_slot_hdr_t) - seq_bytes + hlen,
            frag->segments[1].seg_addr.pval, frag->segments[1].seg_len, off, &frag->cookie)) {
        return true;
    }
    (void) tc_atomic_add_fetch(&mca_btl_sci_component.dma_posted, -1);
    return false;
}

/* Each push of the counter is one more remote write on the wire, so it goes
 * out only every credit_batch consumed slots (never more than half the
 * ring): a sender that finds the ring full has nslots messages in it, and
 * consuming them crosses the batch, so its slots always come back. */
void mca_btl_sci_endpoint_flush_consumed(mca_btl_sci_endpoint_t *ep)
{
    if (ep->in.tail - ep->consumed_pushed < ep->in.batch) {
        return;
    }
    tc_ring_consumer_flush(&ep->in);
    (void) sci_flush(ep->rseg, MCA_BTL_SCI_SEG_CONSUMED_OFF, sizeof(uint64_t));
    ep->consumed_pushed = ep->in.tail;
}
