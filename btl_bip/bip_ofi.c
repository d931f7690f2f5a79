/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * bip_ofi.c: the `ofi` provider of the BIP device API: peers on other
 * hosts over libfabric, one reliable datagram endpoint (FI_EP_RDM,
 * tcp;ofi_rxm by default) per process.
 *
 *   static receive queue   two multi-receive buffers (FI_MULTI_RECV) that
 *                          every sender feeds; a message is handed to the
 *                          protocol in place and a buffer is posted again
 *                          once the provider released it and every message
 *                          in it was released
 *   reserve + publish      a staged buffer sent with fi_inject / fi_send,
 *                          behind a bip_ofi_msg_hdr_t (btl_bip_hdr.h)
 *   posted receive         a memory region with the handle as its key
 *                          (offset addressing, FI_MR_SCALABLE-like
 *                          providers); the sender writes it with
 *                          fi_writedata, the remote CQ data (handle, bytes)
 *                          publishes each fragment to the receiver
 *   read_large             fi_read of the peer's registration
 *                          (bip_mem_register: key and base in bip_rkey_t)
 *   liveness               an error completion of an operation towards a
 *                          peer marks it failed
 * The provider progresses RMA targets only when the target reads its CQ:
 * every call that waits reads it, and the BTL's progress reads it through
 * bip_srecv_peek. One lock guards the CQ and the queue of received
 * messages; libfabric's domain is FI_THREAD_SAFE.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
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

enum { BIP_OFI_CTX_RX = 1, BIP_OFI_CTX_TX = 2, BIP_OFI_CTX_OP = 3 };

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
    uint32_t slot_size;
    size_t msg_max; /* header + slot, padded */
    size_t frag_size;
    size_t inject_size;
    uint32_t timeout; /* seconds */
    bip_ofi_rx_t rx[BIP_OFI_NRX];
    bip_ofi_msg_t *ring; /* received, not yet peeked-and-released */
    uint32_t ring_cap, ring_head, ring_count;
    bip_ofi_tx_t *tx_free;
    bip_ofi_tx_t *tx_all;
    bip_ofi_post_t *posted;
    uint32_t max_posted, num_posted, next_gen;
    uint64_t next_key;
    bip_ofi_peer_t *gone; /* disconnected peers: freed at close */
    bip_ofi_op_t *reads;  /* asynchronous reads not reaped yet */
    uint32_t reads_finished;
    uint32_t reap_calls;
    char addr[BIP_ADDR_MAX];
    size_t addrlen;
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

/* ------------------------------------------------------------------ */
/* completions                                                          */

static void bip_ofi_repost(bip_ofi_dev_t *dev, bip_ofi_rx_t *rx)
{
    struct iovec iov = {.iov_base = rx->mem, .iov_len = rx->size};
    struct fi_msg msg = {.msg_iov = &iov, .iov_count = 1, .addr = FI_ADDR_UNSPEC, .context = rx};

    (void) dev;
    if (rx->posted || 0 != rx->outstanding) {
        return;
    }
    /* -FI_EAGAIN: tried again at the next completion read */
    if (0 == fi_recvmsg(dev->f.ep, &msg, FI_MULTI_RECV)) {
        rx->posted = true;
    }
}

static void bip_ofi_peer_fail(bip_ofi_peer_t *peer)
{
    if (NULL != peer) {
        tc_atomic_store_release(&peer->failed, 1);
    }
}

static void bip_ofi_tx_put(bip_ofi_dev_t *dev, bip_ofi_tx_t *tx)
{
    tx->next = dev->tx_free;
    dev->tx_free = tx;
}

/* a remote write landed in one of our posted receives */
static void bip_ofi_remote_write(bip_ofi_dev_t *dev, uint64_t data)
{
    uint32_t handle = BIP_OFI_WRITE_HANDLE(data), bytes = BIP_OFI_WRITE_BYTES(data);
    uint32_t idx = handle & BIP_OFI_IDX_MASK;
    bip_ofi_post_t *post;
    uint64_t filled;

    /* from the wire: a stale or foreign handle, or more bytes than the
     * receive holds, is ignored (the region's bounds kept the data in) */
    if (idx >= dev->max_posted) {
        return;
    }
    post = dev->posted + idx;
    if (post->handle != handle || 0 == handle) {
        return;
    }
    filled = tc_atomic_load_relaxed(&post->filled);
    if (bytes > post->len - filled) {
        return;
    }
    tc_atomic_store_release(&post->filled, filled + bytes);
}

/* one piece of op is done (or was never issued); caller holds dev->lock */
static void bip_ofi_op_put(bip_ofi_dev_t *dev, bip_ofi_op_t *op)
{
    if (0 != --op->pending) {
        return;
    }
    if (op->abandoned) {
        free(op);
    } else if (op->async) {
        op->finished = true;
        dev->reads_finished++;
    }
}

static void bip_ofi_complete(bip_ofi_dev_t *dev, const struct fi_cq_data_entry *e)
{
    bip_ofi_ctx_t *ctx = e->op_context;

    if (e->flags & FI_REMOTE_CQ_DATA && (e->flags & FI_REMOTE_WRITE || NULL == ctx)) {
        bip_ofi_remote_write(dev, e->data);
        return;
    }
    if (NULL == ctx) {
        return;
    }
    switch (ctx->kind) {
    case BIP_OFI_CTX_RX: {
        bip_ofi_rx_t *rx = (bip_ofi_rx_t *) ctx;

        if ((e->flags & FI_RECV) && 0 != e->len) {
            bip_ofi_msg_t *m = dev->ring + (dev->ring_head + dev->ring_count) % dev->ring_cap;
            const char *b = e->buf;

            /* the provider's pointer must lie in our buffer: anything
             * else is dropped, never read */
            if (b >= rx->mem && b <= rx->mem + rx->size &&
                e->len <= (size_t) (rx->mem + rx->size - b)) {
                m->buf = b;
                m->len = e->len > UINT32_MAX ? UINT32_MAX : (uint32_t) e->len;
                m->rx = (uint8_t) (rx - dev->rx);
                dev->ring_count++;
                rx->outstanding++;
            }
        }
        if (e->flags & FI_MULTI_RECV) {
            rx->posted = false;
            bip_ofi_repost(dev, rx);
        }
        break;
    }
    case BIP_OFI_CTX_TX:
        bip_ofi_tx_put(dev, (bip_ofi_tx_t *) ctx);
        break;
    case BIP_OFI_CTX_OP:
        bip_ofi_op_put(dev, (bip_ofi_op_t *) ctx);
        break;
    default:
        break;
    }
}

static void bip_ofi_complete_err(bip_ofi_dev_t *dev, const struct fi_cq_err_entry *e)
{
    bip_ofi_ctx_t *ctx = e->op_context;

    if (NULL == ctx) {
        return;
    }
    switch (ctx->kind) {
    case BIP_OFI_CTX_RX: {
        bip_ofi_rx_t *rx = (bip_ofi_rx_t *) ctx;

        /* a truncated or failed message: nothing is handed out */
        if (e->flags & FI_MULTI_RECV) {
            rx->posted = false;
            bip_ofi_repost(dev, rx);
        }
        break;
    }
    case BIP_OFI_CTX_TX: {
        bip_ofi_tx_t *tx = (bip_ofi_tx_t *) ctx;

        bip_ofi_peer_fail(tx->peer);
        bip_ofi_tx_put(dev, tx);
        break;
    }
    case BIP_OFI_CTX_OP: {
        bip_ofi_op_t *op = (bip_ofi_op_t *) ctx;

        if (0 == op->err) {
            op->err = 0 != e->err ? e->err : FI_EIO;
        }
        bip_ofi_peer_fail(op->peer);
        bip_ofi_op_put(dev, op);
        break;
    }
    default:
        break;
    }
}

/* read completions (caller holds dev->lock): never more than the ring
 * can take, so no received message is lost */
static void bip_ofi_progress_locked(bip_ofi_dev_t *dev)
{
    struct fi_cq_data_entry e[BIP_OFI_POLL];
    size_t room = dev->ring_cap - dev->ring_count;
    ssize_t n;

    for (int i = 0; i < BIP_OFI_NRX; ++i) {
        bip_ofi_repost(dev, dev->rx + i);
    }
    if (room < BIP_OFI_POLL) {
        /* a multi-receive completion holds one message: room is enough */
        if (0 == room) {
            return;
        }
    }
    n = fi_cq_read(dev->f.cq, e, room < BIP_OFI_POLL ? room : BIP_OFI_POLL);
    if (n > 0) {
        for (ssize_t i = 0; i < n; ++i) {
            bip_ofi_complete(dev, e + i);
        }
    } else if (-FI_EAVAIL == n) {
        struct fi_cq_err_entry err;

        memset(&err, 0, sizeof(err));
        if (fi_cq_readerr(dev->f.cq, &err, 0) > 0) {
            bip_ofi_complete_err(dev, &err);
        }
    }
}

static void bip_ofi_progress(bip_ofi_dev_t *dev)
{
    pthread_mutex_lock(&dev->lock);
    bip_ofi_progress_locked(dev);
    pthread_mutex_unlock(&dev->lock);
}

static double bip_ofi_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

/* after -FI_EAGAIN: read completions, and say whether to try again (the
 * provider may retry a connection to a dead peer for ever: after
 * dev->timeout seconds the caller reports the peer gone) */
static bool bip_ofi_again(bip_ofi_dev_t *dev, double *deadline, unsigned int *spins)
{
    bip_ofi_progress(dev);
    if (*spins > 64) {
        sched_yield();
    }
    if (0 != (++*spins & 1023u)) {
        return true;
    }
    if (0.0 == *deadline) {
        *deadline = bip_ofi_now() + (double) dev->timeout;
        return true;
    }
    return bip_ofi_now() <= *deadline;
}

/* ------------------------------------------------------------------ */
/* device                                                               */

static void bip_ofi_close(void *d);

static int bip_ofi_errno(int fi_rc)
{
    int e = fi_rc < 0 ? -fi_rc : fi_rc;

    return 0 == e ? -EIO : (e >= FI_ERRNO_OFFSET ? -EIO : -e);
}

/* keys are ours (a posted receive's handle), addresses offsets into the
 * region, and an immediate carries 8 bytes */
static bool bip_ofi_accept(const struct fi_info *i, void *arg)
{
    (void) arg;
    return 0 == (i->domain_attr->mr_mode & (FI_MR_PROV_KEY | FI_MR_VIRT_ADDR | FI_MR_LOCAL)) &&
        i->domain_attr->cq_data_size >= 8 && i->domain_attr->mr_key_size >= 8;
}

static int bip_ofi_getinfo(const bip_dev_params_t *p, struct fi_info **out)
{
    struct fi_info *hints = fi_allocinfo(), *list = NULL, *i;
    const char *prov = NULL != p->ofi_prov && '\0' != p->ofi_prov[0] ? p->ofi_prov : "tcp";
    const char *hints_domain =
        NULL != p->ofi_domain && '\0' != p->ofi_domain[0] ? p->ofi_domain : NULL;
    int rc;

    if (NULL == hints) {
        return -ENOMEM;
    }
    hints->ep_attr->type = FI_EP_RDM;
    hints->caps = FI_MSG | FI_RMA | FI_MULTI_RECV | FI_READ | FI_WRITE | FI_REMOTE_READ |
        FI_REMOTE_WRITE | FI_SEND | FI_RECV;
    hints->mode = 0;
    /* the key is ours (a posted receive's handle) and addresses are
     * offsets into the region: only such providers qualify */
    hints->domain_attr->mr_mode = 0;
    hints->domain_attr->threading = FI_THREAD_SAFE;
    hints->tx_attr->msg_order = FI_ORDER_SAS;
    hints->rx_attr->msg_order = FI_ORDER_SAS;
    hints->fabric_attr->prov_name = strdup(prov);
    if (NULL != p->ofi_domain && '\0' != p->ofi_domain[0]) {
        hints->domain_attr->name = strdup(p->ofi_domain);
    }
    /* the tcp provider lists the host's interfaces: while another job
     * adds or removes some, one call can come back empty; try again */
    for (int attempt = 0; attempt < 5; ++attempt) {
        rc = fi_getinfo(BIP_OFI_VERSION, NULL, NULL, 0, hints, &list);
        if (0 == rc && NULL != list) {
            break;
        }
        if (NULL != list) {
            fi_freeinfo(list);
            list = NULL;
        }
        (void) nanosleep(&(struct timespec){.tv_sec = 0, .tv_nsec = 100000000}, NULL);
    }
    fi_freeinfo(hints);
    if (0 != rc || NULL == list) {
        return 0 != rc ? bip_ofi_errno(rc) : -ENODEV;
    }
    /* the named domain, else the best address (tc_ofi.h says why the
     * first entry is never taken blindly) */
    i = tc_ofi_pick(list, hints_domain, bip_ofi_accept, NULL);
    if (NULL == i) {
        fi_freeinfo(list);
        return -ENODEV;
    }
    *out = fi_dupinfo(i);
    fi_freeinfo(list);
    return NULL == *out ? -ENOMEM : 0;
}

/* the multi-receive buffer is released once less than one largest
 * message fits */
static int bip_ofi_setopt(struct fid_ep *ep, void *arg)
{
    const bip_ofi_dev_t *dev = arg;
    size_t min_multi = dev->msg_max;

    return fi_setopt(&ep->fid, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV, &min_multi,
                     sizeof(min_multi));
}

static int bip_ofi_open(const bip_dev_params_t *p, void **out)
{
    bip_ofi_dev_t *dev;
    size_t rxsize;
    int rc;

    if (NULL == p || NULL == out || 0 == p->max_posted || p->max_posted > BIP_OFI_IDX_MASK ||
        0 == p->frag_size || p->slot_size < 16 || p->slot_size > (64u << 20)) {
        return -EINVAL;
    }
    dev = calloc(1, sizeof(*dev));
    if (NULL == dev) {
        return -ENOMEM;
    }
    pthread_mutex_init(&dev->lock, NULL);
    dev->stamp = p->stamp;
    dev->timeout = 0 == p->ofi_timeout ? 60 : p->ofi_timeout;
    dev->slot_size = p->slot_size;
    dev->msg_max = (sizeof(bip_ofi_msg_hdr_t) + p->slot_size + 7u) & ~(size_t) 7u;
    /* a fragment's byte count travels in 32 bits of CQ data */
    dev->frag_size = p->frag_size > (1u << 30) ? (1u << 30) : p->frag_size;
    dev->max_posted = p->max_posted;
    dev->next_gen = 1;
    dev->next_key = 1;
    dev->posted = calloc(p->max_posted, sizeof(*dev->posted));
    rxsize = 64 * dev->msg_max;
    if (rxsize < (1u << 20)) {
        rxsize = 1u << 20;
    }
    /* every message takes at least 16 bytes of a buffer */
    dev->ring_cap = (uint32_t) (BIP_OFI_NRX * (rxsize / 16) + BIP_OFI_POLL);
    dev->ring = calloc(dev->ring_cap, sizeof(*dev->ring));
    if (NULL == dev->posted || NULL == dev->ring) {
        rc = -ENOMEM;
        goto fail;
    }
    for (int i = 0; i < BIP_OFI_NRX; ++i) {
        dev->rx[i].ctx.kind = BIP_OFI_CTX_RX;
        dev->rx[i].size = rxsize;
        if (0 != posix_memalign((void **) &dev->rx[i].mem, 64, rxsize)) {
            rc = -ENOMEM;
            goto fail;
        }
    }

    rc = bip_ofi_getinfo(p, &dev->f.info);
    if (0 != rc) {
        goto fail;
    }
    dev->inject_size = dev->f.info->tx_attr->inject_size;
    rc = tc_ofi_rdm_open(&dev->f, 0, 0, bip_ofi_setopt, dev);
    if (0 == rc) {
        dev->addrlen = sizeof(dev->addr);
        rc = fi_getname(&dev->f.ep->fid, dev->addr, &dev->addrlen);
    }
    if (0 != rc) {
        rc = bip_ofi_errno(rc);
        goto fail;
    }
    for (int i = 0; i < BIP_OFI_NRX; ++i) {
        bip_ofi_repost(dev, dev->rx + i);
        if (!dev->rx[i].posted) {
            rc = -EIO;
            goto fail;
        }
    }
    *out = dev;
    return 0;

fail:
    bip_ofi_close(dev);
    return rc;
}

static void bip_ofi_close(void *d)
{
    bip_ofi_dev_t *dev = d;

    if (NULL == dev) {
        return;
    }
    tc_ofi_rdm_close_ep(&dev->f);
    for (uint32_t i = 0; NULL != dev->posted && i < dev->max_posted; ++i) {
        if (NULL != dev->posted[i].mr) {
            (void) fi_close(&dev->posted[i].mr->fid);
        }
    }
    tc_ofi_rdm_close(&dev->f);
    /* free or still in flight when the endpoint closed: all of them */
    while (NULL != dev->tx_all) {
        bip_ofi_tx_t *tx = dev->tx_all;

        dev->tx_all = tx->all_next;
        free(tx);
    }
    /* reads never reaped (their completions cannot come any more) */
    while (NULL != dev->reads) {
        bip_ofi_op_t *op = dev->reads;

        dev->reads = op->next;
        free(op);
    }
    while (NULL != dev->gone) {
        bip_ofi_peer_t *peer = dev->gone;

        dev->gone = peer->next_gone;
        free(peer);
    }
    for (int i = 0; i < BIP_OFI_NRX; ++i) {
        free(dev->rx[i].mem);
    }
    free(dev->ring);
    free(dev->posted);
    pthread_mutex_destroy(&dev->lock);
    free(dev);
}

static int bip_ofi_probe_large(void *dev)
{
    (void) dev;
    return 0;
}

static int bip_ofi_unlink(void *dev)
{
    (void) dev;
    return 1;
}

static int bip_ofi_address(void *d, void *buf, size_t *len)
{
    bip_ofi_dev_t *dev = d;

    memcpy(buf, dev->addr, dev->addrlen);
    *len = dev->addrlen;
    return 0;
}

/* ------------------------------------------------------------------ */
/* peers                                                                */

static int bip_ofi_peer_connect(void *d, const bip_peer_info_t *info, void **out)
{
    bip_ofi_dev_t *dev = d;
    bip_ofi_peer_t *peer;
    int rc;

    if (NULL == info->addr || 0 == info->addrlen || info->addrlen > BIP_ADDR_MAX) {
        return -EINVAL;
    }
    peer = calloc(1, sizeof(*peer));
    if (NULL == peer) {
        return -ENOMEM;
    }
    peer->dev = dev;
    rc = fi_av_insert(dev->f.av, info->addr, 1, &peer->addr, 0, NULL);
    if (1 != rc) {
        free(peer);
        return rc < 0 ? bip_ofi_errno(rc) : -EINVAL;
    }
    *out = peer;
    return 0;
}

static void bip_ofi_peer_disconnect(void *p)
{
    bip_ofi_peer_t *peer = p;
    bip_ofi_dev_t *dev = peer->dev;

    /* sends in flight keep a pointer to the peer (their error marks it
     * failed): the peer is freed with the device */
    pthread_mutex_lock(&dev->lock);
    if (NULL != peer->staged) {
        bip_ofi_tx_put(dev, peer->staged);
        peer->staged = NULL;
    }
    peer->next_gone = dev->gone;
    dev->gone = peer;
    pthread_mutex_unlock(&dev->lock);
}

static int bip_ofi_peer_alive(void *p)
{
    bip_ofi_peer_t *peer = p;

    if (tc_atomic_load_acquire(&peer->failed)) {
        return -ESRCH;
    }
    /* errors show up as completions: read them */
    bip_ofi_progress(peer->dev);
    return tc_atomic_load_acquire(&peer->failed) ? -ESRCH : 0;
}

static void bip_ofi_sole(void *p)
{
    (void) p; /* every sender feeds one buffer: nothing to claim */
}

static void bip_ofi_queue_sole(void *d)
{
    (void) d;
}

/* ------------------------------------------------------------------ */
/* small messages                                                       */

static int bip_ofi_reserve(void *p, void **buf)
{
    bip_ofi_peer_t *peer = p;
    bip_ofi_dev_t *dev = peer->dev;
    bip_ofi_tx_t *tx;

    if (NULL == peer->staged) {
        pthread_mutex_lock(&dev->lock);
        tx = dev->tx_free;
        if (NULL != tx) {
            dev->tx_free = tx->next;
        }
        pthread_mutex_unlock(&dev->lock);
        if (NULL == tx) {
            /* as many as sends in flight: bounded by the credits */
            tx = malloc(sizeof(*tx) + dev->msg_max);
            if (NULL == tx) {
                return -ENOMEM;
            }
            tx->ctx.kind = BIP_OFI_CTX_TX;
            pthread_mutex_lock(&dev->lock);
            tx->all_next = dev->tx_all;
            dev->tx_all = tx;
            pthread_mutex_unlock(&dev->lock);
        }
        tx->next = NULL;
        tx->peer = peer;
        peer->staged = tx;
    }
    *buf = (char *) peer->staged->data + sizeof(bip_ofi_msg_hdr_t);
    return 0;
}

static int bip_ofi_publish(void *p, uint32_t len)
{
    bip_ofi_peer_t *peer = p;
    bip_ofi_dev_t *dev = peer->dev;
    bip_ofi_tx_t *tx = peer->staged;
    bip_ofi_msg_hdr_t *h;
    double deadline = 0.0;
    unsigned int spins = 0;
    size_t total;
    ssize_t rc;

    if (NULL == tx) {
        return -EINVAL;
    }
    if (len > dev->slot_size) {
        return -EMSGSIZE;
    }
    peer->staged = NULL;
    h = (bip_ofi_msg_hdr_t *) tx->data;
    h->src = dev->stamp;
    h->len = len;
    total = (sizeof(*h) + len + 7u) & ~(size_t) 7u;
    /* the padding goes on the wire: never stale heap bytes */
    memset((char *) tx->data + sizeof(*h) + len, 0, total - sizeof(*h) - len);
    if (total <= dev->inject_size) {
        while (-FI_EAGAIN == (rc = fi_inject(dev->f.ep, tx->data, total, peer->addr)) &&
               bip_ofi_again(dev, &deadline, &spins)) {
        }
        pthread_mutex_lock(&dev->lock);
        bip_ofi_tx_put(dev, tx);
        pthread_mutex_unlock(&dev->lock);
    } else {
        while (-FI_EAGAIN == (rc = fi_send(dev->f.ep, tx->data, total, NULL, peer->addr, tx)) &&
               bip_ofi_again(dev, &deadline, &spins)) {
        }
        if (0 != rc) {
            pthread_mutex_lock(&dev->lock);
            bip_ofi_tx_put(dev, tx);
            pthread_mutex_unlock(&dev->lock);
        }
    }
    if (0 != rc) {
        bip_ofi_peer_fail(peer);
        return -ESRCH;
    }
    return 0;
}

int bip_ofi_msg_check(const void *buf, size_t got, uint32_t slot_size, const void **msg,
                      uint32_t *len, uint32_t *src)
{
    bip_ofi_msg_hdr_t h;

    /* hostile input: the header must fit, its length must match what
     * arrived (up to the 8-byte padding) and fit a slot */
    if (NULL == buf || got < sizeof(h)) {
        return -EPROTO;
    }
    memcpy(&h, buf, sizeof(h));
    if (h.len > slot_size || h.len > got - sizeof(h) || got - sizeof(h) - h.len > 7) {
        return -EPROTO;
    }
    *msg = (const char *) buf + sizeof(h);
    *len = h.len;
    *src = h.src;
    return 0;
}

static int bip_ofi_peek(void *d, const void **msg, uint32_t *len, uint32_t *src)
{
    bip_ofi_dev_t *dev = d;
    bip_ofi_msg_t m;

    pthread_mutex_lock(&dev->lock);
    if (0 == dev->ring_count) {
        bip_ofi_progress_locked(dev);
        if (0 == dev->ring_count) {
            pthread_mutex_unlock(&dev->lock);
            return -EAGAIN;
        }
    }
    m = dev->ring[dev->ring_head];
    pthread_mutex_unlock(&dev->lock);

    if (0 != bip_ofi_msg_check(m.buf, m.len, dev->slot_size, msg, len, src)) {
        goto bad;
    }
    return 0;

bad:
    /* dropped: the protocol hears of a corrupt message and goes on */
    pthread_mutex_lock(&dev->lock);
    dev->ring_head = (dev->ring_head + 1) % dev->ring_cap;
    dev->ring_count--;
    dev->rx[m.rx].outstanding--;
    bip_ofi_repost(dev, dev->rx + m.rx);
    pthread_mutex_unlock(&dev->lock);
    return -EPROTO;
}

static void bip_ofi_release(void *d)
{
    bip_ofi_dev_t *dev = d;
    bip_ofi_rx_t *rx;

    pthread_mutex_lock(&dev->lock);
    if (0 != dev->ring_count) {
        rx = dev->rx + dev->ring[dev->ring_head].rx;
        dev->ring_head = (dev->ring_head + 1) % dev->ring_cap;
        dev->ring_count--;
        rx->outstanding--;
        /* the provider let the buffer go and nothing in it is in use */
        bip_ofi_repost(dev, rx);
    }
    pthread_mutex_unlock(&dev->lock);
}

/* ------------------------------------------------------------------ */
/* posted receives                                                      */

static int bip_ofi_post_recv(void *d, void *buf, size_t len, uint32_t *handle)
{
    bip_ofi_dev_t *dev = d;
    struct fid_mr *mr = NULL;
    uint32_t idx, h;
    int rc;

    if (NULL == handle || (NULL == buf && 0 != len)) {
        return -EINVAL;
    }
    pthread_mutex_lock(&dev->lock);
    if (dev->num_posted >= dev->max_posted) {
        pthread_mutex_unlock(&dev->lock);
        return -EAGAIN;
    }
    for (idx = 0; idx < dev->max_posted; ++idx) {
        if (0 == dev->posted[idx].handle) {
            break;
        }
    }
    if (idx == dev->max_posted) {
        pthread_mutex_unlock(&dev->lock);
        return -EAGAIN;
    }
    if (0 == (dev->next_gen & ((1u << (32 - BIP_OFI_IDX_BITS)) - 1u))) {
        dev->next_gen = 1;
    }
    h = (dev->next_gen++ << BIP_OFI_IDX_BITS) | idx;
    if (0 != len) {
        /* the handle is the key: a sender with a stale handle is refused
         * by the provider, and the region bounds every write */
        rc = fi_mr_reg(dev->f.domain, buf, len, FI_REMOTE_WRITE, 0, h, 0, &mr, NULL);
        if (0 != rc) {
            pthread_mutex_unlock(&dev->lock);
            return bip_ofi_errno(rc);
        }
    }
    dev->posted[idx].mr = mr;
    dev->posted[idx].len = len;
    tc_atomic_store_relaxed(&dev->posted[idx].filled, 0);
    dev->posted[idx].handle = h;
    dev->num_posted++;
    pthread_mutex_unlock(&dev->lock);
    *handle = h;
    return 0;
}

static long bip_ofi_recv_test(void *d, uint32_t handle)
{
    bip_ofi_dev_t *dev = d;
    uint32_t idx = handle & BIP_OFI_IDX_MASK;
    long got;

    if (idx >= dev->max_posted || 0 == handle) {
        return -EINVAL;
    }
    pthread_mutex_lock(&dev->lock);
    if (dev->posted[idx].handle != handle) {
        pthread_mutex_unlock(&dev->lock);
        return -EINVAL;
    }
    got = (long) tc_atomic_load_acquire(&dev->posted[idx].filled);
    if ((size_t) got < dev->posted[idx].len) {
        /* the writes land only while we read the CQ */
        bip_ofi_progress_locked(dev);
        got = (long) tc_atomic_load_acquire(&dev->posted[idx].filled);
    }
    pthread_mutex_unlock(&dev->lock);
    return got;
}

static void bip_ofi_recv_unpost(void *d, uint32_t handle)
{
    bip_ofi_dev_t *dev = d;
    uint32_t idx = handle & BIP_OFI_IDX_MASK;

    if (idx >= dev->max_posted || 0 == handle) {
        return;
    }
    pthread_mutex_lock(&dev->lock);
    if (dev->posted[idx].handle == handle) {
        if (NULL != dev->posted[idx].mr) {
            (void) fi_close(&dev->posted[idx].mr->fid);
            dev->posted[idx].mr = NULL;
        }
        dev->posted[idx].handle = 0;
        dev->num_posted--;
    }
    pthread_mutex_unlock(&dev->lock);
}

/* ------------------------------------------------------------------ */
/* large messages                                                       */

static int bip_ofi_op_status(int err, bip_ofi_peer_t *op_peer);

/* Wait until every operation of op completed, and free it: 0 or -errno.
 * The provider may retry a connection to a dead peer for ever (rxm
 * does): past dev->timeout seconds the peer is reported gone and op is
 * left to its last completion. */
static int bip_ofi_wait(bip_ofi_dev_t *dev, bip_ofi_op_t *op)
{
    double deadline = 0.0;
    unsigned int spins = 0;
    bip_ofi_peer_t *op_peer;
    int err;

    for (;;) {
        uint32_t pending;

        pthread_mutex_lock(&dev->lock);
        bip_ofi_progress_locked(dev);
        pending = op->pending;
        if (0 != pending && 0 == (++spins & 1023u)) {
            double now = bip_ofi_now();

            if (0.0 == deadline) {
                deadline = now + (double) dev->timeout;
            } else if (now > deadline) {
                op->abandoned = true;
                pthread_mutex_unlock(&dev->lock);
                bip_ofi_peer_fail(op->peer);
                return -ESRCH;
            }
        }
        pthread_mutex_unlock(&dev->lock);
        if (0 == pending) {
            break;
        }
        if (spins > 64) {
            /* the peer's provider moves our data only while that process
             * runs: give it the core when it shares ours */
            sched_yield();
        }
    }
    err = op->err;
    op_peer = op->peer;
    free(op);
    return bip_ofi_op_status(err, op_peer);
}

/* an operation's first error as the device reports it */
static int bip_ofi_op_status(int err, bip_ofi_peer_t *op_peer)
{
    if (0 == err) {
        return 0;
    }
    switch (err) {
    case FI_ECONNREFUSED:
    case FI_ECONNRESET:
    case FI_ECONNABORTED:
    case FI_ENOTCONN:
    case FI_ETIMEDOUT:
    case FI_EHOSTUNREACH:
    case FI_ENETUNREACH:
    case FI_ENETDOWN:
    case FI_EIO:
        bip_ofi_peer_fail(op_peer);
        return -ESRCH;
    default:
        /* refused by the peer's provider: a stale key, outside the region */
        return -EINVAL;
    }
}

static bip_ofi_op_t *bip_ofi_op_new(bip_ofi_peer_t *peer)
{
    bip_ofi_op_t *op = calloc(1, sizeof(*op));

    if (NULL != op) {
        op->ctx.kind = BIP_OFI_CTX_OP;
        op->peer = peer;
    }
    return op;
}

/* one RMA operation, counted in op before it is issued */
static int bip_ofi_issue(bip_ofi_dev_t *dev, bip_ofi_op_t *op, bool write, void *buf, size_t len,
                         uint64_t raddr, uint64_t key, uint64_t data, fi_addr_t to)
{
    double deadline = 0.0;
    unsigned int spins = 0;
    ssize_t rc;

    pthread_mutex_lock(&dev->lock);
    op->pending++;
    pthread_mutex_unlock(&dev->lock);
    for (;;) {
        if (write) {
            struct iovec iov = {.iov_base = buf, .iov_len = len};
            struct fi_rma_iov rma = {.addr = raddr, .len = len, .key = key};
            struct fi_msg_rma msg = {.msg_iov = &iov,
                                     .iov_count = 1,
                                     .addr = to,
                                     .rma_iov = &rma,
                                     .rma_iov_count = 1,
                                     .context = op,
                                     .data = data};

            /* transmit complete: the buffer is the caller's again (a
             * write the peer's provider refuses is dropped there) */
            rc = fi_writemsg(dev->f.ep, &msg, FI_REMOTE_CQ_DATA);
        } else {
            rc = fi_read(dev->f.ep, buf, len, NULL, to, raddr, key, op);
        }
        if (-FI_EAGAIN != rc || !bip_ofi_again(dev, &deadline, &spins)) {
            break;
        }
    }
    if (-FI_EAGAIN == rc) {
        rc = -FI_ETIMEDOUT;
    }
    if (0 != rc) {
        pthread_mutex_lock(&dev->lock);
        op->pending--;
        if (0 == op->err) {
            op->err = (int) -rc;
        }
        pthread_mutex_unlock(&dev->lock);
        return -1;
    }
    return 0;
}

static int bip_ofi_send_large(void *p, uint32_t handle, size_t offset, const struct iovec *iov,
                              int iovcnt, size_t len)
{
    bip_ofi_peer_t *peer = p;
    bip_ofi_dev_t *dev = peer->dev;
    bip_ofi_op_t *op;
    size_t done = 0, in_off = 0;
    int cur = 0;

    if (0 == handle || offset > SIZE_MAX - len) {
        return -EINVAL;
    }
    if (tc_atomic_load_acquire(&peer->failed)) {
        return -ESRCH;
    }
    op = bip_ofi_op_new(peer);
    if (NULL == op) {
        return -ENOMEM;
    }
    /* every fragment goes at once; the caller's buffer is free when
     * all completed */
    while (done < len) {
        size_t take;

        if (cur >= iovcnt) {
            break;
        }
        take = iov[cur].iov_len - in_off;
        if (take > dev->frag_size) {
            take = dev->frag_size;
        }
        if (take > len - done) {
            take = len - done;
        }
        if (0 != take &&
            0 !=
                bip_ofi_issue(dev, op, true, (char *) iov[cur].iov_base + in_off, take,
                              offset + done, handle, BIP_OFI_WRITE_DATA(handle, take),
                              peer->addr)) {
            break;
        }
        done += take;
        in_off += take;
        if (in_off == iov[cur].iov_len) {
            ++cur;
            in_off = 0;
        }
    }
    {
        int rc = bip_ofi_wait(dev, op);

        if (0 != rc) {
            return rc;
        }
    }
    return done == len ? 0 : -EINVAL;
}

/* the checks of a read before anything is posted: a key (nothing
 * registered: the peer's memory is closed), a range inside the region
 * without overflow, a live peer; 0 or a -errno */
static int bip_ofi_read_check(const bip_ofi_peer_t *peer, const void *dst, uint64_t src,
                              const bip_rkey_t *key, size_t len)
{
    if (NULL == key || 0 == key->key) {
        return -EINVAL;
    }
    if (0 != len && (NULL == dst || src < key->base || src - key->base > UINT64_MAX - len)) {
        return -EFAULT;
    }
    if (tc_atomic_load_acquire(&peer->failed)) {
        return -ESRCH;
    }
    return 0;
}

/* What the waiting and the asynchronous read share: the checks, the op,
 * and its fi_reads in pieces of frag_size, all in flight. An
 * asynchronous op (async) goes on dev->reads before its first piece,
 * with one count of op->pending held for the issuer, so a piece that
 * completes early cannot finish the op before the last is posted (the
 * caller drops that count). 0 with the op in *out and, when done is not
 * NULL, the bytes issued in *done (short of len when a piece failed:
 * op->err says why); or a -errno found before anything was posted. */
static int bip_ofi_read_post(bip_ofi_peer_t *peer, void *dst, uint64_t src, const bip_rkey_t *key,
                             size_t len, bool async, void *cookie, bip_ofi_op_t **out, size_t *done)
{
    bip_ofi_dev_t *dev = peer->dev;
    bip_ofi_op_t *op;
    size_t issued = 0;
    int rc;

    rc = bip_ofi_read_check(peer, dst, src, key, len);
    if (0 != rc) {
        return rc;
    }
    op = bip_ofi_op_new(peer);
    if (NULL == op) {
        return -ENOMEM;
    }
    if (async) {
        op->async = true;
        op->cookie = cookie;
        op->deadline = bip_ofi_now() + (double) dev->timeout;
        op->pending = 1; /* the issuer's hold */
        pthread_mutex_lock(&dev->lock);
        op->next = dev->reads;
        if (NULL != dev->reads) {
            dev->reads->prev = op;
        }
        dev->reads = op;
        pthread_mutex_unlock(&dev->lock);
    }
    while (issued < len) {
        size_t take = len - issued < dev->frag_size ? len - issued : dev->frag_size;

        if (0 !=
            bip_ofi_issue(dev, op, false, (char *) dst + issued, take, src - key->base + issued,
                          key->key, 0, peer->addr)) {
            break;
        }
        issued += take;
    }
    *out = op;
    if (NULL != done) {
        *done = issued;
    }
    return 0;
}

static int bip_ofi_read_large(void *p, void *dst, uint64_t src, const bip_rkey_t *key, size_t len)
{
    bip_ofi_peer_t *peer = p;
    bip_ofi_op_t *op;
    size_t done = 0;
    int rc;

    rc = bip_ofi_read_post(peer, dst, src, key, len, false, NULL, &op, &done);
    if (0 != rc) {
        return rc;
    }
    rc = bip_ofi_wait(peer->dev, op);
    if (0 != rc) {
        return -EINVAL == rc ? -EFAULT : rc;
    }
    return done == len ? 0 : -EFAULT;
}

/* Post the fi_reads of a read and return: the completion queue finishes
 * it, bip_ofi_read_reap reports it. 1 (in flight) or a -errno found
 * before anything was posted. */
static int bip_ofi_read_start(void *p, void *dst, uint64_t src, const bip_rkey_t *key, size_t len,
                              void *cookie)
{
    bip_ofi_peer_t *peer = p;
    bip_ofi_dev_t *dev = peer->dev;
    bip_ofi_op_t *op;
    int rc;

    /* a piece that failed set op->err: reported when the op is reaped */
    rc = bip_ofi_read_post(peer, dst, src, key, len, true, cookie, &op, NULL);
    if (0 != rc) {
        return rc;
    }
    pthread_mutex_lock(&dev->lock);
    bip_ofi_op_put(dev, op);
    pthread_mutex_unlock(&dev->lock);
    return 1;
}

static void bip_ofi_read_unlink(bip_ofi_dev_t *dev, bip_ofi_op_t *op)
{
    if (NULL != op->prev) {
        op->prev->next = op->next;
    } else {
        dev->reads = op->next;
    }
    if (NULL != op->next) {
        op->next->prev = op->prev;
    }
    op->next = op->prev = NULL;
}

/* One finished read, or one that waited past the timeout (the provider
 * may retry a connection to a dead peer for ever): its peer is reported
 * gone and the op is left to its last completion. */
static int bip_ofi_read_reap(void *d, void **cookie, int *status)
{
    bip_ofi_dev_t *dev = d;
    bip_ofi_op_t *op, *found = NULL;
    double now = 0.0;
    int rc = 0;

    pthread_mutex_lock(&dev->lock);
    if (NULL == dev->reads) {
        pthread_mutex_unlock(&dev->lock);
        return 0;
    }
    /* the target side of our peers' reads moves only while we read the
     * CQ, and so do our own reads */
    bip_ofi_progress_locked(dev);
    if (0 == (++dev->reap_calls & 255u)) {
        now = bip_ofi_now();
    }
    for (op = 0 != dev->reads_finished || 0.0 != now ? dev->reads : NULL; NULL != op;
         op = op->next) {
        if (op->finished || (0.0 != now && now > op->deadline)) {
            found = op;
            break;
        }
    }
    if (NULL != found) {
        bip_ofi_read_unlink(dev, found);
        *cookie = found->cookie;
        if (found->finished) {
            dev->reads_finished--;
            rc = bip_ofi_op_status(found->err, found->peer);
            if (-EINVAL == rc) {
                rc = -EFAULT;
            }
            free(found);
        } else {
            found->abandoned = true;
            bip_ofi_peer_fail(found->peer);
            rc = -ESRCH;
        }
        *status = rc;
    }
    pthread_mutex_unlock(&dev->lock);
    return NULL != found ? 1 : 0;
}

static int bip_ofi_register(void *d, void *addr, size_t len, bip_rkey_t *key, void **reg)
{
    bip_ofi_dev_t *dev = d;
    bip_ofi_reg_t *r = calloc(1, sizeof(*r));
    uint64_t k;
    int rc;

    if (NULL == r) {
        return -ENOMEM;
    }
    pthread_mutex_lock(&dev->lock);
    k = BIP_OFI_REG_KEY | dev->next_key++;
    pthread_mutex_unlock(&dev->lock);
    rc = fi_mr_reg(dev->f.domain, addr, len, FI_REMOTE_READ, 0, k, 0, &r->mr, NULL);
    if (0 != rc) {
        free(r);
        return bip_ofi_errno(rc);
    }
    key->key = k;
    key->base = (uint64_t) (uintptr_t) addr;
    *reg = r;
    return 0;
}

static void bip_ofi_deregister(void *d, void *reg)
{
    bip_ofi_reg_t *r = reg;

    (void) d;
    if (NULL != r) {
        (void) fi_close(&r->mr->fid);
        free(r);
    }
}

static void *bip_ofi_peer_dev(void *p)
{
    return ((bip_ofi_peer_t *) p)->dev;
}

const bip_ops_t bip_ofi_ops = {
    .name = "ofi",
    .open = bip_ofi_open,
    .close = bip_ofi_close,
    .probe_large = bip_ofi_probe_large,
    .unlink_when_connected = bip_ofi_unlink,
    .address = bip_ofi_address,
    .peer_connect = bip_ofi_peer_connect,
    .peer_disconnect = bip_ofi_peer_disconnect,
    .peer_alive = bip_ofi_peer_alive,
    .set_sole_sender = bip_ofi_sole,
    .set_queue_sole_sender = bip_ofi_queue_sole,
    .ssend_reserve = bip_ofi_reserve,
    .ssend_publish = bip_ofi_publish,
    .srecv_peek = bip_ofi_peek,
    .srecv_release = bip_ofi_release,
    .post_recv = bip_ofi_post_recv,
    .recv_test = bip_ofi_recv_test,
    .recv_unpost = bip_ofi_recv_unpost,
    .send_large = bip_ofi_send_large,
    .read_large = bip_ofi_read_large,
    .read_start = bip_ofi_read_start,
    .read_reap = bip_ofi_read_reap,
    .mem_register = bip_ofi_register,
    .mem_deregister = bip_ofi_deregister,
    .peer_dev = bip_ofi_peer_dev,
};
