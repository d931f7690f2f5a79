/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/*
 * vipl_ofi_xfer.c: the ofi provider's data transfer (vipl_ofi.c holds the
 * NIC, memory and connections): send and receive descriptors as
 * fi_sendmsg and fi_recvmsg in posting order, inline sends as FI_INJECT
 * (fi_injectdata for vipl_post_inline), RDMA write and read as
 * fi_writemsg and fi_readmsg, completions read from each VI's CQ into its
 * done queues, and the receive descriptors an RDMA write's notice lends
 * (see the top of vipl_ofi.c).
 */

#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include "tc_common.h"
#include "vipl.h"
#include "vipl_ofi.h"

bool vipl_ofi_local(vipl_ofi_nic_t *nic, const vipl_data_seg_t *ds, void **desc)
{
    uint64_t slot = ds->handle & 0xffffffffu;
    const vipl_ofi_mr_t *m;
    uint64_t a = (uintptr_t) ds->addr;

    *desc = NULL;
    if (0 == ds->length || (0 == ds->handle && !nic->mr_local)) {
        return true;
    }
    if (slot < 1 || slot > nic->max_regs) {
        return false;
    }
    m = &nic->mrs[slot - 1];
    if (!m->in_use || m->key != (uint32_t) (ds->handle >> 32) || a < m->base ||
        a - m->base > m->len || ds->length > m->len - (a - m->base)) {
        return false;
    }
    *desc = m->desc;
    return true;
}

void vipl_ofi_release_held(vipl_ofi_vi_t *vi)
{
    while (vi->held_count > 0) {
        vipl_ofi_held_t *h = &vi->held[vi->held_head];

        if (h->d->prov_ & VIPL_OFI_LENT) {
            return;
        }
        h->d->status = h->status;
        h->d->length = h->len;
        h->d->imm_data = h->imm;
        h->d->prov_ = 0;
        vipl_desc_push(&vi->rdone_head, &vi->rdone_tail, h->d);
        vi->held_head = (vi->held_head + 1) % vi->recv_depth;
        --vi->held_count;
    }
}

/* under the VI's lock: the descriptor libfabric completed leaves the
 * ring (it is the oldest: receives complete in order) */
void vipl_ofi_ring_remove(vipl_ofi_vi_t *vi, vipl_desc_t *d)
{
    for (uint32_t i = 0; i < vi->ring_count; ++i) {
        uint32_t at = (vi->ring_head + i) % vi->recv_depth;

        if (vi->ring[at] != d) {
            continue;
        }
        /* close the gap (only on error paths is it not the head) */
        for (uint32_t j = i; j > 0; --j) {
            uint32_t to = (vi->ring_head + j) % vi->recv_depth;
            uint32_t from = (vi->ring_head + j - 1) % vi->recv_depth;
            vi->ring[to] = vi->ring[from];
        }
        vi->ring_head = (vi->ring_head + 1) % vi->recv_depth;
        --vi->ring_count;
        return;
    }
}

void vipl_ofi_fail_locked(vipl_ofi_vi_t *vi, vipl_vi_error_t why)
{
    if (VIPL_STATE_ERROR != vi->state) {
        vi->state = VIPL_STATE_ERROR;
        vi->error = why;
    }
}

/* under the VI's lock: a receive completion, in libfabric's order */
static void vipl_ofi_recv_complete(vipl_ofi_vi_t *vi, vipl_desc_t *d, uint32_t status, uint32_t len,
                                   uint32_t imm)
{
    vipl_ofi_ring_remove(vi, d);
    d->prov_ &= ~VIPL_OFI_AT_FI;
    if ((d->prov_ & VIPL_OFI_LENT) || vi->held_count > 0) {
        vipl_ofi_held_t *h = &vi->held[(vi->held_head + vi->held_count) % vi->recv_depth];

        h->d = d;
        h->status = status;
        h->len = len;
        h->imm = imm;
        ++vi->held_count;
        return;
    }
    d->status = status;
    d->length = len;
    d->imm_data = imm;
    d->prov_ = 0;
    vipl_desc_push(&vi->rdone_head, &vi->rdone_tail, d);
}

/* under the VI's lock: an RDMA write with immediate data arrived; it
 * completes the oldest posted receive descriptor not lent yet */
static void vipl_ofi_notice(vipl_ofi_vi_t *vi, uint32_t len, uint32_t imm)
{
    for (uint32_t i = 0; i < vi->ring_count; ++i) {
        vipl_desc_t *d = vi->ring[(vi->ring_head + i) % vi->recv_depth];

        if (d->prov_ & VIPL_OFI_LENT) {
            continue;
        }
        d->prov_ |= VIPL_OFI_LENT;
        d->status = VIPL_STATUS_DONE | VIPL_STATUS_IMMEDIATE;
        d->length = len;
        d->imm_data = imm;
        vipl_desc_push(&vi->rdone_head, &vi->rdone_tail, d);
        return;
    }
    /* VIA: no receive posted for it breaks the connection */
    vipl_ofi_fail_locked(vi, VIPL_VIERR_RECV_NOT_POSTED);
}

static uint32_t vipl_ofi_err_status(int err)
{
    switch (err) {
    case FI_ECANCELED:
        return VIPL_STATUS_FLUSHED_ERROR;
    case FI_EACCES:
    case FI_EKEYREJECTED:
    case FI_EPERM:
        return VIPL_STATUS_RDMA_PROT_ERROR;
    case FI_ETRUNC:
    case FI_EMSGSIZE:
        return VIPL_STATUS_LENGTH_ERROR;
    default:
        return VIPL_STATUS_TRANSPORT_ERROR;
    }
}

/* under the VI's lock: read the VI's CQ (this also moves the provider's
 * data, see the top of the file) */
void vipl_ofi_poll_vi(vipl_ofi_vi_t *vi)
{
    struct fi_cq_data_entry e[VIPL_OFI_POLL];
    ssize_t n;

    if (NULL == vi->cq) {
        return;
    }
    n = tc_ofi_cq_read(&vi->nic->guard, vi->cq, e, VIPL_OFI_POLL);
    if (-FI_EAVAIL == n) {
        struct fi_cq_err_entry err;
        vipl_desc_t *d;
        uint32_t st;

        memset(&err, 0, sizeof(err));
        if (tc_ofi_cq_readerr(&vi->nic->guard, vi->cq, &err) < 0) {
            return;
        }
        d = err.op_context;
        st = VIPL_STATUS_DONE | vipl_ofi_err_status(err.err);
        /* a connection that ends is orderly only after the peer's goodbye
         * or our own disconnect (a goodbye noted later still turns
         * PEER_GONE into DISCONNECTED: vipl_ofi_connreq) */
        vipl_ofi_fail_locked(
            vi, vi->bye || vi->closing ? VIPL_VIERR_DISCONNECTED : VIPL_VIERR_PEER_GONE);
        if (NULL == d) {
            return;
        }
        if (d->prov_ & VIPL_OFI_RECV) {
            vipl_ofi_ring_remove(vi, d);
            d->status = st;
            d->length = 0;
            d->prov_ = 0;
            vipl_desc_push(&vi->rdone_head, &vi->rdone_tail, d);
        } else {
            if (vi->sends_at_fi > 0) {
                --vi->sends_at_fi;
            }
            d->status = st;
            vipl_desc_push(&vi->sdone_head, &vi->sdone_tail, d);
        }
        return;
    }
    for (ssize_t i = 0; i < n; ++i) {
        vipl_desc_t *d = e[i].op_context;
        uint32_t imm = (uint32_t) e[i].data;
        bool has_imm = 0 != (e[i].flags & FI_REMOTE_CQ_DATA);
        uint32_t len = e[i].len > UINT32_MAX ? UINT32_MAX : (uint32_t) e[i].len;

        if (NULL == d) {
            if (has_imm && (e[i].flags & FI_REMOTE_WRITE)) {
                vipl_ofi_notice(vi, len, imm);
            }
            continue;
        }
        if (d->prov_ & VIPL_OFI_RECV) {
            vipl_ofi_recv_complete(vi, d, VIPL_STATUS_DONE | (has_imm ? VIPL_STATUS_IMMEDIATE : 0),
                                   len, has_imm ? imm : 0);
        } else {
            if (vi->sends_at_fi > 0) {
                --vi->sends_at_fi;
            }
            d->status = VIPL_STATUS_DONE;
            vipl_desc_push(&vi->sdone_head, &vi->sdone_tail, d);
        }
    }
}

/* ---- data transfer --------------------------------------------------------- */

vipl_return_t vipl_ofi_post_send(vipl_vi_t *base, vipl_desc_t *d)
{
    vipl_ofi_vi_t *vi = (vipl_ofi_vi_t *) base;
    vipl_ofi_nic_t *nic = vi->nic;
    struct iovec iov[VIPL_MAX_DATA_SEGS];
    void *desc[VIPL_MAX_DATA_SEGS];
    uint64_t total = 0;
    uint32_t op;
    bool imm, inl, local_ok = true;
    uint64_t flags = FI_COMPLETION;
    bool at_once = false; /* completes at post: no CQ entry */
    ssize_t ret;

    if (NULL == d || 0 == d->seg_count || d->seg_count > nic->super.attrs.max_segs) {
        return VIPL_INVALID_PARAMETER;
    }
    op = d->control & VIPL_CONTROL_OP_MASK;
    imm = 0 != (d->control & VIPL_CONTROL_IMMEDIATE);
    inl = 0 != (d->control & VIPL_CONTROL_INLINE);
    for (uint32_t i = 0; i < d->seg_count; ++i) {
        iov[i].iov_base = d->ds[i].addr;
        iov[i].iov_len = d->ds[i].length;
        total += d->ds[i].length;
        local_ok = vipl_ofi_local(nic, &d->ds[i], &desc[i]) && local_ok;
    }
    if ((inl && (VIPL_CONTROL_OP_SEND != op || total > nic->super.attrs.max_inline)) ||
        (imm && VIPL_CONTROL_OP_RDMAREAD == op) || op > VIPL_CONTROL_OP_RDMAREAD ||
        total > nic->super.attrs.max_transfer_size) {
        return VIPL_INVALID_PARAMETER;
    }
    pthread_mutex_lock(&vi->lock);
    if (VIPL_STATE_CONNECTED != vi->state) {
        pthread_mutex_unlock(&vi->lock);
        return VIPL_INVALID_STATE;
    }
    d->status = 0;
    d->prov_ = 0;
    d->length = (uint32_t) total;
    if (!local_ok && !inl) {
        /* VIA: a local protection error completes the descriptor */
        d->status = VIPL_STATUS_DONE | VIPL_STATUS_PROTECTION_ERROR;
        vipl_desc_push(&vi->sdone_head, &vi->sdone_tail, d);
        pthread_mutex_unlock(&vi->lock);
        return VIPL_SUCCESS;
    }
    if (imm) {
        flags |= FI_REMOTE_CQ_DATA;
    }
    if (VIPL_CONTROL_OP_SEND == op) {
        struct fi_msg msg;

        memset(&msg, 0, sizeof(msg));
        msg.msg_iov = iov;
        msg.desc = desc;
        msg.iov_count = d->seg_count;
        msg.context = d;
        msg.data = d->imm_data;
        /* after an earlier send's completion it would complete first */
        at_once = inl && vi->selective && 0 == vi->sends_at_fi;
        if (at_once) {
            flags &= ~(uint64_t) FI_COMPLETION;
        }
        ret = fi_sendmsg(vi->ep, &msg, flags | (inl ? FI_INJECT : 0));
    } else {
        struct fi_rma_iov rma = {
            .addr = d->remote_addr, .len = total, .key = (uint64_t) (d->remote_handle >> 32)};
        struct fi_msg_rma msg;

        memset(&msg, 0, sizeof(msg));
        msg.msg_iov = iov;
        msg.desc = desc;
        msg.iov_count = d->seg_count;
        msg.rma_iov = &rma;
        msg.rma_iov_count = 1;
        msg.context = d;
        msg.data = d->imm_data;
        /* a write completes once its data is placed at the target (the
         * BTL's btl_flush relies on it: osc's puts are visible after it) */
        ret = VIPL_CONTROL_OP_RDMAWRITE == op
            ? fi_writemsg(vi->ep, &msg, flags | FI_DELIVERY_COMPLETE)
            : fi_readmsg(vi->ep, &msg, flags);
    }
    if (-FI_EAGAIN == ret) {
        /* the queue is full until completions are read */
        vipl_ofi_poll_vi(vi);
        pthread_mutex_unlock(&vi->lock);
        return VIPL_ERROR_RESOURCE;
    }
    if (0 != ret) {
        vipl_ofi_fail_locked(vi, VIPL_VIERR_PEER_GONE);
        pthread_mutex_unlock(&vi->lock);
        return VIPL_INVALID_STATE;
    }
    if (at_once) {
        /* injected: the buffer is ours again, the descriptor done */
        d->status = VIPL_STATUS_DONE;
        vipl_desc_push(&vi->sdone_head, &vi->sdone_tail, d);
    } else {
        ++vi->sends_at_fi;
    }
    pthread_mutex_unlock(&vi->lock);
    return VIPL_SUCCESS;
}

/* a send without a descriptor (vipl_post_inline): fi_injectdata, which
 * makes no completion at all */
vipl_return_t vipl_ofi_post_inline(vipl_vi_t *base, const void *buf, uint32_t len, uint32_t imm)
{
    vipl_ofi_vi_t *vi = (vipl_ofi_vi_t *) base;
    vipl_return_t rc = VIPL_SUCCESS;
    ssize_t ret;

    if (len > vi->nic->super.attrs.max_inline) {
        return VIPL_INVALID_PARAMETER;
    }
    pthread_mutex_lock(&vi->lock);
    if (VIPL_STATE_CONNECTED != vi->state) {
        pthread_mutex_unlock(&vi->lock);
        return VIPL_INVALID_STATE;
    }
    ret = fi_injectdata(vi->ep, buf, len, imm, 0);
    if (-FI_EAGAIN == ret) {
        vipl_ofi_poll_vi(vi);
        rc = VIPL_ERROR_RESOURCE;
    } else if (0 != ret) {
        vipl_ofi_fail_locked(vi, VIPL_VIERR_PEER_GONE);
        rc = VIPL_INVALID_STATE;
    }
    pthread_mutex_unlock(&vi->lock);
    return rc;
}

/* under the VI's lock: a receive descriptor's buffer posted at
 * libfabric (its endpoint exists) */
int vipl_ofi_fi_recv(vipl_ofi_vi_t *vi, vipl_desc_t *d)
{
    struct iovec iov = {.iov_base = d->ds[0].addr, .iov_len = d->ds[0].length};
    void *desc = NULL;
    struct fi_msg msg;
    int ret;

    (void) vipl_ofi_local(vi->nic, &d->ds[0], &desc);
    memset(&msg, 0, sizeof(msg));
    msg.msg_iov = &iov;
    msg.desc = &desc;
    msg.iov_count = 1;
    msg.context = d;
    ret = (int) fi_recvmsg(vi->ep, &msg, FI_COMPLETION);
    if (0 == ret) {
        d->prov_ |= VIPL_OFI_AT_FI;
    }
    return ret;
}

vipl_return_t vipl_ofi_post_recv(vipl_vi_t *base, vipl_desc_t *d)
{
    vipl_ofi_vi_t *vi = (vipl_ofi_vi_t *) base;
    void *desc = NULL;

    if (NULL == d || 1 != d->seg_count || !vipl_ofi_local(vi->nic, &d->ds[0], &desc)) {
        return VIPL_INVALID_PARAMETER;
    }
    pthread_mutex_lock(&vi->lock);
    if (VIPL_STATE_ERROR == vi->state) {
        pthread_mutex_unlock(&vi->lock);
        return VIPL_INVALID_STATE;
    }
    if ((d->prov_ & VIPL_OFI_RECV) && (d->prov_ & VIPL_OFI_LENT)) {
        /* lent to a write notice: its buffer is still posted, or its
         * message waits in the held queue */
        d->prov_ &= ~VIPL_OFI_LENT;
        d->status = 0;
        vipl_ofi_release_held(vi);
        pthread_mutex_unlock(&vi->lock);
        return VIPL_SUCCESS;
    }
    if (vi->ring_count == vi->recv_depth) {
        pthread_mutex_unlock(&vi->lock);
        return VIPL_ERROR_RESOURCE;
    }
    d->status = 0;
    d->length = 0;
    d->prov_ = VIPL_OFI_RECV;
    if (NULL != vi->ep && 0 != vipl_ofi_fi_recv(vi, d)) {
        d->prov_ = 0;
        pthread_mutex_unlock(&vi->lock);
        return VIPL_ERROR_RESOURCE;
    }
    vi->ring[(vi->ring_head + vi->ring_count) % vi->recv_depth] = d;
    ++vi->ring_count;
    pthread_mutex_unlock(&vi->lock);
    return VIPL_SUCCESS;
}

/* an empty done queue reads the CQ, unless the group's poll (progress)
 * read it since the last such call: the send completions that read
 * found are queued already, and another fi_cq_read costs the tcp
 * provider an epoll_wait for nothing (progress reaps sends right after
 * it polled for receives) */
static void vipl_ofi_poll_cb(void *arg)
{
    vipl_ofi_vi_t *vi = arg;

    if (vi->cq_fresh) {
        vi->cq_fresh = false;
        return;
    }
    vipl_ofi_poll_vi(vi);
}

/* VipSendDone and VipRecvDone: the head of one of the VI's done queues */
static vipl_return_t vipl_ofi_done(vipl_ofi_vi_t *vi, bool recv, vipl_desc_t **dp)
{
    vipl_return_t rc;

    pthread_mutex_lock(&vi->lock);
    rc = recv ? vipl_done_take(&vi->rdone_head, &vi->rdone_tail, vipl_ofi_poll_cb, vi, dp)
              : vipl_done_take(&vi->sdone_head, &vi->sdone_tail, vipl_ofi_poll_cb, vi, dp);
    pthread_mutex_unlock(&vi->lock);
    return rc;
}

vipl_return_t vipl_ofi_send_done(vipl_vi_t *base, vipl_desc_t **dp)
{
    return vipl_ofi_done((vipl_ofi_vi_t *) base, false, dp);
}

vipl_return_t vipl_ofi_recv_done(vipl_vi_t *base, vipl_desc_t **dp)
{
    return vipl_ofi_done((vipl_ofi_vi_t *) base, true, dp);
}

/* every VI of the group is read (the provider's progress), the first one
 * with a receive completion is reported.  The call after one that
 * reported a completion reads no CQ, it only reports what the last read
 * left queued: a progress loop that just delivered a message returns
 * (and the reply goes out) without another fi_cq_read, which costs the
 * tcp provider a poll() and the read of its signal pipe; the next call
 * reads again */
vipl_return_t vipl_ofi_cq_done(vipl_cq_t *base, vipl_vi_t **vip, bool *is_recv)
{
    vipl_ofi_cq_t *cq = (vipl_ofi_cq_t *) base;
    vipl_ofi_nic_t *nic = (vipl_ofi_nic_t *) base->nic;
    vipl_ofi_vi_t *found = NULL;
    uint32_t count;

    pthread_mutex_lock(&nic->lock);
    if (nic->connecting > 0 || 0 == (++cq->polls % VIPL_OFI_EQ_EVERY)) {
        vipl_ofi_poll_eq(nic);
    }
    count = cq->count;
    for (uint32_t i = 0; i < count; ++i) {
        vipl_ofi_vi_t *vi = cq->vis[(cq->next + i) % count];
        bool ready;

        pthread_mutex_lock(&vi->lock);
        if (NULL == vi->rdone_head && !cq->reported) {
            vipl_ofi_poll_vi(vi);
            vi->cq_fresh = true;
        }
        ready = NULL != vi->rdone_head;
        pthread_mutex_unlock(&vi->lock);
        if (ready && NULL == found) {
            found = vi;
            cq->next = (cq->next + i + 1) % count;
        }
    }
    cq->reported = NULL != found;
    pthread_mutex_unlock(&nic->lock);
    if (NULL == found) {
        return VIPL_NOT_DONE;
    }
    *vip = &found->super;
    *is_recv = true;
    return VIPL_SUCCESS;
}
