/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * sci_provider.h: the provider table behind sci_device.h.  Every object
 * a provider hands out (descriptor, segments, sequence, DMA queue) starts
 * with a sci_obj_t naming its provider's ops, so sci_provider.c sends each
 * call to the provider that made the object; sci_open picks the provider
 * by name.  Providers: shm (sci_shm.c, one host) and ofi (sci_ofi.c,
 * libfabric RMA across hosts, when built).  Internal to the device layer.
 */

#ifndef SCI_PROVIDER_H
#define SCI_PROVIDER_H

#include <stdlib.h>

#include "sci_device.h"

#ifdef __cplusplus
extern "C" {
#endif

struct sci_provider_ops;

typedef struct sci_obj {
    const struct sci_provider_ops *ops;
} sci_obj_t;

#define SCI_OPS(o) (((const sci_obj_t *) (const void *) (o))->ops)

/* A zeroed object of size bytes (its sci_obj_t first) made by the
 * provider of ops; NULL when there is no memory. */
static inline void *sci_obj_new(size_t size, const struct sci_provider_ops *ops)
{
    sci_obj_t *o = calloc(1, size);

    if (NULL != o) {
        o->ops = ops;
    }
    return o;
}

typedef struct sci_provider_ops {
    const char *name;
    sci_error_t (*open)(const sci_open_params_t *params, sci_desc_t **sd);
    void (*close)(sci_desc_t *sd);
    uint32_t (*local_node_id)(const sci_desc_t *sd);
    sci_error_t (*create_segment)(sci_desc_t *sd, uint32_t segment_id, size_t size,
                                  sci_local_segment_t **seg);
    sci_error_t (*prepare_segment)(sci_local_segment_t *seg);
    sci_error_t (*set_segment_available)(sci_local_segment_t *seg, unsigned expected);
    sci_error_t (*set_segment_unavailable)(sci_local_segment_t *seg);
    void *(*local_segment_address)(const sci_local_segment_t *seg);
    size_t (*local_segment_size)(const sci_local_segment_t *seg);
    void (*remove_segment)(sci_local_segment_t *seg);
    sci_error_t (*connect_segment)(sci_desc_t *sd, uint32_t node_id, uint32_t segment_id,
                                   sci_remote_segment_t **rseg);
    void *(*map_remote_segment)(sci_remote_segment_t *rseg, size_t offset, size_t size);
    size_t (*remote_segment_size)(const sci_remote_segment_t *rseg);
    void (*disconnect_segment)(sci_remote_segment_t *rseg);
    sci_error_t (*create_map_sequence)(sci_remote_segment_t *rseg, sci_sequence_t **seq);
    void (*remove_sequence)(sci_sequence_t *seq);
    sci_error_t (*start_sequence)(sci_sequence_t *seq);
    sci_error_t (*check_sequence)(sci_sequence_t *seq);
    sci_error_t (*register_memory)(sci_desc_t *sd, void *addr, size_t len,
                                   sci_mem_handle_t *handle);
    void (*deregister_memory)(sci_desc_t *sd, sci_mem_handle_t *handle);
    sci_error_t (*create_dma_queue)(sci_desc_t *sd, unsigned max_entries, sci_dma_queue_t **dq);
    void (*remove_dma_queue)(sci_dma_queue_t *dq);
    sci_error_t (*dma_enqueue)(sci_dma_queue_t *dq, int direction, void *local_addr,
                               const sci_mem_handle_t *remote, uint64_t remote_addr, size_t len);
    sci_error_t (*dma_start)(sci_dma_queue_t *dq);
    sci_error_t (*dma_wait)(sci_dma_queue_t *dq);
    sci_error_t (*dma_queue_share)(sci_dma_queue_t *dq);
    sci_error_t (*dma_transfer)(sci_dma_queue_t *dq, int direction, void *local_addr,
                                const sci_mem_handle_t *remote, uint64_t remote_addr, size_t len);
    sci_error_t (*dma_probe)(sci_desc_t *sd);
    /* optional: asynchronous transfers */
    sci_error_t (*dma_post)(sci_desc_t *sd, int direction, void *local_addr,
                            const sci_mem_handle_t *remote, uint64_t remote_addr, size_t len,
                            void *cookie);
    int (*dma_reap)(sci_desc_t *sd, void **cookies, sci_error_t *status, int max);
    /* optional (NULL: the shm behaviour) */
    sci_error_t (*flush)(sci_remote_segment_t *rseg, size_t offset, size_t len);
    /* SCI_ERR_NOT_SUPPORTED: the caller falls back to two flushes */
    sci_error_t (*flush_publish)(sci_remote_segment_t *rseg, size_t offset, size_t len,
                                 size_t word_offset);
    /* optional (NULL: SCI_ERR_NOT_SUPPORTED, the caller copies) */
    sci_error_t (*flush_publish_from)(sci_remote_segment_t *rseg, size_t offset, size_t len,
                                      const void *buf, size_t buflen, size_t word_offset,
                                      void *cookie);
    sci_error_t (*export_directory)(sci_desc_t *sd, void *buf, size_t buflen, size_t *len);
    sci_error_t (*import_node)(sci_desc_t *sd, uint32_t node_id, uint32_t dir_id, uint64_t name,
                               const void *buf, size_t len);
    /* optional (NULL: SCI_ERR_NOT_SUPPORTED / no offers) */
    sci_error_t (*offer_segment)(sci_desc_t *sd, uint32_t node_id, sci_local_segment_t *seg);
    int (*take_offer)(sci_desc_t *sd, uint64_t *name);
    int (*progress)(sci_desc_t *sd);
    void (*node_lost)(sci_desc_t *sd, uint32_t node_id);
} sci_provider_ops_t;

const sci_provider_ops_t *sci_shm_provider(void);
/* NULL when libfabric was not found at build time */
const sci_provider_ops_t *sci_ofi_provider(void);

#ifdef __cplusplus
}
#endif

#endif /* SCI_PROVIDER_H */
