/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * osc_hybrid.h: osc/hybrid, MPI one-sided communication over whatever BTLs
 * the job uses. Module and component structures, the internal request
 * bookkeeping shared by the origin side (osc_hybrid_comm.c), the target side
 * (osc_hybrid_target.c) and synchronisation (osc_hybrid_sync.c).
 *
 * Every operation is an active message on a private duplicate of the
 * window's communicator, sent through the PML (ob1), so it runs over every
 * BTL; ob1 moves bulk data with the BTL's put/get where the BTL has RDMA.
 */

#ifndef MCA_OSC_HYBRID_H
#define MCA_OSC_HYBRID_H

#include "ompi_config.h"
#include "tc_ompi_compat.h"
#include TC_OMPI_MUTEX_H
#include "ompi/win/win.h"
#include "ompi/communicator/communicator.h"
#include "ompi/datatype/ompi_datatype.h"
#include "ompi/request/request.h"
#include "ompi/mca/osc/osc.h"
#include "ompi/op/op.h"

#include "osc_hybrid_hdr.h"
#include "osc_hybrid_wire.h"

typedef struct mca_osc_hybrid_component_t {
    ompi_osc_base_component_t super;
    int priority;
    bool over_vader;   /* serve windows that only vader reaches (osc/rdma's bugs there) */
    bool above_rdma;   /* 5.0: above osc/rdma (its accumulates are wrong) */
    int slot_size;     /* bytes of one posted active-message receive */
    int nslots;        /* receives posted per window */
    int inline_max;    /* put data up to this goes inside the message */
    bool rdma;         /* use a BTL's put/get where one reaches every peer */
    int rdma_min;      /* smallest contiguous put/get sent by RDMA */
    int rdma_bounce;   /* largest put/get copied through a registered bounce slot */
    int aggregate_max; /* bytes of requests gathered per target (0: none) */
    opal_mutex_t lock; /* protects the module list */
    struct mca_osc_hybrid_module_t **modules;
    int nmodules;
    int maxmodules;
    bool progress_registered;
} mca_osc_hybrid_component_t;

TC_OMPI_MODULE_DECLSPEC extern mca_osc_hybrid_component_t mca_osc_hybrid_component;

/* An origin-side operation: the chunks it was split into hold one
 * reference each; the last one unpacks the result and completes the user's
 * request. */
typedef struct mca_osc_hybrid_op_t {
    int refs;
    char *tmp; /* packed result of a multi-chunk reply */
    size_t tmp_len;
    void *res_addr;
    int res_count;
    ompi_datatype_t *res_dt; /* retained while pending */
    ompi_request_t *ureq;    /* request-based variants */
    int err;                 /* the first error of a chunk (a failed target) */
} mca_osc_hybrid_op_t;

/* One internal PML request in flight, polled by progress. */
typedef struct mca_osc_hybrid_pend_t {
    struct mca_osc_hybrid_pend_t *next;
    ompi_request_t *req;
    void *freebuf;           /* freed when req completes */
    mca_osc_hybrid_op_t *op; /* origin side: the op it belongs to */
    int kind;                /* MCA_OSC_HYBRID_PEND_* */
    bool recycle;            /* freebuf is a gathering buffer: keep it for reuse */
    /* target side, bulk put data received into freebuf: scatter it */
    mca_osc_hybrid_seg_t *segs;
    uint32_t nseg;
    char *dest; /* resolved base of the segments */
    /* WSEND: the origin it answers, and its place in m->wsend_seq */
    int peer;
    uint64_t seq;
    bool lost; /* its peer failed: cancelled (osc_hybrid_ft.c) */
} mca_osc_hybrid_pend_t;

enum {
    MCA_OSC_HYBRID_PEND_ORIGIN = 1, /* a send or reply receive of our op */
    MCA_OSC_HYBRID_PEND_TSEND,      /* a reply or notice we send as target */
    MCA_OSC_HYBRID_PEND_TDATA,      /* bulk put data we receive as target */
    MCA_OSC_HYBRID_PEND_WSEND       /* a reply the PML reads straight from the window */
};

/* A notice that ends (part of) an origin's epoch here (UNLOCK, FLUSH,
 * COMPLETE), held back until every reply to that origin that the PML
 * reads from the window, started before the notice arrived (sequence
 * number upto or below), has been read out: its answer vouches that the
 * window is the target's again. */
typedef struct mca_osc_hybrid_held_t {
    struct mca_osc_hybrid_held_t *next;
    int src;
    int type;
    uint64_t upto;
} mca_osc_hybrid_held_t;

/* One slot of the RDMA bounce buffer; busy is taken with a compare-and-
 * swap and given back by the completion callback, which may run in any
 * thread. */
#define MCA_OSC_HYBRID_BOUNCE_SLOTS 32
typedef struct mca_osc_hybrid_bounce_t {
    int32_t busy; /* tc_atomic.h operations only */
    void *dst;    /* get: where the data go once in */
    size_t len;
} mca_osc_hybrid_bounce_t;

/* A waiting lock request at the target. */
typedef struct mca_osc_hybrid_lockq_t {
    struct mca_osc_hybrid_lockq_t *next;
    int src;
    int type;
} mca_osc_hybrid_lockq_t;

typedef struct mca_osc_hybrid_module_t {
    ompi_osc_base_module_t super;
    ompi_win_t *win;
    ompi_communicator_t *comm; /* private dup of the window's comm */
    int rank;
    int size;
    int flavor;
    char *base;
    size_t win_size;
    int disp_unit;
    bool free_base;
    uint64_t *peer_size; /* NULL for dynamic windows */
    int *peer_disp_unit;

    opal_mutex_t lock; /* everything below */
    int in_progress;   /* no re-entry of our progress */

    /* posted active-message receives, consumed in posting order so that
     * messages of one origin are applied in the order it sent them */
    char **slot_buf;
    ompi_request_t **slot_req;
    int nslots;
    int head;
    size_t head_off; /* bytes of the head message already applied */

    /* requests gathered per target (osc_hybrid_agg.c) */
    char **agg_buf; /* NULL: nothing gathered */
    uint32_t *agg_len;
    uint32_t *agg_cap;
    int *agg_dirty; /* the targets with something gathered */
    int agg_ndirty;
    char *agg_spare[8]; /* sent buffers kept for reuse (a fresh one per message
                         * costs a malloc_consolidate in glibc) */
    int agg_nspare;

    mca_osc_hybrid_pend_t *pend; /* internal requests in flight */
    int origin_pending;          /* of kind ORIGIN */
    int tdata_pending;           /* of kind TDATA: holds back FLUSH, UNLOCK, COMPLETE */
    int wsend_pending;           /* of kind WSEND, all origins */
    int *wsend_out;              /* of kind WSEND, per origin */
    uint64_t wsend_seq;          /* WSEND requests ever started */
    mca_osc_hybrid_held_t *held_head, *held_tail; /* notices held back, in arrival order */
    uint32_t next_reply;
    uint32_t next_data;
    int error; /* first failure reported by a target */

    /* cumulative counters per peer (origin side) */
    uint64_t *ops_sent;
    uint64_t *lock_req, *lock_ack;
    uint64_t *unlock_req, *unlock_ack;
    uint64_t *flush_req, *flush_ack;
    uint64_t *unacked;    /* requests to t that only a FLUSH acknowledges (put, acc) */
    uint64_t *flushed_at; /* unacked[t] when a FLUSH to t was last sent */
    /* target side */
    uint64_t ops_done; /* ops of every origin applied here */
    uint64_t fence_expected;
    int *posts_recv;    /* POST notices not yet consumed by start */
    int completes_recv; /* COMPLETE notices in this exposure */

    /* epochs at this process */
    bool fence_active;
    int *lock_type; /* per target: 0 or MPI_LOCK_* held */
    int nlocks;
    bool lock_all;
    bool *start_member; /* access group of start .. complete */
    ompi_group_t *start_group;
    ompi_group_t *post_group;
    int post_size;

    /* passive-target lock state of this window */
    int lk_excl; /* holder rank or -1 */
    int lk_shared;
    mca_osc_hybrid_lockq_t *lkq_head, *lkq_tail;
    int *lk_state; /* per origin: the MPI_LOCK_* it asked for (queued or held), or 0 */

    /* records refused by the target side (osc_hybrid_target.c) */
    int wire_fault;     /* why handle_am could not go on (MCA_OSC_HYBRID_WIRE_*) */
    bool wire_reported; /* a malformed request was shown to the user */

    /* RDMA path (osc_hybrid_rdma.c): NULL rbtl = active messages only */
    struct mca_btl_base_module_t *rbtl;
    struct mca_btl_base_endpoint_t **rep;            /* per peer */
    struct mca_btl_base_registration_handle_t *wreg; /* our window */
    uint64_t *rbase;                                 /* every rank's window address */
    char *rhandles;                                  /* every rank's registration handle */
    size_t hsize;
    int32_t rdma_pending;   /* RDMA transfers in flight: opal_atomic_add_fetch_32 only */
    int rput;               /* MCA_OSC_HYBRID_RPUT_*: how an RDMA put becomes visible */
    int32_t rdma_unflushed; /* RPUT_FLUSH: a put since the last btl_flush (atomics) */
    int rdma_error; /* set by RDMA callbacks in any thread: tc_atomic.h only */
    /* small transfers go through slots of one buffer registered at window
     * creation, instead of a registration of the user buffer each time */
    char *bounce;
    struct mca_btl_base_registration_handle_t *bounce_reg;
    struct mca_osc_hybrid_bounce_t *bslot; /* MCA_OSC_HYBRID_BOUNCE_SLOTS */

    /* failed peers (osc_hybrid_ft.c) */
    int ft_epoch;                     /* failures in the job when last looked */
    int ft_dead;                      /* ranks of this window known failed */
    bool *ft_gone;                    /* per rank: failed, its locks here released */
    mca_osc_hybrid_pend_t *ft_parked; /* cancelled sends the PML still holds */
    /* dynamic windows */
    mca_osc_hybrid_region_t *regions;
    int nregions;
    int maxregions;
} mca_osc_hybrid_module_t;

#define MCA_OSC_HYBRID_MOD(win) ((mca_osc_hybrid_module_t *) (win)->w_osc_module)

/* osc_hybrid_component.c */
int mca_osc_hybrid_progress(void);
void mca_osc_hybrid_progress_module(mca_osc_hybrid_module_t *m);

/* osc_hybrid_peer.c: the per-peer arrays of a window of n ranks. alloc:
 * OMPI_ERR_OUT_OF_RESOURCE when one could not be had (release the module
 * as after any failure). free: all of them but ft_gone, which
 * mca_osc_hybrid_ft_release frees with the rest of the failure state. */
int mca_osc_hybrid_peers_alloc(mca_osc_hybrid_module_t *m, int n);
void mca_osc_hybrid_peers_free(mca_osc_hybrid_module_t *m);

/* osc_hybrid_agg.c (called with m->lock held) */
char *mca_osc_hybrid_agg_reserve(mca_osc_hybrid_module_t *m, int t, size_t len);
int mca_osc_hybrid_agg_send(mca_osc_hybrid_module_t *m, int t, mca_osc_hybrid_op_t *op);
int mca_osc_hybrid_agg_send_all(mca_osc_hybrid_module_t *m);
int mca_osc_hybrid_agg_ctl(mca_osc_hybrid_module_t *m, int dst, int type, int arg);
void mca_osc_hybrid_agg_recycle(mca_osc_hybrid_module_t *m, char *buf);
void mca_osc_hybrid_agg_release(mca_osc_hybrid_module_t *m);

/* osc_hybrid_target.c (called with m->lock held) */
/* Applies or refuses the record at msg (len bytes left in the message from
 * src); returns the bytes it took, padding included, or 0 when it can
 * neither be framed nor answered (m->wire_fault says why): the caller then
 * ends the job with mca_osc_hybrid_wire_abort. */
size_t mca_osc_hybrid_handle_am(mca_osc_hybrid_module_t *m, int src, char *msg, size_t len);
void mca_osc_hybrid_wire_abort(mca_osc_hybrid_module_t *m, int src, const char *why, size_t off,
                               size_t len);
void mca_osc_hybrid_complete_pend(mca_osc_hybrid_module_t *m, mca_osc_hybrid_pend_t *p);
/* completes every finished pending request of one kind (-1: of any kind) */
void mca_osc_hybrid_complete_finished(mca_osc_hybrid_module_t *m, int kind);
int mca_osc_hybrid_send_ctl(mca_osc_hybrid_module_t *m, int dst, int type, int arg);
int mca_osc_hybrid_track(mca_osc_hybrid_module_t *m, ompi_request_t *req, void *freebuf,
                         mca_osc_hybrid_op_t *op, int kind);
void mca_osc_hybrid_op_release(mca_osc_hybrid_module_t *m, mca_osc_hybrid_op_t *op);
void mca_osc_hybrid_release_held(mca_osc_hybrid_module_t *m);
void mca_osc_hybrid_free_held(mca_osc_hybrid_module_t *m);

/* grants the lock requests the queue allows (called with m->lock held) */
void mca_osc_hybrid_lock_grant(mca_osc_hybrid_module_t *m);

/* osc_hybrid_ft.c: failed peers under MPI fault tolerance (all false
 * without it). failed: rank of the window has failed. any_failed: one of
 * ranks[0..n-1] (ranks NULL: 0..n-1) has. sweep (m->lock held, from
 * progress): notes new failures, releases a dead origin's locks here,
 * cancels the internal requests with a dead peer. park: p, complete and
 * lost, is kept until the PML has finished with it (true), instead of
 * being freed. skip: records from src are dropped (it failed). release:
 * at window free. */
bool mca_osc_hybrid_ft_failed(const mca_osc_hybrid_module_t *m, int rank);
bool mca_osc_hybrid_ft_any_failed(const mca_osc_hybrid_module_t *m, const int *ranks, int n);
void mca_osc_hybrid_ft_sweep(mca_osc_hybrid_module_t *m);
bool mca_osc_hybrid_ft_park(mca_osc_hybrid_module_t *m, mca_osc_hybrid_pend_t *p);
bool mca_osc_hybrid_ft_skip(const mca_osc_hybrid_module_t *m, int src);
void mca_osc_hybrid_ft_release(mca_osc_hybrid_module_t *m);

/* osc_hybrid_rdma.c */
enum {
    MCA_OSC_HYBRID_RPUT_NONE = 0, /* puts by active messages, gets by RDMA */
    MCA_OSC_HYBRID_RPUT_COMPLETE, /* a put is at the target when its callback ran */
    MCA_OSC_HYBRID_RPUT_FLUSH     /* ... after the BTL's btl_flush */
};
int mca_osc_hybrid_rdma_setup(mca_osc_hybrid_module_t *m);
/* After the RDMA transfers completed: makes RDMA puts visible at their
 * targets (btl_flush where the BTL needs it). Any thread, no lock held. */
void mca_osc_hybrid_rdma_flush(mca_osc_hybrid_module_t *m);
void mca_osc_hybrid_rdma_release(mca_osc_hybrid_module_t *m);
int mca_osc_hybrid_rdma_try(mca_osc_hybrid_module_t *m, bool is_put, void *oaddr, int ocount,
                            ompi_datatype_t *odt, int target, ptrdiff_t tdisp, int tcount,
                            ompi_datatype_t *tdt);

/* osc_hybrid_comm.c */
int mca_osc_hybrid_put(const void *origin_addr, int origin_count, ompi_datatype_t *origin_dt,
                       int target, ptrdiff_t target_disp, int target_count,
                       ompi_datatype_t *target_dt, ompi_win_t *win);
int mca_osc_hybrid_get(void *origin_addr, int origin_count, ompi_datatype_t *origin_dt, int target,
                       ptrdiff_t target_disp, int target_count, ompi_datatype_t *target_dt,
                       ompi_win_t *win);
int mca_osc_hybrid_accumulate(const void *origin_addr, int origin_count, ompi_datatype_t *origin_dt,
                              int target, ptrdiff_t target_disp, int target_count,
                              ompi_datatype_t *target_dt, ompi_op_t *op, ompi_win_t *win);
int mca_osc_hybrid_compare_and_swap(const void *origin_addr, const void *compare_addr,
                                    void *result_addr, ompi_datatype_t *dt, int target,
                                    ptrdiff_t target_disp, ompi_win_t *win);
int mca_osc_hybrid_fetch_and_op(const void *origin_addr, void *result_addr, ompi_datatype_t *dt,
                                int target, ptrdiff_t target_disp, ompi_op_t *op, ompi_win_t *win);
int mca_osc_hybrid_get_accumulate(const void *origin_addr, int origin_count,
                                  ompi_datatype_t *origin_dt, void *result_addr, int result_count,
                                  ompi_datatype_t *result_dt, int target, ptrdiff_t target_disp,
                                  int target_count, ompi_datatype_t *target_dt, ompi_op_t *op,
                                  ompi_win_t *win);
int mca_osc_hybrid_rput(const void *origin_addr, int origin_count, ompi_datatype_t *origin_dt,
                        int target, ptrdiff_t target_disp, int target_count,
                        ompi_datatype_t *target_dt, ompi_win_t *win, ompi_request_t **req);
int mca_osc_hybrid_rget(void *origin_addr, int origin_count, ompi_datatype_t *origin_dt, int target,
                        ptrdiff_t target_disp, int target_count, ompi_datatype_t *target_dt,
                        ompi_win_t *win, ompi_request_t **req);
int mca_osc_hybrid_raccumulate(const void *origin_addr, int origin_count,
                               ompi_datatype_t *origin_dt, int target, ptrdiff_t target_disp,
                               int target_count, ompi_datatype_t *target_dt, ompi_op_t *op,
                               ompi_win_t *win, ompi_request_t **req);
int mca_osc_hybrid_rget_accumulate(const void *origin_addr, int origin_count,
                                   ompi_datatype_t *origin_dt, void *result_addr, int result_count,
                                   ompi_datatype_t *result_dt, int target, ptrdiff_t target_disp,
                                   int target_count, ompi_datatype_t *target_dt, ompi_op_t *op,
                                   ompi_win_t *win, ompi_request_t **req);

/* osc_hybrid_sync.c */
int mca_osc_hybrid_fence(int assert, ompi_win_t *win);
int mca_osc_hybrid_start(ompi_group_t *group, int assert, ompi_win_t *win);
int mca_osc_hybrid_complete(ompi_win_t *win);
int mca_osc_hybrid_post(ompi_group_t *group, int assert, ompi_win_t *win);
int mca_osc_hybrid_wait(ompi_win_t *win);
int mca_osc_hybrid_test(ompi_win_t *win, int *flag);
int mca_osc_hybrid_lock(int lock_type, int target, int assert, ompi_win_t *win);
int mca_osc_hybrid_unlock(int target, ompi_win_t *win);
int mca_osc_hybrid_lock_all(int assert, ompi_win_t *win);
int mca_osc_hybrid_unlock_all(ompi_win_t *win);
int mca_osc_hybrid_sync(ompi_win_t *win);
int mca_osc_hybrid_flush(int target, ompi_win_t *win);
int mca_osc_hybrid_flush_all(ompi_win_t *win);
int mca_osc_hybrid_flush_local(int target, ompi_win_t *win);
int mca_osc_hybrid_flush_local_all(ompi_win_t *win);
/* waits until every op this process started has completed locally */
int mca_osc_hybrid_drain_origin(mca_osc_hybrid_module_t *m);

#endif /* MCA_OSC_HYBRID_H */
