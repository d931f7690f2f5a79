/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/*
 * btl_via_frag.c: the fragment class and its free-list initialiser, which
 * hands each new fragment a buffer of the registered send pool.
 */

#include "opal_config.h"

#include <string.h>

#include "btl_via.h"
#include "btl_via_frag.h"

static void mca_btl_via_frag_construct(mca_btl_via_frag_t *frag)
{
    frag->endpoint = NULL;
    frag->data = NULL;
    frag->kind = MCA_BTL_VIA_FRAG_SEND;
    frag->status = OPAL_SUCCESS;
    memset(&frag->desc, 0, sizeof(frag->desc));
    frag->base.des_segments = &frag->segment;
    frag->base.des_segment_count = 1;
}

OBJ_CLASS_INSTANCE(mca_btl_via_frag_t, mca_btl_base_descriptor_t, mca_btl_via_frag_construct, NULL);

int mca_btl_via_frag_init(opal_free_list_item_t *item, void *ctx)
{
    mca_btl_via_component_t *c = &mca_btl_via_component;
    mca_btl_via_frag_t *frag = (mca_btl_via_frag_t *) item;
    size_t index;

    (void) ctx;
    /* buffers come from one pool registered once at init (VIA needs the
     * source of a send registered; CHEMPI: never register per message) */
    OPAL_THREAD_LOCK(&c->pool_lock);
    index = c->send_pool_next;
    if (index < c->send_pool_count) {
        ++c->send_pool_next;
    }
    OPAL_THREAD_UNLOCK(&c->pool_lock);
    if (index >= c->send_pool_count) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    frag->data = (unsigned char *) c->send_pool + index * c->recv_size;
    frag->segment.seg_addr.pval = frag->data;
    frag->desc.seg_count = 1;
    frag->desc.ds[0].addr = frag->data;
    frag->desc.ds[0].handle = 0; /* the endpoint's device's, at post */
    frag->desc.context = frag;
    return OPAL_SUCCESS;
}
