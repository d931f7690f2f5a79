/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * btl_bip_rdma.c: memory registration for the receiver's read over the
 * ofi provider. ob1 registers the source of a rendezvous (RGET) with the
 * BTL of the peer that will read it; for a peer reached by ofi the
 * registration is a libfabric memory region (bip_mem_register) whose key
 * and base travel in ob1's RGET header as our registration handle, kept
 * in common's registration cache (tc_rcache: a buffer sent again costs no
 * new region; freed or unmapped memory drops its region through Open
 * MPI's release hooks). A peer on this host (shm: CMA reads any address)
 * and the receiver's own buffer need no region: they get a handle with
 * key 0, which makes the read take the key-less path.
 */

#include "opal_config.h"

#include <string.h>

#include "tc_ompi.h"
#include "tc_rcache.h"

#include "btl_bip.h"
#include "btl_bip_endpoint.h"

typedef struct mca_btl_bip_reg {
    struct mca_btl_base_registration_handle_t handle; /* first: ob1 sees this */
    tc_rcache_reg_t *reg;
    void *devreg;
} mca_btl_bip_reg_t;

/* the handle of every registration that needs no region */
static struct mca_btl_base_registration_handle_t mca_btl_bip_no_region = {{0, 0}};

static int mca_btl_bip_rcache_reg(void *ctx, void *base, size_t len, void **handle)
{
    mca_btl_bip_reg_t *r = calloc(1, sizeof(*r));
    int rc;

    (void) ctx;
    if (NULL == r) {
        return -ENOMEM;
    }
    rc = bip_mem_register(mca_btl_bip_component.dev, base, len, &r->handle.key, &r->devreg);
    if (0 != rc) {
        free(r);
        return rc;
    }
    *handle = r;
    return 0;
}

static int mca_btl_bip_rcache_dereg(void *ctx, void *base, size_t len, void *handle)
{
    mca_btl_bip_reg_t *r = handle;

    (void) ctx;
    (void) base;
    (void) len;
    bip_mem_deregister(mca_btl_bip_component.dev, r->devreg);
    free(r);
    return 0;
}

int mca_btl_bip_rcache_init(void)
{
    mca_btl_bip_component_t *c = &mca_btl_bip_component;
    tc_rcache_params_t params;

    memset(&params, 0, sizeof(params));
    params.provider.reg = mca_btl_bip_rcache_reg;
    params.provider.dereg = mca_btl_bip_rcache_dereg;
    params.max_unused_count = 256;
    c->rcache = tc_rcache_create(&params);
    if (NULL == c->rcache) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    (void) tc_ompi_rcache_hook_register(c->rcache);
    return OPAL_SUCCESS;
}

void mca_btl_bip_rcache_fini(void)
{
    mca_btl_bip_component_t *c = &mca_btl_bip_component;

    if (NULL != c->rcache) {
        tc_ompi_rcache_hook_unregister(c->rcache);
        (void) tc_rcache_destroy(c->rcache);
        c->rcache = NULL;
    }
}

struct mca_btl_base_registration_handle_t *
mca_btl_bip_register_mem(struct mca_btl_base_module_t *btl,
                         struct mca_btl_base_endpoint_t *endpoint, void *base, size_t size,
                         uint32_t flags)
{
    mca_btl_bip_component_t *c = &mca_btl_bip_component;
    tc_rcache_reg_t *reg;
    mca_btl_bip_reg_t *r;

    (void) btl;
    /* a region only where a peer reads over ofi */
    if (NULL == c->rcache || 0 == size || NULL == endpoint || NULL == endpoint->peer ||
        bip_peer_can_read(endpoint->peer) || !(flags & MCA_BTL_REG_FLAG_REMOTE_READ)) {
        return &mca_btl_bip_no_region;
    }
    if (0 != tc_rcache_get(c->rcache, base, size, &reg)) {
        return NULL;
    }
    r = reg->handle;
    r->reg = reg;
    return &r->handle;
}

int mca_btl_bip_deregister_mem(struct mca_btl_base_module_t *btl,
                               struct mca_btl_base_registration_handle_t *handle)
{
    mca_btl_bip_reg_t *r = (mca_btl_bip_reg_t *) handle;

    (void) btl;
    if (NULL == handle) {
        return OPAL_ERR_BAD_PARAM;
    }
    if (handle != &mca_btl_bip_no_region && NULL != mca_btl_bip_component.rcache) {
        tc_rcache_put(mca_btl_bip_component.rcache, r->reg);
    }
    return OPAL_SUCCESS;
}
