/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/*
 * btl_via_module.c: the btl_via module: add_procs (read the peer's VI
 * address from the modex, post receives, request the connection),
 * del_procs, finalize (with the registration cache statistics),
 * descriptor allocation, prepare_src and peer failure.
 */

#include "opal_config.h"

#include <string.h>

#include "opal/datatype/opal_convertor.h"
#include "opal/util/proc.h"
#include "opal/util/show_help.h"

#include "btl_via.h"
#include TC_OMPI_PMIX_H
#include "tc_ompi.h"
#include "btl_via_endpoint.h"
#include "btl_via_frag.h"

static int mca_btl_via_register_error(struct mca_btl_base_module_t *btl,
                                      mca_btl_base_module_error_cb_fn_t cbfunc);

mca_btl_via_module_t mca_btl_via_module = {
    .super =
        {
            .btl_component = &mca_btl_via_component.super,
            .btl_add_procs = mca_btl_via_add_procs,
            .btl_del_procs = mca_btl_via_del_procs,
            .btl_finalize = mca_btl_via_finalize,
            .btl_alloc = mca_btl_via_alloc,
            .btl_free = mca_btl_via_free,
            .btl_prepare_src = mca_btl_via_prepare_src,
            .btl_send = mca_btl_via_send,
            .btl_sendi = mca_btl_via_sendi,
            .btl_put = mca_btl_via_put,
            .btl_get = mca_btl_via_get,
            .btl_register_mem = mca_btl_via_register_mem,
            .btl_deregister_mem = mca_btl_via_deregister_mem,
            .btl_dump = mca_btl_base_dump,
            .btl_register_error = mca_btl_via_register_error,
        },
};

static int mca_btl_via_register_error(struct mca_btl_base_module_t *btl,
                                      mca_btl_base_module_error_cb_fn_t cbfunc)
{
    ((mca_btl_via_module_t *) btl)->error_cb = cbfunc;
    return OPAL_SUCCESS;
}

/* the peer's VI for us on device slot `slot`, from its modex record
 * (checked: it comes from another process) */
static int mca_btl_via_peer_address(struct opal_proc_t *proc, int slot, vipl_vi_address_t *addr)
{
    mca_btl_via_component_t *c = &mca_btl_via_component;
    mca_btl_via_modex_hdr_t *hdr = NULL;
    size_t size = 0;
    uint32_t theirs;
    int rc;

    TC_OMPI_MODEX_RECV(rc, &c->super.btl_version, &proc->proc_name, (void **) &hdr, &size);
    if (OPAL_SUCCESS != rc || NULL == hdr) {
        return OPAL_ERR_UNREACH;
    }
    if (size < sizeof(*hdr) || MCA_BTL_VIA_MODEX_MAGIC != hdr->magic || hdr->nprocs != c->nprocs ||
        size !=
            sizeof(*hdr) +
                (size_t) MCA_BTL_VIA_NUM_DEVS * hdr->nprocs * sizeof(vipl_vi_address_t)) {
        free(hdr);
        return OPAL_ERR_UNREACH;
    }
    /* the same provider on that slot at both ends */
    theirs = (hdr->provider >> (8 * slot)) & 0xffu;
    if (0 == theirs || theirs != c->devs[slot].provider_id) {
        free(hdr);
        return OPAL_ERR_UNREACH;
    }
    if (hdr->recv_descriptors != c->recv_descriptors || hdr->recv_size != c->recv_size) {
        opal_show_help("help-mpi-btl-via.txt", "geometry mismatch", true,
                       opal_process_info.nodename, c->recv_descriptors, c->recv_size,
                       (int) proc->proc_name.vpid, hdr->recv_descriptors, hdr->recv_size);
        free(hdr);
        return OPAL_ERR_UNREACH;
    }
    *addr = ((vipl_vi_address_t *) (hdr + 1))[(size_t) slot * c->nprocs + c->my_vpid];
    free(hdr);
    return OPAL_SUCCESS;
}

/* which device reaches a peer: emu on this host, else the network one */
static int mca_btl_via_peer_slot(const struct opal_proc_t *proc)
{
    mca_btl_via_component_t *c = &mca_btl_via_component;

    if (OPAL_PROC_ON_LOCAL_NODE(proc->proc_flags) && NULL != c->devs[MCA_BTL_VIA_DEV_LOCAL].nic) {
        return MCA_BTL_VIA_DEV_LOCAL;
    }
    return NULL != c->devs[MCA_BTL_VIA_DEV_NET].nic ? MCA_BTL_VIA_DEV_NET : -1;
}

/* the endpoint of one peer, created at the first call (under c->lock) */
static mca_btl_via_endpoint_t *mca_btl_via_endpoint_of(struct opal_proc_t *proc)
{
    mca_btl_via_component_t *c = &mca_btl_via_component;
    uint32_t vpid = proc->proc_name.vpid;
    int slot = mca_btl_via_peer_slot(proc);
    vipl_vi_address_t addr;
    mca_btl_via_endpoint_t *ep;

    if (slot < 0 || vpid >= c->nprocs) {
        return NULL;
    }
    OPAL_THREAD_LOCK(&c->lock);
    ep = c->endpoints[vpid];
    if (NULL == ep && OPAL_SUCCESS == mca_btl_via_peer_address(proc, slot, &addr)) {
        ep = mca_btl_via_endpoint_create(proc, vpid, slot, &addr);
        c->endpoints[vpid] = ep;
    }
    OPAL_THREAD_UNLOCK(&c->lock);
    if (NULL != ep) {
        /* the peer may have matched us already (no lock of ours held) */
        mca_btl_via_endpoint_try_connect(ep);
    }
    return ep;
}

/* Open MPI adds peers on other hosts lazily (at the first message to
 * them), so a process that only receives from a peer would never post
 * receives for it nor bring its VI up, and what the peer sends is lost
 * on verbs (a queue pair in INIT drops it).  So the first add_procs, in
 * MPI_Init, brings up the VI of every process of the job a device
 * reaches; MPI_Init's closing fence then orders every VI's setup before
 * the first message. */
static void mca_btl_via_add_all_peers(void)
{
    mca_btl_via_component_t *c = &mca_btl_via_component;
    const opal_proc_t *me = opal_proc_local_get();

    for (uint32_t v = 0; v < c->nprocs; ++v) {
        opal_process_name_t name = me->proc_name;
        opal_proc_t *proc;

        if (v == c->my_vpid || NULL != c->endpoints[v]) {
            continue;
        }
        name.vpid = v;
        proc = opal_proc_for_name(name);
        if (NULL != proc) {
            (void) mca_btl_via_endpoint_of(proc);
        }
    }
}

int mca_btl_via_add_procs(struct mca_btl_base_module_t *btl, size_t nprocs,
                          struct opal_proc_t **procs, struct mca_btl_base_endpoint_t **peers,
                          struct opal_bitmap_t *reachable)
{
    mca_btl_via_component_t *c = &mca_btl_via_component;
    const opal_proc_t *me = opal_proc_local_get();
    int unreachable = 0;

    (void) btl;
    if (!c->all_peers_added) {
        c->all_peers_added = true;
        mca_btl_via_add_all_peers();
    }
    for (size_t i = 0; i < nprocs; ++i) {
        mca_btl_via_endpoint_t *ep = NULL;

        peers[i] = NULL;
        if (procs[i] == me) {
            continue;
        }
        if (procs[i]->proc_name.jobid == me->proc_name.jobid) {
            ep = mca_btl_via_endpoint_of(procs[i]);
        }
        if (NULL == ep || MCA_BTL_VIA_EP_FAILED == ep->state) {
            ++unreachable;
            continue;
        }
        peers[i] = ep;
        if (NULL != reachable) {
            (void) opal_bitmap_set_bit(reachable, (int) i);
        }
    }
    if (unreachable > 0 && !c->warned_unreachable && mca_btl_via_only_via_requested()) {
        char who[512], btls[256];

        c->warned_unreachable = true;
        tc_ompi_unreachable_text(nprocs, procs, peers, who, sizeof(who), btls, sizeof(btls));
        opal_show_help("help-mpi-btl-via.txt", "peer unreachable", true, opal_process_info.nodename,
                       unreachable,
                       NULL != c->devs[MCA_BTL_VIA_DEV_NET].nic
                           ? vipl_query_nic(c->devs[MCA_BTL_VIA_DEV_NET].nic)->provider
                           : "emu",
                       who, btls);
    }
    return OPAL_SUCCESS;
}

int mca_btl_via_del_procs(struct mca_btl_base_module_t *btl, size_t nprocs,
                          struct opal_proc_t **procs, struct mca_btl_base_endpoint_t **peers)
{
    (void) btl;
    (void) procs;
    (void) nprocs;
    (void) peers;
    /* the endpoints live until finalize: a VI is torn down once */
    return OPAL_SUCCESS;
}

static void mca_btl_via_print_stats(void)
{
    mca_btl_via_component_t *c = &mca_btl_via_component;
    tc_rcache_stats_t st;
    double rate;

    if (NULL == c->rcache || c->verbose < 1) {
        return;
    }
    tc_rcache_get_stats(c->rcache, &st);
    rate = (st.hits + st.misses) ? 100.0 * (double) st.hits / (double) (st.hits + st.misses) : 0.0;
    opal_output(
        0,
        "btl:via: vpid %u rcache: %llu hits, %llu misses (hit rate %.1f%%), %llu evictions, "
        "%llu invalidations, %llu registrations, %zu cached; %llu puts, %llu gets, %llu RDMA "
        "bytes, "
        "%llu put notices received",
        c->my_vpid, (unsigned long long) st.hits, (unsigned long long) st.misses, rate,
        (unsigned long long) st.evictions, (unsigned long long) st.invalidations,
        (unsigned long long) st.registrations, st.cached, (unsigned long long) c->puts,
        (unsigned long long) c->gets, (unsigned long long) c->rdma_bytes,
        (unsigned long long) c->put_notices);
}

int mca_btl_via_finalize(struct mca_btl_base_module_t *btl)
{
    mca_btl_via_component_t *c = &mca_btl_via_component;
    opal_list_item_t *item;

    (void) btl;
    if (!mca_btl_via_module.initialized) {
        return OPAL_SUCCESS;
    }
    mca_btl_via_print_stats();
    mca_btl_via_module.initialized = false;
    for (uint32_t i = 0; i < c->nprocs; ++i) {
        if (NULL != c->endpoints[i]) {
            mca_btl_via_endpoint_destroy(c->endpoints[i]);
            c->endpoints[i] = NULL;
        }
    }
    c->num_active = 0;
    while (NULL != (item = tc_ompi_done_list_pop(&c->completed_frags))) {
        mca_btl_via_frag_t *frag = (mca_btl_via_frag_t *) item;
        if (frag->base.des_flags & MCA_BTL_DES_FLAGS_BTL_OWNERSHIP) {
            mca_btl_via_frag_return(frag);
        }
    }
    while (NULL != (item = tc_ompi_done_list_pop(&c->completed_rdma))) {
        OBJ_DESTRUCT(item);
        free(item);
    }
    mca_btl_via_rcache_fini();
    mca_btl_via_release_device();
    return OPAL_SUCCESS;
}

static mca_btl_base_descriptor_t *mca_btl_via_frag_get(struct mca_btl_base_endpoint_t *ep)
{
    mca_btl_via_frag_t *frag = mca_btl_via_frag_alloc(ep);

    return OPAL_LIKELY(NULL != frag) ? &frag->base : NULL;
}

static void mca_btl_via_frag_put(mca_btl_base_descriptor_t *des)
{
    mca_btl_via_frag_return((mca_btl_via_frag_t *) des);
}

/* packed into the registered send buffer: the descriptor's data segment */
static const tc_ompi_frag_ops_t mca_btl_via_frag_ops = {
    .get = mca_btl_via_frag_get,
    .put = mca_btl_via_frag_put,
};

mca_btl_base_descriptor_t *mca_btl_via_alloc(struct mca_btl_base_module_t *btl,
                                             struct mca_btl_base_endpoint_t *endpoint,
                                             uint8_t order, size_t size, uint32_t flags)
{
    (void) btl;
    return tc_ompi_frag_alloc(&mca_btl_via_frag_ops, mca_btl_via_component.recv_size, endpoint,
                              order, size, flags);
}

int mca_btl_via_free(struct mca_btl_base_module_t *btl, mca_btl_base_descriptor_t *des)
{
    (void) btl;
    mca_btl_via_frag_put(des);
    return OPAL_SUCCESS;
}

mca_btl_base_descriptor_t *mca_btl_via_prepare_src(struct mca_btl_base_module_t *btl,
                                                   struct mca_btl_base_endpoint_t *endpoint,
                                                   struct opal_convertor_t *convertor,
                                                   uint8_t order, size_t reserve, size_t *size,
                                                   uint32_t flags)
{
    (void) btl;
    return tc_ompi_frag_prepare_src(&mca_btl_via_frag_ops, mca_btl_via_component.recv_size,
                                    endpoint, convertor, order, reserve, size, flags);
}

void mca_btl_via_fatal_peer(mca_btl_via_endpoint_t *ep, const char *why)
{
    tc_ompi_fatal_peer(
        &(tc_ompi_fatal_info_t){"via", "help-mpi-btl-via.txt", mca_btl_via_component.output},
        &mca_btl_via_module.super, mca_btl_via_module.error_cb, ep->proc, "vpid", (int) ep->vpid,
        why);
}
