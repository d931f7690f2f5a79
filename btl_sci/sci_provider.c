/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * sci_provider.c: sci_device.h's calls, each sent to the provider that
 * made its object (sci_provider.h); sci_open picks the provider by name.
 */

#include <stddef.h>
#include <string.h>

#include "tc_config.h"

#include "sci_device.h"
#include "sci_provider.h"

#ifdef TC_HAVE_SCI_OFI
#include <rdma/fabric.h>
#endif

#ifndef TC_HAVE_SCI_OFI
const sci_provider_ops_t *sci_ofi_provider(void)
{
    return NULL;
}
#endif

const char *sci_ofi_default_fabric(void)
{
#ifdef TC_HAVE_SCI_OFI
    uint32_t v = fi_version();

    /* libfabric 2.x: tcp;ofi_rxm crashed survivors in fi_cq_read after a
     * peer died (fault tolerance); the tcp provider's own endpoint did
     * not and is as fast there. docs/fault-tolerance.md section 4 */
    if (FI_MAJOR(v) >= 2) {
        return "tcp";
    }
    /* 1.17: the older tcp provider (alone or under ofi_rxm) writes and
     * reads a wake-up pipe for every completion it reports, two system
     * calls on every message received; the newer socket endpoint, named
     * net there, does not (docs/btl_sci.md section 8) */
    if (FI_VERSION(1, 17) <= v && v < FI_VERSION(1, 18)) {
        return "net";
    }
#endif
    return "tcp;ofi_rxm";
}

static const sci_provider_ops_t *sci_provider_lookup(const char *name)
{
    if (NULL == name || 0 == strcmp(name, "shm")) {
        return sci_shm_provider();
    }
    if (0 == strcmp(name, "ofi")) {
        return sci_ofi_provider();
    }
    return NULL;
}

const char *sci_provider_name(void)
{
    return NULL != sci_ofi_provider() ? "shm,ofi" : "shm";
}

int sci_provider_available(const char *name)
{
    return NULL != sci_provider_lookup(name);
}

const char *sci_desc_provider(const sci_desc_t *sd)
{
    return SCI_OPS(sd)->name;
}

const char *sci_strerror(sci_error_t err)
{
    switch (err) {
    case SCI_ERR_OK:
        return "success";
    case SCI_ERR_NOSPC:
        return "no space for the segment";
    case SCI_ERR_ACCESS:
        return "permission denied";
    case SCI_ERR_NO_SUCH_SEGMENT:
        return "no such segment";
    case SCI_ERR_TRANSFER_FAILED:
        return "transfer failed (remote side gone)";
    case SCI_ERR_ILLEGAL_PARAMETER:
        return "illegal parameter";
    case SCI_ERR_OUT_OF_RANGE:
        return "address out of range";
    case SCI_ERR_NOT_SUPPORTED:
        return "not supported on this host";
    case SCI_ERR_BUSY:
        return "queue full";
    case SCI_ERR_DISCONNECTED:
        return "the remote segment was removed by its owner";
    default:
        return "system error";
    }
}

sci_error_t sci_open(const sci_open_params_t *params, sci_desc_t **sd)
{
    const sci_provider_ops_t *ops;

    if (NULL == params || NULL == sd) {
        return SCI_ERR_ILLEGAL_PARAMETER;
    }
    ops = sci_provider_lookup(params->provider);
    if (NULL == ops) {
        return SCI_ERR_NOT_SUPPORTED;
    }
    return ops->open(params, sd);
}

void sci_close(sci_desc_t *sd)
{
    if (NULL != sd) {
        SCI_OPS(sd)->close(sd);
    }
}

uint32_t sci_local_node_id(const sci_desc_t *sd)
{
    return SCI_OPS(sd)->local_node_id(sd);
}

int sci_progress(sci_desc_t *sd)
{
    return NULL != SCI_OPS(sd)->progress ? SCI_OPS(sd)->progress(sd) : 0;
}

void sci_node_lost(sci_desc_t *sd, uint32_t node_id)
{
    if (NULL != sd && NULL != SCI_OPS(sd)->node_lost) {
        SCI_OPS(sd)->node_lost(sd, node_id);
    }
}

sci_error_t sci_export_directory(sci_desc_t *sd, void *buf, size_t buflen, size_t *len)
{
    if (NULL == sd || NULL == len) {
        return SCI_ERR_ILLEGAL_PARAMETER;
    }
    if (NULL == SCI_OPS(sd)->export_directory) {
        *len = 0;
        return SCI_ERR_OK;
    }
    return SCI_OPS(sd)->export_directory(sd, buf, buflen, len);
}

sci_error_t sci_import_node(sci_desc_t *sd, uint32_t node_id, const void *buf, size_t len)
{
    if (NULL == sd) {
        return SCI_ERR_ILLEGAL_PARAMETER;
    }
    if (NULL == SCI_OPS(sd)->import_node) {
        return SCI_ERR_OK;
    }
    return SCI_OPS(sd)->import_node(sd, node_id, node_id, node_id, buf, len);
}

sci_error_t sci_import_node_as(sci_desc_t *sd, uint32_t node_id, uint32_t dir_id, uint64_t name,
                               const void *buf, size_t len)
{
    if (NULL == sd) {
        return SCI_ERR_ILLEGAL_PARAMETER;
    }
    if (NULL == SCI_OPS(sd)->import_node) {
        return SCI_ERR_OK;
    }
    return SCI_OPS(sd)->import_node(sd, node_id, dir_id, name, buf, len);
}

sci_error_t sci_offer_segment(sci_desc_t *sd, uint32_t node_id, sci_local_segment_t *seg)
{
    if (NULL == sd || NULL == seg) {
        return SCI_ERR_ILLEGAL_PARAMETER;
    }
    if (NULL == SCI_OPS(sd)->offer_segment) {
        return SCI_ERR_NOT_SUPPORTED;
    }
    return SCI_OPS(sd)->offer_segment(sd, node_id, seg);
}

int sci_take_offer(sci_desc_t *sd, uint64_t *name)
{
    if (NULL == sd || NULL == name || NULL == SCI_OPS(sd)->take_offer) {
        return 0;
    }
    return SCI_OPS(sd)->take_offer(sd, name);
}

sci_error_t sci_create_segment(sci_desc_t *sd, uint32_t segment_id, size_t size,
                               sci_local_segment_t **seg)
{
    if (NULL == sd) {
        return SCI_ERR_ILLEGAL_PARAMETER;
    }
    return SCI_OPS(sd)->create_segment(sd, segment_id, size, seg);
}

sci_error_t sci_prepare_segment(sci_local_segment_t *seg)
{
    return NULL == seg ? SCI_ERR_ILLEGAL_PARAMETER : SCI_OPS(seg)->prepare_segment(seg);
}

sci_error_t sci_set_segment_available(sci_local_segment_t *seg, unsigned expected_connections)
{
    return NULL == seg ? SCI_ERR_ILLEGAL_PARAMETER
                       : SCI_OPS(seg)->set_segment_available(seg, expected_connections);
}

sci_error_t sci_set_segment_unavailable(sci_local_segment_t *seg)
{
    return NULL == seg ? SCI_ERR_ILLEGAL_PARAMETER : SCI_OPS(seg)->set_segment_unavailable(seg);
}

void *sci_local_segment_address(const sci_local_segment_t *seg)
{
    return SCI_OPS(seg)->local_segment_address(seg);
}

size_t sci_local_segment_size(const sci_local_segment_t *seg)
{
    return SCI_OPS(seg)->local_segment_size(seg);
}

void sci_remove_segment(sci_local_segment_t *seg)
{
    if (NULL != seg) {
        SCI_OPS(seg)->remove_segment(seg);
    }
}

sci_error_t sci_connect_segment(sci_desc_t *sd, uint32_t node_id, uint32_t segment_id,
                                sci_remote_segment_t **rseg)
{
    if (NULL == sd) {
        return SCI_ERR_ILLEGAL_PARAMETER;
    }
    return SCI_OPS(sd)->connect_segment(sd, node_id, segment_id, rseg);
}

void *sci_map_remote_segment(sci_remote_segment_t *rseg, size_t offset, size_t size)
{
    return NULL == rseg ? NULL : SCI_OPS(rseg)->map_remote_segment(rseg, offset, size);
}

size_t sci_remote_segment_size(const sci_remote_segment_t *rseg)
{
    return SCI_OPS(rseg)->remote_segment_size(rseg);
}

void sci_disconnect_segment(sci_remote_segment_t *rseg)
{
    if (NULL != rseg) {
        SCI_OPS(rseg)->disconnect_segment(rseg);
    }
}

int sci_remote_write_through(const sci_remote_segment_t *rseg)
{
    return NULL != rseg && NULL != SCI_OPS(rseg)->flush;
}

sci_error_t sci_flush(sci_remote_segment_t *rseg, size_t offset, size_t len)
{
    if (NULL == rseg) {
        return SCI_ERR_ILLEGAL_PARAMETER;
    }
    return NULL != SCI_OPS(rseg)->flush ? SCI_OPS(rseg)->flush(rseg, offset, len) : SCI_ERR_OK;
}

sci_error_t sci_flush_publish(sci_remote_segment_t *rseg, size_t offset, size_t len,
                              size_t word_offset)
{
    sci_error_t err;

    if (NULL == rseg) {
        return SCI_ERR_ILLEGAL_PARAMETER;
    }
    if (NULL != SCI_OPS(rseg)->flush_publish) {
        err = SCI_OPS(rseg)->flush_publish(rseg, offset, len, word_offset);
        if (SCI_ERR_NOT_SUPPORTED != err) {
            return err;
        }
    }
    /* flushes land in issue order: the bytes, then the word */
    err = sci_flush(rseg, offset, len);
    return SCI_ERR_OK != err ? err : sci_flush(rseg, word_offset, sizeof(uint64_t));
}

sci_error_t sci_flush_publish_from(sci_remote_segment_t *rseg, size_t offset, size_t len,
                                   const void *buf, size_t buflen, size_t word_offset, void *cookie)
{
    if (NULL == rseg) {
        return SCI_ERR_ILLEGAL_PARAMETER;
    }
    if (NULL == SCI_OPS(rseg)->flush_publish_from) {
        return SCI_ERR_NOT_SUPPORTED;
    }
    return SCI_OPS(rseg)->flush_publish_from(rseg, offset, len, buf, buflen, word_offset, cookie);
}

sci_error_t sci_create_map_sequence(sci_remote_segment_t *rseg, sci_sequence_t **seq)
{
    return NULL == rseg ? SCI_ERR_ILLEGAL_PARAMETER : SCI_OPS(rseg)->create_map_sequence(rseg, seq);
}

void sci_remove_sequence(sci_sequence_t *seq)
{
    if (NULL != seq) {
        SCI_OPS(seq)->remove_sequence(seq);
    }
}

sci_error_t sci_start_sequence(sci_sequence_t *seq)
{
    return NULL == seq ? SCI_ERR_ILLEGAL_PARAMETER : SCI_OPS(seq)->start_sequence(seq);
}

sci_error_t sci_check_sequence(sci_sequence_t *seq)
{
    return NULL == seq ? SCI_ERR_ILLEGAL_PARAMETER : SCI_OPS(seq)->check_sequence(seq);
}

sci_error_t sci_register_memory(sci_desc_t *sd, void *addr, size_t len, sci_mem_handle_t *handle)
{
    return NULL == sd ? SCI_ERR_ILLEGAL_PARAMETER
                      : SCI_OPS(sd)->register_memory(sd, addr, len, handle);
}

void sci_deregister_memory(sci_desc_t *sd, sci_mem_handle_t *handle)
{
    if (NULL != sd) {
        SCI_OPS(sd)->deregister_memory(sd, handle);
    }
}

sci_error_t sci_create_dma_queue(sci_desc_t *sd, unsigned max_entries, sci_dma_queue_t **dq)
{
    return NULL == sd ? SCI_ERR_ILLEGAL_PARAMETER
                      : SCI_OPS(sd)->create_dma_queue(sd, max_entries, dq);
}

void sci_remove_dma_queue(sci_dma_queue_t *dq)
{
    if (NULL != dq) {
        SCI_OPS(dq)->remove_dma_queue(dq);
    }
}

sci_error_t sci_dma_enqueue(sci_dma_queue_t *dq, int direction, void *local_addr,
                            const sci_mem_handle_t *remote, uint64_t remote_addr, size_t len)
{
    return NULL == dq
        ? SCI_ERR_ILLEGAL_PARAMETER
        : SCI_OPS(dq)->dma_enqueue(dq, direction, local_addr, remote, remote_addr, len);
}

sci_error_t sci_dma_start(sci_dma_queue_t *dq)
{
    return NULL == dq ? SCI_ERR_ILLEGAL_PARAMETER : SCI_OPS(dq)->dma_start(dq);
}

sci_error_t sci_dma_wait(sci_dma_queue_t *dq)
{
    return NULL == dq ? SCI_ERR_ILLEGAL_PARAMETER : SCI_OPS(dq)->dma_wait(dq);
}

sci_error_t sci_dma_queue_share(sci_dma_queue_t *dq)
{
    return NULL == dq ? SCI_ERR_ILLEGAL_PARAMETER : SCI_OPS(dq)->dma_queue_share(dq);
}

sci_error_t sci_dma_transfer(sci_dma_queue_t *dq, int direction, void *local_addr,
                             const sci_mem_handle_t *remote, uint64_t remote_addr, size_t len)
{
    return NULL == dq
        ? SCI_ERR_ILLEGAL_PARAMETER
        : SCI_OPS(dq)->dma_transfer(dq, direction, local_addr, remote, remote_addr, len);
}

sci_error_t sci_dma_probe(sci_desc_t *sd)
{
    return NULL == sd ? SCI_ERR_ILLEGAL_PARAMETER : SCI_OPS(sd)->dma_probe(sd);
}

sci_error_t sci_dma_post(sci_desc_t *sd, int direction, void *local_addr,
                         const sci_mem_handle_t *remote, uint64_t remote_addr, size_t len,
                         void *cookie)
{
    if (NULL == sd) {
        return SCI_ERR_ILLEGAL_PARAMETER;
    }
    return NULL == SCI_OPS(sd)->dma_post
        ? SCI_ERR_NOT_SUPPORTED
        : SCI_OPS(sd)->dma_post(sd, direction, local_addr, remote, remote_addr, len, cookie);
}

int sci_dma_reap(sci_desc_t *sd, void **cookies, sci_error_t *status, int max)
{
    if (NULL == sd || NULL == SCI_OPS(sd)->dma_reap || max <= 0) {
        return 0;
    }
    return SCI_OPS(sd)->dma_reap(sd, cookies, status, max);
}
