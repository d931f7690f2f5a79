/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * btl_sci_rdma.c: memory registration through common/rcache and btl_put /
 * btl_get through the device's DMA engine (CHEMPI's zero-copy protocol:
 * ob1's RGET/PUT handshake travels in the rings, the data moves once,
 * from the user buffer of one process to the user buffer of the other).
 */

#include "opal_config.h"

#include <stdlib.h>
#include <string.h>

#include "tc_ompi.h"

#include "btl_sci.h"
#include "btl_sci_endpoint.h"

/* rcache provider: a registration is a device memory handle, made with
 * every open provider (shm names the owner, ofi adds its remote key) */
static int mca_btl_sci_rcache_reg(void *ctx, void *base, size_t len, void **handle)
{
    mca_btl_sci_component_t *c = &mca_btl_sci_component;
    sci_mem_handle_t *h = calloc(1, sizeof(*h));

    (void) ctx;
    if (NULL == h) {
        return -ENOMEM;
    }
    if ((NULL != c->sd && SCI_ERR_OK != sci_register_memory(c->sd, base, len, h)) ||
        (NULL != c->osd && SCI_ERR_OK != sci_register_memory(c->osd, base, len, h))) {
        if (NULL != c->sd) {
            sci_deregister_memory(c->sd, h);
        }
        free(h);
        return -EINVAL;
    }
    *handle = h;
    return 0;
}

static int mca_btl_sci_rcache_dereg(void *ctx, void *base, size_t len, void *handle)
{
    sci_mem_handle_t *h = handle;

    (void) ctx;
    (void) base;
    (void) len;
    if (NULL != mca_btl_sci_component.osd) {
        sci_deregister_memory(mca_btl_sci_component.osd, h);
    }
    if (NULL != mca_btl_sci_component.sd) {
        sci_deregister_memory(mca_btl_sci_component.sd, h);
    }
    free(h);
    return 0;
}

int mca_btl_sci_rcache_init(void)
{
    tc_rcache_params_t params;

    memset(&params, 0, sizeof(params));
    params.provider.reg = mca_btl_sci_rcache_reg;
    params.provider.dereg = mca_btl_sci_rcache_dereg;
    params.max_unused_count = 4096;
    params.max_unused_bytes = 0;
    mca_btl_sci_component.rcache = tc_rcache_create(&params);
    if (NULL == mca_btl_sci_component.rcache) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    /* freed or unmapped memory must not keep a stale registration */
    (void) tc_ompi_rcache_hook_register(mca_btl_sci_component.rcache);
    return OPAL_SUCCESS;
}

void mca_btl_sci_rcache_fini(void)
{
    if (NULL != mca_btl_sci_component.rcache) {
        tc_ompi_rcache_hook_unregister(mca_btl_sci_component.rcache);
        (void) tc_rcache_destroy(mca_btl_sci_component.rcache);
        mca_btl_sci_component.rcache = NULL;
    }
}

struct mca_btl_base_registration_handle_t *
mca_btl_sci_register_mem(struct mca_btl_base_module_t *btl,
                         struct mca_btl_base_endpoint_t *endpoint, void *base, size_t size,
                         uint32_t flags)
{
    tc_rcache_reg_t *reg;
    mca_btl_sci_reg_t *r;

    (void) btl;
    (void) endpoint;
    (void) flags;
    if (OPAL_UNLIKELY(NULL == mca_btl_sci_component.rcache || 0 == size)) {
        return NULL;
    }
    r = malloc(sizeof(*r));
    if (OPAL_UNLIKELY(NULL == r)) {
        return NULL;
    }
    if (0 != tc_rcache_get(mca_btl_sci_component.rcache, base, size, &reg)) {
        free(r);
        return NULL;
    }
    /* the peer gets the exact range: its DMA and atomics stay inside it */
    r->handle.sci = *(const sci_mem_handle_t *) reg->handle;
    r->handle.sci.base = (uint64_t) (uintptr_t) base;
    r->handle.sci.len = (uint64_t) size;
    r->reg = reg;
    OPAL_THREAD_LOCK(&mca_btl_sci_component.expose_lock);
    mca_btl_sci_expose_add(&mca_btl_sci_component.exposed, &r->expose, r->handle.sci.base, size);
    OPAL_THREAD_UNLOCK(&mca_btl_sci_component.expose_lock);
    return &r->handle;
}

int mca_btl_sci_deregister_mem(struct mca_btl_base_module_t *btl,
                               struct mca_btl_base_registration_handle_t *handle)
{
    mca_btl_sci_reg_t *r = (mca_btl_sci_reg_t *) handle;

    (void) btl;
    if (NULL == handle || NULL == mca_btl_sci_component.rcache) {
        return OPAL_ERR_BAD_PARAM;
    }
    /* no atomic from a peer reaches this range any more */
    OPAL_THREAD_LOCK(&mca_btl_sci_component.expose_lock);
    mca_btl_sci_expose_remove(&mca_btl_sci_component.exposed, &r->expose);
    OPAL_THREAD_UNLOCK(&mca_btl_sci_component.expose_lock);
    tc_rcache_put(mca_btl_sci_component.rcache, r->reg);
    free(r);
    return OPAL_SUCCESS;
}

/* the handle a transfer uses, checked: it came over the wire and must
 * name this peer */
static int mca_btl_sci_dma_remote(struct mca_btl_base_endpoint_t *endpoint, uint64_t remote_address,
                                  struct mca_btl_base_registration_handle_t *remote_handle,
                                  size_t size, sci_mem_handle_t *remote)
{
    mca_btl_sci_component_t *c = &mca_btl_sci_component;

    if (OPAL_UNLIKELY(MCA_BTL_SCI_EP_FAILED == endpoint->state || NULL == endpoint->dq)) {
        return OPAL_ERR_UNREACH;
    }
    if (OPAL_UNLIKELY(size < c->dma_threshold)) {
        return OPAL_ERR_NOT_AVAILABLE;
    }
    if (NULL != remote_handle) {
        *remote = remote_handle->sci;
    } else if (endpoint->sd != c->sd) {
        /* ofi reaches registered memory only */
        return OPAL_ERR_BAD_PARAM;
    } else {
        /* no handle (a BTL user that skips registration): the peer's
         * whole address space, as vader's CMA path allows */
        memset(remote, 0, sizeof(*remote));
        remote->node_id = c->node_id;
        remote->owner = (uint64_t) endpoint->peer_pid;
        remote->base = remote_address;
        remote->len = size;
    }
    /* ofi: the owner names itself by its vpid (its own job's node id);
     * the provider knows it by its index here */
    if (OPAL_UNLIKELY(endpoint->sd == c->sd ? remote->owner != (uint64_t) endpoint->peer_pid
                                            : NULL == endpoint->proc ||
                              remote->key_node != endpoint->proc->proc_name.vpid)) {
        return OPAL_ERR_BAD_PARAM;
    }
    if (endpoint->sd != c->sd) {
        remote->key_node = (uint32_t) endpoint->peer_rank;
    }
    return OPAL_SUCCESS;
}

/* a device error as the BTL reports it */
static int mca_btl_sci_dma_status(struct mca_btl_base_endpoint_t *endpoint, sci_error_t err)
{
    switch (err) {
    case SCI_ERR_OK:
        return OPAL_SUCCESS;
    case SCI_ERR_OUT_OF_RANGE:
    case SCI_ERR_ILLEGAL_PARAMETER:
        return OPAL_ERR_BAD_PARAM;
    case SCI_ERR_NOSPC:
        return OPAL_ERR_OUT_OF_RESOURCE;
    case SCI_ERR_TRANSFER_FAILED:
        mca_btl_sci_endpoint_lost(endpoint, "DMA to a process that is gone");
        return OPAL_ERR_UNREACH;
    default:
        return OPAL_ERROR;
    }
}

/* an asynchronous put or get in flight: what its callback needs */
typedef struct mca_btl_sci_dma_op {
    mca_btl_sci_cookie_t cookie; /* first: what the device hands back */
    struct mca_btl_base_module_t *btl;
    tc_ompi_rdma_cb_t cb;
} mca_btl_sci_dma_op_t;

int mca_btl_sci_dma_reap(void)
{
    mca_btl_sci_component_t *c = &mca_btl_sci_component;
    void *cookies[16];
    sci_error_t status[16];
    int n = sci_dma_reap(c->osd, cookies, status, 16);

    for (int i = 0; i < n; ++i) {
        mca_btl_sci_cookie_t *cookie = cookies[i];
        mca_btl_sci_dma_op_t *op = cookies[i];

        (void) tc_atomic_add_fetch(&c->dma_posted, -1);
        if (MCA_BTL_SCI_COOKIE_SEND == cookie->kind) {
            mca_btl_sci_send_reaped(cookie, status[i]);
            continue;
        }
        tc_ompi_rdma_cb_call(&op->cb, op->btl, mca_btl_sci_dma_status(op->cb.endpoint, status[i]));
        free(op);
    }
    return n;
}

/* put and get.  Across hosts (ofi) the transfer is posted and its
 * callback runs from progress once it completed, so a caller with many
 * small transfers (osc/rdma's derived datatypes: one per element) keeps
 * them in flight; the shm engine is synchronous and calls back at once */
static int mca_btl_sci_rdma(int direction, struct mca_btl_base_module_t *btl,
                            struct mca_btl_base_endpoint_t *endpoint, void *local_address,
                            uint64_t remote_address,
                            struct mca_btl_base_registration_handle_t *local_handle,
                            struct mca_btl_base_registration_handle_t *remote_handle, size_t size,
                            mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext, void *cbdata)
{
    sci_mem_handle_t remote;
    sci_error_t err;
    int rc;

    if (OPAL_UNLIKELY(NULL == endpoint)) {
        /* the caller's own memory (see MCA_BTL_ATOMIC_SUPPORTS_GLOB) */
        if (SCI_DMA_READ == direction) {
            memmove(local_address, (void *) (uintptr_t) remote_address, size);
        } else {
            memmove((void *) (uintptr_t) remote_address, local_address, size);
        }
        cbfunc(btl, endpoint, local_address, local_handle, cbcontext, cbdata, OPAL_SUCCESS);
        return OPAL_SUCCESS;
    }
    if (OPAL_UNLIKELY(MCA_BTL_SCI_EP_FAILED == endpoint->state)) {
        return OPAL_ERR_UNREACH;
    }
    rc = mca_btl_sci_dma_remote(endpoint, remote_address, remote_handle, size, &remote);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    if (endpoint->write_through) {
        mca_btl_sci_dma_op_t *op = malloc(sizeof(*op));

        if (OPAL_UNLIKELY(NULL == op)) {
            return OPAL_ERR_OUT_OF_RESOURCE;
        }
        op->cookie.kind = MCA_BTL_SCI_COOKIE_RDMA;
        op->btl = btl;
        op->cb = tc_ompi_rdma_cb(endpoint, local_address, local_handle, cbfunc, cbcontext, cbdata);
        /* counted first: progress in another thread may reap it at once */
        (void) tc_atomic_add_fetch(&mca_btl_sci_component.dma_posted, 1);
        err =
            sci_dma_post(endpoint->sd, direction, local_address, &remote, remote_address, size, op);
        if (SCI_ERR_OK == err) {
            return OPAL_SUCCESS;
        }
        (void) tc_atomic_add_fetch(&mca_btl_sci_component.dma_posted, -1);
        free(op);
        return mca_btl_sci_dma_status(endpoint, err);
    }
    /* the queue serialises threads itself when they are enabled */
    err = sci_dma_transfer(endpoint->dq, direction, local_address, &remote, remote_address, size);
    rc = mca_btl_sci_dma_status(endpoint, err);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    cbfunc(btl, endpoint, local_address, local_handle, cbcontext, cbdata, OPAL_SUCCESS);
    return OPAL_SUCCESS;
}

int mca_btl_sci_put(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                    void *local_address, uint64_t remote_address,
                    struct mca_btl_base_registration_handle_t *local_handle,
                    struct mca_btl_base_registration_handle_t *remote_handle, size_t size,
                    int flags, int order, mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext,
                    void *cbdata)
{
    (void) flags;
    (void) order;
    return mca_btl_sci_rdma(SCI_DMA_WRITE, btl, endpoint, local_address, remote_address,
                            local_handle, remote_handle, size, cbfunc, cbcontext, cbdata);
}

int mca_btl_sci_get(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                    void *local_address, uint64_t remote_address,
                    struct mca_btl_base_registration_handle_t *local_handle,
                    struct mca_btl_base_registration_handle_t *remote_handle, size_t size,
                    int flags, int order, mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext,
                    void *cbdata)
{
    (void) flags;
    (void) order;
    return mca_btl_sci_rdma(SCI_DMA_READ, btl, endpoint, local_address, remote_address,
                            local_handle, remote_handle, size, cbfunc, cbcontext, cbdata);
}
