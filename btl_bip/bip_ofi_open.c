/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * bip_ofi_open.c: the `ofi` provider's device: which fi_info entry it
 * takes, the endpoint and the multi-receive buffers it opens (bip_open),
 * and their teardown (bip_close).
 */

#define _GNU_SOURCE
#include "bip_ofi.h"

/* ------------------------------------------------------------------ */
/* device                                                               */

int bip_ofi_errno(int fi_rc)
{
    int e = fi_rc < 0 ? -fi_rc : fi_rc;

    return 0 == e ? -EIO : (e >= FI_ERRNO_OFFSET ? -EIO : -e);
}

/* keys are ours (a posted receive's handle), addresses offsets into the
 * region, and an immediate carries 8 bytes */
static bool bip_ofi_accept(const struct fi_info *i, void *arg)
{
    (void) arg;
    return 0 == (i->domain_attr->mr_mode & (FI_MR_PROV_KEY | FI_MR_VIRT_ADDR | FI_MR_LOCAL)) &&
        i->domain_attr->cq_data_size >= 8 && i->domain_attr->mr_key_size >= 8;
}

static int bip_ofi_getinfo(const bip_dev_params_t *p, struct fi_info **out)
{
    struct fi_info *hints = fi_allocinfo(), *list = NULL, *i;
    const char *prov = NULL != p->ofi_prov && '\0' != p->ofi_prov[0] ? p->ofi_prov : "tcp";
    const char *hints_domain =
        NULL != p->ofi_domain && '\0' != p->ofi_domain[0] ? p->ofi_domain : NULL;
    int rc;

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
    for (int attempt = 0; attempt < 5; ++attempt) {
        rc = fi_getinfo(BIP_OFI_VERSION, NULL, NULL, 0, hints, &list);
        if (0 == rc && NULL != list) {
            break;
        }
        if (NULL != list) {
            fi_freeinfo(list);
            list = NULL;
        }
        (void) nanosleep(&(struct timespec){.tv_sec = 0, .tv_nsec = 100000000}, NULL);
    }
    fi_freeinfo(hints);
    if (0 != rc || NULL == list) {
        return 0 != rc ? bip_ofi_errno(rc) : -ENODEV;
    }
    /* the named domain, else the best address (tc_ofi.h says why the
     * first entry is never taken blindly) */
    i = tc_ofi_pick(list, hints_domain, bip_ofi_accept, NULL);
    if (NULL == i) {
        fi_freeinfo(list);
        return -ENODEV;
    }
    *out = fi_dupinfo(i);
    fi_freeinfo(list);
    return NULL == *out ? -ENOMEM : 0;
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

int bip_ofi_open(const bip_dev_params_t *p, void **out)
{
    bip_ofi_dev_t *dev;
    size_t rxsize;
    int rc;

    if (NULL == p || NULL == out || 0 == p->max_posted || p->max_posted > BIP_OFI_IDX_MASK ||
        0 == p->frag_size || p->slot_size < 16 || p->slot_size > (64u << 20)) {
        return -EINVAL;
    }
    dev = calloc(1, sizeof(*dev));
    if (NULL == dev) {
        return -ENOMEM;
    }
    pthread_mutex_init(&dev->lock, NULL);
    dev->stamp = p->stamp;
    dev->timeout = 0 == p->ofi_timeout ? 60 : p->ofi_timeout;
    dev->slot_size = p->slot_size;
    dev->msg_max = (sizeof(bip_ofi_msg_hdr_t) + p->slot_size + 7u) & ~(size_t) 7u;
    /* a fragment's byte count travels in 32 bits of CQ data */
    dev->frag_size = p->frag_size > (1u << 30) ? (1u << 30) : p->frag_size;
    dev->max_posted = p->max_posted;
    dev->next_gen = 1;
    dev->next_key = 1;
    dev->posted = calloc(p->max_posted, sizeof(*dev->posted));
    rxsize = 64 * dev->msg_max;
    if (rxsize < (1u << 20)) {
        rxsize = 1u << 20;
    }
    /* every message takes at least 16 bytes of a buffer */
    dev->ring_cap = (uint32_t) (BIP_OFI_NRX * (rxsize / 16) + BIP_OFI_POLL);
    dev->ring = calloc(dev->ring_cap, sizeof(*dev->ring));
    if (NULL == dev->posted || NULL == dev->ring) {
        rc = -ENOMEM;
        goto fail;
    }
    for (int i = 0; i < BIP_OFI_NRX; ++i) {
        dev->rx[i].ctx.kind = BIP_OFI_CTX_RX;
        dev->rx[i].size = rxsize;
        if (0 != posix_memalign((void **) &dev->rx[i].mem, 64, rxsize)) {
            rc = -ENOMEM;
            goto fail;
        }
    }

    rc = bip_ofi_getinfo(p, &dev->f.info);
    if (0 != rc) {
        goto fail;
    }
    dev->inject_size = dev->f.info->tx_attr->inject_size;
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
            (void) fi_close(&dev->posted[i].mr->fid);
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
