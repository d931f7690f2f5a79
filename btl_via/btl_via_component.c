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

#include "opal/mca/base/mca_base_pvar.h"
#include "opal/mca/base/mca_base_var.h"
#include "opal/runtime/opal_params.h"
#include "opal/util/proc.h"
#include "opal/util/show_help.h"

#include "btl_via.h"
#include TC_OMPI_PMIX_H
#include "tc_atomic.h"
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

/* pvar btl_via_vis_created: VIs this process made, both devices (a
 * level, not a counter: Open MPI reports a counter's change since the
 * handle was made, and a reader wants the total) */
static int mca_btl_via_pvar_vis(const struct mca_base_pvar_t *pvar, void *value, void *obj)
{
    mca_btl_via_component_t *c = &mca_btl_via_component;
    unsigned long long n = 0;

    (void) pvar;
    (void) obj;
    for (int k = 0; k < MCA_BTL_VIA_NUM_DEVS; ++k) {
        n += tc_atomic_load_relaxed(&c->vis_created[k]);
    }
    *(unsigned long long *) value = n;
    return OPAL_SUCCESS;
}

static int mca_btl_via_component_register(void)
{
    mca_btl_via_component_t *c = &mca_btl_via_component;
    mca_btl_base_module_t *m = &mca_btl_via_module.super;
    int rc;

    (void) tc_ompi_param_string(
        &c->super.btl_version, "provider",
        "VI provider: auto (emu for peers on this host; for peers on other hosts "
        "verbs when an RDMA device is present, else ofi), or one for every peer: "
        "emu (software VI NIC between processes of one host: shared queues, "
        "RDMA by CMA), verbs (libibverbs RC queue pairs), ofi (connected "
        "libfabric endpoints, FI_EP_MSG; see ofi_provider).",
        OPAL_INFO_LVL_3, &c->provider, "auto");
    (void) tc_ompi_param_string(
        &c->super.btl_version, "ofi_provider",
        "libfabric provider of the ofi VI provider (FI_EP_MSG with RMA and remote CQ "
        "data): tcp (libfabric 1.17's net when it is listed: the tcp provider's current "
        "code), or e.g. verbs where the hardware exists.",
        OPAL_INFO_LVL_4, &c->ofi_provider, "tcp");
    (void) tc_ompi_param_string(
        &c->super.btl_version, "ofi_domain",
        "libfabric domain of the ofi VI provider (tcp: the network interface, e.g. "
        "eth0); empty: the first IPv4 interface other than lo.",
        OPAL_INFO_LVL_4, &c->ofi_domain, "");
    (void) tc_ompi_param_uint(
        &c->super.btl_version, "other_jobs",
        "Processes of other jobs (MPI_Comm_spawn, MPI_Comm_connect/accept, ULFM's "
        "respawn) one process can reach, over the ofi provider (also on this host; "
        "with btl_via_provider auto it is then opened even when the job has no "
        "other host); 0: processes of other jobs are left to another BTL.",
        OPAL_INFO_LVL_4, &c->other_jobs, 64);
    (void) tc_ompi_param_bool(
        &c->super.btl_version, "emu_strict",
        "Run the emu provider as strict as verbs hardware: no inline sends, RDMA "
        "writes with immediate completing with their length, VIs connected without "
        "waiting for the peer and sends to a peer not connected yet dropped (a test "
        "mode: what passes here does not rely on emu's leniency).",
        OPAL_INFO_LVL_9, &c->emu_strict, false);
    (void) tc_ompi_param_uint(
        &c->super.btl_version, "recv_descriptors",
        "Receive descriptors pre-posted per VI to a peer on this host: the "
        "credits a peer holds (MPI-BIP flow control; sends wait when none is "
        "left; >= 2).",
        OPAL_INFO_LVL_4, &c->recv_descriptors, 32);
    /* a windowed stream to another host waits a network round trip for
     * credits; 128 keep a window of 64 (OSU's) flowing (docs/btl_via.md) */
    (void) tc_ompi_param_uint(
        &c->super.btl_version, "ofi_recv_descriptors",
        "Receive descriptors pre-posted per VI to a peer on another host "
        "(verbs or ofi): the credits that peer holds (>= 2); each is a buffer "
        "of btl_via_ofi_max_send_size bytes.",
        OPAL_INFO_LVL_4, &c->ofi_recv_descriptors, 128);
    (void) tc_ompi_param_prefault(&c->super.btl_version,
                                  "the receive buffers of VIs to other hosts "
                                  "(ofi_recv_descriptors x btl_via_ofi_max_send_size, 8 MiB "
                                  "a peer with the defaults)",
                                  &c->ofi_prefault);
    (void) tc_ompi_param_uint(
        &c->super.btl_version, "send_descriptors",
        "Depth of each VI's send work queue (descriptors "
        "outstanding; put/get larger than this many RDMA descriptors are split by ob1).",
        OPAL_INFO_LVL_5, &c->send_descriptors, 256);
    (void) tc_ompi_param_uint(
        &c->super.btl_version, "max_transfer",
        "Bytes moved by one RDMA descriptor (VIA's maximum "
        "transfer size; a put/get is split into descriptors of at most this size).",
        OPAL_INFO_LVL_5, &c->max_transfer, 4 * 1024 * 1024);
    /* libfabric's tcp provider under cubic: 2 MiB reads beat 512 KiB by
     * 8-20% from 4 MiB, and 8 MiB beat 2 MiB by 2-11% at 1-8 MiB (one read
     * a message up to 8 MiB); bbr's pacing once made 1 MiB reads slow
     * (docs/btl_via.md) */
    (void) tc_ompi_param_uint(
        &c->super.btl_version, "ofi_max_transfer",
        "Bytes moved by one RDMA descriptor to a peer on another host (at most "
        "the provider's maximum message; a put/get is split into descriptors of "
        "at most this size, all in flight at once).",
        OPAL_INFO_LVL_5, &c->ofi_max_transfer, 8 * 1024 * 1024);
    (void) tc_ompi_param_uint(&c->super.btl_version, "poll_batch",
                              "Most receive completions taken per progress call.", OPAL_INFO_LVL_5,
                              &c->poll_batch, 16);
    (void) tc_ompi_param_uint(&c->super.btl_version, "free_list_max",
                              "Send buffers in the registered send pool (each "
                              "max_send_size bytes)",
                              OPAL_INFO_LVL_5, &c->free_list_max, 512);
    (void) tc_ompi_param_uint(&c->super.btl_version, "rcache_max_unused",
                              "Unused registrations the registration cache keeps "
                              "for reuse before it deregisters the least recently used (CHEMPI: "
                              "registration is expensive, reuse it)",
                              OPAL_INFO_LVL_5, &c->rcache_max_unused, 4096);
    (void) tc_ompi_param_uint(&c->super.btl_version, "rdma_threshold",
                              "put/get of fewer bytes than this are refused, so that "
                              "ob1 copies them through send descriptors instead (0: always RDMA).",
                              OPAL_INFO_LVL_5, &c->rdma_threshold, 0);
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

    (void) mca_base_component_pvar_register(
        &c->super.btl_version, "vis_created",
        "VIs this process made (a VI is made at the first message, put or get to a "
        "peer, or at a peer's connection request; providers without connection "
        "requests, verbs and emu in strict mode, make every peer's at MPI_Init)",
        OPAL_INFO_LVL_4, MCA_BASE_PVAR_CLASS_LEVEL, MCA_BASE_VAR_TYPE_UNSIGNED_LONG_LONG, NULL,
        MCA_BASE_VAR_BIND_NO_OBJECT, MCA_BASE_PVAR_FLAG_READONLY | MCA_BASE_PVAR_FLAG_CONTINUOUS,
        mca_btl_via_pvar_vis, NULL, NULL, NULL);

    /* below vader and sci, above tcp */
    m->btl_exclusivity = MCA_BTL_EXCLUSIVITY_HIGH - 2;
    /* 8 KiB of data and 64 bytes for ob1's header: an 8 KiB message goes
     * eagerly (with 4 KiB + 64 it took the rendezvous and streamed at
     * 0.89x vader's, eagerly 1.72x; 16 KiB eagerly took its latency from
     * 1.09x to 1.56x: copied twice, where the rendezvous reads it once) */
    m->btl_eager_limit = 8192 + 64;
    m->btl_rndv_eager_limit = 8192 + 64;
    m->btl_max_send_size = 8192 + 64;
    m->btl_rdma_pipeline_send_length = 8192 + 64;
    m->btl_rdma_pipeline_frag_size = 4 * 1024 * 1024;
    m->btl_min_rdma_pipeline_size = INT_MAX; /* always the RDMA protocol */
    m->btl_put_limit = SIZE_MAX;             /* set from the queue depth at init */
    m->btl_get_limit = SIZE_MAX;
    m->btl_put_alignment = 0;
    m->btl_get_alignment = 0;
    m->btl_latency = 1;
    m->btl_bandwidth = 40000;
    /* btl_flush makes every started put visible at its target */
    m->btl_flags = MCA_BTL_FLAGS_SEND | MCA_BTL_FLAGS_RDMA | MCA_BTL_FLAGS_RDMA_FLUSH;
    m->btl_registration_handle_size = sizeof(mca_btl_base_registration_handle_t);

    /* the module of other hosts' peers (ofi or verbs) starts from these
     * and sends 64 KiB of data eagerly, plus 64 bytes for ob1's header: a
     * message between 4 and 64 KiB then costs one trip, not a rendezvous,
     * a read served by the sender's progress and a FIN (64 KiB by
     * rendezvous: osu_bw 0.55x tcp's, docs/btl_via.md) */
    c->ofi_figures = tc_ompi_reach_figures(m);
    c->ofi_figures.eager_limit = 64 * 1024 + 64;
    c->ofi_figures.rndv_eager_limit = 64 * 1024 + 64;
    c->ofi_figures.max_send_size = 64 * 1024 + 64;
    c->ofi_figures.rdma_pipeline_send_length = 64 * 1024 + 64;
    c->ofi_figures.latency = 10;
    c->ofi_figures.bandwidth = 10000;
    (void) tc_ompi_param_uint(
        &c->super.btl_version, "ofi_send_inplace",
        "Eager messages to a peer on another host whose data is contiguous and "
        "at least this many bytes go out from the sender's buffer (a second data "
        "segment of the send descriptor) instead of being copied into a "
        "registered send buffer first, where the provider reads unregistered "
        "memory (ofi without FI_MR_LOCAL; 0: always copy)",
        OPAL_INFO_LVL_5, &c->ofi_inplace_min, 4096);
    rc = tc_ompi_reach_register(&c->super.btl_version, "ofi", "peers on other hosts (ofi or verbs)",
                                &c->ofi_figures);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
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
    tc_ompi_done_list_construct(&c->completed_frags);
    tc_ompi_done_list_construct(&c->completed_rdma);
    OBJ_CONSTRUCT(&c->lock, opal_mutex_t);
    c->output = -1;
    return OPAL_SUCCESS;
}

/* per device: VIs, CQ, send pool, ptag, NIC: in that order */
void mca_btl_via_release_device(void)
{
    mca_btl_via_component_t *c = &mca_btl_via_component;

    for (int k = 0; k < MCA_BTL_VIA_NUM_DEVS; ++k) {
        mca_btl_via_dev_t *dev = &c->devs[k];

        if (NULL != dev->vis) {
            for (uint32_t i = 0; i < c->max_eps; ++i) {
                if (NULL != dev->vis[i]) {
                    vipl_destroy_vi(dev->vis[i]);
                }
            }
            free(dev->vis);
            dev->vis = NULL;
        }
        if (NULL != dev->recv_cq) {
            vipl_destroy_cq(dev->recv_cq);
            dev->recv_cq = NULL;
        }
        mca_btl_via_pool_fini(dev);
    }
    for (int k = 0; k < MCA_BTL_VIA_NUM_DEVS; ++k) {
        mca_btl_via_dev_t *dev = &c->devs[k];

        if (NULL != dev->ptag) {
            vipl_destroy_ptag(dev->ptag);
            dev->ptag = NULL;
        }
        if (NULL != dev->nic) {
            vipl_close_nic(dev->nic);
            dev->nic = NULL;
        }
        dev->ops = NULL;
        dev->provider_id = 0;
        dev->poll_sends = false;
        dev->module = NULL;
    }
    free(c->endpoints);
    free(c->active);
    free(c->held);
    free(c->repost);
    c->endpoints = NULL;
    c->active = NULL;
    c->num_active = 0;
    c->held = NULL;
    c->repost = NULL;
    c->held_cap = c->held_head = c->held_count = c->repost_count = 0;
    c->num_cqs = c->next_cq = 0;
    tc_peers_fini(&c->peers);
    c->other_jobs_on = false;
    c->max_eps = 0;
}

static int mca_btl_via_component_close(void)
{
    mca_btl_via_component_t *c = &mca_btl_via_component;

    mca_btl_via_release_device();
    tc_ompi_done_list_destruct(&c->completed_frags);
    tc_ompi_done_list_destruct(&c->completed_rdma);
    OBJ_DESTRUCT(&c->lock);
    tc_ompi_output_close(&c->output);
    return OPAL_SUCCESS;
}

/* is the btl list exactly "self,via" or "via"?  Then a missing device or
 * an unreachable peer is worth a message. */
bool mca_btl_via_only_via_requested(void)
{
    return tc_ompi_btl_selection("via").only;
}

/* open one provider into a device slot */
static vipl_return_t mca_btl_via_dev_open(int slot, const char *name, uint32_t id,
                                          const vipl_open_params_t *params)
{
    mca_btl_via_dev_t *dev = &mca_btl_via_component.devs[slot];
    vipl_return_t rc;

    dev->ops = vipl_provider(name);
    if (NULL == dev->ops) {
        return VIPL_ERROR_NOT_SUPPORTED;
    }
    rc = vipl_open_nic(dev->ops, params, &dev->nic);
    if (VIPL_SUCCESS != rc) {
        dev->nic = NULL;
        dev->ops = NULL;
        return rc;
    }
    dev->provider_id = id;
    /* the emu NIC completes a send descriptor while it is posted (it is
     * reaped right there); a real NIC completes it later */
    dev->poll_sends = 1 != id;
    return VIPL_SUCCESS;
}

/* a forced network provider that cannot open: why, on both streams */
static int mca_btl_via_refuse(const char *topic, const char *name, vipl_return_t rc,
                              const char *detail)
{
    mca_btl_via_component_t *c = &mca_btl_via_component;
    char why[200];

    snprintf(why, sizeof(why), "%s%s",
             VIPL_ERROR_NOT_SUPPORTED == rc ? "the provider was not built" : vipl_strerror(rc),
             detail);
    opal_show_help("help-mpi-btl-via.txt", topic, true, opal_process_info.nodename, why);
    /* the same on the component's stream (help messages sent during
     * MPI_Init can be lost by the runtime under load) */
    opal_output_verbose(1, c->output, "btl:via: btl_via_provider=%s refused: %s", name, why);
    return OPAL_ERR_NOT_AVAILABLE;
}

/* what a device's descriptors must carry: an RDMA descriptor of
 * max_transfer bytes, and a send of either module's whole buffer (the
 * other hosts' figures as registered: that module is made later) */
static uint32_t mca_btl_via_descriptor_max(void)
{
    const mca_btl_via_component_t *c = &mca_btl_via_component;
    const tc_ompi_reach_figures_t *f = &c->ofi_figures;
    size_t n = mca_btl_via_buffer_size(&mca_btl_via_module.super);
    size_t net = TC_ALIGN_UP(f->max_send_size > f->eager_limit ? f->max_send_size : f->eager_limit,
                             (size_t) 64);

    n = net > n ? net : n;
    n = c->max_transfer > n ? c->max_transfer : n;
    return n > UINT32_MAX ? UINT32_MAX : (uint32_t) n;
}

/* open the devices: auto: emu for this host's peers, and for peers on
 * other hosts verbs if it finds a device, else ofi; a named provider
 * alone for every peer */
static int mca_btl_via_open_nic(void)
{
    mca_btl_via_component_t *c = &mca_btl_via_component;
    vipl_open_params_t params;
    char key[64], detail[128];
    bool is_auto = 0 == strcmp(c->provider, "auto");
    vipl_return_t rc;
    uint32_t nlocal = (uint32_t) opal_process_info.num_local_peers;
    bool remote_peers = c->nprocs > nlocal + 1;
    const char *domain = NULL != c->ofi_domain && '\0' != c->ofi_domain[0] ? c->ofi_domain : NULL;

    /* a job on one host opens the network NIC for other jobs only */
    c->net_wait_always = remote_peers || !is_auto;
    memset(&params, 0, sizeof(params));
    snprintf(key, sizeof(key), "%x", (unsigned) OPAL_PROC_MY_NAME.jobid);
    params.segment_dir = opal_process_info.job_session_dir;
    params.job_key = key;
    params.nic_id = c->my_vpid;
    params.max_vis = c->nprocs;
    params.max_recv_depth = c->recv_descriptors;
    params.max_regs = c->rcache_max_unused + 1024;
    /* receive buffers for every local peer, and the send pool (whole
     * chunks of 32 buffers): the same-host module's buffer size */
    params.nic_memory =
        ((size_t) nlocal * c->recv_descriptors + TC_ALIGN_UP(c->free_list_max, 32u)) *
            (mca_btl_via_buffer_size(&mca_btl_via_module.super) + 64) +
        4096 * (nlocal + 2);
    params.expected_peers = nlocal;
    params.max_transfer_size = mca_btl_via_descriptor_max();
    params.strict = c->emu_strict;
    params.fabric_provider = c->ofi_provider;
    snprintf(detail, sizeof(detail), " (libfabric provider \"%s\")", c->ofi_provider);

    if (0 == strcmp(c->provider, "verbs")) {
        rc = mca_btl_via_dev_open(MCA_BTL_VIA_DEV_NET, "verbs", 2, &params);
        if (VIPL_SUCCESS != rc) {
            return mca_btl_via_refuse("no verbs", "verbs", rc, "");
        }
    } else if (0 == strcmp(c->provider, "ofi")) {
        params.device = domain;
        rc = mca_btl_via_dev_open(MCA_BTL_VIA_DEV_NET, "ofi", 3, &params);
        if (VIPL_SUCCESS != rc) {
            return mca_btl_via_refuse("no ofi", "ofi", rc, detail);
        }
    } else if (is_auto || 0 == strcmp(c->provider, "emu")) {
        if ((!is_auto || nlocal > 0 || !remote_peers) &&
            NULL != opal_process_info.job_session_dir) {
            rc = mca_btl_via_dev_open(MCA_BTL_VIA_DEV_LOCAL, "emu", 1, &params);
            if (VIPL_SUCCESS != rc) {
                opal_show_help("help-mpi-btl-via.txt", "nic open failed", true,
                               opal_process_info.nodename, "emu", opal_process_info.job_session_dir,
                               vipl_strerror(rc));
                return OPAL_ERROR;
            }
        }
        if (is_auto && remote_peers &&
            VIPL_SUCCESS != mca_btl_via_dev_open(MCA_BTL_VIA_DEV_NET, "verbs", 2, &params)) {
            params.device = domain;
            (void) mca_btl_via_dev_open(MCA_BTL_VIA_DEV_NET, "ofi", 3, &params);
        }
        /* processes of other jobs go over ofi, on this host too: its
         * listening address must be in the modex from MPI_Init on */
        if (is_auto && c->other_jobs > 0 && NULL == c->devs[MCA_BTL_VIA_DEV_NET].nic) {
            params.device = domain;
            (void) mca_btl_via_dev_open(MCA_BTL_VIA_DEV_NET, "ofi", 3, &params);
        }
        if (NULL == c->devs[MCA_BTL_VIA_DEV_LOCAL].nic &&
            NULL == c->devs[MCA_BTL_VIA_DEV_NET].nic) {
            return OPAL_ERR_NOT_AVAILABLE;
        }
    } else {
        opal_show_help("help-mpi-btl-via.txt", "bad provider", true, c->provider);
        opal_output_verbose(1, c->output, "btl:via: no provider named \"%s\"", c->provider);
        return OPAL_ERR_BAD_PARAM;
    }
    c->poll_sends = false;
    for (int k = 0; k < MCA_BTL_VIA_NUM_DEVS; ++k) {
        const vipl_nic_attrs_t *attrs;

        if (NULL == c->devs[k].nic) {
            continue;
        }
        attrs = vipl_query_nic(c->devs[k].nic);
        c->poll_sends |= c->devs[k].poll_sends;
        /* max_transfer splits puts and gets only; sends are bounded by
         * the modules' buffer sizes (mca_btl_via_module_fit) */
        if (c->max_transfer > attrs->max_transfer_size) {
            c->max_transfer = attrs->max_transfer_size;
        }
        if (MCA_BTL_VIA_DEV_NET == k && c->ofi_max_transfer > attrs->max_transfer_size) {
            c->ofi_max_transfer = attrs->max_transfer_size;
        }
    }
    return OPAL_SUCCESS;
}

/* a module whose buffer outgrows what its device's descriptors carry
 * (the provider's maximum message) sends at most that: say so once */
static void mca_btl_via_module_fit(mca_btl_via_dev_t *dev)
{
    mca_btl_base_module_t *m = &dev->module->super;
    size_t max = vipl_query_nic(dev->nic)->max_transfer_size & ~(size_t) 63;

    if (mca_btl_via_buffer_size(m) <= max) {
        return;
    }
    opal_show_help("help-mpi-btl-via.txt", "send size clamped", true, opal_process_info.nodename,
                   MCA_BTL_VIA_DEV_LOCAL == dev->module->slot ? "" : "ofi_",
                   m->btl_max_send_size > m->btl_eager_limit ? m->btl_max_send_size
                                                             : m->btl_eager_limit,
                   vipl_query_nic(dev->nic)->provider, max);
    m->btl_eager_limit = m->btl_eager_limit > max ? max : m->btl_eager_limit;
    m->btl_max_send_size = m->btl_max_send_size > max ? max : m->btl_max_send_size;
    m->btl_rndv_eager_limit = m->btl_rndv_eager_limit > max ? max : m->btl_rndv_eager_limit;
}

/* my slot's geometry as the modex publishes it and peers must match */
void mca_btl_via_modex_slot_of(int slot, mca_btl_via_modex_slot_t *out)
{
    mca_btl_via_component_t *c = &mca_btl_via_component;
    const mca_btl_via_dev_t *dev = &c->devs[slot];

    memset(out, 0, sizeof(*out));
    if (NULL == dev->nic) {
        return;
    }
    out->provider = dev->provider_id;
    out->recv_descriptors = dev->recv_descriptors;
    out->recv_size = dev->recv_size;
    out->max_transfer = c->max_transfer;
}

static int mca_btl_via_modex_send(void)
{
    mca_btl_via_component_t *c = &mca_btl_via_component;
    size_t len = mca_btl_via_modex_size(c->nprocs);
    mca_btl_via_modex_hdr_t *hdr = 0 != len ? calloc(1, len) : NULL;
    vipl_vi_address_t *addrs = (vipl_vi_address_t *) (hdr + 1);
    int rc;

    if (NULL == hdr) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    hdr->magic = MCA_BTL_VIA_MODEX_MAGIC;
    hdr->nprocs = c->nprocs;
    for (int k = 0; k < MCA_BTL_VIA_NUM_DEVS; ++k) {
        const mca_btl_via_dev_t *dev = &c->devs[k];

        mca_btl_via_modex_slot_of(k, &hdr->slot[k]);
        if (NULL == dev->nic) {
            continue;
        }
        for (uint32_t i = 0; i < c->nprocs; ++i) {
            if (dev->lazy) {
                /* the VI that a request from vpid i will make (our own
                 * entry: the NIC's address, for other jobs) */
                vipl_nic_vi_address(dev->nic, i, addrs + (size_t) k * c->nprocs + i);
            } else if (NULL != dev->vis[i]) {
                vipl_vi_address(dev->vis[i], addrs + (size_t) k * c->nprocs + i);
            }
        }
    }
    /* other hosts read it only when a network device is open */
    TC_OMPI_MODEX_SEND(
        rc, NULL == c->devs[MCA_BTL_VIA_DEV_NET].nic ? TC_OMPI_SCOPE_LOCAL : TC_OMPI_SCOPE_GLOBAL,
        &c->super.btl_version, hdr, len);
    free(hdr);
    return rc;
}

/* a module's own consistency: a buffer holds one eager message or one
 * max_send_size fragment (ob1's header included) */
static void mca_btl_via_module_limits(mca_btl_base_module_t *m)
{
    if (m->btl_max_send_size < m->btl_eager_limit) {
        m->btl_max_send_size = m->btl_eager_limit;
    }
    if (m->btl_rndv_eager_limit > m->btl_max_send_size) {
        m->btl_rndv_eager_limit = m->btl_max_send_size;
    }
}

/* each open device gets its module: the template for this host's peers,
 * a copy with the btl_via_ofi_* figures for other hosts'; then what the
 * device itself allows */
static void mca_btl_via_modules_make(void)
{
    mca_btl_via_component_t *c = &mca_btl_via_component;

    /* the other hosts' copy first, from the template as registered */
    for (int k = MCA_BTL_VIA_NUM_DEVS - 1; k >= 0; --k) {
        mca_btl_via_dev_t *dev = &c->devs[k];
        mca_btl_via_module_t *mod =
            MCA_BTL_VIA_DEV_LOCAL == k ? &mca_btl_via_module : &mca_btl_via_ofi_module;
        mca_btl_base_module_t *m = &mod->super;

        if (NULL == dev->nic) {
            continue;
        }
        if (MCA_BTL_VIA_DEV_NET == k) {
            tc_ompi_reach_module_init(m, &mca_btl_via_module.super, &c->ofi_figures);
            mca_btl_via_module_limits(m);
        }
        mod->slot = k;
        mod->initialized = false;
        dev->module = mod;
        mca_btl_via_module_fit(dev);
        dev->recv_size = (uint32_t) mca_btl_via_buffer_size(m);
        dev->rx_skew = MCA_BTL_VIA_DEV_NET == k ? MCA_BTL_VIA_RX_SKEW : 0;
        dev->recv_descriptors =
            MCA_BTL_VIA_DEV_LOCAL == k ? c->recv_descriptors : c->ofi_recv_descriptors;
        if (!vipl_query_nic(dev->nic)->rdma_read) {
            m->btl_get = NULL;
            m->btl_flags &= ~MCA_BTL_FLAGS_GET;
        }
        if (1 == dev->provider_id) {
            /* CMA is synchronous: a put has landed when its callback runs */
            m->btl_flags |= TC_OMPI_BTL_FLAGS_RDMA_REMOTE_COMPLETION;
        }
        /* large eager payloads from the user's buffer: ob1 then hands
         * every eager send to prepare_src (which copies the small ones)
         * instead of sendi */
        mod->inplace_min = 0;
        if (MCA_BTL_VIA_DEV_NET == k && 0 != c->ofi_inplace_min &&
            vipl_query_nic(dev->nic)->local_unregistered) {
            mod->inplace_min = c->ofi_inplace_min;
            m->btl_flags |= MCA_BTL_FLAGS_SEND_INPLACE;
        }
    }
}

/* the NIC's resolver: the index of a process of another job that asks
 * for a VI by its name (a new index when it is met first) */
static int mca_btl_via_resolve(void *ctx, uint64_t name, uint32_t *disc)
{
    mca_btl_via_component_t *c = &mca_btl_via_component;

    (void) ctx;
    if (0 != tc_peers_index(&c->peers, name, true, disc) || *disc == c->my_vpid) {
        return -1;
    }
    return 0;
}

/* other jobs' processes: over the network device when it can take them
 * (docs/btl_via.md, "Processes of other jobs") */
static void mca_btl_via_other_jobs_init(void)
{
    mca_btl_via_component_t *c = &mca_btl_via_component;
    mca_btl_via_dev_t *net = &c->devs[MCA_BTL_VIA_DEV_NET];

    c->other_jobs_on = false;
    c->max_eps = c->nprocs;
    if (0 == c->other_jobs || NULL == net->nic || NULL == net->ops->set_names ||
        NULL == net->ops->any_vi_address ||
        0 != tc_peers_init(&c->peers, OPAL_PROC_MY_NAME.jobid, c->nprocs, c->other_jobs)) {
        /* the table of the own job alone: indexes are vpids */
        (void) tc_peers_init(&c->peers, OPAL_PROC_MY_NAME.jobid, c->nprocs, 0);
        return;
    }
    net->ops->set_names(net->nic, tc_peers_name(OPAL_PROC_MY_NAME.jobid, c->my_vpid),
                        mca_btl_via_resolve, NULL);
    c->other_jobs_on = true;
    c->max_eps = tc_peers_capacity(&c->peers);
}

static mca_btl_base_module_t **
mca_btl_via_component_init(int *num_btls, bool enable_progress_threads, bool enable_mpi_threads)
{
    mca_btl_via_component_t *c = &mca_btl_via_component;
    mca_btl_base_module_t *m = &mca_btl_via_module.super;
    mca_btl_base_module_t **btls;
    vipl_vi_attrs_t va;

    (void) enable_progress_threads;
    (void) enable_mpi_threads;
    *num_btls = 0;
    c->output = tc_ompi_output_open(c->verbose);

    if (OPAL_SUCCESS != mca_btl_base_param_verify(m)) {
        return NULL;
    }
    if (c->recv_descriptors < 2 || c->recv_descriptors > 65536) {
        opal_show_help("help-mpi-btl-via.txt", "bad recv descriptors", true, "recv_descriptors",
                       c->recv_descriptors);
        return NULL;
    }
    if (c->ofi_recv_descriptors < 2 || c->ofi_recv_descriptors > 65536) {
        opal_show_help("help-mpi-btl-via.txt", "bad recv descriptors", true, "ofi_recv_descriptors",
                       c->ofi_recv_descriptors);
        return NULL;
    }
    if (c->send_descriptors < 4) {
        c->send_descriptors = 4;
    }
    if (c->ofi_max_transfer < 4096) {
        c->ofi_max_transfer = 4096;
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
    mca_btl_via_module_limits(m);
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
    mca_btl_via_other_jobs_init();
    /* a job of one process still reaches other jobs' */
    if (c->nprocs < 2 && !c->other_jobs_on) {
        mca_btl_via_release_device();
        return NULL;
    }
    /* only a provider that reaches this host (btl_via_provider emu) and no
     * other process here: nothing to do, and say why when via alone was
     * asked for */
    if (NULL == c->devs[MCA_BTL_VIA_DEV_NET].nic && NULL != c->devs[MCA_BTL_VIA_DEV_LOCAL].nic &&
        vipl_query_nic(c->devs[MCA_BTL_VIA_DEV_LOCAL].nic)->local_only &&
        0 == opal_process_info.num_local_peers) {
        opal_output_verbose(10, c->output,
                            "btl:via: no node-local peer for the emu provider, disabled");
        tc_ompi_alone_on_host("help-mpi-btl-via.txt", "via",
                              vipl_query_nic(c->devs[MCA_BTL_VIA_DEV_LOCAL].nic)->provider,
                              mca_btl_via_only_via_requested());
        mca_btl_via_release_device();
        return NULL;
    }
    m->btl_put_limit = (size_t) c->max_transfer * (c->send_descriptors / 2);
    m->btl_get_limit = m->btl_put_limit;
    mca_btl_via_modules_make();
    mca_btl_via_ofi_module.super.btl_put_limit =
        (size_t) c->ofi_max_transfer * (c->send_descriptors / 2);
    mca_btl_via_ofi_module.super.btl_get_limit = mca_btl_via_ofi_module.super.btl_put_limit;

    c->ofi_prefault_left = (size_t) c->ofi_prefault << 20;
    c->endpoints = calloc(c->max_eps, sizeof(*c->endpoints));
    c->active = calloc(c->max_eps, sizeof(*c->active));
    /* a VI is on one device only: its receives fit once */
    c->held_cap = c->max_eps *
        (c->recv_descriptors > c->ofi_recv_descriptors ? c->recv_descriptors
                                                       : c->ofi_recv_descriptors);
    c->held = calloc(c->held_cap, sizeof(*c->held));
    c->repost = calloc(c->held_cap, sizeof(*c->repost));
    if (NULL == c->endpoints || NULL == c->active || NULL == c->held || NULL == c->repost) {
        goto fail;
    }
    for (int k = 0; k < MCA_BTL_VIA_NUM_DEVS; ++k) {
        mca_btl_via_dev_t *dev = &c->devs[k];

        if (NULL == dev->nic) {
            continue;
        }
        if (VIPL_SUCCESS != vipl_create_ptag(dev->nic, &dev->ptag) ||
            VIPL_SUCCESS !=
                vipl_create_cq(dev->nic, c->max_eps * dev->recv_descriptors, &dev->recv_cq)) {
            goto fail;
        }
        c->cq_dev[c->num_cqs] = k;
        c->cq_recv[c->num_cqs] = vipl_cq_recv_fn(dev->recv_cq);
        c->cqs[c->num_cqs++] = dev->recv_cq;
        dev->vis = calloc(c->max_eps, sizeof(*dev->vis));
        if (NULL == dev->vis) {
            goto fail;
        }
        memset(&va, 0, sizeof(va));
        va.reliability = VIPL_RELIABLE_DELIVERY;
        va.ptag = dev->ptag;
        va.max_transfer_size = vipl_query_nic(dev->nic)->max_transfer_size;
        va.send_depth = c->send_descriptors;
        va.recv_depth = dev->recv_descriptors;
        va.enable_rdma_write = true;
        va.enable_rdma_read = vipl_query_nic(dev->nic)->rdma_read;
        dev->vi_attrs = va;
        dev->lazy = vipl_query_nic(dev->nic)->connect_wait;
        c->any_lazy |= dev->lazy;
        for (uint32_t i = 0; !dev->lazy && i < c->nprocs; ++i) {
            vipl_return_t vrc;

            if (i == c->my_vpid) {
                continue;
            }
            /* without connection requests (verbs: no connection manager)
             * every VI is made now and its address published; sends are
             * reaped per VI under the endpoint's lock: no send CQ */
            va.has_discriminator = true;
            va.discriminator = i;
            vrc = vipl_create_vi(dev->nic, &va, NULL, dev->recv_cq, dev->vis + i);
            mca_btl_via_count(&c->vis_created[k], VIPL_SUCCESS == vrc);
            if (VIPL_SUCCESS != vrc) {
                opal_show_help("help-mpi-btl-via.txt", "vi create failed", true,
                               opal_process_info.nodename, vipl_strerror(vrc));
                goto fail;
            }
        }
    }

    for (int k = 0; k < MCA_BTL_VIA_NUM_DEVS; ++k) {
        if (NULL != c->devs[k].nic && OPAL_SUCCESS != mca_btl_via_pool_init(&c->devs[k])) {
            goto fail;
        }
    }
    if (OPAL_SUCCESS != mca_btl_via_rcache_init() || OPAL_SUCCESS != mca_btl_via_modex_send()) {
        goto fail;
    }

    /* one module per open device (docs/common.md, "One BTL module per
     * reach") */
    btls = calloc(MCA_BTL_VIA_NUM_DEVS, sizeof(*btls));
    if (NULL == btls) {
        goto fail;
    }
    for (int k = 0; k < MCA_BTL_VIA_NUM_DEVS; ++k) {
        mca_btl_via_dev_t *dev = &c->devs[k];

        if (NULL == dev->nic) {
            continue;
        }
        dev->module->initialized = true;
        btls[(*num_btls)++] = &dev->module->super;
        opal_output_verbose(10, c->output,
                            "btl:via: %s provider %s: eager limit %zu B, %u receive descriptors "
                            "of %u B per VI, RDMA descriptors of %u B",
                            MCA_BTL_VIA_DEV_LOCAL == k ? "this host" : "other hosts",
                            vipl_query_nic(dev->nic)->provider, dev->module->super.btl_eager_limit,
                            dev->recv_descriptors, dev->recv_size, c->max_transfer);
    }
    c->live_modules = *num_btls;
    c->live = true;
    return btls;

fail:
    mca_btl_via_rcache_fini();
    mca_btl_via_release_device();
    return NULL;
}
