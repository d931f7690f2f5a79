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
    /* credits returned early: an ordinary message without payload,
     * counted as one (mca_btl_via_endpoint_return_locked) */
    MCA_BTL_VIA_KIND_RETURN = 4,
    MCA_BTL_VIA_KIND_MAX = 5
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

/* what a receive completion is, from its status, immediate data and
 * length (the peer chose the last two: every case is checked here; the
 * credit count is checked by the credit account, the tag indexes a table
 * of 256) */
enum {
    MCA_BTL_VIA_RX_AM = 0,        /* ob1's message of length <= the buffer */
    MCA_BTL_VIA_RX_CREDIT = 1,    /* credit-only, length 0 */
    MCA_BTL_VIA_RX_PUT_DONE = 2,  /* a put's notice (verbs gives it a length) */
    MCA_BTL_VIA_RX_RETURN = 3,    /* credits returned early, length 0 */
    MCA_BTL_VIA_RX_ERROR = 4,     /* the descriptor completed with an error */
    MCA_BTL_VIA_RX_MALFORMED = 5, /* no immediate, unknown kind, bad length */
};

static inline int mca_btl_via_rx_class(uint32_t status, uint32_t imm, uint32_t length,
                                       uint32_t buf_len)
{
    if (status & VIPL_STATUS_ERROR_MASK) {
        return MCA_BTL_VIA_RX_ERROR;
    }
    if (!(status & VIPL_STATUS_IMMEDIATE)) {
        return MCA_BTL_VIA_RX_MALFORMED;
    }
    switch (MCA_BTL_VIA_IMM_KIND(imm)) {
    case MCA_BTL_VIA_KIND_AM:
        return length <= buf_len ? MCA_BTL_VIA_RX_AM : MCA_BTL_VIA_RX_MALFORMED;
    case MCA_BTL_VIA_KIND_CREDIT:
        return 0 == length ? MCA_BTL_VIA_RX_CREDIT : MCA_BTL_VIA_RX_MALFORMED;
    case MCA_BTL_VIA_KIND_RETURN:
        return 0 == length ? MCA_BTL_VIA_RX_RETURN : MCA_BTL_VIA_RX_MALFORMED;
    case MCA_BTL_VIA_KIND_PUT_DONE:
        return MCA_BTL_VIA_RX_PUT_DONE;
    default:
        return MCA_BTL_VIA_RX_MALFORMED;
    }
}
_Static_assert(MCA_BTL_VIA_KIND_MAX <= MCA_BTL_VIA_IMM_KIND_MASK, "kinds fit their field");

/* modex record: a header with each device slot's geometry (0: this
 * host's peers, emu; 1: other hosts, ofi or verbs: each slot is one BTL
 * module with its own buffer size), then for each slot one VI address
 * per process of the job (index: slot * nprocs + the peer's vpid; the
 * entry for vpid v is the VI this process created for v on that device;
 * zeros when the slot is not open).  A reader checks it with
 * mca_btl_via_modex_parse (btl_via_modex.c). */
#define MCA_BTL_VIA_MODEX_MAGIC 0x56494133u /* "VIA3" */
#define MCA_BTL_VIA_MODEX_SLOTS 2
typedef struct mca_btl_via_modex_slot {
    uint32_t provider;         /* 1 emu, 2 verbs, 3 ofi; 0 not open */
    uint32_t recv_descriptors; /* credits: must match on both sides */
    uint32_t recv_size;        /* bytes of each receive buffer: must match */
    uint32_t max_transfer;     /* bytes per RDMA descriptor */
} mca_btl_via_modex_slot_t;
typedef struct mca_btl_via_modex_hdr {
    uint32_t magic;
    uint32_t nprocs; /* addresses per slot that follow */
    mca_btl_via_modex_slot_t slot[MCA_BTL_VIA_MODEX_SLOTS];
} mca_btl_via_modex_hdr_t;
_Static_assert(sizeof(mca_btl_via_modex_slot_t) == 16, "modex slot layout");
_Static_assert(offsetof(mca_btl_via_modex_slot_t, provider) == 0, "modex slot provider offset");
_Static_assert(offsetof(mca_btl_via_modex_slot_t, recv_descriptors) == 4,
               "modex slot credits offset");
_Static_assert(offsetof(mca_btl_via_modex_slot_t, recv_size) == 8, "modex slot buffer size offset");
_Static_assert(offsetof(mca_btl_via_modex_slot_t, max_transfer) == 12,
               "modex slot max transfer offset");
_Static_assert(sizeof(mca_btl_via_modex_hdr_t) == 40, "modex header layout");
_Static_assert(offsetof(mca_btl_via_modex_hdr_t, magic) == 0, "modex magic offset");
_Static_assert(offsetof(mca_btl_via_modex_hdr_t, nprocs) == 4, "modex nprocs offset");
_Static_assert(offsetof(mca_btl_via_modex_hdr_t, slot) == 8, "modex slots offset");
_Static_assert(sizeof(vipl_vi_address_t) == VIPL_ADDR_BYTES, "VI address layout");

/* bytes of a record for a job of nprocs processes (0: too many) */
size_t mca_btl_via_modex_size(uint32_t nprocs);

/* A peer's record (it comes from another process: every field is
 * checked) and what this process needs from it on device slot `slot`:
 * the geometry the peer gives the slot (*theirs) and the address of the
 * VI the peer made, or will make, for my_vpid (*addr).  Returns 0; or
 * -EPROTO for a malformed record (size, magic, process count, slot),
 * -ENOENT when the peer has not the same provider open on that slot,
 * -ERANGE when its receive descriptors or buffer size differ from *mine
 * (*theirs says how). */
int mca_btl_via_modex_parse(const void *rec, size_t size, uint32_t nprocs, uint32_t my_vpid,
                            int slot, const mca_btl_via_modex_slot_t *mine,
                            mca_btl_via_modex_slot_t *theirs, vipl_vi_address_t *addr);

/* The same for a process of another job (its record has its job's
 * process count): the address of its NIC on slot `slot` (the entry of
 * vpid 0, whose VI index the caller drops: the peer names the VI it makes
 * for us when it asks).  Same returns. */
int mca_btl_via_modex_parse_nic(const void *rec, size_t size, int slot,
                                const mca_btl_via_modex_slot_t *mine,
                                mca_btl_via_modex_slot_t *theirs, vipl_vi_address_t *addr);

#endif /* MCA_BTL_VIA_HDR_H */
