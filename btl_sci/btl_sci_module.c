/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * btl_sci_module.c: the btl_sci module: add_procs (connect and map each
 * node-local peer's segment, eagerly, with a lazy retry), del_procs,
 * finalize, descriptor allocation and prepare_src.
 */

#include "opal_config.h"

#include <string.h>
#include <unistd.h>

#include "opal/datatype/opal_convertor.h"
#include "tc_ompi_compat.h"
#include "opal/util/proc.h"
#include "opal/util/show_help.h"

#include "tc_ompi.h"

#include "btl_sci.h"
#include "btl_sci_endpoint.h"
#include "btl_sci_frag.h"

static int mca_btl_sci_register_error(struct mca_btl_base_module_t *btl,
                                      mca_btl_base_module_error_cb_fn_t cbfunc);

mca_btl_sci_module_t mca_btl_sci_module = {
    .super =
        {
            .btl_component = &mca_btl_sci_component.super,
            .btl_add_procs = mca_btl_sci_add_procs,
            .btl_del_procs = mca_btl_sci_del_procs,
            .btl_finalize = mca_btl_sci_finalize,
            .btl_alloc = mca_btl_sci_alloc,
            .btl_free = mca_btl_sci_free,
            .btl_prepare_src = mca_btl_sci_prepare_src,
            .btl_send = mca_btl_sci_send,
            .btl_sendi = mca_btl_sci_sendi,
            .btl_put = mca_btl_sci_put,
            .btl_get = mca_btl_sci_get,
            .btl_register_mem = mca_btl_sci_register_mem,
            .btl_deregister_mem = mca_btl_sci_deregister_mem,
            .btl_atomic_op = mca_btl_sci_atomic_op,
            .btl_atomic_fop = mca_btl_sci_atomic_fop,
            .btl_atomic_cswap = mca_btl_sci_atomic_cswap,
            .btl_dump = mca_btl_base_dump,
            .btl_register_error = mca_btl_sci_register_error,
        },
    .reach = "shm",
};

/* made at init from the module above with the btl_sci_ofi_* limits */
mca_btl_sci_module_t mca_btl_sci_ofi_module = {
    .reach = "ofi",
};

static int mca_btl_sci_register_error(struct mca_btl_base_module_t *btl,
                                      mca_btl_base_module_error_cb_fn_t cbfunc)
{
    ((mca_btl_sci_module_t *) btl)->error_cb = cbfunc;
    return OPAL_SUCCESS;
}

/* read and check a peer's modex record: the endpoint slot to use, or
 * NULL.  A peer on this host goes to shm (unless ofi is forced), any
 * other to ofi, whose directory follows the fixed record; the endpoint
 * belongs to that provider's module. */
static mca_btl_sci_endpoint_t *mca_btl_sci_endpoint_for(struct opal_proc_t *proc)
{
    mca_btl_sci_component_t *c = &mca_btl_sci_component;
    mca_btl_sci_modex_t rec;
    void *data = NULL;
    const void *dir = NULL;
    mca_btl_sci_endpoint_t *ep = NULL;
    mca_btl_sci_module_t *mod;
    uint32_t vpid = proc->proc_name.vpid, idx = vpid;
    bool other = proc->proc_name.jobid != OPAL_PROC_MY_NAME.jobid;
    size_t size = 0, dirlen = 0;
    bool shm;
    int rc;

    if (other &&
        (!c->other_jobs_on ||
         0 != tc_peers_index(&c->peers, tc_peers_name(proc->proc_name.jobid, vpid), true, &idx))) {
        /* no room left for another job's process (btl_sci_other_jobs) */
        return NULL;
    }
    if (NULL == c->osd && !OPAL_PROC_ON_LOCAL_NODE(proc->proc_flags)) {
        /* shm alone reaches this host only (and published locally) */
        return NULL;
    }
    TC_OMPI_MODEX_RECV(rc, &c->super.btl_version, &proc->proc_name, &data, &size);
    if (OPAL_SUCCESS != rc || 0 != mca_btl_sci_modex_parse(data, size, &rec, &dir, &dirlen)) {
        goto out;
    }
    /* shm's files are the job's: another job's process goes over ofi */
    shm = !other && NULL != c->sd && OPAL_PROC_ON_LOCAL_NODE(proc->proc_flags) &&
        rec.node_id == c->node_id && rec.local_rank < (uint32_t) c->num_local &&
        (int) rec.local_rank != c->local_rank;
    if (!shm &&
        (NULL == c->osd || (!other && !c->own_ofi) || idx >= (uint32_t) c->num_oeps ||
         (!other && (int) vpid == c->my_vpid) ||
         SCI_ERR_OK !=
             sci_import_node_as(c->osd, idx, vpid, tc_peers_name(proc->proc_name.jobid, vpid), dir,
                                dirlen))) {
        goto out;
    }
    mod = shm ? &mca_btl_sci_module : &mca_btl_sci_ofi_module;
    ep = shm ? c->endpoints + rec.local_rank : c->oeps + idx;
    if (!mca_btl_sci_modex_geometry_ok(&rec, shm, mod->ring_slots, mod->slot_size)) {
        /* said once: each module's add_procs asks again */
        if (MCA_BTL_SCI_EP_UNUSED == ep->state) {
            ep->state = MCA_BTL_SCI_EP_FAILED;
            opal_show_help("help-mpi-btl-sci.txt", "geometry mismatch", true,
                           opal_process_info.nodename, mod->ring_slots, mod->slot_size,
                           shm ? "local rank" : "rank", (int) (shm ? rec.local_rank : vpid),
                           shm ? rec.nslots : rec.ofi_nslots,
                           shm ? rec.slot_size : rec.ofi_slot_size);
        }
        ep = NULL;
        goto out;
    }
    if (MCA_BTL_SCI_EP_UNUSED == ep->state) {
        ep->module = mod;
        ep->sd = shm ? c->sd : c->osd;
        ep->dq = shm ? c->dq : c->odq;
        if (!shm) {
            /* the fabric carries a peer now: progress polls it every call */
            tc_atomic_store_relaxed(&c->ofi_poll_always, 1);
        }
    }
    ep->peer_pid = rec.pid;
out:
    free(data);
    return ep;
}

/* the peer's endpoint, connected eagerly the first time, and (module not
 * NULL) the module of its reach; only a failed endpoint is unreachable
 * (one still connecting is retried by progress or the first send) */
static struct mca_btl_base_endpoint_t *mca_btl_sci_attach(struct opal_proc_t *proc, void *ctx,
                                                          mca_btl_base_module_t **module)
{
    mca_btl_sci_component_t *c = ctx;
    mca_btl_sci_endpoint_t *ep = mca_btl_sci_endpoint_for(proc);
    bool fresh = false;

    if (NULL == ep) {
        return NULL;
    }
    if (NULL != module) {
        *module = &ep->module->super;
    }
    /* add_procs and progress (an offer) may meet a peer at once: one of
     * them takes it out of UNUSED */
    OPAL_THREAD_LOCK(&ep->lock);
    if (MCA_BTL_SCI_EP_UNUSED == ep->state && ep->peer_rank >= c->num_procs &&
        NULL == c->olsegs[ep->peer_rank] &&
        (SCI_ERR_OK != mca_btl_sci_ofi_segment_make(ep->peer_rank) ||
         SCI_ERR_OK !=
             sci_offer_segment(c->osd, (uint32_t) ep->peer_rank, c->olsegs[ep->peer_rank]))) {
        /* another job's process: its ring is made on first contact and
         * offered to it (our modex directory lists the own job's only) */
        ep->state = MCA_BTL_SCI_EP_FAILED;
    }
    if (MCA_BTL_SCI_EP_UNUSED == ep->state) {
        ep->proc = proc;
        ep->lseg = ep->sd == c->sd ? c->lsegs[ep->peer_rank] : c->olsegs[ep->peer_rank];
        ep->state = MCA_BTL_SCI_EP_CONNECTING;
        (void) OPAL_THREAD_ADD_FETCH32(&c->num_unconnected, 1);
        fresh = true;
    }
    OPAL_THREAD_UNLOCK(&ep->lock);
    if (fresh) {
        /* eager connection; if the peer's segment is not available yet
         * progress (or the first send) retries */
        (void) mca_btl_sci_endpoint_connect(ep);
    }
    return MCA_BTL_SCI_EP_FAILED == ep->state ? NULL : ep;
}

/* Open MPI adds peers on other hosts lazily (at the first message to
 * them), so a process that only receives from one would never poll its
 * ring: the first add_procs attaches every process of the job. */
static void mca_btl_sci_add_all_peers(void)
{
    mca_btl_sci_component_t *c = &mca_btl_sci_component;
    const opal_proc_t *me = opal_proc_local_get();

    for (int v = 0; v < c->num_procs; ++v) {
        opal_process_name_t name = me->proc_name;
        opal_proc_t *proc;

        if (v == c->my_vpid) {
            continue;
        }
        name.vpid = (uint32_t) v;
        proc = opal_proc_for_name(name);
        if (NULL != proc) {
            (void) mca_btl_sci_attach(proc, c, NULL);
        }
    }
}

/* progress: each process of another job that offered us a ring gets its
 * endpoint (on 5.0 connect/accept adds no process to the BTLs: the side
 * that has not sent yet meets the other here) */
void mca_btl_sci_take_offers(void)
{
    mca_btl_sci_component_t *c = &mca_btl_sci_component;
    uint64_t name;

    while (sci_take_offer(c->osd, &name)) {
        opal_process_name_t pn;
        opal_proc_t *proc;

        pn.jobid = (opal_jobid_t) (name >> 32);
        pn.vpid = (opal_vpid_t) (name & 0xffffffffu);
        if (pn.jobid == OPAL_PROC_MY_NAME.jobid) {
            continue; /* the own job's rings are in the modex */
        }
        proc = opal_proc_for_name(pn);
        if (NULL == proc || NULL == mca_btl_sci_attach(proc, c, NULL)) {
            opal_output_verbose(10, c->output,
                                "btl:sci: an offer of a process of another job (%s) not taken",
                                NULL == proc ? "unknown to Open MPI" : "unreachable");
        }
    }
}

/* one add_procs for both modules: each claims the peers of its reach */
int mca_btl_sci_add_procs(struct mca_btl_base_module_t *btl, size_t nprocs,
                          struct opal_proc_t **procs, struct mca_btl_base_endpoint_t **peers,
                          struct opal_bitmap_t *reachable)
{
    mca_btl_sci_component_t *c = &mca_btl_sci_component;
    tc_ompi_reach_claim_t claim = {
        .reach = mca_btl_sci_attach,
        .ctx = c,
        .help_file = "help-mpi-btl-sci.txt",
        .providers = NULL == c->osd ? "shm" : (NULL == c->sd ? "ofi" : "shm, ofi"),
        .only_requested = mca_btl_sci_only_sci_requested(),
        .other_jobs = c->other_jobs_on,
        .warned = &c->warned_unreachable,
    };

    if (NULL != c->osd && !c->all_peers_added) {
        c->all_peers_added = true;
        mca_btl_sci_add_all_peers();
    }
    (void) tc_ompi_reach_add_procs(btl, &claim, nprocs, procs, peers, reachable);
    mca_btl_sci_lost_watch_start();
    return OPAL_SUCCESS;
}

int mca_btl_sci_del_procs(struct mca_btl_base_module_t *btl, size_t nprocs,
                          struct opal_proc_t **procs, struct mca_btl_base_endpoint_t **peers)
{
    (void) btl;
    (void) procs;
    for (size_t i = 0; i < nprocs; ++i) {
        if (NULL != peers[i]) {
            mca_btl_sci_endpoint_disconnect(peers[i]);
            peers[i] = NULL;
        }
    }
    return OPAL_SUCCESS;
}

int mca_btl_sci_finalize(struct mca_btl_base_module_t *btl)
{
    mca_btl_sci_component_t *c = &mca_btl_sci_component;
    opal_list_item_t *item;

    if (!((mca_btl_sci_module_t *) btl)->initialized) {
        return OPAL_SUCCESS;
    }
    ((mca_btl_sci_module_t *) btl)->initialized = false;
    if (mca_btl_sci_module.initialized || mca_btl_sci_ofi_module.initialized) {
        /* the component's state goes with the last module */
        return OPAL_SUCCESS;
    }
    /* SCI shutdown order: disconnect remote segments, then hide, unmap
     * and remove the local ones */
    mca_btl_sci_lost_watch_stop();
    c->running = false;
    /* transfers still in flight name endpoints: finish them first (their
     * callbacks run; a peer that is gone fails them), within 10 s */
    for (int i = 0; i < 100000 && tc_atomic_load_relaxed(&c->dma_posted) > 0; ++i) {
        (void) sci_progress(c->osd);
        if (0 == mca_btl_sci_dma_reap()) {
            usleep(100);
        }
    }
    mca_btl_sci_free_endpoints();
    while (NULL != (item = tc_ompi_done_list_pop(&c->completed_frags))) {
        mca_btl_sci_frag_t *frag = (mca_btl_sci_frag_t *) item;
        if (frag->base.des_flags & MCA_BTL_DES_FLAGS_BTL_OWNERSHIP) {
            mca_btl_sci_frag_return(frag);
        }
    }
    mca_btl_sci_atomic_fini();
    mca_btl_sci_rcache_fini();
    mca_btl_sci_remove_local_segments();
    return OPAL_SUCCESS;
}

static mca_btl_base_descriptor_t *mca_btl_sci_frag_get(struct mca_btl_base_endpoint_t *ep)
{
    mca_btl_sci_frag_t *frag = mca_btl_sci_frag_alloc(ep);

    return OPAL_LIKELY(NULL != frag) ? &frag->base : NULL;
}

static void mca_btl_sci_frag_put(mca_btl_base_descriptor_t *des)
{
    mca_btl_sci_frag_return((mca_btl_sci_frag_t *) des);
}

/* the fragment goes through a ring slot: packed once into the fragment,
 * one memcpy into the slot at send time */
static const tc_ompi_frag_ops_t mca_btl_sci_frag_ops = {
    .get = mca_btl_sci_frag_get,
    .put = mca_btl_sci_frag_put,
};

mca_btl_base_descriptor_t *mca_btl_sci_alloc(struct mca_btl_base_module_t *btl,
                                             struct mca_btl_base_endpoint_t *endpoint,
                                             uint8_t order, size_t size, uint32_t flags)
{
    /* the endpoint's module: its fragments hold that module's slot size */
    (void) btl;
    return tc_ompi_frag_alloc(&mca_btl_sci_frag_ops, endpoint->module->slot_size, endpoint, order,
                              size, flags);
}

int mca_btl_sci_free(struct mca_btl_base_module_t *btl, mca_btl_base_descriptor_t *des)
{
    (void) btl;
    mca_btl_sci_frag_put(des);
    return OPAL_SUCCESS;
}

mca_btl_base_descriptor_t *mca_btl_sci_prepare_src(struct mca_btl_base_module_t *btl,
                                                   struct mca_btl_base_endpoint_t *endpoint,
                                                   struct opal_convertor_t *convertor,
                                                   uint8_t order, size_t reserve, size_t *size,
                                                   uint32_t flags)
{
    const size_t inplace_min = endpoint->module->inplace_min;

    (void) btl;
    if (0 != inplace_min && *size >= inplace_min && reserve < endpoint->module->slot_size &&
        !opal_convertor_need_buffers(convertor)) {
        return tc_ompi_frag_prepare_inplace(&mca_btl_sci_frag_ops, endpoint->module->slot_size,
                                            endpoint, convertor, order, reserve, size, flags);
    }
    return tc_ompi_frag_prepare_src(&mca_btl_sci_frag_ops, endpoint->module->slot_size, endpoint,
                                    convertor, order, reserve, size, flags);
}
