/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * osc_hybrid_wire.c: the checks of a record of osc/hybrid's active
 * messages before the target uses any of it: framing against the bytes
 * of the message, the rules of each record type, and the range of the
 * segments in the window or its attached memory. No Open MPI state (only
 * mpi.h's lock constants): tests/unit drives these functions directly.
 */

#include <mpi.h>
#include <string.h>

#include "osc_hybrid_wire.h"

size_t mca_osc_hybrid_record_len(uint32_t nseg, uint64_t payload_len)
{
    size_t n = sizeof(mca_osc_hybrid_hdr_t) + (size_t) nseg * sizeof(mca_osc_hybrid_seg_t) +
        (size_t) payload_len;
    return (n + 15) & ~(size_t) 15;
}

static bool mca_osc_hybrid_wire_in(int32_t tag, int32_t first)
{
    return tag >= first && tag - first < MCA_OSC_HYBRID_TAG_SPAN;
}

/* The fields of a notice (everything but PUT .. CAS): a header alone,
 * whose only field in use is arg (lock type, error code). */
static int mca_osc_hybrid_wire_notice(const mca_osc_hybrid_hdr_t *h)
{
    if (0 != h->nseg || 0 != h->payload_len || 0 != h->stream_len || 0 != h->flags ||
        0 != h->reserved || 0 != h->op || 0 != h->dt || 0 != h->disp || 0 != h->reply_tag) {
        return MCA_OSC_HYBRID_WIRE_NOTICE;
    }
    if (MCA_OSC_HYBRID_HDR_LOCK == h->type && MPI_LOCK_SHARED != h->arg &&
        MPI_LOCK_EXCLUSIVE != h->arg) {
        return MCA_OSC_HYBRID_WIRE_LOCK_TYPE;
    }
    return MCA_OSC_HYBRID_WIRE_OK;
}

/* What makes a data request unanswerable: its reply tag (the origin's
 * receive waits on it) or separate put data the target cannot take off
 * the wire (the origin's send would never complete). */
static int mca_osc_hybrid_wire_answerable(const mca_osc_hybrid_hdr_t *h)
{
    switch (h->type) {
    case MCA_OSC_HYBRID_HDR_GET:
    case MCA_OSC_HYBRID_HDR_GACC:
    case MCA_OSC_HYBRID_HDR_CAS:
        if (!mca_osc_hybrid_wire_in(h->reply_tag, MCA_OSC_HYBRID_TAG_REPLY)) {
            return MCA_OSC_HYBRID_WIRE_TAG;
        }
        break;
    case MCA_OSC_HYBRID_HDR_PUT:
        if (h->flags & MCA_OSC_HYBRID_FLAG_DATA_FOLLOWS) {
            if (!mca_osc_hybrid_wire_in(h->reply_tag, MCA_OSC_HYBRID_TAG_DATA)) {
                return MCA_OSC_HYBRID_WIRE_TAG;
            }
            if (h->stream_len > MCA_OSC_HYBRID_STREAM_MAX) {
                return MCA_OSC_HYBRID_WIRE_DATA_LEN;
            }
        }
        break;
    default:
        break;
    }
    return MCA_OSC_HYBRID_WIRE_OK;
}

/* The rules of a data request that can be answered. */
static int mca_osc_hybrid_wire_request(const mca_osc_hybrid_rec_t *rec)
{
    const mca_osc_hybrid_hdr_t *h = &rec->hdr;
    bool follows = (0 != (h->flags & MCA_OSC_HYBRID_FLAG_DATA_FOLLOWS));
    uint64_t sum = 0, need;
    uint32_t i;

    if (0 != (h->flags & ~MCA_OSC_HYBRID_FLAG_DATA_FOLLOWS) || 0 != h->reserved ||
        (follows && MCA_OSC_HYBRID_HDR_PUT != h->type)) {
        return MCA_OSC_HYBRID_WIRE_FLAGS;
    }
    if ((MCA_OSC_HYBRID_HDR_PUT == h->type && !follows) || MCA_OSC_HYBRID_HDR_ACC == h->type) {
        if (0 != h->reply_tag) {
            return MCA_OSC_HYBRID_WIRE_STRAY_TAG;
        }
    }
    if (0 == h->nseg) {
        return MCA_OSC_HYBRID_WIRE_NO_SEGMENTS;
    }
    if (h->stream_len > MCA_OSC_HYBRID_STREAM_MAX) {
        return MCA_OSC_HYBRID_WIRE_STREAM_LEN;
    }
    /* the sum without overflow: every length is at most what is left of
     * stream_len */
    for (i = 0; i < h->nseg; ++i) {
        mca_osc_hybrid_seg_t s;
        memcpy(&s, &rec->segs[i], sizeof(s));
        if (0 == s.len) {
            return MCA_OSC_HYBRID_WIRE_EMPTY_SEG;
        }
        if (s.len > h->stream_len - sum) {
            return MCA_OSC_HYBRID_WIRE_SUM;
        }
        sum += s.len;
    }
    if (sum != h->stream_len) {
        return MCA_OSC_HYBRID_WIRE_SUM;
    }
    switch (h->type) {
    case MCA_OSC_HYBRID_HDR_PUT:
        need = follows ? 0 : h->stream_len;
        break;
    case MCA_OSC_HYBRID_HDR_GET:
        need = 0;
        break;
    case MCA_OSC_HYBRID_HDR_ACC:
        need = h->stream_len;
        break;
    case MCA_OSC_HYBRID_HDR_GACC:
        /* no payload only for MPI_NO_OP, which the caller checks once it
         * knows the op */
        need = (0 == h->payload_len) ? 0 : h->stream_len;
        break;
    default: /* CAS: one element, the new value and the compare value */
        if (1 != h->nseg || h->payload_len != 2 * h->stream_len) {
            return MCA_OSC_HYBRID_WIRE_CAS;
        }
        need = h->payload_len;
        break;
    }
    if (h->payload_len != need) {
        return MCA_OSC_HYBRID_WIRE_PAYLOAD_LEN;
    }
    return MCA_OSC_HYBRID_WIRE_OK;
}

int mca_osc_hybrid_check_record(const void *msg, size_t left, mca_osc_hybrid_rec_t *rec)
{
    const char *p = msg;
    mca_osc_hybrid_hdr_t *h = &rec->hdr;
    size_t room;
    int err;

    memset(rec, 0, sizeof(*rec));
    if (left < sizeof(*h)) {
        return MCA_OSC_HYBRID_WIRE_SHORT;
    }
    memcpy(h, p, sizeof(*h));
    if (h->type < MCA_OSC_HYBRID_HDR_PUT || h->type >= MCA_OSC_HYBRID_HDR_TYPE_MAX) {
        return MCA_OSC_HYBRID_WIRE_TYPE;
    }
    /* framing: segments, then payload, each against what is left */
    room = left - sizeof(*h);
    if (h->nseg > room / sizeof(mca_osc_hybrid_seg_t)) {
        return MCA_OSC_HYBRID_WIRE_NSEG;
    }
    room -= (size_t) h->nseg * sizeof(mca_osc_hybrid_seg_t);
    if (h->payload_len > room) {
        return MCA_OSC_HYBRID_WIRE_PAYLOAD;
    }
    rec->segs = (0 == h->nseg) ? NULL : (const mca_osc_hybrid_seg_t *) (p + sizeof(*h));
    rec->payload = (0 == h->payload_len)
        ? NULL
        : p + sizeof(*h) + (size_t) h->nseg * sizeof(mca_osc_hybrid_seg_t);
    /* the padding to 16 bytes may be missing after the last record */
    rec->len = mca_osc_hybrid_record_len(h->nseg, h->payload_len);
    if (rec->len > left) {
        rec->len = left;
    }

    if (h->type > MCA_OSC_HYBRID_HDR_CAS) {
        return mca_osc_hybrid_wire_notice(h);
    }
    err = mca_osc_hybrid_wire_answerable(h);
    if (MCA_OSC_HYBRID_WIRE_OK != err) {
        return err;
    }
    return mca_osc_hybrid_wire_request(rec);
}

/* Is [lo, lo + len) covered by the attached regions? Adjacent regions
 * together cover what neither covers alone. */
static bool mca_osc_hybrid_wire_attached(const mca_osc_hybrid_wire_win_t *w, uint64_t lo,
                                         uint64_t len)
{
    uint64_t pos = lo, end = lo + len; /* lo < 2^63, len <= 2^30: no overflow */
    int r;

    while (pos < end) {
        bool found = false;
        for (r = 0; r < w->nregions; ++r) {
            uint64_t rb = (uint64_t) (uintptr_t) w->regions[r].base;
            uint64_t rl = (uint64_t) w->regions[r].len;
            if (pos >= rb && pos - rb < rl) {
                /* a region ends inside the address space: rb + rl does
                 * not wrap */
                pos = (rl - (pos - rb) >= end - pos) ? end : rb + rl;
                found = true;
                break;
            }
        }
        if (!found) {
            return false;
        }
    }
    return true;
}

int mca_osc_hybrid_check_range(const mca_osc_hybrid_wire_win_t *w, int64_t disp,
                               const mca_osc_hybrid_seg_t *segs, uint32_t nseg, uintptr_t *origin)
{
    int64_t start = disp;
    uint32_t i;

    if (!w->dynamic && __builtin_mul_overflow(disp, w->disp_unit, &start)) {
        return MCA_OSC_HYBRID_WIRE_RANGE;
    }
    for (i = 0; i < nseg; ++i) {
        mca_osc_hybrid_seg_t s;
        int64_t lo;
        memcpy(&s, &segs[i], sizeof(s));
        if (__builtin_add_overflow(start, s.off, &lo) || lo < 0 ||
            s.len > MCA_OSC_HYBRID_STREAM_MAX) {
            return MCA_OSC_HYBRID_WIRE_RANGE;
        }
        if (w->dynamic) {
            if (!mca_osc_hybrid_wire_attached(w, (uint64_t) lo, s.len)) {
                return MCA_OSC_HYBRID_WIRE_RANGE;
            }
        } else if ((uint64_t) lo > w->size || s.len > w->size - (uint64_t) lo) {
            return MCA_OSC_HYBRID_WIRE_RANGE;
        }
    }
    *origin = w->dynamic ? (uintptr_t) start : w->base + (uintptr_t) start;
    return MCA_OSC_HYBRID_WIRE_OK;
}

bool mca_osc_hybrid_wire_fatal(int err)
{
    return err > MCA_OSC_HYBRID_WIRE_OK && err < MCA_OSC_HYBRID_WIRE_FATAL_END;
}

const char *mca_osc_hybrid_wire_strerror(int err)
{
    switch (err) {
    case MCA_OSC_HYBRID_WIRE_OK:
        return "no error";
    case MCA_OSC_HYBRID_WIRE_SENDER:
        return "a sender outside the window";
    case MCA_OSC_HYBRID_WIRE_SHORT:
        return "fewer bytes than a record header";
    case MCA_OSC_HYBRID_WIRE_TYPE:
        return "an unknown record type";
    case MCA_OSC_HYBRID_WIRE_NSEG:
        return "more segments than the message holds";
    case MCA_OSC_HYBRID_WIRE_PAYLOAD:
        return "a payload longer than the message";
    case MCA_OSC_HYBRID_WIRE_NOTICE:
        return "a notice with segments, lengths, flags, tag or data";
    case MCA_OSC_HYBRID_WIRE_LOCK_TYPE:
        return "a lock request neither shared nor exclusive";
    case MCA_OSC_HYBRID_WIRE_RELOCK:
        return "a lock request from an origin that already has one here";
    case MCA_OSC_HYBRID_WIRE_NOT_LOCKED:
        return "an unlock of a lock that was not granted";
    case MCA_OSC_HYBRID_WIRE_UNASKED:
        return "an acknowledgement that was not asked for";
    case MCA_OSC_HYBRID_WIRE_TAG:
        return "a reply or data tag outside its range";
    case MCA_OSC_HYBRID_WIRE_DATA_LEN:
        return "separate put data longer than any request";
    case MCA_OSC_HYBRID_WIRE_NOMEM:
        return "no memory to queue a lock request";
    case MCA_OSC_HYBRID_WIRE_FLAGS:
        return "unknown flags, reserved bits or unused fields that are not 0";
    case MCA_OSC_HYBRID_WIRE_STRAY_TAG:
        return "a tag on a request without reply or data";
    case MCA_OSC_HYBRID_WIRE_NO_SEGMENTS:
        return "a data request without segments";
    case MCA_OSC_HYBRID_WIRE_EMPTY_SEG:
        return "a segment of length 0";
    case MCA_OSC_HYBRID_WIRE_STREAM_LEN:
        return "a request longer than any request may be";
    case MCA_OSC_HYBRID_WIRE_SUM:
        return "segment lengths that do not add up to the stream length";
    case MCA_OSC_HYBRID_WIRE_PAYLOAD_LEN:
        return "a payload length that does not match the request";
    case MCA_OSC_HYBRID_WIRE_CAS:
        return "a compare-and-swap that is not one element with two values";
    case MCA_OSC_HYBRID_WIRE_RANGE:
        return "a segment outside the window";
    case MCA_OSC_HYBRID_WIRE_DATATYPE:
        return "an unknown or unusable datatype";
    case MCA_OSC_HYBRID_WIRE_OP:
        return "an unknown op or one not defined on the datatype";
    case MCA_OSC_HYBRID_WIRE_ELEMENT:
        return "segments that cut an element of the datatype";
    default:
        return "an unknown error";
    }
}
