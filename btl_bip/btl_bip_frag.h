/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * btl_bip_frag.h: send descriptors of btl_bip. A fragment is either an
 * ob1 fragment (SHORT when it fits a queue slot, else a medium fragment
 * sent by the three-way protocol) or one of the BTL's own control
 * messages (an ACK). Its buffer holds the same-host short limit
 * (btl_bip_short_limit) bytes; larger ones (a SHORT of the ofi reach, a
 * medium fragment) point at the user's data (in place) or at a heap
 * buffer.
 */

#ifndef MCA_BTL_BIP_FRAG_H
#define MCA_BTL_BIP_FRAG_H

#include "btl_bip.h"
#include "btl_bip_endpoint.h"
#include "tc_list.h"

BEGIN_C_DECLS

typedef struct mca_btl_bip_frag_t {
    mca_btl_base_descriptor_t base;
    mca_btl_base_segment_t segments[2];
    struct mca_btl_base_endpoint_t *endpoint;
    tc_list_item_t link; /* the peer's credit FIFO */
    int ctl;             /* MCA_BTL_BIP_SHORT, _REQ or _ACK */
    bool internal;       /* the BTL's own message: no callback */
    uint8_t tag;
    uint64_t seq;          /* REQ number */
    size_t size;           /* bytes of all segments */
    mca_btl_bip_ack_t ack; /* ACK body */
    unsigned char *data;   /* btl_bip_short_limit bytes (free list) */
    void *heap;            /* larger buffer, freed with the frag */
} mca_btl_bip_frag_t;

OBJ_CLASS_DECLARATION(mca_btl_bip_frag_t);

int mca_btl_bip_frag_init(opal_free_list_item_t *item, void *ctx);

static inline mca_btl_bip_frag_t *mca_btl_bip_frag_alloc(struct mca_btl_base_endpoint_t *ep)
{
    mca_btl_bip_frag_t *frag =
        (mca_btl_bip_frag_t *) opal_free_list_get(&mca_btl_bip_component.frags);

    if (OPAL_LIKELY(NULL != frag)) {
        frag->endpoint = ep;
        frag->base.des_segments = frag->segments;
        frag->base.des_segment_count = 1;
        frag->base.des_cbfunc = NULL;
        frag->base.des_cbdata = NULL;
        frag->base.des_context = NULL;
        frag->base.des_flags = 0;
        frag->segments[0].seg_addr.pval = frag->data;
        frag->segments[0].seg_len = 0;
        frag->segments[1].seg_len = 0;
        frag->internal = false;
        frag->heap = NULL;
        frag->size = 0;
    }
    return frag;
}

static inline void mca_btl_bip_frag_return(mca_btl_bip_frag_t *frag)
{
    if (NULL != frag->heap) {
        free(frag->heap);
        frag->heap = NULL;
    }
    opal_free_list_return(&mca_btl_bip_component.frags, (opal_free_list_item_t *) frag);
}

/* the send is done: run the callback, release the fragment if the BTL
 * owns it */
static inline void mca_btl_bip_frag_complete(mca_btl_bip_frag_t *frag, int status)
{
    if (frag->internal) {
        mca_btl_bip_frag_return(frag);
        return;
    }
    if (frag->base.des_cbfunc) {
        frag->base.des_cbfunc(&frag->endpoint->module->super, frag->endpoint, &frag->base, status);
    }
    if (frag->base.des_flags & MCA_BTL_DES_FLAGS_BTL_OWNERSHIP) {
        mca_btl_bip_frag_return(frag);
    }
}

/* hand the completion to progress (callbacks never run inside a send) */
static inline void mca_btl_bip_frag_done_later(mca_btl_bip_frag_t *frag)
{
    if (frag->internal) {
        mca_btl_bip_frag_return(frag);
        return;
    }
    tc_ompi_done_list_push(&mca_btl_bip_component.completed_frags, &frag->base.super.super);
}

END_C_DECLS

#endif /* MCA_BTL_BIP_FRAG_H */
