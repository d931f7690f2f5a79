/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * btl_sctp_frag.h: send fragments of btl/sctp.
 *
 * A fragment is a descriptor whose first segment points into its own
 * buffer, which holds the wire header followed by the payload (or, for
 * data sent in place, only the PML's header); a second segment, when
 * present, points at the user's contiguous data. The socket layer
 * gathers both into one SCTP message.
 */
#ifndef MCA_BTL_SCTP_FRAG_H
#define MCA_BTL_SCTP_FRAG_H

#include "opal_config.h"

#include "opal/class/opal_free_list.h"
#include "opal/mca/btl/btl.h"

#include "btl_sctp_hdr.h"

BEGIN_C_DECLS

struct mca_btl_base_endpoint_t;

typedef struct mca_btl_sctp_frag_t {
    mca_btl_base_descriptor_t base;
    mca_btl_base_segment_t segments[2]; /* [1]: user data sent in place */
    struct mca_btl_base_endpoint_t *endpoint;
    opal_free_list_t *my_list;
    size_t size; /* payload capacity */
    uint16_t stream;
    size_t sent;             /* bytes of the message the socket took */
    mca_btl_sctp_hdr_t *hdr; /* start of the wire buffer */
} mca_btl_sctp_frag_t;

OBJ_CLASS_DECLARATION(mca_btl_sctp_frag_t);

/* free-list init callback: places hdr in the frag's buffer */
int mca_btl_sctp_frag_init(opal_free_list_item_t *item, void *ctx);

static inline mca_btl_sctp_frag_t *mca_btl_sctp_frag_alloc(opal_free_list_t *list)
{
    return (mca_btl_sctp_frag_t *) opal_free_list_get(list);
}

static inline void mca_btl_sctp_frag_return(mca_btl_sctp_frag_t *frag)
{
    opal_free_list_return(frag->my_list, &frag->base.super);
}

END_C_DECLS

#endif /* MCA_BTL_SCTP_FRAG_H */
