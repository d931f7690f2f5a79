/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * btl_sci_atomic.c: btl_atomic_op/fop/cswap, emulated at the target.  SCI
 * (and CMA) has no remote atomic, so the initiator writes a request into
 * the target's ring; the target checks the address against its own
 * registrations, applies the operation with a CPU atomic (hence coherent
 * with the target's own atomics: MCA_BTL_ATOMIC_SUPPORTS_GLOB) and writes
 * the old value back into the initiator's ring.
 */

#include "opal_config.h"

#include <string.h>

#include "btl_sci.h"
#include "btl_sci_aop.h"
#include "btl_sci_endpoint.h"
#include "btl_sci_frag.h"

#define MCA_BTL_SCI_MAX_AOPS 1024

typedef struct mca_btl_sci_atomic_op {
    opal_list_item_t super;
    uint32_t index;
    uint32_t gen;
    bool in_use;
    bool fetch;
    bool is32;
    tc_ompi_rdma_cb_t cb;
} mca_btl_sci_atomic_op_t;

int mca_btl_sci_atomic_init(void)
{
    mca_btl_sci_component_t *c = &mca_btl_sci_component;

    c->aops = calloc(MCA_BTL_SCI_MAX_AOPS, sizeof(*c->aops));
    if (NULL == c->aops) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    c->num_aops = MCA_BTL_SCI_MAX_AOPS;
    for (unsigned int i = 0; i < c->num_aops; ++i) {
        OBJ_CONSTRUCT(&c->aops[i].super, opal_list_item_t);
        c->aops[i].index = i;
        opal_list_append(&c->free_aops, &c->aops[i].super);
    }
    return OPAL_SUCCESS;
}

void mca_btl_sci_atomic_fini(void)
{
    mca_btl_sci_component_t *c = &mca_btl_sci_component;

    if (NULL == c->aops) {
        return;
    }
    while (NULL != opal_list_remove_first(&c->free_aops)) {
    }
    for (unsigned int i = 0; i < c->num_aops; ++i) {
        OBJ_DESTRUCT(&c->aops[i].super);
    }
    free(c->aops);
    c->aops = NULL;
    c->num_aops = 0;
}

static int mca_btl_sci_aop_code(mca_btl_base_atomic_op_t op)
{
    switch (op) {
    case MCA_BTL_ATOMIC_ADD:
        return MCA_BTL_SCI_AOP_ADD;
    case MCA_BTL_ATOMIC_AND:
        return MCA_BTL_SCI_AOP_AND;
    case MCA_BTL_ATOMIC_OR:
        return MCA_BTL_SCI_AOP_OR;
    case MCA_BTL_ATOMIC_XOR:
        return MCA_BTL_SCI_AOP_XOR;
    case MCA_BTL_ATOMIC_LAND:
        return MCA_BTL_SCI_AOP_LAND;
    case MCA_BTL_ATOMIC_LOR:
        return MCA_BTL_SCI_AOP_LOR;
    case MCA_BTL_ATOMIC_LXOR:
        return MCA_BTL_SCI_AOP_LXOR;
    case MCA_BTL_ATOMIC_SWAP:
        return MCA_BTL_SCI_AOP_SWAP;
    case MCA_BTL_ATOMIC_MIN:
        return MCA_BTL_SCI_AOP_MIN;
    case MCA_BTL_ATOMIC_MAX:
        return MCA_BTL_SCI_AOP_MAX;
    default:
        return -1;
    }
}

static int mca_btl_sci_atomic_local(struct mca_btl_base_module_t *btl, int aop, bool fetch,
                                    void *local_address, uint64_t address,
                                    struct mca_btl_base_registration_handle_t *local_handle,
                                    uint64_t operand, uint64_t compare, bool is32,
                                    mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext,
                                    void *cbdata);

/* initiator: write the request into the target's ring */
static int mca_btl_sci_atomic_start(struct mca_btl_base_module_t *btl,
                                    struct mca_btl_base_endpoint_t *endpoint, int aop, bool fetch,
                                    void *local_address, uint64_t remote_address,
                                    struct mca_btl_base_registration_handle_t *local_handle,
                                    struct mca_btl_base_registration_handle_t *remote_handle,
                                    uint64_t operand, uint64_t compare, int flags,
                                    mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext,
                                    void *cbdata)
{
    mca_btl_sci_component_t *c = &mca_btl_sci_component;
    mca_btl_sci_atomic_req_t *req;
    mca_btl_sci_atomic_op_t *op;
    bool is32 = !!(flags & MCA_BTL_ATOMIC_FLAG_32BIT);

    if (OPAL_UNLIKELY(aop < 0 || (flags & MCA_BTL_ATOMIC_FLAG_FLOAT))) {
        return OPAL_ERR_NOT_SUPPORTED;
    }
    if (OPAL_UNLIKELY(remote_address & (is32 ? 3 : 7))) {
        return OPAL_ERR_BAD_PARAM;
    }
    if (NULL == endpoint || NULL == remote_handle) {
        /* no endpoint, or no registration handle for memory we register:
         * the address is mapped in the caller (osc/rdma does this for its
         * own and for shared-memory windows, because we advertise
         * MCA_BTL_ATOMIC_SUPPORTS_GLOB): a CPU atomic right here */
        return mca_btl_sci_atomic_local(btl, aop, fetch, local_address, remote_address,
                                        local_handle, operand, compare, is32, cbfunc, cbcontext,
                                        cbdata);
    }
    if (OPAL_UNLIKELY(MCA_BTL_SCI_EP_FAILED == endpoint->state)) {
        return OPAL_ERR_UNREACH;
    }

    OPAL_THREAD_LOCK(&endpoint->lock);
    if (!opal_list_is_empty(&endpoint->pending)) {
        OPAL_THREAD_UNLOCK(&endpoint->lock);
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    OPAL_THREAD_LOCK(&c->lock);
    op = (mca_btl_sci_atomic_op_t *) opal_list_remove_first(&c->free_aops);
    OPAL_THREAD_UNLOCK(&c->lock);
    if (NULL == op) {
        OPAL_THREAD_UNLOCK(&endpoint->lock);
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    req = mca_btl_sci_endpoint_reserve(endpoint);
    if (NULL == req) {
        OPAL_THREAD_LOCK(&c->lock);
        opal_list_prepend(&c->free_aops, &op->super);
        OPAL_THREAD_UNLOCK(&c->lock);
        OPAL_THREAD_UNLOCK(&endpoint->lock);
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    op->gen++;
    op->in_use = true;
    op->fetch = fetch;
    op->is32 = is32;
    op->cb = tc_ompi_rdma_cb(endpoint, local_address, local_handle, cbfunc, cbcontext, cbdata);

    req->op_index = op->index;
    req->op_gen = op->gen;
    req->op = (uint32_t) aop;
    req->flags = is32 ? MCA_BTL_SCI_AFLAG_32BIT : 0;
    req->address = remote_address;
    req->operand = operand;
    req->compare = compare;
    req->reg_base = remote_handle ? remote_handle->sci.base : 0;
    req->reg_len = remote_handle ? remote_handle->sci.len : 0;
    mca_btl_sci_endpoint_publish(endpoint, sizeof(*req),
                                 MCA_BTL_SCI_TAGWORD(MCA_BTL_SCI_KIND_ATOMIC_REQ, 0));
    OPAL_THREAD_UNLOCK(&endpoint->lock);
    return OPAL_SUCCESS;
}

int mca_btl_sci_atomic_op(struct mca_btl_base_module_t *btl,
                          struct mca_btl_base_endpoint_t *endpoint, uint64_t remote_address,
                          struct mca_btl_base_registration_handle_t *remote_handle,
                          mca_btl_base_atomic_op_t op, uint64_t operand, int flags, int order,
                          mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext, void *cbdata)
{
    (void) order;
    return mca_btl_sci_atomic_start(btl, endpoint, mca_btl_sci_aop_code(op), false, NULL,
                                    remote_address, NULL, remote_handle, operand, 0, flags, cbfunc,
                                    cbcontext, cbdata);
}

int mca_btl_sci_atomic_fop(struct mca_btl_base_module_t *btl,
                           struct mca_btl_base_endpoint_t *endpoint, void *local_address,
                           uint64_t remote_address,
                           struct mca_btl_base_registration_handle_t *local_handle,
                           struct mca_btl_base_registration_handle_t *remote_handle,
                           mca_btl_base_atomic_op_t op, uint64_t operand, int flags, int order,
                           mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext, void *cbdata)
{
    (void) order;
    return mca_btl_sci_atomic_start(btl, endpoint, mca_btl_sci_aop_code(op), true, local_address,
                                    remote_address, local_handle, remote_handle, operand, 0, flags,
                                    cbfunc, cbcontext, cbdata);
}

int mca_btl_sci_atomic_cswap(struct mca_btl_base_module_t *btl,
                             struct mca_btl_base_endpoint_t *endpoint, void *local_address,
                             uint64_t remote_address,
                             struct mca_btl_base_registration_handle_t *local_handle,
                             struct mca_btl_base_registration_handle_t *remote_handle,
                             uint64_t compare, uint64_t value, int flags, int order,
                             mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext,
                             void *cbdata)
{
    (void) order;
    return mca_btl_sci_atomic_start(btl, endpoint, MCA_BTL_SCI_AOP_CSWAP, true, local_address,
                                    remote_address, local_handle, remote_handle, value, compare,
                                    flags, cbfunc, cbcontext, cbdata);
}

/* target: is [address, address+width) inside memory we expose right now
 * (a registration not deregistered yet, its exact range)?  The peer's copy
 * of the handle is not trusted, and the registration cache is no answer:
 * it keeps released registrations and page-rounded, merged ranges. */
static bool mca_btl_sci_atomic_address_ok(const mca_btl_sci_atomic_req_t *req, size_t width)
{
    mca_btl_sci_component_t *c = &mca_btl_sci_component;
    bool ok;

    OPAL_THREAD_LOCK(&c->expose_lock);
    ok = mca_btl_sci_expose_covers(&c->exposed, req->address, width);
    OPAL_THREAD_UNLOCK(&c->expose_lock);
    if (!ok) {
        opal_output_verbose(5, c->output,
                            "btl:sci: atomic at 0x%" PRIx64 " refused: not inside memory we expose "
                            "(the peer named [0x%" PRIx64 ", +%" PRIu64 "))",
                            req->address, req->reg_base, req->reg_len);
    }
    return ok;
}

/* execute a request on local memory; the result goes into *rsp */
static void mca_btl_sci_atomic_apply(const mca_btl_sci_atomic_req_t *req,
                                     mca_btl_sci_atomic_rsp_t *rsp, bool check_address)
{
    memset(rsp, 0, sizeof(*rsp));
    rsp->op_index = req->op_index;
    rsp->op_gen = req->op_gen;

    if (!mca_btl_sci_aop_valid(req->op) || (req->flags & ~MCA_BTL_SCI_AFLAG_32BIT)) {
        rsp->status = OPAL_ERR_NOT_SUPPORTED;
    } else if (req->flags & MCA_BTL_SCI_AFLAG_32BIT) {
        if (0 != (req->address & 3) || (check_address && !mca_btl_sci_atomic_address_ok(req, 4))) {
            rsp->status = OPAL_ERR_BAD_PARAM;
        } else {
            rsp->result = mca_btl_sci_aop_apply32(req->op, (uint32_t *) (uintptr_t) req->address,
                                                  req->operand, req->compare);
        }
    } else {
        if (0 != (req->address & 7) || (check_address && !mca_btl_sci_atomic_address_ok(req, 8))) {
            rsp->status = OPAL_ERR_BAD_PARAM;
        } else {
            rsp->result = mca_btl_sci_aop_apply64(req->op, (uint64_t *) (uintptr_t) req->address,
                                                  req->operand, req->compare);
        }
    }
}

void mca_btl_sci_atomic_handle_req(struct mca_btl_base_endpoint_t *ep, const void *payload,
                                   uint32_t len)
{
    mca_btl_sci_atomic_req_t req;
    mca_btl_sci_atomic_rsp_t rsp;
    void *dst;

    /* copy out of shared memory before checking: the peer cannot change
     * what we validated */
    if (OPAL_UNLIKELY(len != sizeof(req))) {
        BTL_ERROR(("btl:sci: atomic request of %u bytes from local rank %d dropped", (unsigned) len,
                   ep->peer_rank));
        return;
    }
    memcpy(&req, payload, sizeof(req));
    mca_btl_sci_atomic_apply(&req, &rsp, true);
    opal_output_verbose(50, mca_btl_sci_component.output,
                        "btl:sci: atomic op %u at 0x%" PRIx64 " for local rank %d: status %d",
                        req.op, req.address, ep->peer_rank, rsp.status);

    /* reply through the initiator's ring, or behind its deferred frags */
    OPAL_THREAD_LOCK(&ep->lock);
    dst = opal_list_is_empty(&ep->pending) ? mca_btl_sci_endpoint_reserve(ep) : NULL;
    if (OPAL_LIKELY(NULL != dst)) {
        memcpy(dst, &rsp, sizeof(rsp));
        mca_btl_sci_endpoint_publish(ep, sizeof(rsp),
                                     MCA_BTL_SCI_TAGWORD(MCA_BTL_SCI_KIND_ATOMIC_RSP, 0));
    } else {
        mca_btl_sci_frag_t *frag = mca_btl_sci_frag_alloc(ep);

        if (NULL == frag) {
            OPAL_THREAD_UNLOCK(&ep->lock);
            mca_btl_sci_endpoint_lost(ep, "out of fragments for an atomic reply");
            return;
        }
        memcpy(frag->data, &rsp, sizeof(rsp));
        frag->segments[0].seg_len = sizeof(rsp);
        frag->tagword = MCA_BTL_SCI_TAGWORD(MCA_BTL_SCI_KIND_ATOMIC_RSP, 0);
        frag->base.des_flags = MCA_BTL_DES_FLAGS_BTL_OWNERSHIP;
        mca_btl_sci_endpoint_defer(ep, frag);
    }
    OPAL_THREAD_UNLOCK(&ep->lock);
}

void mca_btl_sci_atomic_handle_rsp(struct mca_btl_base_endpoint_t *ep, const void *payload,
                                   uint32_t len)
{
    mca_btl_sci_component_t *c = &mca_btl_sci_component;
    mca_btl_sci_atomic_rsp_t rsp;
    mca_btl_sci_atomic_op_t *op;

    if (OPAL_UNLIKELY(len != sizeof(rsp))) {
        BTL_ERROR(("btl:sci: atomic reply of %u bytes from local rank %d dropped", (unsigned) len,
                   ep->peer_rank));
        return;
    }
    memcpy(&rsp, payload, sizeof(rsp));
    if (OPAL_UNLIKELY(rsp.op_index >= c->num_aops)) {
        BTL_ERROR(("btl:sci: atomic reply for unknown operation %u dropped", rsp.op_index));
        return;
    }
    op = c->aops + rsp.op_index;
    if (OPAL_UNLIKELY(!op->in_use || op->gen != rsp.op_gen || op->cb.endpoint != ep)) {
        BTL_ERROR(("btl:sci: stale atomic reply from local rank %d dropped", ep->peer_rank));
        return;
    }
    if (op->fetch && OPAL_SUCCESS == rsp.status && NULL != op->cb.local_address) {
        if (op->is32) {
            *(uint32_t *) op->cb.local_address = (uint32_t) rsp.result;
        } else {
            *(uint64_t *) op->cb.local_address = rsp.result;
        }
    }
    op->in_use = false;
    {
        tc_ompi_rdma_cb_t cb = op->cb;

        /* back on the free list before the callback, which may start another */
        OPAL_THREAD_LOCK(&c->lock);
        opal_list_append(&c->free_aops, &op->super);
        OPAL_THREAD_UNLOCK(&c->lock);
        if (NULL != cb.cbfunc) {
            tc_ompi_rdma_cb_call(&cb, &ep->module->super, rsp.status);
        }
    }
}

static int mca_btl_sci_atomic_local(struct mca_btl_base_module_t *btl, int aop, bool fetch,
                                    void *local_address, uint64_t address,
                                    struct mca_btl_base_registration_handle_t *local_handle,
                                    uint64_t operand, uint64_t compare, bool is32,
                                    mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext,
                                    void *cbdata)
{
    mca_btl_sci_atomic_req_t req;
    mca_btl_sci_atomic_rsp_t rsp;

    memset(&req, 0, sizeof(req));
    req.op = (uint32_t) aop;
    req.flags = is32 ? MCA_BTL_SCI_AFLAG_32BIT : 0;
    req.address = address;
    req.operand = operand;
    req.compare = compare;
    mca_btl_sci_atomic_apply(&req, &rsp, false);
    if (OPAL_SUCCESS != rsp.status) {
        return rsp.status;
    }
    if (fetch && NULL != local_address) {
        if (is32) {
            *(uint32_t *) local_address = (uint32_t) rsp.result;
        } else {
            *(uint64_t *) local_address = rsp.result;
        }
    }
    if (NULL != cbfunc) {
        cbfunc(btl, NULL, local_address, local_handle, cbcontext, cbdata, OPAL_SUCCESS);
    }
    return OPAL_SUCCESS;
}

int mca_btl_sci_atomic_fail_peer(struct mca_btl_base_endpoint_t *ep, int status)
{
    mca_btl_sci_component_t *c = &mca_btl_sci_component;
    int n = 0;

    /* progress only (replies are handled there too): no reply races this */
    for (unsigned int i = 0; NULL != c->aops && i < c->num_aops; ++i) {
        mca_btl_sci_atomic_op_t *op = c->aops + i;
        tc_ompi_rdma_cb_t cb;

        if (!op->in_use || op->cb.endpoint != ep) {
            continue;
        }
        cb = op->cb;
        op->in_use = false;
        OPAL_THREAD_LOCK(&c->lock);
        opal_list_append(&c->free_aops, &op->super);
        OPAL_THREAD_UNLOCK(&c->lock);
        if (NULL != cb.cbfunc) {
            tc_ompi_rdma_cb_call(&cb, &ep->module->super, status);
        }
        ++n;
    }
    return n;
}
