/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/*
 * btl_via_module.c: the btl_via modules, one per reach (this host's
 * peers over emu, other hosts' over ofi or verbs; docs/common.md, "One
 * BTL module per reach"): add_procs (each module claims the peers of its
 * device; the peer's VI address from the modex), del_procs, finalize
 * (the last one tears down, with the registration cache statistics),
 * descriptor allocation, prepare_src and peer failure.
 */

#include "opal_config.h"

#include <errno.h>
#include <string.h>

#include "opal/datatype/opal_convertor.h"
#include "opal/util/proc.h"
#include "opal/util/show_help.h"

#include "btl_via.h"
#include TC_OMPI_PMIX_H
#include "tc_ompi.h"
#include "btl_via_endpoint.h"
#include "tc_atomic.h"
#include "btl_via_frag.h"

static int mca_btl_via_register_error(struct mca_btl_base_module_t *btl,
                                      mca_btl_base_module_error_cb_fn_t cbfunc);

/* the template: this host's peers, the standard parameters */
mca_btl_via_module_t mca_btl_via_module = {
    .slot = MCA_BTL_VIA_DEV_LOCAL,
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
            .btl_flush = mca_btl_via_flush,
        },
};

/* other hosts' peers: a copy of the template with btl_via_ofi_* made at
 * init */
mca_btl_via_module_t mca_btl_via_ofi_module = {.slot = MCA_BTL_VIA_DEV_NET};

static int mca_btl_via_register_error(struct mca_btl_base_module_t *btl,
                                      mca_btl_base_module_error_cb_fn_t cbfunc)
{
    ((mca_btl_via_module_t *) btl)->error_cb = cbfunc;
    return OPAL_SUCCESS;
}

/* a peer's modex record (freed by the caller); OPAL_ERR_UNREACH without one */
static int mca_btl_via_peer_record(struct opal_proc_t *proc, void **rec, size_t *size)
{
    int rc;

    *rec = NULL;
    *size = 0;
    TC_OMPI_MODEX_RECV(rc, &mca_btl_via_component.super.btl_version, &proc->proc_name, rec, size);
    return OPAL_SUCCESS == rc && NULL != *rec ? OPAL_SUCCESS : OPAL_ERR_UNREACH;
}

/* a parser's -ERANGE: the peer's receive geometry differs from ours */
static void mca_btl_via_geometry_mismatch(const struct opal_proc_t *proc,
                                          const mca_btl_via_modex_slot_t *mine,
                                          const mca_btl_via_modex_slot_t *theirs)
{
    opal_show_help("help-mpi-btl-via.txt", "geometry mismatch", true, opal_process_info.nodename,
                   mine->recv_descriptors, mine->recv_size, (int) proc->proc_name.vpid,
                   theirs->recv_descriptors, theirs->recv_size);
}

/* the peer's VI for us on device slot `slot`, from its modex record
 * (checked: it comes from another process) */
static int mca_btl_via_peer_address(struct opal_proc_t *proc, int slot, vipl_vi_address_t *addr)
{
    mca_btl_via_component_t *c = &mca_btl_via_component;
    mca_btl_via_modex_slot_t mine, theirs;
    void *rec;
    size_t size;
    int rc;

    if (OPAL_SUCCESS != mca_btl_via_peer_record(proc, &rec, &size)) {
        return OPAL_ERR_UNREACH;
    }
    mca_btl_via_modex_slot_of(slot, &mine);
    rc = mca_btl_via_modex_parse(rec, size, c->nprocs, c->my_vpid, slot, &mine, &theirs, addr);
    free(rec);
    if (-ERANGE == rc) {
        mca_btl_via_geometry_mismatch(proc, &mine, &theirs);
    }
    return 0 == rc ? OPAL_SUCCESS : OPAL_ERR_UNREACH;
}

/* a process of another job: its NIC on the network device, from its
 * own job's modex record; the VI it makes for us is named by its first
 * request or doorbell (VIPL_DISC_ANY) */
static int mca_btl_via_peer_any_address(struct opal_proc_t *proc, vipl_vi_address_t *addr)
{
    const mca_btl_via_dev_t *net = &mca_btl_via_component.devs[MCA_BTL_VIA_DEV_NET];
    mca_btl_via_modex_slot_t mine, theirs;
    vipl_vi_address_t nic;
    void *rec;
    size_t size;
    int rc;

    if (OPAL_SUCCESS != mca_btl_via_peer_record(proc, &rec, &size)) {
        return OPAL_ERR_UNREACH;
    }
    mca_btl_via_modex_slot_of(MCA_BTL_VIA_DEV_NET, &mine);
    rc = mca_btl_via_modex_parse_nic(rec, size, MCA_BTL_VIA_DEV_NET, &mine, &theirs, &nic);
    free(rec);
    if (-ERANGE == rc) {
        mca_btl_via_geometry_mismatch(proc, &mine, &theirs);
    }
    if (0 != rc || !net->ops->any_vi_address(&nic, addr)) {
        return OPAL_ERR_UNREACH;
    }
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
    const bool other = proc->proc_name.jobid != OPAL_PROC_MY_NAME.jobid;
    uint32_t idx = proc->proc_name.vpid;
    int slot;
    vipl_vi_address_t addr;
    mca_btl_via_endpoint_t *ep;

    if (other) {
        const uint64_t name = tc_peers_name(proc->proc_name.jobid, proc->proc_name.vpid);

        /* other jobs: over the network device, at an index of the table */
        if (!c->other_jobs_on || 0 != tc_peers_index(&c->peers, name, true, &idx)) {
            return NULL;
        }
        slot = MCA_BTL_VIA_DEV_NET;
    } else {
        slot = mca_btl_via_peer_slot(proc);
    }
    if (slot < 0 || idx >= c->max_eps || (!other && idx >= c->nprocs)) {
        return NULL;
    }
    OPAL_THREAD_LOCK(&c->lock);
    ep = c->endpoints[idx];
    if (NULL == ep &&
        OPAL_SUCCESS ==
            (other ? mca_btl_via_peer_any_address(proc, &addr)
                   : mca_btl_via_peer_address(proc, slot, &addr))) {
        ep = mca_btl_via_endpoint_create(proc, idx, slot, &addr);
        /* progress reads the table without c->lock */
        tc_atomic_store_release(&c->endpoints[idx], ep);
    }
    OPAL_THREAD_UNLOCK(&c->lock);
    return ep;
}

/* the endpoint of index v of the peer table (made if needed), NULL when
 * no device reaches it */
static mca_btl_via_endpoint_t *mca_btl_via_endpoint_of_index(uint32_t v)
{
    mca_btl_via_component_t *c = &mca_btl_via_component;
    opal_process_name_t name = opal_proc_local_get()->proc_name;
    opal_proc_t *proc;
    uint64_t full;

    if (0 != tc_peers_name_of(&c->peers, v, &full)) {
        return NULL;
    }
    name.jobid = (uint32_t) (full >> 32);
    name.vpid = (uint32_t) full;
    proc = opal_proc_for_name(name);
    return NULL != proc ? mca_btl_via_endpoint_of(proc) : NULL;
}

int mca_btl_via_accept_requests(void)
{
    mca_btl_via_component_t *c = &mca_btl_via_component;
    int count = 0;

    for (int k = 0; k < MCA_BTL_VIA_NUM_DEVS; ++k) {
        mca_btl_via_dev_t *dev = &c->devs[k];
        uint32_t v;

        if (NULL == dev->nic || !dev->lazy) {
            continue;
        }
        if (MCA_BTL_VIA_DEV_NET == k && 0 == tc_atomic_load_relaxed(&c->net_wait_always) &&
            0 != (c->wait_tick & (MCA_BTL_VIA_NET_IDLE_TICKS - 1))) {
            continue;
        }
        while (VIPL_SUCCESS == vipl_connect_wait(dev->nic, &v)) {
            mca_btl_via_endpoint_t *ep;

            /* the discriminator is the asking process's index: its vpid,
             * or for another job's the one the resolver gave it (it
             * comes from another process: checked) */
            if (v >= c->max_eps || v == c->my_vpid) {
                continue;
            }
            ep = mca_btl_via_endpoint_of_index(v);
            if (NULL == ep || ep->dev_index != k) {
                continue;
            }
            opal_output_verbose(20, c->output, "btl:via: peer %u asks for a VI", v);
            mca_btl_via_endpoint_use(ep);
            ++count;
        }
    }
    return count;
}

/* Open MPI adds peers on other hosts lazily (at the first message to
 * them), so a process that only receives from a peer would never post
 * receives for it nor bring its VI up, and what the peer sends is lost
 * on verbs (a queue pair in INIT drops it).  A device with connection
 * requests (emu, ofi) needs nothing here: the peer's first message asks
 * for the VI and our progress makes it (mca_btl_via_accept_requests).
 * On a device without them (verbs, emu in strict mode) the first
 * add_procs, in MPI_Init, brings up the VI of every process of the job
 * the device reaches; MPI_Init's closing fence then orders every VI's
 * setup before the first message.  emu maps every local peer's segment
 * now, so that its name goes (docs/btl_via.md). */
static void mca_btl_via_add_all_peers(void)
{
    mca_btl_via_component_t *c = &mca_btl_via_component;
    bool eager = false, attach = false;

    for (int k = 0; k < MCA_BTL_VIA_NUM_DEVS; ++k) {
        if (NULL != c->devs[k].nic) {
            eager |= !c->devs[k].lazy;
            attach |= c->devs[k].lazy && NULL != c->devs[k].nic->ops->attach_peer;
        }
    }
    for (uint32_t v = 0; (eager || attach) && v < c->nprocs; ++v) {
        opal_process_name_t name = opal_proc_local_get()->proc_name;
        mca_btl_via_endpoint_t *ep;
        opal_proc_t *proc;
        int slot;

        if (v == c->my_vpid) {
            continue;
        }
        name.vpid = v;
        proc = opal_proc_for_name(name);
        slot = NULL != proc ? mca_btl_via_peer_slot(proc) : -1;
        /* a device with connection requests and nothing to attach (ofi):
         * not even the endpoint object until the peer is used */
        if (slot < 0 || (c->devs[slot].lazy && NULL == c->devs[slot].nic->ops->attach_peer)) {
            continue;
        }
        ep = mca_btl_via_endpoint_of(proc);
        if (NULL == ep) {
            continue;
        }
        if (!ep->dev->lazy) {
            mca_btl_via_endpoint_use(ep);
        } else if (NULL != ep->dev->nic->ops->attach_peer) {
            (void) vipl_attach_peer(ep->dev->nic, &ep->remote);
        }
    }
}

/* the reach of a peer for tc_ompi_reach_add_procs: its endpoint (a VI
 * brought up now on a device without connection requests) and the
 * module of its device */
static struct mca_btl_base_endpoint_t *mca_btl_via_reach(struct opal_proc_t *proc, void *ctx,
                                                         mca_btl_base_module_t **module)
{
    mca_btl_via_endpoint_t *ep = mca_btl_via_endpoint_of(proc);

    (void) ctx;
    if (NULL == ep) {
        return NULL;
    }
    if (!ep->dev->lazy) {
        mca_btl_via_endpoint_use(ep);
    }
    if (MCA_BTL_VIA_EP_FAILED == ep->state) {
        return NULL;
    }
    *module = MCA_BTL_VIA_EP_BTL(ep);
    return ep;
}

int mca_btl_via_add_procs(struct mca_btl_base_module_t *btl, size_t nprocs,
                          struct opal_proc_t **procs, struct mca_btl_base_endpoint_t **peers,
                          struct opal_bitmap_t *reachable)
{
    mca_btl_via_component_t *c = &mca_btl_via_component;
    const mca_btl_via_dev_t *net = &c->devs[MCA_BTL_VIA_DEV_NET];
    tc_ompi_reach_claim_t claim = {
        .reach = mca_btl_via_reach,
        .ctx = NULL,
        .help_file = "help-mpi-btl-via.txt",
        .providers = NULL != net->nic ? vipl_query_nic(net->nic)->provider : "emu",
        .only_requested = mca_btl_via_only_via_requested(),
        .warned = &c->warned_unreachable,
        .other_jobs = c->other_jobs_on,
    };

    if (!c->all_peers_added) {
        c->all_peers_added = true;
        mca_btl_via_add_all_peers();
    }
    (void) tc_ompi_reach_add_procs(btl, &claim, nprocs, procs, peers, reachable);
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

/* what the credits cost, per reach (slot 0: this host, 1: other hosts):
 * ordinary messages, credit-only messages, sends that waited for credit */
static void mca_btl_via_print_credit_stats(void)
{
    mca_btl_via_component_t *c = &mca_btl_via_component;
    tc_credits_stats_t sum[2];

    memset(sum, 0, sizeof(sum));
    for (uint32_t i = 0; i < c->max_eps; ++i) {
        const mca_btl_via_endpoint_t *ep = c->endpoints[i];

        if (NULL == ep || ep->dev_index < 0 || ep->dev_index > 1) {
            continue;
        }
        sum[ep->dev_index].sent += ep->credits.stats.sent;
        sum[ep->dev_index].credit_only_sent += ep->credits.stats.credit_only_sent;
        sum[ep->dev_index].received += ep->credits.stats.received;
        sum[ep->dev_index].deferred += ep->credits.stats.deferred;
    }
    for (int k = 0; k < 2; ++k) {
        if (0 == sum[k].sent + sum[k].received) {
            continue;
        }
        opal_output(0,
                    "btl:via: vpid %u credits (%s): %llu messages sent, %llu received, %llu "
                    "credit-only sent, %llu sends waited for credit",
                    c->my_vpid, 0 == k ? "this host" : "other hosts",
                    (unsigned long long) sum[k].sent, (unsigned long long) sum[k].received,
                    (unsigned long long) sum[k].credit_only_sent,
                    (unsigned long long) sum[k].deferred);
    }
}

static void mca_btl_via_print_stats(void)
{
    mca_btl_via_component_t *c = &mca_btl_via_component;
    tc_rcache_stats_t st;
    double rate;

    if (c->verbose < 1) {
        return;
    }
    opal_output(0, "btl:via: vpid %u made %llu VIs (this host %llu, other hosts %llu)", c->my_vpid,
                (unsigned long long) (c->vis_created[0] + c->vis_created[1]),
                (unsigned long long) c->vis_created[0], (unsigned long long) c->vis_created[1]);
    mca_btl_via_print_credit_stats();
    if (NULL == c->rcache) {
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
    mca_btl_via_module_t *mod = (mca_btl_via_module_t *) btl;
    opal_list_item_t *item;

    if (!mod->initialized) {
        return OPAL_SUCCESS;
    }
    mod->initialized = false;
    /* the endpoints, devices and progress are shared: the last goes */
    if (--c->live_modules > 0) {
        return OPAL_SUCCESS;
    }
    mca_btl_via_print_stats();
    c->live = false;
    for (uint32_t i = 0; i < c->max_eps; ++i) {
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
    mca_btl_via_frag_t *frag = mca_btl_via_frag_alloc(ep->dev, ep);

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
    return tc_ompi_frag_alloc(&mca_btl_via_frag_ops, endpoint->dev->recv_size, endpoint, order,
                              size, flags);
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
    const size_t inplace_min = ((mca_btl_via_module_t *) btl)->inplace_min;

    if (0 != inplace_min && *size >= inplace_min && reserve <= endpoint->dev->recv_size &&
        !opal_convertor_need_buffers(convertor)) {
        return tc_ompi_frag_prepare_inplace(&mca_btl_via_frag_ops, endpoint->dev->recv_size,
                                            endpoint, convertor, order, reserve, size, flags);
    }
    return tc_ompi_frag_prepare_src(&mca_btl_via_frag_ops, endpoint->dev->recv_size, endpoint,
                                    convertor, order, reserve, size, flags);
}
