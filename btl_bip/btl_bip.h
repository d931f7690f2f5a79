/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * btl_bip.h: component and module structures of btl_bip, the BTL over
 * Myrinet/BIP-style queues with MPI-BIP's credit flow control, and the
 * functions the component's files share.
 */

#ifndef MCA_BTL_BIP_H
#define MCA_BTL_BIP_H

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
#include "tc_ompi.h"
#include "tc_ompi_compat.h"
#include "tc_peers.h"

#include "bip_device.h"
#include "btl_bip_hdr.h"

BEGIN_C_DECLS

/* empty polls of the static queue between two looks at an ofi device that
 * only other jobs could use (a power of two; a look is a system call of
 * the provider's, a poll of the queue one load) */
#define MCA_BTL_BIP_LAZY_POLLS 1024u

/* ob1's registration handle (btl_bip_rdma.c): the key a peer on ofi
 * reads our memory with; key 0: no region (shm reads any address) */
struct mca_btl_base_registration_handle_t {
    bip_rkey_t key;
};

/* counters printed at finalize with btl_bip_verbose */
typedef struct mca_btl_bip_counters {
    uint64_t short_sent;
    uint64_t req_sent; /* medium fragments (three-way) */
    uint64_t get_acks; /* large groups (rendezvous) */
    uint64_t credit_only_sent;
    uint64_t deferred;      /* control messages that waited for credit */
    uint64_t fifo_hwm;      /* longest send FIFO (any peer) */
    uint64_t recv_deferred; /* receives beyond max_posted */
    uint64_t recv_fifo_hwm;
    uint64_t bytes_large; /* bytes written by large sends */
    uint64_t large_reads; /* large groups read by the receiver */
    uint64_t bytes_read;  /* bytes moved by those reads */
} mca_btl_bip_counters_t;

typedef struct mca_btl_bip_component {
    mca_btl_base_component_3_0_0_t super;

    /* MCA parameters */
    unsigned int credits;         /* N per peer */
    unsigned int queue_slots;     /* 0: N x peers rounded to a power of two */
    unsigned int short_limit;     /* same host: SHORT payload bytes (slot = header + this) */
    unsigned int ofi_short_limit; /* other hosts: the same for the ofi reach */
    unsigned int frag_size;       /* large-send fragment bytes */
    unsigned int max_posted;      /* posted large receives at a time */
    unsigned int poll_batch;      /* queue messages per progress call */
    unsigned int check_interval;  /* progress calls between liveness checks */
    unsigned int free_list_max;
    bool large_read;    /* large regime: the receiver reads (else BIP's push) */
    bool ofi_inplace;   /* ofi reach: SHORTs sent from ob1's memory */
    unsigned int ofi_inplace_min; /* ... from this many bytes of data on */
    char *provider;     /* auto, shm or ofi */
    char *ofi_provider; /* libfabric provider of the ofi provider */
    char *ofi_domain;   /* its domain (tcp: an interface), empty: the first */
    unsigned int ofi_timeout;
    unsigned int ofi_prefault; /* MiB of the ofi receive buffers written in at open */
    unsigned int ofi_get_limit; /* the ofi module's btl_get_limit */
    int verbose;
    int output;
    unsigned int other_jobs; /* most processes of other jobs (0: refused) */

    /* device */
    bip_dev_t *dev;
    /* its shm queue when that is its only one (progress reads it inline),
     * and the map of its senders' stamps to job ranks */
    struct tc_mpring *shmq;
    const uint32_t *shm_map;
    uint32_t shm_map_len;
    int local_rank;
    int num_local;
    unsigned int slot_size;
    bool threads;
    bool unlinked; /* the queue file is gone from disk */

    uint32_t my_vpid;
    uint32_t nprocs;
    bool all_peers_added;
    struct mca_btl_base_endpoint_t *endpoints; /* by index of peers */
    uint32_t max_eps;   /* endpoints: nprocs, + other_jobs when other_jobs_on */
    bool other_jobs_on; /* processes of other jobs reached (over ofi) */
    /* ofi opened for other jobs only (one host): progress reads the shm
     * ring inline and the device's queues every MCA_BTL_BIP_LAZY_POLLS-th
     * empty poll, until a peer is reached over ofi (ofi_active, atomic:
     * set by that connect or by a message that came over ofi) */
    bool ofi_lazy;
    bool peeked_dev; /* the message in hand came from bip_srecv_peek */
    unsigned int lazy_polls;
    int32_t ofi_active;
    tc_peers_t peers; /* full name -> index (own job: the vpid) */
    int num_unconnected;
    unsigned int progress_calls;

    opal_free_list_t frags;
    tc_ompi_done_list_t completed_frags; /* sends done, callback owed */
    opal_list_t recv_fifo;               /* receives waiting for a posted slot (3.4) */
    opal_list_t posted;                  /* receives posted at the device */
    opal_mutex_t lock;                   /* recv_fifo, posted */
    tc_guard_t progress_guard;

    mca_btl_bip_counters_t cnt;
    bool warned_unreachable;
    struct tc_rcache *rcache; /* regions for reads over ofi (ofi open only) */
    int32_t reads_in_flight;  /* atomic: asynchronous btl_get reads not reaped */
    int32_t sends_in_flight;  /* atomic: SHORTs sent in place, not reaped */
    int32_t lost_pending;     /* atomic: an endpoint lost, its report owed */

    /* the ofi reach's figures (btl_bip_ofi_*: docs/common.md, "One BTL
     * module per reach") */
    tc_ompi_reach_figures_t ofi_figures;
    unsigned int ofi_slot_size;
} mca_btl_bip_component_t;

TC_OMPI_MODULE_DECLSPEC extern mca_btl_bip_component_t mca_btl_bip_component;

/* one module per reach: mca_btl_bip_module for the peers on this host
 * (shm provider; the standard btl_bip_* limits), mca_btl_bip_ofi_module
 * for the peers reached through the ofi provider (btl_bip_ofi_*) */
typedef struct mca_btl_bip_module {
    mca_btl_base_module_t super;
    const char *reach;        /* "shm" or "ofi" */
    unsigned int short_limit; /* largest SHORT fragment: one queue slot */
    /* credit-only message once half the credits are owed (ofi: a peer a
     * network round trip away, messages delivered in order) */
    bool early_return;
    /* SHORTs of gather_min bytes or more leave from the fragment's memory
     * (bip_ssend_gather), ob1's data in place: no copy at the sender */
    bool gather;
    size_t gather_min;
    bool initialized;
    mca_btl_base_module_error_cb_fn_t error_cb;
} mca_btl_bip_module_t;

extern mca_btl_bip_module_t mca_btl_bip_module;
extern mca_btl_bip_module_t mca_btl_bip_ofi_module;

/* a receive at this process: posted at the device or waiting in the FIFO */
typedef struct mca_btl_bip_rreq {
    opal_list_item_t super;
    struct mca_btl_base_endpoint_t *ep;
    int kind; /* MCA_BTL_BIP_ACK_MEDIUM or _GET */
    uint32_t handle;
    bool is_posted;
    struct mca_btl_bip_rreq *next_ack; /* progress's list of ACKs to send */
    void *buf;
    size_t size;
    /* MEDIUM */
    uint64_t seq;
    uint8_t tag;
    /* GET */
    uint64_t remote_addr;
    void *local_handle;
    mca_btl_base_rdma_completion_fn_t cbfunc;
    void *cbcontext;
    void *cbdata;
} mca_btl_bip_rreq_t;

OBJ_CLASS_DECLARATION(mca_btl_bip_rreq_t);

/* a btl_get whose read is in flight at the device (ofi): its callback
 * runs from progress when bip_read_reap reports it */
typedef struct mca_btl_bip_rget {
    tc_ompi_rdma_cb_t cb;
    size_t size;
} mca_btl_bip_rget_t;

/* a statistics counter (updated under per-endpoint locks or none): atomic
 * only when Open MPI runs with threads, a plain add otherwise */
static inline void mca_btl_bip_count(uint64_t *ctr, uint64_t v)
{
    tc_atomic_count(ctr, v, mca_btl_bip_component.threads);
}

/* module operations */
int mca_btl_bip_add_procs(struct mca_btl_base_module_t *btl, size_t nprocs,
                          struct opal_proc_t **procs, struct mca_btl_base_endpoint_t **peers,
                          struct opal_bitmap_t *reachable);
int mca_btl_bip_del_procs(struct mca_btl_base_module_t *btl, size_t nprocs,
                          struct opal_proc_t **procs, struct mca_btl_base_endpoint_t **peers);
int mca_btl_bip_finalize(struct mca_btl_base_module_t *btl);
mca_btl_base_descriptor_t *mca_btl_bip_alloc(struct mca_btl_base_module_t *btl,
                                             struct mca_btl_base_endpoint_t *endpoint,
                                             uint8_t order, size_t size, uint32_t flags);
int mca_btl_bip_free(struct mca_btl_base_module_t *btl, mca_btl_base_descriptor_t *des);
mca_btl_base_descriptor_t *mca_btl_bip_prepare_src(struct mca_btl_base_module_t *btl,
                                                   struct mca_btl_base_endpoint_t *endpoint,
                                                   struct opal_convertor_t *convertor,
                                                   uint8_t order, size_t reserve, size_t *size,
                                                   uint32_t flags);
int mca_btl_bip_send(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                     struct mca_btl_base_descriptor_t *descriptor, mca_btl_base_tag_t tag);
int mca_btl_bip_sendi(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                      struct opal_convertor_t *convertor, void *header, size_t header_size,
                      size_t payload_size, uint8_t order, uint32_t flags, mca_btl_base_tag_t tag,
                      mca_btl_base_descriptor_t **descriptor);
int mca_btl_bip_get(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                    void *local_address, uint64_t remote_address,
                    struct mca_btl_base_registration_handle_t *local_handle,
                    struct mca_btl_base_registration_handle_t *remote_handle, size_t size,
                    int flags, int order, mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext,
                    void *cbdata);

/* progress and the receive side (btl_bip_recv.c) */
int mca_btl_bip_component_progress(void);
void mca_btl_bip_post_or_defer(mca_btl_bip_rreq_t *rreq);
int mca_btl_bip_poll_posted(void);
int mca_btl_bip_reap_reads(void);
int mca_btl_bip_reap_sends(void);
/* a peer lost for good (btl_bip_lost.c): the endpoint fails at once
 * (sends and reads to it return OPAL_ERR_UNREACH); what was pending to it
 * completes and the PML hears of it from the next progress call. Safe
 * under any lock and from any thread. */
void mca_btl_bip_endpoint_lost(struct mca_btl_base_endpoint_t *ep, const char *why);
int mca_btl_bip_lost_progress(void);
/* the runtime's word on dead processes, under fault tolerance (from
 * add_procs; stopped before the endpoints go) */
void mca_btl_bip_lost_watch_start(void);
void mca_btl_bip_lost_watch_stop(void);

bool mca_btl_bip_only_bip_requested(void);
/* the endpoint of an index of the peer table (another job's process met
 * first by its message), made if needed: NULL when it cannot be */
struct mca_btl_base_endpoint_t *mca_btl_bip_endpoint_of_index(uint32_t idx);
/* the ofi device's resolver: another job's sender (jobid, vpid) -> its
 * index of the peer table (given on first contact): 0 or -errno */
int mca_btl_bip_resolve(uint32_t jobid, uint32_t vpid, uint32_t *idx);

/* registrations for reads over ofi (btl_bip_rdma.c) */
int mca_btl_bip_rcache_init(void);
void mca_btl_bip_rcache_fini(void);
struct mca_btl_base_registration_handle_t *
mca_btl_bip_register_mem(struct mca_btl_base_module_t *btl,
                         struct mca_btl_base_endpoint_t *endpoint, void *base, size_t size,
                         uint32_t flags);
int mca_btl_bip_deregister_mem(struct mca_btl_base_module_t *btl,
                               struct mca_btl_base_registration_handle_t *handle);
/* teardown shared by finalize and a failed init */
void mca_btl_bip_release_all(void);

static inline void mca_btl_bip_hwm(uint64_t *hwm, uint64_t value)
{
    if (mca_btl_bip_component.threads) {
        /* endpoints have their own locks: a maximum over all of them */
        uint64_t cur = tc_atomic_load_relaxed(hwm);

        while (value > cur && !tc_atomic_cswap_weak_relaxed(hwm, &cur, value)) {
        }
    } else if (value > *hwm) {
        *hwm = value;
    }
}

END_C_DECLS

#endif /* MCA_BTL_BIP_H */
