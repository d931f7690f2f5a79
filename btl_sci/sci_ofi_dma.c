/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * sci_ofi_dma.c: the ofi provider's DMA: queues of transfers as
 * fi_readmsg / fi_writemsg with delivery completion, in pieces of
 * SCI_OFI_DMA_PIECE bytes, waited for on the CQ; and the asynchronous
 * transfers of sci_dma_post, reaped by sci_dma_reap.  Every remote range
 * comes from a peer's handle and is checked against it first.
 */

#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include "sci_ofi_int.h"
#include "tc_atomic.h"

/* a transfer's completion error as the DMA engine reports it: refused by
 * the target's registration, or failed */
static sci_error_t sci_ofi_dma_status(int err)
{
    if (0 == err) {
        return SCI_ERR_OK;
    }
    return -FI_EACCES == err || -FI_EINVAL == err ? SCI_ERR_OUT_OF_RANGE : SCI_ERR_TRANSFER_FAILED;
}

/* ---- DMA ----------------------------------------------------------------- */

sci_error_t sci_ofi_create_dma_queue(sci_desc_t *sd, unsigned max_entries, sci_dma_queue_t **dqp)
{
    sci_dma_queue_t *q;

    if (NULL == dqp || 0 == max_entries || max_entries > 4096) {
        return SCI_ERR_ILLEGAL_PARAMETER;
    }
    q = calloc(1, sizeof(*q));
    if (NULL == q) {
        return SCI_ERR_NOSPC;
    }
    q->ctx = calloc(max_entries, sizeof(*q->ctx));
    if (NULL == q->ctx) {
        free(q);
        return SCI_ERR_NOSPC;
    }
    q->obj.ops = &sci_ofi_ops;
    q->sd = sd;
    q->max_entries = max_entries;
    pthread_mutex_init(&q->lock, NULL);
    *dqp = q;
    return SCI_ERR_OK;
}

void sci_ofi_remove_dma_queue(sci_dma_queue_t *dq)
{
    (void) sci_ofi_progress(dq->sd);
    pthread_mutex_destroy(&dq->lock);
    free(dq->ctx);
    free(dq);
}

/* the checks of every transfer (the handle came from a peer: the range
 * inside what it registered) and the node it names */
static sci_error_t sci_ofi_dma_check(sci_desc_t *sd, int direction, void *local_addr,
                                     const sci_mem_handle_t *remote, uint64_t remote_addr,
                                     size_t len, sci_ofi_node_t **np)
{
    if (NULL == remote || (NULL == local_addr && 0 != len) ||
        (SCI_DMA_READ != direction && SCI_DMA_WRITE != direction)) {
        return SCI_ERR_ILLEGAL_PARAMETER;
    }
    /* a test of key_node alone took node 0's handles for keyless ones:
     * every get from node 0 failed and ob1 fell back to the rings */
    if (!(remote->key_flags & SCI_MEM_HANDLE_KEY) || remote->base < remote->key_base ||
        remote_addr < remote->base || remote_addr - remote->base > remote->len ||
        len > remote->len - (remote_addr - remote->base)) {
        return SCI_ERR_OUT_OF_RANGE;
    }
    pthread_mutex_lock(&sd->lock);
    *np = sci_ofi_node_by_id(sd, remote->key_node);
    pthread_mutex_unlock(&sd->lock);
    return NULL == *np ? SCI_ERR_ILLEGAL_PARAMETER : SCI_ERR_OK;
}

/* post one piece (checked) with its context */
static sci_error_t sci_ofi_dma_issue(sci_desc_t *sd, sci_ofi_node_t *n, int direction,
                                     void *local_addr, const sci_mem_handle_t *remote,
                                     uint64_t remote_addr, size_t len, sci_ofi_ctx_t *ctx)
{
    struct iovec iov = {.iov_base = local_addr, .iov_len = len};
    struct fi_rma_iov riov = {.addr = sd->virt_addr ? remote_addr : remote_addr - remote->key_base,
                              .len = len,
                              .key = remote->key};
    struct fi_msg_rma msg = {.msg_iov = &iov,
                             .iov_count = 1,
                             .addr = n->fa,
                             .rma_iov = &riov,
                             .rma_iov_count = 1,
                             .context = ctx};
    ssize_t r;

    for (;;) {
        if (SCI_OFI_NODE_FAILED == tc_atomic_load_relaxed(&n->state)) {
            return SCI_ERR_TRANSFER_FAILED;
        }
        r = SCI_DMA_READ == direction
            ? fi_readmsg(sd->f.ep, &msg, FI_COMPLETION)
            : fi_writemsg(sd->f.ep, &msg, FI_COMPLETION | FI_DELIVERY_COMPLETE);
        if (-FI_EAGAIN != r) {
            break;
        }
        (void) sci_ofi_progress(sd);
    }
    return 0 != r ? sci_ofi_err((int) r) : SCI_ERR_OK;
}

sci_error_t sci_ofi_dma_enqueue(sci_dma_queue_t *dq, int direction, void *local_addr,
                                const sci_mem_handle_t *remote, uint64_t remote_addr, size_t len)
{
    sci_desc_t *sd = dq->sd;
    sci_ofi_ctx_t *ctx;
    sci_ofi_node_t *n;
    sci_error_t err;

    err = sci_ofi_dma_check(sd, direction, local_addr, remote, remote_addr, len, &n);
    if (SCI_ERR_OK != err) {
        return err;
    }
    if (dq->count >= dq->max_entries) {
        return SCI_ERR_BUSY;
    }
    if (0 == len) {
        return SCI_ERR_OK;
    }
    ctx = dq->ctx + dq->count;
    memset(ctx, 0, sizeof(*ctx));
    ctx->kind = SCI_OFI_CTX_DMA;
    ctx->node = n;
    err = sci_ofi_dma_issue(sd, n, direction, local_addr, remote, remote_addr, len, ctx);
    if (SCI_ERR_OK == err) {
        dq->count++;
    }
    return err;
}

/* SCIStartDmaTransfer with a callback: every piece posted now, the
 * transfer reaped by sci_dma_reap once the last one completed */
sci_error_t sci_ofi_dma_post(sci_desc_t *sd, int direction, void *local_addr,
                             const sci_mem_handle_t *remote, uint64_t remote_addr, size_t len,
                             void *cookie)
{
    size_t npieces = 0 == len ? 0 : (len - 1) / SCI_OFI_DMA_PIECE + 1;
    sci_ofi_async_t *op;
    sci_ofi_node_t *n;
    sci_error_t err;
    size_t i;

    err = sci_ofi_dma_check(sd, direction, local_addr, remote, remote_addr, len, &n);
    if (SCI_ERR_OK != err) {
        return err;
    }
    op = calloc(1, sizeof(*op) + (npieces ? npieces : 1) * sizeof(sci_ofi_ctx_t));
    if (NULL == op) {
        return SCI_ERR_NOSPC;
    }
    op->cookie = cookie;
    op->remaining = (int) npieces + 1;
    for (i = 0; i < npieces; ++i) {
        size_t off = i * SCI_OFI_DMA_PIECE;
        size_t plen = len - off < SCI_OFI_DMA_PIECE ? len - off : SCI_OFI_DMA_PIECE;

        op->ctx[i].kind = SCI_OFI_CTX_ASYNC;
        op->ctx[i].node = n;
        op->ctx[i].op = op;
        err = sci_ofi_dma_issue(sd, n, direction, (char *) local_addr + off, remote,
                                remote_addr + off, plen, op->ctx + i);
        if (SCI_ERR_OK != err) {
            break;
        }
    }
    if (0 == i && SCI_ERR_OK != err) {
        /* nothing went out: the caller hears it now */
        free(op);
        return err;
    }
    if (i < npieces) {
        /* the pieces never posted end here, with the error */
        int none = 0;

        (void) tc_atomic_cswap(&op->err, &none, SCI_ERR_OUT_OF_RANGE == err ? -FI_EINVAL : -FI_EIO);
        (void) tc_atomic_add_fetch(&op->remaining, -(int) (npieces - i));
    }
    sci_ofi_async_piece_done(sd, op, 0); /* the poster's hold */
    return SCI_ERR_OK;
}

int sci_ofi_dma_reap(sci_desc_t *sd, void **cookies, sci_error_t *status, int max)
{
    sci_ofi_async_t *list;
    int count = 0;

    if (NULL == tc_atomic_load_relaxed(&sd->done)) {
        return 0;
    }
    pthread_mutex_lock(&sd->done_lock);
    list = sd->done;
    while (NULL != list && count < max) {
        sci_ofi_async_t *op = list;
        int err = tc_atomic_load_relaxed(&op->err);

        list = op->next;
        cookies[count] = op->cookie;
        status[count] = sci_ofi_dma_status(err);
        free(op);
        ++count;
    }
    tc_atomic_store_relaxed(&sd->done, list);
    pthread_mutex_unlock(&sd->done_lock);
    return count;
}

sci_error_t sci_ofi_dma_start(sci_dma_queue_t *dq)
{
    (void) dq; /* posted at enqueue */
    return SCI_ERR_OK;
}

sci_error_t sci_ofi_dma_wait(sci_dma_queue_t *dq)
{
    sci_error_t first = SCI_ERR_OK;

    for (unsigned i = 0; i < dq->count; ++i) {
        int err = sci_ofi_wait(dq->sd, dq->ctx + i);

        if (0 != err && SCI_ERR_OK == first) {
            first = sci_ofi_dma_status(err);
        }
    }
    dq->count = 0;
    return first;
}

sci_error_t sci_ofi_dma_queue_share(sci_dma_queue_t *dq)
{
    dq->shared = 1;
    return SCI_ERR_OK;
}

sci_error_t sci_ofi_dma_transfer(sci_dma_queue_t *dq, int direction, void *local_addr,
                                 const sci_mem_handle_t *remote, uint64_t remote_addr, size_t len)
{
    sci_error_t err;

    if (dq->shared) {
        pthread_mutex_lock(&dq->lock);
    }
    /* in pieces, several in flight: one 4 MiB RMA through tcp;ofi_rxm
     * moved half of what eight of 512 KiB did (docs/btl_sci.md) */
    do {
        err = SCI_ERR_OK;
        while (SCI_ERR_OK == err && dq->count < dq->max_entries && (len > 0 || 0 == dq->count)) {
            size_t n = len < SCI_OFI_DMA_PIECE ? len : SCI_OFI_DMA_PIECE;

            err = sci_ofi_dma_enqueue(dq, direction, local_addr, remote, remote_addr, n);
            local_addr = (char *) local_addr + n;
            remote_addr += n;
            len -= n;
            if (0 == n) {
                break;
            }
        }
        if (SCI_ERR_OK == err) {
            err = sci_ofi_dma_wait(dq);
        } else {
            (void) sci_ofi_dma_wait(dq);
        }
    } while (SCI_ERR_OK == err && len > 0);
    if (dq->shared) {
        pthread_mutex_unlock(&dq->lock);
    }
    return err;
}

sci_error_t sci_ofi_dma_probe(sci_desc_t *sd)
{
    (void) sd;
    return SCI_ERR_OK;
}
