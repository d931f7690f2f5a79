/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * sci_ofi_cm.c: the ofi provider's address exchange and connections:
 * the directory a node exports (its endpoint address and available
 * segments) and imports from others, remote segments looked up in it and
 * mapped as local shadows, the offers of a segment to a node whose
 * directory lists none for us (a process of another job), and the
 * sequences that report a node's state (a bye, a failure, or a probe
 * that went out).
 */

#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <rdma/fi_domain.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include "sci_ofi_int.h"
#include "tc_atomic.h"
#include "tc_mem.h"

/* ---- directory ----------------------------------------------------------- */

sci_error_t sci_ofi_export_directory(sci_desc_t *sd, void *buf, size_t buflen, size_t *len)
{
    sci_ofi_dir_hdr_t hdr;
    uint32_t nsegs = 0;
    size_t need, off;

    pthread_mutex_lock(&sd->lock);
    for (sci_local_segment_t *s = sd->segs; NULL != s; s = s->next) {
        nsegs += 0 != tc_atomic_load_acquire(&s->available);
    }
    need = sci_ofi_dir_size(sd->addrlen, nsegs);
    *len = need;
    if (0 == need || NULL == buf || buflen < need) {
        pthread_mutex_unlock(&sd->lock);
        return 0 == need ? SCI_ERR_ILLEGAL_PARAMETER : SCI_ERR_NOSPC;
    }
    memset(buf, 0, need);
    hdr.magic = SCI_OFI_DIR_MAGIC;
    hdr.version = SCI_OFI_DIR_VERSION;
    hdr.addrlen = (uint16_t) sd->addrlen;
    hdr.node_id = sd->node_id;
    hdr.nsegs = nsegs;
    memcpy(buf, &hdr, sizeof(hdr));
    memcpy((uint8_t *) buf + sizeof(hdr), sd->addr, sd->addrlen);
    off = sizeof(hdr) + ((sd->addrlen + 7) & ~(size_t) 7);
    for (sci_local_segment_t *s = sd->segs; NULL != s; s = s->next) {
        sci_ofi_dir_seg_t rec;

        if (!tc_atomic_load_acquire(&s->available)) {
            continue;
        }
        memset(&rec, 0, sizeof(rec));
        rec.segment_id = s->segment_id;
        rec.index = s->index;
        rec.size = s->size;
        rec.key = s->key;
        rec.addr = sd->virt_addr ? (uint64_t) (uintptr_t) s->mem : 0;
        memcpy((uint8_t *) buf + off, &rec, sizeof(rec));
        off += sizeof(rec);
    }
    pthread_mutex_unlock(&sd->lock);
    return SCI_ERR_OK;
}

sci_error_t sci_ofi_import_node(sci_desc_t *sd, uint32_t node_id, uint32_t dir_id, uint64_t name,
                                const void *buf, size_t len)
{
    sci_ofi_dir_view_t view;
    sci_ofi_node_t *n;
    fi_addr_t fa = FI_ADDR_NOTAVAIL;

    if (0 != sci_ofi_dir_parse(buf, len, &view) || view.node_id != dir_id) {
        return SCI_ERR_ILLEGAL_PARAMETER;
    }
    pthread_mutex_lock(&sd->lock);
    n = sci_ofi_node_by_id(sd, node_id);
    pthread_mutex_unlock(&sd->lock);
    if (NULL != n) {
        return SCI_ERR_OK; /* known already: the first directory stays */
    }
    n = calloc(1, sizeof(*n));
    if (NULL == n) {
        return SCI_ERR_NOSPC;
    }
    n->segs = calloc(view.nsegs ? view.nsegs : 1, sizeof(*n->segs));
    if (NULL == n->segs || 1 != fi_av_insert(sd->f.av, view.addr, 1, &fa, 0, NULL)) {
        free(n->segs);
        free(n);
        return SCI_ERR_ILLEGAL_PARAMETER;
    }
    for (uint32_t i = 0; i < view.nsegs; ++i) {
        sci_ofi_dir_seg(&view, i, n->segs + i);
    }
    n->nsegs = view.nsegs;
    n->node_id = node_id;
    n->name = name;
    n->fa = fa;
    n->wctx.kind = SCI_OFI_CTX_NODE;
    n->wctx.node = n;
    n->bctx.node = n;
    n->probe.kind = SCI_OFI_CTX_PROBE;
    n->probe.node = n;
    n->probe.done = 1;
    n->octx.kind = SCI_OFI_CTX_NODE;
    n->octx.node = n;
    pthread_mutex_lock(&sd->lock);
    if (NULL != sci_ofi_node_by_id(sd, node_id)) {
        /* another thread imported it meanwhile */
        pthread_mutex_unlock(&sd->lock);
        free(n->segs);
        free(n);
        return SCI_ERR_OK;
    }
    for (sci_ofi_pending_t *p = sd->pending; NULL != p; p = p->next) {
        if (p->name == name) {
            /* its offer came before we knew it */
            n->offer = p->seg;
            n->has_offer = 1;
            break;
        }
    }
    n->next = sd->nodes;
    tc_atomic_store_release(&sd->nodes, n);
    pthread_mutex_unlock(&sd->lock);
    return SCI_ERR_OK;
}

sci_error_t sci_ofi_offer_segment(sci_desc_t *sd, uint32_t node_id, sci_local_segment_t *seg)
{
    sci_ofi_node_t *n;
    struct iovec iov;
    struct fi_msg msg;
    ssize_t r;

    pthread_mutex_lock(&sd->lock);
    n = sci_ofi_node_by_id(sd, node_id);
    if (NULL == n || seg->sd != sd || 0 != n->our_offer.magic) {
        pthread_mutex_unlock(&sd->lock);
        return NULL == n || seg->sd != sd ? SCI_ERR_ILLEGAL_PARAMETER : SCI_ERR_OK;
    }
    memset(&n->our_offer, 0, sizeof(n->our_offer));
    n->our_offer.magic = SCI_OFI_OFFER_MAGIC;
    n->our_offer.name = sd->name;
    n->our_offer.seg.segment_id = seg->segment_id;
    n->our_offer.seg.index = seg->index;
    n->our_offer.seg.size = seg->size;
    n->our_offer.seg.key = seg->key;
    n->our_offer.seg.addr = sd->virt_addr ? (uint64_t) (uintptr_t) seg->mem : 0;
    pthread_mutex_unlock(&sd->lock);
    iov.iov_base = &n->our_offer;
    iov.iov_len = sizeof(n->our_offer);
    memset(&msg, 0, sizeof(msg));
    msg.msg_iov = &iov;
    msg.iov_count = 1;
    msg.addr = n->fa;
    msg.context = &n->octx;
    /* a completion only on error (the endpoint's selective completion);
     * the offer stays in the node until close */
    do {
        r = fi_sendmsg(sd->f.ep, &msg, 0);
        if (-FI_EAGAIN == r) {
            (void) sci_ofi_progress(sd);
        }
    } while (-FI_EAGAIN == r);
    return 0 == r ? SCI_ERR_OK : sci_ofi_err((int) r);
}

int sci_ofi_take_offer(sci_desc_t *sd, uint64_t *name)
{
    int found = 0;

    if (NULL == tc_atomic_load_acquire(&sd->pending)) {
        return 0;
    }
    pthread_mutex_lock(&sd->lock);
    for (sci_ofi_pending_t *p = sd->pending; NULL != p; p = p->next) {
        if (!p->taken) {
            p->taken = 1;
            *name = p->name;
            found = 1;
            break;
        }
    }
    pthread_mutex_unlock(&sd->lock);
    return found;
}

/* ---- remote segments ---------------------------------------------------- */

sci_error_t sci_ofi_connect_segment(sci_desc_t *sd, uint32_t node_id, uint32_t segment_id,
                                    sci_remote_segment_t **rsegp)
{
    const sci_ofi_dir_seg_t *found = NULL;
    sci_remote_segment_t *r;
    sci_ofi_node_t *n;

    if (NULL == rsegp) {
        return SCI_ERR_ILLEGAL_PARAMETER;
    }
    pthread_mutex_lock(&sd->lock);
    n = sci_ofi_node_by_id(sd, node_id);
    pthread_mutex_unlock(&sd->lock);
    if (NULL == n) {
        return SCI_ERR_NO_SUCH_SEGMENT;
    }
    if (SCI_OFFERED_SEGMENT == segment_id) {
        found = tc_atomic_load_acquire(&n->has_offer) ? &n->offer : NULL;
    }
    for (uint32_t i = 0; NULL == found && i < n->nsegs; ++i) {
        if (n->segs[i].segment_id == segment_id) {
            found = n->segs + i;
            break;
        }
    }
    if (NULL == found) {
        return SCI_ERR_NO_SUCH_SEGMENT;
    }
    if (SCI_OFI_NODE_OK != tc_atomic_load_relaxed(&n->state)) {
        return SCI_ERR_TRANSFER_FAILED;
    }
    if (found->size > ((uint64_t) 1 << 40)) {
        return SCI_ERR_OUT_OF_RANGE;
    }
    r = sci_obj_new(sizeof(*r), &sci_ofi_ops);
    if (NULL == r) {
        return SCI_ERR_NOSPC;
    }
    r->sd = sd;
    r->node = n;
    r->segment_id = segment_id;
    r->index = found->index;
    r->key = found->key;
    r->raddr = found->addr;
    r->size = found->size;
    r->shadow = sci_ofi_zalloc(sci_ofi_page_round((size_t) r->size));
    if (NULL == r->shadow) {
        free(r);
        return SCI_ERR_NOSPC;
    }
    (void) tc_mem_prefault(r->shadow, (size_t) r->size, &sd->prefault_left);
    if (0 == n->probe_key) {
        n->probe_key = r->key;
        n->probe_addr = r->raddr;
    }
    *rsegp = r;
    return SCI_ERR_OK;
}

void *sci_ofi_map_remote_segment(sci_remote_segment_t *rseg, size_t offset, size_t size)
{
    if (NULL == rseg || offset > rseg->size || size > rseg->size - offset) {
        return NULL;
    }
    /* the shadow is not read from the owner: a read would wait for the
     * owner to drive its completion queue, which a process in a blocking
     * fence does not.  It reads back what we stored (zeros at first). */
    rseg->mapped = 1;
    return rseg->shadow + offset;
}

size_t sci_ofi_remote_segment_size(const sci_remote_segment_t *rseg)
{
    return (size_t) rseg->size;
}

void sci_ofi_disconnect_segment(sci_remote_segment_t *rseg)
{
    /* a write without completion may still read the shadow: let the
     * endpoint send what it holds first */
    (void) sci_ofi_progress(rseg->sd);
    munmap(rseg->shadow, sci_ofi_page_round((size_t) rseg->size));
    free(rseg);
}

/* ---- sequences ------------------------------------------------------------ */

sci_error_t sci_ofi_create_map_sequence(sci_remote_segment_t *rseg, sci_sequence_t **seq)
{
    sci_sequence_t *s;

    if (NULL == seq) {
        return SCI_ERR_ILLEGAL_PARAMETER;
    }
    s = sci_obj_new(sizeof(*s), &sci_ofi_ops);
    if (NULL == s) {
        return SCI_ERR_NOSPC;
    }
    s->rseg = rseg;
    *seq = s;
    return SCI_ERR_OK;
}

void sci_ofi_remove_sequence(sci_sequence_t *seq)
{
    free(seq);
}

static sci_error_t sci_ofi_node_status(sci_ofi_node_t *n)
{
    switch (tc_atomic_load_acquire(&n->state)) {
    case SCI_OFI_NODE_OK:
        return SCI_ERR_OK;
    case SCI_OFI_NODE_BYE:
        return SCI_ERR_DISCONNECTED;
    default:
        return SCI_ERR_TRANSFER_FAILED;
    }
}

sci_error_t sci_ofi_start_sequence(sci_sequence_t *seq)
{
    return sci_ofi_node_status(seq->rseg->node);
}

/* The node's state; and a probe (an 8-byte read of its segment) goes out
 * when none is in flight, so a node that died while we only listened is
 * noticed by a later check.  Not for the fast path. */
sci_error_t sci_ofi_check_sequence(sci_sequence_t *seq)
{
    sci_ofi_node_t *n = seq->rseg->node;
    sci_desc_t *sd = seq->rseg->sd;

    (void) sci_ofi_progress(sd);
    if (SCI_OFI_NODE_OK == tc_atomic_load_acquire(&n->state) &&
        tc_atomic_load_acquire(&n->probe.done)) {
        struct iovec iov = {.iov_base = &n->probe_word, .iov_len = sizeof(n->probe_word)};
        struct fi_rma_iov riov = {.addr = n->probe_addr, .len = 8, .key = n->probe_key};
        struct fi_msg_rma msg = {.msg_iov = &iov,
                                 .iov_count = 1,
                                 .addr = n->fa,
                                 .rma_iov = &riov,
                                 .rma_iov_count = 1,
                                 .context = &n->probe};
        ssize_t r;

        tc_atomic_store_relaxed(&n->probe.done, 0);
        r = fi_readmsg(sd->f.ep, &msg, FI_COMPLETION);
        if (0 != r) {
            tc_atomic_store_release(&n->probe.done, 1);
            if (-FI_EAGAIN != r) {
                sci_ofi_node_fail(n);
            }
        }
    }
    return sci_ofi_node_status(n);
}
