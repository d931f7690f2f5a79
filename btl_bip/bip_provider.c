/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * bip_provider.c: the BIP device API (bip_device.h) over its providers.
 * A device opens shm (peers on this host: bip_shm.c) and/or ofi (peers
 * on other hosts: bip_ofi.c) as params->provider says; each peer is
 * reached through one of them, chosen at connect time, and every call
 * goes through that provider's ops table (bip_provider.h). The static
 * receive queue of the device is the union of the providers' queues:
 * bip_srecv_peek takes turns between them, and reports the sender as the
 * stamp its bip_peer_connect_info gave (shm stamps node-local ranks; they
 * are mapped here).
 */

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bip_provider.h"
#include "tc_atomic.h"
#include "tc_mpring.h"

enum { BIP_PROV_SHM = 0, BIP_PROV_OFI = 1, BIP_PROV_NUM = 2 };

struct bip_dev {
    void *sub[BIP_PROV_NUM];
    const bip_ops_t *ops[BIP_PROV_NUM];
    int dflt;            /* the provider of the calls that name no peer */
    int peeked;          /* the provider whose message is peeked, or -1 */
    int turn;            /* the provider peek tries first */
    uint32_t *local_map; /* shm stamp (node-local rank) -> peer stamp */
    uint32_t map_len;
    uint32_t nslots;
    uint32_t slot_size;
    tc_mpring_t *shmq; /* the shm receive queue (NULL: shm not open) */
};

/* shm peers: q is the peer's queue, so that a small message is one call
 * (the ring's inline claim and publish) and not three through the ops
 * table */
struct bip_peer {
    bip_dev_t *dev;
    const bip_ops_t *ops;
    void *sub;
    int prov;
    tc_mpring_t *q;   /* shm: the peer's queue (producer view), else NULL */
    uint32_t stamp;   /* shm: the sender id our slots carry */
    bool sole_sender; /* shm: claims without compare-and-swap */
};

/* ------------------------------------------------------------------ */
/* the shm provider: bip_shm.c under its own names (bip_shm_names.h)    */

struct bip_shm_dev;
struct bip_shm_peer;
int bip_shm_open(const bip_dev_params_t *params, struct bip_shm_dev **dev);
void bip_shm_close(struct bip_shm_dev *dev);
int bip_shm_probe_large(struct bip_shm_dev *dev);
int bip_shm_unlink_when_connected(struct bip_shm_dev *dev);
int bip_shm_peer_connect(struct bip_shm_dev *dev, uint32_t rank, struct bip_shm_peer **peer);
void bip_shm_peer_disconnect(struct bip_shm_peer *peer);
int bip_shm_peer_alive(struct bip_shm_peer *peer);
void bip_shm_peer_set_sole_sender(struct bip_shm_peer *peer);
void bip_shm_srecv_set_sole_sender(struct bip_shm_dev *dev);
int bip_shm_ssend_reserve(struct bip_shm_peer *peer, void **buf);
int bip_shm_ssend_publish(struct bip_shm_peer *peer, uint32_t len);
int bip_shm_srecv_peek(struct bip_shm_dev *dev, const void **msg, uint32_t *len, uint32_t *src);
void bip_shm_srecv_release(struct bip_shm_dev *dev);
int bip_shm_post_recv(struct bip_shm_dev *dev, void *buf, size_t len, uint32_t *handle);
long bip_shm_recv_test(struct bip_shm_dev *dev, uint32_t handle);
void bip_shm_recv_unpost(struct bip_shm_dev *dev, uint32_t handle);
int bip_shm_send_large(struct bip_shm_peer *peer, uint32_t handle, size_t offset,
                       const struct iovec *iov, int iovcnt, size_t len);
int bip_shm_read_large(struct bip_shm_peer *peer, void *dst, uint64_t src, size_t len);
tc_mpring_t *bip_shm_dev_queue(struct bip_shm_dev *dev);
tc_mpring_t *bip_shm_peer_queue(struct bip_shm_peer *peer, uint32_t *stamp);

/* the shm peer keeps its device: bip_provider.c needs it for peer_dev */
typedef struct bip_prov_shm_peer {
    struct bip_shm_peer *p;
    struct bip_shm_dev *dev;
} bip_prov_shm_peer_t;

static int bip_prov_shm_open(const bip_dev_params_t *params, void **dev)
{
    return bip_shm_open(params, (struct bip_shm_dev **) dev);
}

static void bip_prov_shm_close(void *dev)
{
    bip_shm_close(dev);
}

static int bip_prov_shm_probe_large(void *dev)
{
    return bip_shm_probe_large(dev);
}

static int bip_prov_shm_unlink(void *dev)
{
    return bip_shm_unlink_when_connected(dev);
}

static int bip_prov_shm_address(void *dev, void *buf, size_t *len)
{
    (void) dev;
    (void) buf;
    *len = 0;
    return 0;
}

static int bip_prov_shm_connect(void *dev, const bip_peer_info_t *info, void **out)
{
    bip_prov_shm_peer_t *sp;
    int rc;

    if (info->local_rank < 0) {
        return -ENETUNREACH;
    }
    sp = calloc(1, sizeof(*sp));
    if (NULL == sp) {
        return -ENOMEM;
    }
    rc = bip_shm_peer_connect(dev, (uint32_t) info->local_rank, &sp->p);
    if (0 != rc) {
        free(sp);
        return rc;
    }
    sp->dev = dev;
    *out = sp;
    return 0;
}

static void bip_prov_shm_disconnect(void *peer)
{
    bip_prov_shm_peer_t *sp = peer;

    bip_shm_peer_disconnect(sp->p);
    free(sp);
}

static int bip_prov_shm_alive(void *peer)
{
    return bip_shm_peer_alive(((bip_prov_shm_peer_t *) peer)->p);
}

static void bip_prov_shm_sole(void *peer)
{
    bip_shm_peer_set_sole_sender(((bip_prov_shm_peer_t *) peer)->p);
}

static void bip_prov_shm_queue_sole(void *dev)
{
    bip_shm_srecv_set_sole_sender(dev);
}

static int bip_prov_shm_reserve(void *peer, void **buf)
{
    return bip_shm_ssend_reserve(((bip_prov_shm_peer_t *) peer)->p, buf);
}

static int bip_prov_shm_publish(void *peer, uint32_t len)
{
    return bip_shm_ssend_publish(((bip_prov_shm_peer_t *) peer)->p, len);
}

static int bip_prov_shm_peek(void *dev, const void **msg, uint32_t *len, uint32_t *src)
{
    return bip_shm_srecv_peek(dev, msg, len, src);
}

static void bip_prov_shm_release(void *dev)
{
    bip_shm_srecv_release(dev);
}

static int bip_prov_shm_post(void *dev, void *buf, size_t len, uint32_t *handle)
{
    return bip_shm_post_recv(dev, buf, len, handle);
}

static long bip_prov_shm_test(void *dev, uint32_t handle)
{
    return bip_shm_recv_test(dev, handle);
}

static void bip_prov_shm_unpost(void *dev, uint32_t handle)
{
    bip_shm_recv_unpost(dev, handle);
}

static int bip_prov_shm_send_large(void *peer, uint32_t handle, size_t offset,
                                   const struct iovec *iov, int iovcnt, size_t len)
{
    return bip_shm_send_large(((bip_prov_shm_peer_t *) peer)->p, handle, offset, iov, iovcnt, len);
}

static int bip_prov_shm_read_large(void *peer, void *dst, uint64_t src, const bip_rkey_t *key,
                                   size_t len)
{
    /* CMA needs no key: any address of the peer */
    (void) key;
    return bip_shm_read_large(((bip_prov_shm_peer_t *) peer)->p, dst, src, len);
}

static int bip_prov_shm_register(void *dev, void *addr, size_t len, bip_rkey_t *key, void **reg)
{
    (void) dev;
    (void) addr;
    (void) len;
    key->key = 0;
    key->base = 0;
    *reg = NULL;
    return 0;
}

static void bip_prov_shm_deregister(void *dev, void *reg)
{
    (void) dev;
    (void) reg;
}

static void *bip_prov_shm_peer_dev(void *peer)
{
    return ((bip_prov_shm_peer_t *) peer)->dev;
}

const bip_ops_t bip_shm_ops = {
    .name = "shm",
    .open = bip_prov_shm_open,
    .close = bip_prov_shm_close,
    .probe_large = bip_prov_shm_probe_large,
    .unlink_when_connected = bip_prov_shm_unlink,
    .address = bip_prov_shm_address,
    .peer_connect = bip_prov_shm_connect,
    .peer_disconnect = bip_prov_shm_disconnect,
    .peer_alive = bip_prov_shm_alive,
    .set_sole_sender = bip_prov_shm_sole,
    .set_queue_sole_sender = bip_prov_shm_queue_sole,
    .ssend_reserve = bip_prov_shm_reserve,
    .ssend_publish = bip_prov_shm_publish,
    .srecv_peek = bip_prov_shm_peek,
    .srecv_release = bip_prov_shm_release,
    .post_recv = bip_prov_shm_post,
    .recv_test = bip_prov_shm_test,
    .recv_unpost = bip_prov_shm_unpost,
    .send_large = bip_prov_shm_send_large,
    .read_large = bip_prov_shm_read_large,
    .mem_register = bip_prov_shm_register,
    .mem_deregister = bip_prov_shm_deregister,
    .peer_dev = bip_prov_shm_peer_dev,
};

/* ------------------------------------------------------------------ */
/* the device                                                           */

const char *bip_provider_name(void)
{
    return "shm";
}

static int bip_prov_open_one(bip_dev_t *dev, int which, const bip_ops_t *ops,
                             const bip_dev_params_t *p)
{
    int rc = ops->open(p, &dev->sub[which]);

    /* a network provider binds a port and lists interfaces: on a busy
     * host that can fail for a moment (EADDRNOTAVAIL, an empty list) */
    for (int attempt = 0; 0 != rc && BIP_PROV_OFI == which && attempt < 5; ++attempt) {
        (void) nanosleep(&(struct timespec){.tv_sec = 0, .tv_nsec = 200000000}, NULL);
        rc = ops->open(p, &dev->sub[which]);
    }

    if (0 == rc) {
        dev->ops[which] = ops;
    } else {
        dev->sub[which] = NULL;
    }
    return rc;
}

int bip_open(const bip_dev_params_t *p, bip_dev_t **out)
{
    const char *want;
    bip_dev_t *dev;
    bool shm, ofi;
    int rc = 0;

    if (NULL == p || NULL == out) {
        return -EINVAL;
    }
    want = NULL == p->provider ? "shm" : p->provider;
    if (0 == strcmp(want, "shm")) {
        shm = true;
        ofi = false;
    } else if (0 == strcmp(want, "ofi")) {
        shm = false;
        ofi = true;
    } else if (0 == strcmp(want, "auto")) {
        ofi = p->remote_peers > 0 || p->other_jobs > 0;
        shm = p->expected_peers > 0 || !ofi;
    } else {
        return -EINVAL;
    }
#ifndef TC_HAVE_BIP_OFI
    if (ofi && 0 == strcmp(want, "ofi")) {
        return -ENOTSUP;
    }
    ofi = false;
#endif
    dev = calloc(1, sizeof(*dev));
    if (NULL == dev) {
        return -ENOMEM;
    }
    dev->peeked = -1;
    dev->dflt = -1;
    dev->map_len = p->expected_peers + 1;
    dev->local_map = calloc(dev->map_len, sizeof(*dev->local_map));
    if (NULL == dev->local_map) {
        free(dev);
        return -ENOMEM;
    }
    for (uint32_t i = 0; i < dev->map_len; ++i) {
        dev->local_map[i] = i; /* until connect says otherwise */
    }
    if (shm) {
        rc = bip_prov_open_one(dev, BIP_PROV_SHM, &bip_shm_ops, p);
        if (0 != rc) {
            goto fail;
        }
        dev->dflt = BIP_PROV_SHM;
        dev->shmq = bip_shm_dev_queue(dev->sub[BIP_PROV_SHM]);
    }
#ifdef TC_HAVE_BIP_OFI
    if (ofi) {
        rc = bip_prov_open_one(dev, BIP_PROV_OFI, &bip_ofi_ops, p);
        if (0 != rc && !shm) {
            goto fail;
        }
        /* auto: peers on other hosts stay unreachable; add_procs says so */
        if (dev->dflt < 0 && 0 == rc) {
            dev->dflt = BIP_PROV_OFI;
        }
        rc = 0;
    }
#endif
    dev->nslots = p->nslots;
    dev->slot_size = p->slot_size;
    *out = dev;
    return 0;

fail:
    bip_close(dev);
    return rc;
}

void bip_close(bip_dev_t *dev)
{
    if (NULL == dev) {
        return;
    }
    for (int i = 0; i < BIP_PROV_NUM; ++i) {
        if (NULL != dev->sub[i]) {
            dev->ops[i]->close(dev->sub[i]);
        }
    }
    free(dev->local_map);
    free(dev);
}

const char *bip_dev_providers(const bip_dev_t *dev)
{
    if (NULL != dev->sub[BIP_PROV_SHM] && NULL != dev->sub[BIP_PROV_OFI]) {
        return "shm+ofi";
    }
    return NULL != dev->sub[BIP_PROV_OFI] ? "ofi" : "shm";
}

const char *bip_dev_ofi_fabric(const bip_dev_t *dev)
{
    const bip_ops_t *ops = dev->ops[BIP_PROV_OFI];

    if (NULL == dev->sub[BIP_PROV_OFI] || NULL == ops->fabric) {
        return "";
    }
    return ops->fabric(dev->sub[BIP_PROV_OFI]);
}

int bip_probe_large(bip_dev_t *dev)
{
    /* ofi moves large data with its own RMA: only CMA can be refused
     * (the CMA probe needs no device) */
    if (NULL == dev) {
        return bip_shm_ops.probe_large(NULL);
    }
    return NULL != dev->sub[BIP_PROV_SHM] ? dev->ops[BIP_PROV_SHM]->probe_large(dev->sub[0]) : 0;
}

int bip_unlink_when_connected(bip_dev_t *dev)
{
    return NULL != dev->sub[BIP_PROV_SHM]
        ? dev->ops[BIP_PROV_SHM]->unlink_when_connected(dev->sub[BIP_PROV_SHM])
        : 1;
}

int bip_dev_address(bip_dev_t *dev, void *buf, size_t *len)
{
    if (NULL == dev->sub[BIP_PROV_OFI]) {
        *len = 0;
        return 0;
    }
    return dev->ops[BIP_PROV_OFI]->address(dev->sub[BIP_PROV_OFI], buf, len);
}

uint32_t bip_dev_nslots(const bip_dev_t *dev)
{
    return dev->nslots;
}

uint32_t bip_dev_slot_size(const bip_dev_t *dev)
{
    return dev->slot_size;
}

/* ------------------------------------------------------------------ */
/* peers                                                                */

int bip_peer_connect_info(bip_dev_t *dev, const bip_peer_info_t *info, bip_peer_t **out)
{
    bip_peer_t *peer;
    int which, rc;

    if (NULL == dev || NULL == info || NULL == out) {
        return -EINVAL;
    }
    /* same host and shm open: shm; else ofi, if open */
    if (info->local_rank >= 0 && NULL != dev->sub[BIP_PROV_SHM]) {
        which = BIP_PROV_SHM;
    } else if (NULL != dev->sub[BIP_PROV_OFI]) {
        which = BIP_PROV_OFI;
    } else {
        return -ENETUNREACH;
    }
    peer = calloc(1, sizeof(*peer));
    if (NULL == peer) {
        return -ENOMEM;
    }
    rc = dev->ops[which]->peer_connect(dev->sub[which], info, &peer->sub);
    if (0 != rc) {
        free(peer);
        return rc;
    }
    if (BIP_PROV_SHM == which && (uint32_t) info->local_rank < dev->map_len) {
        /* set before the peer can send: add_procs connects first */
        tc_atomic_store_release(&dev->local_map[info->local_rank], info->rank);
    }
    peer->dev = dev;
    peer->ops = dev->ops[which];
    peer->prov = which;
    if (BIP_PROV_SHM == which) {
        peer->q = bip_shm_peer_queue(((bip_prov_shm_peer_t *) peer->sub)->p, &peer->stamp);
    }
    *out = peer;
    return 0;
}

int bip_peer_connect(bip_dev_t *dev, uint32_t rank, bip_peer_t **peer)
{
    bip_peer_info_t info = {.rank = rank, .local_rank = (int32_t) rank};

    if (NULL == dev || NULL == peer || rank > INT32_MAX || NULL == dev->sub[BIP_PROV_SHM]) {
        return -EINVAL;
    }
    return bip_peer_connect_info(dev, &info, peer);
}

void bip_peer_disconnect(bip_peer_t *peer)
{
    if (NULL == peer) {
        return;
    }
    peer->ops->peer_disconnect(peer->sub);
    free(peer);
}

const char *bip_peer_provider(const bip_peer_t *peer)
{
    return peer->ops->name;
}

int bip_peer_alive(bip_peer_t *peer)
{
    return peer->ops->peer_alive(peer->sub);
}

void bip_peer_lost(bip_peer_t *peer)
{
    if (NULL != peer && NULL != peer->ops->peer_lost) {
        peer->ops->peer_lost(peer->sub);
    }
}

void bip_peer_set_sole_sender(bip_peer_t *peer)
{
    peer->ops->set_sole_sender(peer->sub);
    peer->sole_sender = true;
}

void bip_srecv_set_sole_sender(bip_dev_t *dev)
{
    /* the shm queue's senders are the same-host peers only */
    if (NULL != dev->sub[BIP_PROV_SHM]) {
        dev->ops[BIP_PROV_SHM]->set_queue_sole_sender(dev->sub[BIP_PROV_SHM]);
    }
}

/* ------------------------------------------------------------------ */
/* small messages                                                       */

int bip_ssend_reserve(bip_peer_t *peer, void **buf)
{
    if (NULL != peer->q) {
        /* what bip_shm.c's reserve does, without the two calls */
        tc_mpring_prefetch_claim(peer->q);
        return peer->sole_sender ? tc_mpring_reserve_sole(peer->q, buf)
                                 : tc_mpring_reserve(peer->q, buf);
    }
    return peer->ops->ssend_reserve(peer->sub, buf);
}

int bip_ssend_publish(bip_peer_t *peer, uint32_t len)
{
    if (NULL != peer->q) {
        /* the slot's tag is our shm stamp: the receiver checks it */
        return tc_mpring_publish(peer->q, len, peer->stamp);
    }
    return peer->ops->ssend_publish(peer->sub, len);
}

int bip_srecv_peek(bip_dev_t *dev, const void **msg, uint32_t *len, uint32_t *src)
{
    int first = dev->turn;

    /* each provider's queue in turn, so neither starves the other */
    for (int k = 0; k < BIP_PROV_NUM; ++k) {
        int which = (first + k) % BIP_PROV_NUM;
        int rc;

        if (NULL == dev->sub[which]) {
            continue;
        }
        /* shm: the ring's inline peek (the empty poll is the receiver's
         * inner loop) */
        rc = BIP_PROV_SHM == which ? tc_mpring_peek(dev->shmq, msg, len, src)
                                   : dev->ops[which]->srecv_peek(dev->sub[which], msg, len, src);
        if (-EAGAIN == rc) {
            continue;
        }
        dev->turn = (which + 1) % BIP_PROV_NUM;
        if (0 != rc) {
            return rc;
        }
        dev->peeked = which;
        if (BIP_PROV_SHM == which) {
            /* a node-local rank outside the map stays what it is (the
             * protocol checks every stamp against its peers) */
            if (*src < dev->map_len) {
                *src = tc_atomic_load_acquire(&dev->local_map[*src]);
            }
        }
        return 0;
    }
    return -EAGAIN;
}

struct tc_mpring *bip_dev_shm_only_queue(bip_dev_t *dev, const uint32_t **map, uint32_t *map_len)
{
    if (NULL == dev || NULL != dev->sub[BIP_PROV_OFI]) {
        return NULL;
    }
    *map = dev->local_map;
    *map_len = dev->map_len;
    return dev->shmq;
}

struct tc_mpring *bip_dev_shm_queue(bip_dev_t *dev, const uint32_t **map, uint32_t *map_len)
{
    if (NULL == dev) {
        return NULL;
    }
    *map = dev->local_map;
    *map_len = dev->map_len;
    return dev->shmq;
}

int bip_srecv_peek_other(bip_dev_t *dev, const void **msg, uint32_t *len, uint32_t *src)
{
    int rc;

    if (NULL == dev->sub[BIP_PROV_OFI]) {
        return -EAGAIN;
    }
    rc = dev->ops[BIP_PROV_OFI]->srecv_peek(dev->sub[BIP_PROV_OFI], msg, len, src);
    if (0 == rc) {
        dev->peeked = BIP_PROV_OFI;
    }
    return rc;
}

void bip_srecv_release(bip_dev_t *dev)
{
    int which = dev->peeked;

    if (which < 0) {
        return;
    }
    dev->peeked = -1;
    if (BIP_PROV_SHM == which) {
        tc_mpring_release(dev->shmq);
        return;
    }
    dev->ops[which]->srecv_release(dev->sub[which]);
}

/* ------------------------------------------------------------------ */
/* posted receives                                                      */

int bip_post_recv(bip_dev_t *dev, void *buf, size_t len, uint32_t *handle)
{
    if (dev->dflt < 0) {
        return -EINVAL;
    }
    return dev->ops[dev->dflt]->post_recv(dev->sub[dev->dflt], buf, len, handle);
}

long bip_recv_test(bip_dev_t *dev, uint32_t handle)
{
    if (dev->dflt < 0) {
        return -EINVAL;
    }
    return dev->ops[dev->dflt]->recv_test(dev->sub[dev->dflt], handle);
}

void bip_recv_unpost(bip_dev_t *dev, uint32_t handle)
{
    if (dev->dflt >= 0) {
        dev->ops[dev->dflt]->recv_unpost(dev->sub[dev->dflt], handle);
    }
}

int bip_peer_post_recv(bip_peer_t *peer, void *buf, size_t len, uint32_t *handle)
{
    return peer->ops->post_recv(peer->ops->peer_dev(peer->sub), buf, len, handle);
}

long bip_peer_recv_test(bip_peer_t *peer, uint32_t handle)
{
    return peer->ops->recv_test(peer->ops->peer_dev(peer->sub), handle);
}

void bip_peer_recv_unpost(bip_peer_t *peer, uint32_t handle)
{
    peer->ops->recv_unpost(peer->ops->peer_dev(peer->sub), handle);
}

/* ------------------------------------------------------------------ */
/* large messages                                                       */

int bip_send_large(bip_peer_t *peer, uint32_t handle, size_t offset, const struct iovec *iov,
                   int iovcnt, size_t len)
{
    return peer->ops->send_large(peer->sub, handle, offset, iov, iovcnt, len);
}

int bip_read_large(bip_peer_t *peer, void *dst, uint64_t src, size_t len)
{
    return peer->ops->read_large(peer->sub, dst, src, NULL, len);
}

int bip_read_large_key(bip_peer_t *peer, void *dst, uint64_t src, const bip_rkey_t *key, size_t len)
{
    return peer->ops->read_large(peer->sub, dst, src, key, len);
}

int bip_read_start(bip_peer_t *peer, void *dst, uint64_t src, const bip_rkey_t *key, size_t len,
                   void *cookie)
{
    if (NULL == peer->ops->read_start) {
        return peer->ops->read_large(peer->sub, dst, src, key, len);
    }
    return peer->ops->read_start(peer->sub, dst, src, key, len, cookie);
}

int bip_ssend_gather(bip_peer_t *peer, const void *head, uint32_t head_len, const struct iovec *iov,
                     int iovcnt, void *cookie)
{
    if (NULL == peer->ops->ssend_gather) {
        return -ENOTSUP;
    }
    return peer->ops->ssend_gather(peer->sub, head, head_len, iov, iovcnt, cookie);
}

int bip_ssend_reap(bip_dev_t *dev, void **cookie, int *status)
{
    for (int i = 0; i < BIP_PROV_NUM; ++i) {
        if (NULL != dev->sub[i] && NULL != dev->ops[i]->ssend_reap &&
            1 == dev->ops[i]->ssend_reap(dev->sub[i], cookie, status)) {
            return 1;
        }
    }
    return 0;
}

int bip_read_reap(bip_dev_t *dev, void **cookie, int *status)
{
    for (int i = 0; i < BIP_PROV_NUM; ++i) {
        if (NULL != dev->sub[i] && NULL != dev->ops[i]->read_reap &&
            1 == dev->ops[i]->read_reap(dev->sub[i], cookie, status)) {
            return 1;
        }
    }
    return 0;
}

int bip_peer_can_read(const bip_peer_t *peer)
{
    return BIP_PROV_SHM == peer->prov;
}

int bip_mem_register(bip_dev_t *dev, void *addr, size_t len, bip_rkey_t *key, void **reg)
{
    if (NULL == dev->sub[BIP_PROV_OFI]) {
        return bip_shm_ops.mem_register(NULL, addr, len, key, reg);
    }
    return dev->ops[BIP_PROV_OFI]->mem_register(dev->sub[BIP_PROV_OFI], addr, len, key, reg);
}

void bip_mem_deregister(bip_dev_t *dev, void *reg)
{
    if (NULL != reg && NULL != dev->sub[BIP_PROV_OFI]) {
        dev->ops[BIP_PROV_OFI]->mem_deregister(dev->sub[BIP_PROV_OFI], reg);
    }
}
