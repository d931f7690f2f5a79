/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * btl_sci_frag.c: the fragment class and its free-list initialiser.
 */

#include "opal_config.h"

#include "btl_sci.h"
#include "btl_sci_frag.h"

static void mca_btl_sci_frag_construct(mca_btl_sci_frag_t *frag)
{
    frag->endpoint = NULL;
    frag->module = NULL;
    frag->data = NULL;
    frag->cookie.kind = MCA_BTL_SCI_COOKIE_SEND;
    frag->tagword = 0;
    frag->base.des_segments = frag->segments;
    frag->base.des_segment_count = 1;
}

OBJ_CLASS_INSTANCE(mca_btl_sci_frag_t, mca_btl_base_descriptor_t, mca_btl_sci_frag_construct, NULL);

int mca_btl_sci_frag_init(opal_free_list_item_t *item, void *ctx)
{
    mca_btl_sci_frag_t *frag = (mca_btl_sci_frag_t *) item;

    /* the free list allocated the module's slot_size bytes for us */
    frag->module = ctx;
    frag->data = (unsigned char *) item->ptr;
    frag->segments[0].seg_addr.pval = frag->data;
    return OPAL_SUCCESS;
}
