/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * sci_ofi_dir.h: what the ofi provider publishes about one node (its
 * "directory": SISCI's driver knows the same of every node) and the one
 * message it sends between nodes, as wire structs, with their parser.
 * Plain C without libfabric, so the fuzz test drives the parser alone.
 *
 *   directory = sci_ofi_dir_hdr_t | fabric address (addrlen bytes, padded
 *               to 8) | nsegs x sci_ofi_dir_seg_t
 *
 * The receiver of a directory checks every field before use: magic and
 * version, addrlen within SCI_OFI_MAX_ADDR, nsegs exactly filling the
 * rest, each segment non-empty with addr + size not wrapping.
 */

#ifndef SCI_OFI_DIR_H
#define SCI_OFI_DIR_H

#include <stddef.h>
#include <stdint.h>

#define SCI_OFI_DIR_MAGIC 0x53434944u /* "SCID" */
#define SCI_OFI_DIR_VERSION 1u
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
    uint32_t pad;
    uint64_t size; /* bytes a peer may write and read */
    uint64_t key;  /* remote key of the registration */
    uint64_t addr; /* remote address of byte 0 (FI_MR_VIRT_ADDR) */
} sci_ofi_dir_seg_t;

/* "the owner removed its segments and leaves": sent at close to every
 * node the process knows, so their sequences report a departure, not a
 * failure */
typedef struct sci_ofi_bye {
    uint32_t magic;
    uint32_t node_id;
} sci_ofi_bye_t;

_Static_assert(16 == sizeof(sci_ofi_dir_hdr_t), "sci ofi directory header: 16 bytes");
_Static_assert(32 == sizeof(sci_ofi_dir_seg_t), "sci ofi directory segment: 32 bytes");
_Static_assert(8 == sizeof(sci_ofi_bye_t), "sci ofi bye: 8 bytes");

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
/* 0 and *node_id set, or -1 (not a bye) */
int sci_ofi_bye_parse(const void *buf, size_t len, uint32_t *node_id);

#endif /* SCI_OFI_DIR_H */
