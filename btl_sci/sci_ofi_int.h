/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * sci_ofi_int.h: the ofi provider's own structures (descriptor, nodes,
 * segments, operation contexts, asynchronous transfers) and the functions
 * its files share: sci_ofi.c (open, segments, sequences, DMA) and
 * sci_ofi_write.c (the writes of a flush and a publish).  Internal to
 * the provider.
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
#define SCI_OFI_DMA_PIECE ((size_t) 512 * 1024)
#define SCI_OFI_SPIN_POLLS 16

enum {
    SCI_OFI_CTX_DMA = 1,   /* a DMA transfer (someone waits for done) */
    SCI_OFI_CTX_RECV = 2,  /* a posted receive (bye messages) */
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
    fi_addr_t fa;
    int state;           /* SCI_OFI_NODE_*, atomic */
    sci_ofi_ctx_t wctx;  /* context of writes without completion */
    sci_ofi_ctx_t bctx;  /* our bye to it */
    sci_ofi_ctx_t probe; /* the probe in flight (probe.done: none) */
    uint64_t probe_word;
    uint64_t probe_key, probe_addr; /* a segment of the node to probe */
    uint32_t nsegs;
    sci_ofi_dir_seg_t *segs;
} sci_ofi_node_t;

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
    uint8_t addr[SCI_OFI_MAX_ADDR];
    size_t addrlen;
    size_t inject_size;
    int prov_key;
    int virt_addr; /* RMA addresses are virtual (else offsets into the region) */
    int cq_data;   /* the provider carries 8 bytes of remote CQ data */
    uint64_t next_key;
    sci_ofi_node_t *nodes;
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

/* shared by the provider's files */
int sci_ofi_progress(sci_desc_t *sd);
void sci_ofi_node_fail(sci_ofi_node_t *node);
/* sci_node_lost (sci_ofi_write.c) */
void sci_ofi_node_lost(sci_desc_t *sd, uint32_t node_id);
/* a piece of an asynchronous operation ended (err: 0 or a negative
 * libfabric code); the last one puts it on the done list */
void sci_ofi_async_piece_done(sci_desc_t *sd, sci_ofi_async_t *op, int err);

/* sci_ofi_write.c */
sci_error_t sci_ofi_flush(sci_remote_segment_t *rseg, size_t offset, size_t len);
sci_error_t sci_ofi_flush_publish(sci_remote_segment_t *rseg, size_t offset, size_t len,
                                  size_t word_offset);
sci_error_t sci_ofi_flush_publish_from(sci_remote_segment_t *rseg, size_t offset, size_t len,
                                       const void *buf, size_t buflen, size_t word_offset,
                                       void *cookie);

#endif /* SCI_OFI_INT_H */
