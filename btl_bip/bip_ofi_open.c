/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * bip_ofi_open.c: the `ofi` provider's device: which fi_info entry it
 * takes, the endpoint and the multi-receive buffers it opens (bip_open),
 * and their teardown (bip_close).
 */

#define _GNU_SOURCE
#include "bip_ofi.h"
#include "tc_mem.h"

/* ------------------------------------------------------------------ */
/* device                                                               */

int bip_ofi_errno(int fi_rc)
{
    int e = fi_rc < 0 ? -fi_rc : fi_rc;

    return 0 == e ? -EIO : (e >= FI_ERRNO_OFFSET ? -EIO : -e);
}

/* which entries of a list a provider name may give: any (a name the
 * user chose), only the provider's own endpoints (native) or only those
 * of a utility provider layered on it (rxm) */
typedef enum { BIP_OFI_ANY, BIP_OFI_NATIVE, BIP_OFI_LAYERED } bip_ofi_kind_t;

/* keys are ours (a posted receive's handle), addresses offsets into the
 * region, an immediate carries 8 bytes; and the kind asked for */
static bool bip_ofi_accept(const struct fi_info *i, void *arg)
{
    const bip_ofi_kind_t *kind = arg;
    const char *name = NULL != i->fabric_attr ? i->fabric_attr->prov_name : NULL;
    bool layered = NULL != name && NULL != strchr(name, ';');

    if ((BIP_OFI_NATIVE == *kind && layered) || (BIP_OFI_LAYERED == *kind && !layered)) {
        return false;
    }
    return 0 == (i->domain_attr->mr_mode & (FI_MR_PROV_KEY | FI_MR_VIRT_ADDR | FI_MR_LOCAL)) &&
        i->domain_attr->cq_data_size >= 8 && i->domain_attr->mr_key_size >= 8;
}

/* the entries of one provider name, asked up to `attempts` times: 0 with
 * *list (NULL: none) or -errno */
static int bip_ofi_list(const bip_dev_params_t *p, const char *prov, int attempts,
                        struct fi_info **list)
{
    struct fi_info *hints = fi_allocinfo();
    int rc = 0;

    *list = NULL;
    if (NULL == hints) {
        return -ENOMEM;
    }
    hints->ep_attr->type = FI_EP_RDM;
    hints->caps = FI_MSG | FI_RMA | FI_MULTI_RECV | FI_READ | FI_WRITE | FI_REMOTE_READ |
        FI_REMOTE_WRITE | FI_SEND | FI_RECV;
    hints->mode = 0;
    /* the key is ours (a posted receive's handle) and addresses are
     * offsets into the region: only such providers qualify */
    hints->domain_attr->mr_mode = 0;
    hints->domain_attr->threading = FI_THREAD_SAFE;
    hints->tx_attr->msg_order = FI_ORDER_SAS;
    hints->rx_attr->msg_order = FI_ORDER_SAS;
    hints->fabric_attr->prov_name = strdup(prov);
    if (NULL != p->ofi_domain && '\0' != p->ofi_domain[0]) {
        hints->domain_attr->name = strdup(p->ofi_domain);
    }
    /* the tcp provider lists the host's interfaces: while another job
     * adds or removes some, one call can come back empty; try again */
    for (int attempt = 0; attempt < attempts; ++attempt) {
        rc = fi_getinfo(BIP_OFI_VERSION, NULL, NULL, 0, hints, list);
        if (0 == rc && NULL != *list) {
            break;
        }
        if (NULL != *list) {
            fi_freeinfo(*list);
            *list = NULL;
        }
        if (attempt + 1 < attempts) {
            (void) nanosleep(&(struct timespec){.tv_sec = 0, .tv_nsec = 100000000}, NULL);
        }
    }
    fi_freeinfo(hints);
    /* no entry at all: the caller tells -ENODEV from a real failure */
    return 0 != rc && -FI_ENODATA != rc ? bip_ofi_errno(rc) : 0;
}

/* one entry of list of that kind, copied to *out: the named domain, else
 * the best address (tc_ofi.h says why the first entry is never taken
 * blindly); -ENODEV when none qualifies */
static int bip_ofi_take(struct fi_info *list, const bip_dev_params_t *p, bip_ofi_kind_t kind,
                        struct fi_info **out)
{
    struct fi_info *i =
        NULL != list ? tc_ofi_pick(list, p->ofi_domain, bip_ofi_accept, &kind) : NULL;

    if (NULL == i) {
        return -ENODEV;
    }
    *out = fi_dupinfo(i);
    return NULL == *out ? -ENOMEM : 0;
}

/* The endpoint's entry. A provider named other than "tcp" is taken as
 * named (e.g. "tcp;ofi_rxm", "verbs;ofi_rxm"). For "tcp" the provider's
 * own reliable-datagram endpoint comes first: one socket per peer and
 * the message straight into the multi-receive buffer, where rxm layered
 * on tcp's connected endpoints costs a copy and about 2 us more per
 * message (docs/btl_bip.md, section 8). libfabric 1.18 and later list
 * it as "tcp"; 1.17 as "net" (the same code, renamed tcp in 1.18). Only
 * when neither is there is tcp;ofi_rxm taken. */
static int bip_ofi_getinfo(const bip_dev_params_t *p, struct fi_info **out)
{
    const char *prov = NULL != p->ofi_prov && '\0' != p->ofi_prov[0] ? p->ofi_prov : "tcp";
    struct fi_info *list = NULL, *net = NULL;
    int rc;

    rc = bip_ofi_list(p, prov, 5, &list);
    if (0 != rc) {
        return rc;
    }
    if (0 != strcmp(prov, "tcp")) {
        rc = bip_ofi_take(list, p, BIP_OFI_ANY, out);
    } else if (-ENODEV == (rc = bip_ofi_take(list, p, BIP_OFI_NATIVE, out))) {
        /* one question: on 1.18 and later there is no "net" */
        if (0 == bip_ofi_list(p, "net", 1, &net)) {
            rc = bip_ofi_take(net, p, BIP_OFI_NATIVE, out);
        }
        if (-ENODEV == rc) {
            rc = bip_ofi_take(list, p, BIP_OFI_LAYERED, out);
        }
    }
    if (NULL != net) {
        fi_freeinfo(net);
    }
    if (NULL != list) {
        fi_freeinfo(list);
    }
    return rc;
}

/* the multi-receive buffer is released once less than one largest
 * message fits */
static int bip_ofi_setopt(struct fid_ep *ep, void *arg)
{
    const bip_ofi_dev_t *dev = arg;
    size_t min_multi = dev->msg_max;

    return fi_setopt(&ep->fid, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV, &min_multi,
                     sizeof(min_multi));
}

/* Bytes of one multi-receive buffer: room for every message the credits
 * let our peers have unreleased (N x peers of the largest size) and the
 * remainder below one message at which the provider lets a buffer go, so
 * that while one buffer waits for its last message to be released the
 * other takes all that can come: the provider never has to hold a message
 * back (MPI-BIP's static queue that cannot overflow). 0 when that does
 * not fit a size_t. */
static size_t bip_ofi_rx_bytes(uint32_t credits, uint32_t peers, size_t msg_max)
{
    size_t msgs, bytes;

    if (__builtin_mul_overflow((size_t) credits, (size_t) (0 == peers ? 1 : peers), &msgs) ||
        __builtin_mul_overflow(msgs + 1, msg_max, &bytes)) {
        return 0;
    }
    return bytes < (1u << 20) ? (1u << 20) : bytes;
}

int bip_ofi_open(const bip_dev_params_t *p, void **out)
{
    bip_ofi_dev_t *dev;
    uint32_t slot, credits, senders;
    size_t rxsize, ring, prefault;
    int rc;

    if (NULL == p || NULL == out) {
        return -EINVAL;
    }
    slot = 0 != p->ofi_slot_size ? p->ofi_slot_size : p->slot_size;
    credits = 0 != p->credits ? p->credits : 64;
    if (0 == p->max_posted || p->max_posted > BIP_OFI_IDX_MASK || 0 == p->frag_size || slot < 16 ||
        slot > (64u << 20) || credits > 32768) {
        return -EINVAL;
    }
    dev = calloc(1, sizeof(*dev));
    if (NULL == dev) {
        return -ENOMEM;
    }
    pthread_mutex_init(&dev->lock, NULL);
    dev->stamp = p->stamp;
    dev->jobid = p->jobid;
    dev->resolve = p->resolve;
    dev->timeout = 0 == p->ofi_timeout ? 60 : p->ofi_timeout;
    dev->slot_size = slot;
    dev->msg_max = (sizeof(bip_ofi_msg_hdr_t) + slot + 7u) & ~(size_t) 7u;
    /* a fragment's byte count travels in 32 bits of CQ data */
    dev->frag_size = p->frag_size > (1u << 30) ? (1u << 30) : p->frag_size;
    dev->max_posted = p->max_posted;
    dev->next_gen = 1;
    dev->next_key = 1;
    dev->posted = calloc(p->max_posted, sizeof(*dev->posted));
    /* its senders: the job's peers on other hosts and the processes of
     * other jobs it may meet */
    if (__builtin_add_overflow(p->remote_peers, p->other_jobs, &senders)) {
        rc = -EINVAL;
        goto fail;
    }
    /* the multi-receive buffers are sized for the job's remote peers'
     * credits only (at least one peer's): a buffer's first pass faults in
     * every page it reaches that was not written in at open, and room for other jobs' 8 senders (37 MiB a
     * buffer) cost 8-32 KiB messages across hosts half their bandwidth.
     * Other jobs' messages share that room; a burst beyond it waits in the
     * provider until a buffer is reposted. */
    rxsize = bip_ofi_rx_bytes(credits, p->remote_peers, dev->msg_max);
    /* the messages handed out and not released: no more than the credits
     * allow (a peer that sends beyond its credits waits in the CQ until
     * the protocol reports it) */
    ring = (size_t) credits * (0 == senders ? 1 : senders) + BIP_OFI_POLL;
    if (0 == rxsize || ring > UINT32_MAX) {
        rc = -ENOMEM;
        goto fail;
    }
    dev->ring_cap = (uint32_t) (ring < 1024 ? 1024 : ring);
    dev->ring = calloc(dev->ring_cap, sizeof(*dev->ring));
    if (NULL == dev->posted || NULL == dev->ring) {
        rc = -ENOMEM;
        goto fail;
    }
    prefault = p->ofi_prefault;
    for (int i = 0; i < BIP_OFI_NRX; ++i) {
        dev->rx[i].ctx.kind = BIP_OFI_CTX_RX;
        dev->rx[i].size = rxsize;
        if (0 != posix_memalign((void **) &dev->rx[i].mem, 64, rxsize)) {
            rc = -ENOMEM;
            goto fail;
        }
        /* messages fill the buffers from start to end: written in now,
         * the first pass takes no page fault per page (docs/common.md) */
        (void) tc_mem_prefault(dev->rx[i].mem, rxsize, &prefault);
    }

    rc = bip_ofi_getinfo(p, &dev->f.info);
    if (0 != rc) {
        goto fail;
    }
    dev->inject_size = dev->f.info->tx_attr->inject_size;
    dev->iov_limit = dev->f.info->tx_attr->iov_limit;
    (void) snprintf(dev->fabric, sizeof(dev->fabric), "%s/%s", dev->f.info->fabric_attr->prov_name,
                    dev->f.info->domain_attr->name);
    rc = tc_ofi_rdm_open(&dev->f, 0, 0, bip_ofi_setopt, dev);
    if (0 == rc) {
        dev->addrlen = sizeof(dev->addr);
        rc = fi_getname(&dev->f.ep->fid, dev->addr, &dev->addrlen);
    }
    if (0 != rc) {
        rc = bip_ofi_errno(rc);
        goto fail;
    }
    for (int i = 0; i < BIP_OFI_NRX; ++i) {
        bip_ofi_repost(dev, dev->rx + i);
        if (!dev->rx[i].posted) {
            rc = -EIO;
            goto fail;
        }
    }
    *out = dev;
    return 0;

fail:
    bip_ofi_close(dev);
    return rc;
}

void bip_ofi_close(void *d)
{
    bip_ofi_dev_t *dev = d;

    if (NULL == dev) {
        return;
    }
    tc_ofi_rdm_close_ep(&dev->f);
    for (uint32_t i = 0; NULL != dev->posted && i < dev->max_posted; ++i) {
        if (NULL != dev->posted[i].mr) {
            tc_ofi_mr_close(&dev->f.guard, dev->posted[i].mr);
        }
    }
    tc_ofi_rdm_close(&dev->f);
    /* free or still in flight when the endpoint closed: all of them */
    while (NULL != dev->tx_all) {
        bip_ofi_tx_t *tx = dev->tx_all;

        dev->tx_all = tx->all_next;
        free(tx);
    }
    /* reads never reaped (their completions cannot come any more) */
    while (NULL != dev->reads) {
        bip_ofi_op_t *op = dev->reads;

        dev->reads = op->next;
        free(op);
    }
    bip_ofi_gather_free_all(dev);
    while (NULL != dev->gone) {
        bip_ofi_peer_t *peer = dev->gone;

        dev->gone = peer->next_gone;
        free(peer);
    }
    for (int i = 0; i < BIP_OFI_NRX; ++i) {
        free(dev->rx[i].mem);
    }
    free(dev->ring);
    free(dev->posted);
    pthread_mutex_destroy(&dev->lock);
    free(dev);
}

int bip_ofi_probe_large(void *dev)
{
    (void) dev;
    return 0;
}

int bip_ofi_unlink(void *dev)
{
    (void) dev;
    return 1;
}

int bip_ofi_address(void *d, void *buf, size_t *len)
{
    bip_ofi_dev_t *dev = d;

    memcpy(buf, dev->addr, dev->addrlen);
    *len = dev->addrlen;
    return 0;
}

const char *bip_ofi_fabric(const void *d)
{
    return ((const bip_ofi_dev_t *) d)->fabric;
}
