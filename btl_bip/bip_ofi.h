/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * bip_ofi.h: what the files of the `ofi` provider share (bip_ofi.c:
 * completions, peers and small messages; bip_ofi_open.c: the endpoint's
 * choice, opening and closing; bip_ofi_rma.c: posted receives, large
 * sends and reads, registrations): the device, peer and operation
 * structures and the functions one file calls in another. Nothing
 * outside the provider includes it.
 */

#ifndef BIP_OFI_H
#define BIP_OFI_H

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include "bip_provider.h"
#include "tc_atomic.h"
#include "tc_ofi.h"
#include "btl_bip_hdr.h"

#define BIP_OFI_VERSION FI_VERSION(1, 5)
#define BIP_OFI_IDX_BITS 12u
#define BIP_OFI_IDX_MASK ((1u << BIP_OFI_IDX_BITS) - 1u)
#define BIP_OFI_POLL 16
#define BIP_OFI_NRX 2
#define BIP_OFI_REG_KEY (1ull << 63) /* keys of bip_mem_register; handles below */

enum { BIP_OFI_CTX_RX = 1, BIP_OFI_CTX_TX = 2, BIP_OFI_CTX_OP = 3, BIP_OFI_CTX_GATHER = 4 };
typedef struct bip_ofi_peer bip_ofi_peer_t;

/* what every operation's context starts with */
typedef struct bip_ofi_ctx {
    int kind;
} bip_ofi_ctx_t;

typedef struct bip_ofi_rx {
    bip_ofi_ctx_t ctx;
    char *mem;
    size_t size;
    uint32_t outstanding; /* messages handed out, not released */
    bool posted;          /* the provider holds it */
} bip_ofi_rx_t;

typedef struct bip_ofi_tx {
    bip_ofi_ctx_t ctx;
    struct bip_ofi_tx *next;
    struct bip_ofi_tx *all_next; /* every buffer, freed at close */
    bip_ofi_peer_t *peer;
    uint64_t data[]; /* header + message, 8-byte aligned */
} bip_ofi_tx_t;

/* a large send waited for by its caller, or an asynchronous read
 * (read_start: on dev->reads until reaped) */
typedef struct bip_ofi_op {
    bip_ofi_ctx_t ctx;
    bip_ofi_peer_t *peer;
    uint32_t pending; /* under dev->lock */
    int err;          /* first error (positive libfabric errno) */
    bool abandoned;   /* its caller gave up: the last completion frees it */
    bool async;       /* a read on dev->reads */
    bool finished;    /* async: every piece completed, not reaped yet */
    void *cookie;     /* async: the caller's */
    double deadline;  /* async: reported gone after this */
    struct bip_ofi_op *next, *prev;
} bip_ofi_op_t;

/* a message sent from the caller's memory (bip_ofi_gather.c): the
 * device header and the caller's head are copied here, the rest is sent
 * in place; on dev->gathers while in flight, then on dev->gathers_done
 * until reaped */
typedef struct bip_ofi_gather {
    bip_ofi_ctx_t ctx;
    struct bip_ofi_gather *next, *prev;
    struct bip_ofi_gather *all_next; /* every one, freed at close */
    bip_ofi_peer_t *peer;
    void *cookie;
    double deadline;
    int err;        /* positive libfabric errno of an error completion */
    bool in_flight; /* on dev->gathers */
    bool abandoned; /* reported gone: its completion only frees it */
    uint64_t head[(sizeof(bip_ofi_msg_hdr_t) + BIP_GATHER_HEAD_MAX + 7) / 8];
} bip_ofi_gather_t;

typedef struct bip_ofi_post {
    uint32_t handle; /* 0: free */
    size_t len;
    uint64_t filled; /* atomic: bytes the remote writes reported */
    struct fid_mr *mr;
} bip_ofi_post_t;

typedef struct bip_ofi_msg {
    const char *buf;
    uint32_t len;
    uint8_t rx;
} bip_ofi_msg_t;

typedef struct bip_ofi_dev {
    tc_ofi_rdm_t f; /* fabric, domain, AV, CQ, endpoint */
    pthread_mutex_t lock;
    uint32_t stamp;
    uint32_t jobid;
    int (*resolve)(uint32_t jobid, uint32_t vpid, uint32_t *stamp);
    uint32_t slot_size;
    size_t msg_max; /* header + slot, padded */
    size_t frag_size;
    size_t inject_size;
    uint32_t timeout; /* seconds */
    bip_ofi_rx_t rx[BIP_OFI_NRX];
    bip_ofi_msg_t *ring; /* received, not yet peeked-and-released */
    uint32_t ring_cap, ring_head, ring_count;
    bool cq_drained; /* the last CQ read returned less than a full batch */
    bool cq_fresh;   /* the receive side read the CQ since the last send reap */
    bip_ofi_tx_t *tx_free;
    bip_ofi_tx_t *tx_all;
    bip_ofi_post_t *posted;
    uint32_t max_posted, num_posted, next_gen;
    uint64_t next_key;
    bip_ofi_peer_t *gone; /* disconnected peers: freed at close */
    bip_ofi_op_t *reads;  /* asynchronous reads not reaped yet */
    uint32_t reads_finished;
    uint32_t reap_calls;
    size_t iov_limit;               /* the provider's tx iov_limit */
    bip_ofi_gather_t *gathers;      /* in flight */
    bip_ofi_gather_t *gathers_done; /* completed, not reaped (FIFO) */
    bip_ofi_gather_t *gathers_tail;
    bip_ofi_gather_t *gather_free;
    bip_ofi_gather_t *gather_all;
    uint32_t gather_calls;
    char addr[BIP_ADDR_MAX];
    size_t addrlen;
    char fabric[96]; /* "provider/domain", for diagnostics */
} bip_ofi_dev_t;

struct bip_ofi_peer {
    bip_ofi_dev_t *dev;
    fi_addr_t addr;
    bip_ofi_tx_t *staged;
    bip_ofi_peer_t *next_gone;
    int failed; /* atomic */
};

typedef struct bip_ofi_reg {
    struct fid_mr *mr;
} bip_ofi_reg_t;

/* completions and progress (bip_ofi.c) */
void bip_ofi_repost(bip_ofi_dev_t *dev, bip_ofi_rx_t *rx);
void bip_ofi_peer_fail(bip_ofi_peer_t *peer);
/* read completions; caller holds dev->lock */
void bip_ofi_progress_locked(bip_ofi_dev_t *dev);
void bip_ofi_progress(bip_ofi_dev_t *dev);
double bip_ofi_now(void);
/* after -FI_EAGAIN: read completions, and say whether to try again (false
 * once the peer waited dev->timeout seconds) */
bool bip_ofi_again(bip_ofi_dev_t *dev, const bip_ofi_peer_t *peer, double *deadline,
                   unsigned int *spins);

/* the device (bip_ofi_open.c) */
int bip_ofi_errno(int fi_rc);
int bip_ofi_open(const bip_dev_params_t *p, void **out);
void bip_ofi_close(void *d);
int bip_ofi_probe_large(void *dev);
int bip_ofi_unlink(void *dev);
int bip_ofi_address(void *d, void *buf, size_t *len);
const char *bip_ofi_fabric(const void *d);

/* posted receives, large transfers, registrations (bip_ofi_rma.c) */
void bip_ofi_remote_write(bip_ofi_dev_t *dev, uint64_t data);
/* one piece of op is done (or was never issued); caller holds dev->lock */
void bip_ofi_op_put(bip_ofi_dev_t *dev, bip_ofi_op_t *op);
int bip_ofi_post_recv(void *d, void *buf, size_t len, uint32_t *handle);
long bip_ofi_recv_test(void *d, uint32_t handle);
void bip_ofi_recv_unpost(void *d, uint32_t handle);
int bip_ofi_send_large(void *p, uint32_t handle, size_t offset, const struct iovec *iov, int iovcnt,
                       size_t len);
int bip_ofi_read_large(void *p, void *dst, uint64_t src, const bip_rkey_t *key, size_t len);
int bip_ofi_read_start(void *p, void *dst, uint64_t src, const bip_rkey_t *key, size_t len,
                       void *cookie);
int bip_ofi_read_reap(void *d, void **cookie, int *status);
/* messages sent in place (bip_ofi_gather.c) */
int bip_ofi_ssend_gather(void *p, const void *head, uint32_t head_len, const struct iovec *iov,
                         int iovcnt, void *cookie);
int bip_ofi_ssend_reap(void *d, void **cookie, int *status);
/* a gathered send's completion (err: 0 or a positive libfabric errno);
 * caller holds dev->lock */
void bip_ofi_gather_done(bip_ofi_dev_t *dev, bip_ofi_gather_t *g, int err);
void bip_ofi_gather_free_all(bip_ofi_dev_t *dev);
int bip_ofi_register(void *d, void *addr, size_t len, bip_rkey_t *key, void **reg);
void bip_ofi_deregister(void *d, void *reg);

#endif /* BIP_OFI_H */
