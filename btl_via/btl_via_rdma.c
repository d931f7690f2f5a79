/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/*
 * btl_via_rdma.c: memory registration through common/rcache (CHEMPI:
 * registrations are reused) and btl_put / btl_get as RDMA write / RDMA
 * read descriptors of at most max_transfer bytes each.  A put ends with
 * an RDMA write with immediate data that completes a receive descriptor
 * at the target (CHEMPI's completion notice; btl_via_put_notify).
 */

#include "opal_config.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "btl_via.h"
#include "tc_ompi.h"
#include "btl_via_endpoint.h"
#include "btl_via_frag.h"

/* rcache provider: a registration is a VIA memory handle on every device */
static int mca_btl_via_rcache_dereg(void *ctx, void *base, size_t len, void *handle);

static int mca_btl_via_rcache_reg(void *ctx, void *base, size_t len, void **handle)
{
    mca_btl_via_component_t *c = &mca_btl_via_component;
    mca_btl_via_reg_t *r = calloc(1, sizeof(*r));

    (void) ctx;
    if (NULL == r) {
        return -ENOMEM;
    }
    r->base = base;
    for (int i = 0; i < MCA_BTL_VIA_NUM_DEVS; ++i) {
        mca_btl_via_dev_t *dev = &c->devs[i];
        vipl_mem_attrs_t ma = {.ptag = dev->ptag,
                               .enable_rdma_write = true,
                               .enable_rdma_read =
                                   NULL != dev->nic && vipl_query_nic(dev->nic)->rdma_read};

        if (NULL == dev->nic) {
            continue;
        }
        if (VIPL_SUCCESS != vipl_register_mem(dev->nic, base, len, &ma, &r->handle.h[i])) {
            (void) mca_btl_via_rcache_dereg(ctx, base, len, r);
            return -ENOSPC;
        }
    }
    *handle = r;
    return 0;
}

static int mca_btl_via_rcache_dereg(void *ctx, void *base, size_t len, void *handle)
{
    mca_btl_via_component_t *c = &mca_btl_via_component;
    mca_btl_via_reg_t *r = handle;

    (void) ctx;
    (void) len;
    for (int i = 0; i < MCA_BTL_VIA_NUM_DEVS; ++i) {
        if (0 != r->handle.h[i] && NULL != c->devs[i].nic) {
            (void) vipl_deregister_mem(c->devs[i].nic, base, r->handle.h[i]);
        }
    }
    free(r);
    return 0;
}

int mca_btl_via_rcache_init(void)
{
    tc_rcache_params_t params;

    memset(&params, 0, sizeof(params));
    params.provider.reg = mca_btl_via_rcache_reg;
    params.provider.dereg = mca_btl_via_rcache_dereg;
    params.max_unused_count = mca_btl_via_component.rcache_max_unused;
    params.max_unused_bytes = 0;
    mca_btl_via_component.rcache = tc_rcache_create(&params);
    if (NULL == mca_btl_via_component.rcache) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    /* freed or unmapped memory must not keep a stale registration */
    (void) tc_ompi_rcache_hook_register(mca_btl_via_component.rcache);
    return OPAL_SUCCESS;
}

void mca_btl_via_rcache_fini(void)
{
    if (NULL != mca_btl_via_component.rcache) {
        tc_ompi_rcache_hook_unregister(mca_btl_via_component.rcache);
        (void) tc_rcache_destroy(mca_btl_via_component.rcache);
        mca_btl_via_component.rcache = NULL;
    }
}

struct mca_btl_base_registration_handle_t *
mca_btl_via_register_mem(struct mca_btl_base_module_t *btl,
                         struct mca_btl_base_endpoint_t *endpoint, void *base, size_t size,
                         uint32_t flags)
{
    tc_rcache_reg_t *reg;
    mca_btl_via_reg_t *r;

    (void) btl;
    (void) endpoint;
    (void) flags;
    if (OPAL_UNLIKELY(NULL == mca_btl_via_component.rcache || 0 == size)) {
        return NULL;
    }
    if (0 != tc_rcache_get(mca_btl_via_component.rcache, base, size, &reg)) {
        return NULL;
    }
    r = reg->handle;
    r->reg = reg;
    return &r->handle;
}

int mca_btl_via_deregister_mem(struct mca_btl_base_module_t *btl,
                               struct mca_btl_base_registration_handle_t *handle)
{
    mca_btl_via_reg_t *r = (mca_btl_via_reg_t *) handle;

    (void) btl;
    if (NULL == handle || NULL == mca_btl_via_component.rcache) {
        return OPAL_ERR_BAD_PARAM;
    }
    tc_rcache_put(mca_btl_via_component.rcache, r->reg);
    return OPAL_SUCCESS;
}

static int mca_btl_via_rdma(uint32_t op_code, struct mca_btl_base_endpoint_t *ep,
                            void *local_address, uint64_t remote_address,
                            struct mca_btl_base_registration_handle_t *local_handle,
                            struct mca_btl_base_registration_handle_t *remote_handle, size_t size,
                            mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext, void *cbdata)
{
    mca_btl_via_component_t *c = &mca_btl_via_component;
    size_t chunk;
    uint32_t ndesc;
    bool notify = VIPL_CONTROL_OP_RDMAWRITE == op_code && c->put_notify;
    mca_btl_via_rdma_op_t *op;
    uint32_t piggy = 0;

    if (OPAL_UNLIKELY(NULL == ep || NULL == local_handle || NULL == remote_handle)) {
        return OPAL_ERR_BAD_PARAM;
    }
    /* towards another host in smaller pieces, all in flight at once */
    chunk = MCA_BTL_VIA_DEV_NET == ep->dev_index ? c->ofi_max_transfer : c->max_transfer;
    ndesc = (uint32_t) (size ? (size + chunk - 1) / chunk : 1);
    if (OPAL_UNLIKELY(size < c->rdma_threshold)) {
        return OPAL_ERR_NOT_AVAILABLE;
    }
    if (OPAL_UNLIKELY(MCA_BTL_VIA_EP_CONNECTED != ep->state)) {
        /* a first put/get to the peer makes its VI (one-sided traffic may
         * start with it); ob1/osc retry on OUT_OF_RESOURCE */
        mca_btl_via_endpoint_use(ep);
        if (MCA_BTL_VIA_EP_CONNECTED != ep->state) {
            return MCA_BTL_VIA_EP_FAILED == ep->state ? OPAL_ERR_UNREACH : OPAL_ERR_OUT_OF_RESOURCE;
        }
    }
    op = malloc(sizeof(*op) + (size_t) ndesc * sizeof(vipl_desc_t));
    if (NULL == op) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    OBJ_CONSTRUCT(&op->super, opal_list_item_t);
    op->cb = tc_ompi_rdma_cb(ep, local_address, local_handle, cbfunc, cbcontext, cbdata);
    op->status = OPAL_SUCCESS;
    op->remaining = ndesc;
    op->ndesc = ndesc;

    for (uint32_t i = 0; i < ndesc; ++i) {
        vipl_desc_t *d = op->descs + i;
        size_t off = (size_t) i * chunk;
        size_t len = size - off < chunk ? size - off : chunk;

        memset(d, 0, sizeof(*d));
        d->control = op_code;
        d->seg_count = 1;
        d->ds[0].addr = (char *) local_address + off;
        d->ds[0].handle = local_handle->h[ep->dev_index];
        d->ds[0].length = (uint32_t) len;
        d->remote_addr = remote_address + off;
        d->remote_handle = remote_handle->h[ep->dev_index];
        d->context = (void *) ((uintptr_t) op | MCA_BTL_VIA_CTX_RDMA);
    }

    OPAL_THREAD_LOCK(&ep->lock);
    /* the notice consumes a receive descriptor at the target: a credit */
    if (ndesc > c->send_descriptors || (notify && 0 != tc_credits_try_send(&ep->credits, &piggy))) {
        OPAL_THREAD_UNLOCK(&ep->lock);
        OBJ_DESTRUCT(&op->super);
        free(op);
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    if (notify) {
        op->descs[ndesc - 1].control |= VIPL_CONTROL_IMMEDIATE;
        op->descs[ndesc - 1].imm_data = MCA_BTL_VIA_IMM(MCA_BTL_VIA_KIND_PUT_DONE, 0, piggy);
    }
    (void) OPAL_THREAD_ADD_FETCH32(&c->rdma_inflight, 1);
    /* ep->lock is per endpoint: threads on other endpoints count too */
    mca_btl_via_count(VIPL_CONTROL_OP_RDMAWRITE == op_code ? &c->puts : &c->gets, 1);
    mca_btl_via_count(&c->rdma_bytes, size);
    /* a full send queue: the op waits its turn here rather than going
     * back to ob1, whose retries of refused gets stalled a transfer of
     * many small descriptors over ofi */
    opal_list_append(&ep->rdma_wait, &op->super);
    if (!mca_btl_via_rdma_start_locked(ep) || !ep->dev->poll_sends) {
        /* the emu NIC moves the data here (one CMA call for the batch);
         * a network provider's completions are read by progress */
        mca_btl_via_endpoint_reap_locked(ep);
    }
    OPAL_THREAD_UNLOCK(&ep->lock);
    return OPAL_SUCCESS;
}

bool mca_btl_via_rdma_start_locked(mca_btl_via_endpoint_t *ep)
{
    mca_btl_via_component_t *c = &mca_btl_via_component;
    bool posted = false;

    while (!opal_list_is_empty(&ep->rdma_wait)) {
        mca_btl_via_rdma_op_t *op = (mca_btl_via_rdma_op_t *) opal_list_get_first(&ep->rdma_wait);
        uint32_t i = 0;

        if (MCA_BTL_VIA_EP_CONNECTED == ep->state) {
            if (ep->outstanding + op->ndesc > c->send_descriptors) {
                break;
            }
            for (; i < op->ndesc; ++i) {
                if (VIPL_SUCCESS != vipl_post_send(ep->vi, op->descs + i)) {
                    break;
                }
                ++ep->outstanding;
            }
            posted |= 0 != i;
        }
        (void) opal_list_remove_first(&ep->rdma_wait);
        if (i < op->ndesc) {
            /* the VI broke under us (or before): what was posted completes
             * with an error, the rest never will */
            op->status = OPAL_ERR_UNREACH;
            op->remaining -= op->ndesc - i;
            if (0 == op->remaining) {
                (void) OPAL_THREAD_ADD_FETCH32(&c->rdma_inflight, -1);
                tc_ompi_done_list_push(&c->completed_rdma, &op->super);
            }
        }
    }
    return posted;
}

/* btl_flush: every put and get started so far has completed, which for
 * every provider means done at the target too (emu: the CMA copy; ofi:
 * FI_DELIVERY_COMPLETE; verbs: the responder's acknowledgement of an RC
 * write), so osc_hybrid on Open MPI 4.1 (no RDMA_REMOTE_COMPLETION flag)
 * can put by RDMA over via.  The endpoint is not looked at: all of them. */
int mca_btl_via_flush(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint)
{
    mca_btl_via_component_t *c = &mca_btl_via_component;

    (void) btl;
    (void) endpoint;
    while (0 < opal_atomic_add_fetch_32(&c->rdma_inflight, 0)) {
        if (0 == mca_btl_via_component_progress()) {
            sched_yield();
        }
    }
    return OPAL_SUCCESS;
}

int mca_btl_via_put(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                    void *local_address, uint64_t remote_address,
                    struct mca_btl_base_registration_handle_t *local_handle,
                    struct mca_btl_base_registration_handle_t *remote_handle, size_t size,
                    int flags, int order, mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext,
                    void *cbdata)
{
    (void) btl;
    (void) flags;
    (void) order;
    return mca_btl_via_rdma(VIPL_CONTROL_OP_RDMAWRITE, endpoint, local_address, remote_address,
                            local_handle, remote_handle, size, cbfunc, cbcontext, cbdata);
}

int mca_btl_via_get(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                    void *local_address, uint64_t remote_address,
                    struct mca_btl_base_registration_handle_t *local_handle,
                    struct mca_btl_base_registration_handle_t *remote_handle, size_t size,
                    int flags, int order, mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext,
                    void *cbdata)
{
    (void) btl;
    (void) flags;
    (void) order;
    return mca_btl_via_rdma(VIPL_CONTROL_OP_RDMAREAD, endpoint, local_address, remote_address,
                            local_handle, remote_handle, size, cbfunc, cbcontext, cbdata);
}
