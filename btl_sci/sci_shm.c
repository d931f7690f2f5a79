/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * sci_shm.c: the `shm` provider of the SCI device API (sci_device.h).
 *
 * A segment is a file in the job's session directory (mode 0600) mapped
 * by its owner; connecting maps the same file, so remote stores are plain
 * stores.  A provider header in front of every segment carries its state
 * (so a peer can tell a removed segment from a live one), the owner's pid
 * (so a peer can tell a dead owner) and a count of connections: the last
 * expected connection unlinks the file, leaving nothing on disk while the
 * job runs.  The DMA engine is Linux CMA (process_vm_readv/writev).
 */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#include "sci_device.h"
#include "sci_provider.h"
#include "tc_alive.h"
#include "tc_atomic.h"
#include "tc_cma.h"
#include "tc_shm.h"

#define SCI_SHM_MAGIC 0x5343497365676d31ull /* "SCIsegm1" */
#define SCI_SHM_HDR_SIZE 4096               /* header page; user area follows */
#define SCI_SHM_IOV_MAX 64

enum {
    SCI_SEG_CREATED = 1,
    SCI_SEG_PREPARED = 2,
    SCI_SEG_AVAILABLE = 3,
    SCI_SEG_UNAVAILABLE = 4,
    SCI_SEG_DEAD = 5
};

/* provider header at offset 0 of every segment file */
typedef struct sci_shm_seg_hdr {
    uint64_t magic;
    uint32_t segment_id;
    uint32_t node_id;
    int32_t owner_pid;
    int32_t state; /* shared: tc_atomic.h accessors only */
    uint32_t expected;
    uint32_t attached;
    uint64_t user_size;
} sci_shm_seg_hdr_t;

struct sci_desc {
    sci_obj_t obj; /* first: the provider's ops */
    char *dir;
    char *key;
    uint32_t node_id;
    pid_t pid;
};

struct sci_local_segment {
    sci_obj_t obj; /* first: the provider's ops */
    sci_desc_t *sd;
    tc_shm_seg_t shm;
    sci_shm_seg_hdr_t *hdr;
    uint32_t segment_id;
    int unlinked;
};

struct sci_remote_segment {
    sci_obj_t obj; /* first: the provider's ops */
    sci_desc_t *sd;
    tc_shm_seg_t shm;
    sci_shm_seg_hdr_t *hdr;
    pid_t owner;
    tc_alive_t owner_alive; /* the owner process, held since connect */
    uint64_t user_size;     /* read once and checked at connect: the owner can
                         * rewrite its header later */
};

struct sci_sequence {
    sci_obj_t obj; /* first: the provider's ops */
    sci_remote_segment_t *rseg;
    sci_error_t failed; /* sticky: DISCONNECTED or TRANSFER_FAILED */
};

typedef struct sci_dma_entry {
    int direction;
    pid_t pid;
    struct iovec local;
    struct iovec remote;
} sci_dma_entry_t;

struct sci_dma_queue {
    sci_obj_t obj; /* first: the provider's ops */
    sci_desc_t *sd;
    int shared; /* several threads: transfer takes the lock */
    pthread_mutex_t lock;
    unsigned max_entries;
    unsigned count;
    sci_error_t status;
    sci_dma_entry_t *entries;
};

static const sci_provider_ops_t sci_shm_ops;

static sci_error_t sci_shm_errno(int err)
{
    switch (err) {
    case 0:
        return SCI_ERR_OK;
    case ENOSPC:
    case ENOMEM:
    case EDQUOT:
    case EFBIG:
        return SCI_ERR_NOSPC;
    case EACCES:
    case EPERM:
    case EROFS:
        return SCI_ERR_ACCESS;
    case ENOENT:
        return SCI_ERR_NO_SUCH_SEGMENT;
    case ESRCH:
        return SCI_ERR_TRANSFER_FAILED;
    case EINVAL:
        return SCI_ERR_ILLEGAL_PARAMETER;
    case EFAULT:
        return SCI_ERR_OUT_OF_RANGE;
    default:
        return SCI_ERR_SYSTEM;
    }
}

/* the node id of this host: every process of the host computes the same
 * value from its host name (the shm provider reaches only its own host) */
static uint32_t sci_shm_host_id(void)
{
    char name[256] = {0};
    uint32_t h = 2166136261u;

    (void) gethostname(name, sizeof(name) - 1);
    for (const char *p = name; *p; ++p) {
        h = (h ^ (uint8_t) *p) * 16777619u;
    }
    /* SCI node ids are multiples of 4; keep the look, avoid 0 */
    return (h & 0xfffffffcu) | 4u;
}

static sci_error_t sci_shm_open(const sci_open_params_t *params, sci_desc_t **sd)
{
    sci_desc_t *d;

    if (NULL == params || NULL == params->segment_dir || NULL == sd) {
        return SCI_ERR_ILLEGAL_PARAMETER;
    }
    d = sci_obj_new(sizeof(*d), &sci_shm_ops);
    if (NULL == d) {
        return SCI_ERR_NOSPC;
    }
    d->dir = strdup(params->segment_dir);
    d->key = strdup(params->job_key ? params->job_key : "sci");
    if (NULL == d->dir || NULL == d->key) {
        free(d->dir);
        free(d->key);
        free(d);
        return SCI_ERR_NOSPC;
    }
    d->node_id = sci_shm_host_id();
    d->pid = getpid();
    *sd = d;
    return SCI_ERR_OK;
}

static void sci_shm_close(sci_desc_t *sd)
{
    if (NULL == sd) {
        return;
    }
    free(sd->dir);
    free(sd->key);
    free(sd);
}

static uint32_t sci_shm_local_node_id(const sci_desc_t *sd)
{
    return sd->node_id;
}

/* segment file name: <dir>/sci.<key>.<segment id> */
static int sci_shm_name(const sci_desc_t *sd, uint32_t segment_id, char *buf, size_t len)
{
    int n = snprintf(buf, len, "sci.%s.%08x", sd->key, segment_id);
    return (n < 0 || (size_t) n >= len) ? -1 : 0;
}

static sci_error_t sci_shm_create_segment(sci_desc_t *sd, uint32_t segment_id, size_t size,
                                          sci_local_segment_t **seg)
{
    sci_local_segment_t *s;
    char name[256];
    size_t total;
    int rc;

    if (NULL == sd || NULL == seg || 0 == size || size > ((size_t) 1 << 40)) {
        return SCI_ERR_ILLEGAL_PARAMETER;
    }
    if (0 != sci_shm_name(sd, segment_id, name, sizeof(name))) {
        return SCI_ERR_ILLEGAL_PARAMETER;
    }
    s = sci_obj_new(sizeof(*s), &sci_shm_ops);
    if (NULL == s) {
        return SCI_ERR_NOSPC;
    }
    total = SCI_SHM_HDR_SIZE + TC_ALIGN_UP(size, (size_t) 4096);
    rc = tc_shm_create(&s->shm, sd->dir, name, total);
    if (0 != rc) {
        free(s);
        return sci_shm_errno(-rc);
    }
    s->sd = sd;
    s->segment_id = segment_id;
    s->hdr = (sci_shm_seg_hdr_t *) s->shm.base;
    s->hdr->segment_id = segment_id;
    s->hdr->node_id = sd->node_id;
    s->hdr->owner_pid = (int32_t) sd->pid;
    s->hdr->user_size = total - SCI_SHM_HDR_SIZE;
    s->hdr->state = SCI_SEG_CREATED;
    tc_shm_publish(&s->hdr->magic, SCI_SHM_MAGIC);
    *seg = s;
    return SCI_ERR_OK;
}

static sci_error_t sci_shm_prepare_segment(sci_local_segment_t *seg)
{
    if (NULL == seg) {
        return SCI_ERR_ILLEGAL_PARAMETER;
    }
    /* the pages exist already (the file is sized at create); nothing for
     * an adapter to pin here */
    tc_atomic_store_release(&seg->hdr->state, SCI_SEG_PREPARED);
    return SCI_ERR_OK;
}

static sci_error_t sci_shm_set_segment_available(sci_local_segment_t *seg,
                                                 unsigned expected_connections)
{
    if (NULL == seg || 0 == expected_connections) {
        return SCI_ERR_ILLEGAL_PARAMETER;
    }
    tc_atomic_store_relaxed(&seg->hdr->expected, (uint32_t) expected_connections);
    tc_atomic_store_release(&seg->hdr->state, SCI_SEG_AVAILABLE);
    return SCI_ERR_OK;
}

static sci_error_t sci_shm_set_segment_unavailable(sci_local_segment_t *seg)
{
    if (NULL == seg) {
        return SCI_ERR_ILLEGAL_PARAMETER;
    }
    tc_atomic_store_release(&seg->hdr->state, SCI_SEG_UNAVAILABLE);
    return SCI_ERR_OK;
}

static void *sci_shm_local_segment_address(const sci_local_segment_t *seg)
{
    return (char *) seg->shm.base + SCI_SHM_HDR_SIZE;
}

static size_t sci_shm_local_segment_size(const sci_local_segment_t *seg)
{
    return (size_t) seg->hdr->user_size;
}

static void sci_shm_remove_segment(sci_local_segment_t *seg)
{
    if (NULL == seg) {
        return;
    }
    /* peers still mapping it see the state and report a transfer error */
    tc_atomic_store_release(&seg->hdr->state, SCI_SEG_DEAD);
    /* the name may still exist if not every peer connected */
    tc_shm_unlink(&seg->shm);
    tc_shm_detach(&seg->shm);
    free(seg);
}

static sci_error_t sci_shm_connect_segment(sci_desc_t *sd, uint32_t node_id, uint32_t segment_id,
                                           sci_remote_segment_t **rseg)
{
    sci_remote_segment_t *r;
    char name[256];
    uint64_t user_size = 0;
    int32_t state;
    int rc;

    if (NULL == sd || NULL == rseg) {
        return SCI_ERR_ILLEGAL_PARAMETER;
    }
    if (node_id != sd->node_id) {
        /* the shm provider reaches this host only */
        return SCI_ERR_NOT_SUPPORTED;
    }
    if (0 != sci_shm_name(sd, segment_id, name, sizeof(name))) {
        return SCI_ERR_ILLEGAL_PARAMETER;
    }
    r = sci_obj_new(sizeof(*r), &sci_shm_ops);
    if (NULL == r) {
        return SCI_ERR_NOSPC;
    }
    rc = tc_shm_attach_header(&r->shm, sd->dir, name, SCI_SHM_HDR_SIZE);
    if (0 != rc) {
        free(r);
        /* -ENOENT: not there yet, or not sized yet */
        return sci_shm_errno(-rc);
    }
    r->sd = sd;
    r->hdr = (sci_shm_seg_hdr_t *) r->shm.base;
    /* a file that is still being created, or is not ours: not available */
    if (!tc_shm_published(&r->hdr->magic, SCI_SHM_MAGIC) || r->hdr->segment_id != segment_id ||
        (user_size = tc_atomic_load_relaxed(&r->hdr->user_size)) > r->shm.size - SCI_SHM_HDR_SIZE) {
        tc_shm_detach(&r->shm);
        free(r);
        return SCI_ERR_NO_SUCH_SEGMENT;
    }
    state = tc_atomic_load_acquire(&r->hdr->state);
    if (SCI_SEG_AVAILABLE != state) {
        tc_shm_detach(&r->shm);
        free(r);
        return SCI_SEG_DEAD == state ? SCI_ERR_TRANSFER_FAILED : SCI_ERR_NO_SUCH_SEGMENT;
    }
    r->owner = (pid_t) r->hdr->owner_pid;
    /* an owner already gone shows at the first sequence check */
    (void) tc_alive_open(&r->owner_alive, r->owner);
    r->user_size = user_size;
    /* the last expected connection removes the name: nothing stays on disk */
    (void) tc_shm_count_attach(&r->shm, &r->hdr->attached,
                               tc_atomic_load_relaxed(&r->hdr->expected));
    *rseg = r;
    return SCI_ERR_OK;
}

static void *sci_shm_map_remote_segment(sci_remote_segment_t *rseg, size_t offset, size_t size)
{
    if (NULL == rseg || offset > rseg->user_size || size > rseg->user_size - offset) {
        return NULL;
    }
    return (char *) rseg->shm.base + SCI_SHM_HDR_SIZE + offset;
}

static size_t sci_shm_remote_segment_size(const sci_remote_segment_t *rseg)
{
    return (size_t) rseg->user_size;
}

static void sci_shm_disconnect_segment(sci_remote_segment_t *rseg)
{
    if (NULL == rseg) {
        return;
    }
    tc_alive_close(&rseg->owner_alive);
    tc_shm_detach(&rseg->shm);
    free(rseg);
}

static sci_error_t sci_shm_create_map_sequence(sci_remote_segment_t *rseg, sci_sequence_t **seq)
{
    sci_sequence_t *s;

    if (NULL == rseg || NULL == seq) {
        return SCI_ERR_ILLEGAL_PARAMETER;
    }
    s = sci_obj_new(sizeof(*s), &sci_shm_ops);
    if (NULL == s) {
        return SCI_ERR_NOSPC;
    }
    s->rseg = rseg;
    *seq = s;
    return SCI_ERR_OK;
}

static void sci_shm_remove_sequence(sci_sequence_t *seq)
{
    free(seq);
}

static sci_error_t sci_shm_start_sequence(sci_sequence_t *seq)
{
    if (NULL == seq) {
        return SCI_ERR_ILLEGAL_PARAMETER;
    }
    return seq->failed;
}

static sci_error_t sci_shm_check_sequence(sci_sequence_t *seq)
{
    int32_t state;

    if (NULL == seq) {
        return SCI_ERR_ILLEGAL_PARAMETER;
    }
    if (seq->failed) {
        return seq->failed;
    }
    /* all stores so far are visible before we judge the peer alive */
    tc_atomic_fence_full();
    /* the state first: an owner that removed its segment and then ended
     * left in order, although its pid is gone too */
    state = tc_atomic_load_acquire(&seq->rseg->hdr->state);
    if (SCI_SEG_DEAD == state || SCI_SEG_UNAVAILABLE == state) {
        seq->failed = SCI_ERR_DISCONNECTED;
    } else if (0 != tc_alive_check(&seq->rseg->owner_alive)) {
        seq->failed = SCI_ERR_TRANSFER_FAILED;
    }
    return seq->failed;
}

static sci_error_t sci_shm_register_memory(sci_desc_t *sd, void *addr, size_t len,
                                           sci_mem_handle_t *handle)
{
    if (NULL == sd || NULL == handle || (NULL == addr && 0 != len)) {
        return SCI_ERR_ILLEGAL_PARAMETER;
    }
    /* CMA needs no pinning: the handle just names the owner and range */
    handle->node_id = sd->node_id;
    handle->segment_id = 0;
    handle->owner = (uint64_t) sd->pid;
    handle->base = (uint64_t) (uintptr_t) addr;
    handle->len = (uint64_t) len;
    /* no fabric key (the ofi provider, when open, adds its own after us) */
    handle->key = 0;
    handle->key_node = 0;
    handle->key_flags = 0;
    handle->key_base = 0;
    return SCI_ERR_OK;
}

static void sci_shm_deregister_memory(sci_desc_t *sd, sci_mem_handle_t *handle)
{
    (void) sd;
    if (NULL != handle) {
        handle->len = 0;
    }
}

static sci_error_t sci_shm_create_dma_queue(sci_desc_t *sd, unsigned max_entries,
                                            sci_dma_queue_t **dq)
{
    sci_dma_queue_t *q;

    if (NULL == sd || NULL == dq || 0 == max_entries) {
        return SCI_ERR_ILLEGAL_PARAMETER;
    }
    q = sci_obj_new(sizeof(*q), &sci_shm_ops);
    if (NULL == q) {
        return SCI_ERR_NOSPC;
    }
    q->entries = calloc(max_entries, sizeof(*q->entries));
    if (NULL == q->entries) {
        free(q);
        return SCI_ERR_NOSPC;
    }
    (void) pthread_mutex_init(&q->lock, NULL);
    q->sd = sd;
    q->max_entries = max_entries;
    *dq = q;
    return SCI_ERR_OK;
}

static void sci_shm_remove_dma_queue(sci_dma_queue_t *dq)
{
    if (NULL == dq) {
        return;
    }
    (void) pthread_mutex_destroy(&dq->lock);
    free(dq->entries);
    free(dq);
}

static sci_error_t sci_shm_dma_enqueue(sci_dma_queue_t *dq, int direction, void *local_addr,
                                       const sci_mem_handle_t *remote, uint64_t remote_addr,
                                       size_t len)
{
    sci_dma_entry_t *e;

    if (NULL == dq || NULL == remote || (SCI_DMA_READ != direction && SCI_DMA_WRITE != direction)) {
        return SCI_ERR_ILLEGAL_PARAMETER;
    }
    if (remote->node_id != dq->sd->node_id) {
        return SCI_ERR_NOT_SUPPORTED;
    }
    /* the remote range must lie inside the registration the peer made */
    if (remote_addr < remote->base || len > remote->len ||
        remote_addr - remote->base > remote->len - len) {
        return SCI_ERR_OUT_OF_RANGE;
    }
    if (dq->count == dq->max_entries) {
        return SCI_ERR_BUSY;
    }
    e = dq->entries + dq->count++;
    e->direction = direction;
    e->pid = (pid_t) remote->owner;
    e->local.iov_base = local_addr;
    e->local.iov_len = len;
    e->remote.iov_base = (void *) (uintptr_t) remote_addr;
    e->remote.iov_len = len;
    return SCI_ERR_OK;
}

/* one CMA transfer, restarted after partial progress */
static sci_error_t sci_shm_cma(sci_dma_entry_t *e)
{
    struct iovec l = e->local, r = e->remote;

    while (r.iov_len > 0) {
        ssize_t n;

        if (SCI_DMA_READ == e->direction) {
            n = process_vm_readv(e->pid, &l, 1, &r, 1, 0);
        } else {
            n = process_vm_writev(e->pid, &l, 1, &r, 1, 0);
        }
        if (n < 0) {
            if (EINTR == errno) {
                continue;
            }
            return ENOSYS == errno ? SCI_ERR_NOT_SUPPORTED : sci_shm_errno(errno);
        }
        if (0 == n) {
            return SCI_ERR_OUT_OF_RANGE;
        }
        l.iov_base = (char *) l.iov_base + n;
        l.iov_len -= (size_t) n;
        r.iov_base = (char *) r.iov_base + n;
        r.iov_len -= (size_t) n;
    }
    return SCI_ERR_OK;
}

static sci_error_t sci_shm_dma_start(sci_dma_queue_t *dq)
{
    if (NULL == dq) {
        return SCI_ERR_ILLEGAL_PARAMETER;
    }
    /* CMA is synchronous: the engine has finished when start returns */
    dq->status = SCI_ERR_OK;
    for (unsigned i = 0; i < dq->count; ++i) {
        sci_error_t rc = sci_shm_cma(dq->entries + i);
        if (SCI_ERR_OK != rc && SCI_ERR_OK == dq->status) {
            dq->status = rc;
        }
    }
    dq->count = 0;
    return dq->status;
}

static sci_error_t sci_shm_dma_wait(sci_dma_queue_t *dq)
{
    if (NULL == dq) {
        return SCI_ERR_ILLEGAL_PARAMETER;
    }
    return dq->status;
}

static sci_error_t sci_shm_dma_queue_share(sci_dma_queue_t *dq)
{
    if (NULL == dq) {
        return SCI_ERR_ILLEGAL_PARAMETER;
    }
    dq->shared = 1;
    return SCI_ERR_OK;
}

static sci_error_t sci_shm_dma_transfer(sci_dma_queue_t *dq, int direction, void *local_addr,
                                        const sci_mem_handle_t *remote, uint64_t remote_addr,
                                        size_t len)
{
    sci_error_t err;

    if (NULL == dq) {
        return SCI_ERR_ILLEGAL_PARAMETER;
    }
    /* entries, count and status belong to one batch: another thread's
     * enqueue between our enqueue and start would be lost or run half
     * written, and its start would report our batch's status */
    if (dq->shared) {
        pthread_mutex_lock(&dq->lock);
    }
    err = sci_shm_dma_enqueue(dq, direction, local_addr, remote, remote_addr, len);
    if (SCI_ERR_OK == err) {
        err = sci_shm_dma_start(dq);
        if (SCI_ERR_OK == err) {
            err = sci_shm_dma_wait(dq);
        }
    }
    if (dq->shared) {
        pthread_mutex_unlock(&dq->lock);
    }
    return err;
}

static sci_error_t sci_shm_dma_probe(sci_desc_t *sd)
{
    int rc = tc_cma_probe(sd->pid);

    if (0 == rc) {
        return SCI_ERR_OK;
    }
    return -ENOSYS == rc ? SCI_ERR_NOT_SUPPORTED : SCI_ERR_ACCESS;
}

/* the shm provider's entry in the provider table (sci_provider.c) */
static const sci_provider_ops_t sci_shm_ops = {
    .name = "shm",
    .open = sci_shm_open,
    .close = sci_shm_close,
    .local_node_id = sci_shm_local_node_id,
    .create_segment = sci_shm_create_segment,
    .prepare_segment = sci_shm_prepare_segment,
    .set_segment_available = sci_shm_set_segment_available,
    .set_segment_unavailable = sci_shm_set_segment_unavailable,
    .local_segment_address = sci_shm_local_segment_address,
    .local_segment_size = sci_shm_local_segment_size,
    .remove_segment = sci_shm_remove_segment,
    .connect_segment = sci_shm_connect_segment,
    .map_remote_segment = sci_shm_map_remote_segment,
    .remote_segment_size = sci_shm_remote_segment_size,
    .disconnect_segment = sci_shm_disconnect_segment,
    .create_map_sequence = sci_shm_create_map_sequence,
    .remove_sequence = sci_shm_remove_sequence,
    .start_sequence = sci_shm_start_sequence,
    .check_sequence = sci_shm_check_sequence,
    .register_memory = sci_shm_register_memory,
    .deregister_memory = sci_shm_deregister_memory,
    .create_dma_queue = sci_shm_create_dma_queue,
    .remove_dma_queue = sci_shm_remove_dma_queue,
    .dma_enqueue = sci_shm_dma_enqueue,
    .dma_start = sci_shm_dma_start,
    .dma_wait = sci_shm_dma_wait,
    .dma_queue_share = sci_shm_dma_queue_share,
    .dma_transfer = sci_shm_dma_transfer,
    .dma_probe = sci_shm_dma_probe,
    /* stores through a mapping are the remote writes: no write-through,
     * no directory, no progress */
};

const sci_provider_ops_t *sci_shm_provider(void)
{
    return &sci_shm_ops;
}
