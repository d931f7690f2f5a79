/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * tc_ompi.h: the Open MPI-side glue every BTL of this project needs, in
 * one place (libtc_ompi): whether the user named a BTL in --mca btl, MCA
 * parameter registration with one policy, the prepare_src pack and the
 * eager/max free-list choice, errno -> OPAL_ERR_* mapping, the component's
 * diagnostic stream, and Open MPI's memory release hooks for a tc_rcache.
 *
 * The core library (common/, libtransports_common) stays free of Open MPI;
 * everything that includes an Open MPI header lives here.
 */
#ifndef TC_OMPI_H
#define TC_OMPI_H

#include "opal_config.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "opal/class/opal_free_list.h"
#include "opal/class/opal_list.h"
#include "opal/datatype/opal_convertor.h"
#include "opal/mca/base/mca_base_var.h"
#include "opal/mca/btl/btl.h"

#include "tc_common.h"
#include "tc_ompi_compat.h"
#include TC_OMPI_MUTEX_H

#include "tc_rcache.h"

BEGIN_C_DECLS

/* ---- the btl selection ------------------------------------------------ */

/* How a BTL list (the value of --mca btl) names one component. */
typedef struct tc_ompi_btl_selection_t {
    bool named; /* the list includes it (an exclusion list "^..." never does) */
    bool only;  /* named, and nothing else but "self" */
} tc_ompi_btl_selection_t;

/* Parse a comma-separated BTL list for name (exact, case-sensitive tokens;
 * empty tokens are ignored). list may be NULL (no selection: nothing named). */
tc_ompi_btl_selection_t tc_ompi_btl_list_parse(const char *list, const char *name);

/* The same for the current value of the "btl" MCA variable. */
tc_ompi_btl_selection_t tc_ompi_btl_selection(const char *name);

/* ---- MCA parameters --------------------------------------------------- */

/* One policy for every parameter of the project's components: each value
 * is read once, when the component initialises, so every parameter is
 * registered with scope READONLY and no flag (not settable through MPI_T
 * after init). Each helper stores the default into *storage, registers the
 * variable with the component and returns the variable's index (or a
 * negative OPAL error). desc must be a full sentence; level is an
 * OPAL_INFO_LVL_*. */
int tc_ompi_param_int(const mca_base_component_t *comp, const char *name, const char *desc,
                      int level, int *storage, int def);
int tc_ompi_param_uint(const mca_base_component_t *comp, const char *name, const char *desc,
                       int level, unsigned int *storage, unsigned int def);
int tc_ompi_param_bool(const mca_base_component_t *comp, const char *name, const char *desc,
                       int level, bool *storage, bool def);
int tc_ompi_param_double(const mca_base_component_t *comp, const char *name, const char *desc,
                         int level, double *storage, double def);
/* <name>_ofi_prefault, the one text of every component's budget of
 * buffers towards other hosts written in ahead (tc_mem_prefault,
 * docs/common.md "mem"): what names the buffers ("the rings of ..."); the
 * value is in MiB, default 64, level 5. */
int tc_ompi_param_prefault(const mca_base_component_t *comp, const char *what,
                           unsigned int *mib);
/* def is not copied: a string literal or NULL (Open MPI owns the value). */
int tc_ompi_param_string(const mca_base_component_t *comp, const char *name, const char *desc,
                         int level, char **storage, const char *def);
/* An enumeration: values ends with {0, NULL}; enum_name names the enum
 * object (e.g. "btl_sctp_stack"). The value is stored as an int. */
int tc_ompi_param_enum(const mca_base_component_t *comp, const char *name, const char *desc,
                       int level, const char *enum_name, const mca_base_var_enum_value_t *values,
                       int *storage, int def);

/* ---- fragments --------------------------------------------------------- */

/* The free list for a fragment of bytes bytes: eager up to the module's
 * eager limit, max up to its max send size; NULL when it is larger. */
static inline opal_free_list_t *tc_ompi_frag_list(const mca_btl_base_module_t *btl, size_t bytes,
                                                  opal_free_list_t *eager, opal_free_list_t *max)
{
    if (bytes <= btl->btl_eager_limit) {
        return eager;
    }
    if (bytes <= btl->btl_max_send_size) {
        return max;
    }
    return NULL;
}

/* The payload a prepare_src can carry: *size clamped so that reserve +
 * payload fits in limit bytes (limit >= reserve). */
static inline size_t tc_ompi_payload(size_t reserve, size_t size, size_t limit)
{
    return reserve + size > limit ? limit - reserve : size;
}

/* Pack up to *size bytes from convertor into dst, the common step of
 * prepare_src. dst NULL packs in place: the convertor hands out a pointer
 * to the user's contiguous data in *inplace. On return *size is the
 * number of bytes packed. Returns OPAL_SUCCESS or OPAL_ERROR. */
int tc_ompi_pack(struct opal_convertor_t *convertor, void *dst, size_t *size, void **inplace);

/* A transport whose fragments carry their payload in one buffer of fixed
 * capacity (btl_sci's ring-slot copies, btl_via's registered send
 * buffers) gives the helpers below its fragment pool as two functions:
 * get a fresh fragment for ep (one segment pointing at its buffer) or
 * NULL, and put it back. The helpers are inline so that a component's
 * constant ops table costs no indirect call. */
typedef struct tc_ompi_frag_ops {
    mca_btl_base_descriptor_t *(*get)(struct mca_btl_base_endpoint_t *ep);
    void (*put)(mca_btl_base_descriptor_t *des);
} tc_ompi_frag_ops_t;

/* btl_alloc: a fragment with room for size bytes, or NULL when size
 * exceeds the capacity or the pool is empty. */
static inline mca_btl_base_descriptor_t *
tc_ompi_frag_alloc(const tc_ompi_frag_ops_t *ops, size_t capacity,
                   struct mca_btl_base_endpoint_t *ep, uint8_t order, size_t size, uint32_t flags)
{
    mca_btl_base_descriptor_t *des;

    if (OPAL_UNLIKELY(size > capacity)) {
        return NULL;
    }
    des = ops->get(ep);
    if (OPAL_UNLIKELY(NULL == des)) {
        return NULL;
    }
    des->des_segments[0].seg_len = size;
    des->des_flags = flags;
    des->order = order;
    return des;
}

/* btl_prepare_src: reserve bytes for the upper layer's header, then as
 * much of the convertor's data as fits, packed into the fragment's
 * buffer (one copy here, the transport's own at send time). */
static inline mca_btl_base_descriptor_t *
tc_ompi_frag_prepare_src(const tc_ompi_frag_ops_t *ops, size_t capacity,
                         struct mca_btl_base_endpoint_t *ep, struct opal_convertor_t *convertor,
                         uint8_t order, size_t reserve, size_t *size, uint32_t flags)
{
    mca_btl_base_descriptor_t *des;
    mca_btl_base_segment_t *seg;
    size_t max_data;

    if (OPAL_UNLIKELY(reserve > capacity)) {
        return NULL;
    }
    des = ops->get(ep);
    if (OPAL_UNLIKELY(NULL == des)) {
        return NULL;
    }
    seg = &des->des_segments[0];
    max_data = tc_ompi_payload(reserve, *size, capacity);
    if (OPAL_UNLIKELY(OPAL_SUCCESS !=
                      tc_ompi_pack(convertor, (unsigned char *) seg->seg_addr.pval + reserve,
                                   &max_data, NULL))) {
        ops->put(des);
        return NULL;
    }
    *size = max_data;
    seg->seg_len = reserve + max_data;
    des->des_flags = flags;
    des->order = order;
    return des;
}

/* btl_prepare_src of a payload left in the caller's contiguous memory
 * (the convertor needs no buffers): the fragment's buffer holds the upper
 * layer's header (reserve bytes), a second segment points at up to
 * capacity - reserve bytes of the caller's data, which stays put until
 * the send completes (ob1 waits for the callback). The fragment's
 * des_segments must have room for two. NULL when the pool is empty or the
 * convertor cannot hand the data out. Saves the copy of eager sends large
 * enough that the copy costs more than a second segment. */
static inline mca_btl_base_descriptor_t *
tc_ompi_frag_prepare_inplace(const tc_ompi_frag_ops_t *ops, size_t capacity,
                             struct mca_btl_base_endpoint_t *ep, struct opal_convertor_t *convertor,
                             uint8_t order, size_t reserve, size_t *size, uint32_t flags)
{
    mca_btl_base_descriptor_t *des = ops->get(ep);
    size_t max_data = tc_ompi_payload(reserve, *size, capacity);
    void *data = NULL;

    if (OPAL_UNLIKELY(NULL == des)) {
        return NULL;
    }
    if (OPAL_UNLIKELY(OPAL_SUCCESS != tc_ompi_pack(convertor, NULL, &max_data, &data) ||
                      NULL == data)) {
        ops->put(des);
        return NULL;
    }
    des->des_segments[0].seg_len = reserve;
    des->des_segments[1].seg_addr.pval = data;
    des->des_segments[1].seg_len = max_data;
    des->des_segment_count = 2;
    des->des_flags = flags;
    des->order = order;
    *size = max_data;
    return des;
}

/* ---- completed fragments (tc_ompi_done.c) ------------------------------ */

/* Fragments (or RDMA operations) that completed in a context where their
 * callback may not run (inside btl_send, under an endpoint lock), kept
 * until the next progress call delivers them. Any thread pushes; pops
 * come from progress. The lock is taken only when Open MPI runs with
 * threads (OPAL_THREAD_LOCK). */
/* What a put, get or atomic keeps until it completes: the arguments of
 * its completion callback (btl_put/btl_get/btl_atomic_*), set at once from
 * the call and handed back in one call. */
typedef struct tc_ompi_rdma_cb_t {
    struct mca_btl_base_endpoint_t *endpoint;
    void *local_address;
    struct mca_btl_base_registration_handle_t *local_handle;
    mca_btl_base_rdma_completion_fn_t cbfunc;
    void *cbcontext;
    void *cbdata;
} tc_ompi_rdma_cb_t;

static inline tc_ompi_rdma_cb_t
tc_ompi_rdma_cb(struct mca_btl_base_endpoint_t *endpoint, void *local_address,
                struct mca_btl_base_registration_handle_t *local_handle,
                mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext, void *cbdata)
{
    return (tc_ompi_rdma_cb_t){endpoint, local_address, local_handle, cbfunc, cbcontext, cbdata};
}

static inline void tc_ompi_rdma_cb_call(const tc_ompi_rdma_cb_t *cb,
                                        struct mca_btl_base_module_t *btl, int status)
{
    cb->cbfunc(btl, cb->endpoint, cb->local_address, cb->local_handle, cb->cbcontext, cb->cbdata,
               status);
}

typedef struct tc_ompi_done_list_t {
    opal_list_t list;
    opal_mutex_t lock;
} tc_ompi_done_list_t;

void tc_ompi_done_list_construct(tc_ompi_done_list_t *d);
/* the list must be empty (drain it with tc_ompi_done_list_pop) */
void tc_ompi_done_list_destruct(tc_ompi_done_list_t *d);
void tc_ompi_done_list_push(tc_ompi_done_list_t *d, opal_list_item_t *item);
/* the oldest item, or NULL */
opal_list_item_t *tc_ompi_done_list_pop(tc_ompi_done_list_t *d);
/* Progress: pop every item and hand it to complete, oldest first (the lock
 * is not held during the call: complete may push again); the number of
 * items handed. */
int tc_ompi_done_list_drain(tc_ompi_done_list_t *d, void (*complete)(opal_list_item_t *item));

/* A hint without the lock, for progress's fast path: a push that races
 * with it is seen by the next call. */
static inline bool tc_ompi_done_list_empty(tc_ompi_done_list_t *d)
{
    return opal_list_is_empty(&d->list);
}

/* ---- add_procs (tc_ompi_procs.c) --------------------------------------- */

/* Called for each peer of this job on this host: the endpoint that reaches
 * it (found, and connected if it was unused), or NULL when it cannot. */
typedef struct mca_btl_base_endpoint_t *(*tc_ompi_attach_fn_t)(struct opal_proc_t *proc, void *ctx);

/* The add_procs loop of a host-local BTL: peers[i] is NULL for ourselves,
 * for processes of another job or another host, and where attach returns
 * NULL; else the endpoint attach returned, and bit i is set in reachable
 * (if not NULL). Returns how many peers other than ourselves were not
 * reached. */
int tc_ompi_add_local_procs(size_t nprocs, struct opal_proc_t **procs,
                            struct mca_btl_base_endpoint_t **peers, struct opal_bitmap_t *reachable,
                            tc_ompi_attach_fn_t attach, void *ctx);

/* For the message of a host-local BTL about peers it cannot reach: who
 * (up to wholen bytes): the peers whose peers[i] is NULL, other than
 * ourselves, as "rank R on HOST" (the first few, then how many more);
 * btls (up to btlslen bytes): the BTL components installed that are not
 * confined to one host (all but self, vader, sm, smcuda, sci, bip, via),
 * comma-separated, or "none found". Both are always terminated. */
void tc_ompi_unreachable_text(size_t nprocs, struct opal_proc_t **procs,
                              struct mca_btl_base_endpoint_t **peers, char *who, size_t wholen,
                              char *btls, size_t btlslen);

/* The btls part of tc_ompi_unreachable_text alone (for a component that
 * declines at init because no other process of the job is on its host). */
void tc_ompi_remote_btls(char *btls, size_t btlslen);

/* A host-local BTL that declines at init because no other process of the
 * job is on its host: when the job has other processes and only this BTL
 * was asked for (only_requested), one message from help_file's topic
 * "alone on host" (arguments: btl, rank, host, provider, other processes,
 * the BTLs that reach other hosts) says why they are unreachable. */
void tc_ompi_alone_on_host(const char *help_file, const char *btl, const char *provider,
                           bool only_requested);

/* ---- one BTL module per reach (tc_ompi_reach.c) ------------------------- */

/* A component whose peers are of two kinds (this host through a
 * shared-memory provider, other hosts through a network provider) hands
 * ob1 one module per kind ("reach"), each with its own figures; ob1 picks
 * the module per peer and schedules by that module's figures. The
 * standard parameters btl_<component>_<figure> (mca_btl_base_param_register
 * on the template module) stay those of the same-host reach; another
 * reach has btl_<component>_<reach>_<figure>. docs/common_ompi.md, "One BTL
 * module per reach", has the whole contract. */

/* The figures ob1 and the bml read per module. */
typedef struct tc_ompi_reach_figures_t {
    size_t eager_limit;
    size_t rndv_eager_limit;
    size_t max_send_size;
    size_t rdma_pipeline_send_length;
    size_t rdma_pipeline_frag_size;
    size_t min_rdma_pipeline_size;
    unsigned int latency;   /* microseconds */
    unsigned int bandwidth; /* Mbps */
} tc_ompi_reach_figures_t;

/* A module's figures (e.g. the template's, as a start for a reach's
 * defaults). */
tc_ompi_reach_figures_t tc_ompi_reach_figures(const mca_btl_base_module_t *module);

/* From the component's register function: btl_<comp>_<reach>_<figure>
 * for every figure, the default being the value in *figures (stored
 * there by the parameter system, read at init), with the project's
 * policy (READONLY, no flag) and Open MPI's levels (4 for the sizes, 5
 * for latency and bandwidth). peers completes each description ("peers
 * on other hosts (libfabric)"). OPAL_SUCCESS or the first error. */
int tc_ompi_reach_register(const mca_base_component_t *comp, const char *reach, const char *peers,
                           tc_ompi_reach_figures_t *figures);

/* From init, after the template's own checks: module becomes a copy of
 * template (functions, flags, exclusivity, handle size: everything) with
 * *figures in place of its figures, rndv_eager_limit at most
 * eager_limit, and Open MPI's own adjustments (mca_btl_base_param_verify).
 * Component-specific limits (a slot size, a device maximum) are the
 * component's to apply afterwards. */
void tc_ompi_reach_module_init(mca_btl_base_module_t *module,
                               const mca_btl_base_module_t *template,
                               const tc_ompi_reach_figures_t *figures);

/* The component's choice for one peer of its job: the endpoint that
 * reaches it (found, and connected if it was unused) with, in *module,
 * the module of that endpoint's reach; NULL when no module of the
 * component reaches it. Called once per module per add_procs: it must
 * give the same answer each time. */
typedef struct mca_btl_base_endpoint_t *(*tc_ompi_reach_fn_t)(struct opal_proc_t *proc, void *ctx,
                                                              mca_btl_base_module_t **module);

/* How a component's modules claim peers in add_procs, and what it says
 * about peers none of them reaches. */
typedef struct tc_ompi_reach_claim_t {
    tc_ompi_reach_fn_t reach;
    void *ctx;
    /* NULL: no message. Else, when only_requested and not *warned, the
     * topic "peer unreachable" of help_file (arguments: host, count,
     * providers, the peers, the BTLs that could reach them), once:
     * *warned is set */
    const char *help_file;
    const char *providers; /* as the message names them ("shm, ofi") */
    bool only_requested;   /* the btl list names this component and self only */
    bool *warned;
    /* reach is asked about processes of other jobs too (a NULL answer
     * is then reported as "other job"); false: they are refused unasked */
    bool other_jobs;
} tc_ompi_reach_claim_t;

/* The add_procs of one module: peers[i] is the endpoint of procs[i] when
 * claim->reach says module reaches it (bit i set in reachable, if not
 * NULL), else NULL: ourselves, other jobs, peers of another module,
 * peers no module reaches. Returns how many peers other than ourselves
 * none of the component's modules reaches (other jobs' included), the
 * same count from every module. */
int tc_ompi_reach_add_procs(mca_btl_base_module_t *module, const tc_ompi_reach_claim_t *claim,
                            size_t nprocs, struct opal_proc_t **procs,
                            struct mca_btl_base_endpoint_t **peers,
                            struct opal_bitmap_t *reachable);

/* ---- the fatal-peer path (tc_ompi_fatal.c) ------------------------------ */

/* Who reports: the component's name, help file (with a topic "peer lost":
 * arguments btl, rank, host, peer kind, peer id, why) and stream. */
typedef struct tc_ompi_fatal_info_t {
    const char *btl;
    const char *help_file;
    int output;
} tc_ompi_fatal_info_t;

/* The report of a peer that is lost for good. The caller marks its
 * endpoint failed first (so that it reports once per peer) and fails
 * or keeps the peer's pending fragments as its protocol says; then this:
 * a line on the component's stream, the help message once per process
 * (the first lost peer is the news), and the PML's error callback with
 * MCA_BTL_ERROR_FLAGS_FATAL (ob1 ends the job: it never hangs on a dead
 * peer). peer_kind names peer_id ("local rank", "vpid"). */
void tc_ompi_fatal_peer(const tc_ompi_fatal_info_t *info, mca_btl_base_module_t *btl,
                        mca_btl_base_module_error_cb_fn_t error_cb, opal_proc_t *proc,
                        const char *peer_kind, int peer_id, const char *why);

/* ---- a lost peer under fault tolerance or not (tc_ompi_lost.c) ---------- */

#include "tc_ompi_lost.h"

/* ---- sendi (tc_ompi_sendi.c) ------------------------------------------- */

/* the payload of a sendi packed by the convertor (non-contiguous data) */
void tc_ompi_sendi_pack(unsigned char *dst, struct opal_convertor_t *convertor,
                        size_t payload_size);

/* Copy header (header_size bytes) to dst, then payload_size bytes from
 * convertor right after it (read in place when the data is contiguous,
 * packed otherwise). dst has room for both. Inline: it is on every small
 * message's path (the copies stay the C library's memcpy: open-coded
 * overlapping word moves measured slower into a peer's slot). */
static inline void tc_ompi_sendi_copy(unsigned char *dst, const void *header, size_t header_size,
                                      struct opal_convertor_t *convertor, size_t payload_size)
{
    memcpy(dst, header, header_size);
    if (0 != payload_size) {
        if (OPAL_LIKELY(!opal_convertor_need_buffers(convertor))) {
            void *src;

            opal_convertor_get_current_pointer(convertor, &src);
            memcpy(dst + header_size, src, payload_size);
        } else {
            tc_ompi_sendi_pack(dst + header_size, convertor, payload_size);
        }
    }
}

/* ---- errors ------------------------------------------------------------ */

/* An errno value (positive, or negative as libtransports_common returns
 * them) as the OPAL_ERR_* code that says the same; 0 is OPAL_SUCCESS. */
int tc_ompi_errno_to_opal(int err);

/* ---- diagnostics ------------------------------------------------------- */

/* The stream a component writes its diagnostics to (opal_output_verbose):
 * with its own verbose parameter above 0, a stream of that verbosity; else
 * the BTL framework's stream, so that btl_base_verbose shows the
 * component's messages as it does Open MPI's own BTLs'. Call once, from
 * the component's open (parameters are registered by then). */
int tc_ompi_output_open(int verbose);
/* Close what tc_ompi_output_open opened (never the framework's stream);
 * sets *output to -1. */
void tc_ompi_output_close(int *output);

/* ---- memory release hooks (tc_ompi_rcache_hook.c) ---------------------- */

/* After register, every release of memory reported by OPAL (free/munmap
 * intercepted by the memory patcher; needs an initialised OPAL)
 * invalidates the range in this cache. Several caches may be registered.
 * Returns 0, or -ENOTSUP if OPAL cannot report releases in this process
 * (then use large registrations carefully or call tc_rcache_invalidate
 * yourself), -ENOSPC when too many caches are registered. */
int tc_ompi_rcache_hook_register(tc_rcache_t *cache);
void tc_ompi_rcache_hook_unregister(tc_rcache_t *cache);

END_C_DECLS

#endif /* TC_OMPI_H */
