/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/*
 * btl_via.h: component and module structures of btl_via, the BTL over
 * VIA descriptors and RDMA write (CHEMPI's VIA device), and the
 * functions the component's files share.
 */

#ifndef MCA_BTL_VIA_H
#define MCA_BTL_VIA_H

#include "opal_config.h"

#include <stdbool.h>
#include <stdint.h>

#include "opal/class/opal_free_list.h"
#include "opal/class/opal_list.h"
#include "opal/mca/btl/btl.h"
#include "opal/mca/btl/base/base.h"
#include "opal/mca/btl/base/btl_base_error.h"
#include "opal/util/output.h"

#include "tc_atomic.h"
#include "tc_peers.h"
#include "tc_ompi.h"
#include "tc_ompi_compat.h"
#include "tc_rcache.h"
#include "vipl.h"
#include "btl_via_hdr.h"

BEGIN_C_DECLS

/* progress calls between two looks for connection requests on a network
 * NIC that only other jobs could use (a power of two, a multiple of 16) */
#define MCA_BTL_VIA_NET_IDLE_TICKS 1024u

/* the devices of one process: slot 0 reaches this host's processes (emu),
 * slot 1 other hosts (ofi or verbs); a forced provider takes its slot
 * alone (docs/btl_via.md) */
enum { MCA_BTL_VIA_DEV_LOCAL = 0, MCA_BTL_VIA_DEV_NET = 1, MCA_BTL_VIA_NUM_DEVS = 2 };

/* what travels in ob1's headers for a registration: the VIA handle of
 * the memory on each device (0: not registered there) */
struct mca_btl_base_registration_handle_t {
    vipl_mem_handle_t h[MCA_BTL_VIA_NUM_DEVS];
};

struct mca_btl_via_module;

/* a piece of a device's send pool: buffers registered once, on that
 * device only (VIA needs the source of a send registered; CHEMPI: never
 * register per message) */
typedef struct mca_btl_via_chunk {
    char *base;
    vipl_mem_handle_t handle;
} mca_btl_via_chunk_t;

/* one open VI provider (VIPL NIC), what the component made on it, and
 * the BTL module of its reach (docs/common.md, "One BTL module per
 * reach"): its receive buffers and send buffers are that module's
 * max_send_size */
typedef struct mca_btl_via_dev {
    const vipl_ops_t *ops;
    vipl_nic_t *nic; /* NULL: slot not in use */
    vipl_ptag_t *ptag;
    vipl_cq_t *recv_cq;
    vipl_vi_t **vis; /* by peer index (NULL: none) */
    struct mca_btl_via_module *module;
    uint32_t recv_size;        /* bytes per receive and send buffer */
    uint32_t rx_skew;          /* receive buffers' spacing beyond recv_size */
    uint32_t recv_descriptors; /* receive descriptors per VI: the credits */
    /* send buffers: the free list grows by chunks of the pool */
    opal_free_list_t frags;
    bool frags_made;
    mca_btl_via_chunk_t *chunks;
    uint32_t num_chunks, max_chunks;
    uint32_t chunk_used; /* buffers handed out of the last chunk */
    opal_mutex_t pool_lock;
    uint32_t provider_id; /* 1 emu, 2 verbs, 3 ofi (modex) */
    bool poll_sends;      /* sends complete later: progress reaps them */
    /* VIs made on first use, peers' requests taken by vipl_connect_wait
     * (a provider with connect_wait); else every VI at init */
    bool lazy;
    vipl_vi_attrs_t vi_attrs; /* what every VI is made with */
} mca_btl_via_dev_t;

/* a registration as the module keeps it: the wire part first */
typedef struct mca_btl_via_reg {
    mca_btl_base_registration_handle_t handle;
    void *base;
    tc_rcache_reg_t *reg;
} mca_btl_via_reg_t;

/* a receive completion taken off the CQ ahead of progress */
typedef struct mca_btl_via_held {
    vipl_vi_t *vi;
    vipl_desc_t *d;
} mca_btl_via_held_t;

/* a delivered message's receive descriptor, posted again later */
struct mca_btl_base_endpoint_t;
typedef struct mca_btl_via_repost {
    struct mca_btl_base_endpoint_t *ep;
    vipl_desc_t *d;
} mca_btl_via_repost_t;

typedef struct mca_btl_via_component {
    mca_btl_base_component_3_0_0_t super;

    /* MCA parameters */
    char *provider;                /* auto | emu | verbs | ofi */
    char *ofi_provider;            /* libfabric provider of "ofi" */
    char *ofi_domain;              /* libfabric domain (tcp: interface) */
    unsigned int recv_descriptors; /* receive descriptors per VI: the credits */
    unsigned int ofi_recv_descriptors; /* the same for VIs to other hosts */
    unsigned int ofi_prefault;     /* MiB of other hosts' receive buffers written in when made */
    size_t ofi_prefault_left;      /* what is left of it (tc_mem_prefault's budget) */
    unsigned int send_descriptors; /* send work queue depth per VI */
    unsigned int max_transfer;     /* bytes per RDMA descriptor */
    unsigned int ofi_max_transfer; /* the same towards other hosts */
    unsigned int poll_batch;       /* completions taken per progress call */
    unsigned int free_list_max;    /* send buffers */
    unsigned int rcache_max_unused;
    unsigned int rdma_threshold; /* smaller put/get are refused (ob1 copies) */
    bool put_notify;             /* immediate data at the end of a put */
    bool emu_strict;             /* emu as strict as verbs (a test mode) */
    int verbose;
    int output;

    /* devices: slot 0 this host, slot 1 other hosts */
    mca_btl_via_dev_t devs[MCA_BTL_VIA_NUM_DEVS];
    bool poll_sends; /* some device completes sends later */
    uint32_t my_vpid;
    uint32_t nprocs;
    /* processes of other jobs: btl_via_other_jobs, and whether the
     * network device takes them (an ofi NIC with a resolver); the peer
     * table gives each process its index (own job: the vpid) */
    unsigned int other_jobs;
    bool other_jobs_on;
    tc_peers_t peers;
    uint32_t max_eps; /* endpoints' and VIs' table size: nprocs (+ other_jobs) */

    struct mca_btl_base_endpoint_t **endpoints; /* by peer index (tc_peers) */
    struct mca_btl_base_endpoint_t **active;    /* connected, polled for sends */
    int num_active;
    int32_t num_connecting; /* atomic: endpoints not matched yet */

    tc_ompi_done_list_t completed_frags; /* sends done, callback owed */
    tc_ompi_done_list_t completed_rdma;  /* put/get done, callback owed */
    opal_mutex_t lock;                   /* endpoint table, active list */

    /* one consumer of the receive CQ at a time (under threads) */
    tc_guard_t progress_guard;
    /* receive completions a send took off the CQ for the credits they
     * carry (mca_btl_via_harvest_credits), delivered by progress first, in
     * CQ order; a held descriptor is not re-posted, so nprocs *
     * recv_descriptors entries always suffice */
    mca_btl_via_held_t *held;
    uint32_t held_cap, held_head, held_count;
    /* descriptors of delivered messages, posted again at the next
     * progress call (held_cap entries suffice as well) */
    mca_btl_via_repost_t *repost;
    uint32_t repost_count;
    /* the open devices' receive CQs, read in turn by progress */
    vipl_cq_t *cqs[MCA_BTL_VIA_NUM_DEVS];
    vipl_cq_recv_fn_t cq_recv[MCA_BTL_VIA_NUM_DEVS]; /* vipl_cq_recv_fn of each */
    int cq_dev[MCA_BTL_VIA_NUM_DEVS];                /* the device slot of each */
    int num_cqs;
    int next_cq; /* the CQ read first next time */

    tc_rcache_t *rcache;
    /* statistics: updated with mca_btl_via_count (atomic under threads) */
    uint64_t put_notices; /* PUT_DONE immediates received */
    uint64_t puts, gets;  /* RDMA operations started */
    uint64_t rdma_bytes;
    uint64_t vis_created[MCA_BTL_VIA_NUM_DEVS]; /* pvar btl_via_vis_created */
    int32_t rdma_inflight;                      /* atomic: put/get not completed */
    uint32_t wait_tick;                         /* progress calls (connect_wait) */
    bool any_lazy;
    /* look for connection requests on the network NIC at every 16th call:
     * the own job spans hosts, or a peer is reached there (atomic); else
     * every MCA_BTL_VIA_NET_IDLE_TICKS-th (only another job could ask:
     * each look is a system call of the provider's) */
    int32_t net_wait_always;

    bool warned_unreachable;
    bool all_peers_added; /* the first add_procs brought up every VI */
    /* the other-host reach's figures (btl_via_ofi_*) */
    tc_ompi_reach_figures_t ofi_figures;
    unsigned int ofi_inplace_min; /* btl_via_ofi_send_inplace */
    int live_modules;             /* initialized modules: the last finalize tears down */
    bool live;                    /* devices and endpoints exist: progress runs */
} mca_btl_via_component_t;

TC_OMPI_MODULE_DECLSPEC extern mca_btl_via_component_t mca_btl_via_component;

/* a module serves the peers of one device slot: mca_btl_via_module
 * (the template, with the standard parameters) this host's, and
 * mca_btl_via_ofi_module (btl_via_ofi_*) other hosts' */
typedef struct mca_btl_via_module {
    mca_btl_base_module_t super;
    bool initialized;
    int slot; /* MCA_BTL_VIA_DEV_* */
    /* prepare_src leaves a contiguous payload of at least this many
     * bytes in the user's buffer (0: always copied) */
    size_t inplace_min;
    mca_btl_base_module_error_cb_fn_t error_cb;
} mca_btl_via_module_t;

extern mca_btl_via_module_t mca_btl_via_module;
extern mca_btl_via_module_t mca_btl_via_ofi_module;

/* bytes of a module's send and receive buffers: one eager message or
 * one max_send_size fragment, ob1's header included */
static inline size_t mca_btl_via_buffer_size(const mca_btl_base_module_t *m)
{
    size_t n =
        m->btl_max_send_size > m->btl_eager_limit ? m->btl_max_send_size : m->btl_eager_limit;

    return TC_ALIGN_UP(n, (size_t) 64);
}

/* the module that owns an endpoint (ob1 gets it back in every callback) */
#define MCA_BTL_VIA_EP_BTL(ep) (&(ep)->dev->module->super)

/* a statistics counter that threads on different endpoints (or outside
 * every lock) update: atomic when Open MPI runs with threads, a plain add
 * on the single-thread path */
static inline void mca_btl_via_count(uint64_t *ctr, uint64_t v)
{
    tc_atomic_count(ctr, v, opal_using_threads());
}

int mca_btl_via_add_procs(struct mca_btl_base_module_t *btl, size_t nprocs,
                          struct opal_proc_t **procs, struct mca_btl_base_endpoint_t **peers,
                          struct opal_bitmap_t *reachable);
int mca_btl_via_del_procs(struct mca_btl_base_module_t *btl, size_t nprocs,
                          struct opal_proc_t **procs, struct mca_btl_base_endpoint_t **peers);
int mca_btl_via_finalize(struct mca_btl_base_module_t *btl);

mca_btl_base_descriptor_t *mca_btl_via_alloc(struct mca_btl_base_module_t *btl,
                                             struct mca_btl_base_endpoint_t *endpoint,
                                             uint8_t order, size_t size, uint32_t flags);
int mca_btl_via_free(struct mca_btl_base_module_t *btl, mca_btl_base_descriptor_t *des);
mca_btl_base_descriptor_t *mca_btl_via_prepare_src(struct mca_btl_base_module_t *btl,
                                                   struct mca_btl_base_endpoint_t *endpoint,
                                                   struct opal_convertor_t *convertor,
                                                   uint8_t order, size_t reserve, size_t *size,
                                                   uint32_t flags);
int mca_btl_via_send(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                     struct mca_btl_base_descriptor_t *descriptor, mca_btl_base_tag_t tag);
int mca_btl_via_sendi(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                      struct opal_convertor_t *convertor, void *header, size_t header_size,
                      size_t payload_size, uint8_t order, uint32_t flags, mca_btl_base_tag_t tag,
                      mca_btl_base_descriptor_t **descriptor);
int mca_btl_via_put(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                    void *local_address, uint64_t remote_address,
                    struct mca_btl_base_registration_handle_t *local_handle,
                    struct mca_btl_base_registration_handle_t *remote_handle, size_t size,
                    int flags, int order, mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext,
                    void *cbdata);
int mca_btl_via_get(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                    void *local_address, uint64_t remote_address,
                    struct mca_btl_base_registration_handle_t *local_handle,
                    struct mca_btl_base_registration_handle_t *remote_handle, size_t size,
                    int flags, int order, mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext,
                    void *cbdata);
struct mca_btl_base_registration_handle_t *
mca_btl_via_register_mem(struct mca_btl_base_module_t *btl,
                         struct mca_btl_base_endpoint_t *endpoint, void *base, size_t size,
                         uint32_t flags);
int mca_btl_via_deregister_mem(struct mca_btl_base_module_t *btl,
                               struct mca_btl_base_registration_handle_t *handle);
int mca_btl_via_flush(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint);
int mca_btl_via_rcache_init(void);
void mca_btl_via_rcache_fini(void);

int mca_btl_via_component_progress(void);
/* progress: make and connect the VIs that peers asked for (devices with
 * connection requests) */
int mca_btl_via_accept_requests(void);
/* a send found no credit (or a queue before it): take the credits that
 * already arrived off the receive CQ and flush the queued sends they allow,
 * without calling the PML; call with no endpoint lock held */
void mca_btl_via_harvest_credits(void);
/* a peer lost for good (btl_via_lost.c), once per peer, after its
 * endpoint failed and what was queued to it was failed; with no endpoint
 * lock held */
void mca_btl_via_endpoint_lost(struct mca_btl_base_endpoint_t *ep, const char *why);
/* an operation to the peer completed in error: report the peer first,
 * unless its VI ended in order (no endpoint lock held). ob1 drops the BTL
 * from the peer's list at the error, and the application may then revoke:
 * ULFM's reliable broadcast must already know the peer failed, or it
 * sends to it through the empty list */
void mca_btl_via_endpoint_failed_op(struct mca_btl_base_endpoint_t *ep);
bool mca_btl_via_only_via_requested(void);
/* my device slot's geometry as the modex publishes it */
void mca_btl_via_modex_slot_of(int slot, mca_btl_via_modex_slot_t *out);
void mca_btl_via_release_device(void);

END_C_DECLS

#endif /* MCA_BTL_VIA_H */
