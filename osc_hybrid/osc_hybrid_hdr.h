/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * osc_hybrid_hdr.h: the wire format of osc/hybrid's active messages.
 *
 * Every request, acknowledgement and notice is one message on the window's
 * private communicator with tag MCA_OSC_HYBRID_TAG_AM: a fixed header, then
 * nseg target segments, then (for inline data) the payload in the packed
 * representation of the target datatype. Bulk data of a large put and the
 * data of every reply travel as separate messages on a tag the origin chose
 * (see docs/osc_hybrid.md). Homogeneous peers only (same Open MPI, same
 * architecture): datatypes and ops travel as their Fortran handles.
 */

#ifndef MCA_OSC_HYBRID_HDR_H
#define MCA_OSC_HYBRID_HDR_H

#include <stddef.h>
#include <stdint.h>

/* Message types (hdr.type). */
enum {
    MCA_OSC_HYBRID_HDR_PUT = 1, /* segments + inline payload or DATA_FOLLOWS */
    MCA_OSC_HYBRID_HDR_GET,     /* segments; reply data on reply_tag */
    MCA_OSC_HYBRID_HDR_ACC,     /* segments + payload, op applied per element */
    MCA_OSC_HYBRID_HDR_GACC,    /* as ACC; old values back on reply_tag */
    MCA_OSC_HYBRID_HDR_CAS,     /* one segment; payload = origin, compare */
    MCA_OSC_HYBRID_HDR_LOCK,    /* arg = MPI_LOCK_SHARED / MPI_LOCK_EXCLUSIVE */
    MCA_OSC_HYBRID_HDR_LOCK_ACK,
    MCA_OSC_HYBRID_HDR_UNLOCK,
    MCA_OSC_HYBRID_HDR_UNLOCK_ACK,
    MCA_OSC_HYBRID_HDR_FLUSH,
    MCA_OSC_HYBRID_HDR_FLUSH_ACK,
    MCA_OSC_HYBRID_HDR_POST,     /* exposure epoch opened for the receiver */
    MCA_OSC_HYBRID_HDR_COMPLETE, /* access epoch of the sender closed */
    MCA_OSC_HYBRID_HDR_ERROR,    /* arg = OMPI error code of a failed op */
    MCA_OSC_HYBRID_HDR_TYPE_MAX
};

/* hdr.flags */
#define MCA_OSC_HYBRID_FLAG_DATA_FOLLOWS 0x01 /* put data comes on reply_tag */

typedef struct mca_osc_hybrid_hdr_t {
    uint8_t type;
    uint8_t flags;
    uint16_t reserved;
    int32_t op;           /* MPI_Op_c2f() of the op (ACC, GACC) */
    int32_t dt;           /* MPI_Type_c2f() of the element type (ACC, GACC, CAS) */
    uint32_t nseg;        /* segments that follow the header */
    uint64_t stream_len;  /* bytes the segments cover, = sum of their len */
    uint64_t payload_len; /* inline payload bytes after the segments */
    int64_t disp;         /* target_disp (dynamic windows: an address) */
    int32_t reply_tag;    /* tag of the reply or of the following data */
    int32_t arg;          /* lock type, error code */
} mca_osc_hybrid_hdr_t;

/* One contiguous piece of the target region, relative to disp. */
typedef struct mca_osc_hybrid_seg_t {
    int64_t off;
    uint64_t len;
} mca_osc_hybrid_seg_t;

_Static_assert(sizeof(mca_osc_hybrid_hdr_t) == 48, "hybrid header is 48 bytes");
_Static_assert(offsetof(mca_osc_hybrid_hdr_t, type) == 0, "hybrid header layout");
_Static_assert(offsetof(mca_osc_hybrid_hdr_t, flags) == 1, "hybrid header layout");
_Static_assert(offsetof(mca_osc_hybrid_hdr_t, reserved) == 2, "hybrid header layout");
_Static_assert(offsetof(mca_osc_hybrid_hdr_t, op) == 4, "hybrid header layout");
_Static_assert(offsetof(mca_osc_hybrid_hdr_t, dt) == 8, "hybrid header layout");
_Static_assert(offsetof(mca_osc_hybrid_hdr_t, nseg) == 12, "hybrid header layout");
_Static_assert(offsetof(mca_osc_hybrid_hdr_t, stream_len) == 16, "hybrid header layout");
_Static_assert(offsetof(mca_osc_hybrid_hdr_t, payload_len) == 24, "hybrid header layout");
_Static_assert(offsetof(mca_osc_hybrid_hdr_t, disp) == 32, "hybrid header layout");
_Static_assert(offsetof(mca_osc_hybrid_hdr_t, reply_tag) == 40, "hybrid header layout");
_Static_assert(offsetof(mca_osc_hybrid_hdr_t, arg) == 44, "hybrid header layout");
_Static_assert(offsetof(mca_osc_hybrid_seg_t, off) == 0, "hybrid segment layout");
_Static_assert(offsetof(mca_osc_hybrid_seg_t, len) == 8, "hybrid segment layout");
_Static_assert(sizeof(mca_osc_hybrid_seg_t) == 16, "hybrid segment is 16 bytes");
/* The payload starts 16-byte aligned, so reductions on it are aligned. */
_Static_assert(sizeof(mca_osc_hybrid_hdr_t) % 16 == 0, "payload alignment");

/* Tags on the window's private communicator. Replies (target to origin) and
 * bulk data (origin to target) use disjoint ranges, both allocated by the
 * origin, so a reply never matches a data message of the same peer. */
#define MCA_OSC_HYBRID_TAG_AM 1
#define MCA_OSC_HYBRID_TAG_REPLY 0x00010000
#define MCA_OSC_HYBRID_TAG_DATA 0x10010000
#define MCA_OSC_HYBRID_TAG_SPAN 0x0fff0000

/* The most bytes one request covers (stream_len): origins split larger
 * transfers, targets refuse more. */
#define MCA_OSC_HYBRID_STREAM_MAX ((uint64_t) 1 << 30)

/* Changes with every change of the records or their rules; every process
 * of a window must have the same (checked at window creation). */
#define MCA_OSC_HYBRID_WIRE_VERSION 2

#endif /* MCA_OSC_HYBRID_HDR_H */
