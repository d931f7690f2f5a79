/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * bip_ofi_gather.c: the ofi provider's small message sent from the
 * caller's memory (bip_ssend_gather). The device header and the caller's
 * head (the protocol's header and ob1's) are copied into a gather
 * record; the data goes from where it is, by one fi_sendmsg of [header
 * and head, data, padding]. The receiver sees the very message that
 * reserve + publish would have sent (btl_bip_hdr.h), so the wire format
 * and its check are unchanged. The record stays on dev->gathers until its
 * completion, then on dev->gathers_done until bip_ssend_reap hands its
 * cookie back; a send to a peer that failed, or not completed within the
 * timeout, is reported gone (-ESRCH) and its record freed by its last
 * completion (or at close).
 */

#define _GNU_SOURCE
#include "bip_ofi.h"

static const uint64_t bip_ofi_zero_pad = 0;

static void bip_ofi_gather_unlink(bip_ofi_dev_t *dev, bip_ofi_gather_t *g)
{
    if (NULL != g->prev) {
        g->prev->next = g->next;
    } else {
        dev->gathers = g->next;
    }
    if (NULL != g->next) {
        g->next->prev = g->prev;
    }
    g->next = g->prev = NULL;
    g->in_flight = false;
}

static void bip_ofi_gather_put(bip_ofi_dev_t *dev, bip_ofi_gather_t *g)
{
    g->next = dev->gather_free;
    dev->gather_free = g;
}

void bip_ofi_gather_done(bip_ofi_dev_t *dev, bip_ofi_gather_t *g, int err)
{
    if (g->abandoned) {
        /* reported already: only its memory is left */
        g->abandoned = false;
        bip_ofi_gather_put(dev, g);
        return;
    }
    if (!g->in_flight) {
        return; /* a second completion for one send: never reported twice */
    }
    bip_ofi_gather_unlink(dev, g);
    g->err = err;
    if (NULL == dev->gathers_tail) {
        dev->gathers_done = g;
    } else {
        dev->gathers_tail->next = g;
    }
    dev->gathers_tail = g;
}

void bip_ofi_gather_free_all(bip_ofi_dev_t *dev)
{
    while (NULL != dev->gather_all) {
        bip_ofi_gather_t *g = dev->gather_all;

        dev->gather_all = g->all_next;
        free(g);
    }
    dev->gathers = dev->gathers_done = dev->gathers_tail = dev->gather_free = NULL;
}

static bip_ofi_gather_t *bip_ofi_gather_get(bip_ofi_dev_t *dev)
{
    bip_ofi_gather_t *g;

    pthread_mutex_lock(&dev->lock);
    g = dev->gather_free;
    if (NULL != g) {
        dev->gather_free = g->next;
    }
    pthread_mutex_unlock(&dev->lock);
    if (NULL == g) {
        /* as many as sends in flight: bounded by the credits */
        g = calloc(1, sizeof(*g));
        if (NULL == g) {
            return NULL;
        }
        g->ctx.kind = BIP_OFI_CTX_GATHER;
        pthread_mutex_lock(&dev->lock);
        g->all_next = dev->gather_all;
        dev->gather_all = g;
        pthread_mutex_unlock(&dev->lock);
    }
    g->next = g->prev = NULL;
    g->err = 0;
    g->in_flight = false;
    g->abandoned = false;
    return g;
}

/* small enough for fi_inject: copied whole, done within the call */
static int bip_ofi_gather_inject(bip_ofi_peer_t *peer, const bip_ofi_msg_hdr_t *h, const void *head,
                                 uint32_t head_len, const struct iovec *iov, int iovcnt,
                                 size_t total)
{
    bip_ofi_dev_t *dev = peer->dev;
    uint64_t buf[32];
    char *p = (char *) buf;
    double deadline = 0.0;
    unsigned int spins = 0;
    ssize_t rc;

    memset(buf, 0, total);
    memcpy(p, h, sizeof(*h));
    p += sizeof(*h);
    memcpy(p, head, head_len);
    p += head_len;
    for (int i = 0; i < iovcnt; ++i) {
        memcpy(p, iov[i].iov_base, iov[i].iov_len);
        p += iov[i].iov_len;
    }
    while (-FI_EAGAIN == (rc = fi_inject(dev->f.ep, buf, total, peer->addr)) &&
           bip_ofi_again(dev, peer, &deadline, &spins)) {
    }
    if (0 != rc) {
        bip_ofi_peer_fail(peer);
        return -ESRCH;
    }
    return 0;
}

int bip_ofi_ssend_gather(void *p, const void *head, uint32_t head_len, const struct iovec *iov,
                         int iovcnt, void *cookie)
{
    bip_ofi_peer_t *peer = p;
    bip_ofi_dev_t *dev = peer->dev;
    struct iovec v[4];
    struct fi_msg msg;
    bip_ofi_msg_hdr_t h;
    bip_ofi_gather_t *g;
    double deadline = 0.0;
    unsigned int spins = 0;
    size_t len = head_len, total;
    int n = 0;
    ssize_t rc;

    if (head_len > BIP_GATHER_HEAD_MAX || iovcnt < 0 || iovcnt > 2 ||
        (size_t) iovcnt + 2 > dev->iov_limit || NULL != peer->staged) {
        return -ENOTSUP;
    }
    for (int i = 0; i < iovcnt; ++i) {
        if (iov[i].iov_len > dev->slot_size) {
            return -EMSGSIZE;
        }
        len += iov[i].iov_len;
    }
    if (len > dev->slot_size) {
        return -EMSGSIZE;
    }
    if (tc_atomic_load_acquire(&peer->failed)) {
        return -ESRCH;
    }
    h.src = dev->stamp;
    h.len = (uint32_t) len;
    h.jobid = dev->jobid;
    h.pad = 0;
    total = (sizeof(h) + len + 7u) & ~(size_t) 7u;
    if (total <= dev->inject_size && total <= 256) {
        return bip_ofi_gather_inject(peer, &h, head, head_len, iov, iovcnt, total);
    }

    g = bip_ofi_gather_get(dev);
    if (NULL == g) {
        return -ENOMEM;
    }
    g->peer = peer;
    g->cookie = cookie;
    g->deadline = bip_ofi_now() + (double) dev->timeout;
    memcpy(g->head, &h, sizeof(h));
    memcpy((char *) g->head + sizeof(h), head, head_len);
    v[n].iov_base = g->head;
    v[n++].iov_len = sizeof(h) + head_len;
    for (int i = 0; i < iovcnt; ++i) {
        if (0 != iov[i].iov_len) {
            v[n++] = iov[i];
        }
    }
    if (total > sizeof(h) + len) {
        /* the padding goes on the wire: zeros */
        v[n].iov_base = (void *) &bip_ofi_zero_pad;
        v[n++].iov_len = total - sizeof(h) - len;
    }
    memset(&msg, 0, sizeof(msg));
    msg.msg_iov = v;
    msg.iov_count = (size_t) n;
    msg.addr = peer->addr;
    msg.context = g;

    /* on the list before the send: another thread may read its completion */
    pthread_mutex_lock(&dev->lock);
    g->in_flight = true;
    g->next = dev->gathers;
    if (NULL != dev->gathers) {
        dev->gathers->prev = g;
    }
    dev->gathers = g;
    pthread_mutex_unlock(&dev->lock);

    while (-FI_EAGAIN == (rc = fi_sendmsg(dev->f.ep, &msg, 0)) &&
           bip_ofi_again(dev, peer, &deadline, &spins)) {
    }
    if (0 != rc) {
        bool reported;

        pthread_mutex_lock(&dev->lock);
        /* a reap in another thread may have reported it gone already:
         * then it is that report's (and never completes) */
        reported = g->abandoned;
        if (g->in_flight) {
            bip_ofi_gather_unlink(dev, g);
        }
        if (!reported) {
            bip_ofi_gather_put(dev, g);
        }
        pthread_mutex_unlock(&dev->lock);
        bip_ofi_peer_fail(peer);
        return reported ? 1 : -ESRCH;
    }
    return 1;
}

int bip_ofi_ssend_reap(void *d, void **cookie, int *status)
{
    bip_ofi_dev_t *dev = d;
    bip_ofi_gather_t *g = NULL;

    pthread_mutex_lock(&dev->lock);
    if (NULL == dev->gathers_done && NULL != dev->gathers) {
        /* progress reaps right after it polled for messages: the
         * completions that read found are on gathers_done already, and
         * another read would cost the tcp provider an epoll_wait for
         * nothing; the next call reads */
        if (dev->cq_fresh) {
            dev->cq_fresh = false;
        } else {
            bip_ofi_progress_locked(dev);
        }
    }
    if (NULL != dev->gathers_done) {
        g = dev->gathers_done;
        dev->gathers_done = g->next;
        if (NULL == dev->gathers_done) {
            dev->gathers_tail = NULL;
        }
        *cookie = g->cookie;
        *status = 0 != g->err ? -ESRCH : 0;
        bip_ofi_gather_put(dev, g);
    } else if (NULL != dev->gathers && 0 == (++dev->gather_calls & 255u)) {
        /* a peer that failed, or a send the provider keeps retrying for
         * ever: reported gone; the record waits for its completion */
        double now = bip_ofi_now();

        for (g = dev->gathers; NULL != g; g = g->next) {
            if (tc_atomic_load_acquire(&g->peer->failed) || now > g->deadline) {
                break;
            }
        }
        if (NULL != g) {
            bip_ofi_gather_unlink(dev, g);
            g->abandoned = true;
            bip_ofi_peer_fail(g->peer);
            *cookie = g->cookie;
            *status = -ESRCH;
        }
    }
    pthread_mutex_unlock(&dev->lock);
    return NULL != g ? 1 : 0;
}
