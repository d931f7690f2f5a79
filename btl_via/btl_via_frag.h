/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/*
 * btl_via_frag.h: send descriptors of btl_via (a VIA send descriptor and
 * a buffer from the registered send pool), and the RDMA operations that
 * carry a put or get as one or more RDMA descriptors.
 */

#ifndef MCA_BTL_VIA_FRAG_H
#define MCA_BTL_VIA_FRAG_H

#include "btl_via.h"
#include "tc_list.h"

BEGIN_C_DECLS

enum {
    MCA_BTL_VIA_FRAG_SEND = 0,     /* handed out by alloc/prepare_src */
    MCA_BTL_VIA_FRAG_INTERNAL = 1, /* sendi: nobody to call */
    MCA_BTL_VIA_FRAG_CREDIT = 2    /* an endpoint's own credit-only message */
};

typedef struct mca_btl_via_frag_t {
    mca_btl_base_descriptor_t base;
    /* [0]: the buffer (ob1's header, and the payload when copied);
     * [1]: a payload sent from the user's buffer (in-place send) */
    mca_btl_base_segment_t segments[2];
    struct mca_btl_base_endpoint_t *endpoint;
    mca_btl_via_dev_t *dev; /* whose send pool the buffer is */
    tc_list_item_t link;    /* in the endpoint's credit FIFO */
    vipl_desc_t desc;
    int kind;
    int status;
    uint32_t imm;        /* kind and tag; credits at post time */
    unsigned char *data; /* dev->recv_size bytes of registered memory */
} mca_btl_via_frag_t;

OBJ_CLASS_DECLARATION(mca_btl_via_frag_t);

/* a device's send buffers: the free list of fragments, grown by chunks
 * of buffers registered on that device (up to free_list_max) */
int mca_btl_via_pool_init(mca_btl_via_dev_t *dev);
void mca_btl_via_pool_fini(mca_btl_via_dev_t *dev);

/* an endpoint's credit-only message: a descriptor without a buffer (the
 * message is its immediate data alone) made outside the send pool, which
 * sends queued for want of the peer's credits may hold whole; OBJ_RELEASE
 * frees it */
mca_btl_via_frag_t *mca_btl_via_credit_frag_new(mca_btl_via_dev_t *dev,
                                                struct mca_btl_base_endpoint_t *ep);

/* a fragment of the device that carries messages to ep */
static inline mca_btl_via_frag_t *mca_btl_via_frag_alloc(mca_btl_via_dev_t *dev,
                                                         struct mca_btl_base_endpoint_t *ep)
{
    mca_btl_via_frag_t *frag = (mca_btl_via_frag_t *) opal_free_list_get(&dev->frags);

    if (OPAL_LIKELY(NULL != frag)) {
        frag->endpoint = ep;
        frag->kind = MCA_BTL_VIA_FRAG_SEND;
        frag->status = OPAL_SUCCESS;
        frag->base.des_segments = frag->segments;
        frag->base.des_segment_count = 1;
        frag->base.des_cbfunc = NULL;
        frag->base.des_cbdata = NULL;
        frag->base.des_context = NULL;
        frag->base.des_flags = 0;
        frag->segments[0].seg_addr.pval = frag->data;
        frag->segments[0].seg_len = 0;
    }
    return frag;
}

static inline void mca_btl_via_frag_return(mca_btl_via_frag_t *frag)
{
    opal_free_list_return(&frag->dev->frags, (opal_free_list_item_t *) frag);
}

/* the send is done: the callback the caller asked for, then the release */
static inline void mca_btl_via_frag_complete(mca_btl_via_frag_t *frag)
{
    if (MCA_BTL_VIA_FRAG_INTERNAL == frag->kind) {
        mca_btl_via_frag_return(frag);
        return;
    }
    if (frag->base.des_cbfunc) {
        frag->base.des_cbfunc(&frag->dev->module->super, frag->endpoint, &frag->base, frag->status);
    }
    if (frag->base.des_flags & MCA_BTL_DES_FLAGS_BTL_OWNERSHIP) {
        mca_btl_via_frag_return(frag);
    }
}

/* a put or get: ndesc RDMA descriptors, done when the last completes */
typedef struct mca_btl_via_rdma_op {
    opal_list_item_t super;
    tc_ompi_rdma_cb_t cb;
    int status;
    uint32_t remaining;
    uint32_t ndesc;
    vipl_desc_t descs[];
} mca_btl_via_rdma_op_t;

/* desc->context: a frag, or an RDMA op with the low bit set */
#define MCA_BTL_VIA_CTX_RDMA 0x1u
static inline bool mca_btl_via_ctx_is_rdma(const void *ctx)
{
    return 0 != ((uintptr_t) ctx & MCA_BTL_VIA_CTX_RDMA);
}
static inline mca_btl_via_rdma_op_t *mca_btl_via_ctx_rdma(void *ctx)
{
    return (mca_btl_via_rdma_op_t *) ((uintptr_t) ctx & ~(uintptr_t) MCA_BTL_VIA_CTX_RDMA);
}

END_C_DECLS

#endif /* MCA_BTL_VIA_FRAG_H */
