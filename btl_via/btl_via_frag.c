/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/*
 * btl_via_frag.c: the fragment class and each device's send pool: a free
 * list of fragments whose buffers come in chunks of memory registered on
 * that device once (VIA needs the source of a send registered; CHEMPI:
 * never register per message).  The pool grows by a chunk at a time up
 * to btl_via_free_list_max buffers, so a reach with large buffers (the
 * network module's 64 KiB) takes memory only as sends need it.
 */

#include "opal_config.h"

#include <string.h>

#include "btl_via.h"
#include "btl_via_frag.h"

/* buffers per chunk: what the free list asks for at a time */
#define MCA_BTL_VIA_CHUNK_BUFS 32u

static void mca_btl_via_frag_construct(mca_btl_via_frag_t *frag)
{
    frag->endpoint = NULL;
    frag->dev = NULL;
    frag->data = NULL;
    frag->kind = MCA_BTL_VIA_FRAG_SEND;
    frag->status = OPAL_SUCCESS;
    memset(&frag->desc, 0, sizeof(frag->desc));
    frag->base.des_segments = frag->segments;
    frag->base.des_segment_count = 1;
}

OBJ_CLASS_INSTANCE(mca_btl_via_frag_t, mca_btl_base_descriptor_t, mca_btl_via_frag_construct, NULL);

mca_btl_via_frag_t *mca_btl_via_credit_frag_new(mca_btl_via_dev_t *dev,
                                                struct mca_btl_base_endpoint_t *ep)
{
    static uint64_t nothing;
    mca_btl_via_frag_t *frag = OBJ_NEW(mca_btl_via_frag_t);

    if (NULL == frag) {
        return NULL;
    }
    frag->dev = dev;
    frag->endpoint = ep;
    frag->kind = MCA_BTL_VIA_FRAG_CREDIT;
    frag->imm = MCA_BTL_VIA_IMM(MCA_BTL_VIA_KIND_CREDIT, 0, 0);
    frag->segments[0].seg_addr.pval = &nothing;
    frag->segments[0].seg_len = 0;
    frag->desc.seg_count = 1;
    frag->desc.ds[0].addr = &nothing;
    frag->desc.ds[0].handle = 0;
    frag->desc.context = frag;
    return frag;
}

/* under dev->pool_lock: one more chunk of buffers, registered */
static int mca_btl_via_pool_grow_locked(mca_btl_via_dev_t *dev)
{
    mca_btl_via_chunk_t *ch;
    vipl_mem_attrs_t ma = {.ptag = dev->ptag};
    size_t bytes = (size_t) MCA_BTL_VIA_CHUNK_BUFS * dev->recv_size;

    if (dev->num_chunks == dev->max_chunks) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    ch = dev->chunks + dev->num_chunks;
    ch->base = vipl_mem_alloc(dev->nic, bytes);
    if (NULL == ch->base) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    if (VIPL_SUCCESS != vipl_register_mem(dev->nic, ch->base, bytes, &ma, &ch->handle)) {
        vipl_mem_free(dev->nic, ch->base);
        ch->base = NULL;
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    ++dev->num_chunks;
    dev->chunk_used = 0;
    return OPAL_SUCCESS;
}

/* the free list's initialiser: the fragment gets the next buffer */
static int mca_btl_via_frag_init(opal_free_list_item_t *item, void *ctx)
{
    mca_btl_via_dev_t *dev = ctx;
    mca_btl_via_frag_t *frag = (mca_btl_via_frag_t *) item;
    mca_btl_via_chunk_t *ch;
    int rc = OPAL_SUCCESS;

    OPAL_THREAD_LOCK(&dev->pool_lock);
    if (0 == dev->num_chunks || MCA_BTL_VIA_CHUNK_BUFS == dev->chunk_used) {
        rc = mca_btl_via_pool_grow_locked(dev);
    }
    if (OPAL_SUCCESS == rc) {
        ch = dev->chunks + dev->num_chunks - 1;
        frag->data = (unsigned char *) ch->base + (size_t) dev->chunk_used++ * dev->recv_size;
        frag->desc.ds[0].handle = ch->handle;
    }
    OPAL_THREAD_UNLOCK(&dev->pool_lock);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    frag->dev = dev;
    frag->segments[0].seg_addr.pval = frag->data;
    frag->desc.seg_count = 1;
    frag->desc.ds[0].addr = frag->data;
    frag->desc.context = frag;
    return OPAL_SUCCESS;
}

int mca_btl_via_pool_init(mca_btl_via_dev_t *dev)
{
    unsigned int max = mca_btl_via_component.free_list_max;

    dev->max_chunks = (max + MCA_BTL_VIA_CHUNK_BUFS - 1) / MCA_BTL_VIA_CHUNK_BUFS;
    dev->chunks = calloc(dev->max_chunks, sizeof(*dev->chunks));
    if (NULL == dev->chunks) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    OBJ_CONSTRUCT(&dev->pool_lock, opal_mutex_t);
    OBJ_CONSTRUCT(&dev->frags, opal_free_list_t);
    dev->frags_made = true;
    return opal_free_list_init(
        &dev->frags, sizeof(mca_btl_via_frag_t), opal_cache_line_size,
        OBJ_CLASS(mca_btl_via_frag_t), 0, opal_cache_line_size, (int) MCA_BTL_VIA_CHUNK_BUFS,
        (int) (dev->max_chunks * MCA_BTL_VIA_CHUNK_BUFS), (int) MCA_BTL_VIA_CHUNK_BUFS, NULL, 0,
        NULL, mca_btl_via_frag_init, dev);
}

void mca_btl_via_pool_fini(mca_btl_via_dev_t *dev)
{
    if (dev->frags_made) {
        OBJ_DESTRUCT(&dev->frags);
        OBJ_DESTRUCT(&dev->pool_lock);
        dev->frags_made = false;
    }
    for (uint32_t i = 0; i < dev->num_chunks; ++i) {
        (void) vipl_deregister_mem(dev->nic, dev->chunks[i].base, dev->chunks[i].handle);
        vipl_mem_free(dev->nic, dev->chunks[i].base);
    }
    free(dev->chunks);
    dev->chunks = NULL;
    dev->num_chunks = dev->max_chunks = dev->chunk_used = 0;
}
