/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * btl_sci_component.c: the btl_sci component: MCA parameters, device
 * open and segment creation at init (CHEMPI: "create the local segments
 * for all the other processes") and the modex.  Its progress loop, which
 * polls the active rings and the doorbell, is btl_sci_progress.c.
 */

#include "opal_config.h"

#include <string.h>
#include <unistd.h>

#include "opal/mca/base/mca_base_var.h"
#include "tc_ompi_compat.h"
#include "opal/runtime/opal_params.h"
#include "opal/util/proc.h"
#include "opal/util/show_help.h"

#include "tc_atomic.h"
#include "tc_ompi.h"

#include "btl_sci.h"
#include "btl_sci_endpoint.h"
#include "btl_sci_frag.h"

static int mca_btl_sci_component_register(void);
static int mca_btl_sci_component_open(void);
static int mca_btl_sci_component_close(void);
static mca_btl_base_module_t **
mca_btl_sci_component_init(int *num_btls, bool enable_progress_threads, bool enable_mpi_threads);

mca_btl_sci_component_t mca_btl_sci_component = {
    .super = {
        .btl_version =
            {
                MCA_BTL_DEFAULT_VERSION("sci"),
                .mca_open_component = mca_btl_sci_component_open,
                .mca_close_component = mca_btl_sci_component_close,
                .mca_register_component_params = mca_btl_sci_component_register,
            },
        .btl_data = {.param_field = MCA_BASE_METADATA_PARAM_CHECKPOINT},
        .btl_init = mca_btl_sci_component_init,
        .btl_progress = mca_btl_sci_component_progress,
    }};

static int mca_btl_sci_component_register(void)
{
    mca_btl_sci_component_t *c = &mca_btl_sci_component;
    mca_btl_base_module_t *m = &mca_btl_sci_module.super;

    (void) tc_ompi_param_uint(
        &c->super.btl_version, "other_jobs",
        "Processes of other jobs (MPI_Comm_spawn, MPI_Comm_connect/accept, ULFM's "
        "respawn) one process can reach, over the ofi provider (also on this host; "
        "with btl_sci_provider auto it is then opened even when the job has no "
        "other host); 0: processes of other jobs are left to another BTL.",
        OPAL_INFO_LVL_4, &c->other_jobs, 64);
    (void) tc_ompi_param_uint(&c->super.btl_version, "ring_slots",
                              "Slots of the message ring each peer owns in our memory "
                              "(credits: sends wait when all are in use; power of two >= 4)",
                              OPAL_INFO_LVL_4, &c->ring_slots, 64);
    (void) tc_ompi_param_uint(
        &c->super.btl_version, "ofi_ring_slots",
        "Slots of the message ring each peer reached through the ofi provider "
        "owns in our memory (power of two >= 4; with Completed written every "
        "32 slots, 64 keep a window of 64 eager sends going); each slot holds "
        "btl_sci_ofi_eager_limit bytes, and the sender keeps a copy of the ring "
        "(written in when made: btl_sci_ofi_prefault)",
        OPAL_INFO_LVL_4, &c->ofi_ring_slots, 64);
    (void) tc_ompi_param_prefault(&c->super.btl_version,
                                  "the rings and ring copies of peers reached through the ofi "
                                  "provider (about 8 MiB a peer with the defaults)",
                                  &c->ofi_prefault);
    (void) tc_ompi_param_uint(&c->super.btl_version, "ofi_send_inplace",
                              "Eager messages to a peer through the ofi provider whose data is "
                              "contiguous and at least this many bytes go out from the sender's "
                              "buffer in the ring slot's one write, instead of being copied into "
                              "the slot first (0: always copy)",
                              OPAL_INFO_LVL_5, &c->ofi_inplace_min, 4096);
    (void) tc_ompi_param_bool(
        &c->super.btl_version, "ofi_rdma",
        "Offer put, get and atomics to peers on other hosts: ob1 reads a message "
        "above the eager limit from the sender's buffer (0.9-1.0x tcp's bandwidth "
        "from 256 KiB under TCP congestion control cubic). Off: it goes in "
        "ring-slot fragments written into the peer's ring, about 3-4 GB/s, which "
        "is faster only where bbr paces libfabric's connections (docs/btl_sci.md); "
        "one-sided communication then goes by active messages",
        OPAL_INFO_LVL_4, &c->ofi_rdma, true);
    (void) tc_ompi_param_uint(&c->super.btl_version, "slot_size",
                              "Payload bytes of one ring slot (0: the eager limit); "
                              "also the largest fragment btl_send carries (max_send_size)",
                              OPAL_INFO_LVL_5, &c->slot_size, 0);
    (void) tc_ompi_param_uint(
        &c->super.btl_version, "dma_threshold",
        "put/get of fewer bytes than this are refused so that "
        "ob1 sends them through the rings instead of the DMA engine (0: always DMA)",
        OPAL_INFO_LVL_5, &c->dma_threshold, 0);
    (void) tc_ompi_param_uint(&c->super.btl_version, "segment_size",
                              "Bytes of each per-peer SCI segment (0: just enough for "
                              "the ring; a larger value is kept)",
                              OPAL_INFO_LVL_5, &c->segment_size, 0);
    (void) tc_ompi_param_uint(&c->super.btl_version, "poll_batch",
                              "Most messages taken from one peer's ring per progress call "
                              "(fairness across peers)",
                              OPAL_INFO_LVL_5, &c->poll_batch, 16);
    (void) tc_ompi_param_uint(&c->super.btl_version, "credit_batch",
                              "Ring slots the receiver consumes before it writes its "
                              "Completed counter into the sender's segment (at most ring_slots/2; "
                              "it is also written whenever the ring is found empty; for a peer on "
                              "another host only every credit_batch slots)",
                              OPAL_INFO_LVL_5, &c->credit_batch, 16);
    /* each Completed write to another host is one more message on the
     * wire for both providers to progress: every 16 slots it took sci's
     * 8-byte ping-pong from 3.94 to 4.51 us median (4.83 -> 5.50 mean);
     * every 32 of 64 slots streams 16-32 KiB 7% faster than every 64 of
     * 128 (the sender meets freed slots sooner) */
    (void) tc_ompi_param_uint(&c->super.btl_version, "ofi_credit_batch",
                              "Ring slots the receiver consumes before it writes its "
                              "Completed counter, for the rings of peers reached through the "
                              "ofi provider (at most ofi_ring_slots/2; each write is one more "
                              "message on the network)",
                              OPAL_INFO_LVL_5, &c->ofi_credit_batch, 32);
    (void) tc_ompi_param_uint(&c->super.btl_version, "idle_polls",
                              "Empty polls after which a peer leaves the active list "
                              "and must ring the doorbell for its next message",
                              OPAL_INFO_LVL_6, &c->idle_polls, 4096);
    (void) tc_ompi_param_uint(&c->super.btl_version, "sweep_interval",
                              "Progress calls between two checks of the rings of "
                              "idle peers (a safety net behind the doorbell)",
                              OPAL_INFO_LVL_6, &c->sweep_interval, 1024);
    (void) tc_ompi_param_string(
        &c->super.btl_version, "provider",
        "SCI provider: auto (shm for peers on this host, ofi for peers on other hosts), "
        "or one for every peer: shm (segments in shared memory, one host), ofi (segments "
        "as libfabric registered memory, remote stores as RMA writes; see ofi_fabric)",
        OPAL_INFO_LVL_3, &c->provider, "auto");
    (void) tc_ompi_param_string(&c->super.btl_version, "ofi_fabric",
                                "libfabric provider of the ofi SCI provider (a reliable "
                                "datagram endpoint with RMA and ordered writes); default: tcp "
                                "with libfabric 2 or later (tcp;ofi_rxm crashed there after a "
                                "peer's death), net with 1.17 (no wake-up pipe per "
                                "completion), tcp;ofi_rxm before",
                                OPAL_INFO_LVL_4, &c->ofi_fabric, sci_ofi_default_fabric());
    (void) tc_ompi_param_string(&c->super.btl_version, "ofi_device",
                                "libfabric domain of the ofi SCI provider (tcp: the network "
                                "interface, e.g. eth0); empty: the first IPv4 interface other "
                                "than lo",
                                OPAL_INFO_LVL_4, &c->ofi_device, "");
    (void) tc_ompi_param_bool(&c->super.btl_version, "dma",
                              "Use the DMA engine (CMA) for put/get, so that ob1 moves large "
                              "messages zero-copy and osc/rdma can run over sci; false: every "
                              "byte goes through the rings (as when CMA is refused)",
                              OPAL_INFO_LVL_4, &c->use_dma, true);
    (void) tc_ompi_param_bool(&c->super.btl_version, "prefetch",
                              "After each send, prefetch the ring slot after next for "
                              "writing, so that the next-but-one message does not wait "
                              "for the cache line (off by default: no gain was "
                              "measurable on a noisy 2-core host)",
                              OPAL_INFO_LVL_6, &c->prefetch, false);
    (void) tc_ompi_param_uint(&c->super.btl_version, "free_list_max",
                              "Most send fragments allocated", OPAL_INFO_LVL_6, &c->free_list_max,
                              8192);
    (void) tc_ompi_param_int(&c->super.btl_version, "verbose",
                             "Verbosity of btl_sci (0: silent, 100: everything; 0 follows "
                             "btl_base_verbose)",
                             OPAL_INFO_LVL_9, &c->verbose, 0);

    /* the standard parameters: below vader, above tcp */
    m->btl_exclusivity = MCA_BTL_EXCLUSIVITY_HIGH - 1;
    /* small messages: up to 4 KiB of user data (CHEMPI had 2 KiB; with 2
     * a 4 KiB message took the rendezvous and streamed at 0.86x vader's,
     * eagerly 2.2x), plus room for ob1's header (match 14 B, rendezvous
     * 32 B) in the same slot */
    m->btl_eager_limit = MCA_BTL_SCI_EAGER_DATA + MCA_BTL_SCI_HDR_ROOM;
    m->btl_rndv_eager_limit = MCA_BTL_SCI_EAGER_DATA + MCA_BTL_SCI_HDR_ROOM;
    m->btl_max_send_size = MCA_BTL_SCI_EAGER_DATA + MCA_BTL_SCI_HDR_ROOM;
    m->btl_rdma_pipeline_send_length = MCA_BTL_SCI_EAGER_DATA + MCA_BTL_SCI_HDR_ROOM;
    m->btl_rdma_pipeline_frag_size = 4 * 1024 * 1024;
    m->btl_min_rdma_pipeline_size = INT_MAX; /* always the RDMA protocol */
    m->btl_put_limit = SIZE_MAX;
    m->btl_get_limit = SIZE_MAX;
    m->btl_put_alignment = 0;
    m->btl_get_alignment = 0;
    m->btl_latency = 1;
    m->btl_bandwidth = 40000;
    /* put/get and atomics complete only once the target's memory holds
     * the result (a synchronous engine; atomics answered by the target) */
    m->btl_flags = MCA_BTL_FLAGS_SEND | MCA_BTL_FLAGS_SEND_INPLACE | MCA_BTL_FLAGS_RDMA |
        MCA_BTL_FLAGS_ATOMIC_OPS | MCA_BTL_FLAGS_ATOMIC_FOPS |
        TC_OMPI_BTL_FLAGS_RDMA_REMOTE_COMPLETION;
    m->btl_atomic_flags = MCA_BTL_ATOMIC_SUPPORTS_ADD | MCA_BTL_ATOMIC_SUPPORTS_AND |
        MCA_BTL_ATOMIC_SUPPORTS_OR | MCA_BTL_ATOMIC_SUPPORTS_XOR | MCA_BTL_ATOMIC_SUPPORTS_SWAP |
        MCA_BTL_ATOMIC_SUPPORTS_MIN | MCA_BTL_ATOMIC_SUPPORTS_MAX | MCA_BTL_ATOMIC_SUPPORTS_CSWAP |
        MCA_BTL_ATOMIC_SUPPORTS_32BIT | MCA_BTL_ATOMIC_SUPPORTS_GLOB;
    m->btl_registration_handle_size = sizeof(mca_btl_base_registration_handle_t);

    /* peers on other hosts (the ofi module): a message costs a trip over
     * the network, and a rendezvous one more trip and a read, so messages
     * up to 64 KiB go eagerly (one write each; tcp's BTL: 64 KiB too);
     * larger ones take the RDMA get as on this host.  32 KiB left 64 KiB
     * messages at 0.9-1.1x tcp's latency and bandwidth, 64 KiB 0.6x and
     * 1.3-1.4x (docs/btl_sci.md) */
    c->ofi_figures = tc_ompi_reach_figures(m);
    c->ofi_figures.eager_limit = 64 * 1024 + MCA_BTL_SCI_HDR_ROOM;
    c->ofi_figures.rndv_eager_limit = 64 * 1024 + MCA_BTL_SCI_HDR_ROOM;
    c->ofi_figures.max_send_size = 64 * 1024 + MCA_BTL_SCI_HDR_ROOM;
    c->ofi_figures.rdma_pipeline_send_length = 64 * 1024 + MCA_BTL_SCI_HDR_ROOM;
    c->ofi_figures.latency = 10;
    c->ofi_figures.bandwidth = 10000;
    if (OPAL_SUCCESS !=
        tc_ompi_reach_register(&c->super.btl_version, "ofi",
                               "peers through the ofi provider (other hosts)", &c->ofi_figures)) {
        return OPAL_ERROR;
    }
    (void) tc_ompi_watch_register(&c->super.btl_version);

    return mca_btl_base_param_register(&c->super.btl_version, m);
}

static int mca_btl_sci_component_open(void)
{
    mca_btl_sci_component_t *c = &mca_btl_sci_component;

    /* our help file: installed copy first, the source tree for runs from
     * the build tree */
#ifdef MCA_BTL_SCI_HELP_DIR
    (void) opal_show_help_add_dir(MCA_BTL_SCI_HELP_DIR);
#endif
#ifdef MCA_BTL_SCI_SRCDIR
    (void) opal_show_help_add_dir(MCA_BTL_SCI_SRCDIR);
#endif

    OBJ_CONSTRUCT(&mca_btl_sci_module.frags, opal_free_list_t);
    OBJ_CONSTRUCT(&mca_btl_sci_ofi_module.frags, opal_free_list_t);
    OBJ_CONSTRUCT(&c->pending_endpoints, opal_list_t);
    tc_ompi_done_list_construct(&c->completed_frags);
    OBJ_CONSTRUCT(&c->free_aops, opal_list_t);
    OBJ_CONSTRUCT(&c->lock, opal_mutex_t);
    OBJ_CONSTRUCT(&c->expose_lock, opal_mutex_t);
    c->output = -1;
    return OPAL_SUCCESS;
}

/* SCI shutdown order for our own segments: hide, then unmap and remove */
void mca_btl_sci_remove_local_segments(void)
{
    mca_btl_sci_component_t *c = &mca_btl_sci_component;

    if (NULL != c->lsegs) {
        for (int i = 0; i < c->num_local; ++i) {
            if (NULL != c->lsegs[i]) {
                (void) sci_set_segment_unavailable(c->lsegs[i]);
                sci_remove_segment(c->lsegs[i]);
            }
        }
        free(c->lsegs);
        c->lsegs = NULL;
    }
    if (NULL != c->olsegs) {
        for (int i = 0; i < c->num_oeps; ++i) {
            if (NULL != c->olsegs[i]) {
                (void) sci_set_segment_unavailable(c->olsegs[i]);
                sci_remove_segment(c->olsegs[i]);
            }
        }
        free(c->olsegs);
        c->olsegs = NULL;
    }
    if (NULL != c->doorbell_seg) {
        sci_remove_segment(c->doorbell_seg);
        c->doorbell_seg = NULL;
        c->doorbell = NULL;
    }
    tc_peers_fini(&c->peers);
    c->other_jobs_on = false;
}

/* the endpoint tables: destruct every endpoint (which disconnects it) */
void mca_btl_sci_free_endpoints(void)
{
    mca_btl_sci_component_t *c = &mca_btl_sci_component;

    if (NULL != c->endpoints) {
        for (int i = 0; i < c->num_local; ++i) {
            OBJ_DESTRUCT(c->endpoints + i);
        }
    }
    if (NULL != c->oeps) {
        for (int i = 0; i < c->num_oeps; ++i) {
            OBJ_DESTRUCT(c->oeps + i);
        }
    }
    free(c->endpoints);
    free(c->oeps);
    c->oeps = NULL;
    free(c->active);
    free(c->connected);
    free(c->sweep);
    c->endpoints = NULL;
    c->active = NULL;
    c->connected = NULL;
    c->sweep = NULL;
    c->num_active = c->num_connected = 0;
}

static void mca_btl_sci_release_segments(void)
{
    mca_btl_sci_component_t *c = &mca_btl_sci_component;

    mca_btl_sci_remove_local_segments();
    if (NULL != c->dq) {
        sci_remove_dma_queue(c->dq);
        c->dq = NULL;
    }
    if (NULL != c->sd) {
        sci_close(c->sd);
        c->sd = NULL;
    }
    if (NULL != c->odq) {
        sci_remove_dma_queue(c->odq);
        c->odq = NULL;
    }
    if (NULL != c->osd) {
        sci_close(c->osd);
        c->osd = NULL;
    }
}

static int mca_btl_sci_component_close(void)
{
    mca_btl_sci_component_t *c = &mca_btl_sci_component;

    mca_btl_sci_release_segments();
    OBJ_DESTRUCT(&mca_btl_sci_module.frags);
    OBJ_DESTRUCT(&mca_btl_sci_ofi_module.frags);
    OBJ_DESTRUCT(&c->pending_endpoints);
    tc_ompi_done_list_destruct(&c->completed_frags);
    OBJ_DESTRUCT(&c->free_aops);
    OBJ_DESTRUCT(&c->lock);
    OBJ_DESTRUCT(&c->expose_lock);
    tc_ompi_output_close(&c->output);
    return OPAL_SUCCESS;
}

/* is the btl list exactly "self,sci" or "sci"?  Then a peer sci cannot
 * reach is worth a message (nothing else will carry it). */
bool mca_btl_sci_only_sci_requested(void)
{
    return tc_ompi_btl_selection("sci").only;
}

/* the fixed record, then (ofi) the provider's directory: its address
 * and the segments of every peer */
static int mca_btl_sci_modex_send(void)
{
    mca_btl_sci_component_t *c = &mca_btl_sci_component;
    mca_btl_sci_modex_t *modex;
    size_t dirlen = 0;
    int rc;

    if (NULL != c->osd) {
        (void) sci_export_directory(c->osd, NULL, 0, &dirlen);
    }
    modex = calloc(1, sizeof(*modex) + dirlen);
    if (NULL == modex) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    modex->node_id = c->node_id;
    modex->local_rank = (uint32_t) c->local_rank;
    modex->nslots = mca_btl_sci_module.ring_slots;
    modex->slot_size = mca_btl_sci_module.slot_size;
    modex->ofi_nslots = mca_btl_sci_ofi_module.ring_slots;
    modex->ofi_slot_size = mca_btl_sci_ofi_module.slot_size;
    modex->pid = (int32_t) getpid();
    if (NULL != c->osd && SCI_ERR_OK != sci_export_directory(c->osd, modex + 1, dirlen, &dirlen)) {
        free(modex);
        return OPAL_ERROR;
    }
    TC_OMPI_MODEX_SEND(rc, NULL != c->osd ? TC_OMPI_SCOPE_GLOBAL : TC_OMPI_SCOPE_LOCAL,
                       &c->super.btl_version, modex, sizeof(*modex) + dirlen);
    free(modex);
    return rc;
}

/* bytes of one per-peer segment for a peer of the module's reach */
static size_t mca_btl_sci_segment_bytes(const mca_btl_sci_module_t *mod)
{
    size_t need = MCA_BTL_SCI_SEG_RING_OFF + tc_ring_size(mod->ring_slots, mod->slot_size);

    return need > mca_btl_sci_component.segment_size ? need : mca_btl_sci_component.segment_size;
}

/* create, prepare and make available one local segment per node-local
 * peer and the doorbell; format every ring */
static int mca_btl_sci_create_ofi_segments(void);

static int mca_btl_sci_create_segments(void)
{
    mca_btl_sci_component_t *c = &mca_btl_sci_component;
    const mca_btl_sci_module_t *mod = &mca_btl_sci_module;
    size_t bytes = mca_btl_sci_segment_bytes(mod);
    sci_error_t err;

    if (NULL != c->osd && OPAL_SUCCESS != mca_btl_sci_create_ofi_segments()) {
        return OPAL_ERROR;
    }
    if (NULL == c->sd) {
        return OPAL_SUCCESS;
    }
    c->lsegs = calloc((size_t) c->num_local, sizeof(*c->lsegs));
    if (NULL == c->lsegs) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    for (int peer = 0; peer < c->num_local; ++peer) {
        sci_local_segment_t *seg;
        char *base;

        if (peer == c->local_rank) {
            continue;
        }
        err = sci_create_segment(c->sd, MCA_BTL_SCI_SEGMENT_ID(c->local_rank, peer), bytes, &seg);
        if (SCI_ERR_OK != err) {
            goto fail;
        }
        c->lsegs[peer] = seg;
        base = sci_local_segment_address(seg);
        if (0 !=
            tc_ring_format(base + MCA_BTL_SCI_SEG_RING_OFF, bytes - MCA_BTL_SCI_SEG_RING_OFF,
                           mod->ring_slots, mod->slot_size)) {
            err = SCI_ERR_ILLEGAL_PARAMETER;
            goto fail;
        }
        if (SCI_ERR_OK != (err = sci_prepare_segment(seg)) ||
            SCI_ERR_OK != (err = sci_set_segment_available(seg, 1))) {
            goto fail;
        }
    }
    err = sci_create_segment(c->sd, MCA_BTL_SCI_SEGMENT_ID(c->local_rank, MCA_BTL_SCI_DOORBELL_ID),
                             TC_ALIGN_UP((size_t) c->num_local, (size_t) 64), &c->doorbell_seg);
    if (SCI_ERR_OK != err) {
        goto fail;
    }
    c->doorbell = sci_local_segment_address(c->doorbell_seg);
    if (SCI_ERR_OK != (err = sci_prepare_segment(c->doorbell_seg)) ||
        SCI_ERR_OK !=
            (err = sci_set_segment_available(c->doorbell_seg, (unsigned) c->num_local - 1))) {
        goto fail;
    }
    return OPAL_SUCCESS;

fail:
    opal_show_help("help-mpi-btl-sci.txt", "segment create failed", true,
                   opal_process_info.nodename, opal_process_info.job_session_dir,
                   (unsigned long) bytes, sci_strerror(err));
    return OPAL_ERROR;
}

/* the ofi segment of peer index idx (its ring, formatted), made available */
sci_error_t mca_btl_sci_ofi_segment_make(int idx)
{
    mca_btl_sci_component_t *c = &mca_btl_sci_component;
    const mca_btl_sci_module_t *mod = &mca_btl_sci_ofi_module;
    size_t bytes = mca_btl_sci_segment_bytes(mod);
    sci_local_segment_t *seg = NULL;
    sci_error_t err;
    char *base;

    err = sci_create_segment(c->osd, MCA_BTL_SCI_SEGMENT_ID(c->my_vpid, idx), bytes, &seg);
    if (SCI_ERR_OK != err) {
        return err;
    }
    base = sci_local_segment_address(seg);
    /* a new segment is zero: only the ring header is written, so the
     * slots cost no memory until this peer sends */
    if (0 !=
        tc_ring_format_zeroed(base + MCA_BTL_SCI_SEG_RING_OFF, bytes - MCA_BTL_SCI_SEG_RING_OFF,
                              mod->ring_slots, mod->slot_size)) {
        err = SCI_ERR_ILLEGAL_PARAMETER;
    }
    if (SCI_ERR_OK == err) {
        err = sci_prepare_segment(seg);
    }
    if (SCI_ERR_OK == err) {
        err = sci_set_segment_available(seg, 1);
    }
    if (SCI_ERR_OK != err) {
        sci_remove_segment(seg);
        return err;
    }
    c->olsegs[idx] = seg;
    return SCI_ERR_OK;
}

/* ofi: one segment per process of the job (which of them are on this
 * host is not known before the modex), formatted and made available, so
 * that the directory in our modex lists them all */
static int mca_btl_sci_create_ofi_segments(void)
{
    mca_btl_sci_component_t *c = &mca_btl_sci_component;
    const mca_btl_sci_module_t *mod = &mca_btl_sci_ofi_module;
    size_t bytes = mca_btl_sci_segment_bytes(mod);
    sci_error_t err = SCI_ERR_OK;

    c->olsegs = calloc((size_t) c->num_oeps, sizeof(*c->olsegs));
    if (NULL == c->olsegs) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    for (int peer = 0; c->own_ofi && peer < c->num_procs; ++peer) {
        if (peer != c->my_vpid && SCI_ERR_OK != (err = mca_btl_sci_ofi_segment_make(peer))) {
            break;
        }
    }
    if (SCI_ERR_OK != err) {
        opal_show_help("help-mpi-btl-sci.txt", "segment create failed", true,
                       opal_process_info.nodename, "ofi", (unsigned long) bytes, sci_strerror(err));
        return OPAL_ERROR;
    }
    return OPAL_SUCCESS;
}

/* open the providers btl_sci_provider asks for and the job needs: shm
 * when another process of the job is on this host, ofi when one is not
 * (or when forced); false when neither opened */
static bool mca_btl_sci_open_providers(void)
{
    mca_btl_sci_component_t *c = &mca_btl_sci_component;
    const bool force_shm = 0 == strcmp(c->provider, "shm");
    const bool force_ofi = 0 == strcmp(c->provider, "ofi");
    sci_open_params_t params;
    char key[64];
    sci_error_t err;

    if (!force_shm && !force_ofi && 0 != strcmp(c->provider, "auto")) {
        opal_output(0, "btl:sci: btl_sci_provider=%s: not auto, shm or ofi; sci disabled",
                    c->provider);
        return false;
    }
    memset(&params, 0, sizeof(params));
    snprintf(key, sizeof(key), "%x", (unsigned) OPAL_PROC_MY_NAME.jobid);
    params.job_key = key;
    if (!force_ofi && c->num_local > 1 && NULL != opal_process_info.job_session_dir) {
        params.segment_dir = opal_process_info.job_session_dir;
        params.provider = "shm";
        if (SCI_ERR_OK == sci_open(&params, &c->sd)) {
            c->node_id = sci_local_node_id(c->sd);
        }
    }
    c->own_ofi = !force_shm && (force_ofi || c->num_procs > c->num_local);
    c->ofi_poll_always = c->own_ofi;
    /* processes of other jobs go over ofi, on this host too: its address
     * must be in the modex from MPI_Init on */
    if (c->own_ofi || (!force_shm && c->other_jobs > 0)) {
        params.provider = "ofi";
        params.node_id = (uint32_t) c->my_vpid;
        params.node_name = tc_peers_name(OPAL_PROC_MY_NAME.jobid, (uint32_t) c->my_vpid);
        params.fabric = c->ofi_fabric;
        params.device = NULL != c->ofi_device && '\0' != c->ofi_device[0] ? c->ofi_device : NULL;
        params.prefault = (size_t) c->ofi_prefault << 20;
        err = sci_provider_available("ofi") ? sci_open(&params, &c->osd) : SCI_ERR_NOT_SUPPORTED;
        if (SCI_ERR_NOT_SUPPORTED == err && 0 == strcmp(c->ofi_fabric, "net") &&
            0 == strcmp(c->ofi_fabric, sci_ofi_default_fabric())) {
            /* the default, but this libfabric was built without it */
            params.fabric = "tcp;ofi_rxm";
            err = sci_open(&params, &c->osd);
        }
        if (SCI_ERR_OK != err) {
            c->osd = NULL;
            opal_output_verbose(force_ofi ? 1 : 10, c->output,
                                "btl:sci: ofi provider (%s) not available: %s", c->ofi_fabric,
                                sci_strerror(err));
        }
    }
    return NULL != c->sd || NULL != c->osd;
}

/* a module's ring geometry: a power of two of slots (at least 4), each
 * holding at least one eager message; its largest fragment is one slot */
static void mca_btl_sci_set_geometry(mca_btl_sci_module_t *mod, unsigned int ring_slots,
                                     size_t slot_size)
{
    mca_btl_base_module_t *m = &mod->super;
    unsigned int n = 4;

    while (n < ring_slots && n < (1u << 20)) {
        n <<= 1;
    }
    mod->ring_slots = n;
    if (m->btl_eager_limit > MCA_BTL_SCI_SLOT_MAX) {
        m->btl_eager_limit = MCA_BTL_SCI_SLOT_MAX;
    }
    if (slot_size < m->btl_eager_limit) {
        slot_size = m->btl_eager_limit;
    }
    if (slot_size > MCA_BTL_SCI_SLOT_MAX) {
        slot_size = MCA_BTL_SCI_SLOT_MAX;
    }
    mod->slot_size = TC_ALIGN_UP((unsigned int) slot_size, 64u);
    m->btl_max_send_size = mod->slot_size;
    if (m->btl_rndv_eager_limit > mod->slot_size) {
        m->btl_rndv_eager_limit = mod->slot_size;
    }
}

/* without a DMA engine: no put/get, no registration, no atomics */
static void mca_btl_sci_strip_rdma(mca_btl_base_module_t *m)
{
    m->btl_flags &= ~(MCA_BTL_FLAGS_RDMA | MCA_BTL_FLAGS_ATOMIC_OPS | MCA_BTL_FLAGS_ATOMIC_FOPS |
                      TC_OMPI_BTL_FLAGS_RDMA_REMOTE_COMPLETION);
    m->btl_put = NULL;
    m->btl_get = NULL;
    m->btl_register_mem = NULL;
    m->btl_deregister_mem = NULL;
    m->btl_atomic_op = NULL;
    m->btl_atomic_fop = NULL;
    m->btl_atomic_cswap = NULL;
    m->btl_registration_handle_size = 0;
}

static mca_btl_base_module_t **
mca_btl_sci_component_init(int *num_btls, bool enable_progress_threads, bool enable_mpi_threads)
{
    mca_btl_sci_component_t *c = &mca_btl_sci_component;
    mca_btl_base_module_t *m = &mca_btl_sci_module.super;
    mca_btl_base_module_t **btls;
    sci_error_t err;
    int rc;

    (void) enable_progress_threads;
    (void) enable_mpi_threads;
    *num_btls = 0;

    c->output = tc_ompi_output_open(c->verbose);

    if (OPAL_SUCCESS != mca_btl_base_param_verify(m)) {
        return NULL;
    }

    /* each reach's module and ring geometry: the template is the
     * same-host module, the ofi module its copy with the ofi limits */
    mca_btl_sci_set_geometry(&mca_btl_sci_module, c->ring_slots, c->slot_size);
    tc_ompi_reach_module_init(&mca_btl_sci_ofi_module.super, m, &c->ofi_figures);
    mca_btl_sci_set_geometry(&mca_btl_sci_ofi_module, c->ofi_ring_slots,
                             mca_btl_sci_ofi_module.super.btl_max_send_size);
    /* ofi peers: ob1 hands a payload from ofi_send_inplace bytes on to
     * prepare_src, which leaves it in place (sent from the user buffer,
     * no copy); without that, ob1 had better use sendi (one copy into the
     * slot) than prepare_src (packed, then copied into the slot) */
    mca_btl_sci_module.inplace_min = 0;
    mca_btl_sci_ofi_module.inplace_min = c->ofi_inplace_min;
    if (0 == c->ofi_inplace_min) {
        mca_btl_sci_ofi_module.super.btl_flags &= ~MCA_BTL_FLAGS_SEND_INPLACE;
    }
    if (0 == c->poll_batch) {
        c->poll_batch = 1;
    }
    /* masks below need powers of two */
    {
        unsigned int n = 1;
        while (n < c->sweep_interval && n < (1u << 24)) {
            n <<= 1;
        }
        c->sweep_interval = n;
    }

    c->local_rank = opal_process_info.my_local_rank;
    c->num_local = (int) opal_process_info.num_local_peers + 1;
    c->my_vpid = (int) OPAL_PROC_MY_NAME.vpid;
    {
        uint32_t n = 0;
        if (OPAL_SUCCESS != tc_ompi_job_size(&n) || n > 0xfffe) {
            return NULL;
        }
        c->num_procs = (int) n;
    }
    if (c->local_rank < 0 || c->local_rank >= c->num_local || c->num_local > 0xfffe ||
        c->num_procs < c->num_local || c->num_procs > 0xfffe || c->my_vpid >= c->num_procs) {
        return NULL;
    }
    /* a job of one process still opens ofi for other jobs (a spawned
     * child alone, a singleton that spawns) */
    if (!mca_btl_sci_open_providers()) {
        /* no provider reaches any other process of the job */
        opal_output_verbose(10, c->output, "btl:sci: no peer reachable, disabled");
        /* the provider that was tried (ofi only when forced or when it
         * could not open: then shm is what reaches this host) */
        tc_ompi_alone_on_host("help-mpi-btl-sci.txt", "sci",
                              0 == strcmp(c->provider, "ofi") ? "ofi" : "shm",
                              mca_btl_sci_only_sci_requested());
        return NULL;
    }

    /* DMA engine: CMA (shm), RMA (ofi); without it no put/get (and no osc/rdma) */
    if (c->use_dma && NULL != c->osd) {
        err = sci_create_dma_queue(c->osd, 16, &c->odq);
        if (SCI_ERR_OK == err && enable_mpi_threads) {
            err = sci_dma_queue_share(c->odq);
        }
        if (SCI_ERR_OK != err && NULL != c->odq) {
            sci_remove_dma_queue(c->odq);
            c->odq = NULL;
        }
    }
    if (c->use_dma && NULL != c->sd) {
        err = sci_dma_probe(c->sd);
        if (SCI_ERR_OK == err) {
            err = sci_create_dma_queue(c->sd, 16, &c->dq);
        }
        if (SCI_ERR_OK == err && enable_mpi_threads) {
            /* put/get from several threads: the one queue takes a lock */
            err = sci_dma_queue_share(c->dq);
        }
        if (SCI_ERR_OK != err) {
            opal_show_help("help-mpi-btl-sci.txt", "cma refused", true, opal_process_info.nodename,
                           sci_strerror(err));
        }
    }
    if ((NULL != c->sd && NULL == c->dq) || (NULL != c->osd && NULL == c->odq)) {
        /* one registration serves both modules: both go without */
        mca_btl_sci_strip_rdma(m);
        mca_btl_sci_strip_rdma(&mca_btl_sci_ofi_module.super);
    }
    if (!c->ofi_rdma) {
        mca_btl_sci_strip_rdma(&mca_btl_sci_ofi_module.super);
    }

    /* the peer table: own job by vpid, other jobs' processes after it
     * (their segment ids keep 16 bits per index, below the doorbell's) */
    c->other_jobs_on = NULL != c->osd && c->other_jobs > 0 &&
        (uint32_t) c->num_procs + c->other_jobs < MCA_BTL_SCI_DOORBELL_ID &&
        0 ==
            tc_peers_init(&c->peers, OPAL_PROC_MY_NAME.jobid, (uint32_t) c->num_procs,
                          c->other_jobs);
    if (!c->other_jobs_on) {
        (void) tc_peers_init(&c->peers, OPAL_PROC_MY_NAME.jobid, (uint32_t) c->num_procs, 0);
        if (NULL != c->osd && c->other_jobs > 0) {
            opal_output_verbose(1, c->output,
                                "btl:sci: btl_sci_other_jobs=%u with %d processes: more than "
                                "%u in all; processes of other jobs are left to another BTL",
                                c->other_jobs, c->num_procs, MCA_BTL_SCI_DOORBELL_ID - 1);
        }
    }
    c->num_oeps = (int) tc_peers_capacity(&c->peers);
    if (OPAL_SUCCESS != mca_btl_sci_create_segments()) {
        mca_btl_sci_release_segments();
        return NULL;
    }

    /* send fragments of each module in use, a slot of its reach each */
    rc = OPAL_SUCCESS;
    for (int i = 0; i < 2 && OPAL_SUCCESS == rc; ++i) {
        mca_btl_sci_module_t *mod = 0 == i ? &mca_btl_sci_module : &mca_btl_sci_ofi_module;

        if (NULL != (0 == i ? c->sd : c->osd)) {
            rc = opal_free_list_init(&mod->frags, sizeof(mca_btl_sci_frag_t), opal_cache_line_size,
                                     OBJ_CLASS(mca_btl_sci_frag_t), mod->slot_size,
                                     opal_cache_line_size, 64, (int) c->free_list_max, 64, NULL, 0,
                                     NULL, mca_btl_sci_frag_init, mod);
        }
    }
    if (OPAL_SUCCESS != rc) {
        mca_btl_sci_release_segments();
        return NULL;
    }

    /* constructed at once: the fail path destructs whatever was allocated */
    c->endpoints = calloc((size_t) c->num_local, sizeof(*c->endpoints));
    if (NULL != c->endpoints) {
        for (int i = 0; i < c->num_local; ++i) {
            OBJ_CONSTRUCT(c->endpoints + i, mca_btl_sci_endpoint_t);
            c->endpoints[i].peer_rank = i;
        }
    }
    if (NULL != c->osd) {
        c->oeps = calloc((size_t) c->num_oeps, sizeof(*c->oeps));
        if (NULL != c->oeps) {
            for (int i = 0; i < c->num_oeps; ++i) {
                OBJ_CONSTRUCT(c->oeps + i, mca_btl_sci_endpoint_t);
                c->oeps[i].peer_rank = i;
            }
        }
    }
    c->active = calloc((size_t) (c->num_local + c->num_oeps), sizeof(*c->active));
    c->connected = calloc((size_t) (c->num_local + c->num_oeps), sizeof(*c->connected));
    c->sweep = calloc((size_t) (c->num_local + c->num_oeps), sizeof(*c->sweep));
    if (NULL == c->endpoints || NULL == c->active || NULL == c->connected || NULL == c->sweep ||
        (NULL != c->osd && NULL == c->oeps)) {
        goto fail;
    }
    c->num_active = 0;
    c->num_connected = 0;
    c->num_unconnected = 0;

    if (!(m->btl_flags & MCA_BTL_FLAGS_RDMA)) {
        /* no put/get: no registrations, no atomics */
    } else if ((OPAL_SUCCESS != mca_btl_sci_rcache_init() ||
                OPAL_SUCCESS != mca_btl_sci_atomic_init())) {
        goto fail;
    }

    if (OPAL_SUCCESS != mca_btl_sci_modex_send()) {
        goto fail;
    }
    tc_ompi_watch_publish(&c->super.btl_version);

    /* one module per provider that opened (docs/common.md, "One BTL
     * module per reach") */
    btls = calloc(2, sizeof(*btls));
    if (NULL == btls) {
        goto fail;
    }
    if (NULL != c->sd) {
        btls[(*num_btls)++] = m;
        mca_btl_sci_module.initialized = true;
    }
    if (NULL != c->osd) {
        btls[(*num_btls)++] = &mca_btl_sci_ofi_module.super;
        mca_btl_sci_ofi_module.initialized = true;
    }
    c->running = true;
    for (int i = 0; i < *num_btls; ++i) {
        const mca_btl_sci_module_t *mod = (const mca_btl_sci_module_t *) btls[i];

        opal_output_verbose(10, c->output,
                            "btl:sci: local rank %d of %d, rank %d of %d: module %s, ring %u x %u "
                            "B, eager limit %zu, dma %s",
                            c->local_rank, c->num_local, c->my_vpid, c->num_procs, mod->reach,
                            mod->ring_slots, mod->slot_size, mod->super.btl_eager_limit,
                            (mod->super.btl_flags & MCA_BTL_FLAGS_RDMA) ? "on" : "off");
    }
    return btls;

fail:
    tc_ompi_watch_stop(); /* closes the listener if it was published */
    mca_btl_sci_atomic_fini();
    mca_btl_sci_rcache_fini();
    mca_btl_sci_free_endpoints();
    mca_btl_sci_release_segments();
    return NULL;
}
