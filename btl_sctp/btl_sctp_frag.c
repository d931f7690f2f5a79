/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * btl_sctp_frag.c: the fragment class and its free-list initialiser.
 */
#include "opal_config.h"

#include "btl_sctp_frag.h"

static void mca_btl_sctp_frag_construct(mca_btl_sctp_frag_t *frag)
{
    frag->base.des_segments = frag->segments;
    frag->base.des_segment_count = 1;
    frag->endpoint = NULL;
    frag->hdr = NULL;
    frag->size = 0;
    frag->sent = 0;
}

OBJ_CLASS_INSTANCE(mca_btl_sctp_frag_t, mca_btl_base_descriptor_t, mca_btl_sctp_frag_construct,
                   NULL);

int mca_btl_sctp_frag_init(opal_free_list_item_t *item, void *ctx)
{
    mca_btl_sctp_frag_t *frag = (mca_btl_sctp_frag_t *) item;
    opal_free_list_t *list = (opal_free_list_t *) ctx;

    /* the free list allocated a separate buffer: header, then payload */
    frag->hdr = (mca_btl_sctp_hdr_t *) item->ptr;
    frag->my_list = list;
    frag->size = list->fl_payload_buffer_size - MCA_BTL_SCTP_HDR_SIZE;
    frag->segments[0].seg_addr.pval = (void *) (frag->hdr + 1);
    return OPAL_SUCCESS;
}
