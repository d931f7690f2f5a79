/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/*
 * vipl_ofi.h: the ofi provider's objects (NIC, VI, CQ group, the
 * connection data of its VIs) shared by vipl_ofi.c (NIC, memory,
 * connections) and vipl_ofi_xfer.c (sends, receives, RDMA and their
 * completions).  Not part of the device API: the BTL sees vipl.h only.
 */

#ifndef VIPL_OFI_H
#define VIPL_OFI_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>

#include "tc_ofi.h"
#include "vipl.h"

#define VIPL_OFI_ADDR_MAGIC 0x3149464fu /* "OFI1" */
#define VIPL_OFI_CONN_MAGIC 0x4e43464fu /* "OFCN" */
#define VIPL_OFI_BELL_MAGIC 0x4c42464fu /* "OFBL": connect to me */
#define VIPL_OFI_BYE_MAGIC 0x5942464fu  /* "OFBY": I disconnect (orderly) */
#define VIPL_OFI_BYE_WAIT_US 250000     /* most we wait for the peer to note our goodbye */
#define VIPL_OFI_SA_BYTES 32
#define VIPL_OFI_VERSION FI_VERSION(1, 5)
#define VIPL_OFI_POLL 8         /* CQ entries read at once */
#define VIPL_OFI_EQ_EVERY 1024u /* CQ group polls between EQ reads once connected */
#define VIPL_OFI_MAX_VIS 0xfffffu
#define VIPL_OFI_BELL_CTX ((uintptr_t) 1 << 30) /* endpoint context: a doorbell */
#define VIPL_OFI_WAIT_EVERY 16u                 /* connect_wait calls between EQ reads when idle */
#define VIPL_OFI_MIN(a, b) ((a) < (b) ? (a) : (b))
#define VIPL_OFI_MAX(a, b) ((a) > (b) ? (a) : (b))

/* desc->prov_ of a receive descriptor */
#define VIPL_OFI_RECV 0x1u  /* posted to the receive queue */
#define VIPL_OFI_AT_FI 0x2u /* its buffer is posted at libfabric */
#define VIPL_OFI_LENT 0x4u  /* completed by a write notice, buffer still posted */

typedef struct vipl_ofi_addr {
    uint32_t magic;
    uint32_t vi_index;
    uint32_t sa_len;
    uint32_t pad_;
    uint8_t sa[VIPL_OFI_SA_BYTES]; /* the NIC's listening address */
} vipl_ofi_addr_t;
_Static_assert(sizeof(vipl_ofi_addr_t) == VIPL_ADDR_BYTES, "ofi address fills a VI address");

/* the connection data of fi_connect */
typedef struct vipl_ofi_conn {
    uint32_t magic;
    uint32_t target_vi; /* the acceptor's VI */
    uint32_t source_vi; /* the connector's VI */
    uint32_t sa_len;
    uint8_t sa[VIPL_OFI_SA_BYTES]; /* the connector's listening address */
    /* the connector's full name (vipl_ops set_names): the acceptor's
     * resolver maps it to target_vi when that is VIPL_DISC_ANY */
    uint64_t name;
} vipl_ofi_conn_t;

typedef struct vipl_ofi_mr {
    struct fid_mr *mr;
    void *desc;
    uint64_t base;
    uint64_t len;
    uint32_t key;
    bool in_use;
} vipl_ofi_mr_t;

typedef struct vipl_ofi_vi vipl_ofi_vi_t;

/* a connection request (or doorbell: info NULL) for a VI that does not
 * exist yet, until the VI is made and asks for the connection */
typedef struct vipl_ofi_waiting {
    struct fi_info *info;
    vipl_ofi_conn_t conn;
    bool reported; /* vipl_connect_wait gave it out */
} vipl_ofi_waiting_t;

typedef struct vipl_ofi_nic {
    vipl_nic_t super;
    struct fi_info *info;
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_eq *eq;
    struct fid_pep *pep;
    vipl_ofi_addr_t me; /* listening address (vi_index unused) */
    bool prov_key;      /* the provider chooses the keys */
    bool mr_local;      /* local buffers need their descriptor */
    uint32_t next_key;
    vipl_ofi_mr_t *mrs;
    uint32_t max_regs;
    uint32_t reg_hint;
    vipl_ofi_vi_t **vis; /* by index (connection data names them) */
    uint32_t cap_vis;
    uint32_t connecting; /* VIs waiting for a connection event */
    vipl_ofi_waiting_t *waiting;
    uint32_t num_waiting, cap_waiting;
    uint32_t wait_polls;
    uint64_t my_name;          /* what connection data names us by */
    vipl_resolve_fn_t resolve; /* NULL: VIPL_DISC_ANY refused */
    void *resolve_ctx;
    pthread_mutex_t lock; /* registrations, VI table, event queue */
    tc_ofi_guard_t guard; /* fi_mr_reg and closes against CQ reads (tc_ofi.h) */
} vipl_ofi_nic_t;

typedef struct vipl_ofi_ptag {
    vipl_ptag_t super;
} vipl_ofi_ptag_t;

/* a group of VIs whose receive completions VipCQDone reports */
typedef struct vipl_ofi_cq {
    vipl_cq_t super;
    vipl_ofi_vi_t **vis;
    uint32_t count;
    uint32_t cap;
    uint32_t next; /* round robin */
    uint32_t polls;
    bool reported; /* the last call reported a completion */
} vipl_ofi_cq_t;

/* a message that landed in a lent buffer, or behind one */
typedef struct vipl_ofi_held {
    vipl_desc_t *d;
    uint32_t len;
    uint32_t status;
    uint32_t imm;
} vipl_ofi_held_t;

struct vipl_ofi_vi {
    vipl_vi_t super;
    vipl_ofi_nic_t *nic;
    uint32_t index;
    uint32_t disc; /* discriminator: names the VI in addresses */
    struct fid_ep *ep;
    struct fid_ep *bell; /* our doorbell (or goodbye) to the peer, until refused */
    bool bye;            /* the peer said goodbye: its close is orderly */
    bool closing;        /* we disconnect: what follows is ours */
    struct fid_cq *cq;
    bool selective;       /* CQ bound with FI_SELECTIVE_COMPLETION */
    uint32_t sends_at_fi; /* sends whose completion libfabric still owes */
    bool cq_fresh;        /* the group's poll read the CQ since the last done call */
    vipl_ofi_cq_t *group;
    struct fi_info *connreq; /* a request that came before our own */
    vipl_ofi_conn_t connreq_data;
    vipl_ofi_addr_t remote;
    bool have_remote;
    int state;
    int error;
    uint32_t send_depth;
    uint32_t recv_depth;
    /* posted receive descriptors in posting order (= libfabric's order) */
    vipl_desc_t **ring;
    uint32_t ring_head;
    uint32_t ring_count;
    /* completions held back behind a lent buffer */
    vipl_ofi_held_t *held;
    uint32_t held_head;
    uint32_t held_count;
    vipl_desc_t *sdone_head, *sdone_tail;
    vipl_desc_t *rdone_head, *rdone_tail;
    pthread_mutex_t lock; /* CQ, queues, state */
};

extern const vipl_ops_t vipl_ofi_ops;

/* vipl_ofi_cm.c: connections (requests, doorbells, goodbyes) */
vipl_ofi_vi_t *vipl_ofi_vi_named(vipl_ofi_nic_t *nic, uint32_t disc);
vipl_return_t vipl_ofi_ep_open(vipl_ofi_vi_t *vi, struct fi_info *info);
void vipl_ofi_accept(vipl_ofi_vi_t *vi, struct fi_info *info, const vipl_ofi_conn_t *conn);
struct fi_info *vipl_ofi_wait_take(vipl_ofi_nic_t *nic, uint32_t disc, const vipl_ofi_addr_t *peer,
                                   vipl_ofi_conn_t *conn);
void vipl_ofi_bell_close(vipl_ofi_vi_t *vi);
void vipl_ofi_poll_eq(vipl_ofi_nic_t *nic);

/* vipl_ofi_xfer.c */
int vipl_ofi_fi_recv(vipl_ofi_vi_t *vi, vipl_desc_t *d);
bool vipl_ofi_local(vipl_ofi_nic_t *nic, const vipl_data_seg_t *ds, void **desc);
void vipl_ofi_release_held(vipl_ofi_vi_t *vi);
void vipl_ofi_ring_remove(vipl_ofi_vi_t *vi, vipl_desc_t *d);
void vipl_ofi_fail_locked(vipl_ofi_vi_t *vi, vipl_vi_error_t why);
void vipl_ofi_poll_vi(vipl_ofi_vi_t *vi);
vipl_return_t vipl_ofi_post_send(vipl_vi_t *base, vipl_desc_t *d);
vipl_return_t vipl_ofi_post_inline(vipl_vi_t *base, const void *buf, uint32_t len, uint32_t imm);
vipl_return_t vipl_ofi_post_recv(vipl_vi_t *base, vipl_desc_t *d);
vipl_return_t vipl_ofi_send_done(vipl_vi_t *base, vipl_desc_t **dp);
vipl_return_t vipl_ofi_recv_done(vipl_vi_t *base, vipl_desc_t **dp);
vipl_return_t vipl_ofi_cq_done(vipl_cq_t *base, vipl_vi_t **vip, bool *is_recv);

#endif /* VIPL_OFI_H */
