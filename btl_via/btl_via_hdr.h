/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/*
 * btl_via_hdr.h: everything btl_via puts on the wire: the 32-bit
 * immediate data of every send descriptor (and of the RDMA write that
 * ends a put), which is the whole BTL header (the payload is ob1's bytes
 * alone), and the modex record.  docs/btl_via.md describes the same
 * formats; keep the two in step.
 */

#ifndef MCA_BTL_VIA_HDR_H
#define MCA_BTL_VIA_HDR_H

#include <stddef.h>
#include <stdint.h>

#include "vipl.h"

/*
 * Immediate data of a send descriptor:
 *   bits  0..7   Open MPI tag (AM only)
 *   bits  8..11  kind (MCA_BTL_VIA_KIND_*)
 *   bits 12..31  credits returned (receive descriptors the sender of
 *                this message re-posted for us since its last message;
 *                MPI-BIP's piggy-backed credits, common/tc_credits)
 */
#define MCA_BTL_VIA_IMM_TAG_MASK 0xffu
#define MCA_BTL_VIA_IMM_KIND_SHIFT 8
#define MCA_BTL_VIA_IMM_KIND_MASK 0xfu
#define MCA_BTL_VIA_IMM_CREDIT_SHIFT 12
#define MCA_BTL_VIA_IMM_CREDIT_MAX 0xfffffu

enum {
    MCA_BTL_VIA_KIND_AM = 1,       /* active message for the tag */
    MCA_BTL_VIA_KIND_CREDIT = 2,   /* credits only, no payload */
    MCA_BTL_VIA_KIND_PUT_DONE = 3, /* end of a put (RDMA write with immediate) */
    MCA_BTL_VIA_KIND_MAX = 4
};

#define MCA_BTL_VIA_IMM(kind, tag, credits)                                                 \
    ((((uint32_t) (credits) &MCA_BTL_VIA_IMM_CREDIT_MAX) << MCA_BTL_VIA_IMM_CREDIT_SHIFT) | \
     (((uint32_t) (kind) &MCA_BTL_VIA_IMM_KIND_MASK) << MCA_BTL_VIA_IMM_KIND_SHIFT) |       \
     ((uint32_t) (tag) &MCA_BTL_VIA_IMM_TAG_MASK))
#define MCA_BTL_VIA_IMM_KIND(imm) \
    (((imm) >> MCA_BTL_VIA_IMM_KIND_SHIFT) & MCA_BTL_VIA_IMM_KIND_MASK)
#define MCA_BTL_VIA_IMM_TAGOF(imm) ((imm) &MCA_BTL_VIA_IMM_TAG_MASK)
#define MCA_BTL_VIA_IMM_CREDITS(imm) ((imm) >> MCA_BTL_VIA_IMM_CREDIT_SHIFT)

_Static_assert(MCA_BTL_VIA_IMM_CREDIT_SHIFT + 20 == 32, "credits fill the top of the immediate");
_Static_assert(MCA_BTL_VIA_KIND_MAX <= MCA_BTL_VIA_IMM_KIND_MASK, "kinds fit their field");

/* modex record: a header, then for each device slot (0: this host's
 * peers, emu; 1: other hosts, ofi or verbs) one VI address per process
 * of the job (index: slot * nprocs + the peer's vpid; the entry for vpid
 * v is the VI this process created for v on that device; zeros when the
 * slot is not open) */
#define MCA_BTL_VIA_MODEX_MAGIC 0x56494132u /* "VIA2" */
typedef struct mca_btl_via_modex_hdr {
    uint32_t magic;
    uint32_t provider;         /* per slot a byte (1 emu, 2 verbs, 3 ofi; 0 none) */
    uint32_t nprocs;           /* entries that follow */
    uint32_t recv_descriptors; /* credits: must match on both sides */
    uint32_t recv_size;        /* bytes of each receive buffer */
    uint32_t max_transfer;     /* bytes per RDMA descriptor */
} mca_btl_via_modex_hdr_t;
_Static_assert(sizeof(mca_btl_via_modex_hdr_t) == 24, "modex header layout");
_Static_assert(offsetof(mca_btl_via_modex_hdr_t, magic) == 0, "modex magic offset");
_Static_assert(offsetof(mca_btl_via_modex_hdr_t, provider) == 4, "modex provider offset");
_Static_assert(offsetof(mca_btl_via_modex_hdr_t, nprocs) == 8, "modex nprocs offset");
_Static_assert(offsetof(mca_btl_via_modex_hdr_t, recv_descriptors) == 12, "modex credits offset");
_Static_assert(offsetof(mca_btl_via_modex_hdr_t, recv_size) == 16, "modex buffer size offset");
_Static_assert(offsetof(mca_btl_via_modex_hdr_t, max_transfer) == 20, "modex max transfer offset");
_Static_assert(sizeof(vipl_vi_address_t) == VIPL_ADDR_BYTES, "VI address layout");

#endif /* MCA_BTL_VIA_HDR_H */
