/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * btl_sci_endpoint.h: the per-peer state of btl_sci (segments, the two
 * rings, the doorbell and idle flags, deferred sends) and the inline
 * helpers of the send fast path.
 */

#ifndef MCA_BTL_SCI_ENDPOINT_H
#define MCA_BTL_SCI_ENDPOINT_H

#include "btl_sci.h"
#include "btl_sci_doorbell.h"
#include "tc_ring.h"

BEGIN_C_DECLS

enum {
    MCA_BTL_SCI_EP_UNUSED = 0,     /* not added */
    MCA_BTL_SCI_EP_CONNECTING = 1, /* added, peer's segment not mapped yet */
    MCA_BTL_SCI_EP_CONNECTED = 2,
    MCA_BTL_SCI_EP_FAILED = 3 /* the peer went away */
};

struct mca_btl_base_endpoint_t {
    opal_list_item_t super; /* on the component's pending list */
    struct opal_proc_t *proc;
    int peer_rank; /* node-local rank */
    int peer_pid;
    int state;

    sci_local_segment_t *lseg;   /* L[me][peer]: peer writes, I poll */
    sci_remote_segment_t *rseg;  /* L[peer][me]: I write */
    sci_remote_segment_t *rdoor; /* D[peer] */
    sci_sequence_t *seq;
    /* the module of the peer's reach, and the provider behind it (shm:
     * this host, ofi: any) */
    mca_btl_sci_module_t *module;
    sci_desc_t *sd;
    sci_dma_queue_t *dq;
    char *rbase;        /* the mapping of rseg (ofi: a local shadow) */
    bool write_through; /* stores into rseg need sci_flush (ofi) */
    bool pinned;        /* always polled: no doorbell across hosts */

    tc_ring_producer_t out;   /* my messages to the peer */
    tc_ring_consumer_t in;    /* the peer's messages to me */
    uint64_t consumed_pushed; /* write-through: the counter the peer has */

    /* shared words, accessed through btl_sci_doorbell.h only */
    uint32_t *idle_in;      /* peer: "ring my doorbell" (my segment) */
    uint32_t *idle_out;     /* me: "ring my doorbell" (peer's segment) */
    uint8_t *peer_doorbell; /* my byte in D[peer] */

    bool active; /* on the active list */
    unsigned int empty_polls;

    opal_list_t pending; /* deferred frags, in order */
    int32_t lost;        /* atomic: 1 lost (report owed), 2 reported */
    const char *lost_why;
    bool waiting; /* on the component's pending list */
    opal_mutex_t lock;
};

typedef struct mca_btl_base_endpoint_t mca_btl_sci_endpoint_t;
OBJ_CLASS_DECLARATION(mca_btl_sci_endpoint_t);

/* try to map the peer's segments; OPAL_SUCCESS, OPAL_ERR_RESOURCE_BUSY
 * (not there yet: try again later) or an error.  Called by add_procs and
 * progress only (never from a send). */
int mca_btl_sci_endpoint_connect(mca_btl_sci_endpoint_t *ep);
void mca_btl_sci_endpoint_disconnect(mca_btl_sci_endpoint_t *ep);
/* put the endpoint on the active (polled) list; progress only */
void mca_btl_sci_endpoint_activate(mca_btl_sci_endpoint_t *ep);
/* queue a fragment behind the others (caller holds ep->lock) */
struct mca_btl_sci_frag_t;
/* write a fragment into the slot dst reserved for it and publish it
 * (caller holds ep->lock); true when its payload goes out from the
 * sender's buffer and sci_dma_reap completes it, false when it is in the
 * slot and done (btl_sci_send.c) */
bool mca_btl_sci_frag_publish(mca_btl_sci_endpoint_t *ep, void *dst,
                              struct mca_btl_sci_frag_t *frag);
void mca_btl_sci_endpoint_defer(mca_btl_sci_endpoint_t *ep, struct mca_btl_sci_frag_t *frag);
/* push deferred frags; true when none are left */
bool mca_btl_sci_endpoint_flush_pending(mca_btl_sci_endpoint_t *ep);

/* Is the peer still there?  true while it is (or is still connecting);
 * false once it failed (reported to the PML with why) or left in order
 * (quietly: its finalize is not an error). */
bool mca_btl_sci_endpoint_check_peer(mca_btl_sci_endpoint_t *ep, const char *why);

/* After a publish: if the peer is not polling our ring it asked for a
 * doorbell.  The idle flag is in our own segment: a local load, after a
 * StoreLoad fence (the receiver stores the flag and then polls: without
 * the fence both could miss each other, see btl_sci_doorbell.h). */
static inline void mca_btl_sci_endpoint_ring(mca_btl_sci_endpoint_t *ep)
{
    if (OPAL_UNLIKELY(mca_btl_sci_doorbell_needed(ep->idle_in))) {
        mca_btl_sci_doorbell_ring(ep->peer_doorbell);
    }
}

/* Reserve a slot in the peer's ring (NULL when full or not connected). */
static inline void *mca_btl_sci_endpoint_reserve(mca_btl_sci_endpoint_t *ep)
{
    void *dst;

    if (OPAL_UNLIKELY(MCA_BTL_SCI_EP_CONNECTED != ep->state)) {
        /* not connected yet: the send waits, progress connects */
        return NULL;
    }
    if (OPAL_UNLIKELY(0 != tc_ring_reserve(&ep->out, &dst))) {
        return NULL;
    }
    return dst;
}

/* write-through mappings (btl_sci_flush.c): push the slot just published
 * (its payload and length first, its sequence word last), or the
 * consumer's Completed counter, to the peer */
void mca_btl_sci_endpoint_flush_slot(mca_btl_sci_endpoint_t *ep, uint32_t len);
bool mca_btl_sci_endpoint_flush_slot_from(mca_btl_sci_endpoint_t *ep, size_t hlen,
                                          struct mca_btl_sci_frag_t *frag);
void mca_btl_sci_endpoint_flush_consumed(mca_btl_sci_endpoint_t *ep);

static inline void mca_btl_sci_endpoint_publish(mca_btl_sci_endpoint_t *ep, uint32_t len,
                                                uint32_t tagword)
{
    (void) tc_ring_publish(&ep->out, len, tagword);
    if (OPAL_UNLIKELY(ep->write_through)) {
        mca_btl_sci_endpoint_flush_slot(ep, len);
    }
    mca_btl_sci_endpoint_ring(ep);
    if (OPAL_UNLIKELY(mca_btl_sci_component.prefetch)) {
        /* take ownership of the slot after next now, so that its stores do
         * not wait for the line later; never the next one, which the
         * receiver may be polling */
        const tc_ring_producer_t *p = &ep->out;
        __builtin_prefetch(p->slots + (size_t) ((p->head + 1) & (p->nslots - 1)) * p->stride, 1, 3);
    }
}

END_C_DECLS

#endif /* MCA_BTL_SCI_ENDPOINT_H */
