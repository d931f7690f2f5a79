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
#include <stddef.h>

#include "bip_ofi.h"

/* ------------------------------------------------------------------ */
/* completions                                                          */

void bip_ofi_repost(bip_ofi_dev_t *dev, bip_ofi_rx_t *rx)
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

void bip_ofi_peer_fail(bip_ofi_peer_t *peer)
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
    case BIP_OFI_CTX_GATHER:
        bip_ofi_gather_done(dev, (bip_ofi_gather_t *) ctx, 0);
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
    case BIP_OFI_CTX_GATHER: {
        bip_ofi_gather_t *g = (bip_ofi_gather_t *) ctx;

        bip_ofi_peer_fail(g->peer);
        bip_ofi_gather_done(dev, g, 0 != e->err ? e->err : FI_EIO);
        break;
    }
    default:
        break;
    }
}

/* read completions (caller holds dev->lock): never more than the ring
 * can take, so no received message is lost */
void bip_ofi_progress_locked(bip_ofi_dev_t *dev)
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
    n = tc_ofi_cq_read(&dev->f.guard, dev->f.cq, e, room < BIP_OFI_POLL ? room : BIP_OFI_POLL);
    dev->cq_drained = n > 0 && n < BIP_OFI_POLL;
    if (n > 0) {
        for (ssize_t i = 0; i < n; ++i) {
            bip_ofi_complete(dev, e + i);
        }
    } else if (-FI_EAVAIL == n) {
        struct fi_cq_err_entry err;

        memset(&err, 0, sizeof(err));
        if (tc_ofi_cq_readerr(&dev->f.guard, dev->f.cq, &err) > 0) {
            bip_ofi_complete_err(dev, &err);
        }
    }
}

void bip_ofi_progress(bip_ofi_dev_t *dev)
{
    pthread_mutex_lock(&dev->lock);
    bip_ofi_progress_locked(dev);
    pthread_mutex_unlock(&dev->lock);
}

double bip_ofi_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

/* after -FI_EAGAIN: read completions, and say whether to try again (the
 * provider may retry a connection to a dead peer for ever: after
 * dev->timeout seconds, or once the peer is known failed, the caller
 * reports the peer gone) */
bool bip_ofi_again(bip_ofi_dev_t *dev, const bip_ofi_peer_t *peer, double *deadline,
                   unsigned int *spins)
{
    bip_ofi_progress(dev);
    if (NULL != peer && tc_atomic_load_acquire(&peer->failed)) {
        return false;
    }
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

static void bip_ofi_peer_lost(void *p)
{
    bip_ofi_peer_fail(p);
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
    h->jobid = dev->jobid;
    h->pad = 0;
    total = (sizeof(*h) + len + 7u) & ~(size_t) 7u;
    /* the padding goes on the wire: never stale heap bytes */
    memset((char *) tx->data + sizeof(*h) + len, 0, total - sizeof(*h) - len);
    if (total <= dev->inject_size) {
        while (-FI_EAGAIN == (rc = fi_inject(dev->f.ep, tx->data, total, peer->addr)) &&
               bip_ofi_again(dev, peer, &deadline, &spins)) {
        }
        pthread_mutex_lock(&dev->lock);
        bip_ofi_tx_put(dev, tx);
        pthread_mutex_unlock(&dev->lock);
    } else {
        while (-FI_EAGAIN == (rc = fi_send(dev->f.ep, tx->data, total, NULL, peer->addr, tx)) &&
               bip_ofi_again(dev, peer, &deadline, &spins)) {
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
    uint32_t jobid;

    pthread_mutex_lock(&dev->lock);
    if (0 == dev->ring_count) {
        if (dev->cq_drained) {
            /* the last read emptied the queue: another one now would
             * most likely find nothing, at the cost of a poll of every
             * socket on the path of every message; the next progress
             * call reads */
            dev->cq_drained = false;
            pthread_mutex_unlock(&dev->lock);
            return -EAGAIN;
        }
        bip_ofi_progress_locked(dev);
        dev->cq_fresh = true;
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
    memcpy(&jobid, m.buf + offsetof(bip_ofi_msg_hdr_t, jobid), sizeof(jobid));
    if (jobid != dev->jobid) {
        /* a process of another job: its stamp from the resolver, which
         * gives an unknown sender an index on first contact */
        if (NULL == dev->resolve || 0 != dev->resolve(jobid, *src, src)) {
            goto bad;
        }
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
    .peer_lost = bip_ofi_peer_lost,
    .set_sole_sender = bip_ofi_sole,
    .set_queue_sole_sender = bip_ofi_queue_sole,
    .ssend_reserve = bip_ofi_reserve,
    .ssend_publish = bip_ofi_publish,
    .ssend_gather = bip_ofi_ssend_gather,
    .ssend_reap = bip_ofi_ssend_reap,
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
    .fabric = bip_ofi_fabric,
};
