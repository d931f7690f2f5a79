/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * osc_hybrid_component.c: osc/hybrid's component: MCA parameters, the
 * query that decides when it serves a window, window creation (create,
 * allocate, dynamic with attach/detach), window free and the progress
 * function that drives every window's active messages.
 */

#include "ompi_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/runtime/opal_progress.h"
#include "opal/mca/btl/btl.h"
#include "opal/util/show_help.h"
#include "ompi/mca/pml/pml.h"
#include "ompi/mca/osc/base/base.h"
#include "ompi/mca/bml/bml.h"
#include "ompi/mca/bml/base/base.h"
#include "ompi/proc/proc.h"

#include "osc_hybrid.h"

static int mca_osc_hybrid_register(void);
static int mca_osc_hybrid_init(bool enable_progress_threads, bool enable_mpi_threads);
static int mca_osc_hybrid_finalize(void);
static int mca_osc_hybrid_query(ompi_win_t *win, void **base, size_t size, int disp_unit,
                                ompi_communicator_t *comm, opal_info_t *info, int flavor);
static int mca_osc_hybrid_select(ompi_win_t *win, void **base, size_t size, int disp_unit,
                                 ompi_communicator_t *comm, opal_info_t *info, int flavor,
                                 int *model);
static int mca_osc_hybrid_free(ompi_win_t *win);
static int mca_osc_hybrid_attach(ompi_win_t *win, void *base, size_t len);
static int mca_osc_hybrid_detach(ompi_win_t *win, const void *base);

mca_osc_hybrid_component_t mca_osc_hybrid_component = {
    .super =
        {
            .osc_version =
                {
                    OMPI_OSC_BASE_VERSION_3_0_0,
                    .mca_component_name = "hybrid",
                    MCA_BASE_MAKE_VERSION(component, 0, 1, 0),
                    .mca_register_component_params = mca_osc_hybrid_register,
                },
            .osc_data = {MCA_BASE_METADATA_PARAM_CHECKPOINT},
            .osc_init = mca_osc_hybrid_init,
            .osc_query = mca_osc_hybrid_query,
            .osc_select = mca_osc_hybrid_select,
            .osc_finalize = mca_osc_hybrid_finalize,
        },
};

static const ompi_osc_base_module_t mca_osc_hybrid_module_template = {
    .osc_win_shared_query = NULL,
    .osc_win_attach = mca_osc_hybrid_attach,
    .osc_win_detach = mca_osc_hybrid_detach,
    .osc_free = mca_osc_hybrid_free,
    .osc_put = mca_osc_hybrid_put,
    .osc_get = mca_osc_hybrid_get,
    .osc_accumulate = mca_osc_hybrid_accumulate,
    .osc_compare_and_swap = mca_osc_hybrid_compare_and_swap,
    .osc_fetch_and_op = mca_osc_hybrid_fetch_and_op,
    .osc_get_accumulate = mca_osc_hybrid_get_accumulate,
    .osc_rput = mca_osc_hybrid_rput,
    .osc_rget = mca_osc_hybrid_rget,
    .osc_raccumulate = mca_osc_hybrid_raccumulate,
    .osc_rget_accumulate = mca_osc_hybrid_rget_accumulate,
    .osc_fence = mca_osc_hybrid_fence,
    .osc_start = mca_osc_hybrid_start,
    .osc_complete = mca_osc_hybrid_complete,
    .osc_post = mca_osc_hybrid_post,
    .osc_wait = mca_osc_hybrid_wait,
    .osc_test = mca_osc_hybrid_test,
    .osc_lock = mca_osc_hybrid_lock,
    .osc_unlock = mca_osc_hybrid_unlock,
    .osc_lock_all = mca_osc_hybrid_lock_all,
    .osc_unlock_all = mca_osc_hybrid_unlock_all,
    .osc_sync = mca_osc_hybrid_sync,
    .osc_flush = mca_osc_hybrid_flush,
    .osc_flush_all = mca_osc_hybrid_flush_all,
    .osc_flush_local = mca_osc_hybrid_flush_local,
    .osc_flush_local_all = mca_osc_hybrid_flush_local_all,
};

static int mca_osc_hybrid_register(void)
{
    mca_osc_hybrid_component_t *c = &mca_osc_hybrid_component;

    /* Below osc/rdma and osc/sm: chosen when they cannot serve a window. */
    c->priority = 5;
    (void) mca_base_component_var_register(
        &c->super.osc_version, "priority",
        "Priority of osc/hybrid. It is below osc/rdma and osc/sm, so it serves a window "
        "exactly when they cannot (a BTL without RDMA or atomics); --mca osc hybrid forces it",
        MCA_BASE_VAR_TYPE_INT, NULL, 0, 0, OPAL_INFO_LVL_3, MCA_BASE_VAR_SCOPE_READONLY,
        &c->priority);
    c->over_vader = true;
    (void) mca_base_component_var_register(
        &c->super.osc_version, "over_vader",
        "Serve windows whose peers are all reached by btl/vader, above osc/rdma: Open MPI "
        "4.1's osc/rdma over vader crashes in a compare-and-swap that targets the calling "
        "rank and returns wrong MPI_LOR/MPI_LXOR accumulates (false: leave them to osc/rdma)",
        MCA_BASE_VAR_TYPE_BOOL, NULL, 0, 0, OPAL_INFO_LVL_4, MCA_BASE_VAR_SCOPE_READONLY,
        &c->over_vader);
    c->above_rdma = true;
    (void) mca_base_component_var_register(
        &c->super.osc_version, "above_rdma",
        "On Open MPI 5.0, serve every window osc/rdma would serve, at osc/rdma's priority + 1: "
        "5.0's osc/rdma serves every window (emulating RDMA with active messages over BTLs "
        "without it) and 5.0.7's returns wrong MPI_LOR, MPI_LXOR and SUM accumulates, emulated "
        "and native (sci) alike. On 4.1, serve the windows whose peers are all reached by "
        "btl/sci's RDMA, above osc/rdma: 4.1.4's osc/rdma there returns wrong get_accumulate "
        "results with derived datatypes and refuses attaching more regions than "
        "osc_rdma_max_attach (false: leave the windows to osc/rdma)",
        MCA_BASE_VAR_TYPE_BOOL, NULL, 0, 0, OPAL_INFO_LVL_4, MCA_BASE_VAR_SCOPE_READONLY,
        &c->above_rdma);
    c->slot_size = 32768;
    (void) mca_base_component_var_register(
        &c->super.osc_version, "slot_size",
        "Bytes of one pre-posted active-message receive (header, segment list and inline "
        "data of one request); larger requests are split (minimum 1024)",
        MCA_BASE_VAR_TYPE_INT, NULL, 0, 0, OPAL_INFO_LVL_5, MCA_BASE_VAR_SCOPE_READONLY,
        &c->slot_size);
    c->nslots = 16;
    (void) mca_base_component_var_register(
        &c->super.osc_version, "slots",
        "Active-message receives posted per window (bounds what a target buffers in its "
        "window; more arrive as ordinary unexpected messages of the PML)",
        MCA_BASE_VAR_TYPE_INT, NULL, 0, 0, OPAL_INFO_LVL_5, MCA_BASE_VAR_SCOPE_READONLY,
        &c->nslots);
    c->inline_max = 8192;
    (void) mca_base_component_var_register(
        &c->super.osc_version, "inline_max",
        "Put data up to this many bytes travels inside the request; larger puts send the "
        "data as a separate message straight into the target window",
        MCA_BASE_VAR_TYPE_INT, NULL, 0, 0, OPAL_INFO_LVL_5, MCA_BASE_VAR_SCOPE_READONLY,
        &c->inline_max);
    c->aggregate_max = 4096;
    (void) mca_base_component_var_register(
        &c->super.osc_version, "aggregate_max",
        "Bytes of small requests and notices to one target gathered into one message; the "
        "message leaves when full, at the next synchronisation call or at the next progress "
        "call, whichever comes first (0: every request is a message of its own). Above the "
        "BTL's eager limit a message needs a rendezvous",
        MCA_BASE_VAR_TYPE_INT, NULL, 0, 0, OPAL_INFO_LVL_5, MCA_BASE_VAR_SCOPE_READONLY,
        &c->aggregate_max);
    c->rdma = true;
    (void) mca_base_component_var_register(
        &c->super.osc_version, "rdma",
        "Move contiguous puts and gets with the BTL's own RDMA (btl_put/btl_get on a "
        "registered window) when one such BTL reaches every other rank of a create or "
        "allocate window; otherwise, and for every other operation, active messages",
        MCA_BASE_VAR_TYPE_BOOL, NULL, 0, 0, OPAL_INFO_LVL_4, MCA_BASE_VAR_SCOPE_READONLY, &c->rdma);
    c->rdma_bounce = 8192;
    (void) mca_base_component_var_register(
        &c->super.osc_version, "rdma_bounce",
        "Largest put/get (bytes) on the RDMA path that is copied through a buffer registered "
        "once per window instead of registering the user buffer for each transfer (0: "
        "always register the user buffer)",
        MCA_BASE_VAR_TYPE_INT, NULL, 0, 0, OPAL_INFO_LVL_5, MCA_BASE_VAR_SCOPE_READONLY,
        &c->rdma_bounce);
    c->rdma_min = 0;
    (void) mca_base_component_var_register(
        &c->super.osc_version, "rdma_min",
        "Smallest contiguous put/get (bytes) that takes the RDMA path", MCA_BASE_VAR_TYPE_INT, NULL,
        0, 0, OPAL_INFO_LVL_5, MCA_BASE_VAR_SCOPE_READONLY, &c->rdma_min);
    return OMPI_SUCCESS;
}

static int mca_osc_hybrid_init(bool enable_progress_threads, bool enable_mpi_threads)
{
    mca_osc_hybrid_component_t *c = &mca_osc_hybrid_component;

    (void) enable_progress_threads;
    (void) enable_mpi_threads;
    if (c->slot_size < 1024) {
        c->slot_size = 1024;
    }
    c->slot_size &= ~15;
    if (c->nslots < 2) {
        c->nslots = 2;
    }
    if (c->inline_max < 0) {
        c->inline_max = 0;
    }
    if (c->inline_max > c->slot_size / 2) {
        c->inline_max = c->slot_size / 2;
    }
    if (c->rdma_bounce < 0) {
        c->rdma_bounce = 0;
    }
    if (c->rdma_bounce > (1 << 20)) {
        c->rdma_bounce = 1 << 20;
    }
    if (c->aggregate_max < 0) {
        c->aggregate_max = 0;
    }
    if (c->aggregate_max > c->slot_size) {
        c->aggregate_max = c->slot_size;
    }
    c->aggregate_max &= ~15;
    /* our help file: installed copy first, the source tree for runs from
     * the build tree */
    (void) opal_show_help_add_dir(MCA_OSC_HYBRID_HELP_DIR);
    (void) opal_show_help_add_dir(MCA_OSC_HYBRID_SRCDIR);
    OBJ_CONSTRUCT(&c->lock, opal_mutex_t);
    c->modules = NULL;
    c->nmodules = 0;
    c->maxmodules = 0;
    c->progress_registered = false;
    return OMPI_SUCCESS;
}

static int mca_osc_hybrid_finalize(void)
{
    mca_osc_hybrid_component_t *c = &mca_osc_hybrid_component;

    if (c->progress_registered) {
        opal_progress_unregister(mca_osc_hybrid_progress);
        c->progress_registered = false;
    }
    free(c->modules);
    c->modules = NULL;
    OBJ_DESTRUCT(&c->lock);
    return OMPI_SUCCESS;
}

/* Whether every other rank of comm is reached by the BTL component name,
 * the first of its eager list (rdma false) or of its RDMA list (rdma
 * true). The answer is the same on every rank: a communicator that spans
 * two hosts gives every rank a peer that an on-host BTL cannot reach. */
static bool mca_osc_hybrid_btl_only(ompi_communicator_t *comm, const char *name, bool rdma)
{
    int n = ompi_comm_size(comm);

    if (n < 2) {
        return false;
    }
    for (int i = 0; i < n; ++i) {
        ompi_proc_t *proc = ompi_comm_peer_lookup(comm, i);
        mca_bml_base_endpoint_t *ep;
        mca_bml_base_btl_array_t *arr;
        mca_bml_base_btl_t *b;

        if (NULL == proc) {
            return false;
        }
        if (proc == ompi_proc_local()) {
            continue;
        }
        ep = mca_bml_base_get_endpoint(proc);
        if (NULL == ep) {
            return false;
        }
        arr = rdma ? &ep->btl_rdma : &ep->btl_eager;
        if (0 == mca_bml_base_btl_array_get_size(arr)) {
            return false;
        }
        b = mca_bml_base_btl_array_get_index(arr, 0);
        if (0 != strcmp(b->btl->btl_component->btl_version.mca_component_name, name)) {
            return false;
        }
    }
    return true;
}

/* osc/rdma's priority as configured (0 when it is not there). */
static int mca_osc_hybrid_rdma_priority(void)
{
    const int *value = NULL;
    int idx = mca_base_var_find("ompi", "osc", "rdma", "priority");

    if (idx < 0 || OPAL_SUCCESS != mca_base_var_get_value(idx, &value, NULL, NULL) ||
        NULL == value) {
        return 0;
    }
    return *value;
}

static int mca_osc_hybrid_query(ompi_win_t *win, void **base, size_t size, int disp_unit,
                                ompi_communicator_t *comm, opal_info_t *info, int flavor)
{
    (void) win;
    (void) base;
    (void) size;
    (void) disp_unit;
    (void) info;
    /* Shared-memory windows are osc/sm's business. */
    if (MPI_WIN_FLAVOR_SHARED == flavor) {
        return -1;
    }
    /* Above osc/rdma's 101 where osc/rdma would run over vader. */
    if (mca_osc_hybrid_component.over_vader && mca_osc_hybrid_btl_only(comm, "vader", false)) {
        return 102 > mca_osc_hybrid_component.priority ? 102 : mca_osc_hybrid_component.priority;
    }
    /* 4.1: likewise where osc/rdma would run over sci (4.1.4's osc/rdma
     * is wrong there too); 5.0: the rule below covers it */
    if (!TC_OMPI_OSC_RDMA_EMULATES && mca_osc_hybrid_component.above_rdma &&
        mca_osc_hybrid_btl_only(comm, "sci", true)) {
        return 102 > mca_osc_hybrid_component.priority ? 102 : mca_osc_hybrid_component.priority;
    }
    /* Open MPI 5.0's osc/rdma serves every window (emulating RDMA with
     * active messages over BTLs without it) and its accumulates are wrong
     * there, emulated and native alike: answer just above it. 4.1's
     * osc/rdma declines windows it cannot serve, and our low priority
     * suffices. */
    if (TC_OMPI_OSC_RDMA_EMULATES && mca_osc_hybrid_component.above_rdma) {
        int above = mca_osc_hybrid_rdma_priority() + 1;
        return above > mca_osc_hybrid_component.priority ? above
                                                         : mca_osc_hybrid_component.priority;
    }
    return mca_osc_hybrid_component.priority;
}

/* Polls every window's receives and internal requests; registered with
 * opal_progress while any window exists. */
int mca_osc_hybrid_progress(void)
{
    mca_osc_hybrid_component_t *c = &mca_osc_hybrid_component;
    int i;

    if (0 != OPAL_THREAD_TRYLOCK(&c->lock)) {
        return 0;
    }
    for (i = 0; i < c->nmodules; ++i) {
        mca_osc_hybrid_module_t *m = c->modules[i];
        if (0 != OPAL_THREAD_TRYLOCK(&m->lock)) {
            continue;
        }
        mca_osc_hybrid_progress_module(m);
        OPAL_THREAD_UNLOCK(&m->lock);
    }
    OPAL_THREAD_UNLOCK(&c->lock);
    return 0;
}

static int mca_osc_hybrid_post_slot(mca_osc_hybrid_module_t *m, int i)
{
    return MCA_PML_CALL(irecv(m->slot_buf[i], mca_osc_hybrid_component.slot_size, MPI_BYTE,
                              MPI_ANY_SOURCE, MCA_OSC_HYBRID_TAG_AM, m->comm, &m->slot_req[i]));
}

/* A notice that answers for everything its origin sent before it waits
 * while bulk put data is still coming in; other records need not (MPI
 * orders only accumulates, and those never travel as bulk data). */
static bool mca_osc_hybrid_must_wait(const mca_osc_hybrid_module_t *m, const char *rec, size_t left)
{
    uint8_t type;

    if (0 == m->tdata_pending || left < sizeof(mca_osc_hybrid_hdr_t)) {
        return false;
    }
    type = ((const mca_osc_hybrid_hdr_t *) rec)->type;
    return MCA_OSC_HYBRID_HDR_FLUSH == type || MCA_OSC_HYBRID_HDR_UNLOCK == type ||
        MCA_OSC_HYBRID_HDR_COMPLETE == type;
}

/* Called with m->lock held. Completes finished internal requests, then
 * applies arrived messages in the order their receives were posted. */
void mca_osc_hybrid_progress_module(mca_osc_hybrid_module_t *m)
{
    if (m->in_progress) {
        return;
    }
    m->in_progress = 1;
    mca_osc_hybrid_ft_sweep(m);
    mca_osc_hybrid_complete_finished(m, -1);
    if (NULL != m->held_head) {
        mca_osc_hybrid_release_held(m);
    }
    /* a message holds several records; head_off says how far the head
     * message is applied */
    while (NULL != m->slot_req && NULL != m->slot_req[m->head] &&
           REQUEST_COMPLETE(m->slot_req[m->head])) {
        int h = m->head;
        ompi_request_t *req = m->slot_req[h];
        int src = req->req_status.MPI_SOURCE;
        size_t len = req->req_status._ucount;
        int err = req->req_status.MPI_ERROR;

        if (OMPI_SUCCESS != err || len > (size_t) mca_osc_hybrid_component.slot_size) {
            /* MPI_ERR_TRUNCATE: more than a posted receive holds (window
             * creation checks that every process has the same slot size) */
            char why[96];
            snprintf(why, sizeof(why), "a message the receive could not take (error %d)", err);
            mca_osc_hybrid_wire_abort(m, src, why, 0, len);
            break; /* (the abort does not return) */
        }
        while (m->head_off < len &&
               !mca_osc_hybrid_must_wait(m, m->slot_buf[h] + m->head_off, len - m->head_off)) {
            size_t used =
                mca_osc_hybrid_handle_am(m, src, m->slot_buf[h] + m->head_off, len - m->head_off);
            if (0 == used) {
                mca_osc_hybrid_wire_abort(m, src, mca_osc_hybrid_wire_strerror(m->wire_fault),
                                          m->head_off, len);
                break; /* (the abort does not return) */
            }
            m->head_off += used;
        }
        if (m->head_off < len) {
            break; /* the rest once the bulk data is in */
        }
        m->head_off = 0;
        ompi_request_free(&m->slot_req[h]);
        m->slot_req[h] = NULL;
        m->head = (h + 1) % m->nslots;
        if (OMPI_SUCCESS != mca_osc_hybrid_post_slot(m, h)) {
            opal_output(0, "osc/hybrid: cannot repost a receive");
        }
    }
    /* what the origin side gathered leaves at the latest now */
    if (m->agg_ndirty > 0) {
        (void) mca_osc_hybrid_agg_send_all(m);
    }
    m->in_progress = 0;
}

static void mca_osc_hybrid_module_release(mca_osc_hybrid_module_t *m)
{
    int i;

    mca_osc_hybrid_rdma_release(m);
    mca_osc_hybrid_ft_release(m);
    if (NULL != m->slot_req) {
        for (i = 0; i < m->nslots; ++i) {
            if (NULL != m->slot_req[i]) {
                ompi_request_cancel(m->slot_req[i]);
                ompi_request_wait(&m->slot_req[i], MPI_STATUS_IGNORE);
            }
        }
    }
    if (NULL != m->slot_buf) {
        for (i = 0; i < m->nslots; ++i) {
            free(m->slot_buf[i]);
        }
    }
    free(m->slot_buf);
    free(m->slot_req);
    free(m->peer_size);
    free(m->peer_disp_unit);
    mca_osc_hybrid_peers_free(m);
    mca_osc_hybrid_free_held(m);
    free(m->regions);
    while (NULL != m->lkq_head) {
        mca_osc_hybrid_lockq_t *q = m->lkq_head;
        m->lkq_head = q->next;
        free(q);
    }
    if (m->free_base) {
        free(m->base);
    }
    if (NULL != m->comm) {
        ompi_comm_free(&m->comm);
    }
    OBJ_DESTRUCT(&m->lock);
    free(m);
}

static int mca_osc_hybrid_add_module(mca_osc_hybrid_module_t *m)
{
    mca_osc_hybrid_component_t *c = &mca_osc_hybrid_component;
    int rc = OMPI_SUCCESS;

    OPAL_THREAD_LOCK(&c->lock);
    if (c->nmodules == c->maxmodules) {
        int nmax = c->maxmodules ? 2 * c->maxmodules : 8;
        void *n = realloc(c->modules, nmax * sizeof(*c->modules));
        if (NULL == n) {
            rc = OMPI_ERR_OUT_OF_RESOURCE;
        } else {
            c->modules = n;
            c->maxmodules = nmax;
        }
    }
    if (OMPI_SUCCESS == rc) {
        c->modules[c->nmodules++] = m;
        if (!c->progress_registered) {
            opal_progress_register(mca_osc_hybrid_progress);
            c->progress_registered = true;
        }
    }
    OPAL_THREAD_UNLOCK(&c->lock);
    return rc;
}

static void mca_osc_hybrid_remove_module(mca_osc_hybrid_module_t *m)
{
    mca_osc_hybrid_component_t *c = &mca_osc_hybrid_component;
    int i;

    OPAL_THREAD_LOCK(&c->lock);
    for (i = 0; i < c->nmodules; ++i) {
        if (c->modules[i] == m) {
            c->modules[i] = c->modules[--c->nmodules];
            break;
        }
    }
    OPAL_THREAD_UNLOCK(&c->lock);
}

/* What every process of a window tells the others at its creation. */
enum {
    MCA_OSC_HYBRID_AGREE_SIZE,      /* window bytes */
    MCA_OSC_HYBRID_AGREE_DISP_UNIT, /* displacement unit */
    MCA_OSC_HYBRID_AGREE_VERSION,   /* MCA_OSC_HYBRID_WIRE_VERSION: must agree */
    MCA_OSC_HYBRID_AGREE_SLOT_SIZE, /* osc_hybrid_slot_size as used: must agree */
    MCA_OSC_HYBRID_AGREE_N
};

/* One allgather: the peers' sizes and displacement units (create and
 * allocate windows), and the check of what every process must share: the
 * slot size bounds what an origin sends in one message (a larger message
 * is truncated at the target and its records lost), and the record
 * format. The other parameters are the sender's own business: records are
 * split and gathered to fit the sender's slot size (aggregate_max and
 * inline_max are capped by it), the RDMA path is agreed on by
 * mca_osc_hybrid_rdma_setup, bounce slots are local. Every process sees
 * the same table, so all refuse the window together, with the same
 * message: OMPI_ERR_BAD_PARAM after a shown mismatch. */
static int mca_osc_hybrid_agree(mca_osc_hybrid_module_t *m, int flavor)
{
    static const struct {
        int field;
        const char *name;
    } must[] = {
        {MCA_OSC_HYBRID_AGREE_VERSION, "the osc/hybrid wire format version"},
        {MCA_OSC_HYBRID_AGREE_SLOT_SIZE, "osc_hybrid_slot_size"},
    };
    const int k = MCA_OSC_HYBRID_AGREE_N, n = m->size;
    uint64_t mine[MCA_OSC_HYBRID_AGREE_N];
    uint64_t *all = malloc((size_t) k * (size_t) n * sizeof(uint64_t));
    int rc, i;
    size_t j;

    if (NULL == all) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    mine[MCA_OSC_HYBRID_AGREE_SIZE] = (uint64_t) m->win_size;
    mine[MCA_OSC_HYBRID_AGREE_DISP_UNIT] = (uint64_t) m->disp_unit;
    mine[MCA_OSC_HYBRID_AGREE_VERSION] = MCA_OSC_HYBRID_WIRE_VERSION;
    mine[MCA_OSC_HYBRID_AGREE_SLOT_SIZE] = (uint64_t) mca_osc_hybrid_component.slot_size;
    rc = m->comm->c_coll->coll_allgather(mine, k, MPI_UINT64_T, all, k, MPI_UINT64_T, m->comm,
                                         m->comm->c_coll->coll_allgather_module);
    if (OMPI_SUCCESS != rc) {
        free(all);
        return rc;
    }
    for (j = 0; j < sizeof(must) / sizeof(must[0]); ++j) {
        for (i = 1; i < n; ++i) {
            uint64_t first = all[must[j].field], other = all[(size_t) i * k + must[j].field];
            if (first != other) {
                opal_show_help("help-mpi-osc-hybrid.txt", "parameter mismatch", true, must[j].name,
                               (unsigned long long) first, (unsigned long long) other, i);
                free(all);
                return OMPI_ERR_BAD_PARAM;
            }
        }
    }
    if (MPI_WIN_FLAVOR_DYNAMIC != flavor) {
        m->peer_size = calloc(n, sizeof(uint64_t));
        m->peer_disp_unit = calloc(n, sizeof(int));
        if (NULL == m->peer_size || NULL == m->peer_disp_unit) {
            free(all);
            return OMPI_ERR_OUT_OF_RESOURCE;
        }
        for (i = 0; i < n; ++i) {
            m->peer_size[i] = all[(size_t) i * k + MCA_OSC_HYBRID_AGREE_SIZE];
            m->peer_disp_unit[i] = (int) all[(size_t) i * k + MCA_OSC_HYBRID_AGREE_DISP_UNIT];
        }
    }
    free(all);
    return OMPI_SUCCESS;
}

static int mca_osc_hybrid_select(ompi_win_t *win, void **base, size_t size, int disp_unit,
                                 ompi_communicator_t *comm, opal_info_t *info, int flavor,
                                 int *model)
{
    mca_osc_hybrid_component_t *c = &mca_osc_hybrid_component;
    mca_osc_hybrid_module_t *m;
    int rc, i, n;
    bool quiet = false; /* the failure was shown already */

    (void) info;
    if (MPI_WIN_FLAVOR_SHARED == flavor) {
        return OMPI_ERR_NOT_SUPPORTED;
    }
    m = calloc(1, sizeof(*m));
    if (NULL == m) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    OBJ_CONSTRUCT(&m->lock, opal_mutex_t);
    m->super = mca_osc_hybrid_module_template;
    m->win = win;
    m->flavor = flavor;
    m->lk_excl = -1;
    m->disp_unit = disp_unit;
    m->win_size = size;

    rc = ompi_comm_dup(comm, &m->comm);
    if (OMPI_SUCCESS != rc) {
        m->comm = NULL;
        goto fail;
    }
    m->rank = ompi_comm_rank(m->comm);
    m->size = n = ompi_comm_size(m->comm);

    if (MPI_WIN_FLAVOR_ALLOCATE == flavor) {
        m->base = NULL;
        if (size > 0 && 0 != posix_memalign((void **) &m->base, 64, size)) {
            rc = OMPI_ERR_OUT_OF_RESOURCE;
            goto fail;
        }
        m->free_base = true;
        *base = m->base;
    } else if (MPI_WIN_FLAVOR_CREATE == flavor) {
        m->base = *base;
    } else {
        m->base = NULL;
        m->win_size = 0;
        m->disp_unit = 1;
    }

    rc = mca_osc_hybrid_peers_alloc(m, n);
    if (OMPI_SUCCESS != rc) {
        goto fail;
    }

    /* Every process learns every size and displacement unit (the origin
     * checks ranges itself, MPI_ERR_RMA_RANGE at the call, where it knows
     * them) and the parameters all must share. */
    rc = mca_osc_hybrid_agree(m, flavor);
    if (OMPI_SUCCESS != rc) {
        quiet = (OMPI_ERR_BAD_PARAM == rc);
        goto fail;
    }

    if (NULL != m->comm) {
        rc = mca_osc_hybrid_rdma_setup(m);
        if (OMPI_SUCCESS != rc) {
            goto fail;
        }
    }

    m->nslots = c->nslots;
    m->slot_buf = calloc(m->nslots, sizeof(char *));
    m->slot_req = calloc(m->nslots, sizeof(ompi_request_t *));
    if (NULL == m->slot_buf || NULL == m->slot_req) {
        rc = OMPI_ERR_OUT_OF_RESOURCE;
        goto fail;
    }
    for (i = 0; i < m->nslots; ++i) {
        if (0 != posix_memalign((void **) &m->slot_buf[i], 64, c->slot_size)) {
            m->slot_buf[i] = NULL;
            rc = OMPI_ERR_OUT_OF_RESOURCE;
            goto fail;
        }
    }
    for (i = 0; i < m->nslots; ++i) {
        rc = mca_osc_hybrid_post_slot(m, i);
        if (OMPI_SUCCESS != rc) {
            goto fail;
        }
    }

    opal_output_verbose(10, ompi_osc_base_framework.framework_output,
                        "osc/hybrid: serving a window of flavor %d, %zu bytes, %d ranks, "
                        "get by %s, put by %s",
                        flavor, m->win_size, n,
                        NULL != m->rbtl ? m->rbtl->btl_component->btl_version.mca_component_name
                                        : "active messages",
                        NULL == m->rbtl ? "active messages"
                            : MCA_OSC_HYBRID_RPUT_NONE == m->rput
                            ? "active messages (no remote completion)"
                            : MCA_OSC_HYBRID_RPUT_FLUSH == m->rput ? "RDMA and btl_flush"
                                                                   : "RDMA");
    win->w_osc_module = &m->super;
    *model = MPI_WIN_UNIFIED;
    rc = mca_osc_hybrid_add_module(m);
    if (OMPI_SUCCESS != rc) {
        win->w_osc_module = NULL;
        goto fail;
    }
    /* Nobody may send to this window before every rank has posted. */
    rc = m->comm->c_coll->coll_barrier(m->comm, m->comm->c_coll->coll_barrier_module);
    if (OMPI_SUCCESS != rc) {
        mca_osc_hybrid_remove_module(m);
        win->w_osc_module = NULL;
        goto fail;
    }
    return OMPI_SUCCESS;

fail:
    if (!quiet) {
        opal_show_help("help-mpi-osc-hybrid.txt", "window create failed", true, opal_strerror(rc),
                       rc);
    }
    mca_osc_hybrid_module_release(m);
    return rc;
}

static int mca_osc_hybrid_free(ompi_win_t *win)
{
    mca_osc_hybrid_module_t *m = MCA_OSC_HYBRID_MOD(win);
    int rc;

    /* Finish what this process started, then wait until every process has
     * (its last synchronisation completed everything aimed at us). */
    mca_osc_hybrid_drain_origin(m);
    rc = m->comm->c_coll->coll_barrier(m->comm, m->comm->c_coll->coll_barrier_module);
    /* replies we still send as a target */
    for (;;) {
        bool idle;
        OPAL_THREAD_LOCK(&m->lock);
        mca_osc_hybrid_progress_module(m);
        idle = (NULL == m->pend);
        OPAL_THREAD_UNLOCK(&m->lock);
        if (idle) {
            break;
        }
        opal_progress();
    }
    mca_osc_hybrid_remove_module(m);
    win->w_osc_module = NULL;
    mca_osc_hybrid_module_release(m);
    return rc;
}

static int mca_osc_hybrid_attach(ompi_win_t *win, void *base, size_t len)
{
    mca_osc_hybrid_module_t *m = MCA_OSC_HYBRID_MOD(win);
    int rc = OMPI_SUCCESS;

    if (MPI_WIN_FLAVOR_DYNAMIC != m->flavor) {
        return OMPI_ERR_RMA_FLAVOR;
    }
    OPAL_THREAD_LOCK(&m->lock);
    if (m->nregions == m->maxregions) {
        int nmax = m->maxregions ? 2 * m->maxregions : 8;
        void *n = realloc(m->regions, nmax * sizeof(*m->regions));
        if (NULL == n) {
            rc = OMPI_ERR_OUT_OF_RESOURCE;
        } else {
            m->regions = n;
            m->maxregions = nmax;
        }
    }
    if (OMPI_SUCCESS == rc) {
        m->regions[m->nregions].base = base;
        m->regions[m->nregions].len = len;
        m->nregions++;
    }
    OPAL_THREAD_UNLOCK(&m->lock);
    return rc;
}

static int mca_osc_hybrid_detach(ompi_win_t *win, const void *base)
{
    mca_osc_hybrid_module_t *m = MCA_OSC_HYBRID_MOD(win);
    int i, rc = OMPI_ERR_RMA_ATTACH;

    if (MPI_WIN_FLAVOR_DYNAMIC != m->flavor) {
        return OMPI_ERR_RMA_FLAVOR;
    }
    OPAL_THREAD_LOCK(&m->lock);
    for (i = 0; i < m->nregions; ++i) {
        if (m->regions[i].base == base) {
            m->regions[i] = m->regions[--m->nregions];
            rc = OMPI_SUCCESS;
            break;
        }
    }
    OPAL_THREAD_UNLOCK(&m->lock);
    return rc;
}
