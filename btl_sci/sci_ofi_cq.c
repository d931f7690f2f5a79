/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * sci_ofi_cq.c: the ofi provider's completion handling: the one CQ read
 * by sci_progress and by every wait, the receives that bring a node's
 * "bye" or its offer of a segment, the words a publish stores once its bytes landed (remote CQ
 * data), the failures of a node that error completions report, and the
 * pieces of asynchronous transfers put on the done list.
 */

#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

#include "sci_ofi_int.h"
#include "tc_atomic.h"

void sci_ofi_node_fail(sci_ofi_node_t *node)
{
    if (NULL != node && SCI_OFI_NODE_OK == tc_atomic_load_relaxed(&node->state)) {
        tc_atomic_store_relaxed(&node->state, (int) SCI_OFI_NODE_FAILED);
    }
}

sci_ofi_node_t *sci_ofi_node_by_id(sci_desc_t *sd, uint32_t node_id)
{
    sci_ofi_node_t *n;

    for (n = sd->nodes; NULL != n; n = n->next) {
        if (n->node_id == node_id) {
            break;
        }
    }
    return n;
}

sci_ofi_node_t *sci_ofi_node_by_name(sci_desc_t *sd, uint64_t name)
{
    sci_ofi_node_t *n;

    for (n = sd->nodes; NULL != n; n = n->next) {
        if (n->name == name) {
            break;
        }
    }
    return n;
}

/* an offer (a segment made for us by a node that may be unknown yet): on
 * the node when it is known, else kept until sci_import_node_as; either
 * way reported once by sci_take_offer */
static void sci_ofi_offer_received(sci_desc_t *sd, const sci_ofi_offer_t *o)
{
    sci_ofi_pending_t *p;

    pthread_mutex_lock(&sd->lock);
    for (p = sd->pending; NULL != p; p = p->next) {
        if (p->name == o->name) {
            break; /* a second offer from one node: the first stays */
        }
    }
    if (NULL == p && NULL != (p = calloc(1, sizeof(*p)))) {
        sci_ofi_node_t *n = sci_ofi_node_by_name(sd, o->name);

        p->name = o->name;
        p->seg = o->seg;
        p->next = sd->pending;
        sd->pending = p;
        if (NULL != n && !n->has_offer) {
            n->offer = o->seg;
            tc_atomic_store_release(&n->has_offer, 1);
        }
    }
    pthread_mutex_unlock(&sd->lock);
}

void sci_ofi_repost(sci_desc_t *sd, int i)
{
    struct iovec iov = {.iov_base = sd->rbuf[i], .iov_len = SCI_OFI_RECV_BYTES};
    struct fi_msg msg = {
        .msg_iov = &iov, .iov_count = 1, .addr = FI_ADDR_UNSPEC, .context = &sd->rctx[i]};

    sd->rctx[i].kind = SCI_OFI_CTX_RECV;
    /* completions are selective: a receive asks for its own */
    (void) fi_recvmsg(sd->f.ep, &msg, FI_COMPLETION);
}

/* a piece of an asynchronous transfer ended (or was never posted): the
 * last one puts the transfer on the done list for sci_dma_reap */
void sci_ofi_async_piece_done(sci_desc_t *sd, sci_ofi_async_t *op, int err)
{
    if (0 != err) {
        int none = 0;

        (void) tc_atomic_cswap(&op->err, &none, err);
    }
    if (0 == tc_atomic_add_fetch(&op->remaining, -1)) {
        pthread_mutex_lock(&sd->done_lock);
        op->next = sd->done;
        tc_atomic_store_relaxed(&sd->done, op);
        pthread_mutex_unlock(&sd->done_lock);
    }
}

static void sci_ofi_complete(sci_desc_t *sd, sci_ofi_ctx_t *ctx, int err, size_t len)
{
    if (NULL == ctx) {
        return;
    }
    switch (ctx->kind) {
    case SCI_OFI_CTX_RECV: {
        int i = (int) (ctx - sd->rctx);
        uint64_t who;
        sci_ofi_offer_t offer;

        if (0 == err && 0 == sci_ofi_offer_parse(sd->rbuf[i], len, &offer)) {
            sci_ofi_offer_received(sd, &offer);
        } else if (0 == err && 0 == sci_ofi_bye_parse(sd->rbuf[i], len, &who)) {
            sci_ofi_node_t *n;

            pthread_mutex_lock(&sd->lock);
            n = sci_ofi_node_by_name(sd, who);
            pthread_mutex_unlock(&sd->lock);
            if (NULL != n) {
                tc_atomic_store_relaxed(&n->state, (int) SCI_OFI_NODE_BYE);
            }
        }
        if (-FI_ECANCELED != err) {
            sci_ofi_repost(sd, i);
        }
        break;
    }
    case SCI_OFI_CTX_NODE:
        if (0 != err) {
            sci_ofi_node_fail(ctx->node);
        }
        break;
    case SCI_OFI_CTX_ASYNC:
        sci_ofi_async_piece_done(sd, ctx->op, err);
        break;
    case SCI_OFI_CTX_PROBE:
        /* a probe the provider cancelled says nothing: the next check
         * sends another */
        if (0 != err && -FI_ECANCELED != err) {
            sci_ofi_node_fail(ctx->node);
        }
        ctx->err = err;
        tc_atomic_store_release(&ctx->done, 1);
        break;
    default: /* DMA, BYE */
        if (0 != err) {
            sci_ofi_node_fail(ctx->node);
        }
        ctx->err = err;
        tc_atomic_store_release(&ctx->done, 1);
        break;
    }
}

/* a remote word landed (sci_flush_publish): the bytes before it are in
 * our memory, the word may follow.  Everything in it is the peer's: the
 * index and the offset are checked against our table and the segment. */
static void sci_ofi_remote_word(sci_desc_t *sd, uint64_t data)
{
    sci_local_segment_t *seg = NULL;
    uint64_t offset;
    uint32_t index, low;

    sci_ofi_word_decode(data, &index, &offset, &low);
    pthread_mutex_lock(&sd->lock);
    if (index < sd->nsegtab) {
        seg = sd->segtab[index];
    }
    if (NULL != seg && offset <= seg->size - sizeof(uint64_t)) {
        uint64_t *word = (uint64_t *) ((uint8_t *) seg->mem + offset);

        /* under the lock: two threads that read the CQ never store the
         * words of one segment in the wrong order */
        tc_atomic_store_release(word, sci_ofi_word_advance(tc_atomic_load_relaxed(word), low));
    }
    pthread_mutex_unlock(&sd->lock);
}

int sci_ofi_progress(sci_desc_t *sd)
{
    struct fi_cq_data_entry ev[16];
    int total = 0;

    for (;;) {
        ssize_t n = tc_ofi_cq_read(&sd->f.guard, sd->f.cq, ev, 16);

        if (n > 0) {
            for (ssize_t i = 0; i < n; ++i) {
                if (ev[i].flags & FI_REMOTE_CQ_DATA) {
                    sci_ofi_remote_word(sd, ev[i].data);
                    if (!(ev[i].flags & FI_RECV)) {
                        continue;
                    }
                }
                sci_ofi_complete(sd, ev[i].op_context, 0, ev[i].len);
            }
            total += (int) n;
            if (n < 16) {
                /* the queue is most likely empty: one more read would cost
                 * a poll of every socket before the caller sees this */
                break;
            }
            continue;
        }
        if (-FI_EAVAIL == n) {
            struct fi_cq_err_entry e;

            memset(&e, 0, sizeof(e));
            if (tc_ofi_cq_readerr(&sd->f.guard, sd->f.cq, &e) > 0) {
                sci_ofi_complete(sd, e.op_context, -(int) (e.err ? e.err : FI_EIO), 0);
                ++total;
                continue;
            }
        }
        break;
    }
    return total;
}

/* wait for one operation of ours, driving the CQ.  A software provider
 * moves the bytes of a read or a delivery-complete write only while the
 * peer's process runs its progress: when the peer shares our cores, a
 * spinning wait takes the time slice it needs (an 8-byte fi_read measured
 * 570-750 us spinning, 320 us yielding; an 8-byte delivery-complete write
 * 790-960 us against 56 us, docs/btl_sci.md section 8), so after a few
 * empty polls the wait yields */
int sci_ofi_wait(sci_desc_t *sd, sci_ofi_ctx_t *ctx)
{
    unsigned empty = 0;

    while (!tc_atomic_load_acquire(&ctx->done)) {
        if (sci_ofi_progress(sd) > 0) {
            empty = 0;
        } else if (++empty >= SCI_OFI_SPIN_POLLS) {
            sched_yield();
        }
    }
    return ctx->err;
}
