/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * btl_sci.h: component and module structures of btl_sci, the BTL over SCI
 * remote-write segments (CHEMPI's SCI device), and the functions the
 * component's files share.
 */

#ifndef MCA_BTL_SCI_H
#define MCA_BTL_SCI_H

#include "opal_config.h"

#include <stdbool.h>
#include <stdint.h>

#include "opal/class/opal_free_list.h"
#include "opal/class/opal_list.h"
#include "opal/mca/btl/btl.h"
#include "opal/mca/btl/base/base.h"
#include "opal/mca/btl/base/btl_base_error.h"
#include "opal/util/output.h"
#include "tc_ompi.h"
#include "tc_ompi_compat.h"

#include "tc_peers.h"
#include "sci_device.h"
#include "tc_rcache.h"
#include "btl_sci_expose.h"
#include "btl_sci_hdr.h"

BEGIN_C_DECLS

struct mca_btl_sci_atomic_op;

/* what travels in ob1's headers for a registration: the device handle */
struct mca_btl_base_registration_handle_t {
    sci_mem_handle_t sci;
};

/* one btl_register_mem as the module keeps it: the wire part first (the
 * exact range asked for, not the cache's page-rounded, merged one), the
 * cache registration behind it, and its entry in the exposed set */
typedef struct mca_btl_sci_reg {
    mca_btl_base_registration_handle_t handle;
    tc_rcache_reg_t *reg;
    mca_btl_sci_expose_t expose;
} mca_btl_sci_reg_t;

typedef struct mca_btl_sci_component {
    mca_btl_base_component_3_0_0_t super;

    /* MCA parameters */
    unsigned int ring_slots;             /* slots per peer ring (power of two), this host */
    unsigned int slot_size;              /* payload bytes per slot, this host */
    unsigned int ofi_ring_slots;         /* the same for the rings of ofi peers */
    unsigned int ofi_prefault;           /* MiB of ofi rings and shadows written in when made */
    unsigned int ofi_inplace_min;        /* see mca_btl_sci_module_t.inplace_min */
    bool ofi_rdma;                       /* the ofi module offers put/get/atomics */
    tc_ompi_reach_figures_t ofi_figures; /* the ofi module's limits */
    unsigned int dma_threshold;          /* smaller put/get are copied by CPU */
    unsigned int segment_size;           /* size of each per-peer segment (0: just enough) */
    unsigned int poll_batch;             /* messages per peer per progress call */
    unsigned int credit_batch;           /* slots returned per Completed write */
    unsigned int ofi_credit_batch;       /* the same to peers through ofi */
    unsigned int idle_polls;             /* empty polls before a peer goes to the doorbell */
    unsigned int sweep_interval;         /* progress calls between sweeps of idle peers */
    unsigned int free_list_max;
    char *provider;   /* auto | shm | ofi */
    char *ofi_fabric; /* libfabric provider of the ofi provider */
    char *ofi_device; /* its domain ("": any) */
    bool use_dma;     /* false: no DMA engine, rings only */
    bool prefetch;    /* prefetch the slot after next for writing */
    int verbose;
    int output;

    /* device */
    sci_desc_t *sd;
    sci_dma_queue_t *dq; /* NULL: no DMA engine (no put/get/atomics) */
    uint32_t node_id;
    int local_rank;
    int num_local; /* node-local processes, including us */

    /* one local segment per node-local peer (index: local rank), and our doorbell */
    sci_local_segment_t **lsegs;
    sci_local_segment_t *doorbell_seg;
    uint8_t *doorbell; /* accessed through btl_sci_doorbell.h */

    /* ofi provider (other hosts, or every peer when forced): its device,
     * DMA queue and one segment per process of the job (index: vpid) */
    sci_desc_t *osd;
    sci_dma_queue_t *odq;
    sci_local_segment_t **olsegs;
    int my_vpid;
    int num_procs;
    struct mca_btl_base_endpoint_t *oeps; /* ofi endpoints by tc_peers index */
    int num_oeps;                         /* the own job's, then other jobs' (other_jobs_on) */
    bool own_ofi;            /* the own job's processes use ofi (other hosts, forced) */
    bool other_jobs_on;      /* processes of other jobs are reached (over ofi) */
    unsigned int other_jobs; /* btl_sci_other_jobs */
    tc_peers_t peers;        /* full name -> index into oeps and olsegs */
    int32_t need_activate;                /* an ofi peer connected: poll it */
    int32_t dma_posted;                   /* asynchronous put/get in flight */
    /* poll the fabric at every progress call: the own job spans hosts or
     * a peer uses ofi (atomic); else only every sweep_interval calls,
     * for another job's first message (a poll is a system call) */
    int32_t ofi_poll_always;
    bool running;                         /* init done, not finalized */
    uint8_t no_bell;                      /* what ofi endpoints "ring" */

    /* endpoints by local rank; the active ones are polled every call */
    struct mca_btl_base_endpoint_t *endpoints;
    struct mca_btl_base_endpoint_t **active;
    int num_active;
    struct mca_btl_base_endpoint_t **connected; /* sweep list */
    int num_connected;
    struct mca_btl_base_endpoint_t **sweep; /* snapshot of it */
    unsigned int progress_calls;
    int32_t num_unconnected; /* peers added but not connected yet (add_procs and
                                          * progress may change it at once) */

    opal_list_t pending_endpoints;       /* endpoints with deferred sends */
    tc_ompi_done_list_t completed_frags; /* sends done, callback still owed */
    opal_mutex_t lock;                   /* protects pending_endpoints */

    /* registration cache over sci_register_memory (handles: sci_mem_handle_t) */
    tc_rcache_t *rcache;
    /* what peers may name in an atomic: the live registrations */
    mca_btl_sci_expose_set_t exposed;
    opal_mutex_t expose_lock;

    /* pending atomics, addressed by index+generation from the wire */
    struct mca_btl_sci_atomic_op *aops;
    unsigned int num_aops;
    opal_list_t free_aops;

    int32_t lost_pending; /* atomic: an endpoint lost, its report owed */
    bool warned_unreachable;
    bool all_peers_added; /* ofi: the first add_procs attached the whole job */
} mca_btl_sci_component_t;

TC_OMPI_MODULE_DECLSPEC extern mca_btl_sci_component_t mca_btl_sci_component;

/* One module per reach (docs/common.md, "One BTL module per reach"): the
 * peers of this host through shm, the others through ofi, each with its
 * own limits and its own ring geometry. */
typedef struct mca_btl_sci_module {
    mca_btl_base_module_t super;
    bool initialized;
    mca_btl_base_module_error_cb_fn_t error_cb;
    const char *reach;       /* "shm" or "ofi", for messages */
    unsigned int ring_slots; /* slots of each ring to a peer of this reach */
    unsigned int slot_size;  /* payload bytes per slot: the largest fragment */
    size_t inplace_min;      /* prepare_src leaves contiguous payloads of at
                              * least this many bytes in place (0: never) */
    opal_free_list_t frags;  /* send fragments of slot_size bytes */
} mca_btl_sci_module_t;

/* What sci_dma_reap hands back names its kind: a put or get
 * (btl_sci_rdma.c), or a send whose payload went out from the sender's
 * own buffer (btl_sci_send.c) */
typedef struct mca_btl_sci_cookie {
    int kind;
} mca_btl_sci_cookie_t;
enum { MCA_BTL_SCI_COOKIE_RDMA = 1, MCA_BTL_SCI_COOKIE_SEND = 2 };

/* the largest ring slot (and so eager message) a module may have */
#define MCA_BTL_SCI_SLOT_MAX (16u << 20)

/* the same-host module (the template: its limits are the standard
 * btl_sci_* parameters) and the module for ofi peers */
extern mca_btl_sci_module_t mca_btl_sci_module;
extern mca_btl_sci_module_t mca_btl_sci_ofi_module;

/* module operations (one file per concern) */
int mca_btl_sci_add_procs(struct mca_btl_base_module_t *btl, size_t nprocs,
                          struct opal_proc_t **procs, struct mca_btl_base_endpoint_t **peers,
                          struct opal_bitmap_t *reachable);
int mca_btl_sci_del_procs(struct mca_btl_base_module_t *btl, size_t nprocs,
                          struct opal_proc_t **procs, struct mca_btl_base_endpoint_t **peers);
int mca_btl_sci_finalize(struct mca_btl_base_module_t *btl);

mca_btl_base_descriptor_t *mca_btl_sci_alloc(struct mca_btl_base_module_t *btl,
                                             struct mca_btl_base_endpoint_t *endpoint,
                                             uint8_t order, size_t size, uint32_t flags);
int mca_btl_sci_free(struct mca_btl_base_module_t *btl, mca_btl_base_descriptor_t *des);
mca_btl_base_descriptor_t *mca_btl_sci_prepare_src(struct mca_btl_base_module_t *btl,
                                                   struct mca_btl_base_endpoint_t *endpoint,
                                                   struct opal_convertor_t *convertor,
                                                   uint8_t order, size_t reserve, size_t *size,
                                                   uint32_t flags);

int mca_btl_sci_send(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                     struct mca_btl_base_descriptor_t *descriptor, mca_btl_base_tag_t tag);
int mca_btl_sci_sendi(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                      struct opal_convertor_t *convertor, void *header, size_t header_size,
                      size_t payload_size, uint8_t order, uint32_t flags, mca_btl_base_tag_t tag,
                      mca_btl_base_descriptor_t **descriptor);

int mca_btl_sci_put(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                    void *local_address, uint64_t remote_address,
                    struct mca_btl_base_registration_handle_t *local_handle,
                    struct mca_btl_base_registration_handle_t *remote_handle, size_t size,
                    int flags, int order, mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext,
                    void *cbdata);
int mca_btl_sci_get(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                    void *local_address, uint64_t remote_address,
                    struct mca_btl_base_registration_handle_t *local_handle,
                    struct mca_btl_base_registration_handle_t *remote_handle, size_t size,
                    int flags, int order, mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext,
                    void *cbdata);
struct mca_btl_base_registration_handle_t *
mca_btl_sci_register_mem(struct mca_btl_base_module_t *btl,
                         struct mca_btl_base_endpoint_t *endpoint, void *base, size_t size,
                         uint32_t flags);
int mca_btl_sci_deregister_mem(struct mca_btl_base_module_t *btl,
                               struct mca_btl_base_registration_handle_t *handle);
int mca_btl_sci_rcache_init(void);
/* callbacks of finished asynchronous put/get and in-place sends (ofi);
 * how many */
int mca_btl_sci_dma_reap(void);
/* an in-place send the device finished with (btl_sci_send.c) */
void mca_btl_sci_send_reaped(mca_btl_sci_cookie_t *cookie, sci_error_t status);
void mca_btl_sci_rcache_fini(void);

int mca_btl_sci_atomic_op(struct mca_btl_base_module_t *btl,
                          struct mca_btl_base_endpoint_t *endpoint, uint64_t remote_address,
                          struct mca_btl_base_registration_handle_t *remote_handle,
                          mca_btl_base_atomic_op_t op, uint64_t operand, int flags, int order,
                          mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext, void *cbdata);
int mca_btl_sci_atomic_fop(struct mca_btl_base_module_t *btl,
                           struct mca_btl_base_endpoint_t *endpoint, void *local_address,
                           uint64_t remote_address,
                           struct mca_btl_base_registration_handle_t *local_handle,
                           struct mca_btl_base_registration_handle_t *remote_handle,
                           mca_btl_base_atomic_op_t op, uint64_t operand, int flags, int order,
                           mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext, void *cbdata);
int mca_btl_sci_atomic_cswap(struct mca_btl_base_module_t *btl,
                             struct mca_btl_base_endpoint_t *endpoint, void *local_address,
                             uint64_t remote_address,
                             struct mca_btl_base_registration_handle_t *local_handle,
                             struct mca_btl_base_registration_handle_t *remote_handle,
                             uint64_t compare, uint64_t value, int flags, int order,
                             mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext,
                             void *cbdata);
int mca_btl_sci_atomic_init(void);
void mca_btl_sci_atomic_fini(void);
/* target and initiator halves, called by progress for ring messages */
void mca_btl_sci_atomic_handle_req(struct mca_btl_base_endpoint_t *ep, const void *payload,
                                   uint32_t len);
void mca_btl_sci_atomic_handle_rsp(struct mca_btl_base_endpoint_t *ep, const void *payload,
                                   uint32_t len);

/* teardown shared by finalize and a failed init */
void mca_btl_sci_free_endpoints(void);
/* the ofi segment (ring) of peer index idx, made and made available */
sci_error_t mca_btl_sci_ofi_segment_make(int idx);
/* ofi: take the offers of processes of other jobs (progress) */
void mca_btl_sci_take_offers(void);
void mca_btl_sci_remove_local_segments(void);

/* progress helpers */
int mca_btl_sci_component_progress(void);
/* a peer lost for good (btl_sci_lost.c): the endpoint fails at once
 * (sends, RDMA and atomics to it return OPAL_ERR_UNREACH); what was
 * pending to it completes and the PML hears of it from the next progress
 * call. Safe under any lock and from any thread. */
void mca_btl_sci_endpoint_lost(struct mca_btl_base_endpoint_t *ep, const char *why);
int mca_btl_sci_lost_progress(void);
/* the runtime's word on dead processes, under fault tolerance (from
 * add_procs; stopped at finalize, before the endpoints go) */
void mca_btl_sci_lost_watch_start(void);
void mca_btl_sci_lost_watch_stop(void);
/* the atomics waiting for the peer's reply, completed with status
 * (btl_sci_atomic.c) */
int mca_btl_sci_atomic_fail_peer(struct mca_btl_base_endpoint_t *ep, int status);

/* true when only self and sci were asked for (misuse is reported then) */
bool mca_btl_sci_only_sci_requested(void);

END_C_DECLS

#endif /* MCA_BTL_SCI_H */
