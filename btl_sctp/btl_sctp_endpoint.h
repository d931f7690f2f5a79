/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * btl_sctp_endpoint.h: per-peer state of btl/sctp.
 *
 * An endpoint holds the socket layer's peer handle and two software
 * queues for fragments the socket could not take yet: control (stream 0,
 * kept in order) and bulk (spread over the other streams). Control
 * fragments always leave first, so a small message never waits behind
 * queued bulk data in the BTL either.
 */
#ifndef MCA_BTL_SCTP_ENDPOINT_H
#define MCA_BTL_SCTP_ENDPOINT_H

#include "opal_config.h"

#include "opal/class/opal_list.h"
#include "opal/util/proc.h"

#include "btl_sctp.h"
#include "btl_sctp_frag.h"

BEGIN_C_DECLS

enum {
    MCA_BTL_SCTP_EP_OK = 0,
    MCA_BTL_SCTP_EP_BYE = 1,   /* the peer said it is finalizing */
    MCA_BTL_SCTP_EP_FAILED = 2 /* the association aborted */
};

struct mca_btl_base_endpoint_t {
    opal_list_item_t super;
    opal_proc_t *proc;
    btl_sctp_peer_t *peer;
    opal_list_t pending_ctrl;
    opal_list_t pending_bulk;
    opal_list_item_t pending_item; /* in the component's pending_eps */
    int on_pending;
    int state;
    int used;             /* we sent to it: say goodbye at finalize */
    int assoc;            /* an association exists (we sent, or it came up
                                    * or brought a message): say goodbye too */
    int leaving;          /* we said goodbye: its loss is no error */
    uint16_t num_streams; /* agreed with the peer */
    uint16_t next_bulk;
    struct mca_btl_sctp_frag_t *partial; /* message the socket took in part */
};
typedef struct mca_btl_base_endpoint_t mca_btl_base_endpoint_t;
typedef mca_btl_base_endpoint_t mca_btl_sctp_endpoint_t;

OBJ_CLASS_DECLARATION(mca_btl_sctp_endpoint_t);

/* Fragments waiting for room in the socket (both queues). */
static inline size_t mca_btl_sctp_endpoint_queued(mca_btl_sctp_endpoint_t *ep)
{
    return opal_list_get_size(&ep->pending_ctrl) + opal_list_get_size(&ep->pending_bulk);
}

/* Send a fragment now or queue it: 1 sent inline, 0 queued, <0 error. */
int mca_btl_sctp_endpoint_send(mca_btl_sctp_endpoint_t *ep, mca_btl_sctp_frag_t *frag);

/* Push queued fragments of every endpoint; returns fragments sent. */
int mca_btl_sctp_endpoint_flush_all(void);

/* The association is gone: fail queued fragments, report the peer. */
void mca_btl_sctp_endpoint_failed(mca_btl_sctp_endpoint_t *ep, const char *why);

END_C_DECLS

#endif /* MCA_BTL_SCTP_ENDPOINT_H */
