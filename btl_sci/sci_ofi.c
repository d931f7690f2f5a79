/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * sci_ofi.c: the ofi provider of sci_device.h: SCI segments across hosts
 * over libfabric RMA on one reliable-datagram endpoint (FI_EP_RDM,
 * "tcp;ofi_rxm" by default: no connection management of our own).
 *
 *   SCICreateSegment         memory of ours registered with fi_mr_reg
 *                            (remote read and write), listed in the
 *                            directory once available
 *   SCIConnectSegment        a lookup in the owner's directory (key,
 *                            address, size), learned with sci_import_node
 *   SCIMapRemoteSegment      a local shadow of the remote segment (zeroed,
 *                            never read from the owner: loads return what
 *                            we stored); stores into it reach the owner
 *                            by sci_flush
 *   SCIFlush / SCIMemWrite   fi_inject_write (small) or fi_writemsg
 *                            without completion (large); all on one
 *                            endpoint with FI_ORDER_WAW, so flushes land
 *                            in issue order (sci_ofi_write.c)
 *   publish (bytes + word)   one write with the word as remote CQ data;
 *                            the owner stores the word when the write's
 *                            completion shows it landed (sci_ofi_write.c)
 *   SCICheckSequence         the node's state: a "bye" received (its owner
 *                            left in order), an error completion for an
 *                            operation to it, or a probe (an 8-byte fi_read)
 *                            that failed
 *   DMA queue                fi_writemsg / fi_readmsg with delivery
 *                            completion, waited for by reading the CQ
 *
 * The tcp provider moves the bytes of a remote write into the target's
 * memory only while the target reads its completion queue: sci_progress
 * does that, and the BTL calls it from its progress function.
 *
 * The provider's files: this one opens and closes the device and holds
 * the provider table; sci_ofi_mr.c registrations and local segments;
 * sci_ofi_cm.c the directory exchange, remote segments and sequences
 * (what a node knows of another); sci_ofi_write.c the writes of a flush
 * and a publish; sci_ofi_dma.c the DMA queues and asynchronous
 * transfers; sci_ofi_cq.c the completion queue (progress, waits, the
 * words that land); sci_ofi_int.h what they share.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include "sci_ofi_int.h"
#include "tc_atomic.h"
/* a libfabric return code as the device API's error */
sci_error_t sci_ofi_err(int ret)
{
    switch (ret) {
    case 0:
        return SCI_ERR_OK;
    case -FI_ENOMEM:
        return SCI_ERR_NOSPC;
    case -FI_EACCES:
    case -FI_EPERM:
        return SCI_ERR_ACCESS;
    case -FI_EINVAL:
        return SCI_ERR_ILLEGAL_PARAMETER;
    case -FI_ENOSYS:
    case -FI_ENODATA:
        return SCI_ERR_NOT_SUPPORTED;
    case -FI_EAGAIN:
        return SCI_ERR_BUSY;
    default:
        return SCI_ERR_TRANSFER_FAILED;
    }
}

/* ---- device --------------------------------------------------------- */

/* an address that fits the directory record */
static bool sci_ofi_accept(const struct fi_info *i, void *arg)
{
    (void) arg;
    return NULL != i->src_addr && 0 < i->src_addrlen && i->src_addrlen <= SCI_OFI_MAX_ADDR;
}

static void sci_ofi_close(sci_desc_t *sd);

/* one 8-byte write with completion to ourselves at raddr; 0 when it
 * landed */
static int sci_ofi_self_write(sci_desc_t *sd, fi_addr_t self, uint64_t *dst, uint64_t raddr,
                              uint64_t key)
{
    uint64_t v = 0x5c15e1f7e57ull;
    sci_ofi_ctx_t ctx;
    struct iovec iov = {.iov_base = &v, .iov_len = sizeof(v)};
    struct fi_rma_iov riov = {.addr = raddr, .len = sizeof(v), .key = key};
    struct fi_msg_rma msg = {.msg_iov = &iov,
                             .iov_count = 1,
                             .addr = self,
                             .rma_iov = &riov,
                             .rma_iov_count = 1,
                             .context = &ctx};
    ssize_t r;

    memset(&ctx, 0, sizeof(ctx));
    ctx.kind = SCI_OFI_CTX_DMA;
    *dst = 0;
    do {
        r = fi_writemsg(sd->f.ep, &msg, FI_COMPLETION | FI_DELIVERY_COMPLETE);
        if (-FI_EAGAIN == r) {
            (void) sci_ofi_progress(sd);
        }
    } while (-FI_EAGAIN == r);
    if (0 != r || 0 != sci_ofi_wait(sd, &ctx)) {
        return -1;
    }
    return *(volatile uint64_t *) dst == v ? 0 : -1;
}

/* Does the provider take virtual addresses, as its mr_mode says?  Some
 * (tcp;ofi_rxm of libfabric 1.17) announce FI_MR_VIRT_ADDR and then add
 * the region's base at the target: a write to ourselves tells. */
static int sci_ofi_probe_addressing(sci_desc_t *sd)
{
    uint64_t *word = calloc(1, 64);
    struct fid_mr *mr = NULL;
    fi_addr_t self = FI_ADDR_NOTAVAIL;
    uint64_t key = 0;
    int rc = -1;

    if (NULL == word || 1 != fi_av_insert(sd->f.av, sd->addr, 1, &self, 0, NULL) ||
        0 != sci_ofi_mr_reg_raw(sd, word, 64, &mr, &key)) {
        free(word);
        return -1;
    }
    if (0 == sci_ofi_self_write(sd, self, word, (uint64_t) (uintptr_t) word, key)) {
        sd->virt_addr = 1;
        rc = 0;
    } else if (0 == sci_ofi_self_write(sd, self, word, 0, key)) {
        sd->virt_addr = 0;
        rc = 0;
    }
    tc_ofi_mr_close(&sd->f.guard, mr);
    (void) fi_av_remove(sd->f.av, &self, 1, 0);
    free(word);
    return rc;
}

static sci_error_t sci_ofi_open(const sci_open_params_t *params, sci_desc_t **sdp)
{
    struct fi_info *hints, *list = NULL, *pick;
    sci_desc_t *sd;
    int ret;

    hints = fi_allocinfo();
    if (NULL == hints) {
        return SCI_ERR_NOSPC;
    }
    hints->ep_attr->type = FI_EP_RDM;
    hints->caps = FI_MSG | FI_RMA;
    hints->mode = FI_CONTEXT | FI_CONTEXT2;
    hints->tx_attr->msg_order = FI_ORDER_WAW;
    hints->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
    hints->domain_attr->threading = FI_THREAD_SAFE;
    hints->fabric_attr->prov_name = strdup(NULL != params->fabric ? params->fabric : "tcp;ofi_rxm");
    ret = fi_getinfo(SCI_OFI_VERSION, NULL, NULL, 0, hints, &list);
    fi_freeinfo(hints);
    if (0 != ret || NULL == list) {
        return SCI_ERR_NOT_SUPPORTED;
    }
    pick = tc_ofi_pick(list, params->device, sci_ofi_accept, NULL);
    sd = NULL != pick ? calloc(1, sizeof(*sd)) : NULL;
    if (NULL == sd) {
        fi_freeinfo(list);
        return NULL == pick ? SCI_ERR_NOT_SUPPORTED : SCI_ERR_NOSPC;
    }
    sd->obj.ops = &sci_ofi_ops;
    pthread_mutex_init(&sd->lock, NULL);
    pthread_mutex_init(&sd->done_lock, NULL);
    sd->f.info = fi_dupinfo(pick);
    fi_freeinfo(list);
    sd->node_id = params->node_id;
    sd->name = 0 != params->node_name ? params->node_name : params->node_id;
    sd->next_key = 1;
    sd->prefault_left = params->prefault;
    if (NULL == sd->f.info || !(sd->f.info->tx_attr->msg_order & FI_ORDER_WAW)) {
        sci_ofi_close(sd);
        return SCI_ERR_NOT_SUPPORTED;
    }
    if (0 == sd->f.info->domain_attr->mr_mode) {
        sd->f.info->domain_attr->mr_mode = FI_MR_VIRT_ADDR;
    }
    /* remote addresses are virtual; local buffers need no registration */
    if (!(sd->f.info->domain_attr->mr_mode & FI_MR_VIRT_ADDR) ||
        (sd->f.info->domain_attr->mr_mode & (FI_MR_LOCAL | FI_MR_ENDPOINT))) {
        sci_ofi_close(sd);
        return SCI_ERR_NOT_SUPPORTED;
    }
    sd->prov_key = 0 != (sd->f.info->domain_attr->mr_mode & FI_MR_PROV_KEY);
    sd->inject_size = sd->f.info->tx_attr->inject_size;
    sd->cq_data = sd->f.info->domain_attr->cq_data_size >= sizeof(uint64_t);
    if (0 != tc_ofi_rdm_open(&sd->f, 4096, FI_SELECTIVE_COMPLETION, NULL, NULL)) {
        sci_ofi_close(sd);
        return SCI_ERR_NOT_SUPPORTED;
    }
    sd->addrlen = sizeof(sd->addr);
    if (0 != fi_getname(&sd->f.ep->fid, sd->addr, &sd->addrlen) || sd->addrlen > sizeof(sd->addr)) {
        sci_ofi_close(sd);
        return SCI_ERR_NOT_SUPPORTED;
    }
    for (int i = 0; i < SCI_OFI_NRECV; ++i) {
        sci_ofi_repost(sd, i);
    }
    if (0 != sci_ofi_probe_addressing(sd)) {
        sci_ofi_close(sd);
        return SCI_ERR_NOT_SUPPORTED;
    }
    *sdp = sd;
    return SCI_ERR_OK;
}

/* nanoseconds since t0 (CLOCK_MONOTONIC) */
static long sci_ofi_elapsed_ns(const struct timespec *t0)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (t.tv_sec - t0->tv_sec) * 1000000000L + (t.tv_nsec - t0->tv_nsec);
}

/* tell every node we know that we leave (their sequences then report a
 * departure, not a failure), and wait, at most 2 s in all, for the sends
 * to go out: a node that is gone does not hold us up */
static void sci_ofi_say_bye(sci_desc_t *sd)
{
    sci_ofi_bye_t *bye = &sd->bye;
    const long limit = 2000000000L;
    struct timespec t0;

    bye->magic = SCI_OFI_BYE_MAGIC;
    bye->name = sd->name;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (sci_ofi_node_t *n = sd->nodes; NULL != n; n = n->next) {
        struct iovec iov = {.iov_base = bye, .iov_len = sizeof(*bye)};
        struct fi_msg msg = {.msg_iov = &iov, .iov_count = 1, .addr = n->fa, .context = &n->bctx};
        ssize_t r = -FI_EAGAIN;

        n->bctx.kind = SCI_OFI_CTX_BYE;
        n->bctx.done = 1;
        if (SCI_OFI_NODE_OK != tc_atomic_load_relaxed(&n->state)) {
            continue;
        }
        while (-FI_EAGAIN == r && sci_ofi_elapsed_ns(&t0) < limit) {
            /* delivery complete: an injected send may still sit in our
             * endpoint when its completion comes, and closing drops it */
            r = fi_sendmsg(sd->f.ep, &msg, FI_COMPLETION | FI_DELIVERY_COMPLETE);
            if (-FI_EAGAIN == r) {
                (void) sci_ofi_progress(sd);
            }
        }
        n->bctx.done = 0 == r ? 0 : 1;
    }
    for (;;) {
        int pending = 0;

        (void) sci_ofi_progress(sd);
        for (sci_ofi_node_t *n = sd->nodes; NULL != n; n = n->next) {
            pending += !tc_atomic_load_acquire(&n->bctx.done);
        }
        if (0 == pending || sci_ofi_elapsed_ns(&t0) > limit) {
            break;
        }
        sched_yield();
    }
}

static void sci_ofi_close(sci_desc_t *sd)
{
    if (NULL == sd) {
        return;
    }
    if (NULL != sd->f.ep) {
        sci_ofi_say_bye(sd);
    }
    tc_ofi_rdm_close_ep(&sd->f);
    while (NULL != sd->mrs) {
        sci_ofi_mr_t *m = sd->mrs;
        sd->mrs = m->next;
        tc_ofi_mr_close(&sd->f.guard, m->mr);
        free(m);
    }
    tc_ofi_rdm_close(&sd->f);
    while (NULL != sd->pending) {
        sci_ofi_pending_t *p = sd->pending;
        sd->pending = p->next;
        free(p);
    }
    while (NULL != sd->nodes) {
        sci_ofi_node_t *n = sd->nodes;
        sd->nodes = n->next;
        free(n->segs);
        free(n);
    }
    free(sd->segtab);
    while (NULL != sd->done) {
        sci_ofi_async_t *op = sd->done;
        sd->done = op->next;
        free(op);
    }
    pthread_mutex_destroy(&sd->done_lock);
    pthread_mutex_destroy(&sd->lock);
    free(sd);
}

static uint32_t sci_ofi_local_node_id(const sci_desc_t *sd)
{
    return sd->node_id;
}

const sci_provider_ops_t sci_ofi_ops = {
    .name = "ofi",
    .open = sci_ofi_open,
    .close = sci_ofi_close,
    .local_node_id = sci_ofi_local_node_id,
    .create_segment = sci_ofi_create_segment,
    .prepare_segment = sci_ofi_prepare_segment,
    .set_segment_available = sci_ofi_set_segment_available,
    .set_segment_unavailable = sci_ofi_set_segment_unavailable,
    .local_segment_address = sci_ofi_local_segment_address,
    .local_segment_size = sci_ofi_local_segment_size,
    .remove_segment = sci_ofi_remove_segment,
    .connect_segment = sci_ofi_connect_segment,
    .map_remote_segment = sci_ofi_map_remote_segment,
    .remote_segment_size = sci_ofi_remote_segment_size,
    .disconnect_segment = sci_ofi_disconnect_segment,
    .create_map_sequence = sci_ofi_create_map_sequence,
    .remove_sequence = sci_ofi_remove_sequence,
    .start_sequence = sci_ofi_start_sequence,
    .check_sequence = sci_ofi_check_sequence,
    .register_memory = sci_ofi_register_memory,
    .deregister_memory = sci_ofi_deregister_memory,
    .create_dma_queue = sci_ofi_create_dma_queue,
    .remove_dma_queue = sci_ofi_remove_dma_queue,
    .dma_enqueue = sci_ofi_dma_enqueue,
    .dma_start = sci_ofi_dma_start,
    .dma_wait = sci_ofi_dma_wait,
    .dma_queue_share = sci_ofi_dma_queue_share,
    .dma_transfer = sci_ofi_dma_transfer,
    .dma_probe = sci_ofi_dma_probe,
    .dma_post = sci_ofi_dma_post,
    .dma_reap = sci_ofi_dma_reap,
    .flush = sci_ofi_flush,
    .flush_publish = sci_ofi_flush_publish,
    .flush_publish_from = sci_ofi_flush_publish_from,
    .export_directory = sci_ofi_export_directory,
    .import_node = sci_ofi_import_node,
    .offer_segment = sci_ofi_offer_segment,
    .take_offer = sci_ofi_take_offer,
    .progress = sci_ofi_progress,
    .node_lost = sci_ofi_node_lost,
};

const sci_provider_ops_t *sci_ofi_provider(void)
{
    return &sci_ofi_ops;
}
