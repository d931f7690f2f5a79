/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * bip_ofi_rma.c: the large half of the `ofi` provider: posted receives
 * (a memory region whose key is the receive's handle; the remote CQ data
 * of each write publishes its bytes), large sends by fi_writemsg, the
 * waiting and the asynchronous read by fi_read of a peer's registration,
 * and the registrations themselves (bip_mem_register).
 */

#define _GNU_SOURCE
#include "bip_ofi.h"

/* ------------------------------------------------------------------ */
/* completions of remote writes and of operations                      */

/* a remote write landed in one of our posted receives */
void bip_ofi_remote_write(bip_ofi_dev_t *dev, uint64_t data)
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
void bip_ofi_op_put(bip_ofi_dev_t *dev, bip_ofi_op_t *op)
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

/* ------------------------------------------------------------------ */
/* posted receives                                                      */

int bip_ofi_post_recv(void *d, void *buf, size_t len, uint32_t *handle)
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
        rc = tc_ofi_mr_reg(&dev->f.guard, dev->f.domain, buf, len, FI_REMOTE_WRITE, h, &mr);
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

long bip_ofi_recv_test(void *d, uint32_t handle)
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

void bip_ofi_recv_unpost(void *d, uint32_t handle)
{
    bip_ofi_dev_t *dev = d;
    uint32_t idx = handle & BIP_OFI_IDX_MASK;

    if (idx >= dev->max_posted || 0 == handle) {
        return;
    }
    pthread_mutex_lock(&dev->lock);
    if (dev->posted[idx].handle == handle) {
        if (NULL != dev->posted[idx].mr) {
            tc_ofi_mr_close(&dev->f.guard, dev->posted[idx].mr);
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
        if (-FI_EAGAIN != rc || !bip_ofi_again(dev, op->peer, &deadline, &spins)) {
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

int bip_ofi_send_large(void *p, uint32_t handle, size_t offset, const struct iovec *iov, int iovcnt,
                       size_t len)
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

int bip_ofi_read_large(void *p, void *dst, uint64_t src, const bip_rkey_t *key, size_t len)
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
int bip_ofi_read_start(void *p, void *dst, uint64_t src, const bip_rkey_t *key, size_t len,
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
int bip_ofi_read_reap(void *d, void **cookie, int *status)
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

int bip_ofi_register(void *d, void *addr, size_t len, bip_rkey_t *key, void **reg)
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
    rc = tc_ofi_mr_reg(&dev->f.guard, dev->f.domain, addr, len, FI_REMOTE_READ, k, &r->mr);
    if (0 != rc) {
        free(r);
        return bip_ofi_errno(rc);
    }
    key->key = k;
    key->base = (uint64_t) (uintptr_t) addr;
    *reg = r;
    return 0;
}

void bip_ofi_deregister(void *d, void *reg)
{
    bip_ofi_dev_t *dev = d;
    bip_ofi_reg_t *r = reg;

    if (NULL != r) {
        tc_ofi_mr_close(&dev->f.guard, r->mr);
        free(r);
    }
}
