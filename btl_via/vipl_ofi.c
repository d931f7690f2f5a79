/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/*
 * vipl_ofi.c: the "ofi" VIPL provider over libfabric, for peers on other
 * hosts.
 *
 * The mapping: NIC = fabric + domain of one libfabric provider (tcp
 * unless told otherwise) with one event queue and one passive endpoint
 * that listens for connection requests; protection tag = the domain;
 * memory handle = the registration's remote key (high 32 bits) and its
 * slot in this NIC's table (low 32 bits); VI = a connected endpoint
 * (FI_EP_MSG) with its own completion queue; send / receive descriptor
 * = fi_sendmsg / fi_recvmsg (posted receives stay the BTL's credits);
 * RDMA write [with immediate] = fi_writemsg [FI_REMOTE_CQ_DATA]; RDMA
 * read = fi_readmsg.
 *
 * VIA's peer-to-peer connection over libfabric's client/server one: of
 * the two VIs of a pair, the one with the smaller (listening address,
 * discriminator) calls fi_connect with connection data naming both VIs;
 * the other accepts the request on its passive endpoint once it asked
 * for the same connection itself (a request that comes earlier waits,
 * on the VI or, when the VI does not exist yet, on the NIC, where
 * vipl_connect_wait reports it).  When the other side asks first, it
 * rings the connector: a connection request flagged as a doorbell on a
 * bare endpoint, which the connector refuses after noting it (its
 * connect_wait reports it when the VI does not exist); the connector then
 * connects as usual.  Receives posted before the endpoint exists are
 * posted when it is created, before fi_connect / fi_accept.
 *
 * An RDMA write with immediate data consumes a receive descriptor in
 * VIA (and in verbs); libfabric's remote CQ data does not (unless the
 * provider asks for FI_RX_CQ_DATA, which this provider does not accept).
 * So the notice completes the oldest posted receive descriptor that is
 * not lent already, while its buffer stays posted at libfabric (the
 * descriptor is "lent"); re-posting a lent descriptor only returns it.
 * A message that lands in a lent buffer is held back, with every
 * completion after it (order), until the descriptor is re-posted.  The
 * notice reports the length libfabric gives (the tcp provider: 0; verbs
 * would give the write's length).
 *
 * Progress: the tcp provider moves the data of an RMA target only when
 * that endpoint's CQ is read, so VipCQDone reads the CQ of every VI
 * attached to the CQ group, not only those with a receive expected.
 *
 * Inline sends: the CQ is bound with FI_SELECTIVE_COMPLETION where the
 * provider takes it, and an inline send posted while no other send of
 * the VI waits for its completion goes with FI_INJECT and no
 * FI_COMPLETION: its buffer is free when fi_sendmsg returns, so the
 * descriptor completes at once (in order: nothing before it is pending)
 * and no CQ entry is made or read for it.
 *
 * Files: vipl_ofi.h (the objects), this one (NIC, memory, CQ groups,
 * VIs), vipl_ofi_cm.c (connection events), vipl_ofi_xfer.c (data
 * transfer and completions).
 */

#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
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

/* ---- NIC ---------------------------------------------------------------- */

static void vipl_ofi_close_fid(struct fid *f)
{
    if (NULL != f) {
        (void) fi_close(f);
    }
}

static void vipl_ofi_close_nic(vipl_nic_t *base)
{
    vipl_ofi_nic_t *nic = (vipl_ofi_nic_t *) base;

    /* registrations before the domain that holds them */
    for (uint32_t i = 0; NULL != nic->mrs && i < nic->max_regs; ++i) {
        if (nic->mrs[i].in_use) {
            tc_ofi_mr_close(&nic->guard, nic->mrs[i].mr);
        }
    }
    if (NULL != nic->pep) {
        vipl_ofi_close_fid(&nic->pep->fid);
    }
    if (NULL != nic->eq) {
        vipl_ofi_close_fid(&nic->eq->fid);
    }
    if (NULL != nic->domain) {
        vipl_ofi_close_fid(&nic->domain->fid);
    }
    if (NULL != nic->fabric) {
        vipl_ofi_close_fid(&nic->fabric->fid);
    }
    if (NULL != nic->info) {
        fi_freeinfo(nic->info);
    }
    for (uint32_t i = 0; i < nic->num_waiting; ++i) {
        if (NULL != nic->waiting[i].info) {
            fi_freeinfo(nic->waiting[i].info);
        }
    }
    free(nic->waiting);
    pthread_mutex_destroy(&nic->lock);
    tc_ofi_guard_fini(&nic->guard);
    free(nic->mrs);
    free(nic->vis);
    free(nic);
}

/* the entries of provider prov for our endpoints (0, *list non-NULL) */
static int vipl_ofi_list(const char *prov, struct fi_info **list)
{
    struct fi_info *hints = fi_allocinfo();
    int ret;

    *list = NULL;
    if (NULL == hints) {
        return -FI_ENOMEM;
    }
    hints->ep_attr->type = FI_EP_MSG;
    hints->caps = FI_MSG | FI_RMA;
    hints->mode = 0; /* no FI_CONTEXT, no FI_RX_CQ_DATA */
    hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
    hints->domain_attr->threading = FI_THREAD_SAFE;
    hints->fabric_attr->prov_name = strdup(prov);
    ret = fi_getinfo(VIPL_OFI_VERSION, NULL, NULL, 0, hints, list);
    fi_freeinfo(hints);
    if (0 == ret && NULL == *list) {
        ret = -FI_ENODATA;
    }
    return ret;
}

static vipl_return_t vipl_ofi_open_nic(const vipl_open_params_t *params, vipl_nic_t **nicp)
{
    const char *prov =
        NULL != params && NULL != params->fabric_provider ? params->fabric_provider : "tcp";
    struct fi_info *list = NULL, *pick = NULL;
    struct fi_eq_attr eqa;
    vipl_ofi_nic_t *nic;
    size_t salen;
    int ret;

    if (NULL == params || NULL == nicp) {
        return VIPL_INVALID_PARAMETER;
    }
    /* "tcp" is the tcp provider's current code: libfabric 1.17 lists it
     * as "net" (renamed tcp in 1.18) beside the older tcp provider, which
     * writes a byte to its CQ's wake-up pipe for every completion and
     * reads it back in the next poll (docs/btl_via.md, section 9); 1.18
     * and later have no "net" */
    ret = -FI_ENODATA;
    if (0 == strcmp(prov, "tcp")) {
        ret = vipl_ofi_list("net", &list);
    }
    if (0 != ret) {
        ret = vipl_ofi_list(prov, &list);
    }
    if (0 != ret) {
        return VIPL_NO_DEVICE;
    }
    /* a socket address (it travels in the VI address) and 4 bytes of
     * remote CQ data (the immediate); the domain named by params->device
     * (tcp: the interface), else IPv4 before IPv6, loopback last */
    for (int pass = 0; pass < 3 && NULL == pick; ++pass) {
        for (struct fi_info *i = list; NULL != i && NULL == pick; i = i->next) {
            const char *dom = i->domain_attr->name;

            if (NULL == i->src_addr || i->src_addrlen > VIPL_OFI_SA_BYTES ||
                i->domain_attr->cq_data_size < 4) {
                continue;
            }
            if (NULL != params->device) {
                pick = NULL != dom && 0 == strcmp(dom, params->device) ? i : NULL;
            } else if (2 == pass ||
                       (NULL != dom && 0 != strcmp(dom, "lo") &&
                        (1 == pass || AF_INET == ((struct sockaddr *) i->src_addr)->sa_family))) {
                pick = i;
            }
        }
    }
    nic = NULL != pick ? calloc(1, sizeof(*nic)) : NULL;
    if (NULL == nic) {
        fi_freeinfo(list);
        return NULL == pick ? VIPL_NO_DEVICE : VIPL_ERROR_RESOURCE;
    }
    nic->info = fi_dupinfo(pick);
    fi_freeinfo(list);
    pthread_mutex_init(&nic->lock, NULL);
    nic->max_regs = params->max_regs ? params->max_regs : 4096;
    nic->mrs = calloc(nic->max_regs, sizeof(*nic->mrs));
    if (NULL == nic->info || NULL == nic->mrs || 0 != tc_ofi_guard_init(&nic->guard)) {
        vipl_ofi_close_nic(&nic->super);
        return VIPL_ERROR_RESOURCE;
    }
    if (0 == nic->info->domain_attr->mr_mode) {
        /* the provider needs none of the modes: ask for RMA by virtual
         * address (the BTL's remote addresses are virtual) */
        nic->info->domain_attr->mr_mode = FI_MR_VIRT_ADDR;
    }
    if (!(nic->info->domain_attr->mr_mode & FI_MR_VIRT_ADDR)) {
        vipl_ofi_close_nic(&nic->super);
        return VIPL_NO_DEVICE;
    }
    nic->prov_key = 0 != (nic->info->domain_attr->mr_mode & FI_MR_PROV_KEY);
    nic->mr_local = 0 != (nic->info->domain_attr->mr_mode & FI_MR_LOCAL);
    nic->next_key = 1;
    memset(&eqa, 0, sizeof(eqa));
    eqa.size = 1024;
    eqa.wait_obj = FI_WAIT_NONE;
    if (0 != fi_fabric(nic->info->fabric_attr, &nic->fabric, NULL) ||
        0 != fi_domain(nic->fabric, nic->info, &nic->domain, NULL)) {
        vipl_ofi_close_nic(&nic->super);
        return VIPL_NO_DEVICE;
    }
    if (0 != fi_eq_open(nic->fabric, &eqa, &nic->eq, NULL)) {
        eqa.wait_obj = FI_WAIT_UNSPEC;
        if (0 != fi_eq_open(nic->fabric, &eqa, &nic->eq, NULL)) {
            nic->eq = NULL;
            vipl_ofi_close_nic(&nic->super);
            return VIPL_ERROR_RESOURCE;
        }
    }
    salen = sizeof(nic->me.sa);
    if (0 != fi_passive_ep(nic->fabric, nic->info, &nic->pep, NULL) ||
        0 != fi_pep_bind(nic->pep, &nic->eq->fid, 0) || 0 != fi_listen(nic->pep) ||
        0 != fi_getname(&nic->pep->fid, nic->me.sa, &salen) || salen > sizeof(nic->me.sa)) {
        vipl_ofi_close_nic(&nic->super);
        return VIPL_NOT_REACHABLE;
    }
    nic->me.magic = VIPL_OFI_ADDR_MAGIC;
    nic->me.sa_len = (uint32_t) salen;
    nic->super.ops = &vipl_ofi_ops;
    nic->super.attrs.provider = "ofi";
    nic->super.attrs.max_transfer_size =
        params->max_transfer_size ? params->max_transfer_size : (4u << 20);
    if (nic->super.attrs.max_transfer_size > nic->info->ep_attr->max_msg_size) {
        nic->super.attrs.max_transfer_size = (uint32_t) nic->info->ep_attr->max_msg_size;
    }
    nic->super.attrs.max_descriptors =
        (uint32_t) VIPL_OFI_MIN(nic->info->tx_attr->size, nic->info->rx_attr->size);
    nic->super.attrs.max_segs =
        (uint32_t) VIPL_OFI_MIN((size_t) VIPL_MAX_DATA_SEGS, nic->info->tx_attr->iov_limit);
    nic->super.attrs.max_inline =
        (uint32_t) VIPL_OFI_MIN(nic->info->tx_attr->inject_size, (size_t) 256);
    nic->super.attrs.rdma_read =
        0 != (nic->info->caps & FI_READ) || 0 != (nic->info->caps & FI_RMA);
    nic->super.attrs.local_only = false;
    nic->super.attrs.local_unregistered = !nic->mr_local;
    nic->super.attrs.connect_wait = true;
    *nicp = &nic->super;
    return VIPL_SUCCESS;
}

static vipl_return_t vipl_ofi_create_ptag(vipl_nic_t *base, vipl_ptag_t **ptag)
{
    vipl_ofi_ptag_t *p = calloc(1, sizeof(*p));

    if (NULL == p) {
        return VIPL_ERROR_RESOURCE;
    }
    p->super.nic = base;
    *ptag = &p->super;
    return VIPL_SUCCESS;
}

static void vipl_ofi_destroy_ptag(vipl_ptag_t *ptag)
{
    free(ptag);
}

/* ---- memory --------------------------------------------------------------- */

static vipl_return_t vipl_ofi_register_mem(vipl_nic_t *base, void *addr, size_t len,
                                           const vipl_mem_attrs_t *attrs, vipl_mem_handle_t *handle)
{
    vipl_ofi_nic_t *nic = (vipl_ofi_nic_t *) base;
    uint64_t access = FI_SEND | FI_RECV | FI_READ | FI_WRITE;
    struct fid_mr *mr = NULL;
    uint32_t slot, key;
    uint64_t k;

    if (NULL == addr || 0 == len || NULL == attrs || NULL == attrs->ptag ||
        attrs->ptag->nic != base || NULL == handle) {
        return VIPL_INVALID_PARAMETER;
    }
    if (attrs->enable_rdma_write) {
        access |= FI_REMOTE_WRITE;
    }
    if (attrs->enable_rdma_read) {
        access |= FI_REMOTE_READ;
    }
    pthread_mutex_lock(&nic->lock);
    for (slot = 0; slot < nic->max_regs; ++slot) {
        uint32_t s = (nic->reg_hint + slot) % nic->max_regs;
        if (!nic->mrs[s].in_use) {
            slot = s;
            break;
        }
    }
    if (slot >= nic->max_regs || nic->mrs[slot].in_use) {
        pthread_mutex_unlock(&nic->lock);
        return VIPL_ERROR_RESOURCE;
    }
    key = nic->next_key++;
    if (0 != tc_ofi_mr_reg(&nic->guard, nic->domain, addr, len, access, key, &mr)) {
        pthread_mutex_unlock(&nic->lock);
        return VIPL_ERROR_RESOURCE;
    }
    k = nic->prov_key ? fi_mr_key(mr) : key;
    if (k > UINT32_MAX) {
        /* the handle keeps 32 bits of key */
        tc_ofi_mr_close(&nic->guard, mr);
        pthread_mutex_unlock(&nic->lock);
        return VIPL_ERROR_NOT_SUPPORTED;
    }
    nic->mrs[slot].mr = mr;
    nic->mrs[slot].desc = fi_mr_desc(mr);
    nic->mrs[slot].base = (uintptr_t) addr;
    nic->mrs[slot].len = len;
    nic->mrs[slot].key = (uint32_t) k;
    nic->mrs[slot].in_use = true;
    nic->reg_hint = slot + 1;
    pthread_mutex_unlock(&nic->lock);
    *handle = (k << 32) | (uint64_t) (slot + 1);
    return VIPL_SUCCESS;
}

static vipl_return_t vipl_ofi_deregister_mem(vipl_nic_t *base, void *addr, vipl_mem_handle_t handle)
{
    vipl_ofi_nic_t *nic = (vipl_ofi_nic_t *) base;
    uint64_t slot = (handle & 0xffffffffu);
    struct fid_mr *mr = NULL;

    pthread_mutex_lock(&nic->lock);
    if (slot >= 1 && slot <= nic->max_regs && nic->mrs[slot - 1].in_use &&
        nic->mrs[slot - 1].base == (uintptr_t) addr &&
        nic->mrs[slot - 1].key == (uint32_t) (handle >> 32)) {
        mr = nic->mrs[slot - 1].mr;
        memset(&nic->mrs[slot - 1], 0, sizeof(nic->mrs[slot - 1]));
    }
    pthread_mutex_unlock(&nic->lock);
    if (NULL == mr) {
        return VIPL_INVALID_PARAMETER;
    }
    tc_ofi_mr_close(&nic->guard, mr);
    return VIPL_SUCCESS;
}

/* the local descriptor of a data segment; false: not registered here */
/* ---- completion queues ---------------------------------------------------- */

static vipl_return_t vipl_ofi_create_cq(vipl_nic_t *base, uint32_t entries, vipl_cq_t **cqp)
{
    vipl_ofi_cq_t *cq = calloc(1, sizeof(*cq));

    (void) entries;
    if (NULL == cq) {
        return VIPL_ERROR_RESOURCE;
    }
    cq->super.nic = base;
    *cqp = &cq->super;
    return VIPL_SUCCESS;
}

static void vipl_ofi_destroy_cq(vipl_cq_t *base)
{
    vipl_ofi_cq_t *cq = (vipl_ofi_cq_t *) base;

    free(cq->vis);
    free(cq);
}

/* under the VI's lock: the oldest completion held back goes out, and
 * those behind it, as long as none waits for a lent descriptor *//* ---- VIs -------------------------------------------------------------------- */

static vipl_return_t vipl_ofi_create_vi(vipl_nic_t *base, const vipl_vi_attrs_t *attrs,
                                        vipl_cq_t *send_cq, vipl_cq_t *recv_cq, vipl_vi_t **vip)
{
    vipl_ofi_nic_t *nic = (vipl_ofi_nic_t *) base;
    vipl_ofi_cq_t *group = (vipl_ofi_cq_t *) (NULL != recv_cq ? recv_cq : send_cq);
    struct fi_cq_attr cqa;
    vipl_ofi_vi_t *vi;
    uint32_t index;

    if (NULL == attrs || NULL == vip) {
        return VIPL_INVALID_PARAMETER;
    }
    if (NULL == attrs->ptag || attrs->ptag->nic != base) {
        return VIPL_INVALID_PTAG;
    }
    if (VIPL_RELIABLE_DELIVERY != attrs->reliability) {
        return VIPL_INVALID_RELIABILITY_LEVEL;
    }
    if (0 == attrs->recv_depth || 0 == attrs->send_depth ||
        attrs->max_transfer_size > nic->super.attrs.max_transfer_size) {
        return VIPL_INVALID_PARAMETER;
    }
    vi = calloc(1, sizeof(*vi));
    if (NULL == vi) {
        return VIPL_ERROR_RESOURCE;
    }
    vi->ring = calloc(attrs->recv_depth, sizeof(*vi->ring));
    vi->held = calloc(attrs->recv_depth, sizeof(*vi->held));
    memset(&cqa, 0, sizeof(cqa));
    cqa.format = FI_CQ_FORMAT_DATA;
    cqa.wait_obj = FI_WAIT_NONE;
    cqa.size = (size_t) attrs->send_depth + attrs->recv_depth + 16;
    if (NULL == vi->ring || NULL == vi->held || 0 != fi_cq_open(nic->domain, &cqa, &vi->cq, NULL)) {
        free(vi->ring);
        free(vi->held);
        free(vi);
        return VIPL_ERROR_RESOURCE;
    }
    pthread_mutex_init(&vi->lock, NULL);
    vi->nic = nic;
    vi->send_depth = attrs->send_depth;
    vi->recv_depth = attrs->recv_depth;
    vi->state = VIPL_STATE_IDLE;
    vi->super.nic = base;

    pthread_mutex_lock(&nic->lock);
    for (index = 0; index < nic->cap_vis && NULL != nic->vis[index]; ++index) {
    }
    if (index == nic->cap_vis) {
        uint32_t cap = nic->cap_vis ? 2 * nic->cap_vis : 16;
        vipl_ofi_vi_t **v = cap <= VIPL_OFI_MAX_VIS ? realloc(nic->vis, cap * sizeof(*v)) : NULL;

        if (NULL == v) {
            goto fail_locked;
        }
        memset(v + nic->cap_vis, 0, (cap - nic->cap_vis) * sizeof(*v));
        nic->vis = v;
        nic->cap_vis = cap;
    }
    if (NULL != group && group->count == group->cap) {
        uint32_t cap = group->cap ? 2 * group->cap : 16;
        vipl_ofi_vi_t **v = realloc(group->vis, cap * sizeof(*v));

        if (NULL == v) {
            goto fail_locked;
        }
        group->vis = v;
        group->cap = cap;
    }
    if (attrs->has_discriminator && NULL != vipl_ofi_vi_named(nic, attrs->discriminator)) {
        goto fail_locked;
    }
    vi->index = index;
    vi->disc = attrs->has_discriminator ? attrs->discriminator : index;
    nic->vis[index] = vi;
    if (NULL != group) {
        vi->group = group;
        group->vis[group->count++] = vi;
    }
    pthread_mutex_unlock(&nic->lock);
    *vip = &vi->super;
    return VIPL_SUCCESS;

fail_locked:
    pthread_mutex_unlock(&nic->lock);
    (void) fi_close(&vi->cq->fid);
    pthread_mutex_destroy(&vi->lock);
    free(vi->ring);
    free(vi->held);
    free(vi);
    return VIPL_ERROR_RESOURCE;
}

static void vipl_ofi_vi_address(vipl_vi_t *base, vipl_vi_address_t *addr)
{
    vipl_ofi_vi_t *vi = (vipl_ofi_vi_t *) base;
    vipl_ofi_addr_t a = vi->nic->me;

    a.vi_index = vi->disc;
    memset(addr, 0, sizeof(*addr));
    memcpy(addr->bytes, &a, sizeof(a));
}

static void vipl_ofi_nic_vi_address(vipl_nic_t *base, uint32_t discriminator,
                                    vipl_vi_address_t *addr)
{
    vipl_ofi_addr_t a = ((vipl_ofi_nic_t *) base)->me;

    a.vi_index = discriminator;
    memset(addr, 0, sizeof(*addr));
    memcpy(addr->bytes, &a, sizeof(a));
}

static void vipl_ofi_set_names(vipl_nic_t *base, uint64_t my_name, vipl_resolve_fn_t resolve,
                               void *ctx)
{
    vipl_ofi_nic_t *nic = (vipl_ofi_nic_t *) base;

    pthread_mutex_lock(&nic->lock);
    nic->my_name = my_name;
    nic->resolve = resolve;
    nic->resolve_ctx = ctx;
    pthread_mutex_unlock(&nic->lock);
}

/* a peer NIC's address without its VI (another job's process: the VI it
 * makes for us is named by its first request or doorbell) */
static bool vipl_ofi_any_vi_address(const vipl_vi_address_t *of_nic, vipl_vi_address_t *out)
{
    vipl_ofi_addr_t a;

    memcpy(&a, of_nic->bytes, sizeof(a));
    if (VIPL_OFI_ADDR_MAGIC != a.magic || 0 == a.sa_len || a.sa_len > VIPL_OFI_SA_BYTES) {
        return false;
    }
    a.vi_index = VIPL_DISC_ANY;
    memset(out, 0, sizeof(*out));
    memcpy(out->bytes, &a, sizeof(a));
    return true;
}

/* VipConnectWait, polled: a request or doorbell for a VI not made yet */
static vipl_return_t vipl_ofi_connect_wait(vipl_nic_t *base, uint32_t *discriminator)
{
    vipl_ofi_nic_t *nic = (vipl_ofi_nic_t *) base;
    vipl_return_t rc = VIPL_NOT_DONE;

    pthread_mutex_lock(&nic->lock);
    if (nic->connecting > 0 || 0 == (++nic->wait_polls % VIPL_OFI_WAIT_EVERY)) {
        vipl_ofi_poll_eq(nic);
    }
    for (uint32_t i = 0; i < nic->num_waiting; ++i) {
        if (!nic->waiting[i].reported) {
            nic->waiting[i].reported = true;
            *discriminator = nic->waiting[i].conn.target_vi;
            rc = VIPL_SUCCESS;
            break;
        }
    }
    pthread_mutex_unlock(&nic->lock);
    return rc;
}

/* under the NIC's and the VI's lock: ask the connector of the pair to
 * connect to us (a request it refuses after noting it) */
static vipl_return_t vipl_ofi_ring(vipl_ofi_vi_t *vi, const vipl_ofi_addr_t *a, uint32_t magic)
{
    vipl_ofi_nic_t *nic = vi->nic;
    struct fi_info *hints = fi_dupinfo(nic->info), *info = NULL;
    vipl_ofi_conn_t conn;
    vipl_return_t rc = VIPL_NOT_REACHABLE;

    if (NULL != vi->bell) {
        fi_freeinfo(hints);
        return VIPL_SUCCESS;
    }
    if (NULL == hints) {
        return VIPL_ERROR_RESOURCE;
    }
    free(hints->src_addr);
    hints->src_addr = NULL;
    hints->src_addrlen = 0;
    hints->dest_addr = malloc(a->sa_len);
    if (NULL == hints->dest_addr) {
        fi_freeinfo(hints);
        return VIPL_ERROR_RESOURCE;
    }
    memcpy(hints->dest_addr, a->sa, a->sa_len);
    hints->dest_addrlen = a->sa_len;
    memset(&conn, 0, sizeof(conn));
    conn.magic = magic;
    conn.target_vi = a->vi_index;
    conn.source_vi = vi->disc;
    conn.sa_len = nic->me.sa_len;
    memcpy(conn.sa, nic->me.sa, sizeof(conn.sa));
    conn.name = nic->my_name;
    if (0 == fi_getinfo(VIPL_OFI_VERSION, NULL, NULL, 0, hints, &info) && NULL != info &&
        0 ==
            fi_endpoint(nic->domain, info, &vi->bell,
                        (void *) (VIPL_OFI_BELL_CTX | (uintptr_t) (vi->index + 1)))) {
        if (0 == fi_ep_bind(vi->bell, &nic->eq->fid, 0) &&
            0 == fi_ep_bind(vi->bell, &vi->cq->fid, FI_TRANSMIT | FI_RECV) &&
            0 == fi_enable(vi->bell) && 0 == fi_connect(vi->bell, a->sa, &conn, sizeof(conn))) {
            rc = VIPL_SUCCESS;
        } else {
            (void) fi_close(&vi->bell->fid);
            vi->bell = NULL;
        }
    } else {
        vi->bell = NULL;
    }
    fi_freeinfo(hints);
    if (NULL != info) {
        fi_freeinfo(info);
    }
    return rc;
}

/* the connector of a pair: the smaller (address, VI index); a peer of
 * another job (VI not known: VIPL_DISC_ANY on both sides) listens on
 * another address than ours, which decides alone */
static bool vipl_ofi_is_connector(const vipl_ofi_addr_t *me, const vipl_ofi_addr_t *peer)
{
    int c = memcmp(me->sa, peer->sa, VIPL_OFI_SA_BYTES);

    if (VIPL_DISC_ANY == peer->vi_index) {
        return c < 0;
    }
    return c < 0 || (0 == c && me->vi_index < peer->vi_index);
}

static vipl_return_t vipl_ofi_connect_peer_request(vipl_vi_t *base, const vipl_vi_address_t *remote)
{
    vipl_ofi_vi_t *vi = (vipl_ofi_vi_t *) base;
    vipl_ofi_nic_t *nic = vi->nic;
    vipl_ofi_addr_t a, me = nic->me;
    vipl_return_t rc = VIPL_SUCCESS;

    if (NULL == remote) {
        return VIPL_INVALID_PARAMETER;
    }
    memcpy(&a, remote->bytes, sizeof(a));
    if (VIPL_OFI_ADDR_MAGIC != a.magic || 0 == a.sa_len || a.sa_len > VIPL_OFI_SA_BYTES) {
        return VIPL_INVALID_PARAMETER;
    }
    me.vi_index = vi->disc;
    pthread_mutex_lock(&nic->lock);
    pthread_mutex_lock(&vi->lock);
    if (VIPL_STATE_IDLE != vi->state) {
        pthread_mutex_unlock(&vi->lock);
        pthread_mutex_unlock(&nic->lock);
        return VIPL_INVALID_STATE;
    }
    vi->remote = a;
    vi->have_remote = true;
    vi->state = VIPL_STATE_PENDING_CONNECT;
    ++nic->connecting;
    if (vipl_ofi_is_connector(&me, &a)) {
        vipl_ofi_conn_t unused;

        /* requests and doorbells that came before the VI: we connect */
        (void) vipl_ofi_wait_take(nic, vi->disc, NULL, &unused);
        struct fi_info *hints = fi_dupinfo(nic->info), *info = NULL;
        vipl_ofi_conn_t conn;

        if (NULL != hints) {
            free(hints->src_addr);
            hints->src_addr = NULL;
            hints->src_addrlen = 0;
            hints->dest_addr = malloc(a.sa_len);
            if (NULL != hints->dest_addr) {
                memcpy(hints->dest_addr, a.sa, a.sa_len);
                hints->dest_addrlen = a.sa_len;
            }
        }
        memset(&conn, 0, sizeof(conn));
        conn.magic = VIPL_OFI_CONN_MAGIC;
        conn.target_vi = a.vi_index;
        conn.source_vi = vi->disc;
        conn.sa_len = me.sa_len;
        memcpy(conn.sa, me.sa, sizeof(conn.sa));
        conn.name = nic->my_name;
        if (NULL == hints || NULL == hints->dest_addr ||
            0 != fi_getinfo(VIPL_OFI_VERSION, NULL, NULL, 0, hints, &info) || NULL == info ||
            VIPL_SUCCESS != vipl_ofi_ep_open(vi, info) ||
            0 != fi_connect(vi->ep, a.sa, &conn, sizeof(conn))) {
            vipl_ofi_fail_locked(vi, VIPL_VIERR_PEER_GONE);
            --nic->connecting;
            rc = VIPL_NOT_REACHABLE;
        }
        if (NULL != hints) {
            fi_freeinfo(hints);
        }
        if (NULL != info) {
            fi_freeinfo(info);
        }
        pthread_mutex_unlock(&vi->lock);
    } else {
        /* the peer asked first: its request waits on the VI or, made
         * before the VI, on the NIC; else we ring the connector */
        vipl_ofi_conn_t conn, early_conn;
        struct fi_info *req = vi->connreq;
        struct fi_info *early = vipl_ofi_wait_take(nic, vi->disc, &a, &early_conn);

        if (NULL != req) {
            conn = vi->connreq_data;
            vi->connreq = NULL;
            if (NULL != early) {
                (void) fi_reject(nic->pep, early->handle, NULL, 0);
                fi_freeinfo(early);
            }
        } else if (NULL != early) {
            req = early;
            conn = early_conn;
        }
        if (NULL != req) {
            pthread_mutex_unlock(&vi->lock);
            vipl_ofi_accept(vi, req, &conn);
        } else {
            if (VIPL_SUCCESS != vipl_ofi_ring(vi, &a, VIPL_OFI_BELL_MAGIC)) {
                vipl_ofi_fail_locked(vi, VIPL_VIERR_PEER_GONE);
                --nic->connecting;
                rc = VIPL_NOT_REACHABLE;
            }
            pthread_mutex_unlock(&vi->lock);
        }
    }
    pthread_mutex_unlock(&nic->lock);
    return rc;
}

static vipl_return_t vipl_ofi_connect_peer_done(vipl_vi_t *base)
{
    vipl_ofi_vi_t *vi = (vipl_ofi_vi_t *) base;
    int state;

    pthread_mutex_lock(&vi->nic->lock);
    vipl_ofi_poll_eq(vi->nic);
    pthread_mutex_unlock(&vi->nic->lock);
    pthread_mutex_lock(&vi->lock);
    state = vi->state;
    pthread_mutex_unlock(&vi->lock);
    switch (state) {
    case VIPL_STATE_CONNECTED:
        return VIPL_SUCCESS;
    case VIPL_STATE_PENDING_CONNECT:
        return VIPL_NOT_DONE;
    case VIPL_STATE_ERROR:
        return VIPL_NOT_REACHABLE;
    default:
        return VIPL_INVALID_STATE;
    }
}

/* VipDisconnect: goodbye first (a refused connection request that names
 * the VI: the peer marks the connection's end as orderly), then, once the
 * peer refused it (it noted it) or after VIPL_OFI_BYE_WAIT_US, fi_shutdown */
static vipl_return_t vipl_ofi_disconnect(vipl_vi_t *base)
{
    vipl_ofi_vi_t *vi = (vipl_ofi_vi_t *) base;
    vipl_ofi_nic_t *nic = vi->nic;
    bool said_bye = false;

    pthread_mutex_lock(&nic->lock);
    pthread_mutex_lock(&vi->lock);
    vi->closing = true;
    if (NULL != vi->ep && VIPL_STATE_CONNECTED == vi->state && vi->have_remote) {
        vipl_ofi_bell_close(vi);
        said_bye = VIPL_SUCCESS == vipl_ofi_ring(vi, &vi->remote, VIPL_OFI_BYE_MAGIC);
    }
    pthread_mutex_unlock(&vi->lock);
    if (said_bye) {
        struct timespec t0, t;

        clock_gettime(CLOCK_MONOTONIC, &t0);
        for (;;) {
            vipl_ofi_poll_eq(nic);
            if (NULL == vi->bell) {
                break;
            }
            clock_gettime(CLOCK_MONOTONIC, &t);
            if ((t.tv_sec - t0.tv_sec) * 1000000L + (t.tv_nsec - t0.tv_nsec) / 1000 >
                VIPL_OFI_BYE_WAIT_US) {
                break;
            }
            sched_yield();
        }
    }
    pthread_mutex_lock(&vi->lock);
    vipl_ofi_bell_close(vi);
    if (NULL != vi->ep && VIPL_STATE_ERROR != vi->state) {
        (void) fi_shutdown(vi->ep, 0);
    }
    if (VIPL_STATE_IDLE != vi->state) {
        vipl_ofi_fail_locked(vi, VIPL_VIERR_DISCONNECTED);
    }
    pthread_mutex_unlock(&vi->lock);
    pthread_mutex_unlock(&nic->lock);
    return VIPL_SUCCESS;
}

static void vipl_ofi_destroy_vi(vipl_vi_t *base)
{
    vipl_ofi_vi_t *vi = (vipl_ofi_vi_t *) base;
    vipl_ofi_nic_t *nic = vi->nic;

    pthread_mutex_lock(&nic->lock);
    nic->vis[vi->index] = NULL;
    if (VIPL_STATE_PENDING_CONNECT == vi->state && nic->connecting > 0) {
        --nic->connecting;
    }
    if (NULL != vi->group) {
        for (uint32_t i = 0; i < vi->group->count; ++i) {
            if (vi->group->vis[i] == vi) {
                vi->group->vis[i] = vi->group->vis[--vi->group->count];
                break;
            }
        }
        vi->group->next = 0;
    }
    if (NULL != vi->connreq) {
        (void) fi_reject(nic->pep, vi->connreq->handle, NULL, 0);
        fi_freeinfo(vi->connreq);
    }
    vipl_ofi_bell_close(vi);
    pthread_mutex_unlock(&nic->lock);
    if (NULL != vi->ep) {
        (void) fi_close(&vi->ep->fid);
    }
    (void) fi_close(&vi->cq->fid);
    pthread_mutex_destroy(&vi->lock);
    free(vi->ring);
    free(vi->held);
    free(vi);
}

static vipl_return_t vipl_ofi_query_vi(vipl_vi_t *base, vipl_vi_state_t *state,
                                       vipl_vi_error_t *error)
{
    vipl_ofi_vi_t *vi = (vipl_ofi_vi_t *) base;

    pthread_mutex_lock(&vi->nic->lock);
    vipl_ofi_poll_eq(vi->nic);
    pthread_mutex_unlock(&vi->nic->lock);
    pthread_mutex_lock(&vi->lock);
    if (NULL != state) {
        *state = (vipl_vi_state_t) vi->state;
    }
    if (NULL != error) {
        *error = (vipl_vi_error_t) vi->error;
    }
    pthread_mutex_unlock(&vi->lock);
    return VIPL_SUCCESS;
}

const vipl_ops_t vipl_ofi_ops = {
    .name = "ofi",
    .open_nic = vipl_ofi_open_nic,
    .close_nic = vipl_ofi_close_nic,
    .create_ptag = vipl_ofi_create_ptag,
    .destroy_ptag = vipl_ofi_destroy_ptag,
    .register_mem = vipl_ofi_register_mem,
    .deregister_mem = vipl_ofi_deregister_mem,
    .mem_alloc = vipl_host_mem_alloc,
    .mem_free = vipl_host_mem_free,
    .create_cq = vipl_ofi_create_cq,
    .destroy_cq = vipl_ofi_destroy_cq,
    .create_vi = vipl_ofi_create_vi,
    .destroy_vi = vipl_ofi_destroy_vi,
    .vi_address = vipl_ofi_vi_address,
    .connect_peer_request = vipl_ofi_connect_peer_request,
    .nic_vi_address = vipl_ofi_nic_vi_address,
    .connect_wait = vipl_ofi_connect_wait,
    .connect_peer_done = vipl_ofi_connect_peer_done,
    .disconnect = vipl_ofi_disconnect,
    .post_send = vipl_ofi_post_send,
    .post_inline = vipl_ofi_post_inline,
    .post_recv = vipl_ofi_post_recv,
    .send_done = vipl_ofi_send_done,
    .recv_done = vipl_ofi_recv_done,
    .cq_done = vipl_ofi_cq_done,
    .query_vi = vipl_ofi_query_vi,
    .set_names = vipl_ofi_set_names,
    .any_vi_address = vipl_ofi_any_vi_address,
};
