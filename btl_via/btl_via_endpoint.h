/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/*
 * btl_via_endpoint.h: the per-peer state of btl_via: its VI, the
 * pre-posted receive descriptors (the credits the peer holds), the credit
 * account and FIFO of sends waiting for credit (common/tc_credits), and
 * the helpers that post, reap and flush under the endpoint's lock.
 */

#ifndef MCA_BTL_VIA_ENDPOINT_H
#define MCA_BTL_VIA_ENDPOINT_H

#include "btl_via.h"
#include "btl_via_frag.h"
#include "tc_credits.h"

BEGIN_C_DECLS

enum {
    MCA_BTL_VIA_EP_IDLE = 0,       /* no VI yet: made at the first use */
    MCA_BTL_VIA_EP_CONNECTING = 1, /* receives posted, peer not matched yet */
    MCA_BTL_VIA_EP_CONNECTED = 2,
    MCA_BTL_VIA_EP_FAILED = 3 /* VI in error: the peer went away */
};

/* The network device's receive buffers lie MCA_BTL_VIA_RX_SKEW bytes
 * apart beyond their size (dev->rx_skew), so that their offsets within
 * a page differ from one buffer to the next. ob1 copies a message out of
 * the buffer into the user's; when the user's address lies a few bytes
 * above the source's modulo 4096 (a malloc'd buffer of 128 KiB or more
 * sits at page offset 16, the payload after ob1's 14-byte match header
 * at 14), every load aliases the store just before it and the copy runs
 * at a tenth of its speed (16 KiB in 4.8 us instead of 0.4). With the
 * skew one buffer in 64 has that distance for a given user buffer, not
 * all of them. This host's buffers (4 KiB, copies of up to 4 KiB) stay
 * page-aligned: skewed, each would span two pages, and 1-2 KiB
 * messages were slower. */
#define MCA_BTL_VIA_RX_SKEW 64

/* bytes from one receive buffer of dev to the next */
#define MCA_BTL_VIA_RX_STRIDE(dev) ((size_t) (dev)->recv_size + (dev)->rx_skew)

struct mca_btl_base_endpoint_t {
    struct opal_proc_t *proc;
    uint32_t vpid; /* the peer's index (tc_peers): its vpid in our job, or one after */
    int state;
    mca_btl_via_dev_t *dev; /* the device that reaches the peer */
    int dev_index;          /* its slot (index of registration handles) */
    vipl_vi_t *vi;
    vipl_vi_address_t remote; /* the peer's VI for us (modex) */
    tc_credits_t credits;     /* C, B and the FIFO (MPI-BIP 3.4/3.5) */
    vipl_desc_t *rdescs;      /* recv_descriptors receive descriptors */
    char *rbufs;              /* their buffers: NIC memory */
    vipl_mem_handle_t rhandle;
    uint32_t outstanding; /* send-queue descriptors not reaped */
    /* puts and gets that did not fit the send queue, in order: posted as
     * completions make room (mca_btl_via_rdma_start_locked) */
    opal_list_t rdma_wait;
    /* the credit-only message's own descriptor, outside the pool that
     * queued sends can drain (else both sides wait for credit forever) */
    struct mca_btl_via_frag_t *credit_frag;
    bool credit_busy; /* posted, not reaped yet */
    bool active;      /* on the component's active list */
    int32_t lost;     /* atomic: reported lost */
    opal_mutex_t lock;
};

typedef struct mca_btl_base_endpoint_t mca_btl_via_endpoint_t;

/* the endpoint of vpid, idle: no VI, no buffers yet */
mca_btl_via_endpoint_t *mca_btl_via_endpoint_create(struct opal_proc_t *proc, uint32_t vpid,
                                                    int dev_index, const vipl_vi_address_t *remote);
/* under ep->lock: an idle endpoint's VI (made unless the device made it
 * at init), receive buffers, receives posted, connection requested (the
 * caller polls try_connect); nothing for an endpoint past idle */
int mca_btl_via_endpoint_bring_up_locked(mca_btl_via_endpoint_t *ep);
/* the endpoint is about to carry something: bring it up if idle, look
 * at a pending connection */
void mca_btl_via_endpoint_use(mca_btl_via_endpoint_t *ep);
void mca_btl_via_endpoint_destroy(mca_btl_via_endpoint_t *ep);
/* progress: has the peer matched our connection request? */
void mca_btl_via_endpoint_try_connect(mca_btl_via_endpoint_t *ep);

/* under ep->lock: */
/* send a fragment now, or queue it behind the others until credit comes */
int mca_btl_via_endpoint_send_locked(mca_btl_via_endpoint_t *ep, mca_btl_via_frag_t *frag);
/* send a fragment now, or OPAL_ERR_OUT_OF_RESOURCE with nothing queued
 * (no credit, sends waiting, not connected, or the provider is full) */
int mca_btl_via_endpoint_try_send_locked(mca_btl_via_endpoint_t *ep, mca_btl_via_frag_t *frag);
/* post the queued sends the credits allow, and a credit-only message if
 * the peer needs its credits back */
void mca_btl_via_endpoint_flush_locked(mca_btl_via_endpoint_t *ep);
/* return the credits we owe once they are half the peer's, without
 * waiting for the credit-only message of the last one */
void mca_btl_via_endpoint_return_locked(mca_btl_via_endpoint_t *ep);
/* take completed send-queue descriptors off the VI */
void mca_btl_via_endpoint_reap_locked(mca_btl_via_endpoint_t *ep);
/* the VI broke: fail everything queued */
void mca_btl_via_endpoint_fail_locked(mca_btl_via_endpoint_t *ep);
/* post the waiting puts and gets that now fit the send queue (or fail
 * them when the endpoint did); true when one was posted */
bool mca_btl_via_rdma_start_locked(mca_btl_via_endpoint_t *ep);

END_C_DECLS

#endif /* MCA_BTL_VIA_ENDPOINT_H */
