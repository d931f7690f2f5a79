/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * btl_bip_endpoint.h: the per-peer state of btl_bip: the connection to
 * the peer's static receive queue, the credit account with its software
 * FIFO (MPI-BIP 3.4 and 3.5), and the medium fragments waiting for their
 * ACK.
 */

#ifndef MCA_BTL_BIP_ENDPOINT_H
#define MCA_BTL_BIP_ENDPOINT_H

#include "btl_bip.h"
#include "tc_credits.h"

BEGIN_C_DECLS

/* RELEASED: a peer on this host that Open MPI gave to another BTL
 * (del_procs, e.g. vader's higher exclusivity); its queue's name is gone
 * once every local peer mapped it, so it is never connected again */
enum {
    MCA_BTL_BIP_EP_UNUSED = 0,
    MCA_BTL_BIP_EP_CONNECTED = 1,
    MCA_BTL_BIP_EP_FAILED = 2,
    MCA_BTL_BIP_EP_RELEASED = 3
};

struct mca_btl_bip_frag_t;

struct mca_btl_base_endpoint_t {
    opal_object_t super;
    struct opal_proc_t *proc;
    int peer_rank;                     /* job rank (vpid) */
    int state;                         /* changed under the endpoint lock */
    bip_peer_t *peer;                  /* the peer's queue and posted receives */
    struct mca_btl_bip_module *module; /* the module of the peer's reach */
    tc_credits_t cr;                   /* C, B and the send FIFO */
    opal_list_t await_ack;             /* medium frags whose REQ went, in order */
    uint64_t next_seq;                 /* next REQ number */
    uint64_t next_ack_seq;             /* the REQ number the next MEDIUM ACK answers */
    opal_mutex_t lock;                 /* all of the above */
    int32_t lost;                      /* atomic: 1 lost (report owed), 2 reported */
    const char *lost_why;
};

typedef struct mca_btl_base_endpoint_t mca_btl_bip_endpoint_t;
OBJ_CLASS_DECLARATION(mca_btl_bip_endpoint_t);

/* connect through the provider that reaches the peer (info: bip_device.h) */
int mca_btl_bip_endpoint_connect(mca_btl_bip_endpoint_t *ep, const bip_peer_info_t *info);
void mca_btl_bip_endpoint_disconnect(mca_btl_bip_endpoint_t *ep);

/* Send a control message (SHORT, REQ or ACK fragment) now if a credit is
 * free and nothing waits before it, else queue it in the peer's FIFO.
 * OPAL_SUCCESS or OPAL_ERR_UNREACH. */
int mca_btl_bip_endpoint_send_ctl(mca_btl_bip_endpoint_t *ep, struct mca_btl_bip_frag_t *frag);

/* After a message from the peer was consumed (slot freed): apply its
 * credits, let queued sends go, send a credit-only message if B = N-1.
 * credit_only: the message was a CREDIT. */
void mca_btl_bip_endpoint_credits_in(mca_btl_bip_endpoint_t *ep, uint32_t credits,
                                     bool credit_only);

/* Write one control message into a reserved slot of the peer's queue
 * (caller holds ep->lock and has accounted the credit). */
int mca_btl_bip_endpoint_post(mca_btl_bip_endpoint_t *ep, struct mca_btl_bip_frag_t *frag,
                              uint32_t credits);

END_C_DECLS

#endif /* MCA_BTL_BIP_ENDPOINT_H */
