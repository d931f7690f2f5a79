/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * osc_hybrid_wire.h: the checks every record of osc/hybrid's active
 * messages passes at the target before anything of it is used: framing
 * (header, segments and payload within the bytes of the message), the
 * rules of each record type (lengths, flags, tags) and the range of its
 * segments in the window or the attached memory. Pure functions on bytes
 * and numbers: no Open MPI state, so tests drive them directly. The rules
 * are documented in docs/osc_hybrid.md ("Wire format").
 */

#ifndef MCA_OSC_HYBRID_WIRE_H
#define MCA_OSC_HYBRID_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "osc_hybrid_hdr.h"

/* Why a record was refused. The first group are fatal: the rest of the
 * message cannot be framed, or the origin waits for an answer that the
 * target cannot give (a lost LOCK or FLUSH would hang it), so the job
 * ends. The second group are answered: an ERROR notice to the origin (and
 * an empty reply where it waits for one), and the next record is read. */
typedef enum {
    MCA_OSC_HYBRID_WIRE_OK = 0,
    /* fatal */
    MCA_OSC_HYBRID_WIRE_SENDER,     /* sender rank outside the window */
    MCA_OSC_HYBRID_WIRE_SHORT,      /* fewer bytes left than a header */
    MCA_OSC_HYBRID_WIRE_TYPE,       /* unknown record type */
    MCA_OSC_HYBRID_WIRE_NSEG,       /* the segments run past the message */
    MCA_OSC_HYBRID_WIRE_PAYLOAD,    /* the payload runs past the message */
    MCA_OSC_HYBRID_WIRE_NOTICE,     /* a notice with segments, lengths, flags, tag or data */
    MCA_OSC_HYBRID_WIRE_LOCK_TYPE,  /* LOCK neither shared nor exclusive */
    MCA_OSC_HYBRID_WIRE_RELOCK,     /* LOCK from an origin that has one here */
    MCA_OSC_HYBRID_WIRE_NOT_LOCKED, /* UNLOCK of a lock not granted */
    MCA_OSC_HYBRID_WIRE_UNASKED,    /* an acknowledgement nobody asked for */
    MCA_OSC_HYBRID_WIRE_TAG,        /* reply or data tag outside its range */
    MCA_OSC_HYBRID_WIRE_DATA_LEN,   /* separate put data too long to take off the wire */
    MCA_OSC_HYBRID_WIRE_NOMEM,      /* no memory to queue a lock request */
    MCA_OSC_HYBRID_WIRE_FATAL_END,  /* (marker) */
    /* answered */
    MCA_OSC_HYBRID_WIRE_FLAGS,       /* unknown flags, reserved bits, unused fields not 0 */
    MCA_OSC_HYBRID_WIRE_STRAY_TAG,   /* a tag on a request that has no reply or data */
    MCA_OSC_HYBRID_WIRE_NO_SEGMENTS, /* a data request without segments */
    MCA_OSC_HYBRID_WIRE_EMPTY_SEG,   /* a segment of length 0 */
    MCA_OSC_HYBRID_WIRE_STREAM_LEN,  /* stream_len above MCA_OSC_HYBRID_STREAM_MAX */
    MCA_OSC_HYBRID_WIRE_SUM,         /* segment lengths do not add up to stream_len */
    MCA_OSC_HYBRID_WIRE_PAYLOAD_LEN, /* payload_len against the rule of the type */
    MCA_OSC_HYBRID_WIRE_CAS,         /* compare-and-swap not one element and two payloads */
    MCA_OSC_HYBRID_WIRE_RANGE,       /* a segment outside the window / attached memory */
    MCA_OSC_HYBRID_WIRE_DATATYPE,    /* not a predefined type with elements of 1-64 bytes */
    MCA_OSC_HYBRID_WIRE_OP,          /* not a predefined op, or not defined on the type */
    MCA_OSC_HYBRID_WIRE_ELEMENT,     /* segments that cut an element */
    MCA_OSC_HYBRID_WIRE_END
} mca_osc_hybrid_wire_err_t;

/* One record as found in a message. segs and payload point into the
 * message (NULL when there are none). */
typedef struct mca_osc_hybrid_rec_t {
    mca_osc_hybrid_hdr_t hdr;
    const mca_osc_hybrid_seg_t *segs;
    const char *payload;
    size_t len; /* bytes of the message it takes, padding included; 0 if unframed */
} mca_osc_hybrid_rec_t;

/* A target's window as the range check sees it. */
typedef struct mca_osc_hybrid_region_t {
    char *base;
    size_t len;
} mca_osc_hybrid_region_t;

typedef struct mca_osc_hybrid_wire_win_t {
    bool dynamic;
    uintptr_t base;                         /* create/allocate: the window */
    uint64_t size;                          /* bytes */
    int64_t disp_unit;                      /* > 0 */
    const mca_osc_hybrid_region_t *regions; /* dynamic: the attached memory */
    int nregions;
} mca_osc_hybrid_wire_win_t;

/* Bytes a record takes in a message, padding included (no overflow for the
 * values check_record accepts). */
size_t mca_osc_hybrid_record_len(uint32_t nseg, uint64_t payload_len);

/* Checks the record at msg, with left bytes of the message from there on
 * (msg 8-byte aligned, as every record of a receive buffer is), against
 * the framing and the rules of its type. Fills rec and returns
 * MCA_OSC_HYBRID_WIRE_OK or the first rule broken; on an answered refusal
 * rec is filled too (the reply tag of the refused request is valid). */
int mca_osc_hybrid_check_record(const void *msg, size_t left, mca_osc_hybrid_rec_t *rec);

/* Checks that every byte of the segments lies in the window (create,
 * allocate: [0, size) after disp x disp_unit) or in the attached regions
 * (dynamic: disp is an address; a segment may span adjacent regions), all
 * arithmetic without overflow. On success *origin is the address the
 * segment offsets are relative to: segment i is at origin + segs[i].off
 * (as unsigned arithmetic; origin itself may lie outside the window). */
int mca_osc_hybrid_check_range(const mca_osc_hybrid_wire_win_t *w, int64_t disp,
                               const mca_osc_hybrid_seg_t *segs, uint32_t nseg, uintptr_t *origin);

/* Whether a refusal ends the job (see mca_osc_hybrid_wire_err_t). */
bool mca_osc_hybrid_wire_fatal(int err);

/* One line that says what is wrong with the record. */
const char *mca_osc_hybrid_wire_strerror(int err);

#endif /* MCA_OSC_HYBRID_WIRE_H */
