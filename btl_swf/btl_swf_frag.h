/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * btl_swf_frag.h: send fragments. A fragment owns a buffer of the eager
 * or the max-send size taken from one of two free lists; send writes it
 * to the simulator at once, so a fragment never waits in a queue.
 */
#ifndef MCA_BTL_SWF_FRAG_H
#define MCA_BTL_SWF_FRAG_H

#include "tc_ompi.h"

#include "btl_swf.h"

BEGIN_C_DECLS

typedef struct mca_btl_swf_frag_t {
    mca_btl_base_descriptor_t base;
    mca_btl_base_segment_t segment;
    struct mca_btl_base_endpoint_t *endpoint;
    opal_free_list_t *list; /* where it returns */
    size_t size;            /* capacity of the buffer */
} mca_btl_swf_frag_t;
OBJ_CLASS_DECLARATION(mca_btl_swf_frag_t);

int mca_btl_swf_frag_lists_init(mca_btl_swf_module_t *module);
void mca_btl_swf_frag_lists_fini(void);

static inline mca_btl_swf_frag_t *mca_btl_swf_frag_get(size_t size)
{
    mca_btl_swf_component_t *c = &mca_btl_swf_component;
    opal_free_list_t *list =
        tc_ompi_frag_list(&c->module->super, size, &c->eager_frags, &c->max_frags);
    mca_btl_swf_frag_t *frag;

    if (NULL == list) {
        return NULL;
    }
    frag = (mca_btl_swf_frag_t *) opal_free_list_get(list);
    if (OPAL_UNLIKELY(NULL == frag)) {
        return NULL;
    }
    frag->list = list;
    frag->segment.seg_addr.pval = frag->base.super.ptr;
    frag->segment.seg_len = size;
    frag->base.des_segments = &frag->segment;
    frag->base.des_segment_count = 1;
    frag->base.des_flags = 0;
    frag->base.des_cbfunc = NULL;
    frag->base.des_cbdata = NULL;
    frag->base.order = MCA_BTL_NO_ORDER;
    frag->endpoint = NULL;
    return frag;
}

static inline void mca_btl_swf_frag_return(mca_btl_swf_frag_t *frag)
{
    opal_free_list_return(frag->list, &frag->base.super);
}

END_C_DECLS

#endif /* MCA_BTL_SWF_FRAG_H */
