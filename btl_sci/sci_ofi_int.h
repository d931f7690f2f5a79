/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * sci_ofi_int.h: the ofi provider's own structures (descriptor, nodes,
 * segments, operation contexts, asynchronous transfers) and the functions
 * its files share: sci_ofi.c (open, close, the provider table),
 * sci_ofi_mr.c (registrations, local segments), sci_ofi_cm.c (directory,
 * remote segments, sequences), sci_ofi_write.c (the writes of a flush
 * and a publish), sci_ofi_dma.c (DMA) and sci_ofi_cq.c (completions).
 * Internal to the provider.
 */

#ifndef SCI_OFI_INT_H
#define SCI_OFI_INT_H

#include <pthread.h>
#include <stdint.h>
#include <sys/uio.h>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>

#include "sci_device.h"
#include "sci_ofi_dir.h"
#include "sci_provider.h"
#include "tc_ofi.h"

#define SCI_OFI_VERSION FI_VERSION(1, 5)
#define SCI_OFI_NRECV 8
#define SCI_OFI_RECV_BYTES 64
/* put/get in pieces of this size, all in flight: over libfabric 1.17's
 * net provider 4-8 MiB messages moved at 0.96-0.97x tcp's BTL in 2 MiB
 * pieces, 0.91-0.94x in 512 KiB ones (medians of 5 alternated runs; the
 * target answers each read with one send) */
#define SCI_OFI_DMA_PIECE ((size_t) 2048 * 1024)
#define SCI_OFI_SPIN_POLLS 16

enum {
    SCI_OFI_CTX_DMA = 1,   /* a DMA transfer (someone waits for done) */
    SCI_OFI_CTX_RECV = 2,  /* a posted receive (bye and offer messages) */
    SCI_OFI_CTX_NODE = 3,  /* a write without completion: errors only */
    SCI_OFI_CTX_PROBE = 4, /* a liveness probe of a node */
    SCI_OFI_CTX_BYE = 5,   /* our bye, sent at close */
    SCI_OFI_CTX_ASYNC = 6  /* a piece of an asynchronous transfer */
};

enum { SCI_OFI_NODE_OK = 0, SCI_OFI_NODE_BYE = 1, SCI_OFI_NODE_FAILED = 2 };

/* every operation's context starts with the libfabric one (FI_CONTEXT) */
typedef struct sci_ofi_ctx {
    struct fi_context2 fc;
    int kind;
    volatile int done;
    int err;
    struct sci_ofi_node *node;
    struct sci_ofi_async *op; /* SCI_OFI_CTX_ASYNC */
} sci_ofi_ctx_t;

/* an asynchronous transfer (sci_dma_post): its pieces, and a count of
 * those not completed plus one held by the poster until all are out */
typedef struct sci_ofi_async {
    struct sci_ofi_async *next; /* on sd->done once finished */
    void *cookie;
    int remaining; /* atomic */
    int err;       /* the first error, atomic */
    sci_ofi_ctx_t ctx[];
} sci_ofi_async_t;

typedef struct sci_ofi_node {
    struct sci_ofi_node *next;
    uint32_t node_id;
    uint64_t name; /* its full name (a bye and an offer carry it) */
    fi_addr_t fa;
    int state;           /* SCI_OFI_NODE_*, atomic */
    sci_ofi_ctx_t wctx;  /* context of writes without completion */
    sci_ofi_ctx_t bctx;  /* our bye to it */
    sci_ofi_ctx_t probe; /* the probe in flight (probe.done: none) */
    uint64_t probe_word;
    uint64_t probe_key, probe_addr; /* a segment of the node to probe */
    uint32_t nsegs;
    sci_ofi_dir_seg_t *segs;
    int has_offer; /* offer: the segment it made for us (an offer) */
    sci_ofi_dir_seg_t offer;
    sci_ofi_offer_t our_offer; /* ours to it (stays while the send is out) */
    sci_ofi_ctx_t octx;
} sci_ofi_node_t;

/* an offer from a node not imported yet, kept until it is */
typedef struct sci_ofi_pending {
    struct sci_ofi_pending *next;
    uint64_t name;
    sci_ofi_dir_seg_t seg;
    int taken; /* handed to the caller by sci_take_offer */
} sci_ofi_pending_t;

typedef struct sci_ofi_mr {
    struct sci_ofi_mr *next;
    struct fid_mr *mr;
    uint64_t key;
} sci_ofi_mr_t;

struct sci_desc {
    sci_obj_t obj;
    tc_ofi_rdm_t f;       /* fabric, domain, AV, CQ, endpoint */
    pthread_mutex_t lock; /* tables: nodes, segments, registrations */
    uint32_t node_id;
    uint64_t name; /* our full name (bye, offer) */
    uint8_t addr[SCI_OFI_MAX_ADDR];
    size_t addrlen;
    size_t inject_size;
    int prov_key;
    int virt_addr; /* RMA addresses are virtual (else offsets into the region) */
    int cq_data;   /* the provider carries 8 bytes of remote CQ data */
    uint64_t next_key;
    size_t prefault_left; /* tc_mem_prefault budget of segments and shadows */
    sci_ofi_node_t *nodes;
    sci_ofi_pending_t *pending; /* offers received, under lock */
    struct sci_local_segment *segs;
    /* segments by index (remote words name them), under lock */
    struct sci_local_segment **segtab;
    uint32_t nsegtab;
    sci_ofi_mr_t *mrs;
    sci_ofi_bye_t bye;         /* sent at close (stays while the sends are out) */
    pthread_mutex_t done_lock; /* finished asynchronous transfers */
    sci_ofi_async_t *done;
    sci_ofi_ctx_t rctx[SCI_OFI_NRECV];
    uint8_t rbuf[SCI_OFI_NRECV][SCI_OFI_RECV_BYTES];
};

struct sci_local_segment {
    sci_obj_t obj;
    struct sci_local_segment *next;
    sci_desc_t *sd;
    uint32_t segment_id;
    uint32_t index; /* in sd->segtab */
    void *mem;
    size_t size;
    struct fid_mr *mr;
    uint64_t key;
    int available;
};

struct sci_remote_segment {
    sci_obj_t obj;
    sci_desc_t *sd;
    sci_ofi_node_t *node;
    uint32_t segment_id;
    uint32_t index; /* the owner's index of the segment */
    uint64_t key, raddr, size;
    uint8_t *shadow;
    int mapped;
};

struct sci_sequence {
    sci_obj_t obj;
    sci_remote_segment_t *rseg;
};

struct sci_dma_queue {
    sci_obj_t obj;
    sci_desc_t *sd;
    int shared;
    pthread_mutex_t lock;
    unsigned max_entries, count;
    sci_error_t status;
    sci_ofi_ctx_t *ctx;
};

/* the provider table (sci_ofi.c): every object names it */
extern const sci_provider_ops_t sci_ofi_ops;

/* sci_ofi.c */
sci_error_t sci_ofi_err(int ret);

/* sci_ofi_cq.c */
int sci_ofi_progress(sci_desc_t *sd);
/* wait for one operation of ours, driving the CQ: its error (0 or a
 * negative libfabric code) */
int sci_ofi_wait(sci_desc_t *sd, sci_ofi_ctx_t *ctx);
void sci_ofi_node_fail(sci_ofi_node_t *node);
/* post receive buffer i again (for a node's bye) */
void sci_ofi_repost(sci_desc_t *sd, int i);
/* the node of that id, or NULL (sd->lock held) */
sci_ofi_node_t *sci_ofi_node_by_id(sci_desc_t *sd, uint32_t node_id);
/* the node of that full name, or NULL (sd->lock held) */
sci_ofi_node_t *sci_ofi_node_by_name(sci_desc_t *sd, uint64_t name);
/* a piece of an asynchronous operation ended (err: 0 or a negative
 * libfabric code); the last one puts it on the done list */
void sci_ofi_async_piece_done(sci_desc_t *sd, sci_ofi_async_t *op, int err);

/* sci_ofi_mr.c */
void *sci_ofi_zalloc(size_t len);
size_t sci_ofi_page_round(size_t len);
int sci_ofi_mr_reg_raw(sci_desc_t *sd, void *addr, size_t len, struct fid_mr **mr, uint64_t *key);
sci_error_t sci_ofi_register_memory(sci_desc_t *sd, void *addr, size_t len,
                                    sci_mem_handle_t *handle);
void sci_ofi_deregister_memory(sci_desc_t *sd, sci_mem_handle_t *handle);
sci_error_t sci_ofi_create_segment(sci_desc_t *sd, uint32_t segment_id, size_t size,
                                   sci_local_segment_t **segp);
sci_error_t sci_ofi_prepare_segment(sci_local_segment_t *seg);
sci_error_t sci_ofi_set_segment_available(sci_local_segment_t *seg, unsigned expected);
sci_error_t sci_ofi_set_segment_unavailable(sci_local_segment_t *seg);
void *sci_ofi_local_segment_address(const sci_local_segment_t *seg);
size_t sci_ofi_local_segment_size(const sci_local_segment_t *seg);
void sci_ofi_remove_segment(sci_local_segment_t *seg);

/* sci_ofi_cm.c */
sci_error_t sci_ofi_export_directory(sci_desc_t *sd, void *buf, size_t buflen, size_t *len);
sci_error_t sci_ofi_import_node(sci_desc_t *sd, uint32_t node_id, uint32_t dir_id, uint64_t name,
                                const void *buf, size_t len);
sci_error_t sci_ofi_offer_segment(sci_desc_t *sd, uint32_t node_id, sci_local_segment_t *seg);
int sci_ofi_take_offer(sci_desc_t *sd, uint64_t *name);
sci_error_t sci_ofi_connect_segment(sci_desc_t *sd, uint32_t node_id, uint32_t segment_id,
                                    sci_remote_segment_t **rsegp);
void *sci_ofi_map_remote_segment(sci_remote_segment_t *rseg, size_t offset, size_t size);
size_t sci_ofi_remote_segment_size(const sci_remote_segment_t *rseg);
void sci_ofi_disconnect_segment(sci_remote_segment_t *rseg);
sci_error_t sci_ofi_create_map_sequence(sci_remote_segment_t *rseg, sci_sequence_t **seq);
void sci_ofi_remove_sequence(sci_sequence_t *seq);
sci_error_t sci_ofi_start_sequence(sci_sequence_t *seq);
sci_error_t sci_ofi_check_sequence(sci_sequence_t *seq);

/* sci_ofi_write.c */
sci_error_t sci_ofi_flush(sci_remote_segment_t *rseg, size_t offset, size_t len);
sci_error_t sci_ofi_flush_publish(sci_remote_segment_t *rseg, size_t offset, size_t len,
                                  size_t word_offset);
sci_error_t sci_ofi_flush_publish_from(sci_remote_segment_t *rseg, size_t offset, size_t len,
                                       const void *buf, size_t buflen, size_t word_offset,
                                       void *cookie);
/* sci_node_lost */
void sci_ofi_node_lost(sci_desc_t *sd, uint32_t node_id);

/* sci_ofi_dma.c */
sci_error_t sci_ofi_create_dma_queue(sci_desc_t *sd, unsigned max_entries, sci_dma_queue_t **dqp);
void sci_ofi_remove_dma_queue(sci_dma_queue_t *dq);
sci_error_t sci_ofi_dma_enqueue(sci_dma_queue_t *dq, int direction, void *local_addr,
                                const sci_mem_handle_t *remote, uint64_t remote_addr, size_t len);
sci_error_t sci_ofi_dma_start(sci_dma_queue_t *dq);
sci_error_t sci_ofi_dma_wait(sci_dma_queue_t *dq);
sci_error_t sci_ofi_dma_queue_share(sci_dma_queue_t *dq);
sci_error_t sci_ofi_dma_transfer(sci_dma_queue_t *dq, int direction, void *local_addr,
                                 const sci_mem_handle_t *remote, uint64_t remote_addr, size_t len);
sci_error_t sci_ofi_dma_probe(sci_desc_t *sd);
sci_error_t sci_ofi_dma_post(sci_desc_t *sd, int direction, void *local_addr,
                             const sci_mem_handle_t *remote, uint64_t remote_addr, size_t len,
                             void *cookie);
int sci_ofi_dma_reap(sci_desc_t *sd, void **cookies, sci_error_t *status, int max);

#endif /* SCI_OFI_INT_H */
