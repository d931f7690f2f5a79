/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * sci_ofi_write.c: the writes of the ofi provider's write-through
 * mappings (SCIMemWrite / SCIFlush): a flush of shadow bytes, a publish
 * (the bytes and, as remote CQ data, the word the owner stores once they
 * landed), and a publish whose tail comes from the caller's buffer
 * instead of the shadow, so that a ring slot's payload goes out without
 * being copied into the shadow first (completed through sci_dma_reap).
 * All go through the one endpoint with FI_ORDER_WAW: they land in issue
 * order.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include "sci_ofi_int.h"
#include "tc_atomic.h"

/* offset..offset+len of the shadow, then buflen bytes of buf, to the
 * owner in one write (landing from offset on), with the remote CQ data
 * `data` when with_data.  ctx NULL: no completion (errors still reach the
 * CQ); the bytes stay until the owner hands the ring slot back, which is
 * after they landed.  Else the write's completion comes to ctx. */
static sci_error_t sci_ofi_write(sci_remote_segment_t *rseg, size_t offset, size_t len,
                                 const void *buf, size_t buflen, int with_data, uint64_t data,
                                 sci_ofi_ctx_t *ctx)
{
    sci_desc_t *sd = rseg->sd;
    sci_ofi_node_t *n = rseg->node;
    const uint8_t *src = rseg->shadow + offset;
    ssize_t r;

    for (;;) {
        if (SCI_OFI_NODE_OK != tc_atomic_load_relaxed(&n->state)) {
            /* the owner left or failed: the sequence check reports it */
            return SCI_ERR_TRANSFER_FAILED;
        }
        if (NULL == ctx && 0 == buflen && len <= sd->inject_size) {
            r = with_data
                ? fi_inject_writedata(sd->f.ep, src, len, data, n->fa, rseg->raddr + offset,
                                      rseg->key)
                : fi_inject_write(sd->f.ep, src, len, n->fa, rseg->raddr + offset, rseg->key);
        } else {
            struct iovec iov[2] = {{.iov_base = (void *) src, .iov_len = len},
                                   {.iov_base = (void *) buf, .iov_len = buflen}};
            struct fi_rma_iov riov = {
                .addr = rseg->raddr + offset, .len = len + buflen, .key = rseg->key};
            struct fi_msg_rma msg = {.msg_iov = 0 == len ? iov + 1 : iov,
                                     .iov_count = (0 != len) + (0 != buflen),
                                     .addr = n->fa,
                                     .rma_iov = &riov,
                                     .rma_iov_count = 1,
                                     .context = NULL != ctx ? ctx : &n->wctx,
                                     .data = data};

            r = fi_writemsg(sd->f.ep, &msg,
                            (with_data ? FI_REMOTE_CQ_DATA : 0) |
                                (NULL != ctx ? FI_COMPLETION : 0));
        }
        if (-FI_EAGAIN != r) {
            break;
        }
        (void) sci_ofi_progress(sd);
    }
    if (0 != r) {
        sci_ofi_node_fail(n);
        return SCI_ERR_TRANSFER_FAILED;
    }
    return SCI_ERR_OK;
}

sci_error_t sci_ofi_flush(sci_remote_segment_t *rseg, size_t offset, size_t len)
{
    if (offset > rseg->size || len > rseg->size - offset) {
        return SCI_ERR_OUT_OF_RANGE;
    }
    return 0 == len ? SCI_ERR_OK : sci_ofi_write(rseg, offset, len, NULL, 0, 0, 0, NULL);
}

/* the remote CQ data that names the word at word_offset with its value
 * in the shadow: 0, or NOT_SUPPORTED when the provider carries no CQ data
 * or the 64 bits cannot name the word */
static sci_error_t sci_ofi_publish_word(sci_remote_segment_t *rseg, size_t word_offset,
                                        uint64_t *data)
{
    if (!rseg->sd->cq_data ||
        0 !=
            sci_ofi_word_encode(rseg->index, word_offset,
                                tc_atomic_load_relaxed((uint64_t *) (rseg->shadow + word_offset)),
                                data)) {
        return SCI_ERR_NOT_SUPPORTED;
    }
    return SCI_ERR_OK;
}

/* one write for the bytes and the word: the word rides as remote CQ data
 * and the owner stores it once the bytes are in its memory.  Without CQ
 * data, or for a word that the 64 bits cannot name, NOT_SUPPORTED: the
 * device layer then sends two flushes in order. */
sci_error_t sci_ofi_flush_publish(sci_remote_segment_t *rseg, size_t offset, size_t len,
                                  size_t word_offset)
{
    uint64_t data;

    if (offset > rseg->size || len > rseg->size - offset || word_offset > rseg->size ||
        sizeof(uint64_t) > rseg->size - word_offset) {
        return SCI_ERR_OUT_OF_RANGE;
    }
    if (0 == len || SCI_ERR_OK != sci_ofi_publish_word(rseg, word_offset, &data)) {
        return SCI_ERR_NOT_SUPPORTED;
    }
    return sci_ofi_write(rseg, offset, len, NULL, 0, 1, data, NULL);
}

/* the publish with the slot's tail from buf: one write of two pieces
 * (shadow, then buf) with the word as remote CQ data and a completion,
 * which puts the cookie on the done list once buf was read */
sci_error_t sci_ofi_flush_publish_from(sci_remote_segment_t *rseg, size_t offset, size_t len,
                                       const void *buf, size_t buflen, size_t word_offset,
                                       void *cookie)
{
    sci_ofi_async_t *op;
    sci_error_t err;
    uint64_t data;

    if (offset > rseg->size || len > rseg->size - offset || buflen > rseg->size - offset - len ||
        word_offset > rseg->size || sizeof(uint64_t) > rseg->size - word_offset ||
        (NULL == buf && 0 != buflen)) {
        return SCI_ERR_OUT_OF_RANGE;
    }
    if (0 == len + buflen || SCI_ERR_OK != sci_ofi_publish_word(rseg, word_offset, &data)) {
        return SCI_ERR_NOT_SUPPORTED;
    }
    op = malloc(sizeof(*op) + sizeof(sci_ofi_ctx_t));
    if (NULL == op) {
        return SCI_ERR_NOSPC;
    }
    memset(op, 0, sizeof(*op) + sizeof(sci_ofi_ctx_t));
    op->cookie = cookie;
    op->remaining = 1;
    op->ctx[0].kind = SCI_OFI_CTX_ASYNC;
    op->ctx[0].node = rseg->node;
    op->ctx[0].op = op;
    err = sci_ofi_write(rseg, offset, len, buf, buflen, 1, data, op->ctx);
    if (SCI_ERR_OK != err) {
        /* nothing went out: the caller hears it now */
        free(op);
        return err;
    }
    return SCI_ERR_OK;
}

void sci_ofi_node_lost(sci_desc_t *sd, uint32_t node_id)
{
    /* nodes are only ever added (at the head), never freed before close:
     * a walk from another thread sees a consistent list */
    for (sci_ofi_node_t *n = tc_atomic_load_acquire(&sd->nodes); NULL != n; n = n->next) {
        if (n->node_id == node_id) {
            sci_ofi_node_fail(n);
        }
    }
}
