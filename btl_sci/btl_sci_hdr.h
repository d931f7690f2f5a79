/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * btl_sci_hdr.h: everything btl_sci puts in SCI memory or sends to a peer:
 * the layout of the per-peer segments and of the doorbell segment, the
 * message kinds carried in the ring slots' tag word, the atomic request
 * and response bodies, and the modex record.  docs/btl_sci.md describes
 * the same formats; keep the two in step.
 */

#ifndef MCA_BTL_SCI_HDR_H
#define MCA_BTL_SCI_HDR_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tc_common.h"
#include "tc_ring.h"

/*
 * Per-peer segment L[owner][peer]: created by `owner`, written by `peer`
 * with remote stores, read by `owner` only (SCI: remote writes, local
 * reads).  Offsets into the user area of the segment:
 *
 *   0    ctrl line 0: uint64 consumed   peer's consumer position of the ring
 *                                       owner->peer (lives in L[peer][owner]);
 *                                       tc_ring's "Completed" counter
 *   64   ctrl line 1: uint32 idle       1: peer does not poll the ring
 *                                       owner->peer actively; owner must
 *                                       ring peer's doorbell after a send
 *   128  tc_ring (header + slots) carrying peer->owner messages
 */
#define MCA_BTL_SCI_SEG_CONSUMED_OFF 0
#define MCA_BTL_SCI_SEG_IDLE_OFF 64
#define MCA_BTL_SCI_SEG_RING_OFF 128

/* Doorbell segment D[owner]: one byte per node-local rank, set to 1 by
 * that peer after a send while the owner told it (idle flag) that it is
 * not polling its ring; cleared by the owner. */
#define MCA_BTL_SCI_DOORBELL_ID 0xffffu

/* user data of one ring slot to a peer of this host by default, and the
 * bytes of a slot kept for the upper layer's header on top of it (the
 * default eager limit is their sum) */
#define MCA_BTL_SCI_EAGER_DATA 4096
#define MCA_BTL_SCI_HDR_ROOM 64

/* segment ids: owner's local rank in the high half, peer's in the low */
#define MCA_BTL_SCI_SEGMENT_ID(owner, peer) \
    ((((uint32_t) (owner)) << 16) | ((uint32_t) (peer) &0xffffu))

/* The ring slot's 32-bit tag word: the Open MPI tag in the low byte, the
 * message kind in the next byte. */
#define MCA_BTL_SCI_KIND_SHIFT 8
#define MCA_BTL_SCI_TAG_MASK 0xffu
enum {
    MCA_BTL_SCI_KIND_AM = 0,         /* active message for tag */
    MCA_BTL_SCI_KIND_ATOMIC_REQ = 1, /* atomic to execute at the target */
    MCA_BTL_SCI_KIND_ATOMIC_RSP = 2, /* its result */
    MCA_BTL_SCI_KIND_MAX = 3
};
#define MCA_BTL_SCI_TAGWORD(kind, tag) \
    ((((uint32_t) (kind)) << MCA_BTL_SCI_KIND_SHIFT) | ((uint32_t) (tag) &MCA_BTL_SCI_TAG_MASK))

/* atomic operations requested at the target */
enum {
    MCA_BTL_SCI_AOP_ADD = 1,
    MCA_BTL_SCI_AOP_AND = 2,
    MCA_BTL_SCI_AOP_OR = 3,
    MCA_BTL_SCI_AOP_XOR = 4,
    MCA_BTL_SCI_AOP_SWAP = 5,
    MCA_BTL_SCI_AOP_MIN = 6,
    MCA_BTL_SCI_AOP_MAX = 7,
    MCA_BTL_SCI_AOP_CSWAP = 8,
    MCA_BTL_SCI_AOP_LAND = 9,
    MCA_BTL_SCI_AOP_LOR = 10,
    MCA_BTL_SCI_AOP_LXOR = 11
};
#define MCA_BTL_SCI_AFLAG_32BIT 0x1u

typedef struct mca_btl_sci_atomic_req {
    uint32_t op_index; /* initiator's pending-op slot */
    uint32_t op_gen;   /* generation of that slot (stale replies) */
    uint32_t op;       /* MCA_BTL_SCI_AOP_* */
    uint32_t flags;    /* MCA_BTL_SCI_AFLAG_* */
    uint64_t address;  /* target virtual address */
    uint64_t operand;  /* value (cswap: the new value) */
    uint64_t compare;  /* cswap: expected value */
    uint64_t reg_base; /* target registration the initiator used */
    uint64_t reg_len;
} mca_btl_sci_atomic_req_t;

typedef struct mca_btl_sci_atomic_rsp {
    uint32_t op_index;
    uint32_t op_gen;
    int32_t status; /* 0, or an OPAL error code */
    uint32_t pad;
    uint64_t result; /* value before the operation */
} mca_btl_sci_atomic_rsp_t;

/* modex record published at init */
typedef struct mca_btl_sci_modex {
    uint32_t node_id;    /* sci_local_node_id */
    uint32_t local_rank; /* node-local rank, names the segments */
    uint32_t nslots;     /* ring geometry of the shm rings: must match ours */
    uint32_t slot_size;
    int32_t pid;
    uint32_t ofi_nslots; /* ring geometry of the ofi rings: must match ours */
    uint32_t ofi_slot_size;
    uint32_t pad;
} mca_btl_sci_modex_t;

/* A peer's modex record as it arrived, len bytes of another process's
 * making: the fixed record copied into *rec (no alignment assumed) and
 * the rest (the ofi directory, parsed by its own parser) in *rest,
 * *restlen; -EPROTO when len cannot hold the record. */
static inline int mca_btl_sci_modex_parse(const void *buf, size_t len, mca_btl_sci_modex_t *rec,
                                          const void **rest, size_t *restlen)
{
    if (NULL == buf || len < sizeof(*rec)) {
        return -EPROTO;
    }
    memcpy(rec, buf, sizeof(*rec));
    *rest = (const uint8_t *) buf + sizeof(*rec);
    *restlen = len - sizeof(*rec);
    return 0;
}

/* Does the record's ring geometry for the module that joins us (shm: the
 * shm rings, else the ofi rings) equal ours? Rings of another geometry
 * would be read with the wrong slot size. */
static inline bool mca_btl_sci_modex_geometry_ok(const mca_btl_sci_modex_t *rec, bool shm,
                                                 uint32_t nslots, uint32_t slot_size)
{
    return shm ? rec->nslots == nslots && rec->slot_size == slot_size
               : rec->ofi_nslots == nslots && rec->ofi_slot_size == slot_size;
}

/* The layouts above are shared with the peer (ring slots, segments, the
 * modex): docs/btl_sci.md gives the same offsets. A change here is a
 * change of the format, on both sides. */
_Static_assert(0 == MCA_BTL_SCI_SEG_CONSUMED_OFF % TC_CACHELINE &&
                   0 == MCA_BTL_SCI_SEG_IDLE_OFF % TC_CACHELINE &&
                   0 == MCA_BTL_SCI_SEG_RING_OFF % TC_CACHELINE &&
                   MCA_BTL_SCI_SEG_CONSUMED_OFF + 8 <= MCA_BTL_SCI_SEG_IDLE_OFF &&
                   MCA_BTL_SCI_SEG_IDLE_OFF + 4 <= MCA_BTL_SCI_SEG_RING_OFF,
               "sci segment: control words on cache lines of their own, before the ring");
_Static_assert(MCA_BTL_SCI_KIND_MAX - 1 <= 0xff, "sci tag word: the kind fits its byte");

_Static_assert(56 == sizeof(mca_btl_sci_atomic_req_t), "sci atomic request: 56 bytes");
_Static_assert(0 == offsetof(mca_btl_sci_atomic_req_t, op_index) &&
                   4 == offsetof(mca_btl_sci_atomic_req_t, op_gen) &&
                   8 == offsetof(mca_btl_sci_atomic_req_t, op) &&
                   12 == offsetof(mca_btl_sci_atomic_req_t, flags) &&
                   16 == offsetof(mca_btl_sci_atomic_req_t, address) &&
                   24 == offsetof(mca_btl_sci_atomic_req_t, operand) &&
                   32 == offsetof(mca_btl_sci_atomic_req_t, compare) &&
                   40 == offsetof(mca_btl_sci_atomic_req_t, reg_base) &&
                   48 == offsetof(mca_btl_sci_atomic_req_t, reg_len),
               "sci atomic request: field offsets");

_Static_assert(24 == sizeof(mca_btl_sci_atomic_rsp_t), "sci atomic response: 24 bytes");
_Static_assert(0 == offsetof(mca_btl_sci_atomic_rsp_t, op_index) &&
                   4 == offsetof(mca_btl_sci_atomic_rsp_t, op_gen) &&
                   8 == offsetof(mca_btl_sci_atomic_rsp_t, status) &&
                   12 == offsetof(mca_btl_sci_atomic_rsp_t, pad) &&
                   16 == offsetof(mca_btl_sci_atomic_rsp_t, result),
               "sci atomic response: field offsets");

_Static_assert(32 == sizeof(mca_btl_sci_modex_t), "sci modex record: 32 bytes");
_Static_assert(0 == offsetof(mca_btl_sci_modex_t, node_id) &&
                   4 == offsetof(mca_btl_sci_modex_t, local_rank) &&
                   8 == offsetof(mca_btl_sci_modex_t, nslots) &&
                   12 == offsetof(mca_btl_sci_modex_t, slot_size) &&
                   16 == offsetof(mca_btl_sci_modex_t, pid) &&
                   20 == offsetof(mca_btl_sci_modex_t, ofi_nslots) &&
                   24 == offsetof(mca_btl_sci_modex_t, ofi_slot_size) &&
                   28 == offsetof(mca_btl_sci_modex_t, pad),
               "sci modex record: field offsets");

#endif /* MCA_BTL_SCI_HDR_H */
