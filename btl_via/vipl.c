/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/*
 * vipl.c: what every VIPL provider shares: the table of the providers
 * built into this library (emu always, verbs with libibverbs, ofi with
 * libfabric) and the texts of return codes and descriptor status bits.
 * Each provider is one back end behind vipl_ops_t (vipl.h).
 */

#include <stdlib.h>
#include <string.h>

#include "tc_config.h"
#include "vipl.h"

extern const vipl_ops_t vipl_emu_ops;
#ifdef TC_HAVE_VIA_VERBS
extern const vipl_ops_t vipl_verbs_ops;
#endif
#ifdef TC_HAVE_VIA_OFI
extern const vipl_ops_t vipl_ofi_ops;
#endif

static const vipl_ops_t *const vipl_providers[] = {
    &vipl_emu_ops,
#ifdef TC_HAVE_VIA_VERBS
    &vipl_verbs_ops,
#endif
#ifdef TC_HAVE_VIA_OFI
    &vipl_ofi_ops,
#endif
};

const vipl_ops_t *vipl_provider(const char *name)
{
    if (NULL == name) {
        return NULL;
    }
    for (size_t i = 0; i < sizeof(vipl_providers) / sizeof(vipl_providers[0]); ++i) {
        if (0 == strcmp(name, vipl_providers[i]->name)) {
            return vipl_providers[i];
        }
    }
    return NULL;
}

void *vipl_host_mem_alloc(vipl_nic_t *nic, size_t len)
{
    void *p = NULL;

    (void) nic;
    return 0 == posix_memalign(&p, 4096, len ? len : 1) ? p : NULL;
}

void vipl_host_mem_free(vipl_nic_t *nic, void *ptr)
{
    (void) nic;
    free(ptr);
}

const char *vipl_strerror(vipl_return_t rc)
{
    switch (rc) {
    case VIPL_SUCCESS:
        return "success";
    case VIPL_NOT_DONE:
        return "not done";
    case VIPL_INVALID_PARAMETER:
        return "invalid parameter";
    case VIPL_ERROR_RESOURCE:
        return "out of resources";
    case VIPL_INVALID_RELIABILITY_LEVEL:
        return "reliability level not supported";
    case VIPL_INVALID_PTAG:
        return "invalid protection tag";
    case VIPL_INVALID_RDMAREAD:
        return "RDMA read not supported";
    case VIPL_DESCRIPTOR_ERROR:
        return "descriptor error";
    case VIPL_INVALID_STATE:
        return "VI in the wrong state";
    case VIPL_NOT_REACHABLE:
        return "peer not reachable";
    case VIPL_NO_DEVICE:
        return "no device";
    case VIPL_ERROR_NOT_SUPPORTED:
        return "not supported";
    }
    return "unknown error";
}

const char *vipl_status_string(uint32_t status)
{
    if (status & VIPL_STATUS_FORMAT_ERROR) {
        return "format error";
    }
    if (status & VIPL_STATUS_PROTECTION_ERROR) {
        return "local protection error";
    }
    if (status & VIPL_STATUS_LENGTH_ERROR) {
        return "length error";
    }
    if (status & VIPL_STATUS_FLUSHED_ERROR) {
        return "flushed (VI in error)";
    }
    if (status & VIPL_STATUS_TRANSPORT_ERROR) {
        return "transport error (peer gone)";
    }
    if (status & VIPL_STATUS_RDMA_PROT_ERROR) {
        return "RDMA protection error at the target";
    }
    if (status & VIPL_STATUS_REMOTE_DESC_ERROR) {
        return "no usable receive descriptor at the peer";
    }
    if (status & VIPL_STATUS_DONE) {
        return "done";
    }
    return "not done";
}
