/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * btl_bip_component.c: the btl_bip component: MCA parameters (the
 * same-host reach's and the ofi reach's), device open at init (bip_init:
 * the static receive queue, sized N credits per peer), one module per
 * provider opened, the modex, and open/close.
 */

#include "opal_config.h"

#include <string.h>
#include <unistd.h>

#include "opal/mca/base/mca_base_var.h"
#include "tc_ompi_compat.h"
#include "opal/runtime/opal_params.h"
#include "opal/util/proc.h"
#include "opal/util/show_help.h"

#include "tc_ompi.h"

#include "btl_bip.h"
#include "btl_bip_endpoint.h"
#include "btl_bip_frag.h"

static int mca_btl_bip_component_register(void);
static int mca_btl_bip_component_open(void);
static int mca_btl_bip_component_close(void);
static mca_btl_base_module_t **
mca_btl_bip_component_init(int *num_btls, bool enable_progress_threads, bool enable_mpi_threads);

mca_btl_bip_component_t mca_btl_bip_component = {
    .super = {
        .btl_version =
            {
                MCA_BTL_DEFAULT_VERSION("bip"),
                .mca_open_component = mca_btl_bip_component_open,
                .mca_close_component = mca_btl_bip_component_close,
                .mca_register_component_params = mca_btl_bip_component_register,
            },
        .btl_data = {.param_field = MCA_BASE_METADATA_PARAM_CHECKPOINT},
        .btl_init = mca_btl_bip_component_init,
        .btl_progress = mca_btl_bip_component_progress,
    }};

static int mca_btl_bip_component_register(void)
{
    mca_btl_bip_component_t *c = &mca_btl_bip_component;
    mca_btl_base_module_t *m = &mca_btl_bip_module.super;

    (void) tc_ompi_param_uint(
        &c->super.btl_version, "credits",
        "Credits N per peer (MPI-BIP 3.5): control messages a process "
        "may have unreturned at one peer; the last one is reserved for credit-only "
        "messages (2..32768)",
        OPAL_INFO_LVL_4, &c->credits, 64);
    (void) tc_ompi_param_uint(
        &c->super.btl_version, "queue_slots",
        "Slots of this process's static receive queue, shared by "
        "all senders (0: credits x node-local peers, rounded up to a power of two; "
        "a smaller value is refused, since the credits rely on it)",
        OPAL_INFO_LVL_5, &c->queue_slots, 0);
    /* 4 KiB of user data plus room for ob1's header (match 14 B, rendezvous 32 B) */
    (void) tc_ompi_param_uint(&c->super.btl_version, "short_limit",
                              "Largest fragment to a peer on this host sent inline in one queue "
                              "slot (SHORT); larger ones up to btl_bip_max_send_size use the "
                              "three-way protocol (REQ, ACK, data) (64..1048576)",
                              OPAL_INFO_LVL_4, &c->short_limit, 4096 + 64);
    /* a trip over the network costs more than a copy: fragments up to
     * 64 KiB (what Open MPI's tcp sends eagerly) go in one message */
    (void) tc_ompi_param_uint(&c->super.btl_version, "ofi_short_limit",
                              "Largest fragment to a peer reached through the ofi provider "
                              "sent as one message (SHORT); larger ones up to "
                              "btl_bip_ofi_max_send_size use the three-way protocol. The ofi "
                              "queue holds btl_bip_credits such messages per peer on other "
                              "hosts, in each of its two buffers (64..16777216)",
                              OPAL_INFO_LVL_4, &c->ofi_short_limit, 64 * 1024 + 64);
    /* measured (docs/btl_bip.md 6.): 64 KiB .. 4 MiB; 1 MiB was fastest */
    (void) tc_ompi_param_uint(
        &c->super.btl_version, "frag_size",
        "Bytes per fragment of a large send (medium data and "
        "rendezvous groups move in pieces of this size, each published to the "
        "receiver as it lands)",
        OPAL_INFO_LVL_4, &c->frag_size, 1024 * 1024);
    /* a window of 64 outstanding large receives stays posted */
    (void) tc_ompi_param_uint(
        &c->super.btl_version, "max_posted",
        "Large receives posted at the device at one time (BIP: one "
        "per tag); more wait in a software FIFO and are acknowledged when they "
        "leave it (1..4095)",
        OPAL_INFO_LVL_5, &c->max_posted, 64);
    (void) tc_ompi_param_uint(&c->super.btl_version, "poll_batch",
                              "Most queue messages handled per progress call", OPAL_INFO_LVL_6,
                              &c->poll_batch, 16);
    (void) tc_ompi_param_uint(&c->super.btl_version, "check_interval",
                              "Progress calls between two checks that the peers are "
                              "alive (a dead peer is reported, never waited for)",
                              OPAL_INFO_LVL_6, &c->check_interval, 4096);
    (void) tc_ompi_param_uint(&c->super.btl_version, "free_list_max",
                              "Most send fragments allocated", OPAL_INFO_LVL_6, &c->free_list_max,
                              8192);
    /* measured (docs/btl_bip.md 6.): the copy into the message cost the
     * sender as much as the kernel's copy into the socket */
    (void) tc_ompi_param_bool(&c->super.btl_version, "ofi_inplace",
                              "Peers on other hosts: an eager fragment leaves from the "
                              "user's buffer (ob1's data in place, one gathered send, the "
                              "send completes when the provider is done with it); false: "
                              "copied into the message by sendi",
                              OPAL_INFO_LVL_5, &c->ofi_inplace, true);
    /* measured (docs/btl_bip.md 3.): 1-2 KiB ping-pong 1.06x tcp's copied,
     * 1.15-1.18x gathered (the send completes only when the provider
     * says so); from 4 KiB the gather is the faster */
    (void) tc_ompi_param_uint(&c->super.btl_version, "ofi_inplace_min",
                              "With btl_bip_ofi_inplace: the fewest bytes of a fragment that "
                              "leaves from the user's buffer; a smaller one is copied into the "
                              "message, whose send completes at once",
                              OPAL_INFO_LVL_5, &c->ofi_inplace_min, 4096);
    /* measured (docs/btl_bip.md 6.): one step instead of three, no turn
     * of the sender's progress; BIP's push stays selectable */
    (void) tc_ompi_param_bool(&c->super.btl_version, "large_read",
                              "Large regime (ob1's rendezvous, btl_get): true: the receiver "
                              "reads the sender's buffer with CMA in btl_bip_frag_size pieces, "
                              "one step without an ACK; false: MPI-BIP's rendezvous, the receiver "
                              "posts its buffer and ACKs, the sender writes it in fragments",
                              OPAL_INFO_LVL_4, &c->large_read, true);
    (void) tc_ompi_param_string(
        &c->super.btl_version, "provider",
        "BIP device provider: auto (shm for peers on this host, ofi for peers on "
        "other hosts), shm (this host only: a shared static receive queue and CMA), "
        "ofi (every peer over libfabric: a multi-receive buffer as the static "
        "receive queue, RDMA writes into posted receives; see btl_bip_ofi_provider)",
        OPAL_INFO_LVL_3, &c->provider, "auto");
    (void) tc_ompi_param_string(&c->super.btl_version, "ofi_provider",
                                "libfabric provider of the ofi provider (a reliable datagram "
                                "endpoint with FI_MULTI_RECV, RMA and remote CQ data, keys "
                                "chosen by the application). tcp: the tcp provider's own "
                                "endpoint (named net in libfabric 1.17), else tcp;ofi_rxm; "
                                "any other name is taken as it is, e.g. tcp;ofi_rxm",
                                OPAL_INFO_LVL_4, &c->ofi_provider, "tcp");
    (void) tc_ompi_param_string(&c->super.btl_version, "ofi_domain",
                                "libfabric domain of the ofi provider (tcp: the network "
                                "interface, e.g. eth0; empty: a routable IPv4 address first, "
                                "IPv6 link-local last)",
                                OPAL_INFO_LVL_4, &c->ofi_domain, "");
    (void) tc_ompi_param_uint(&c->super.btl_version, "ofi_timeout",
                              "Seconds a send or large transfer over ofi waits for a peer that "
                              "does not answer (its provider cannot connect or accepts nothing) "
                              "before the peer is reported gone",
                              OPAL_INFO_LVL_6, &c->ofi_timeout, 60);
    (void) tc_ompi_param_prefault(&c->super.btl_version,
                                  "the two receive buffers of the ofi provider (each (credits "
                                  "x peers on other hosts + 1) x btl_bip_ofi_max_send_size "
                                  "bytes)",
                                  &c->ofi_prefault);
    /* libfabric's tcp provider under cubic: gets of 2 MiB beat 512 KiB by
     * 5-15% from 4 MiB, and 8 MiB beat 2 MiB by up to 15% at 1-8 MiB;
     * bbr's pacing once made 1 MiB reads slow (docs/btl_bip.md) */
    (void) tc_ompi_param_uint(
        &c->super.btl_version, "ofi_get_limit",
        "Largest get to a peer on another host: ob1 cuts a rendezvous into gets of "
        "at most this many bytes, all in flight at once (4096..2147483647)",
        OPAL_INFO_LVL_5, &c->ofi_get_limit, 8 * 1024 * 1024);
    (void) tc_ompi_param_uint(
        &c->super.btl_version, "other_jobs",
        "Most processes of other jobs (MPI_Comm_spawn, MPI_Comm_connect/accept) "
        "reached, over the ofi provider (opened for them on one host too; they "
        "share the room its queue has for the peers on other hosts); 0: such "
        "processes are refused (left to another BTL)",
        OPAL_INFO_LVL_4, &c->other_jobs, 8);
    (void) tc_ompi_param_int(
        &c->super.btl_version, "verbose",
        "Verbosity of btl_bip (0: silent, follows btl_base_verbose; 1: counters "
        "at finalize - credit-only messages, deferred sends, FIFO high-water "
        "marks; 100: everything)",
        OPAL_INFO_LVL_9, &c->verbose, 0);

    /* the standard parameters (the peers on this host): below vader,
     * above tcp */
    m->btl_exclusivity = MCA_BTL_EXCLUSIVITY_HIGH - 1;
    /* ob1's eager fragments fit one slot; larger messages go by RGET,
     * one CMA read into the user's buffer (as vader's), which beats the
     * three-way protocol's REQ/ACK trip and temporary buffer (docs/btl_bip.md,
     * section 6); ob1's pipeline fragments (non-contiguous data) go by
     * the three-way protocol up to max_send_size */
    m->btl_eager_limit = 4096 + 64;
    m->btl_rndv_eager_limit = 4096 + 64;
    m->btl_max_send_size = 32 * 1024;
    m->btl_rdma_pipeline_send_length = 32 * 1024;
    m->btl_rdma_pipeline_frag_size = 4 * 1024 * 1024;
    m->btl_min_rdma_pipeline_size = INT_MAX; /* always the rendezvous */
    m->btl_get_limit = 4 * 1024 * 1024;      /* one ACK per group */
    m->btl_put_limit = 0;
    m->btl_get_alignment = 0;
    m->btl_put_alignment = 0;
    m->btl_latency = 1;
    m->btl_bandwidth = 40000;
    m->btl_flags = MCA_BTL_FLAGS_SEND | MCA_BTL_FLAGS_SEND_INPLACE | MCA_BTL_FLAGS_GET;
    m->btl_registration_handle_size = sizeof(struct mca_btl_base_registration_handle_t);

    /* the peers reached through the ofi provider: eager up to
     * ofi_short_limit (one message each), larger ones by RGET (fi_read) */
    c->ofi_figures = tc_ompi_reach_figures(m);
    c->ofi_figures.eager_limit = 64 * 1024 + 64;
    c->ofi_figures.rndv_eager_limit = 64 * 1024 + 64;
    c->ofi_figures.max_send_size = 64 * 1024 + 64;
    c->ofi_figures.rdma_pipeline_send_length = 64 * 1024 + 64;
    c->ofi_figures.latency = 10;
    c->ofi_figures.bandwidth = 10000;
    if (OPAL_SUCCESS !=
        tc_ompi_reach_register(&c->super.btl_version, "ofi", "peers on other hosts (libfabric)",
                               &c->ofi_figures)) {
        return OPAL_ERROR;
    }
    (void) tc_ompi_watch_register(&c->super.btl_version);

    return mca_btl_base_param_register(&c->super.btl_version, m);
}

static int mca_btl_bip_component_open(void)
{
    mca_btl_bip_component_t *c = &mca_btl_bip_component;

#ifdef MCA_BTL_BIP_HELP_DIR
    (void) opal_show_help_add_dir(MCA_BTL_BIP_HELP_DIR);
#endif
#ifdef MCA_BTL_BIP_SRCDIR
    (void) opal_show_help_add_dir(MCA_BTL_BIP_SRCDIR);
#endif
    OBJ_CONSTRUCT(&c->frags, opal_free_list_t);
    tc_ompi_done_list_construct(&c->completed_frags);
    OBJ_CONSTRUCT(&c->recv_fifo, opal_list_t);
    OBJ_CONSTRUCT(&c->posted, opal_list_t);
    OBJ_CONSTRUCT(&c->lock, opal_mutex_t);
    c->output = -1;
    c->dev = NULL;
    c->shmq = NULL;
    c->endpoints = NULL;
    c->max_eps = 0;
    c->other_jobs_on = false;
    c->unlinked = false;
    memset(&c->cnt, 0, sizeof(c->cnt));
    return OPAL_SUCCESS;
}

static int mca_btl_bip_component_close(void)
{
    mca_btl_bip_component_t *c = &mca_btl_bip_component;

    mca_btl_bip_release_all();
    OBJ_DESTRUCT(&c->frags);
    tc_ompi_done_list_destruct(&c->completed_frags);
    OBJ_DESTRUCT(&c->recv_fifo);
    OBJ_DESTRUCT(&c->posted);
    OBJ_DESTRUCT(&c->lock);
    tc_ompi_output_close(&c->output);
    return OPAL_SUCCESS;
}

/* is the btl list exactly "self,bip" or "bip"?  Then misuse is reported */
bool mca_btl_bip_only_bip_requested(void)
{
    return tc_ompi_btl_selection("bip").only;
}

static void mca_btl_bip_bad_param(const char *name, unsigned long value, const char *rule)
{
    opal_show_help("help-mpi-btl-bip.txt", "bad parameter", true, opal_process_info.nodename, name,
                   value, rule);
}

static void mca_btl_bip_bad_param_str(const char *name, const char *value, const char *rule)
{
    opal_show_help("help-mpi-btl-bip.txt", "bad parameter string", true, opal_process_info.nodename,
                   name, value, rule);
}

/* a module's largest fragment: at least its largest SHORT (short_limit),
 * at most 64 MiB (else the parameter named is refused with rule); the
 * eager limits kept within it and the rendezvous one within a SHORT */
static int mca_btl_bip_check_sizes(mca_btl_base_module_t *m, unsigned int short_limit,
                                   const char *name, const char *rule)
{
    if (m->btl_max_send_size < short_limit || m->btl_max_send_size > (64u << 20)) {
        mca_btl_bip_bad_param(name, m->btl_max_send_size, rule);
        return OPAL_ERR_BAD_PARAM;
    }
    if (m->btl_eager_limit > m->btl_max_send_size) {
        m->btl_eager_limit = m->btl_max_send_size;
    }
    if (m->btl_rndv_eager_limit > short_limit) {
        m->btl_rndv_eager_limit = short_limit;
    }
    return OPAL_SUCCESS;
}

/* the ofi reach's module: the template with the btl_bip_ofi_* figures;
 * its largest SHORT is one message of the ofi queue */
static int mca_btl_bip_ofi_module_init(void)
{
    mca_btl_bip_component_t *c = &mca_btl_bip_component;
    mca_btl_bip_module_t *ofi = &mca_btl_bip_ofi_module;
    mca_btl_base_module_t *m = &ofi->super;

    if (c->ofi_short_limit < 64 || c->ofi_short_limit > (16u << 20)) {
        mca_btl_bip_bad_param("btl_bip_ofi_short_limit", c->ofi_short_limit,
                              "between 64 and 16777216");
        return OPAL_ERR_BAD_PARAM;
    }
    if (c->ofi_get_limit < 4096 || c->ofi_get_limit > (unsigned int) INT32_MAX) {
        mca_btl_bip_bad_param("btl_bip_ofi_get_limit", c->ofi_get_limit,
                              "between 4096 and 2147483647");
        return OPAL_ERR_BAD_PARAM;
    }
    tc_ompi_reach_module_init(m, &mca_btl_bip_module.super, &c->ofi_figures);
    m->btl_get_limit = c->ofi_get_limit;
    ofi->reach = "ofi";
    ofi->short_limit = c->ofi_short_limit;
    ofi->early_return = true;
    ofi->initialized = false;
    if (OPAL_SUCCESS !=
        mca_btl_bip_check_sizes(m, c->ofi_short_limit, "btl_bip_ofi_max_send_size",
                                "at least btl_bip_ofi_short_limit, at most 64 MiB")) {
        return OPAL_ERR_BAD_PARAM;
    }
    /* in place: ob1 calls prepare_src (the data stays in the user's
     * buffer) and send, which gathers it into one message; otherwise an
     * eager fragment goes by sendi, copied once into the message
     * (prepare_src would copy it into a fragment first) */
    ofi->gather = c->ofi_inplace;
    ofi->gather_min = c->ofi_inplace_min;
    if (!ofi->gather) {
        m->btl_flags &= ~MCA_BTL_FLAGS_SEND_INPLACE;
    }
    c->ofi_slot_size = TC_ALIGN_UP(c->ofi_short_limit + (unsigned int) MCA_BTL_BIP_CTL_MAX, 64u);
    return OPAL_SUCCESS;
}

/* check the parameters; derive the queue geometry */
static int mca_btl_bip_check_params(uint32_t *nslots)
{
    mca_btl_bip_component_t *c = &mca_btl_bip_component;
    mca_btl_base_module_t *m = &mca_btl_bip_module.super;
    uint64_t need, n;

    if (c->credits < 2 || c->credits > 32768) {
        mca_btl_bip_bad_param("btl_bip_credits", c->credits, "between 2 and 32768");
        return OPAL_ERR_BAD_PARAM;
    }
    if (c->short_limit < 64 || c->short_limit > 1024 * 1024) {
        mca_btl_bip_bad_param("btl_bip_short_limit", c->short_limit, "between 64 and 1048576");
        return OPAL_ERR_BAD_PARAM;
    }
    if (0 == c->frag_size) {
        mca_btl_bip_bad_param("btl_bip_frag_size", c->frag_size, "at least 1");
        return OPAL_ERR_BAD_PARAM;
    }
    if (c->max_posted < 1 || c->max_posted > 4095) {
        mca_btl_bip_bad_param("btl_bip_max_posted", c->max_posted, "between 1 and 4095");
        return OPAL_ERR_BAD_PARAM;
    }
    if (c->other_jobs > 4096) {
        mca_btl_bip_bad_param("btl_bip_other_jobs", c->other_jobs, "between 0 and 4096");
        return OPAL_ERR_BAD_PARAM;
    }
    if (OPAL_SUCCESS !=
        mca_btl_bip_check_sizes(m, c->short_limit, "btl_bip_max_send_size",
                                "at least btl_bip_short_limit, at most 64 MiB")) {
        return OPAL_ERR_BAD_PARAM;
    }
    if (0 == c->poll_batch) {
        c->poll_batch = 1;
    }
    if (0 == c->check_interval) {
        c->check_interval = 1;
    }
    c->progress_calls = c->check_interval;
    /* every peer may fill N slots: the credits rely on the queue holding
     * them all */
    need = (uint64_t) c->credits * (uint64_t) (c->num_local - 1);
    if (0 != c->queue_slots && c->queue_slots < need) {
        opal_show_help("help-mpi-btl-bip.txt", "queue too small", true, opal_process_info.nodename,
                       c->queue_slots, c->credits, c->num_local - 1, (unsigned long) need);
        return OPAL_ERR_BAD_PARAM;
    }
    if (c->queue_slots > need) {
        need = c->queue_slots;
    }
    for (n = 2; n < need; n <<= 1) {
    }
    if (n > (1u << 24)) {
        mca_btl_bip_bad_param("btl_bip_queue_slots", (unsigned long) n, "at most 16777216");
        return OPAL_ERR_BAD_PARAM;
    }
    *nslots = (uint32_t) n;
    c->slot_size = TC_ALIGN_UP(c->short_limit + (unsigned int) MCA_BTL_BIP_CTL_MAX, 64u);
    mca_btl_bip_module.short_limit = c->short_limit;
    return mca_btl_bip_ofi_module_init();
}

static mca_btl_base_module_t **
mca_btl_bip_component_init(int *num_btls, bool enable_progress_threads, bool enable_mpi_threads)
{
    mca_btl_bip_component_t *c = &mca_btl_bip_component;
    mca_btl_base_module_t *m = &mca_btl_bip_module.super;
    mca_btl_base_module_t **btls;
    struct {
        mca_btl_bip_modex_t hdr;
        unsigned char addr[BIP_ADDR_MAX];
    } modex;
    size_t addrlen;
    bool use_ofi;
    bip_dev_params_t params;
    char key[64];
    uint32_t nslots;
    int rc;

    (void) enable_progress_threads;
    *num_btls = 0;
    c->output = tc_ompi_output_open(c->verbose);
    /* locks only where threads are enabled (OPAL_THREAD_LOCK checks too) */
    c->threads = enable_mpi_threads || opal_using_threads();

    c->my_vpid = OPAL_PROC_MY_NAME.vpid;
    if (OPAL_SUCCESS != tc_ompi_job_size(&c->nprocs) || c->my_vpid >= c->nprocs) {
        return NULL;
    }
    if (0 != strcmp(c->provider, "auto") && 0 != strcmp(c->provider, "shm") &&
        0 != strcmp(c->provider, "ofi")) {
        mca_btl_bip_bad_param_str("btl_bip_provider", c->provider, "auto, shm or ofi");
        return NULL;
    }
    /* shm needs a peer on this host; ofi (auto, ofi) any other process,
     * of this job or of another (a spawned child alone, a singleton that
     * spawns: ofi opens for other jobs in a job of one process too) */
    use_ofi = 0 != strcmp(c->provider, "shm") &&
        (c->other_jobs > 0 ||
         (c->nprocs > 1 &&
          (0 == strcmp(c->provider, "ofi") ||
           c->nprocs > (uint32_t) opal_process_info.num_local_peers + 1)));
    if ((0 == opal_process_info.num_local_peers && !use_ofi) ||
        NULL == opal_process_info.job_session_dir) {
        opal_output_verbose(10, c->output, "btl:bip: no node-local peer, disabled");
        tc_ompi_alone_on_host("help-mpi-btl-bip.txt", "bip", bip_provider_name(),
                              mca_btl_bip_only_bip_requested());
        return NULL;
    }
    if (OPAL_SUCCESS != mca_btl_base_param_verify(m)) {
        return NULL;
    }
    c->local_rank = opal_process_info.my_local_rank;
    c->num_local = (int) opal_process_info.num_local_peers + 1;
    if (c->local_rank < 0 || c->local_rank >= c->num_local) {
        return NULL;
    }
    if (OPAL_SUCCESS != mca_btl_bip_check_params(&nslots)) {
        return NULL;
    }

    memset(&params, 0, sizeof(params));
    snprintf(key, sizeof(key), "%x", (unsigned) OPAL_PROC_MY_NAME.jobid);
    params.dir = opal_process_info.job_session_dir;
    params.job_key = key;
    params.rank = (uint32_t) c->local_rank;
    params.expected_peers = (uint32_t) (c->num_local - 1);
    params.nslots = nslots;
    params.slot_size = c->slot_size;
    params.max_posted = c->max_posted;
    params.frag_size = c->frag_size;
    params.provider = c->provider;
    params.ofi_prov = c->ofi_provider;
    params.ofi_domain = c->ofi_domain;
    params.stamp = c->my_vpid;
    params.remote_peers =
        0 == strcmp(c->provider, "ofi") ? c->nprocs - 1 : c->nprocs - (uint32_t) c->num_local;
    params.ofi_timeout = c->ofi_timeout;
    params.ofi_prefault = (size_t) c->ofi_prefault << 20;
    params.credits = c->credits;
    params.ofi_slot_size = c->ofi_slot_size;
    /* other jobs: over ofi (shm's files are the job's), opened for them
     * on one host too; their stamps are indexes of the peer table */
    c->other_jobs_on = false;
    c->max_eps = c->nprocs;
    if (c->other_jobs > 0 && 0 != strcmp(c->provider, "shm") &&
        0 == tc_peers_init(&c->peers, OPAL_PROC_MY_NAME.jobid, c->nprocs, c->other_jobs)) {
        c->other_jobs_on = true;
        c->max_eps = tc_peers_capacity(&c->peers);
        params.jobid = OPAL_PROC_MY_NAME.jobid;
        params.resolve = mca_btl_bip_resolve;
        params.other_jobs = c->other_jobs;
    }
    rc = bip_open(&params, &c->dev);
    if (0 != rc) {
        opal_show_help("help-mpi-btl-bip.txt", "queue create failed", true,
                       opal_process_info.nodename, opal_process_info.job_session_dir, nslots,
                       c->slot_size, strerror(-rc));
        c->dev = NULL;
        return NULL;
    }
    c->shmq = bip_dev_shm_only_queue(c->dev, &c->shm_map, &c->shm_map_len);
    c->ofi_lazy = false;
    c->peeked_dev = false;
    c->ofi_active = 0;
    if (NULL == c->shmq && c->other_jobs_on && 0 == params.remote_peers &&
        0 == strcmp(c->provider, "auto")) {
        /* ofi open for other jobs only: polled now and then until used */
        c->shmq = bip_dev_shm_queue(c->dev, &c->shm_map, &c->shm_map_len);
        c->ofi_lazy = NULL != c->shmq;
    }
    if (2 == c->num_local) {
        /* one sender, bounded by its credits: consumed slots are not
         * written back (btl_bip_endpoint.c sets the sender side) */
        bip_srecv_set_sole_sender(c->dev);
    }
    rc = bip_probe_large(c->dev);
    if (0 != rc) {
        opal_show_help("help-mpi-btl-bip.txt", "cma refused", true, opal_process_info.nodename,
                       strerror(-rc));
        goto fail;
    }

    rc =
        opal_free_list_init(&c->frags, sizeof(mca_btl_bip_frag_t), opal_cache_line_size,
                            OBJ_CLASS(mca_btl_bip_frag_t), c->short_limit, opal_cache_line_size, 64,
                            (int) c->free_list_max, 64, NULL, 0, NULL, mca_btl_bip_frag_init, NULL);
    if (OPAL_SUCCESS != rc) {
        goto fail;
    }
    c->endpoints = calloc((size_t) c->max_eps, sizeof(*c->endpoints));
    if (NULL == c->endpoints) {
        goto fail;
    }
    for (uint32_t i = 0; i < c->max_eps; ++i) {
        OBJ_CONSTRUCT(c->endpoints + i, mca_btl_bip_endpoint_t);
        c->endpoints[i].peer_rank = (int) i;
    }

    /* the fixed record, then the ofi address (none: shm only) */
    memset(&modex, 0, sizeof(modex));
    modex.hdr.local_rank = (uint32_t) c->local_rank;
    modex.hdr.nslots = nslots;
    modex.hdr.slot_size = c->slot_size;
    modex.hdr.credits = c->credits;
    modex.hdr.pid = (int32_t) getpid();
    modex.hdr.max_posted = c->max_posted;
    modex.hdr.ofi_slot_size = c->ofi_slot_size;
    addrlen = 0;
    (void) bip_dev_address(c->dev, modex.addr, &addrlen);
    modex.hdr.addrlen = (uint32_t) addrlen;
    if (0 != addrlen && OPAL_SUCCESS != mca_btl_bip_rcache_init()) {
        goto fail;
    }
    TC_OMPI_MODEX_SEND(rc, 0 == addrlen ? TC_OMPI_SCOPE_LOCAL : TC_OMPI_SCOPE_GLOBAL,
                       &c->super.btl_version, &modex, sizeof(modex.hdr) + addrlen);
    if (OPAL_SUCCESS != rc) {
        goto fail;
    }
    tc_ompi_watch_publish(&c->super.btl_version);

    /* one module per provider opened (docs/common.md, "One BTL module
     * per reach") */
    btls = calloc(2, sizeof(*btls));
    if (NULL == btls) {
        goto fail;
    }
    if (NULL != strstr(bip_dev_providers(c->dev), "shm")) {
        mca_btl_bip_module.initialized = true;
        btls[(*num_btls)++] = m;
    }
    if (0 != addrlen) {
        mca_btl_bip_ofi_module.initialized = true;
        btls[(*num_btls)++] = &mca_btl_bip_ofi_module.super;
    }
    opal_output_verbose(10, c->output,
                        "btl:bip: rank %u, local rank %d of %d, providers %s %s, N %u, posted %u, "
                        "frag %u; shm: queue %u x %u B, short %u, eager %zu, max_send %zu; "
                        "ofi: message %u B, short %u, eager %zu, max_send %zu",
                        c->my_vpid, c->local_rank, c->num_local, bip_dev_providers(c->dev),
                        bip_dev_ofi_fabric(c->dev), c->credits, c->max_posted, c->frag_size, nslots,
                        c->slot_size, c->short_limit, m->btl_eager_limit, m->btl_max_send_size,
                        c->ofi_slot_size, c->ofi_short_limit,
                        mca_btl_bip_ofi_module.super.btl_eager_limit,
                        mca_btl_bip_ofi_module.super.btl_max_send_size);
    return btls;

fail:
    tc_ompi_watch_stop(); /* closes the listener if it was published */
    mca_btl_bip_release_all();
    return NULL;
}
