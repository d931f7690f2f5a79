/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * sci_device.h: the SCI device API that the btl_sci protocol code calls.
 *
 * The calls are shaped after Dolphin's SISCI API (SCIOpen, SCICreateSegment,
 * SCIPrepareSegment, SCISetSegmentAvailable, SCIConnectSegment,
 * SCIMapRemoteSegment, SCIStartSequence/SCICheckSequence, SCIStoreBarrier,
 * SCICreateDMAQueue/SCIStartDmaTransfer/SCIWaitForDMAQueue, SCIQuery for the
 * local node id) so that a provider for real PCIe hardware can be added
 * without touching the protocol.  docs/btl_sci.md holds the mapping table.
 *
 * This header depends on nothing from Open MPI: the unit tests build the
 * device layer alone.
 */

#ifndef SCI_DEVICE_H
#define SCI_DEVICE_H

#include <stddef.h>
#include <stdint.h>

#include "tc_atomic.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Error codes (SISCI's sci_error_t, reduced to what the protocol needs). */
typedef enum {
    SCI_ERR_OK = 0,
    SCI_ERR_NOSPC = -1,           /* no memory / no space for a segment */
    SCI_ERR_ACCESS = -2,          /* permission denied */
    SCI_ERR_NO_SUCH_SEGMENT = -3, /* not (yet) created or not available */
    SCI_ERR_TRANSFER_FAILED = -4, /* the remote side went away */
    SCI_ERR_ILLEGAL_PARAMETER = -5,
    SCI_ERR_OUT_OF_RANGE = -6,  /* address/length outside a segment */
    SCI_ERR_NOT_SUPPORTED = -7, /* e.g. the DMA engine is refused (CMA) */
    SCI_ERR_BUSY = -8,          /* DMA queue full */
    SCI_ERR_SYSTEM = -9,        /* any other system error (see errno) */
    SCI_ERR_DISCONNECTED = -10  /* the owner removed the segment: it left in order */
} sci_error_t;

/* Opaque objects. */
typedef struct sci_desc sci_desc_t;                     /* SCIOpen */
typedef struct sci_local_segment sci_local_segment_t;   /* SCICreateSegment */
typedef struct sci_remote_segment sci_remote_segment_t; /* SCIConnectSegment */
typedef struct sci_sequence sci_sequence_t;             /* SCICreateMapSequence */
typedef struct sci_dma_queue sci_dma_queue_t;           /* SCICreateDMAQueue */

/* Parameters of the virtual device (SCIOpen + SCIInitialize). */
typedef struct sci_open_params {
    const char *segment_dir; /* shm provider: where segment files live */
    const char *job_key;     /* names segments of this job apart */
    const char *provider;    /* "shm" (also NULL) or "ofi" */
    uint32_t node_id;        /* ofi: this process's node id (the caller's numbering) */
    uint64_t node_name;      /* ofi: its full name, the same in every job (0: node_id) */
    const char *fabric;      /* ofi: libfabric provider ("tcp;ofi_rxm" when NULL) */
    const char *device;      /* ofi: libfabric domain (tcp: the interface), NULL: any */
    size_t prefault;         /* ofi: bytes of segments and shadows written in when
                              * made (tc_mem_prefault's budget; 0: none) */
} sci_open_params_t;

/* A registered memory region as published to a peer (SISCI: a segment
 * created over user memory with SCIRegisterSegmentMemory).  Fixed size and
 * plain data so it can travel on the wire. */
typedef struct sci_mem_handle {
    uint32_t node_id;    /* owner's node */
    uint32_t segment_id; /* owner's segment id of the registration */
    uint64_t owner;      /* provider cookie: shm uses the owner's pid */
    uint64_t base;       /* virtual address of the region at the owner */
    uint64_t len;        /* length of the region */
    uint64_t key;        /* ofi: the region's remote key */
    uint32_t key_node;   /* ofi: the owner's node id on the fabric (node 0 is a
                          * node like any other: key_flags says whether a key is there) */
    uint32_t key_flags;  /* SCI_MEM_HANDLE_KEY: key, key_node and key_base are set */
    uint64_t key_base;   /* ofi: the address the key's region starts at (the
                          * handle's base/len may name a part of it) */
} sci_mem_handle_t;

#define SCI_MEM_HANDLE_KEY 0x1u /* sci_mem_handle_t.key_flags */

enum {
    SCI_DMA_WRITE = 0, /* local -> remote (SCI_FLAG_DMA_WRITE semantics) */
    SCI_DMA_READ = 1   /* remote -> local (SCI_FLAG_DMA_READ) */
};

/* --- virtual device --------------------------------------------------- */
sci_error_t sci_open(const sci_open_params_t *params, sci_desc_t **sd);
void sci_close(sci_desc_t *sd);
uint32_t sci_local_node_id(const sci_desc_t *sd);
/* the providers built in ("shm" or "shm,ofi") */
const char *sci_provider_name(void);
/* is the named provider built in? */
int sci_provider_available(const char *name);
/* the ofi provider's libfabric provider by default: "tcp" with libfabric
 * 2 or later, "net" with 1.17, "tcp;ofi_rxm" before */
const char *sci_ofi_default_fabric(void);
/* the provider behind a descriptor ("shm", "ofi") */
const char *sci_desc_provider(const sci_desc_t *sd);
/* Drive the provider (ofi: read the completion queue, which is also what
 * lands other nodes' writes in our segments on the tcp provider); the
 * number of events, 0 for shm.  Thread safe. */
int sci_progress(sci_desc_t *sd);
/* Node node_id is gone for good (a process the runtime reports dead):
 * every transfer to it fails from now on, and one waiting for room
 * towards it gives up (SCI_ERR_TRANSFER_FAILED). Safe from any thread;
 * nothing for shm, whose transfers never wait for the peer. */
void sci_node_lost(sci_desc_t *sd, uint32_t node_id);

/* --- the segment directory (what SISCI's driver knows of other nodes) ---- */
/* Write this node's fabric address and its available segments (id, size,
 * key, address) into buf (at most buflen bytes; *len set).  shm: nothing
 * to publish (*len = 0).  SCI_ERR_NOSPC when buflen is too small. */
sci_error_t sci_export_directory(sci_desc_t *sd, void *buf, size_t buflen, size_t *len);
/* Learn node_id's directory (from its sci_export_directory): afterwards
 * sci_connect_segment(sd, node_id, ...) reaches its segments.  The
 * record comes from another process: it is checked in full. */
sci_error_t sci_import_node(sci_desc_t *sd, uint32_t node_id, const void *buf, size_t len);
/* The same for a node known here as node_id whose directory names it
 * dir_id (its own numbering: a process of another job) and whose full
 * name (its node_name at open) is name. */
sci_error_t sci_import_node_as(sci_desc_t *sd, uint32_t node_id, uint32_t dir_id, uint64_t name,
                               const void *buf, size_t len);
/* Offer seg to node_id (imported): for a node whose directory holds no
 * segment for us. The node reaches it with sci_connect_segment(...,
 * SCI_OFFERED_SEGMENT) once it imported us. SCI_ERR_NOT_SUPPORTED: shm. */
sci_error_t sci_offer_segment(sci_desc_t *sd, uint32_t node_id, sci_local_segment_t *seg);
/* 1 and *name set: a node of that full name offered us a segment (each
 * offer reported once); 0: none new. The caller imports the node, then
 * connects to SCI_OFFERED_SEGMENT on it. */
int sci_take_offer(sci_desc_t *sd, uint64_t *name);
/* the segment id that names the segment a node offered us */
#define SCI_OFFERED_SEGMENT 0xffffffffu

/* --- local segments ----------------------------------------------------- */
/* Create a segment of size bytes (page rounded, all zero); mapped at once
 * (SCI segments are mapped with SCIMapLocalSegment: here create returns
 * the local mapping through sci_local_segment_address). */
sci_error_t sci_create_segment(sci_desc_t *sd, uint32_t segment_id, size_t size,
                               sci_local_segment_t **seg);
/* Make the segment accessible by the adapter (SCIPrepareSegment). */
sci_error_t sci_prepare_segment(sci_local_segment_t *seg);
/* Let remote nodes connect; expected_connections is how many will (the
 * provider frees the name once that many are mapped). */
sci_error_t sci_set_segment_available(sci_local_segment_t *seg, unsigned expected_connections);
sci_error_t sci_set_segment_unavailable(sci_local_segment_t *seg);
void *sci_local_segment_address(const sci_local_segment_t *seg);
size_t sci_local_segment_size(const sci_local_segment_t *seg);
/* Unmap and remove (SCIUnmapSegment + SCIRemoveSegment).  Marks the
 * segment dead first so connected peers see a transfer error. */
void sci_remove_segment(sci_local_segment_t *seg);

/* --- remote segments ----------------------------------------------------- */
/* Connect to segment_id on node_id; SCI_ERR_NO_SUCH_SEGMENT when it is not
 * (yet) available: the caller may retry later. */
sci_error_t sci_connect_segment(sci_desc_t *sd, uint32_t node_id, uint32_t segment_id,
                                sci_remote_segment_t **rseg);
/* Map offset..offset+size of the remote segment (SCIMapRemoteSegment).
 * A write-through mapping (ofi's shadow) reads zero until stored into. */
void *sci_map_remote_segment(sci_remote_segment_t *rseg, size_t offset, size_t size);
size_t sci_remote_segment_size(const sci_remote_segment_t *rseg);
/* Unmap and disconnect (SCIUnmapSegment + SCIDisconnectSegment). */
void sci_disconnect_segment(sci_remote_segment_t *rseg);
/* Write-through mappings (SCIMemWrite / SCIFlush): 1 when the mapping of
 * rseg is a local shadow whose stores reach the owner only through
 * sci_flush (ofi: the fabric cannot map remote memory), 0 when stores
 * through the mapping are the remote stores (shm). */
int sci_remote_write_through(const sci_remote_segment_t *rseg);
/* Push offset..offset+len of the mapping to the owner.  Flushes of one
 * segment land in the order they were issued (a later flush is never
 * seen before an earlier one).  shm: nothing to do. */
sci_error_t sci_flush(sci_remote_segment_t *rseg, size_t offset, size_t len);
/* Push offset..offset+len, then the 8-byte word at word_offset, so that
 * the owner sees the word's new value only after those bytes: the
 * publish of a ring slot (its bytes, then the sequence the consumer
 * polls).  The word's values only grow, by less than 2^23 from one
 * publish to the next.  shm: nothing to do; ofi: one write that carries
 * the word (remote CQ data), which the owner stores when it lands. */
sci_error_t sci_flush_publish(sci_remote_segment_t *rseg, size_t offset, size_t len,
                              size_t word_offset);
/* sci_flush_publish of a ring slot whose tail the caller holds elsewhere:
 * offset..offset+len of the mapping, then buflen bytes of buf, which land
 * right after them at the owner, then the word, in one write.  The
 * mapping from offset+len on is not written.  buf is read until
 * sci_dma_reap hands back cookie (with the write's status): the caller
 * keeps it until then.  SCI_ERR_NOT_SUPPORTED: the provider cannot (shm,
 * where the mapping is the remote memory): copy buf into the mapping and
 * use sci_flush_publish. */
sci_error_t sci_flush_publish_from(sci_remote_segment_t *rseg, size_t offset, size_t len,
                                   const void *buf, size_t buflen, size_t word_offset,
                                   void *cookie);

/* --- sequences: transfer error checks ------------------------------------ */
sci_error_t sci_create_map_sequence(sci_remote_segment_t *rseg, sci_sequence_t **seq);
void sci_remove_sequence(sci_sequence_t *seq);
sci_error_t sci_start_sequence(sci_sequence_t *seq);
/* SCI_ERR_OK; SCI_ERR_DISCONNECTED once the owner removed the segment (an
 * orderly exit, also after the owner ended); SCI_ERR_TRANSFER_FAILED once
 * the owner is gone without removing it (it died).  Not for the fast path
 * (may do a system call). */
sci_error_t sci_check_sequence(sci_sequence_t *seq);

/* Order all remote stores issued before the barrier before any later one
 * (SCIStoreBarrier).  For the shm provider: a release fence. */
static inline void sci_store_barrier(void)
{
    tc_atomic_fence_release();
}

/* --- memory registration for DMA ------------------------------------------ */
sci_error_t sci_register_memory(sci_desc_t *sd, void *addr, size_t len, sci_mem_handle_t *handle);
void sci_deregister_memory(sci_desc_t *sd, sci_mem_handle_t *handle);

/* --- DMA engine ----------------------------------------------------------- */
sci_error_t sci_create_dma_queue(sci_desc_t *sd, unsigned max_entries, sci_dma_queue_t **dq);
void sci_remove_dma_queue(sci_dma_queue_t *dq);
/* Queue one transfer between local memory and the remote registered region
 * (remote_addr must lie inside it). */
sci_error_t sci_dma_enqueue(sci_dma_queue_t *dq, int direction, void *local_addr,
                            const sci_mem_handle_t *remote, uint64_t remote_addr, size_t len);
/* Start the queued transfers (SCIStartDmaTransfer). */
sci_error_t sci_dma_start(sci_dma_queue_t *dq);
/* Wait for the queue to drain; returns the first error of the batch. */
sci_error_t sci_dma_wait(sci_dma_queue_t *dq);
/* A queue is driven by one thread at a time, as SISCI's is.  After
 * share, sci_dma_transfer may be called by several threads at once (the
 * provider serialises them); without it, it takes no lock. */
sci_error_t sci_dma_queue_share(sci_dma_queue_t *dq);
/* Enqueue, start and wait for one transfer (the synchronous use). */
sci_error_t sci_dma_transfer(sci_dma_queue_t *dq, int direction, void *local_addr,
                             const sci_mem_handle_t *remote, uint64_t remote_addr, size_t len);
/* SCI_ERR_OK if the engine can be used on this host, else why not. */
sci_error_t sci_dma_probe(sci_desc_t *sd);
/* An asynchronous transfer (SCIStartDmaTransfer with a callback): the
 * checks of sci_dma_enqueue, then posted and left running; SCI_ERR_OK
 * means that sci_dma_reap will return the cookie once, with the
 * transfer's status.  Any thread may post; the transfers progress in
 * sci_progress.  SCI_ERR_NOT_SUPPORTED: the provider has only the
 * synchronous engine (shm). */
sci_error_t sci_dma_post(sci_desc_t *sd, int direction, void *local_addr,
                         const sci_mem_handle_t *remote, uint64_t remote_addr, size_t len,
                         void *cookie);
/* Up to max finished posts: their cookies and statuses; the count. */
int sci_dma_reap(sci_desc_t *sd, void **cookies, sci_error_t *status, int max);

/* text of an error code */
const char *sci_strerror(sci_error_t err);

#ifdef __cplusplus
}
#endif

#endif /* SCI_DEVICE_H */
