/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * sci_ofi_dir.h: what the ofi provider publishes about one node (its
 * "directory": SISCI's driver knows the same of every node) and the two
 * messages it sends between nodes (bye, offer), as wire structs, with
 * their parsers.
 * Plain C without libfabric, so the fuzz test drives the parser alone.
 *
 *   directory = sci_ofi_dir_hdr_t | fabric address (addrlen bytes, padded
 *               to 8) | nsegs x sci_ofi_dir_seg_t
 *
 * The receiver of a directory checks every field before use: magic and
 * version, addrlen within SCI_OFI_MAX_ADDR, nsegs exactly filling the
 * rest, each segment non-empty with addr + size not wrapping.
 *
 * A remote word (sci_flush_publish) travels as the 64-bit remote CQ data
 * of the write that carries the bytes before it:
 *
 *   bits 63..48  the owner's index of the segment (its directory record)
 *   bits 47..24  offset of the word in the segment / 8
 *   bits 23..0   the low 24 bits of the word's new value
 *
 * The owner keeps the high bits: the word's values only grow, by less than
 * 2^23 from one store to the next (a ring slot's sequence grows by the
 * ring's size), so the new value is the first one at or above the current
 * one that ends in those 24 bits.
 */

#ifndef SCI_OFI_DIR_H
#define SCI_OFI_DIR_H

#include <stddef.h>
#include <stdint.h>

#define SCI_OFI_DIR_MAGIC 0x53434944u /* "SCID" */
#define SCI_OFI_DIR_VERSION 2u
#define SCI_OFI_MAX_ADDR 128u
#define SCI_OFI_MAX_SEGS 65536u
#define SCI_OFI_BYE_MAGIC 0x53434942u /* "SCIB" */

typedef struct sci_ofi_dir_hdr {
    uint32_t magic;
    uint16_t version;
    uint16_t addrlen; /* bytes of the fabric address that follows */
    uint32_t node_id; /* the owner's node id */
    uint32_t nsegs;   /* segment records after the address */
} sci_ofi_dir_hdr_t;

typedef struct sci_ofi_dir_seg {
    uint32_t segment_id;
    uint32_t index; /* the owner's number for it, named in remote words */
    uint64_t size;  /* bytes a peer may write and read */
    uint64_t key;   /* remote key of the registration */
    uint64_t addr;  /* remote address of byte 0 (FI_MR_VIRT_ADDR) */
} sci_ofi_dir_seg_t;

/* "the owner removed its segments and leaves": sent at close to every
 * node the process knows, so their sequences report a departure, not a
 * failure */
typedef struct sci_ofi_bye {
    uint32_t magic;
    uint32_t pad;
    uint64_t name; /* the sender's full name (its node name at open) */
} sci_ofi_bye_t;

/* "here is a segment of mine for you to write": sent to a node that has
 * no segment for us in its directory (a process of another job, whose
 * modex directory lists its own job's segments only); the receiver finds
 * the sender by its full name */
#define SCI_OFI_OFFER_MAGIC 0x5343494fu /* "SCIO" */
typedef struct sci_ofi_offer {
    uint32_t magic;
    uint32_t pad;
    uint64_t name; /* the sender's full name */
    sci_ofi_dir_seg_t seg;
} sci_ofi_offer_t;

#define SCI_OFI_WORD_INDEX_MAX 0xffffu
#define SCI_OFI_WORD_OFF_MAX ((uint64_t) 0xffffff * 8)
#define SCI_OFI_WORD_LOW_MASK 0xffffffu

_Static_assert(16 == sizeof(sci_ofi_dir_hdr_t), "sci ofi directory header: 16 bytes");
_Static_assert(32 == sizeof(sci_ofi_dir_seg_t), "sci ofi directory segment: 32 bytes");
_Static_assert(16 == sizeof(sci_ofi_bye_t), "sci ofi bye: 16 bytes");
_Static_assert(48 == sizeof(sci_ofi_offer_t), "sci ofi offer: 48 bytes");

/* the parsed view of a directory (pointers into the caller's buffer;
 * records may be unaligned there: read them with memcpy) */
typedef struct sci_ofi_dir_view {
    uint32_t node_id;
    const uint8_t *addr;
    size_t addrlen;
    const uint8_t *segs; /* nsegs x sci_ofi_dir_seg_t */
    uint32_t nsegs;
} sci_ofi_dir_view_t;

/* bytes of a directory with addrlen address bytes and nsegs segments */
size_t sci_ofi_dir_size(size_t addrlen, uint32_t nsegs);
/* 0 and *view filled, or -1 (malformed) */
int sci_ofi_dir_parse(const void *buf, size_t len, sci_ofi_dir_view_t *view);
/* segment i of a parsed directory (i < nsegs) */
void sci_ofi_dir_seg(const sci_ofi_dir_view_t *view, uint32_t i, sci_ofi_dir_seg_t *seg);
/* the CQ data of a remote word; -1 when it cannot be named that way (index
 * or offset too large, offset not 8-aligned): the caller sends two writes */
int sci_ofi_word_encode(uint32_t index, uint64_t offset, uint64_t value, uint64_t *data);
void sci_ofi_word_decode(uint64_t data, uint32_t *index, uint64_t *offset, uint32_t *low);
/* the word's new value from its current one and the low bits received;
 * the current one when they are behind it (a stale word) */
uint64_t sci_ofi_word_advance(uint64_t current, uint32_t low);

/* 0 and *name set, or -1 (not a bye) */
int sci_ofi_bye_parse(const void *buf, size_t len, uint64_t *name);
/* 0 and *offer filled (its segment checked like a directory's), or -1 */
int sci_ofi_offer_parse(const void *buf, size_t len, sci_ofi_offer_t *offer);

#endif /* SCI_OFI_DIR_H */
