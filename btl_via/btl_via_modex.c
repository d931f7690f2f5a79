/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/*
 * btl_via_modex.c: the checks of a peer's modex record (btl_via_hdr.h),
 * without Open MPI, so that a unit test feeds it every malformed record
 * it can make (tests/unit/test_via_modex.c).
 */

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "btl_via_hdr.h"

size_t mca_btl_via_modex_size(uint32_t nprocs)
{
    const size_t per_proc = (size_t) MCA_BTL_VIA_MODEX_SLOTS * sizeof(vipl_vi_address_t);

    if (0 == nprocs || nprocs > (SIZE_MAX - sizeof(mca_btl_via_modex_hdr_t)) / per_proc) {
        return 0;
    }
    return sizeof(mca_btl_via_modex_hdr_t) + (size_t) nprocs * per_proc;
}

int mca_btl_via_modex_parse(const void *rec, size_t size, uint32_t nprocs, uint32_t my_vpid,
                            int slot, const mca_btl_via_modex_slot_t *mine,
                            mca_btl_via_modex_slot_t *theirs, vipl_vi_address_t *addr)
{
    mca_btl_via_modex_hdr_t hdr;
    size_t want = mca_btl_via_modex_size(nprocs);

    if (NULL == rec || slot < 0 || slot >= MCA_BTL_VIA_MODEX_SLOTS || my_vpid >= nprocs ||
        0 == want || size != want) {
        return -EPROTO;
    }
    /* the record may not be aligned for the struct: copied */
    memcpy(&hdr, rec, sizeof(hdr));
    if (MCA_BTL_VIA_MODEX_MAGIC != hdr.magic || hdr.nprocs != nprocs) {
        return -EPROTO;
    }
    *theirs = hdr.slot[slot];
    if (0 == theirs->provider || theirs->provider != mine->provider) {
        return -ENOENT;
    }
    if (theirs->recv_descriptors != mine->recv_descriptors ||
        theirs->recv_size != mine->recv_size) {
        return -ERANGE;
    }
    memcpy(addr,
           (const char *) rec + sizeof(hdr) +
               ((size_t) slot * nprocs + my_vpid) * sizeof(vipl_vi_address_t),
           sizeof(*addr));
    return 0;
}

int mca_btl_via_modex_parse_nic(const void *rec, size_t size, int slot,
                                const mca_btl_via_modex_slot_t *mine,
                                mca_btl_via_modex_slot_t *theirs, vipl_vi_address_t *addr)
{
    mca_btl_via_modex_hdr_t hdr;

    if (NULL == rec || size < sizeof(hdr)) {
        return -EPROTO;
    }
    memcpy(&hdr, rec, sizeof(hdr));
    /* the first entry of the slot: every one names the same NIC */
    return mca_btl_via_modex_parse(rec, size, hdr.nprocs, 0, slot, mine, theirs, addr);
}
