/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/*
 * vipl_emu.c: the "emu" VIPL provider, a software VI NIC between the
 * processes of one host.
 *
 * Each NIC is one shared segment in the job's session directory (mode
 * 0600, common/tc_shm) holding
 *   - a header (owner pid, state, geometry, attach count),
 *   - the registration table: what the NIC would keep in its translation
 *     and protection table; read by peers before every transfer,
 *   - one record per VI: state, protection tag, and the receive work
 *     queue (descriptors posted by the owner, completed by the peer),
 *   - NIC memory (vipl_mem_alloc), where the BTL keeps its receive
 *     buffers, so a send is one copy into the peer's posted buffer.
 * A send consumes the next posted receive descriptor of the peer's VI:
 * the sender checks the descriptor's memory handle against the peer's
 * table, copies, then writes the completion (status last, with release
 * order).  No receive posted: the peer's VI goes to error (VIA reliable
 * delivery) and the send completes with a remote descriptor error.
 * RDMA write/read move data with CMA (process_vm_writev/readv) only after
 * the target's table accepted handle, protection tag, range and the
 * RDMA enable bit; consecutive RDMA descriptors are gathered into one
 * system call when the VI's send queue is processed.  A VI whose peer
 * died (or disconnected) goes to error and flushes its descriptors.
 *
 * Every value read from a peer's segment is validated before use.  The
 * layout is in vipl_emu.h, the send and receive queues in
 * vipl_emu_xfer.c; this file holds the NIC, memory, CQs, VIs and their
 * connections.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#include "tc_alive.h"
#include "tc_atomic.h"
#include "tc_config.h"
#include "tc_shm.h"
#include "vipl.h"
#include "vipl_emu.h"

/* ---- helpers ----------------------------------------------------------- */

static int vipl_emu_name(const char *key, uint32_t nic_id, char *buf, size_t len)
{
    int n = snprintf(buf, len, "via.%s.%u", key, nic_id);
    return (n < 0 || (size_t) n >= len) ? -1 : 0;
}

/* A handle checked against a registration table (own or a peer's):
 * valid entry of that generation, the protection tag, [addr, addr+len)
 * inside, and the enable bits.  Seqlock read: the entry must not change
 * while it is read. */
bool vipl_emu_check_reg(const vipl_emu_reg_t *regs, uint32_t max_regs, vipl_mem_handle_t handle,
                        uint32_t ptag, uint64_t addr, uint64_t len, uint32_t need,
                        vipl_emu_reg_t *out)
{
    uint32_t index = (uint32_t) (handle & 0xffffffffu);
    uint32_t gen = (uint32_t) (handle >> 32);
    const vipl_emu_reg_t *e;
    vipl_emu_reg_t copy;

    if (index >= max_regs || 0 != (gen & 1u) || 0 == gen) {
        return false;
    }
    e = regs + index;
    if (vipl_emu_load32(&e->gen) != gen) {
        return false;
    }
    memcpy(&copy, (const void *) e, sizeof(copy));
    tc_atomic_fence_acquire();
    if (vipl_emu_load32(&e->gen) != gen) {
        return false;
    }
    if (copy.ptag != ptag || (copy.flags & need) != need) {
        return false;
    }
    if (addr < copy.base || len > copy.len || addr - copy.base > copy.len - len) {
        return false;
    }
    if (NULL != out) {
        *out = copy;
    }
    return true;
}

/* ---- NIC ---------------------------------------------------------------- */

static vipl_return_t vipl_emu_open_nic(const vipl_open_params_t *params, vipl_nic_t **nicp)
{
    vipl_emu_nic_t *nic;
    size_t reg_bytes, vi_stride, vi_bytes, mem_bytes, total;
    char name[256];
    int rc;

    if (NULL == params || NULL == nicp || NULL == params->segment_dir || 0 == params->max_vis ||
        0 == params->max_recv_depth || params->max_recv_depth > (1u << 16) ||
        params->max_vis > (1u << 16) || 0 == params->max_regs || params->max_regs > (1u << 24) ||
        params->nic_memory > ((size_t) 1 << 36)) {
        return VIPL_INVALID_PARAMETER;
    }
    nic = calloc(1, sizeof(*nic));
    if (NULL == nic) {
        return VIPL_ERROR_RESOURCE;
    }
    nic->dir = strdup(params->segment_dir);
    nic->key = strdup(params->job_key ? params->job_key : "emu");
    if (NULL == nic->dir || NULL == nic->key ||
        0 != vipl_emu_name(nic->key, params->nic_id, name, sizeof(name))) {
        goto fail;
    }
    reg_bytes = TC_ALIGN_UP((size_t) params->max_regs * sizeof(vipl_emu_reg_t), (size_t) 64);
    vi_stride =
        sizeof(vipl_emu_vi_rec_t) + (size_t) params->max_recv_depth * sizeof(vipl_emu_rslot_t);
    vi_bytes = (size_t) params->max_vis * vi_stride;
    mem_bytes = TC_ALIGN_UP(params->nic_memory, (size_t) 4096);
    total =
        TC_ALIGN_UP(sizeof(vipl_emu_nic_hdr_t) + reg_bytes + vi_bytes, (size_t) 4096) + mem_bytes;
    rc = tc_shm_create(&nic->seg, nic->dir, name, total);
    if (0 != rc) {
        goto fail;
    }
    nic->hdr = nic->seg.base;
    nic->hdr->version = VIPL_EMU_VERSION;
    nic->hdr->nic_id = params->nic_id;
    nic->hdr->pid = (int32_t) getpid();
    nic->hdr->max_vis = params->max_vis;
    nic->hdr->max_recv_depth = params->max_recv_depth;
    nic->hdr->max_regs = params->max_regs;
    nic->hdr->reg_off = sizeof(vipl_emu_nic_hdr_t);
    nic->hdr->vi_off = sizeof(vipl_emu_nic_hdr_t) + reg_bytes;
    nic->hdr->vi_stride = vi_stride;
    nic->hdr->mem_off = total - mem_bytes;
    nic->hdr->mem_size = mem_bytes;
    nic->hdr->expected = params->expected_peers;
    nic->hdr->state = VIPL_EMU_NIC_OPEN;
    nic->regs = (vipl_emu_reg_t *) ((char *) nic->seg.base + nic->hdr->reg_off);
    for (uint32_t i = 0; i < params->max_regs; ++i) {
        nic->regs[i].gen = 1; /* free */
    }
    nic->max_regs = params->max_regs;
    nic->vi_base = (char *) nic->seg.base + nic->hdr->vi_off;
    nic->vi_stride = vi_stride;
    nic->max_vis = params->max_vis;
    nic->max_recv_depth = params->max_recv_depth;
    nic->mem = (char *) nic->seg.base + nic->hdr->mem_off;
    nic->mem_size = mem_bytes;
    nic->pid = getpid();
    nic->nic_id = params->nic_id;
    nic->strict = params->strict;
    nic->next_ptag = 1;
    pthread_mutex_init(&nic->lock, NULL);
    /* the magic last: a peer attaching early sees a complete header */
    tc_shm_publish(&nic->hdr->magic, VIPL_EMU_MAGIC);
    /* nobody expected: the name is of no use (else the last peer removes it) */
    (void) tc_shm_unlink_when_attached(&nic->seg, &nic->hdr->attached, nic->hdr->expected);

    nic->super.ops = &vipl_emu_ops;
    nic->super.attrs.provider = "emu";
    nic->super.attrs.max_transfer_size =
        params->max_transfer_size ? params->max_transfer_size : 65536;
    nic->super.attrs.max_descriptors = params->max_recv_depth;
    nic->super.attrs.max_segs = VIPL_MAX_DATA_SEGS;
    nic->super.attrs.rdma_read = true;
    nic->super.attrs.max_inline = nic->strict ? 0 : VIPL_EMU_INLINE_MAX;
    nic->super.attrs.local_only = true;
    /* strict mode is verbs without a connection manager: every VI is
     * made and connected up front */
    nic->super.attrs.connect_wait = !nic->strict;
    *nicp = &nic->super;
    return VIPL_SUCCESS;

fail:
    free(nic->dir);
    free(nic->key);
    free(nic);
    return VIPL_ERROR_RESOURCE;
}

static void vipl_emu_remote_put(vipl_emu_nic_t *nic, vipl_emu_remote_t *r)
{
    vipl_emu_remote_t **pp;

    pthread_mutex_lock(&nic->lock);
    if (--r->refs > 0) {
        pthread_mutex_unlock(&nic->lock);
        return;
    }
    for (pp = &nic->remotes; *pp; pp = &(*pp)->next) {
        if (*pp == r) {
            *pp = r->next;
            break;
        }
    }
    pthread_mutex_unlock(&nic->lock);
    tc_alive_close(&r->alive);
    (void) tc_shm_detach(&r->seg);
    free(r);
}

static void vipl_emu_close_nic(vipl_nic_t *base)
{
    vipl_emu_nic_t *nic = (vipl_emu_nic_t *) base;

    if (NULL == nic) {
        return;
    }
    vipl_emu_store32(&nic->hdr->state, VIPL_EMU_NIC_CLOSED);
    while (NULL != nic->remotes) {
        vipl_emu_remote_t *r = nic->remotes;
        nic->remotes = r->next;
        tc_alive_close(&r->alive);
        (void) tc_shm_detach(&r->seg);
        free(r);
    }
    (void) tc_shm_unlink(&nic->seg);
    (void) tc_shm_detach(&nic->seg);
    pthread_mutex_destroy(&nic->lock);
    free(nic->dir);
    free(nic->key);
    free(nic);
}

/* map a peer NIC's segment (once per NIC), validating its header */
static vipl_return_t vipl_emu_remote_get(vipl_emu_nic_t *nic, uint32_t nic_id, pid_t pid,
                                         vipl_emu_remote_t **out)
{
    vipl_emu_remote_t *r;
    vipl_emu_nic_hdr_t h;
    char name[256];
    int rc;

    pthread_mutex_lock(&nic->lock);
    for (r = nic->remotes; r; r = r->next) {
        if (r->nic_id == nic_id) {
            ++r->refs;
            pthread_mutex_unlock(&nic->lock);
            *out = r;
            return VIPL_SUCCESS;
        }
    }
    pthread_mutex_unlock(&nic->lock);

    if (0 != vipl_emu_name(nic->key, nic_id, name, sizeof(name))) {
        return VIPL_INVALID_PARAMETER;
    }
    r = calloc(1, sizeof(*r));
    if (NULL == r) {
        return VIPL_ERROR_RESOURCE;
    }
    rc = tc_shm_attach_header(&r->seg, nic->dir, name, sizeof(h));
    if (0 != rc) {
        free(r);
        /* not created yet (or gone): the caller may retry */
        return -EPERM == rc ? VIPL_INVALID_PARAMETER : VIPL_NOT_REACHABLE;
    }
    if (!tc_shm_published(&((vipl_emu_nic_hdr_t *) r->seg.base)->magic, VIPL_EMU_MAGIC)) {
        (void) tc_shm_detach(&r->seg);
        free(r);
        return VIPL_NOT_REACHABLE;
    }
    memcpy(&h, r->seg.base, sizeof(h));
    /* the geometry comes from another process: check it all */
    if (VIPL_EMU_VERSION != h.version || h.nic_id != nic_id || (pid > 0 && h.pid != pid) ||
        0 == h.max_vis || 0 == h.max_regs || 0 == h.max_recv_depth ||
        h.max_recv_depth > (1u << 16) ||
        h.vi_stride !=
            sizeof(vipl_emu_vi_rec_t) + (size_t) h.max_recv_depth * sizeof(vipl_emu_rslot_t) ||
        h.reg_off < sizeof(h) ||
        !vipl_emu_within(h.reg_off, (uint64_t) h.max_regs * sizeof(vipl_emu_reg_t), h.vi_off) ||
        !vipl_emu_within(h.vi_off, (uint64_t) h.max_vis * h.vi_stride, h.mem_off) ||
        !vipl_emu_within(h.mem_off, h.mem_size, r->seg.size) || 0 != (h.reg_off & 7) ||
        0 != (h.vi_off & 63)) {
        (void) tc_shm_detach(&r->seg);
        free(r);
        return VIPL_INVALID_PARAMETER;
    }
    r->nic_id = nic_id;
    r->pid = h.pid;
    /* a peer already gone shows at the first liveness check */
    (void) tc_alive_open(&r->alive, r->pid);
    r->hdr = r->seg.base;
    r->regs = (vipl_emu_reg_t *) ((char *) r->seg.base + h.reg_off);
    r->max_regs = h.max_regs;
    r->max_vis = h.max_vis;
    r->max_recv_depth = h.max_recv_depth;
    r->vi_base = (char *) r->seg.base + h.vi_off;
    r->vi_stride = h.vi_stride;
    r->refs = 1;
    /* the last expected peer to map the segment removes its name */
    (void) tc_shm_count_attach(&r->seg, &r->hdr->attached, h.expected);

    pthread_mutex_lock(&nic->lock);
    r->next = nic->remotes;
    nic->remotes = r;
    pthread_mutex_unlock(&nic->lock);
    *out = r;
    return VIPL_SUCCESS;
}

/* ---- protection tags and memory ------------------------------------------ */

static vipl_return_t vipl_emu_create_ptag(vipl_nic_t *base, vipl_ptag_t **ptag)
{
    vipl_emu_nic_t *nic = (vipl_emu_nic_t *) base;
    vipl_emu_ptag_t *p = calloc(1, sizeof(*p));

    if (NULL == p) {
        return VIPL_ERROR_RESOURCE;
    }
    p->super.nic = base;
    pthread_mutex_lock(&nic->lock);
    p->id = nic->next_ptag++;
    pthread_mutex_unlock(&nic->lock);
    *ptag = &p->super;
    return VIPL_SUCCESS;
}

static void vipl_emu_destroy_ptag(vipl_ptag_t *ptag)
{
    free(ptag);
}

static vipl_return_t vipl_emu_register_mem(vipl_nic_t *base, void *addr, size_t len,
                                           const vipl_mem_attrs_t *attrs, vipl_mem_handle_t *handle)
{
    vipl_emu_nic_t *nic = (vipl_emu_nic_t *) base;
    uintptr_t a = (uintptr_t) addr, seg = (uintptr_t) nic->seg.base;

    if (NULL == addr || 0 == len || a + len < a || NULL == attrs || NULL == attrs->ptag ||
        attrs->ptag->nic != base || NULL == handle) {
        return VIPL_INVALID_PARAMETER;
    }
    pthread_mutex_lock(&nic->lock);
    for (uint32_t n = 0; n < nic->max_regs; ++n) {
        uint32_t i = (nic->reg_hint + n) % nic->max_regs;
        vipl_emu_reg_t *e = nic->regs + i;
        uint32_t gen = e->gen;

        if (0 == (gen & 1u)) {
            continue;
        }
        e->ptag = ((vipl_emu_ptag_t *) attrs->ptag)->id;
        e->flags = (attrs->enable_rdma_write ? VIPL_EMU_REG_WRITE : 0) |
            (attrs->enable_rdma_read ? VIPL_EMU_REG_READ : 0);
        e->base = a;
        e->len = len;
        e->seg_off = (a >= seg && a + len <= seg + nic->seg.size) ? (int64_t) (a - seg) : -1;
        ++gen;
        if (0 == gen) {
            gen = 2;
        }
        vipl_emu_store32(&e->gen, gen);
        nic->reg_hint = i + 1;
        pthread_mutex_unlock(&nic->lock);
        *handle = ((uint64_t) gen << 32) | i;
        return VIPL_SUCCESS;
    }
    pthread_mutex_unlock(&nic->lock);
    return VIPL_ERROR_RESOURCE;
}

static vipl_return_t vipl_emu_deregister_mem(vipl_nic_t *base, void *addr, vipl_mem_handle_t handle)
{
    vipl_emu_nic_t *nic = (vipl_emu_nic_t *) base;
    uint32_t index = (uint32_t) (handle & 0xffffffffu);
    uint32_t gen = (uint32_t) (handle >> 32);
    vipl_emu_reg_t *e;

    if (index >= nic->max_regs) {
        return VIPL_INVALID_PARAMETER;
    }
    e = nic->regs + index;
    pthread_mutex_lock(&nic->lock);
    if (e->gen != gen || 0 != (gen & 1u) || e->base != (uintptr_t) addr) {
        pthread_mutex_unlock(&nic->lock);
        return VIPL_INVALID_PARAMETER;
    }
    vipl_emu_store32(&e->gen, gen + 1); /* odd: invalid from now on */
    pthread_mutex_unlock(&nic->lock);
    return VIPL_SUCCESS;
}

/* NIC memory: first fit over a few freed blocks, else the bump pointer */
static void *vipl_emu_mem_alloc(vipl_nic_t *base, size_t len)
{
    vipl_emu_nic_t *nic = (vipl_emu_nic_t *) base;
    void *p = NULL;

    if (len > nic->mem_size) {
        return NULL; /* and the rounding below cannot wrap */
    }
    len = TC_ALIGN_UP(len ? len : 1, (size_t) 64);
    pthread_mutex_lock(&nic->lock);
    for (unsigned i = 0; i < nic->num_free; ++i) {
        if (nic->free_blocks[i].len == len) {
            p = nic->mem + nic->free_blocks[i].off;
            nic->free_blocks[i] = nic->free_blocks[--nic->num_free];
            break;
        }
    }
    if (NULL == p && nic->mem_size - nic->mem_bump >= len + 64) {
        /* the block's length in front of it */
        *(size_t *) (nic->mem + nic->mem_bump) = len;
        p = nic->mem + nic->mem_bump + 64;
        nic->mem_bump += len + 64;
    }
    pthread_mutex_unlock(&nic->lock);
    return p;
}

static void vipl_emu_mem_free(vipl_nic_t *base, void *ptr)
{
    vipl_emu_nic_t *nic = (vipl_emu_nic_t *) base;

    if (NULL == ptr) {
        return;
    }
    pthread_mutex_lock(&nic->lock);
    if (nic->num_free < VIPL_EMU_MAX_FREE) {
        nic->free_blocks[nic->num_free].off = (size_t) ((char *) ptr - nic->mem);
        nic->free_blocks[nic->num_free].len = *(size_t *) ((char *) ptr - 64);
        ++nic->num_free;
    }
    pthread_mutex_unlock(&nic->lock);
}

/* ---- completion queues ---------------------------------------------------- */

static vipl_return_t vipl_emu_create_cq(vipl_nic_t *base, uint32_t entries, vipl_cq_t **cqp)
{
    vipl_emu_cq_t *cq = calloc(1, sizeof(*cq));
    uint32_t cap = entries ? entries : 16;

    if (NULL == cq) {
        return VIPL_ERROR_RESOURCE;
    }
    cq->vis = calloc(cap, sizeof(*cq->vis));
    cq->is_recv = calloc(cap, sizeof(*cq->is_recv));
    if (NULL == cq->vis || NULL == cq->is_recv) {
        free(cq->vis);
        free(cq->is_recv);
        free(cq);
        return VIPL_ERROR_RESOURCE;
    }
    cq->cap = cap;
    cq->super.nic = base;
    *cqp = &cq->super;
    return VIPL_SUCCESS;
}

static void vipl_emu_destroy_cq(vipl_cq_t *base)
{
    vipl_emu_cq_t *cq = (vipl_emu_cq_t *) base;

    free(cq->vis);
    free(cq->is_recv);
    free(cq);
}

/* under the NIC's lock; VIs made on first use are attached while
 * another thread may read the CQ: the entry first, then the count with
 * release (cq_done reads it with acquire); the arrays never move */
static bool vipl_emu_cq_attach(vipl_emu_cq_t *cq, vipl_emu_vi_t *vi, bool is_recv)
{
    uint32_t n = cq->count;

    if (n == cq->cap) {
        return false;
    }
    cq->vis[n] = vi;
    cq->is_recv[n] = is_recv;
    tc_atomic_store_release(&cq->count, n + 1);
    return true;
}

static void vipl_emu_cq_detach(vipl_emu_cq_t *cq, vipl_emu_vi_t *vi)
{
    for (uint32_t i = 0; i < cq->count;) {
        if (cq->vis[i] == vi) {
            --cq->count;
            cq->vis[i] = cq->vis[cq->count];
            cq->is_recv[i] = cq->is_recv[cq->count];
        } else {
            ++i;
        }
    }
}

/* ---- VIs -------------------------------------------------------------------- */

static vipl_return_t vipl_emu_create_vi(vipl_nic_t *base, const vipl_vi_attrs_t *attrs,
                                        vipl_cq_t *send_cq, vipl_cq_t *recv_cq, vipl_vi_t **vip)
{
    vipl_emu_nic_t *nic = (vipl_emu_nic_t *) base;
    vipl_emu_vi_t *vi;
    uint32_t index;

    if (NULL == attrs || NULL == vip || NULL == attrs->ptag || attrs->ptag->nic != base) {
        return NULL == attrs || NULL == vip ? VIPL_INVALID_PARAMETER : VIPL_INVALID_PTAG;
    }
    if (VIPL_RELIABLE_DELIVERY != attrs->reliability) {
        return VIPL_INVALID_RELIABILITY_LEVEL;
    }
    if (0 == attrs->recv_depth || attrs->recv_depth > nic->max_recv_depth ||
        0 == attrs->send_depth || attrs->max_transfer_size > nic->super.attrs.max_transfer_size) {
        return VIPL_INVALID_PARAMETER;
    }
    vi = calloc(1, sizeof(*vi));
    if (NULL == vi) {
        return VIPL_ERROR_RESOURCE;
    }
    vi->rdescs = calloc(attrs->recv_depth, sizeof(*vi->rdescs));
    if (NULL == vi->rdescs) {
        free(vi);
        return VIPL_ERROR_RESOURCE;
    }
    pthread_mutex_lock(&nic->lock);
    if (attrs->has_discriminator) {
        /* the discriminator names the record: peers address it before
         * it exists */
        index = attrs->discriminator < nic->max_vis &&
                !vipl_emu_rec(nic->vi_base, nic->vi_stride, attrs->discriminator)->in_use
            ? attrs->discriminator
            : nic->max_vis;
    } else {
        for (index = 0; index < nic->max_vis; ++index) {
            if (!vipl_emu_rec(nic->vi_base, nic->vi_stride, index)->in_use) {
                break;
            }
        }
    }
    if (index == nic->max_vis) {
        pthread_mutex_unlock(&nic->lock);
        free(vi->rdescs);
        free(vi);
        return VIPL_ERROR_RESOURCE;
    }
    vi->rec = vipl_emu_rec(nic->vi_base, nic->vi_stride, index);
    memset(vi->rec, 0, nic->vi_stride);
    vi->rec->in_use = 1;
    pthread_mutex_unlock(&nic->lock);

    vi->super.nic = base;
    vi->nic = nic;
    vi->index = index;
    vi->ptag = ((vipl_emu_ptag_t *) attrs->ptag)->id;
    vi->enable = (attrs->enable_rdma_write ? VIPL_EMU_REG_WRITE : 0) |
        (attrs->enable_rdma_read ? VIPL_EMU_REG_READ : 0);
    vi->max_transfer =
        attrs->max_transfer_size ? attrs->max_transfer_size : nic->super.attrs.max_transfer_size;
    vi->send_depth = attrs->send_depth;
    vi->recv_depth = attrs->recv_depth;
    vi->state = VIPL_STATE_IDLE;
    vi->rec->ptag = vi->ptag;
    vi->rec->recv_depth = vi->recv_depth;
    vi->rec->enable = vi->enable;
    vipl_emu_store32(&vi->rec->state, VIPL_STATE_IDLE);
    vi->send_cq = (vipl_emu_cq_t *) send_cq;
    vi->recv_cq = (vipl_emu_cq_t *) recv_cq;
    pthread_mutex_lock(&nic->lock);
    if ((NULL != vi->send_cq && !vipl_emu_cq_attach(vi->send_cq, vi, false)) ||
        (NULL != vi->recv_cq && !vipl_emu_cq_attach(vi->recv_cq, vi, true))) {
        if (NULL != vi->send_cq) {
            vipl_emu_cq_detach(vi->send_cq, vi);
        }
        vi->rec->in_use = 0;
        pthread_mutex_unlock(&nic->lock);
        free(vi->rdescs);
        free(vi);
        return VIPL_ERROR_RESOURCE;
    }
    pthread_mutex_unlock(&nic->lock);
    *vip = &vi->super;
    return VIPL_SUCCESS;
}

static void vipl_emu_vi_address(vipl_vi_t *base, vipl_vi_address_t *addr)
{
    vipl_emu_vi_t *vi = (vipl_emu_vi_t *) base;
    vipl_emu_addr_t a = {
        .magic = VIPL_EMU_ADDR_MAGIC,
        .nic_id = vi->nic->nic_id,
        .pid = (int32_t) vi->nic->pid,
        .vi_index = vi->index,
    };

    memset(addr, 0, sizeof(*addr));
    memcpy(addr->bytes, &a, sizeof(a));
}

/* the VI breaks: tell the peer (if any), stop sending */
void vipl_emu_vi_fail(vipl_emu_vi_t *vi, vipl_vi_error_t why, bool tell_peer)
{
    if (VIPL_STATE_ERROR == vi->state) {
        return;
    }
    vi->state = VIPL_STATE_ERROR;
    vi->error = why;
    vi->rec->error = why;
    vipl_emu_store32(&vi->rec->state, VIPL_STATE_ERROR);
    if (tell_peer && NULL != vi->rrec) {
        vipl_emu_store32(&vi->rrec->peer_error, why);
    }
}

static vipl_return_t vipl_emu_connect_peer_request(vipl_vi_t *base, const vipl_vi_address_t *remote)
{
    vipl_emu_vi_t *vi = (vipl_emu_vi_t *) base;
    vipl_emu_addr_t a;
    vipl_return_t rc;

    if (NULL == remote) {
        return VIPL_INVALID_PARAMETER;
    }
    if (VIPL_STATE_IDLE != vi->state) {
        return VIPL_INVALID_STATE;
    }
    memcpy(&a, remote->bytes, sizeof(a));
    if (VIPL_EMU_ADDR_MAGIC != a.magic || a.pid <= 0) {
        return VIPL_INVALID_PARAMETER;
    }
    if (NULL == vi->remote) {
        rc = vipl_emu_remote_get(vi->nic, a.nic_id, (pid_t) a.pid, &vi->remote);
        if (VIPL_SUCCESS != rc) {
            return rc;
        }
    }
    if (a.vi_index >= vi->remote->max_vis) {
        vipl_emu_remote_put(vi->nic, vi->remote);
        vi->remote = NULL;
        return VIPL_INVALID_PARAMETER;
    }
    vi->remote_vi = a.vi_index;
    vi->rrec = vipl_emu_rec(vi->remote->vi_base, vi->remote->vi_stride, a.vi_index);
    vi->rec->remote_nic = a.nic_id;
    vi->rec->remote_vi = a.vi_index;
    vi->state = VIPL_STATE_PENDING_CONNECT;
    vipl_emu_store32(&vi->rec->state, VIPL_STATE_PENDING_CONNECT);
    if (vi->nic->super.attrs.connect_wait) {
        /* ring the peer: its VI may not exist yet (vipl_emu_connect_wait);
         * the record's word first, then the counter the peer watches */
        vipl_emu_store32(&vi->rrec->conn_req, vi->nic->nic_id + 1);
        (void) tc_atomic_add_fetch(&vi->remote->hdr->conn_reqs, 1);
    }
    return VIPL_SUCCESS;
}

static void vipl_emu_nic_vi_address(vipl_nic_t *base, uint32_t discriminator,
                                    vipl_vi_address_t *addr)
{
    vipl_emu_nic_t *nic = (vipl_emu_nic_t *) base;
    vipl_emu_addr_t a = {
        .magic = VIPL_EMU_ADDR_MAGIC,
        .nic_id = nic->nic_id,
        .pid = (int32_t) nic->pid,
        .vi_index = discriminator,
    };

    memset(addr, 0, sizeof(*addr));
    memcpy(addr->bytes, &a, sizeof(a));
}

/* VipConnectWait, polled: a record a peer rang whose VI does not exist */
static vipl_return_t vipl_emu_connect_wait(vipl_nic_t *base, uint32_t *discriminator)
{
    vipl_emu_nic_t *nic = (vipl_emu_nic_t *) base;
    uint32_t now = vipl_emu_load32(&nic->hdr->conn_reqs);

    if (now == tc_atomic_load_relaxed(&nic->reqs_seen)) {
        return VIPL_NOT_DONE;
    }
    pthread_mutex_lock(&nic->lock);
    for (uint32_t i = 0; i < nic->max_vis; ++i) {
        vipl_emu_vi_rec_t *rec = vipl_emu_rec(nic->vi_base, nic->vi_stride, i);

        if (0 != vipl_emu_load32(&rec->conn_req) && 0 != tc_atomic_swap(&rec->conn_req, 0) &&
            !rec->in_use) {
            /* more may wait: the counter stays unseen until a scan
             * finds none */
            pthread_mutex_unlock(&nic->lock);
            *discriminator = i;
            return VIPL_SUCCESS;
        }
    }
    tc_atomic_store_relaxed(&nic->reqs_seen, now);
    pthread_mutex_unlock(&nic->lock);
    return VIPL_NOT_DONE;
}

/* map the peer's segment now (and keep it), so that its name goes once
 * every local peer attached, whether VIs follow or not */
static vipl_return_t vipl_emu_attach_peer(vipl_nic_t *base, const vipl_vi_address_t *remote)
{
    vipl_emu_nic_t *nic = (vipl_emu_nic_t *) base;
    vipl_emu_remote_t *r;
    vipl_emu_addr_t a;

    if (NULL == remote) {
        return VIPL_INVALID_PARAMETER;
    }
    memcpy(&a, remote->bytes, sizeof(a));
    if (VIPL_EMU_ADDR_MAGIC != a.magic || a.pid <= 0) {
        return VIPL_INVALID_PARAMETER;
    }
    pthread_mutex_lock(&nic->lock);
    for (r = nic->remotes; r; r = r->next) {
        if (r->nic_id == a.nic_id) {
            pthread_mutex_unlock(&nic->lock);
            return VIPL_SUCCESS;
        }
    }
    pthread_mutex_unlock(&nic->lock);
    /* the reference stays until close_nic */
    return vipl_emu_remote_get(nic, a.nic_id, (pid_t) a.pid, &r);
}

bool vipl_emu_peer_alive(vipl_emu_remote_t *r)
{
    if (VIPL_EMU_NIC_CLOSED == vipl_emu_load32(&r->hdr->state)) {
        return false;
    }
    return 0 == tc_alive_check(&r->alive);
}

static vipl_return_t vipl_emu_connect_peer_done(vipl_vi_t *base)
{
    vipl_emu_vi_t *vi = (vipl_emu_vi_t *) base;
    vipl_emu_vi_rec_t *rr = vi->rrec;
    uint32_t st;

    if (VIPL_STATE_CONNECTED == vi->state) {
        return VIPL_SUCCESS;
    }
    if (VIPL_STATE_PENDING_CONNECT != vi->state || NULL == rr) {
        return VIPL_INVALID_STATE;
    }
    st = vipl_emu_load32(&rr->state);
    /* strict: connected once we asked, as an RC queue pair in RTS is,
     * whatever the peer's state */
    if (vi->nic->strict ||
        ((VIPL_STATE_PENDING_CONNECT == st || VIPL_STATE_CONNECTED == st) &&
         rr->remote_nic == vi->nic->nic_id && rr->remote_vi == vi->index)) {
        uint32_t depth = rr->recv_depth;

        if (0 == depth || depth > vi->remote->max_recv_depth) {
            vipl_emu_vi_fail(vi, VIPL_VIERR_PROTOCOL, false);
            return VIPL_INVALID_STATE;
        }
        vi->remote_depth = depth;
        vi->rconsumed = 0;
        vi->rconsumed_idx = 0;
        vi->rposted_seen = 0;
        vi->state = VIPL_STATE_CONNECTED;
        vipl_emu_store32(&vi->rec->state, VIPL_STATE_CONNECTED);
        return VIPL_SUCCESS;
    }
    if (!vipl_emu_peer_alive(vi->remote)) {
        vipl_emu_vi_fail(vi, VIPL_VIERR_PEER_GONE, false);
        return VIPL_NOT_REACHABLE;
    }
    return VIPL_NOT_DONE;
}

static vipl_return_t vipl_emu_query_vi(vipl_vi_t *base, vipl_vi_state_t *state,
                                       vipl_vi_error_t *error)
{
    vipl_emu_vi_t *vi = (vipl_emu_vi_t *) base;

    vipl_emu_check_vi(vi);
    if (NULL != state) {
        *state = (vipl_vi_state_t) vi->state;
    }
    if (NULL != error) {
        *error = (vipl_vi_error_t) vi->error;
    }
    return VIPL_SUCCESS;
}

static vipl_return_t vipl_emu_disconnect(vipl_vi_t *base)
{
    vipl_emu_vi_t *vi = (vipl_emu_vi_t *) base;

    if (VIPL_STATE_IDLE == vi->state) {
        return VIPL_SUCCESS;
    }
    if (NULL != vi->rrec && VIPL_STATE_ERROR != vi->state) {
        vipl_emu_store32(&vi->rrec->peer_error, VIPL_VIERR_DISCONNECTED);
    }
    /* queued RDMA is dropped with an error, like the rest of the queue */
    vi->state = VIPL_STATE_ERROR;
    vi->error = VIPL_VIERR_DISCONNECTED;
    vipl_emu_flush_pending(vi);
    vipl_emu_store32(&vi->rec->state, VIPL_STATE_ERROR);
    return VIPL_SUCCESS;
}

static void vipl_emu_destroy_vi(vipl_vi_t *base)
{
    vipl_emu_vi_t *vi = (vipl_emu_vi_t *) base;
    vipl_emu_nic_t *nic = vi->nic;

    (void) vipl_emu_disconnect(base);
    if (NULL != vi->send_cq) {
        vipl_emu_cq_detach(vi->send_cq, vi);
    }
    if (NULL != vi->recv_cq) {
        vipl_emu_cq_detach(vi->recv_cq, vi);
    }
    if (NULL != vi->remote) {
        vipl_emu_remote_put(nic, vi->remote);
    }
    pthread_mutex_lock(&nic->lock);
    vi->rec->in_use = 0;
    pthread_mutex_unlock(&nic->lock);
    free(vi->rdescs);
    free(vi);
}

const vipl_ops_t vipl_emu_ops = {
    .name = "emu",
    .open_nic = vipl_emu_open_nic,
    .close_nic = vipl_emu_close_nic,
    .create_ptag = vipl_emu_create_ptag,
    .destroy_ptag = vipl_emu_destroy_ptag,
    .register_mem = vipl_emu_register_mem,
    .deregister_mem = vipl_emu_deregister_mem,
    .mem_alloc = vipl_emu_mem_alloc,
    .mem_free = vipl_emu_mem_free,
    .create_cq = vipl_emu_create_cq,
    .destroy_cq = vipl_emu_destroy_cq,
    .create_vi = vipl_emu_create_vi,
    .destroy_vi = vipl_emu_destroy_vi,
    .vi_address = vipl_emu_vi_address,
    .connect_peer_request = vipl_emu_connect_peer_request,
    .connect_peer_done = vipl_emu_connect_peer_done,
    .disconnect = vipl_emu_disconnect,
    .post_send = vipl_emu_post_send,
    .post_recv = vipl_emu_post_recv,
    .send_done = vipl_emu_send_done,
    .recv_done = vipl_emu_recv_done,
    .cq_done = vipl_emu_cq_done,
    .query_vi = vipl_emu_query_vi,
    .nic_vi_address = vipl_emu_nic_vi_address,
    .connect_wait = vipl_emu_connect_wait,
    .attach_peer = vipl_emu_attach_peer,
    .post_inline = vipl_emu_post_inline,
    .post_inline2 = vipl_emu_post_inline2,
    .cq_recv_done = vipl_emu_cq_recv_done,
};
