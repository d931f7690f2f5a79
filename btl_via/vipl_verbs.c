/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/*
 * vipl_verbs.c: the "verbs" VIPL provider over libibverbs, for real RDMA
 * NICs (InfiniBand and RoCE through rdma-core; iWARP devices are refused:
 * their queue pairs connect only through rdma_cm, which this provider
 * does not use).
 *
 * The mapping: NIC = device context (first port), protection tag =
 * protection domain, memory handle = lkey (low 32 bits) and rkey (high
 * 32 bits) of a memory region, VI = RC queue pair, CQ = completion
 * queue, descriptor = work request (wr_id points to the descriptor),
 * RDMA write with immediate = IBV_WR_RDMA_WRITE_WITH_IMM, RDMA read =
 * IBV_WR_RDMA_READ.  The connection data a VI publishes (LID, GID, QP
 * number, first PSN) travels in the BTL's modex; VipConnectPeerRequest
 * moves the QP through RTR and RTS.  VipCQDone polls one work completion
 * into the VI's queue of done descriptors, from which VipSendDone /
 * VipRecvDone take it.  A work queue without a CQ of the caller's gets a
 * private one.  The device's limits (work requests, CQ entries, gather
 * entries, RDMA reads in flight) are queried and the requests clamped to
 * them; on Ethernet (RoCE) the GID is a RoCE v2 one and the hop limit 64.
 */

#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "tc_common.h"
#include "vipl.h"

#define VIPL_VERBS_ADDR_MAGIC 0x56425253u /* "VBRS" */
#define VIPL_VERBS_PORT 1
#define VIPL_VERBS_RECV_MARK 0x52u /* desc->prov_ of a posted receive */
#define VIPL_VERBS_POLL 16         /* work completions taken by one ibv_poll_cq */

typedef struct vipl_verbs_addr {
    uint32_t magic;
    uint32_t qpn;
    uint32_t psn;
    uint16_t lid;
    uint8_t mtu;
    uint8_t pad_;
    uint8_t gid[16];
} vipl_verbs_addr_t;
_Static_assert(sizeof(vipl_verbs_addr_t) <= VIPL_ADDR_BYTES, "verbs address fits");

typedef struct vipl_verbs_mr {
    struct vipl_verbs_mr *next;
    struct ibv_mr *mr;
    struct ibv_pd *pd;
    vipl_mem_handle_t handle;
} vipl_verbs_mr_t;

typedef struct vipl_verbs_vi vipl_verbs_vi_t;

typedef struct vipl_verbs_nic {
    vipl_nic_t super;
    struct ibv_context *ctx;
    struct ibv_port_attr port;
    struct ibv_device_attr dev;
    union ibv_gid gid;
    int gid_index;
    bool roce; /* Ethernet link layer: route by GID */
    vipl_verbs_mr_t *mrs;
    vipl_verbs_vi_t **vis; /* for qp_num -> VI */
    uint32_t num_vis;
    uint32_t cap_vis;
    pthread_mutex_t lock;
} vipl_verbs_nic_t;

typedef struct vipl_verbs_ptag {
    vipl_ptag_t super;
    struct ibv_pd *pd;
} vipl_verbs_ptag_t;

/* a completion one batch took off a shared CQ: its VI has it queued */
typedef struct vipl_verbs_ready {
    vipl_verbs_vi_t *vi;
    bool is_recv;
} vipl_verbs_ready_t;

typedef struct vipl_verbs_cq {
    vipl_cq_t super;
    struct ibv_cq *cq;
    /* what the last ibv_poll_cq batch took, reported by VipCQDone one by
     * one before the CQ is polled again */
    vipl_verbs_ready_t ready[VIPL_VERBS_POLL];
    uint32_t ready_head;
    uint32_t ready_count;
} vipl_verbs_cq_t;

struct vipl_verbs_vi {
    vipl_vi_t super;
    vipl_verbs_nic_t *nic;
    struct ibv_qp *qp;
    vipl_verbs_cq_t *send_cq;
    vipl_verbs_cq_t *recv_cq;
    struct ibv_cq *own_send_cq; /* when the caller gave none */
    struct ibv_cq *own_recv_cq;
    uint32_t psn;
    int state;
    int error;
    vipl_desc_t *sdone_head, *sdone_tail;
    vipl_desc_t *rdone_head, *rdone_tail;
};

static uint32_t vipl_verbs_status(enum ibv_wc_status st)
{
    switch (st) {
    case IBV_WC_SUCCESS:
        return 0;
    case IBV_WC_LOC_LEN_ERR:
        return VIPL_STATUS_LENGTH_ERROR;
    case IBV_WC_LOC_PROT_ERR:
        return VIPL_STATUS_PROTECTION_ERROR;
    case IBV_WC_WR_FLUSH_ERR:
        return VIPL_STATUS_FLUSHED_ERROR;
    case IBV_WC_REM_ACCESS_ERR:
        return VIPL_STATUS_RDMA_PROT_ERROR;
    case IBV_WC_REM_INV_REQ_ERR:
    case IBV_WC_RNR_RETRY_EXC_ERR:
        return VIPL_STATUS_REMOTE_DESC_ERROR;
    case IBV_WC_RETRY_EXC_ERR:
        return VIPL_STATUS_TRANSPORT_ERROR;
    default:
        return VIPL_STATUS_FORMAT_ERROR;
    }
}

/* ---- NIC ---------------------------------------------------------------- */

static vipl_return_t vipl_verbs_open_nic(const vipl_open_params_t *params, vipl_nic_t **nicp)
{
    struct ibv_device **list;
    struct ibv_device *dev = NULL;
    vipl_verbs_nic_t *nic;
    int n = 0;

    if (NULL == params || NULL == nicp) {
        return VIPL_INVALID_PARAMETER;
    }
    list = ibv_get_device_list(&n);
    if (NULL == list || 0 == n) {
        if (NULL != list) {
            ibv_free_device_list(list);
        }
        return VIPL_NO_DEVICE;
    }
    for (int i = 0; i < n; ++i) {
        if (NULL == params->device || 0 == strcmp(params->device, ibv_get_device_name(list[i]))) {
            dev = list[i];
            break;
        }
    }
    nic = calloc(1, sizeof(*nic));
    if (NULL == dev || NULL == nic) {
        ibv_free_device_list(list);
        free(nic);
        return NULL == dev ? VIPL_NO_DEVICE : VIPL_ERROR_RESOURCE;
    }
    if (IBV_TRANSPORT_IWARP == dev->transport_type) {
        /* an iWARP queue pair is connected through rdma_cm only */
        ibv_free_device_list(list);
        free(nic);
        return VIPL_NO_DEVICE;
    }
    nic->ctx = ibv_open_device(dev);
    ibv_free_device_list(list);
    if (NULL == nic->ctx || 0 != ibv_query_device(nic->ctx, &nic->dev) ||
        0 != ibv_query_port(nic->ctx, VIPL_VERBS_PORT, &nic->port) ||
        IBV_PORT_ACTIVE != nic->port.state) {
        if (NULL != nic->ctx) {
            ibv_close_device(nic->ctx);
        }
        free(nic);
        return VIPL_NO_DEVICE;
    }
    nic->roce = IBV_LINK_LAYER_ETHERNET == nic->port.link_layer;
    nic->gid_index = 0;
    memset(&nic->gid, 0, sizeof(nic->gid));
    if (nic->roce) {
        /* a RoCE v2 GID (routable, UDP); index 0 is usually RoCE v1 */
        nic->gid_index = -1;
        for (int i = 0; i < nic->port.gid_tbl_len; ++i) {
            struct ibv_gid_entry e;

            if (0 == ibv_query_gid_ex(nic->ctx, VIPL_VERBS_PORT, (uint32_t) i, &e, 0) &&
                IBV_GID_TYPE_ROCE_V2 == e.gid_type) {
                nic->gid_index = i;
                nic->gid = e.gid;
                break;
            }
        }
        if (nic->gid_index < 0) {
            ibv_close_device(nic->ctx);
            free(nic);
            return VIPL_NO_DEVICE;
        }
    } else if (0 != ibv_query_gid(nic->ctx, VIPL_VERBS_PORT, 0, &nic->gid)) {
        memset(&nic->gid, 0, sizeof(nic->gid));
    }
    pthread_mutex_init(&nic->lock, NULL);
    nic->super.ops = vipl_provider("verbs");
    nic->super.attrs.provider = "verbs";
    nic->super.attrs.max_transfer_size =
        params->max_transfer_size ? params->max_transfer_size : (1u << 20);
    if (nic->super.attrs.max_transfer_size > nic->port.max_msg_sz) {
        nic->super.attrs.max_transfer_size = nic->port.max_msg_sz;
    }
    nic->super.attrs.max_descriptors =
        nic->dev.max_qp_wr > 0 && nic->dev.max_qp_wr < 4096 ? (uint32_t) nic->dev.max_qp_wr : 4096;
    nic->super.attrs.max_segs = nic->dev.max_sge > 0 && nic->dev.max_sge < VIPL_MAX_DATA_SEGS
        ? (uint32_t) nic->dev.max_sge
        : VIPL_MAX_DATA_SEGS;
    nic->super.attrs.rdma_read = true;
    nic->super.attrs.max_inline = 0; /* the QPs are created without inline data */
    nic->super.attrs.local_only = false;
    *nicp = &nic->super;
    return VIPL_SUCCESS;
}

static void vipl_verbs_close_nic(vipl_nic_t *base)
{
    vipl_verbs_nic_t *nic = (vipl_verbs_nic_t *) base;

    while (NULL != nic->mrs) {
        vipl_verbs_mr_t *m = nic->mrs;
        nic->mrs = m->next;
        ibv_dereg_mr(m->mr);
        free(m);
    }
    ibv_close_device(nic->ctx);
    pthread_mutex_destroy(&nic->lock);
    free(nic->vis);
    free(nic);
}

static vipl_return_t vipl_verbs_create_ptag(vipl_nic_t *base, vipl_ptag_t **ptag)
{
    vipl_verbs_nic_t *nic = (vipl_verbs_nic_t *) base;
    vipl_verbs_ptag_t *p = calloc(1, sizeof(*p));

    if (NULL == p) {
        return VIPL_ERROR_RESOURCE;
    }
    p->pd = ibv_alloc_pd(nic->ctx);
    if (NULL == p->pd) {
        free(p);
        return VIPL_ERROR_RESOURCE;
    }
    p->super.nic = base;
    *ptag = &p->super;
    return VIPL_SUCCESS;
}

static void vipl_verbs_destroy_ptag(vipl_ptag_t *base)
{
    vipl_verbs_ptag_t *p = (vipl_verbs_ptag_t *) base;
    vipl_verbs_nic_t *nic = (vipl_verbs_nic_t *) base->nic;
    vipl_verbs_mr_t **pp = &nic->mrs;

    /* registrations still in the domain go first: a PD with memory
     * regions cannot be freed (EBUSY), and they cannot outlive it */
    pthread_mutex_lock(&nic->lock);
    while (NULL != *pp) {
        vipl_verbs_mr_t *m = *pp;

        if (m->pd != p->pd) {
            pp = &m->next;
            continue;
        }
        *pp = m->next;
        ibv_dereg_mr(m->mr);
        free(m);
    }
    pthread_mutex_unlock(&nic->lock);
    ibv_dealloc_pd(p->pd);
    free(p);
}

static vipl_return_t vipl_verbs_register_mem(vipl_nic_t *base, void *addr, size_t len,
                                             const vipl_mem_attrs_t *attrs,
                                             vipl_mem_handle_t *handle)
{
    vipl_verbs_nic_t *nic = (vipl_verbs_nic_t *) base;
    vipl_verbs_mr_t *m;
    int access = IBV_ACCESS_LOCAL_WRITE;
    struct ibv_pd *pd;

    if (NULL == addr || 0 == len || NULL == attrs || NULL == attrs->ptag ||
        attrs->ptag->nic != base || NULL == handle) {
        return VIPL_INVALID_PARAMETER;
    }
    if (attrs->enable_rdma_write) {
        access |= IBV_ACCESS_REMOTE_WRITE;
    }
    if (attrs->enable_rdma_read) {
        access |= IBV_ACCESS_REMOTE_READ;
    }
    m = calloc(1, sizeof(*m));
    if (NULL == m) {
        return VIPL_ERROR_RESOURCE;
    }
    pd = ((vipl_verbs_ptag_t *) attrs->ptag)->pd;
    m->mr = ibv_reg_mr(pd, addr, len, access);
    if (NULL == m->mr && !attrs->enable_rdma_write) {
        /* read-only memory (a constant send buffer) cannot be registered
         * for local write: what it is used for (a send, an RDMA write's
         * source, a peer's RDMA read) needs none */
        m->mr = ibv_reg_mr(pd, addr, len, access & ~IBV_ACCESS_LOCAL_WRITE);
    }
    if (NULL == m->mr) {
        free(m);
        return VIPL_ERROR_RESOURCE;
    }
    m->pd = pd;
    m->handle = ((uint64_t) m->mr->rkey << 32) | m->mr->lkey;
    pthread_mutex_lock(&nic->lock);
    m->next = nic->mrs;
    nic->mrs = m;
    pthread_mutex_unlock(&nic->lock);
    *handle = m->handle;
    return VIPL_SUCCESS;
}

static vipl_return_t vipl_verbs_deregister_mem(vipl_nic_t *base, void *addr,
                                               vipl_mem_handle_t handle)
{
    vipl_verbs_nic_t *nic = (vipl_verbs_nic_t *) base;
    vipl_verbs_mr_t **pp, *m = NULL;

    pthread_mutex_lock(&nic->lock);
    for (pp = &nic->mrs; *pp; pp = &(*pp)->next) {
        if ((*pp)->handle == handle && (*pp)->mr->addr == addr) {
            m = *pp;
            *pp = m->next;
            break;
        }
    }
    pthread_mutex_unlock(&nic->lock);
    if (NULL == m) {
        return VIPL_INVALID_PARAMETER;
    }
    ibv_dereg_mr(m->mr);
    free(m);
    return VIPL_SUCCESS;
}

/* ---- completion queues ---------------------------------------------------- */

static vipl_return_t vipl_verbs_create_cq(vipl_nic_t *base, uint32_t entries, vipl_cq_t **cqp)
{
    vipl_verbs_nic_t *nic = (vipl_verbs_nic_t *) base;
    vipl_verbs_cq_t *cq = calloc(1, sizeof(*cq));

    if (NULL == cq) {
        return VIPL_ERROR_RESOURCE;
    }
    if (0 == entries) {
        entries = 256;
    }
    if (nic->dev.max_cqe > 0 && entries > (uint32_t) nic->dev.max_cqe) {
        /* nprocs x descriptors can exceed the device: clamp (the BTL's
         * credits bound what is outstanding per VI, not in all) */
        entries = (uint32_t) nic->dev.max_cqe;
    }
    cq->cq = ibv_create_cq(nic->ctx, (int) entries, NULL, NULL, 0);
    if (NULL == cq->cq) {
        free(cq);
        return VIPL_ERROR_RESOURCE;
    }
    cq->super.nic = base;
    *cqp = &cq->super;
    return VIPL_SUCCESS;
}

static void vipl_verbs_destroy_cq(vipl_cq_t *base)
{
    vipl_verbs_cq_t *cq = (vipl_verbs_cq_t *) base;

    ibv_destroy_cq(cq->cq);
    free(cq);
}

static vipl_verbs_vi_t *vipl_verbs_find_vi(vipl_verbs_nic_t *nic, uint32_t qpn)
{
    vipl_verbs_vi_t *vi = NULL;

    pthread_mutex_lock(&nic->lock);
    for (uint32_t i = 0; i < nic->num_vis; ++i) {
        if (nic->vis[i]->qp->qp_num == qpn) {
            vi = nic->vis[i];
            break;
        }
    }
    pthread_mutex_unlock(&nic->lock);
    return vi;
}

/* work completions into their VIs' done queues, in order, and (ring not
 * NULL: a CQ VipCQDone reports from) into the ring; returns how many were
 * taken.  A completion of no known VI, or without its descriptor, is
 * dropped. */
static int vipl_verbs_take(vipl_verbs_nic_t *nic, vipl_verbs_cq_t *ring, const struct ibv_wc *wcs,
                           int n)
{
    int taken = 0;

    for (int i = 0; i < n; ++i) {
        const struct ibv_wc *wc = wcs + i;
        vipl_verbs_vi_t *vi = vipl_verbs_find_vi(nic, wc->qp_num);
        vipl_desc_t *d = (vipl_desc_t *) (uintptr_t) wc->wr_id;
        uint32_t st;
        bool is_recv;

        if (NULL == vi || NULL == d) {
            continue;
        }
        st = vipl_verbs_status(wc->status);
        d->status = VIPL_STATUS_DONE | st;
        /* an error completion's opcode is undefined: the descriptor says
         * which queue it was posted to */
        is_recv = VIPL_VERBS_RECV_MARK == d->prov_;
        if (0 != st) {
            d->length = 0;
            vi->state = VIPL_STATE_ERROR;
            vi->error = VIPL_STATUS_FLUSHED_ERROR == st ? vi->error : VIPL_VIERR_PEER_GONE;
        } else if (is_recv) {
            d->length = wc->byte_len;
        }
        if (is_recv && (wc->wc_flags & IBV_WC_WITH_IMM)) {
            d->status |= VIPL_STATUS_IMMEDIATE;
            d->imm_data = ntohl(wc->imm_data);
        }
        if (is_recv) {
            vipl_desc_push(&vi->rdone_head, &vi->rdone_tail, d);
        } else {
            vipl_desc_push(&vi->sdone_head, &vi->sdone_tail, d);
        }
        if (NULL != ring && ring->ready_count < VIPL_VERBS_POLL) {
            ring->ready[(ring->ready_head + ring->ready_count) % VIPL_VERBS_POLL] =
                (vipl_verbs_ready_t){.vi = vi, .is_recv = is_recv};
            ++ring->ready_count;
        }
        ++taken;
    }
    return taken;
}

/* one ibv_poll_cq for up to VIPL_VERBS_POLL completions (issue 25: one
 * poll per batch, not one per completion) */
static int vipl_verbs_poll_batch(vipl_verbs_nic_t *nic, vipl_verbs_cq_t *ring, struct ibv_cq *cq)
{
    struct ibv_wc wc[VIPL_VERBS_POLL];
    int n = ibv_poll_cq(cq, VIPL_VERBS_POLL, wc);

    return n > 0 ? vipl_verbs_take(nic, ring, wc, n) : 0;
}

/* the next completion of the last batch, in CQ order */
static bool vipl_verbs_ready_pop(vipl_verbs_cq_t *cq, vipl_verbs_vi_t **vi, bool *is_recv)
{
    if (0 == cq->ready_count) {
        return false;
    }
    *vi = cq->ready[cq->ready_head].vi;
    *is_recv = cq->ready[cq->ready_head].is_recv;
    cq->ready_head = (cq->ready_head + 1) % VIPL_VERBS_POLL;
    --cq->ready_count;
    return true;
}

/* a VI goes: no ring may name it */
static void vipl_verbs_ready_forget(vipl_verbs_cq_t *cq, const vipl_verbs_vi_t *vi)
{
    uint32_t kept = 0;
    vipl_verbs_ready_t keep[VIPL_VERBS_POLL];

    for (uint32_t i = 0; i < cq->ready_count; ++i) {
        vipl_verbs_ready_t r = cq->ready[(cq->ready_head + i) % VIPL_VERBS_POLL];

        if (r.vi != vi) {
            keep[kept++] = r;
        }
    }
    memcpy(cq->ready, keep, kept * sizeof(keep[0]));
    cq->ready_head = 0;
    cq->ready_count = kept;
}

static vipl_return_t vipl_verbs_cq_done(vipl_cq_t *base, vipl_vi_t **vip, bool *is_recv)
{
    vipl_verbs_cq_t *cq = (vipl_verbs_cq_t *) base;
    vipl_verbs_vi_t *vi;

    if (0 == cq->ready_count) {
        (void) vipl_verbs_poll_batch((vipl_verbs_nic_t *) base->nic, cq, cq->cq);
    }
    if (!vipl_verbs_ready_pop(cq, &vi, is_recv)) {
        return VIPL_NOT_DONE;
    }
    *vip = &vi->super;
    return VIPL_SUCCESS;
}

/* ---- VIs -------------------------------------------------------------------- */

static vipl_return_t vipl_verbs_create_vi(vipl_nic_t *base, const vipl_vi_attrs_t *attrs,
                                          vipl_cq_t *send_cq, vipl_cq_t *recv_cq, vipl_vi_t **vip)
{
    vipl_verbs_nic_t *nic = (vipl_verbs_nic_t *) base;
    struct ibv_qp_init_attr qia;
    struct ibv_qp_attr qa;
    vipl_verbs_vi_t *vi;

    if (NULL == attrs || NULL == vip) {
        return VIPL_INVALID_PARAMETER;
    }
    if (NULL == attrs->ptag || attrs->ptag->nic != base) {
        return VIPL_INVALID_PTAG;
    }
    if (VIPL_RELIABLE_DELIVERY != attrs->reliability) {
        return VIPL_INVALID_RELIABILITY_LEVEL;
    }
    vi = calloc(1, sizeof(*vi));
    if (NULL == vi) {
        return VIPL_ERROR_RESOURCE;
    }
    vi->nic = nic;
    vi->send_cq = (vipl_verbs_cq_t *) send_cq;
    vi->recv_cq = (vipl_verbs_cq_t *) recv_cq;
    if (NULL == send_cq) {
        vi->own_send_cq = ibv_create_cq(nic->ctx, (int) attrs->send_depth, NULL, NULL, 0);
    }
    if (NULL == recv_cq) {
        vi->own_recv_cq = ibv_create_cq(nic->ctx, (int) attrs->recv_depth, NULL, NULL, 0);
    }
    memset(&qia, 0, sizeof(qia));
    qia.send_cq = send_cq ? vi->send_cq->cq : vi->own_send_cq;
    qia.recv_cq = recv_cq ? vi->recv_cq->cq : vi->own_recv_cq;
    qia.qp_type = IBV_QPT_RC;
    qia.sq_sig_all = 1;
    qia.cap.max_send_wr = attrs->send_depth;
    qia.cap.max_recv_wr = attrs->recv_depth;
    if (nic->dev.max_qp_wr > 0) {
        qia.cap.max_send_wr = qia.cap.max_send_wr < (uint32_t) nic->dev.max_qp_wr
            ? qia.cap.max_send_wr
            : (uint32_t) nic->dev.max_qp_wr;
        qia.cap.max_recv_wr = qia.cap.max_recv_wr < (uint32_t) nic->dev.max_qp_wr
            ? qia.cap.max_recv_wr
            : (uint32_t) nic->dev.max_qp_wr;
    }
    qia.cap.max_send_sge = nic->super.attrs.max_segs;
    qia.cap.max_recv_sge = 1;
    if (NULL != qia.send_cq && NULL != qia.recv_cq) {
        vi->qp = ibv_create_qp(((vipl_verbs_ptag_t *) attrs->ptag)->pd, &qia);
    }
    memset(&qa, 0, sizeof(qa));
    qa.qp_state = IBV_QPS_INIT;
    qa.pkey_index = 0;
    qa.port_num = VIPL_VERBS_PORT;
    qa.qp_access_flags = IBV_ACCESS_LOCAL_WRITE |
        (attrs->enable_rdma_write ? IBV_ACCESS_REMOTE_WRITE : 0) |
        (attrs->enable_rdma_read ? IBV_ACCESS_REMOTE_READ : 0);
    if (NULL == vi->qp ||
        0 !=
            ibv_modify_qp(vi->qp, &qa,
                          IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)) {
        goto fail;
    }
    pthread_mutex_lock(&nic->lock);
    if (nic->num_vis == nic->cap_vis) {
        uint32_t cap = nic->cap_vis ? 2 * nic->cap_vis : 16;
        vipl_verbs_vi_t **v = realloc(nic->vis, cap * sizeof(*v));
        if (NULL == v) {
            pthread_mutex_unlock(&nic->lock);
            goto fail;
        }
        nic->vis = v;
        nic->cap_vis = cap;
    }
    nic->vis[nic->num_vis++] = vi;
    pthread_mutex_unlock(&nic->lock);
    vi->psn = (uint32_t) (lrand48() & 0xffffff);
    vi->state = VIPL_STATE_IDLE;
    vi->super.nic = base;
    *vip = &vi->super;
    return VIPL_SUCCESS;

fail:
    if (NULL != vi->qp) {
        ibv_destroy_qp(vi->qp);
    }
    if (NULL != vi->own_send_cq) {
        ibv_destroy_cq(vi->own_send_cq);
    }
    if (NULL != vi->own_recv_cq) {
        ibv_destroy_cq(vi->own_recv_cq);
    }
    free(vi);
    return VIPL_ERROR_RESOURCE;
}

static void vipl_verbs_vi_address(vipl_vi_t *base, vipl_vi_address_t *addr)
{
    vipl_verbs_vi_t *vi = (vipl_verbs_vi_t *) base;
    vipl_verbs_addr_t a;

    memset(&a, 0, sizeof(a));
    a.magic = VIPL_VERBS_ADDR_MAGIC;
    a.qpn = vi->qp->qp_num;
    a.psn = vi->psn;
    a.lid = vi->nic->port.lid;
    a.mtu = (uint8_t) vi->nic->port.active_mtu;
    memcpy(a.gid, vi->nic->gid.raw, sizeof(a.gid));
    memset(addr, 0, sizeof(*addr));
    memcpy(addr->bytes, &a, sizeof(a));
}

/* RTR then RTS against the peer's published QP */
static vipl_return_t vipl_verbs_connect_peer_request(vipl_vi_t *base,
                                                     const vipl_vi_address_t *remote)
{
    vipl_verbs_vi_t *vi = (vipl_verbs_vi_t *) base;
    struct ibv_qp_attr qa;
    vipl_verbs_addr_t a;

    if (NULL == remote) {
        return VIPL_INVALID_PARAMETER;
    }
    if (VIPL_STATE_IDLE != vi->state) {
        return VIPL_INVALID_STATE;
    }
    memcpy(&a, remote->bytes, sizeof(a));
    if (VIPL_VERBS_ADDR_MAGIC != a.magic) {
        return VIPL_INVALID_PARAMETER;
    }
    memset(&qa, 0, sizeof(qa));
    qa.qp_state = IBV_QPS_RTR;
    qa.path_mtu =
        a.mtu < vi->nic->port.active_mtu ? (enum ibv_mtu) a.mtu : vi->nic->port.active_mtu;
    qa.dest_qp_num = a.qpn;
    qa.rq_psn = a.psn;
    /* RDMA reads in flight: as many as the device takes (a get is split
     * into many read descriptors) */
    qa.max_dest_rd_atomic =
        (uint8_t) (vi->nic->dev.max_qp_rd_atom > 0 && vi->nic->dev.max_qp_rd_atom < 16
                       ? vi->nic->dev.max_qp_rd_atom
                       : 16);
    qa.min_rnr_timer = 12;
    qa.ah_attr.dlid = a.lid;
    qa.ah_attr.port_num = VIPL_VERBS_PORT;
    if (vi->nic->roce || 0 == a.lid) {
        /* RoCE: route by GID (RoCE v2: routable, so more than one hop) */
        qa.ah_attr.is_global = 1;
        memcpy(qa.ah_attr.grh.dgid.raw, a.gid, sizeof(a.gid));
        qa.ah_attr.grh.hop_limit = 64;
        qa.ah_attr.grh.sgid_index = (uint8_t) vi->nic->gid_index;
    }
    if (0 !=
        ibv_modify_qp(vi->qp, &qa,
                      IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                          IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)) {
        return VIPL_NOT_REACHABLE;
    }
    memset(&qa, 0, sizeof(qa));
    qa.qp_state = IBV_QPS_RTS;
    qa.timeout = 14;
    qa.retry_cnt = 7;
    qa.rnr_retry = 7;
    qa.sq_psn = vi->psn;
    qa.max_rd_atomic =
        (uint8_t) (vi->nic->dev.max_qp_init_rd_atom > 0 && vi->nic->dev.max_qp_init_rd_atom < 16
                       ? vi->nic->dev.max_qp_init_rd_atom
                       : 16);
    if (0 !=
        ibv_modify_qp(vi->qp, &qa,
                      IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                          IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC)) {
        return VIPL_NOT_REACHABLE;
    }
    vi->state = VIPL_STATE_CONNECTED;
    return VIPL_SUCCESS;
}

static vipl_return_t vipl_verbs_connect_peer_done(vipl_vi_t *base)
{
    vipl_verbs_vi_t *vi = (vipl_verbs_vi_t *) base;

    /* RC needs no handshake once both QPs are in RTS: retries cover a
     * peer that gets there later */
    return VIPL_STATE_CONNECTED == vi->state ? VIPL_SUCCESS : VIPL_INVALID_STATE;
}

static vipl_return_t vipl_verbs_post_send(vipl_vi_t *base, vipl_desc_t *d)
{
    vipl_verbs_vi_t *vi = (vipl_verbs_vi_t *) base;
    struct ibv_sge sge[VIPL_MAX_DATA_SEGS];
    struct ibv_send_wr wr, *bad = NULL;
    uint32_t op;
    bool imm;

    if (NULL == d || d->seg_count > VIPL_MAX_DATA_SEGS) {
        return VIPL_INVALID_PARAMETER;
    }
    if (VIPL_STATE_CONNECTED != vi->state) {
        return VIPL_INVALID_STATE;
    }
    if (d->control & VIPL_CONTROL_INLINE) {
        return VIPL_INVALID_PARAMETER; /* attrs.max_inline is 0 */
    }
    op = d->control & VIPL_CONTROL_OP_MASK;
    imm = 0 != (d->control & VIPL_CONTROL_IMMEDIATE);
    memset(&wr, 0, sizeof(wr));
    for (uint32_t i = 0; i < d->seg_count; ++i) {
        sge[i].addr = (uintptr_t) d->ds[i].addr;
        sge[i].length = d->ds[i].length;
        sge[i].lkey = (uint32_t) (d->ds[i].handle & 0xffffffffu);
    }
    wr.wr_id = (uintptr_t) d;
    wr.sg_list = sge;
    wr.num_sge = (int) d->seg_count;
    wr.send_flags = IBV_SEND_SIGNALED;
    switch (op) {
    case VIPL_CONTROL_OP_SEND:
        wr.opcode = imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND;
        break;
    case VIPL_CONTROL_OP_RDMAWRITE:
        wr.opcode = imm ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE;
        break;
    case VIPL_CONTROL_OP_RDMAREAD:
        if (imm) {
            return VIPL_INVALID_PARAMETER;
        }
        wr.opcode = IBV_WR_RDMA_READ;
        break;
    default:
        return VIPL_INVALID_PARAMETER;
    }
    if (VIPL_CONTROL_OP_SEND != op) {
        wr.wr.rdma.remote_addr = d->remote_addr;
        wr.wr.rdma.rkey = (uint32_t) (d->remote_handle >> 32);
    }
    if (imm) {
        wr.imm_data = htonl(d->imm_data);
    }
    d->status = 0;
    d->prov_ = 0;
    d->length = 0;
    for (uint32_t i = 0; i < d->seg_count; ++i) {
        d->length += d->ds[i].length;
    }
    return 0 == ibv_post_send(vi->qp, &wr, &bad) ? VIPL_SUCCESS : VIPL_ERROR_RESOURCE;
}

static vipl_return_t vipl_verbs_post_recv(vipl_vi_t *base, vipl_desc_t *d)
{
    vipl_verbs_vi_t *vi = (vipl_verbs_vi_t *) base;
    struct ibv_recv_wr wr, *bad = NULL;
    struct ibv_sge sge;

    if (NULL == d || 1 != d->seg_count) {
        return VIPL_INVALID_PARAMETER;
    }
    if (VIPL_STATE_ERROR == vi->state) {
        return VIPL_INVALID_STATE;
    }
    sge.addr = (uintptr_t) d->ds[0].addr;
    sge.length = d->ds[0].length;
    sge.lkey = (uint32_t) (d->ds[0].handle & 0xffffffffu);
    memset(&wr, 0, sizeof(wr));
    wr.wr_id = (uintptr_t) d;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    d->status = 0;
    d->prov_ = VIPL_VERBS_RECV_MARK;
    return 0 == ibv_post_recv(vi->qp, &wr, &bad) ? VIPL_SUCCESS : VIPL_ERROR_RESOURCE;
}

/* one batch off the CQ of a VI's send or receive queue (a shared CQ only
 * once its last batch was reported: its ring keeps the order) */
typedef struct vipl_verbs_poll_arg {
    vipl_verbs_vi_t *vi;
    bool want_recv;
} vipl_verbs_poll_arg_t;

static void vipl_verbs_poll_queue(void *ctx)
{
    const vipl_verbs_poll_arg_t *a = ctx;
    vipl_verbs_vi_t *vi = a->vi;
    vipl_verbs_cq_t *shared = a->want_recv ? vi->recv_cq : vi->send_cq;

    if (NULL != shared) {
        if (0 == shared->ready_count) {
            (void) vipl_verbs_poll_batch(vi->nic, shared, shared->cq);
        }
    } else {
        (void) vipl_verbs_poll_batch(vi->nic, NULL,
                                     a->want_recv ? vi->own_recv_cq : vi->own_send_cq);
    }
}

static vipl_return_t vipl_verbs_done(vipl_verbs_vi_t *vi, bool want_recv, vipl_desc_t **dp)
{
    vipl_verbs_poll_arg_t arg = {.vi = vi, .want_recv = want_recv};

    return want_recv
        ? vipl_done_take(&vi->rdone_head, &vi->rdone_tail, vipl_verbs_poll_queue, &arg, dp)
        : vipl_done_take(&vi->sdone_head, &vi->sdone_tail, vipl_verbs_poll_queue, &arg, dp);
}

static vipl_return_t vipl_verbs_send_done(vipl_vi_t *base, vipl_desc_t **dp)
{
    return vipl_verbs_done((vipl_verbs_vi_t *) base, false, dp);
}

static vipl_return_t vipl_verbs_recv_done(vipl_vi_t *base, vipl_desc_t **dp)
{
    return vipl_verbs_done((vipl_verbs_vi_t *) base, true, dp);
}

static vipl_return_t vipl_verbs_query_vi(vipl_vi_t *base, vipl_vi_state_t *state,
                                         vipl_vi_error_t *error)
{
    vipl_verbs_vi_t *vi = (vipl_verbs_vi_t *) base;
    struct ibv_qp_attr qa;
    struct ibv_qp_init_attr qia;

    if (0 == ibv_query_qp(vi->qp, &qa, IBV_QP_STATE, &qia) && IBV_QPS_ERR == qa.qp_state &&
        VIPL_STATE_ERROR != vi->state) {
        vi->state = VIPL_STATE_ERROR;
        vi->error = VIPL_VIERR_PEER_GONE;
    }
    if (NULL != state) {
        *state = (vipl_vi_state_t) vi->state;
    }
    if (NULL != error) {
        *error = (vipl_vi_error_t) vi->error;
    }
    return VIPL_SUCCESS;
}

static vipl_return_t vipl_verbs_disconnect(vipl_vi_t *base)
{
    vipl_verbs_vi_t *vi = (vipl_verbs_vi_t *) base;
    struct ibv_qp_attr qa;

    if (VIPL_STATE_IDLE == vi->state) {
        return VIPL_SUCCESS;
    }
    memset(&qa, 0, sizeof(qa));
    qa.qp_state = IBV_QPS_ERR;
    (void) ibv_modify_qp(vi->qp, &qa, IBV_QP_STATE);
    vi->state = VIPL_STATE_ERROR;
    vi->error = VIPL_VIERR_DISCONNECTED;
    return VIPL_SUCCESS;
}

static void vipl_verbs_destroy_vi(vipl_vi_t *base)
{
    vipl_verbs_vi_t *vi = (vipl_verbs_vi_t *) base;
    vipl_verbs_nic_t *nic = vi->nic;

    pthread_mutex_lock(&nic->lock);
    for (uint32_t i = 0; i < nic->num_vis; ++i) {
        if (nic->vis[i] == vi) {
            nic->vis[i] = nic->vis[--nic->num_vis];
            break;
        }
    }
    pthread_mutex_unlock(&nic->lock);
    if (NULL != vi->send_cq) {
        vipl_verbs_ready_forget(vi->send_cq, vi);
    }
    if (NULL != vi->recv_cq) {
        vipl_verbs_ready_forget(vi->recv_cq, vi);
    }
    ibv_destroy_qp(vi->qp);
    if (NULL != vi->own_send_cq) {
        ibv_destroy_cq(vi->own_send_cq);
    }
    if (NULL != vi->own_recv_cq) {
        ibv_destroy_cq(vi->own_recv_cq);
    }
    free(vi);
}

const vipl_ops_t vipl_verbs_ops = {
    .name = "verbs",
    .open_nic = vipl_verbs_open_nic,
    .close_nic = vipl_verbs_close_nic,
    .create_ptag = vipl_verbs_create_ptag,
    .destroy_ptag = vipl_verbs_destroy_ptag,
    .register_mem = vipl_verbs_register_mem,
    .deregister_mem = vipl_verbs_deregister_mem,
    .mem_alloc = vipl_host_mem_alloc,
    .mem_free = vipl_host_mem_free,
    .create_cq = vipl_verbs_create_cq,
    .destroy_cq = vipl_verbs_destroy_cq,
    .create_vi = vipl_verbs_create_vi,
    .destroy_vi = vipl_verbs_destroy_vi,
    .vi_address = vipl_verbs_vi_address,
    .connect_peer_request = vipl_verbs_connect_peer_request,
    .connect_peer_done = vipl_verbs_connect_peer_done,
    .disconnect = vipl_verbs_disconnect,
    .post_send = vipl_verbs_post_send,
    .post_recv = vipl_verbs_post_recv,
    .send_done = vipl_verbs_send_done,
    .recv_done = vipl_verbs_recv_done,
    .cq_done = vipl_verbs_cq_done,
    .query_vi = vipl_verbs_query_vi,
};
