/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * btl_bip_module.c: the btl_bip modules, one per reach (peers on this
 * host: shm; peers through libfabric: ofi): add_procs (connect to each
 * peer's static receive queue, each module claiming the peers of its
 * reach), del_procs, finalize (counters with btl_bip_verbose), descriptor
 * allocation and prepare_src by the module's limits.
 */

#include "opal_config.h"

#include <errno.h>
#include <string.h>

#include "opal/datatype/opal_convertor.h"
#include "tc_ompi_compat.h"
#include "opal/util/proc.h"
#include "opal/util/show_help.h"

#include "tc_ompi.h"

#include "btl_bip.h"
#include "btl_bip_endpoint.h"
#include "btl_bip_frag.h"

static int mca_btl_bip_register_error(struct mca_btl_base_module_t *btl,
                                      mca_btl_base_module_error_cb_fn_t cbfunc);

/* the same-host reach, and the template of the ofi reach's module */
mca_btl_bip_module_t mca_btl_bip_module = {
    .reach = "shm",
    .super =
        {
            .btl_component = &mca_btl_bip_component.super,
            .btl_add_procs = mca_btl_bip_add_procs,
            .btl_del_procs = mca_btl_bip_del_procs,
            .btl_finalize = mca_btl_bip_finalize,
            .btl_alloc = mca_btl_bip_alloc,
            .btl_free = mca_btl_bip_free,
            .btl_prepare_src = mca_btl_bip_prepare_src,
            .btl_send = mca_btl_bip_send,
            .btl_sendi = mca_btl_bip_sendi,
            .btl_get = mca_btl_bip_get,
            .btl_register_mem = mca_btl_bip_register_mem,
            .btl_deregister_mem = mca_btl_bip_deregister_mem,
            .btl_dump = mca_btl_base_dump,
            .btl_register_error = mca_btl_bip_register_error,
        },
};

/* peers reached through the ofi provider: a copy of the template with
 * the btl_bip_ofi_* figures, made at init */
mca_btl_bip_module_t mca_btl_bip_ofi_module = {.reach = "ofi"};

static int mca_btl_bip_register_error(struct mca_btl_base_module_t *btl,
                                      mca_btl_base_module_error_cb_fn_t cbfunc)
{
    ((mca_btl_bip_module_t *) btl)->error_cb = cbfunc;
    return OPAL_SUCCESS;
}

/* read and check a peer's modex record (from another process: every
 * field is checked): its endpoint, connected the first time, or NULL */
static mca_btl_bip_endpoint_t *mca_btl_bip_endpoint_for(struct opal_proc_t *proc)
{
    mca_btl_bip_component_t *c = &mca_btl_bip_component;
    mca_btl_bip_modex_t *modex = NULL;
    mca_btl_bip_endpoint_t *ep;
    bip_peer_info_t info;
    uint32_t vpid = proc->proc_name.vpid;
    const bool other = proc->proc_name.jobid != OPAL_PROC_MY_NAME.jobid;
    /* another job's process: over ofi, whatever its host */
    bool local = !other && OPAL_PROC_ON_LOCAL_NODE(proc->proc_flags);
    size_t size = 0;
    int rc;

    if (other) {
        const uint64_t name = tc_peers_name(proc->proc_name.jobid, vpid);

        if (!c->other_jobs_on || 0 != tc_peers_index(&c->peers, name, true, &vpid)) {
            return NULL;
        }
    } else if (vpid >= c->nprocs || vpid == c->my_vpid) {
        return NULL;
    }
    if (vpid >= c->max_eps) {
        return NULL;
    }
    ep = c->endpoints + vpid;
    if (MCA_BTL_BIP_EP_UNUSED != ep->state) {
        return MCA_BTL_BIP_EP_CONNECTED == ep->state ? ep : NULL;
    }
    TC_OMPI_MODEX_RECV(rc, &c->super.btl_version, &proc->proc_name, (void **) &modex, &size);
    if (OPAL_SUCCESS != rc || NULL == modex) {
        return NULL;
    }
    if (size < sizeof(*modex) || modex->addrlen > BIP_ADDR_MAX ||
        size != sizeof(*modex) + modex->addrlen || (other && 0 == modex->addrlen) ||
        (local &&
         (modex->local_rank >= (uint32_t) c->num_local ||
          (int) modex->local_rank == c->local_rank))) {
        free(modex);
        return NULL;
    }
    /* what both ends of the peer's reach must agree on: a peer on this
     * host shares the shm queue's geometry, any peer the credits, the
     * posted-receive limit and the ofi queue's slot */
    if ((local && (modex->nslots != bip_dev_nslots(c->dev) || modex->slot_size != c->slot_size)) ||
        modex->ofi_slot_size != c->ofi_slot_size || modex->credits != c->credits ||
        modex->max_posted != c->max_posted) {
        opal_show_help("help-mpi-btl-bip.txt", "geometry mismatch", true,
                       opal_process_info.nodename, bip_dev_nslots(c->dev), c->slot_size, c->credits,
                       c->max_posted, c->ofi_slot_size, (int) vpid, modex->nslots, modex->slot_size,
                       modex->credits, modex->max_posted, modex->ofi_slot_size);
        free(modex);
        return NULL;
    }
    /* same host: shm (when open); other hosts: ofi at the address */
    info.rank = vpid;
    info.local_rank = local ? (int32_t) modex->local_rank : -1;
    info.addr = modex + 1;
    info.addrlen = modex->addrlen;
    ep->proc = proc;
    (void) mca_btl_bip_endpoint_connect(ep, &info);
    free(modex);
    return MCA_BTL_BIP_EP_CONNECTED == ep->state ? ep : NULL;
}

int mca_btl_bip_resolve(uint32_t jobid, uint32_t vpid, uint32_t *idx)
{
    mca_btl_bip_component_t *c = &mca_btl_bip_component;

    if (!c->other_jobs_on || jobid == c->peers.jobid) {
        return -EINVAL;
    }
    return tc_peers_index(&c->peers, tc_peers_name(jobid, vpid), true, idx);
}

struct mca_btl_base_endpoint_t *mca_btl_bip_endpoint_of_index(uint32_t idx)
{
    mca_btl_bip_component_t *c = &mca_btl_bip_component;
    opal_process_name_t name = opal_proc_local_get()->proc_name;
    opal_proc_t *proc;
    uint64_t full;

    if (!c->other_jobs_on || 0 != tc_peers_name_of(&c->peers, idx, &full)) {
        return NULL;
    }
    name.jobid = (uint32_t) (full >> 32);
    name.vpid = (uint32_t) full;
    proc = opal_proc_for_name(name);
    return NULL != proc ? mca_btl_bip_endpoint_for(proc) : NULL;
}

/* Open MPI adds peers on other hosts lazily (at the first message to
 * them), but a peer's message is taken only from a connected endpoint:
 * the first add_procs (in MPI_Init, before its closing fence) connects
 * every process of the job a provider reaches */
static void mca_btl_bip_add_all_peers(void)
{
    mca_btl_bip_component_t *c = &mca_btl_bip_component;
    const opal_proc_t *me = opal_proc_local_get();

    for (uint32_t v = 0; v < c->nprocs; ++v) {
        opal_process_name_t name = me->proc_name;
        opal_proc_t *proc;

        if (v == c->my_vpid || MCA_BTL_BIP_EP_UNUSED != c->endpoints[v].state) {
            continue;
        }
        name.vpid = v;
        proc = opal_proc_for_name(name);
        if (NULL != proc) {
            (void) mca_btl_bip_endpoint_for(proc);
        }
    }
}

/* the claim's choice for one peer: its endpoint (connected the first
 * time) and the module of its reach */
static struct mca_btl_base_endpoint_t *mca_btl_bip_reach(struct opal_proc_t *proc, void *ctx,
                                                         mca_btl_base_module_t **module)
{
    mca_btl_bip_endpoint_t *ep = mca_btl_bip_endpoint_for(proc);

    (void) ctx;
    if (NULL != ep) {
        *module = &ep->module->super;
    }
    return ep;
}

int mca_btl_bip_add_procs(struct mca_btl_base_module_t *btl, size_t nprocs,
                          struct opal_proc_t **procs, struct mca_btl_base_endpoint_t **peers,
                          struct opal_bitmap_t *reachable)
{
    mca_btl_bip_component_t *c = &mca_btl_bip_component;
    const tc_ompi_reach_claim_t claim = {
        .reach = mca_btl_bip_reach,
        .ctx = NULL,
        .help_file = "help-mpi-btl-bip.txt",
        .providers = bip_dev_providers(c->dev),
        .only_requested = mca_btl_bip_only_bip_requested(),
        .warned = &c->warned_unreachable,
        .other_jobs = c->other_jobs_on,
    };

    if (!c->all_peers_added) {
        c->all_peers_added = true;
        mca_btl_bip_add_all_peers();
    }
    (void) tc_ompi_reach_add_procs(btl, &claim, nprocs, procs, peers, reachable);
    c->unlinked = 0 != bip_unlink_when_connected(c->dev);
    mca_btl_bip_lost_watch_start();
    return OPAL_SUCCESS;
}

int mca_btl_bip_del_procs(struct mca_btl_base_module_t *btl, size_t nprocs,
                          struct opal_proc_t **procs, struct mca_btl_base_endpoint_t **peers)
{
    (void) btl;
    (void) procs;
    for (size_t i = 0; i < nprocs; ++i) {
        if (NULL != peers[i]) {
            bool shm;

            OPAL_THREAD_LOCK(&peers[i]->lock);
            shm = NULL != peers[i]->peer && 0 == strcmp(bip_peer_provider(peers[i]->peer), "shm");
            mca_btl_bip_endpoint_disconnect(peers[i]);
            if (shm) {
                /* a later add_procs (the ofi module's, right after this
                 * one's) must not map it again: its name may be gone */
                peers[i]->state = MCA_BTL_BIP_EP_RELEASED;
            }
            OPAL_THREAD_UNLOCK(&peers[i]->lock);
            peers[i] = NULL;
        }
    }
    return OPAL_SUCCESS;
}

/* counters at finalize (btl_bip_verbose >= 1) */
static void mca_btl_bip_print_counters(void)
{
    mca_btl_bip_component_t *c = &mca_btl_bip_component;
    const mca_btl_bip_counters_t *k = &c->cnt;

    opal_output_verbose(1, c->output,
                        "btl:bip: local rank %d: short %llu, req %llu, get-ack %llu, "
                        "credit-only sent %llu, sends deferred %llu, send FIFO high-water %llu, "
                        "receives deferred %llu, receive FIFO high-water %llu, large bytes %llu, "
                        "large reads %llu (%llu bytes) (N=%u, queue %u x %u B, ofi message %u B)",
                        c->local_rank, (unsigned long long) k->short_sent,
                        (unsigned long long) k->req_sent, (unsigned long long) k->get_acks,
                        (unsigned long long) k->credit_only_sent, (unsigned long long) k->deferred,
                        (unsigned long long) k->fifo_hwm, (unsigned long long) k->recv_deferred,
                        (unsigned long long) k->recv_fifo_hwm, (unsigned long long) k->bytes_large,
                        (unsigned long long) k->large_reads, (unsigned long long) k->bytes_read,
                        c->credits, bip_dev_nslots(c->dev), c->slot_size, c->ofi_slot_size);
}

void mca_btl_bip_release_all(void)
{
    mca_btl_bip_component_t *c = &mca_btl_bip_component;
    opal_list_item_t *item;

    mca_btl_bip_lost_watch_stop();
    if (NULL != c->endpoints) {
        for (uint32_t i = 0; i < c->max_eps; ++i) {
            OBJ_DESTRUCT(c->endpoints + i);
        }
        free(c->endpoints);
        c->endpoints = NULL;
    }
    while (NULL != (item = tc_ompi_done_list_pop(&c->completed_frags))) {
        mca_btl_bip_frag_t *frag = (mca_btl_bip_frag_t *) item;
        if (frag->base.des_flags & MCA_BTL_DES_FLAGS_BTL_OWNERSHIP) {
            mca_btl_bip_frag_return(frag);
        }
    }
    /* receives never completed (a peer died): drop them */
    while (NULL != (item = opal_list_remove_first(&c->posted))) {
        mca_btl_bip_rreq_t *rreq = (mca_btl_bip_rreq_t *) item;
        if (MCA_BTL_BIP_ACK_MEDIUM == rreq->kind) {
            free(rreq->buf);
        }
        OBJ_RELEASE(rreq);
    }
    while (NULL != (item = opal_list_remove_first(&c->recv_fifo))) {
        mca_btl_bip_rreq_t *rreq = (mca_btl_bip_rreq_t *) item;
        if (MCA_BTL_BIP_ACK_MEDIUM == rreq->kind) {
            free(rreq->buf);
        }
        OBJ_RELEASE(rreq);
    }
    mca_btl_bip_rcache_fini();
    if (NULL != c->dev) {
        c->shmq = NULL;
        bip_close(c->dev);
        c->dev = NULL;
    }
    if (c->other_jobs_on) {
        c->other_jobs_on = false;
        tc_peers_fini(&c->peers);
    }
    c->max_eps = 0;
}

int mca_btl_bip_finalize(struct mca_btl_base_module_t *btl)
{
    mca_btl_bip_module_t *mod = (mca_btl_bip_module_t *) btl;

    if (!mod->initialized) {
        return OPAL_SUCCESS;
    }
    mod->initialized = false;
    /* the device and the endpoints serve both modules: they go with the
     * last one */
    if (mca_btl_bip_module.initialized || mca_btl_bip_ofi_module.initialized) {
        return OPAL_SUCCESS;
    }
    mca_btl_bip_print_counters();
    mca_btl_bip_release_all();
    return OPAL_SUCCESS;
}

/* a fragment of `size` bytes: the slot-sized buffer, or a heap one */
static mca_btl_bip_frag_t *mca_btl_bip_frag_sized(struct mca_btl_base_endpoint_t *endpoint,
                                                  size_t size)
{
    mca_btl_bip_frag_t *frag = mca_btl_bip_frag_alloc(endpoint);

    if (OPAL_UNLIKELY(NULL == frag)) {
        return NULL;
    }
    if (size > mca_btl_bip_component.short_limit) {
        frag->heap = malloc(size);
        if (NULL == frag->heap) {
            mca_btl_bip_frag_return(frag);
            return NULL;
        }
        frag->segments[0].seg_addr.pval = frag->heap;
    }
    return frag;
}

static mca_btl_base_descriptor_t *mca_btl_bip_frag_get(struct mca_btl_base_endpoint_t *ep)
{
    mca_btl_bip_frag_t *frag = mca_btl_bip_frag_alloc(ep);

    return OPAL_LIKELY(NULL != frag) ? &frag->base : NULL;
}

static void mca_btl_bip_frag_put(mca_btl_base_descriptor_t *des)
{
    mca_btl_bip_frag_return((mca_btl_bip_frag_t *) des);
}

/* the pool for tc_ompi's in-place prepare_src */
static const tc_ompi_frag_ops_t mca_btl_bip_frag_ops = {
    .get = mca_btl_bip_frag_get,
    .put = mca_btl_bip_frag_put,
};

mca_btl_base_descriptor_t *mca_btl_bip_alloc(struct mca_btl_base_module_t *btl,
                                             struct mca_btl_base_endpoint_t *endpoint,
                                             uint8_t order, size_t size, uint32_t flags)
{
    mca_btl_bip_frag_t *frag;

    if (OPAL_UNLIKELY(size > btl->btl_max_send_size)) {
        return NULL;
    }
    frag = mca_btl_bip_frag_sized(endpoint, size);
    if (OPAL_UNLIKELY(NULL == frag)) {
        return NULL;
    }
    frag->segments[0].seg_len = size;
    frag->base.des_flags = flags;
    frag->base.order = order;
    return &frag->base;
}

int mca_btl_bip_free(struct mca_btl_base_module_t *btl, mca_btl_base_descriptor_t *des)
{
    (void) btl;
    mca_btl_bip_frag_return((mca_btl_bip_frag_t *) des);
    return OPAL_SUCCESS;
}

mca_btl_base_descriptor_t *mca_btl_bip_prepare_src(struct mca_btl_base_module_t *btl,
                                                   struct mca_btl_base_endpoint_t *endpoint,
                                                   struct opal_convertor_t *convertor,
                                                   uint8_t order, size_t reserve, size_t *size,
                                                   uint32_t flags)
{
    const size_t max = btl->btl_max_send_size;
    const size_t short_limit = ((mca_btl_bip_module_t *) btl)->short_limit;
    mca_btl_bip_frag_t *frag;
    size_t max_data;

    if (OPAL_UNLIKELY(reserve > short_limit || reserve >= max)) {
        return NULL;
    }
    max_data = tc_ompi_payload(reserve, *size, max);
    if ((reserve + max_data > short_limit || ((mca_btl_bip_module_t *) btl)->gather) &&
        0 != max_data && !opal_convertor_need_buffers(convertor)) {
        /* medium (or a SHORT to a reach that gathers) and contiguous:
         * header here, data in place; the send gathers both */
        return tc_ompi_frag_prepare_inplace(&mca_btl_bip_frag_ops, max, endpoint, convertor, order,
                                            reserve, size, flags);
    } else {
        frag = mca_btl_bip_frag_sized(endpoint, reserve + max_data);
        if (OPAL_UNLIKELY(NULL == frag)) {
            return NULL;
        }
        if (OPAL_UNLIKELY(OPAL_SUCCESS !=
                          tc_ompi_pack(convertor,
                                       (unsigned char *) frag->segments[0].seg_addr.pval + reserve,
                                       &max_data, NULL))) {
            mca_btl_bip_frag_return(frag);
            return NULL;
        }
        frag->segments[0].seg_len = reserve + max_data;
    }
    *size = max_data;
    frag->base.des_flags = flags;
    frag->base.order = order;
    return &frag->base;
}
