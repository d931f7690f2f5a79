/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * btl_bip_hdr.h: btl_bip's wire format. Every control message (one slot
 * of the receiver's static receive queue) starts with
 * mca_btl_bip_hdr_t; the body depends on the type. docs/btl_bip.md
 * describes the protocol.
 */

#ifndef MCA_BTL_BIP_HDR_H
#define MCA_BTL_BIP_HDR_H

#include <stddef.h>
#include <stdint.h>

/* control message types (MPI-BIP section 3.1) */
enum {
    MCA_BTL_BIP_SHORT = 1, /* data inline: an ob1 fragment of <= short_limit */
    MCA_BTL_BIP_REQ = 2,   /* request to send a medium fragment (three-way) */
    MCA_BTL_BIP_ACK = 3,   /* receiver ready: the data may go into `handle` */
    MCA_BTL_BIP_CREDIT = 4 /* credits only (the reserved slot) */
};

/* ACK kinds */
enum {
    MCA_BTL_BIP_ACK_MEDIUM = 1, /* answers our REQ number `seq` */
    MCA_BTL_BIP_ACK_GET = 2     /* the peer gets [addr, addr+size) of ours */
};

typedef struct mca_btl_bip_hdr {
    uint8_t type;     /* MCA_BTL_BIP_* */
    uint8_t tag;      /* ob1's active-message tag (SHORT, REQ) */
    uint16_t credits; /* piggy-backed credits (B at send time) */
    uint32_t len;     /* SHORT: payload bytes after the header */
} mca_btl_bip_hdr_t;

/* REQ body: the sender's number for this request and the fragment size */
typedef struct mca_btl_bip_req {
    uint64_t seq;
    uint64_t size;
} mca_btl_bip_req_t;

/* ACK body */
typedef struct mca_btl_bip_ack {
    uint64_t seq;    /* MEDIUM: the REQ it answers */
    uint64_t addr;   /* GET: source address at the sender */
    uint64_t size;   /* bytes to write */
    uint32_t handle; /* the posted receive at the receiver */
    uint32_t kind;   /* MCA_BTL_BIP_ACK_* */
} mca_btl_bip_ack_t;

_Static_assert(sizeof(mca_btl_bip_hdr_t) == 8, "bip header is 8 bytes");
_Static_assert(offsetof(mca_btl_bip_hdr_t, type) == 0, "type at byte 0");
_Static_assert(offsetof(mca_btl_bip_hdr_t, tag) == 1, "tag at byte 1");
_Static_assert(offsetof(mca_btl_bip_hdr_t, credits) == 2, "credits at byte 2");
_Static_assert(offsetof(mca_btl_bip_hdr_t, len) == 4, "len at byte 4");
_Static_assert(sizeof(mca_btl_bip_req_t) == 16, "REQ body is 16 bytes");
_Static_assert(offsetof(mca_btl_bip_req_t, seq) == 0, "REQ seq at byte 0");
_Static_assert(offsetof(mca_btl_bip_req_t, size) == 8, "REQ size at byte 8");
_Static_assert(sizeof(mca_btl_bip_ack_t) == 32, "ACK body is 32 bytes");
_Static_assert(offsetof(mca_btl_bip_ack_t, seq) == 0, "ACK seq at byte 0");
_Static_assert(offsetof(mca_btl_bip_ack_t, addr) == 8, "ACK addr at byte 8");
_Static_assert(offsetof(mca_btl_bip_ack_t, size) == 16, "ACK size at byte 16");
_Static_assert(offsetof(mca_btl_bip_ack_t, handle) == 24, "ACK handle at byte 24");
_Static_assert(offsetof(mca_btl_bip_ack_t, kind) == 28, "ACK kind at byte 28");

/* largest control message without data */
#define MCA_BTL_BIP_CTL_MAX (sizeof(mca_btl_bip_hdr_t) + sizeof(mca_btl_bip_ack_t))

/* modex record (node-local when only shm is open, else global), followed
 * by addrlen bytes of the ofi provider's endpoint address */
typedef struct mca_btl_bip_modex {
    uint32_t local_rank;
    uint32_t nslots;    /* shm queue: slots */
    uint32_t slot_size; /* shm queue: bytes per slot */
    uint32_t credits;
    int32_t pid;
    uint32_t max_posted;
    uint32_t addrlen;       /* 0: no ofi provider open */
    uint32_t ofi_slot_size; /* the ofi reach's largest message */
} mca_btl_bip_modex_t;

_Static_assert(sizeof(mca_btl_bip_modex_t) == 32, "modex record is 32 bytes");
_Static_assert(offsetof(mca_btl_bip_modex_t, addrlen) == 24, "modex addrlen at byte 24");
_Static_assert(offsetof(mca_btl_bip_modex_t, local_rank) == 0, "modex local_rank at byte 0");
_Static_assert(offsetof(mca_btl_bip_modex_t, nslots) == 4, "modex nslots at byte 4");
_Static_assert(offsetof(mca_btl_bip_modex_t, slot_size) == 8, "modex slot_size at byte 8");
_Static_assert(offsetof(mca_btl_bip_modex_t, credits) == 12, "modex credits at byte 12");
_Static_assert(offsetof(mca_btl_bip_modex_t, pid) == 16, "modex pid at byte 16");
_Static_assert(offsetof(mca_btl_bip_modex_t, max_posted) == 20, "modex max_posted at byte 20");
_Static_assert(offsetof(mca_btl_bip_modex_t, ofi_slot_size) == 28,
               "modex ofi_slot_size at byte 28");

/* provider ofi (bip_ofi.c): every message in the receiver's
 * multi-receive buffer starts with this device header; the protocol's
 * message (mca_btl_bip_hdr_t ...) follows. A message's length is padded
 * to 8 bytes on the wire; len is the unpadded length. */
typedef struct bip_ofi_msg_hdr {
    uint32_t src;   /* the sender's stamp (job rank) */
    uint32_t len;   /* bytes of the message after this header */
    uint32_t jobid; /* the sender's job: another job's sender is resolved
                       to an index of the peer table (src is its vpid) */
    uint32_t pad;   /* zero */
} bip_ofi_msg_hdr_t;

_Static_assert(sizeof(bip_ofi_msg_hdr_t) == 16, "ofi message header is 16 bytes");
_Static_assert(offsetof(bip_ofi_msg_hdr_t, src) == 0, "ofi src at byte 0");
_Static_assert(offsetof(bip_ofi_msg_hdr_t, len) == 4, "ofi len at byte 4");

/* provider ofi: the remote CQ data of an RDMA write into a posted
 * receive: the receive's handle and the bytes that write carried */
#define BIP_OFI_WRITE_DATA(handle, bytes) (((uint64_t) (handle) << 32) | (uint32_t) (bytes))
#define BIP_OFI_WRITE_HANDLE(data) ((uint32_t) ((data) >> 32))
#define BIP_OFI_WRITE_BYTES(data) ((uint32_t) (data))

#endif /* MCA_BTL_BIP_HDR_H */
