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
 */

#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include "sci_device.h"
#include "sci_ofi_dir.h"
#include "sci_provider.h"
#include "tc_atomic.h"
#include "tc_ofi.h"

#include "sci_ofi_int.h"

static const sci_provider_ops_t sci_ofi_ops;

/* Segment memory and shadows: anonymous mappings, zero and page-aligned,
 * whose pages cost memory only once written.  A ring touches the page of
 * each slot's header when formatted; the rest of a slot fills as messages
 * come (a peer that never sends, such as a process of this host that shm
 * reaches, costs a page per slot), and the shadow of a slot whose payload
 * leaves from the sender's buffer keeps only its header page. */
static void *sci_ofi_zalloc(size_t len)
{
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

    return MAP_FAILED == p ? NULL : p;
}

static size_t sci_ofi_page_round(size_t len)
{
    return (len + 4095) & ~(size_t) 4095;
}

/* a transfer's completion error as the DMA engine reports it: refused by
 * the target's registration, or failed */
static sci_error_t sci_ofi_dma_status(int err)
{
    if (0 == err) {
        return SCI_ERR_OK;
    }
    return -FI_EACCES == err || -FI_EINVAL == err ? SCI_ERR_OUT_OF_RANGE : SCI_ERR_TRANSFER_FAILED;
}

static sci_error_t sci_ofi_err(int ret)
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

void sci_ofi_node_fail(sci_ofi_node_t *node)
{
    if (NULL != node && SCI_OFI_NODE_OK == tc_atomic_load_relaxed(&node->state)) {
        tc_atomic_store_relaxed(&node->state, (int) SCI_OFI_NODE_FAILED);
    }
}

static sci_ofi_node_t *sci_ofi_node_by_id(sci_desc_t *sd, uint32_t node_id)
{
    sci_ofi_node_t *n;

    for (n = sd->nodes; NULL != n; n = n->next) {
        if (n->node_id == node_id) {
            break;
        }
    }
    return n;
}
static void sci_ofi_repost(sci_desc_t *sd, int i)
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
        uint32_t who;

        if (0 == err && 0 == sci_ofi_bye_parse(sd->rbuf[i], len, &who)) {
            sci_ofi_node_t *n;

            pthread_mutex_lock(&sd->lock);
            n = sci_ofi_node_by_id(sd, who);
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
        ssize_t n = fi_cq_read(sd->f.cq, ev, 16);

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
            if (fi_cq_readerr(sd->f.cq, &e, 0) > 0) {
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
static int sci_ofi_wait(sci_desc_t *sd, sci_ofi_ctx_t *ctx)
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

static void sci_ofi_close_fid(struct fid *fid)
{
    if (NULL != fid) {
        (void) fi_close(fid);
    }
}

static int sci_ofi_mr_reg_raw(sci_desc_t *sd, void *addr, size_t len, struct fid_mr **mr,
                              uint64_t *key);

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
    sci_ofi_close_fid(&mr->fid);
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
    sd->next_key = 1;
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

/* tell every node we know that we leave (their sequences then report a
 * departure, not a failure), and wait, bounded, for the sends to go out */
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
    bye->node_id = sd->node_id;
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
        sci_ofi_close_fid(&m->mr->fid);
        free(m);
    }
    tc_ofi_rdm_close(&sd->f);
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

/* ---- registrations ---------------------------------------------------- */

static int sci_ofi_mr_reg_raw(sci_desc_t *sd, void *addr, size_t len, struct fid_mr **mr,
                              uint64_t *key)
{
    uint64_t want;
    int ret;

    pthread_mutex_lock(&sd->lock);
    want = sd->next_key++;
    pthread_mutex_unlock(&sd->lock);
    ret = fi_mr_reg(sd->f.domain, addr, len, FI_REMOTE_READ | FI_REMOTE_WRITE | FI_READ | FI_WRITE,
                    0, sd->prov_key ? 0 : want, 0, mr, NULL);
    if (0 != ret) {
        return ret;
    }
    *key = fi_mr_key(*mr);
    return FI_KEY_NOTAVAIL == *key ? -FI_EINVAL : 0;
}

static sci_error_t sci_ofi_register_memory(sci_desc_t *sd, void *addr, size_t len,
                                           sci_mem_handle_t *handle)
{
    sci_ofi_mr_t *m;
    int ret;

    if (NULL == sd || NULL == handle || NULL == addr || 0 == len) {
        return SCI_ERR_ILLEGAL_PARAMETER;
    }
    m = calloc(1, sizeof(*m));
    if (NULL == m) {
        return SCI_ERR_NOSPC;
    }
    ret = sci_ofi_mr_reg_raw(sd, addr, len, &m->mr, &m->key);
    if (0 != ret) {
        free(m);
        return sci_ofi_err(ret);
    }
    pthread_mutex_lock(&sd->lock);
    m->next = sd->mrs;
    sd->mrs = m;
    pthread_mutex_unlock(&sd->lock);
    /* the shm provider may have named the owner already: keep its fields */
    if (0 == handle->len) {
        handle->base = (uint64_t) (uintptr_t) addr;
        handle->len = (uint64_t) len;
    }
    handle->key = m->key;
    handle->key_node = sd->node_id;
    handle->key_flags = SCI_MEM_HANDLE_KEY;
    handle->key_base = (uint64_t) (uintptr_t) addr;
    return SCI_ERR_OK;
}

static void sci_ofi_deregister_memory(sci_desc_t *sd, sci_mem_handle_t *handle)
{
    sci_ofi_mr_t **pp, *m = NULL;

    if (NULL == sd || NULL == handle) {
        return;
    }
    pthread_mutex_lock(&sd->lock);
    for (pp = &sd->mrs; NULL != *pp; pp = &(*pp)->next) {
        if ((*pp)->key == handle->key) {
            m = *pp;
            *pp = m->next;
            break;
        }
    }
    pthread_mutex_unlock(&sd->lock);
    if (NULL != m) {
        sci_ofi_close_fid(&m->mr->fid);
        free(m);
    }
    handle->key = 0;
    handle->key_node = 0;
    handle->key_flags = 0;
}

/* ---- local segments ------------------------------------------------------ */

/* the lowest free index for a new segment, the table grown as needed
 * (lock held) */
static int sci_ofi_segtab_add(sci_desc_t *sd, sci_local_segment_t *s)
{
    uint32_t i;

    for (i = 0; i < sd->nsegtab && NULL != sd->segtab[i]; ++i) {
    }
    if (i == sd->nsegtab) {
        uint32_t n = 0 == sd->nsegtab ? 16 : 2 * sd->nsegtab;
        sci_local_segment_t **t;

        if (sd->nsegtab >= SCI_OFI_MAX_SEGS) {
            return -1;
        }
        t = realloc(sd->segtab, (size_t) n * sizeof(*t));
        if (NULL == t) {
            return -1;
        }
        memset(t + sd->nsegtab, 0, (size_t) (n - sd->nsegtab) * sizeof(*t));
        sd->segtab = t;
        sd->nsegtab = n;
    }
    sd->segtab[i] = s;
    s->index = i;
    return 0;
}

static sci_error_t sci_ofi_create_segment(sci_desc_t *sd, uint32_t segment_id, size_t size,
                                          sci_local_segment_t **segp)
{
    sci_local_segment_t *s;
    int ret;

    if (NULL == segp || 0 == size || size > ((size_t) 1 << 40)) {
        return SCI_ERR_ILLEGAL_PARAMETER;
    }
    pthread_mutex_lock(&sd->lock);
    for (s = sd->segs; NULL != s; s = s->next) {
        if (s->segment_id == segment_id) {
            pthread_mutex_unlock(&sd->lock);
            return SCI_ERR_ILLEGAL_PARAMETER;
        }
    }
    pthread_mutex_unlock(&sd->lock);
    s = calloc(1, sizeof(*s));
    if (NULL == s) {
        return SCI_ERR_NOSPC;
    }
    s->obj.ops = &sci_ofi_ops;
    s->sd = sd;
    s->segment_id = segment_id;
    s->size = (size + 4095) & ~(size_t) 4095;
    s->mem = sci_ofi_zalloc(s->size);
    if (NULL == s->mem) {
        free(s);
        return SCI_ERR_NOSPC;
    }
    ret = sci_ofi_mr_reg_raw(sd, s->mem, s->size, &s->mr, &s->key);
    if (0 != ret) {
        munmap(s->mem, s->size);
        free(s);
        return sci_ofi_err(ret);
    }
    pthread_mutex_lock(&sd->lock);
    if (0 != sci_ofi_segtab_add(sd, s)) {
        pthread_mutex_unlock(&sd->lock);
        sci_ofi_close_fid(&s->mr->fid);
        munmap(s->mem, s->size);
        free(s);
        return SCI_ERR_NOSPC;
    }
    s->next = sd->segs;
    sd->segs = s;
    pthread_mutex_unlock(&sd->lock);
    *segp = s;
    return SCI_ERR_OK;
}

static sci_error_t sci_ofi_prepare_segment(sci_local_segment_t *seg)
{
    (void) seg; /* registered at creation */
    return SCI_ERR_OK;
}

static sci_error_t sci_ofi_set_segment_available(sci_local_segment_t *seg, unsigned expected)
{
    (void) expected;
    tc_atomic_store_release(&seg->available, 1);
    return SCI_ERR_OK;
}

static sci_error_t sci_ofi_set_segment_unavailable(sci_local_segment_t *seg)
{
    tc_atomic_store_release(&seg->available, 0);
    return SCI_ERR_OK;
}

static void *sci_ofi_local_segment_address(const sci_local_segment_t *seg)
{
    return seg->mem;
}

static size_t sci_ofi_local_segment_size(const sci_local_segment_t *seg)
{
    return seg->size;
}

static void sci_ofi_remove_segment(sci_local_segment_t *seg)
{
    sci_desc_t *sd = seg->sd;

    pthread_mutex_lock(&sd->lock);
    for (sci_local_segment_t **pp = &sd->segs; NULL != *pp; pp = &(*pp)->next) {
        if (*pp == seg) {
            *pp = seg->next;
            break;
        }
    }
    sd->segtab[seg->index] = NULL;
    pthread_mutex_unlock(&sd->lock);
    sci_ofi_close_fid(&seg->mr->fid);
    munmap(seg->mem, seg->size);
    free(seg);
}

/* ---- directory ----------------------------------------------------------- */

static sci_error_t sci_ofi_export_directory(sci_desc_t *sd, void *buf, size_t buflen, size_t *len)
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

static sci_error_t sci_ofi_import_node(sci_desc_t *sd, uint32_t node_id, const void *buf,
                                       size_t len)
{
    sci_ofi_dir_view_t view;
    sci_ofi_node_t *n;
    fi_addr_t fa = FI_ADDR_NOTAVAIL;

    if (0 != sci_ofi_dir_parse(buf, len, &view) || view.node_id != node_id) {
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
    n->fa = fa;
    n->wctx.kind = SCI_OFI_CTX_NODE;
    n->wctx.node = n;
    n->bctx.node = n;
    n->probe.kind = SCI_OFI_CTX_PROBE;
    n->probe.node = n;
    n->probe.done = 1;
    pthread_mutex_lock(&sd->lock);
    n->next = sd->nodes;
    tc_atomic_store_release(&sd->nodes, n);
    pthread_mutex_unlock(&sd->lock);
    return SCI_ERR_OK;
}

/* ---- remote segments ---------------------------------------------------- */

static sci_error_t sci_ofi_connect_segment(sci_desc_t *sd, uint32_t node_id, uint32_t segment_id,
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
    for (uint32_t i = 0; i < n->nsegs; ++i) {
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
    r = calloc(1, sizeof(*r));
    if (NULL == r) {
        return SCI_ERR_NOSPC;
    }
    r->obj.ops = &sci_ofi_ops;
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
    if (0 == n->probe_key) {
        n->probe_key = r->key;
        n->probe_addr = r->raddr;
    }
    *rsegp = r;
    return SCI_ERR_OK;
}

static void *sci_ofi_map_remote_segment(sci_remote_segment_t *rseg, size_t offset, size_t size)
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

static size_t sci_ofi_remote_segment_size(const sci_remote_segment_t *rseg)
{
    return (size_t) rseg->size;
}

static void sci_ofi_disconnect_segment(sci_remote_segment_t *rseg)
{
    /* a write without completion may still read the shadow: let the
     * endpoint send what it holds first */
    (void) sci_ofi_progress(rseg->sd);
    munmap(rseg->shadow, sci_ofi_page_round((size_t) rseg->size));
    free(rseg);
}

/* ---- sequences ------------------------------------------------------------ */

static sci_error_t sci_ofi_create_map_sequence(sci_remote_segment_t *rseg, sci_sequence_t **seq)
{
    sci_sequence_t *s;

    if (NULL == seq) {
        return SCI_ERR_ILLEGAL_PARAMETER;
    }
    s = calloc(1, sizeof(*s));
    if (NULL == s) {
        return SCI_ERR_NOSPC;
    }
    s->obj.ops = &sci_ofi_ops;
    s->rseg = rseg;
    *seq = s;
    return SCI_ERR_OK;
}

static void sci_ofi_remove_sequence(sci_sequence_t *seq)
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

static sci_error_t sci_ofi_start_sequence(sci_sequence_t *seq)
{
    return sci_ofi_node_status(seq->rseg->node);
}

/* The node's state; and a probe (an 8-byte read of its segment) goes out
 * when none is in flight, so a node that died while we only listened is
 * noticed by a later check.  Not for the fast path. */
static sci_error_t sci_ofi_check_sequence(sci_sequence_t *seq)
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

/* ---- DMA ----------------------------------------------------------------- */

static sci_error_t sci_ofi_create_dma_queue(sci_desc_t *sd, unsigned max_entries,
                                            sci_dma_queue_t **dqp)
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

static void sci_ofi_remove_dma_queue(sci_dma_queue_t *dq)
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

static sci_error_t sci_ofi_dma_enqueue(sci_dma_queue_t *dq, int direction, void *local_addr,
                                       const sci_mem_handle_t *remote, uint64_t remote_addr,
                                       size_t len)
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
static sci_error_t sci_ofi_dma_post(sci_desc_t *sd, int direction, void *local_addr,
                                    const sci_mem_handle_t *remote, uint64_t remote_addr,
                                    size_t len, void *cookie)
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

static int sci_ofi_dma_reap(sci_desc_t *sd, void **cookies, sci_error_t *status, int max)
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

static sci_error_t sci_ofi_dma_start(sci_dma_queue_t *dq)
{
    (void) dq; /* posted at enqueue */
    return SCI_ERR_OK;
}

static sci_error_t sci_ofi_dma_wait(sci_dma_queue_t *dq)
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

static sci_error_t sci_ofi_dma_queue_share(sci_dma_queue_t *dq)
{
    dq->shared = 1;
    return SCI_ERR_OK;
}

static sci_error_t sci_ofi_dma_transfer(sci_dma_queue_t *dq, int direction, void *local_addr,
                                        const sci_mem_handle_t *remote, uint64_t remote_addr,
                                        size_t len)
{
    sci_error_t err;

    if (dq->shared) {
        pthread_mutex_lock(&dq->lock);
    }
    /* in pieces, several in flight: one 4 MiB RMA through tcp;ofi_rxm
     * moved half of what eight of 512 KiB do (docs/btl_sci.md) */
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

static sci_error_t sci_ofi_dma_probe(sci_desc_t *sd)
{
    (void) sd;
    return SCI_ERR_OK;
}

static const sci_provider_ops_t sci_ofi_ops = {
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
    .progress = sci_ofi_progress,
    .node_lost = sci_ofi_node_lost,
};

const sci_provider_ops_t *sci_ofi_provider(void)
{
    return &sci_ofi_ops;
}
