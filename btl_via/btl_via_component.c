/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/*
 * btl_via_component.c: the btl_via component: MCA parameters, provider
 * choice, NIC, protection tag, completion queue and one VI per peer at
 * init, the modex (the VIs' addresses), and the progress loop that reaps
 * receive completions from the CQ, returns credits and re-posts the
 * receive descriptors.
 */

#include "opal_config.h"

#include <string.h>
#include <unistd.h>

#include "opal/mca/base/mca_base_var.h"
#include "opal/runtime/opal_params.h"
#include "opal/util/proc.h"
#include "opal/util/show_help.h"

#include "btl_via.h"
#include TC_OMPI_PMIX_H
#include "tc_ompi.h"
#include "btl_via_endpoint.h"
#include "btl_via_frag.h"

static int mca_btl_via_component_register(void);
static int mca_btl_via_component_open(void);
static int mca_btl_via_component_close(void);
static mca_btl_base_module_t **
mca_btl_via_component_init(int *num_btls, bool enable_progress_threads, bool enable_mpi_threads);

mca_btl_via_component_t mca_btl_via_component = {
    .super = {
        .btl_version =
            {
                MCA_BTL_DEFAULT_VERSION("via"),
                .mca_open_component = mca_btl_via_component_open,
                .mca_close_component = mca_btl_via_component_close,
                .mca_register_component_params = mca_btl_via_component_register,
            },
        .btl_data = {.param_field = MCA_BASE_METADATA_PARAM_CHECKPOINT},
        .btl_init = mca_btl_via_component_init,
        .btl_progress = mca_btl_via_component_progress,
    }};

static void mca_btl_via_reg_uint(const char *name, const char *desc, int level,
                                 unsigned int *storage)
{
    (void) tc_ompi_param_uint(&mca_btl_via_component.super.btl_version, name, desc, level, storage,
                              *storage);
}

static int mca_btl_via_component_register(void)
{
    mca_btl_via_component_t *c = &mca_btl_via_component;
    mca_btl_base_module_t *m = &mca_btl_via_module.super;

    (void) tc_ompi_param_string(
        &c->super.btl_version, "provider",
        "VI provider: auto (verbs when an RDMA device is present, else emu), "
        "emu (software VI NIC between processes of one host: shared queues, "
        "RDMA by CMA), verbs (libibverbs RC queue pairs).",
        OPAL_INFO_LVL_3, &c->provider, "auto");
    c->recv_descriptors = 32;
    mca_btl_via_reg_uint("recv_descriptors",
                         "Receive descriptors pre-posted per VI: the credits a "
                         "peer holds (MPI-BIP flow control; sends wait when none is left; >= 2).",
                         OPAL_INFO_LVL_4, &c->recv_descriptors);
    c->send_descriptors = 256;
    mca_btl_via_reg_uint(
        "send_descriptors",
        "Depth of each VI's send work queue (descriptors "
        "outstanding; put/get larger than this many RDMA descriptors are split by ob1).",
        OPAL_INFO_LVL_5, &c->send_descriptors);
    c->max_transfer = 4 * 1024 * 1024;
    mca_btl_via_reg_uint(
        "max_transfer",
        "Bytes moved by one RDMA descriptor (VIA's maximum "
        "transfer size; a put/get is split into descriptors of at most this size).",
        OPAL_INFO_LVL_5, &c->max_transfer);
    c->poll_batch = 16;
    mca_btl_via_reg_uint("poll_batch", "Most receive completions taken per progress call.",
                         OPAL_INFO_LVL_5, &c->poll_batch);
    c->free_list_max = 512;
    mca_btl_via_reg_uint("free_list_max",
                         "Send buffers in the registered send pool (each "
                         "max_send_size bytes)",
                         OPAL_INFO_LVL_5, &c->free_list_max);
    c->rcache_max_unused = 4096;
    mca_btl_via_reg_uint("rcache_max_unused",
                         "Unused registrations the registration cache keeps "
                         "for reuse before it deregisters the least recently used (CHEMPI: "
                         "registration is expensive, reuse it)",
                         OPAL_INFO_LVL_5, &c->rcache_max_unused);
    c->rdma_threshold = 0;
    mca_btl_via_reg_uint("rdma_threshold",
                         "put/get of fewer bytes than this are refused, so that "
                         "ob1 copies them through send descriptors instead (0: always RDMA).",
                         OPAL_INFO_LVL_5, &c->rdma_threshold);
    (void) tc_ompi_param_bool(
        &c->super.btl_version, "put_notify",
        "End every put with an RDMA write with immediate data that completes a "
        "receive descriptor at the target (CHEMPI's completion notice; costs one "
        "credit per put).",
        OPAL_INFO_LVL_6, &c->put_notify, true);
    (void) tc_ompi_param_int(
        &c->super.btl_version, "verbose",
        "Verbosity of btl_via (0: silent; >= 1: registration cache statistics at "
        "finalize; 100: everything).",
        OPAL_INFO_LVL_9, &c->verbose, 0);

    /* below vader and sci, above tcp */
    m->btl_exclusivity = MCA_BTL_EXCLUSIVITY_HIGH - 2;
    m->btl_eager_limit = 4096;
    m->btl_rndv_eager_limit = 4096;
    m->btl_max_send_size = 4096;
    m->btl_rdma_pipeline_send_length = 4096;
    m->btl_rdma_pipeline_frag_size = 4 * 1024 * 1024;
    m->btl_min_rdma_pipeline_size = INT_MAX; /* always the RDMA protocol */
    m->btl_put_limit = SIZE_MAX;             /* set from the queue depth at init */
    m->btl_get_limit = SIZE_MAX;
    m->btl_put_alignment = 0;
    m->btl_get_alignment = 0;
    m->btl_latency = 1;
    m->btl_bandwidth = 40000;
    m->btl_flags = MCA_BTL_FLAGS_SEND | MCA_BTL_FLAGS_RDMA;
    m->btl_registration_handle_size = sizeof(mca_btl_base_registration_handle_t);

    return mca_btl_base_param_register(&c->super.btl_version, m);
}

static int mca_btl_via_component_open(void)
{
    mca_btl_via_component_t *c = &mca_btl_via_component;

#ifdef MCA_BTL_VIA_HELP_DIR
    (void) opal_show_help_add_dir(MCA_BTL_VIA_HELP_DIR);
#endif
#ifdef MCA_BTL_VIA_SRCDIR
    (void) opal_show_help_add_dir(MCA_BTL_VIA_SRCDIR);
#endif
    OBJ_CONSTRUCT(&c->frags, opal_free_list_t);
    OBJ_CONSTRUCT(&c->completed_frags, opal_list_t);
    OBJ_CONSTRUCT(&c->completed_rdma, opal_list_t);
    OBJ_CONSTRUCT(&c->lock, opal_mutex_t);
    OBJ_CONSTRUCT(&c->done_lock, opal_mutex_t);
    OBJ_CONSTRUCT(&c->pool_lock, opal_mutex_t);
    c->output = -1;
    return OPAL_SUCCESS;
}

/* VIs, CQ, send pool, ptag, NIC: in that order */
void mca_btl_via_release_device(void)
{
    mca_btl_via_component_t *c = &mca_btl_via_component;

    if (NULL != c->vis) {
        for (uint32_t i = 0; i < c->nprocs; ++i) {
            if (NULL != c->vis[i]) {
                vipl_destroy_vi(c->vis[i]);
            }
        }
        free(c->vis);
        c->vis = NULL;
    }
    if (NULL != c->recv_cq) {
        vipl_destroy_cq(c->recv_cq);
        c->recv_cq = NULL;
    }
    if (NULL != c->send_pool) {
        if (0 != c->send_pool_handle) {
            (void) vipl_deregister_mem(c->nic, c->send_pool, c->send_pool_handle);
        }
        vipl_mem_free(c->nic, c->send_pool);
        c->send_pool = NULL;
        c->send_pool_handle = 0;
    }
    if (NULL != c->ptag) {
        vipl_destroy_ptag(c->ptag);
        c->ptag = NULL;
    }
    if (NULL != c->nic) {
        vipl_close_nic(c->nic);
        c->nic = NULL;
    }
    free(c->endpoints);
    free(c->active);
    c->endpoints = NULL;
    c->active = NULL;
    c->num_active = 0;
}

static int mca_btl_via_component_close(void)
{
    mca_btl_via_component_t *c = &mca_btl_via_component;

    mca_btl_via_release_device();
    OBJ_DESTRUCT(&c->frags);
    OBJ_DESTRUCT(&c->completed_frags);
    OBJ_DESTRUCT(&c->completed_rdma);
    OBJ_DESTRUCT(&c->lock);
    OBJ_DESTRUCT(&c->done_lock);
    OBJ_DESTRUCT(&c->pool_lock);
    tc_ompi_output_close(&c->output);
    return OPAL_SUCCESS;
}

/* is the btl list exactly "self,via" or "via"?  Then a missing device or
 * an unreachable peer is worth a message. */
bool mca_btl_via_only_via_requested(void)
{
    return tc_ompi_btl_selection("via").only;
}

/* No other process of the job on this host, and the btl list names only
 * via: say at once why the job's other processes are unreachable. */
static void mca_btl_via_alone_on_host(const char *provider)
{
    uint32_t size = 0;
    char btls[256];

    if (OPAL_SUCCESS != tc_ompi_job_size(&size) || size < 2 || !mca_btl_via_only_via_requested()) {
        return;
    }
    tc_ompi_remote_btls(btls, sizeof(btls));
    opal_show_help("help-mpi-btl-via.txt", "alone on host", true, "via",
                   (int) OPAL_PROC_MY_NAME.vpid, opal_process_info.nodename, provider,
                   (int) size - 1, btls);
}

/* open the provider the user asked for (auto: verbs if it finds a
 * device, else emu) */
static int mca_btl_via_open_nic(void)
{
    mca_btl_via_component_t *c = &mca_btl_via_component;
    mca_btl_base_module_t *m = &mca_btl_via_module.super;
    vipl_open_params_t params;
    char key[64];
    bool is_auto = 0 == strcmp(c->provider, "auto");
    vipl_return_t rc = VIPL_NO_DEVICE;
    uint32_t nlocal = (uint32_t) opal_process_info.num_local_peers;

    memset(&params, 0, sizeof(params));
    snprintf(key, sizeof(key), "%x", (unsigned) OPAL_PROC_MY_NAME.jobid);
    params.segment_dir = opal_process_info.job_session_dir;
    params.job_key = key;
    params.nic_id = c->my_vpid;
    params.max_vis = c->nprocs;
    params.max_recv_depth = c->recv_descriptors;
    params.max_regs = c->rcache_max_unused + 1024;
    /* receive buffers for every local peer, and the send pool */
    params.nic_memory =
        ((size_t) nlocal * c->recv_descriptors + c->free_list_max) * (c->recv_size + 64) +
        4096 * (nlocal + 2);
    params.expected_peers = nlocal;
    params.max_transfer_size = c->max_transfer;

    if (is_auto || 0 == strcmp(c->provider, "verbs")) {
        c->ops = vipl_provider("verbs");
        if (NULL != c->ops) {
            rc = vipl_open_nic(c->ops, &params, &c->nic);
            c->provider_id = 2;
        }
        if (VIPL_SUCCESS != rc && !is_auto) {
            const char *why = NULL == c->ops ? "the verbs provider was not built (no libibverbs)"
                                             : vipl_strerror(rc);

            opal_show_help("help-mpi-btl-via.txt", "no verbs", true, opal_process_info.nodename,
                           why);
            /* the same on the component's stream (help messages sent during
             * MPI_Init can be lost by the runtime under load) */
            opal_output_verbose(1, c->output, "btl:via: btl_via_provider=verbs refused: %s", why);
            return OPAL_ERR_NOT_AVAILABLE;
        }
    }
    if (VIPL_SUCCESS != rc) {
        if (!is_auto && 0 != strcmp(c->provider, "emu")) {
            opal_show_help("help-mpi-btl-via.txt", "bad provider", true, c->provider);
            opal_output_verbose(1, c->output, "btl:via: no provider named \"%s\"", c->provider);
            return OPAL_ERR_BAD_PARAM;
        }
        if (NULL == opal_process_info.job_session_dir) {
            return OPAL_ERR_NOT_AVAILABLE;
        }
        c->ops = vipl_provider("emu");
        c->provider_id = 1;
        rc = vipl_open_nic(c->ops, &params, &c->nic);
        if (VIPL_SUCCESS != rc) {
            opal_show_help("help-mpi-btl-via.txt", "nic open failed", true,
                           opal_process_info.nodename, "emu", opal_process_info.job_session_dir,
                           vipl_strerror(rc));
            return OPAL_ERROR;
        }
    }
    /* the emu NIC completes a send descriptor while it is posted (it is
     * reaped right there); a real NIC completes it later */
    c->poll_sends = 1 != c->provider_id;
    if (1 == c->provider_id) {
        /* CMA is synchronous: a put has landed when its callback runs */
        m->btl_flags |= TC_OMPI_BTL_FLAGS_RDMA_REMOTE_COMPLETION;
    }
    if (c->max_transfer > vipl_query_nic(c->nic)->max_transfer_size) {
        c->max_transfer = vipl_query_nic(c->nic)->max_transfer_size;
    }
    if (!vipl_query_nic(c->nic)->rdma_read) {
        m->btl_get = NULL;
        m->btl_flags &= ~MCA_BTL_FLAGS_GET;
    }
    return OPAL_SUCCESS;
}

static int mca_btl_via_modex_send(void)
{
    mca_btl_via_component_t *c = &mca_btl_via_component;
    size_t len = sizeof(mca_btl_via_modex_hdr_t) + (size_t) c->nprocs * sizeof(vipl_vi_address_t);
    mca_btl_via_modex_hdr_t *hdr = calloc(1, len);
    vipl_vi_address_t *addrs = (vipl_vi_address_t *) (hdr + 1);
    int rc;

    if (NULL == hdr) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    hdr->magic = MCA_BTL_VIA_MODEX_MAGIC;
    hdr->provider = c->provider_id;
    hdr->nprocs = c->nprocs;
    hdr->recv_descriptors = c->recv_descriptors;
    hdr->recv_size = c->recv_size;
    hdr->max_transfer = c->max_transfer;
    for (uint32_t i = 0; i < c->nprocs; ++i) {
        if (NULL != c->vis[i]) {
            vipl_vi_address(c->vis[i], addrs + i);
        }
    }
    TC_OMPI_MODEX_SEND(rc, c->provider_id == 1 ? TC_OMPI_SCOPE_LOCAL : TC_OMPI_SCOPE_GLOBAL,
                       &c->super.btl_version, hdr, len);
    free(hdr);
    return rc;
}

static mca_btl_base_module_t **
mca_btl_via_component_init(int *num_btls, bool enable_progress_threads, bool enable_mpi_threads)
{
    mca_btl_via_component_t *c = &mca_btl_via_component;
    mca_btl_base_module_t *m = &mca_btl_via_module.super;
    mca_btl_base_module_t **btls;
    vipl_vi_attrs_t va;
    vipl_mem_attrs_t ma;
    size_t pool_bytes;
    int rc;

    (void) enable_progress_threads;
    (void) enable_mpi_threads;
    *num_btls = 0;
    c->output = tc_ompi_output_open(c->verbose);

    if (OPAL_SUCCESS != mca_btl_base_param_verify(m)) {
        return NULL;
    }
    if (c->recv_descriptors < 2 || c->recv_descriptors > 65536) {
        opal_show_help("help-mpi-btl-via.txt", "bad recv descriptors", true, c->recv_descriptors);
        return NULL;
    }
    if (c->send_descriptors < 4) {
        c->send_descriptors = 4;
    }
    if (c->max_transfer < 4096) {
        c->max_transfer = 4096;
    }
    if (0 == c->poll_batch) {
        c->poll_batch = 1;
    }
    if (c->free_list_max < 16) {
        c->free_list_max = 16;
    }
    /* a receive buffer holds one eager message or one max_send_size
     * fragment (ob1's header included) */
    if (m->btl_max_send_size < m->btl_eager_limit) {
        m->btl_max_send_size = m->btl_eager_limit;
    }
    if (m->btl_rndv_eager_limit > m->btl_max_send_size) {
        m->btl_rndv_eager_limit = m->btl_max_send_size;
    }
    c->recv_size = (uint32_t) TC_ALIGN_UP(m->btl_max_send_size, (size_t) 64);
    c->my_vpid = OPAL_PROC_MY_NAME.vpid;
    /* the job size names the VIs (one per vpid) */
    c->nprocs = 0;
    if (OPAL_SUCCESS != tc_ompi_job_size(&c->nprocs)) {
        return NULL;
    }
    if (0 == c->nprocs || c->my_vpid >= c->nprocs) {
        return NULL;
    }
    /* the provider first: an explicit choice that cannot work is reported
     * even by a job of one process */
    if (OPAL_SUCCESS != mca_btl_via_open_nic()) {
        return NULL;
    }
    if (c->nprocs < 2) {
        mca_btl_via_release_device();
        return NULL;
    }
    /* the emu provider reaches this host only: nothing to do alone */
    if (vipl_query_nic(c->nic)->local_only && 0 == opal_process_info.num_local_peers) {
        opal_output_verbose(10, c->output,
                            "btl:via: no node-local peer for the emu provider, disabled");
        mca_btl_via_alone_on_host(vipl_query_nic(c->nic)->provider);
        mca_btl_via_release_device();
        return NULL;
    }
    m->btl_put_limit = (size_t) c->max_transfer * (c->send_descriptors / 2);
    m->btl_get_limit = m->btl_put_limit;

    if (VIPL_SUCCESS != vipl_create_ptag(c->nic, &c->ptag) ||
        VIPL_SUCCESS != vipl_create_cq(c->nic, c->nprocs * c->recv_descriptors, &c->recv_cq)) {
        goto fail;
    }
    c->vis = calloc(c->nprocs, sizeof(*c->vis));
    c->endpoints = calloc(c->nprocs, sizeof(*c->endpoints));
    c->active = calloc(c->nprocs, sizeof(*c->active));
    if (NULL == c->vis || NULL == c->endpoints || NULL == c->active) {
        goto fail;
    }
    memset(&va, 0, sizeof(va));
    va.reliability = VIPL_RELIABLE_DELIVERY;
    va.ptag = c->ptag;
    va.max_transfer_size = c->max_transfer;
    va.send_depth = c->send_descriptors;
    va.recv_depth = c->recv_descriptors;
    va.enable_rdma_write = true;
    va.enable_rdma_read = vipl_query_nic(c->nic)->rdma_read;
    for (uint32_t i = 0; i < c->nprocs; ++i) {
        vipl_return_t vrc;

        if (i == c->my_vpid) {
            continue;
        }
        /* sends are reaped per VI under the endpoint's lock: no send CQ */
        vrc = vipl_create_vi(c->nic, &va, NULL, c->recv_cq, c->vis + i);
        if (VIPL_SUCCESS != vrc) {
            opal_show_help("help-mpi-btl-via.txt", "vi create failed", true,
                           opal_process_info.nodename, vipl_strerror(vrc));
            goto fail;
        }
    }

    /* the send pool: registered once, cut into fragments by the free list */
    pool_bytes = (size_t) c->free_list_max * c->recv_size;
    c->send_pool = vipl_mem_alloc(c->nic, pool_bytes);
    memset(&ma, 0, sizeof(ma));
    ma.ptag = c->ptag;
    if (NULL == c->send_pool ||
        VIPL_SUCCESS !=
            vipl_register_mem(c->nic, c->send_pool, pool_bytes, &ma, &c->send_pool_handle)) {
        goto fail;
    }
    c->send_pool_count = c->free_list_max;
    c->send_pool_next = 0;
    rc =
        opal_free_list_init(&c->frags, sizeof(mca_btl_via_frag_t), opal_cache_line_size,
                            OBJ_CLASS(mca_btl_via_frag_t), 0, opal_cache_line_size, 32,
                            (int) c->free_list_max, 32, NULL, 0, NULL, mca_btl_via_frag_init, NULL);
    if (OPAL_SUCCESS != rc) {
        goto fail;
    }
    if (OPAL_SUCCESS != mca_btl_via_rcache_init() || OPAL_SUCCESS != mca_btl_via_modex_send()) {
        goto fail;
    }

    btls = calloc(1, sizeof(*btls));
    if (NULL == btls) {
        goto fail;
    }
    btls[0] = m;
    *num_btls = 1;
    mca_btl_via_module.initialized = true;
    opal_output_verbose(10, c->output,
                        "btl:via: provider %s, %u receive descriptors of %u B per VI, "
                        "RDMA descriptors of %u B",
                        vipl_query_nic(c->nic)->provider, c->recv_descriptors, c->recv_size,
                        c->max_transfer);
    return btls;

fail:
    mca_btl_via_rcache_fini();
    mca_btl_via_release_device();
    return NULL;
}

/* ------------------------------------------------------------------ */
/* progress                                                             */

/* one receive completion: hand it to ob1 (in place), take the credits it
 * carries, re-post the descriptor (which is the credit we return) */
static void mca_btl_via_handle_recv(mca_btl_via_endpoint_t *ep, vipl_desc_t *d)
{
    mca_btl_via_component_t *c = &mca_btl_via_component;
    uint32_t imm = d->imm_data;
    uint32_t kind = MCA_BTL_VIA_IMM_KIND(imm);

    if (OPAL_UNLIKELY(d->status & VIPL_STATUS_ERROR_MASK)) {
        vipl_vi_error_t why = VIPL_VIERR_NONE;
        bool was_failed;

        (void) vipl_query_vi(ep->vi, NULL, &why);
        OPAL_THREAD_LOCK(&ep->lock);
        was_failed = MCA_BTL_VIA_EP_FAILED == ep->state;
        ep->state = MCA_BTL_VIA_EP_FAILED;
        mca_btl_via_endpoint_fail_locked(ep);
        OPAL_THREAD_UNLOCK(&ep->lock);
        /* a peer that finalized disconnects its VIs: not an error */
        if (!was_failed && VIPL_VIERR_DISCONNECTED != why) {
            mca_btl_via_fatal_peer(ep,
                                   VIPL_VIERR_PEER_GONE == why ? "the peer process is gone"
                                                               : vipl_status_string(d->status));
        }
        return;
    }
    if (OPAL_UNLIKELY(!(d->status & VIPL_STATUS_IMMEDIATE) || 0 == kind ||
                      kind >= MCA_BTL_VIA_KIND_MAX ||
                      (MCA_BTL_VIA_KIND_AM != kind && 0 != d->length))) {
        mca_btl_via_fatal_peer(ep, "malformed message (bad immediate data)");
        return;
    }
    if (OPAL_LIKELY(MCA_BTL_VIA_KIND_AM == kind)) {
        mca_btl_base_tag_t tag = (mca_btl_base_tag_t) MCA_BTL_VIA_IMM_TAGOF(imm);
        const mca_btl_active_message_callback_t *reg = mca_btl_base_active_message_trigger + tag;
        mca_btl_base_segment_t segment;

        if (OPAL_LIKELY(NULL != reg->cbfunc)) {
            segment.seg_addr.pval = d->ds[0].addr;
            segment.seg_len = d->length;
            tc_ompi_deliver(reg, &mca_btl_via_module.super, ep, tag, &segment, 1);
        } else {
            BTL_ERROR(("btl:via: message with unregistered tag %u from vpid %u dropped",
                       (unsigned) tag, ep->vpid));
        }
    } else if (MCA_BTL_VIA_KIND_PUT_DONE == kind) {
        mca_btl_via_count(&c->put_notices, 1);
    }

    OPAL_THREAD_LOCK(&ep->lock);
    if (MCA_BTL_VIA_EP_FAILED != ep->state) {
        /* the descriptor is posted again before its credits count; a
         * credit-only message came in the reserved descriptor and is owed
         * nothing (common/tc_credits) */
        if (VIPL_SUCCESS != vipl_post_recv(ep->vi, d) ||
            0 !=
                (MCA_BTL_VIA_KIND_CREDIT == kind
                     ? tc_credits_received_credit_only(&ep->credits, MCA_BTL_VIA_IMM_CREDITS(imm))
                     : tc_credits_received(&ep->credits, MCA_BTL_VIA_IMM_CREDITS(imm)))) {
            ep->state = MCA_BTL_VIA_EP_FAILED;
            mca_btl_via_endpoint_fail_locked(ep);
            OPAL_THREAD_UNLOCK(&ep->lock);
            mca_btl_via_fatal_peer(ep, "credit accounting broken (more credits than granted)");
            return;
        }
        /* credits came back: the queued sends go; the peer may need ours
         * (most messages leave nothing to do: no calls then) */
        if (OPAL_UNLIKELY(tc_credits_queued(&ep->credits) > 0 ||
                          tc_credits_need_credit_only(&ep->credits))) {
            mca_btl_via_endpoint_flush_locked(ep);
        }
        if (ep->outstanding > 0) {
            mca_btl_via_endpoint_reap_locked(ep);
        }
    }
    OPAL_THREAD_UNLOCK(&ep->lock);
}

static int mca_btl_via_progress_slow(void)
{
    mca_btl_via_component_t *c = &mca_btl_via_component;
    int count = 0;

    if (OPAL_UNLIKELY(c->num_connecting > 0)) {
        for (uint32_t i = 0; i < c->nprocs; ++i) {
            if (NULL != c->endpoints[i] && MCA_BTL_VIA_EP_CONNECTING == c->endpoints[i]->state) {
                mca_btl_via_endpoint_try_connect(c->endpoints[i]);
            }
        }
    }
    /* send completions of providers that complete later (verbs) */
    for (int i = 0; c->poll_sends && i < c->num_active; ++i) {
        mca_btl_via_endpoint_t *ep = c->active[i];

        if (ep->outstanding > 0 || tc_credits_queued(&ep->credits) > 0) {
            OPAL_THREAD_LOCK(&ep->lock);
            mca_btl_via_endpoint_reap_locked(ep);
            mca_btl_via_endpoint_flush_locked(ep);
            OPAL_THREAD_UNLOCK(&ep->lock);
        }
    }
    for (;;) {
        mca_btl_via_frag_t *frag;

        OPAL_THREAD_LOCK(&c->done_lock);
        frag = (mca_btl_via_frag_t *) opal_list_remove_first(&c->completed_frags);
        OPAL_THREAD_UNLOCK(&c->done_lock);
        if (NULL == frag) {
            break;
        }
        mca_btl_via_frag_complete(frag);
        ++count;
    }
    for (;;) {
        mca_btl_via_rdma_op_t *op;

        OPAL_THREAD_LOCK(&c->done_lock);
        op = (mca_btl_via_rdma_op_t *) opal_list_remove_first(&c->completed_rdma);
        OPAL_THREAD_UNLOCK(&c->done_lock);
        if (NULL == op) {
            break;
        }
        op->cbfunc(&mca_btl_via_module.super, op->endpoint, op->local_address, op->local_handle,
                   op->cbcontext, op->cbdata, op->status);
        if (OPAL_SUCCESS != op->status && OPAL_ERR_BAD_PARAM != op->status) {
            mca_btl_via_fatal_peer(op->endpoint, "RDMA to a peer that is gone");
        }
        OBJ_DESTRUCT(&op->super);
        free(op);
        ++count;
    }
    return count;
}

int mca_btl_via_component_progress(void)
{
    static int32_t lock = 0;
    mca_btl_via_component_t *c = &mca_btl_via_component;
    int count = 0;

    if (OPAL_UNLIKELY(NULL == c->recv_cq || !mca_btl_via_module.initialized)) {
        return 0;
    }
    if (opal_using_threads() && opal_atomic_swap_32(&lock, 1)) {
        return 0;
    }
    for (unsigned int n = 0; n < c->poll_batch; ++n) {
        vipl_vi_t *vi;
        vipl_desc_t *d;
        bool is_recv;

        if (VIPL_SUCCESS != vipl_cq_done(c->recv_cq, &vi, &is_recv)) {
            break;
        }
        if (VIPL_SUCCESS != vipl_recv_done(vi, &d) || NULL == vi->user) {
            continue;
        }
        mca_btl_via_handle_recv((mca_btl_via_endpoint_t *) vi->user, d);
        ++count;
    }
    if (OPAL_UNLIKELY(c->num_connecting > 0 || !opal_list_is_empty(&c->completed_frags) ||
                      !opal_list_is_empty(&c->completed_rdma) ||
                      (c->poll_sends && c->num_active > 0))) {
        count += mca_btl_via_progress_slow();
    }
    if (opal_using_threads()) {
        opal_atomic_wmb();
        lock = 0;
    }
    return count;
}
