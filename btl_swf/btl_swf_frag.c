/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * btl_swf_frag.c: the fragment class and the two fragment free lists
 * (eager-limit and max-send-size buffers).
 */

#include "opal_config.h"

#include "btl_swf.h"
#include "btl_swf_frag.h"

static void mca_btl_swf_frag_construct(mca_btl_swf_frag_t *frag)
{
    frag->base.des_segments = &frag->segment;
    frag->base.des_segment_count = 1;
    frag->segment.seg_addr.pval = NULL;
    frag->segment.seg_len = 0;
    frag->endpoint = NULL;
    frag->list = NULL;
    frag->size = 0;
}

OBJ_CLASS_INSTANCE(mca_btl_swf_frag_t, mca_btl_base_descriptor_t, mca_btl_swf_frag_construct, NULL);

/* The free list hands us the payload buffer in item->ptr; remember its
 * capacity (ctx carries it). */
static int mca_btl_swf_frag_init(opal_free_list_item_t *item, void *ctx)
{
    mca_btl_swf_frag_t *frag = (mca_btl_swf_frag_t *) item;

    frag->size = (size_t) (uintptr_t) ctx;
    frag->segment.seg_addr.pval = item->ptr;
    return OPAL_SUCCESS;
}

/* Sends complete inline, so a fragment comes back at once: a few of
 * each size are enough. */
static int mca_btl_swf_frag_list(opal_free_list_t *list, size_t size, int count)
{
    OBJ_CONSTRUCT(list, opal_free_list_t);
    return opal_free_list_init(list, sizeof(mca_btl_swf_frag_t), opal_cache_line_size,
                               OBJ_CLASS(mca_btl_swf_frag_t), size, opal_cache_line_size, count, -1,
                               count, NULL, 0, NULL, mca_btl_swf_frag_init,
                               (void *) (uintptr_t) size);
}

int mca_btl_swf_frag_lists_init(mca_btl_swf_module_t *module)
{
    mca_btl_swf_component_t *c = &mca_btl_swf_component;
    int rc;

    rc = mca_btl_swf_frag_list(&c->eager_frags, module->super.btl_eager_limit, 16);
    if (OPAL_SUCCESS != rc) {
        OBJ_DESTRUCT(&c->eager_frags);
        return rc;
    }
    rc = mca_btl_swf_frag_list(&c->max_frags, module->super.btl_max_send_size, 2);
    if (OPAL_SUCCESS != rc) {
        OBJ_DESTRUCT(&c->eager_frags);
        OBJ_DESTRUCT(&c->max_frags);
        return rc;
    }
    c->frags_ready = true;
    return OPAL_SUCCESS;
}

void mca_btl_swf_frag_lists_fini(void)
{
    mca_btl_swf_component_t *c = &mca_btl_swf_component;

    if (c->frags_ready) {
        OBJ_DESTRUCT(&c->eager_frags);
        OBJ_DESTRUCT(&c->max_frags);
        c->frags_ready = false;
    }
}
