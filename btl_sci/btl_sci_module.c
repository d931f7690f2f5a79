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
};

static int mca_btl_sci_register_error(struct mca_btl_base_module_t *btl,
                                      mca_btl_base_module_error_cb_fn_t cbfunc)
{
    ((mca_btl_sci_module_t *) btl)->error_cb = cbfunc;
    return OPAL_SUCCESS;
}

/* read and check a peer's modex record: the endpoint slot to use, or
 * NULL.  A peer on this host goes to shm (unless ofi is forced), any
 * other to ofi, whose directory follows the fixed record. */
static mca_btl_sci_endpoint_t *mca_btl_sci_endpoint_for(struct opal_proc_t *proc)
{
    mca_btl_sci_component_t *c = &mca_btl_sci_component;
    mca_btl_sci_modex_t *modex = NULL;
    mca_btl_sci_endpoint_t *ep;
    uint32_t vpid = proc->proc_name.vpid;
    size_t size = 0;
    bool shm;
    int rc;

    TC_OMPI_MODEX_RECV(rc, &c->super.btl_version, &proc->proc_name, (void **) &modex, &size);
    if (OPAL_SUCCESS != rc || NULL == modex) {
        return NULL;
    }
    shm = NULL != c->sd && size >= sizeof(*modex) && OPAL_PROC_ON_LOCAL_NODE(proc->proc_flags) &&
        modex->node_id == c->node_id && modex->local_rank < (uint32_t) c->num_local &&
        (int) modex->local_rank != c->local_rank;
    if (size < sizeof(*modex) ||
        (!shm &&
         (NULL == c->osd || vpid >= (uint32_t) c->num_procs || (int) vpid == c->my_vpid ||
          SCI_ERR_OK != sci_import_node(c->osd, vpid, modex + 1, size - sizeof(*modex))))) {
        free(modex);
        return NULL;
    }
    if (modex->nslots != c->ring_slots || modex->slot_size != c->slot_size) {
        opal_show_help("help-mpi-btl-sci.txt", "geometry mismatch", true,
                       opal_process_info.nodename, c->ring_slots, c->slot_size,
                       (int) modex->local_rank, modex->nslots, modex->slot_size);
        free(modex);
        return NULL;
    }
    ep = shm ? c->endpoints + modex->local_rank : c->oeps + vpid;
    if (MCA_BTL_SCI_EP_UNUSED == ep->state) {
        ep->sd = shm ? c->sd : c->osd;
        ep->dq = shm ? c->dq : c->odq;
    }
    ep->peer_pid = modex->pid;
    free(modex);
    return ep;
}

/* tc_ompi_add_local_procs' attach step: the peer's endpoint, connected
 * eagerly the first time; only a failed endpoint is unreachable (one still
 * connecting is retried by progress or the first send) */
static struct mca_btl_base_endpoint_t *mca_btl_sci_attach(struct opal_proc_t *proc, void *ctx)
{
    mca_btl_sci_component_t *c = ctx;
    mca_btl_sci_endpoint_t *ep = mca_btl_sci_endpoint_for(proc);

    if (NULL == ep) {
        return NULL;
    }
    if (MCA_BTL_SCI_EP_UNUSED == ep->state) {
        ep->proc = proc;
        ep->lseg = ep->sd == c->sd ? c->lsegs[ep->peer_rank] : c->olsegs[ep->peer_rank];
        ep->state = MCA_BTL_SCI_EP_CONNECTING;
        (void) OPAL_THREAD_ADD_FETCH32(&c->num_unconnected, 1);
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
            (void) mca_btl_sci_attach(proc, c);
        }
    }
}

int mca_btl_sci_add_procs(struct mca_btl_base_module_t *btl, size_t nprocs,
                          struct opal_proc_t **procs, struct mca_btl_base_endpoint_t **peers,
                          struct opal_bitmap_t *reachable)
{
    mca_btl_sci_component_t *c = &mca_btl_sci_component;
    const opal_proc_t *me = opal_proc_local_get();
    int unreachable = 0;

    (void) btl;
    if (NULL == c->osd) {
        /* shm only: this host's peers */
        unreachable =
            tc_ompi_add_local_procs(nprocs, procs, peers, reachable, mca_btl_sci_attach, c);
    } else {
        if (!c->all_peers_added) {
            c->all_peers_added = true;
            mca_btl_sci_add_all_peers();
        }
        for (size_t i = 0; i < nprocs; ++i) {
            peers[i] = NULL;
            if (procs[i] == me) {
                continue;
            }
            if (procs[i]->proc_name.jobid == me->proc_name.jobid) {
                peers[i] = mca_btl_sci_attach(procs[i], c);
            }
            if (NULL == peers[i]) {
                ++unreachable;
            } else if (NULL != reachable) {
                (void) opal_bitmap_set_bit(reachable, (int) i);
            }
        }
    }

    if (unreachable > 0 && !c->warned_unreachable && mca_btl_sci_only_sci_requested()) {
        char who[512], btls[256];

        c->warned_unreachable = true;
        tc_ompi_unreachable_text(nprocs, procs, peers, who, sizeof(who), btls, sizeof(btls));
        opal_show_help("help-mpi-btl-sci.txt", "peer unreachable", true, opal_process_info.nodename,
                       unreachable, NULL != c->osd ? "ofi" : "shm", who, btls);
    }
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

    (void) btl;
    if (!mca_btl_sci_module.initialized) {
        return OPAL_SUCCESS;
    }
    /* SCI shutdown order: disconnect remote segments, then hide, unmap
     * and remove the local ones */
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
    mca_btl_sci_module.initialized = false;
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
    (void) btl;
    return tc_ompi_frag_alloc(&mca_btl_sci_frag_ops, mca_btl_sci_component.slot_size, endpoint,
                              order, size, flags);
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
    (void) btl;
    return tc_ompi_frag_prepare_src(&mca_btl_sci_frag_ops, mca_btl_sci_component.slot_size,
                                    endpoint, convertor, order, reserve, size, flags);
}
