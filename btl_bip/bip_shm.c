/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * bip_shm.c: the `shm` provider of the BIP device API (bip_device.h).
 *
 * Each process owns one file in the job's session directory (mode 0600):
 *   header       magic, owner pid, rank, geometry, connection count
 *   posted table max_posted entries {handle, addr, len, filled}: the large
 *                receives this process posted, read by senders
 *   queue        the static receive queue, a tc_mpring (multi-producer,
 *                one consumer) shared by every sender
 * Senders map the file; the last expected connection lets the owner unlink
 * it, so nothing stays on disk while the job runs (and the runtime removes
 * the session directory after a crash). Large data moves with CMA
 * (process_vm_writev) straight into the posted receive, fragment by
 * fragment, each checked against the published receive and published to
 * the receiver by adding to its `filled` counter.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#include "bip_device.h"
#include "tc_alive.h"
#include "tc_atomic.h"
#include "tc_cma.h"
#include "tc_mpring.h"
#include "tc_shm.h"

#define BIP_SHM_MAGIC 0x4249507175657531ull /* "BIPqueu1" */
#define BIP_SHM_IDX_BITS 12u                /* max_posted <= 4096 */
#define BIP_SHM_IDX_MASK ((1u << BIP_SHM_IDX_BITS) - 1u)
#define BIP_SHM_IOV_MAX 64

typedef struct bip_shm_hdr {
    uint64_t magic;
    int32_t pid;
    uint32_t rank;
    uint32_t nslots;
    uint32_t slot_size;
    uint32_t max_posted;
    uint32_t expected;
    uint32_t attached; /* atomic: peers that connected */
    uint8_t pad[64 - 36];
} bip_shm_hdr_t;

_Static_assert(sizeof(bip_shm_hdr_t) == 64, "bip_shm_hdr_t is one cache line");

/* one posted large receive as senders see it */
typedef struct bip_shm_post {
    uint32_t handle; /* 0: not posted; else index | generation */
    uint32_t pad0;
    uint64_t addr; /* receiver's virtual address */
    uint64_t len;
    uint64_t filled; /* atomic: bytes written by the sender */
    uint8_t pad[64 - 32];
} bip_shm_post_t;

_Static_assert(sizeof(bip_shm_post_t) == 64, "bip_shm_post_t is one cache line");

struct bip_dev {
    tc_shm_seg_t seg;
    bip_shm_hdr_t *hdr;
    bip_shm_post_t *posted;
    tc_mpring_t queue; /* consumer view */
    char *dir;
    char *key;
    uint32_t rank;
    uint32_t nslots;
    uint32_t slot_size;
    uint32_t max_posted;
    uint32_t num_posted;
    uint32_t next_gen;
    size_t frag_size;
    int unlinked;
};

struct bip_peer {
    bip_dev_t *dev;
    tc_shm_seg_t seg;
    bip_shm_hdr_t *hdr;
    bip_shm_post_t *posted;
    tc_mpring_t queue; /* producer view */
    bool sole_sender;  /* sole-sender mode: claims without CAS */
    uint32_t max_posted;
    pid_t pid;
    tc_alive_t alive; /* the peer process, held since connect */
    int failed;
};

static size_t bip_shm_posted_off(void)
{
    return sizeof(bip_shm_hdr_t);
}

static size_t bip_shm_queue_off(uint32_t max_posted)
{
    return TC_ALIGN_UP(bip_shm_posted_off() + (size_t) max_posted * sizeof(bip_shm_post_t),
                       (size_t) 64);
}

static size_t bip_shm_bytes(uint32_t nslots, uint32_t slot_size, uint32_t max_posted)
{
    size_t q = tc_mpring_size(nslots, slot_size);

    return 0 == q ? 0 : bip_shm_queue_off(max_posted) + q;
}

static void bip_shm_name(char *buf, size_t len, const char *key, uint32_t rank)
{
    snprintf(buf, len, "bip.%s.%u", key, rank);
}

const char *bip_provider_name(void)
{
    return "shm";
}

int bip_open(const bip_dev_params_t *p, bip_dev_t **out)
{
    bip_dev_t *dev;
    char name[128];
    size_t bytes;
    int rc;

    if (NULL == p || NULL == out || NULL == p->dir || NULL == p->job_key || 0 == p->max_posted ||
        p->max_posted > BIP_SHM_IDX_MASK || 0 == p->frag_size || p->slot_size < 16) {
        return -EINVAL;
    }
    bytes = bip_shm_bytes(p->nslots, p->slot_size, p->max_posted);
    if (0 == bytes) {
        return -EINVAL;
    }
    dev = calloc(1, sizeof(*dev));
    if (NULL == dev) {
        return -ENOMEM;
    }
    dev->dir = strdup(p->dir);
    dev->key = strdup(p->job_key);
    if (NULL == dev->dir || NULL == dev->key) {
        rc = -ENOMEM;
        goto fail;
    }
    bip_shm_name(name, sizeof(name), p->job_key, p->rank);
    rc = tc_shm_create(&dev->seg, p->dir, name, bytes);
    if (0 != rc) {
        goto fail;
    }
    dev->hdr = dev->seg.base;
    dev->posted = (bip_shm_post_t *) ((char *) dev->seg.base + bip_shm_posted_off());
    rc = tc_mpring_format((char *) dev->seg.base + bip_shm_queue_off(p->max_posted),
                          bytes - bip_shm_queue_off(p->max_posted), p->nslots, p->slot_size);
    if (0 == rc) {
        rc =
            tc_mpring_attach(&dev->queue, (char *) dev->seg.base + bip_shm_queue_off(p->max_posted),
                             bytes - bip_shm_queue_off(p->max_posted), p->nslots, p->slot_size);
    }
    if (0 != rc) {
        tc_shm_unlink(&dev->seg);
        tc_shm_detach(&dev->seg);
        goto fail;
    }
    dev->rank = p->rank;
    dev->nslots = p->nslots;
    dev->slot_size = p->slot_size;
    dev->max_posted = p->max_posted;
    dev->frag_size = p->frag_size;
    dev->next_gen = 1;
    dev->hdr->pid = (int32_t) getpid();
    dev->hdr->rank = p->rank;
    dev->hdr->nslots = p->nslots;
    dev->hdr->slot_size = p->slot_size;
    dev->hdr->max_posted = p->max_posted;
    dev->hdr->expected = p->expected_peers;
    tc_atomic_store_relaxed(&dev->hdr->attached, 0);
    /* the magic last: a peer that sees it sees a formatted file */
    tc_shm_publish(&dev->hdr->magic, BIP_SHM_MAGIC);
    /* no peer expected: the name goes now */
    dev->unlinked = tc_shm_unlink_when_attached(&dev->seg, &dev->hdr->attached, dev->hdr->expected);
    *out = dev;
    return 0;

fail:
    free(dev->dir);
    free(dev->key);
    free(dev);
    return rc;
}

void bip_close(bip_dev_t *dev)
{
    if (NULL == dev) {
        return;
    }
    if (!dev->unlinked) {
        (void) tc_shm_unlink(&dev->seg);
    }
    (void) tc_shm_detach(&dev->seg);
    free(dev->dir);
    free(dev->key);
    free(dev);
}

int bip_unlink_when_connected(bip_dev_t *dev)
{
    if (dev->unlinked) {
        return 1;
    }
    /* the last peer to connect removed it (tc_shm.h's one rule); this
     * only notices */
    dev->unlinked = tc_shm_unlink_when_attached(&dev->seg, &dev->hdr->attached, dev->hdr->expected);
    return dev->unlinked ? 1 : 0;
}

uint32_t bip_dev_nslots(const bip_dev_t *dev)
{
    return dev->nslots;
}

uint32_t bip_dev_slot_size(const bip_dev_t *dev)
{
    return dev->slot_size;
}

int bip_probe_large(bip_dev_t *dev)
{
    (void) dev;
    return tc_cma_probe(getpid());
}

/* ------------------------------------------------------------------ */
/* peers                                                                */

int bip_peer_connect(bip_dev_t *dev, uint32_t rank, bip_peer_t **out)
{
    bip_peer_t *peer;
    bip_shm_hdr_t *h;
    char name[128];
    size_t bytes;
    int rc;

    if (NULL == dev || NULL == out || rank == dev->rank) {
        return -EINVAL;
    }
    peer = calloc(1, sizeof(*peer));
    if (NULL == peer) {
        return -ENOMEM;
    }
    bip_shm_name(name, sizeof(name), dev->key, rank);
    rc = tc_shm_attach_header(&peer->seg, dev->dir, name, sizeof(*h));
    if (0 != rc) {
        free(peer);
        return rc;
    }
    h = peer->seg.base;
    if (!tc_shm_published(&h->magic, BIP_SHM_MAGIC)) {
        /* created but not formatted yet */
        tc_shm_detach(&peer->seg);
        free(peer);
        return -ENOENT;
    }
    /* the geometry must match ours and the file's size, whatever the file
     * says about itself */
    bytes = bip_shm_bytes(h->nslots, h->slot_size, h->max_posted);
    if (h->rank != rank || h->nslots != dev->nslots || h->slot_size != dev->slot_size ||
        h->max_posted != dev->max_posted || 0 == bytes || bytes != peer->seg.size || h->pid <= 0) {
        tc_shm_detach(&peer->seg);
        free(peer);
        return -EPROTO;
    }
    rc = tc_mpring_attach(&peer->queue, (char *) peer->seg.base + bip_shm_queue_off(h->max_posted),
                          bytes - bip_shm_queue_off(h->max_posted), h->nslots, h->slot_size);
    if (0 != rc) {
        tc_shm_detach(&peer->seg);
        free(peer);
        return rc;
    }
    peer->dev = dev;
    peer->hdr = h;
    peer->posted = (bip_shm_post_t *) ((char *) peer->seg.base + bip_shm_posted_off());
    peer->max_posted = h->max_posted;
    peer->pid = (pid_t) h->pid;
    /* a peer already gone shows at the first liveness check */
    (void) tc_alive_open(&peer->alive, peer->pid);
    /* the last expected peer removes the name */
    (void) tc_shm_count_attach(&peer->seg, &h->attached, h->expected);
    *out = peer;
    return 0;
}

void bip_peer_disconnect(bip_peer_t *peer)
{
    if (NULL == peer) {
        return;
    }
    tc_alive_close(&peer->alive);
    (void) tc_shm_detach(&peer->seg);
    free(peer);
}

int bip_peer_alive(bip_peer_t *peer)
{
    if (peer->failed) {
        return -ESRCH;
    }
    if (0 != tc_alive_check(&peer->alive)) {
        peer->failed = 1;
        return -ESRCH;
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* small messages                                                       */

void bip_peer_set_sole_sender(bip_peer_t *peer)
{
    peer->sole_sender = true;
    tc_mpring_set_sole_sender(&peer->queue);
}

void bip_srecv_set_sole_sender(bip_dev_t *dev)
{
    tc_mpring_set_sole_sender(&dev->queue);
}

int bip_ssend_reserve(bip_peer_t *peer, void **buf)
{
    tc_mpring_prefetch_claim(&peer->queue);
    if (peer->sole_sender) {
        return tc_mpring_reserve_sole(&peer->queue, buf);
    }
    return tc_mpring_reserve(&peer->queue, buf);
}

int bip_ssend_publish(bip_peer_t *peer, uint32_t len)
{
    /* the slot's tag is the sender's rank: the receiver checks it */
    return tc_mpring_publish(&peer->queue, len, peer->dev->rank);
}

int bip_srecv_peek(bip_dev_t *dev, const void **msg, uint32_t *len, uint32_t *src)
{
    return tc_mpring_peek(&dev->queue, msg, len, src);
}

void bip_srecv_release(bip_dev_t *dev)
{
    tc_mpring_release(&dev->queue);
}

/* The queues themselves, for bip_provider.c's per-message path (no ops
 * table, no call per message): the receive queue, and a peer's queue
 * with the stamp its messages carry. */
tc_mpring_t *bip_shm_dev_queue(bip_dev_t *dev)
{
    return &dev->queue;
}

tc_mpring_t *bip_shm_peer_queue(bip_peer_t *peer, uint32_t *stamp)
{
    *stamp = peer->dev->rank;
    return &peer->queue;
}

/* ------------------------------------------------------------------ */
/* posted receives                                                      */

int bip_post_recv(bip_dev_t *dev, void *buf, size_t len, uint32_t *handle)
{
    uint32_t idx, h;

    if (NULL == handle || (NULL == buf && 0 != len)) {
        return -EINVAL;
    }
    if (dev->num_posted >= dev->max_posted) {
        return -EAGAIN;
    }
    for (idx = 0; idx < dev->max_posted; ++idx) {
        if (0 == dev->posted[idx].handle) {
            break;
        }
    }
    if (idx == dev->max_posted) {
        return -EAGAIN;
    }
    /* generation in the high bits, never 0: a stale handle is refused */
    if (0 == (dev->next_gen & ((1u << (32 - BIP_SHM_IDX_BITS)) - 1u))) {
        dev->next_gen = 1;
    }
    h = (dev->next_gen++ << BIP_SHM_IDX_BITS) | idx;
    dev->posted[idx].addr = (uint64_t) (uintptr_t) buf;
    dev->posted[idx].len = len;
    tc_atomic_store_relaxed(&dev->posted[idx].filled, 0);
    tc_atomic_store_release(&dev->posted[idx].handle, h);
    dev->num_posted++;
    *handle = h;
    return 0;
}

long bip_recv_test(bip_dev_t *dev, uint32_t handle)
{
    uint32_t idx = handle & BIP_SHM_IDX_MASK;

    if (idx >= dev->max_posted || dev->posted[idx].handle != handle) {
        return -EINVAL;
    }
    return (long) tc_atomic_load_acquire(&dev->posted[idx].filled);
}

void bip_recv_unpost(bip_dev_t *dev, uint32_t handle)
{
    uint32_t idx = handle & BIP_SHM_IDX_MASK;

    if (idx >= dev->max_posted || dev->posted[idx].handle != handle) {
        return;
    }
    tc_atomic_store_release(&dev->posted[idx].handle, 0);
    dev->num_posted--;
}

/* ------------------------------------------------------------------ */
/* large sends                                                          */

int bip_send_large(bip_peer_t *peer, uint32_t handle, size_t offset, const struct iovec *iov,
                   int iovcnt, size_t len)
{
    uint32_t idx = handle & BIP_SHM_IDX_MASK;
    const size_t frag = peer->dev->frag_size;
    bip_shm_post_t *post;
    uint64_t addr, plen;
    size_t done = 0, in_off = 0;
    int cur = 0;

    if (idx >= peer->max_posted || 0 == handle) {
        return -EINVAL;
    }
    post = peer->posted + idx;
    if (tc_atomic_load_acquire(&post->handle) != handle) {
        return -EINVAL;
    }
    /* read the receive once; check the whole write against it */
    addr = post->addr;
    plen = post->len;
    if (offset > plen || len > plen - offset) {
        return -ERANGE;
    }
    while (done < len) {
        struct iovec local[BIP_SHM_IOV_MAX], remote;
        size_t want = len - done < frag ? len - done : frag, got = 0;
        int nl = 0;
        ssize_t n;

        /* gather this fragment's local pieces */
        while (got < want && nl < BIP_SHM_IOV_MAX) {
            size_t avail, take;

            if (cur >= iovcnt) {
                return -EINVAL;
            }
            avail = iov[cur].iov_len - in_off;
            take = avail < want - got ? avail : want - got;
            local[nl].iov_base = (char *) iov[cur].iov_base + in_off;
            local[nl].iov_len = take;
            ++nl;
            got += take;
            in_off += take;
            if (in_off == iov[cur].iov_len) {
                ++cur;
                in_off = 0;
            }
        }
        remote.iov_base = (void *) (uintptr_t) (addr + offset + done);
        remote.iov_len = got;
        n = process_vm_writev(peer->pid, local, (unsigned long) nl, &remote, 1, 0);
        if (n < 0) {
            if (ESRCH == errno) {
                peer->failed = 1;
                return -ESRCH;
            }
            return -errno;
        }
        if ((size_t) n != got) {
            /* a partial write: the rest of this fragment is retried */
            size_t back = got - (size_t) n;
            /* step the cursor back by `back` bytes */
            while (back > 0) {
                if (0 == in_off) {
                    --cur;
                    in_off = iov[cur].iov_len;
                }
                size_t step = back < in_off ? back : in_off;
                in_off -= step;
                back -= step;
            }
            got = (size_t) n;
            if (0 == n) {
                return -EFAULT;
            }
        }
        done += got;
        /* the fragment is in place: tell the receiver (release: data first) */
        tc_atomic_add_fetch_release(&post->filled, (uint64_t) got);
    }
    return 0;
}

int bip_read_large(bip_peer_t *peer, void *dst, uint64_t src, size_t len)
{
    const size_t frag = peer->dev->frag_size;
    size_t done = 0;

    if (0 != len && (NULL == dst || src > UINT64_MAX - len)) {
        return -EFAULT;
    }
    while (done < len) {
        size_t want = len - done < frag ? len - done : frag;
        struct iovec local = {.iov_base = (char *) dst + done, .iov_len = want};
        struct iovec remote = {.iov_base = (void *) (uintptr_t) (src + done), .iov_len = want};
        ssize_t n = process_vm_readv(peer->pid, &local, 1, &remote, 1, 0);

        if (n < 0) {
            if (ESRCH == errno) {
                peer->failed = 1;
                return -ESRCH;
            }
            return -errno;
        }
        if (0 == n) {
            return -EFAULT;
        }
        /* a partial read (page boundary of a bad range): go on from there */
        done += (size_t) n;
    }
    return 0;
}
