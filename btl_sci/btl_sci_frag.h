/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * btl_sci_frag.h: send descriptors of btl_sci.  A fragment is private
 * memory holding up to one slot of data; btl_send copies it into the
 * peer's ring slot (or defers it while the ring is full).
 */

#ifndef MCA_BTL_SCI_FRAG_H
#define MCA_BTL_SCI_FRAG_H

#include "btl_sci.h"
#include "btl_sci_endpoint.h"

BEGIN_C_DECLS

typedef struct mca_btl_sci_frag_t {
    mca_btl_base_descriptor_t base;
    /* [0]: bytes in data; [1] (when des_segment_count is 2): the payload
     * prepare_src left in the caller's memory.  ob1 counts what a send
     * delivered from these lengths. */
    mca_btl_base_segment_t segments[2];
    struct mca_btl_base_endpoint_t *endpoint;
    mca_btl_sci_module_t *module; /* whose free list it belongs to */
    uint32_t tagword;             /* kind and tag for the ring slot */
    unsigned char *data;          /* the module's slot_size bytes */
    mca_btl_sci_cookie_t cookie;  /* the send's, while the device reads segments[1] */
} mca_btl_sci_frag_t;

OBJ_CLASS_DECLARATION(mca_btl_sci_frag_t);

/* free-list init callback (ctx: the module): point the fragment at its
 * buffer and its module */
int mca_btl_sci_frag_init(opal_free_list_item_t *item, void *ctx);

/* a fragment of the module that reaches ep */
static inline mca_btl_sci_frag_t *mca_btl_sci_frag_alloc(struct mca_btl_base_endpoint_t *ep)
{
    mca_btl_sci_frag_t *frag = (mca_btl_sci_frag_t *) opal_free_list_get(&ep->module->frags);

    if (OPAL_LIKELY(NULL != frag)) {
        frag->endpoint = ep;
        frag->base.des_segments = frag->segments;
        frag->base.des_segment_count = 1;
        frag->base.des_cbfunc = NULL;
        frag->base.des_cbdata = NULL;
        frag->base.des_context = NULL;
        frag->segments[0].seg_addr.pval = frag->data;
        frag->segments[0].seg_len = 0;
    }
    return frag;
}

static inline void mca_btl_sci_frag_return(mca_btl_sci_frag_t *frag)
{
    opal_free_list_return(&frag->module->frags, (opal_free_list_item_t *) frag);
}

/* the send is done: run the callback the caller asked for, release the
 * fragment if the BTL owns it */
static inline void mca_btl_sci_frag_complete(mca_btl_sci_frag_t *frag, int status)
{
    if (frag->base.des_cbfunc) {
        frag->base.des_cbfunc(&frag->module->super, frag->endpoint, &frag->base, status);
    }
    if (frag->base.des_flags & MCA_BTL_DES_FLAGS_BTL_OWNERSHIP) {
        mca_btl_sci_frag_return(frag);
    }
}

END_C_DECLS

#endif /* MCA_BTL_SCI_FRAG_H */
