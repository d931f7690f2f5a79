/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
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
_Static_assert(offsetof(mca_btl_bip_hdr_t, credits) == 2, "credits at byte 2");
_Static_assert(offsetof(mca_btl_bip_hdr_t, len) == 4, "len at byte 4");
_Static_assert(sizeof(mca_btl_bip_req_t) == 16, "REQ body is 16 bytes");
_Static_assert(sizeof(mca_btl_bip_ack_t) == 32, "ACK body is 32 bytes");
_Static_assert(offsetof(mca_btl_bip_ack_t, handle) == 24, "ACK handle at byte 24");

/* largest control message without data */
#define MCA_BTL_BIP_CTL_MAX (sizeof(mca_btl_bip_hdr_t) + sizeof(mca_btl_bip_ack_t))

/* modex record (node-local only) */
typedef struct mca_btl_bip_modex {
    uint32_t local_rank;
    uint32_t nslots;
    uint32_t slot_size;
    uint32_t credits;
    int32_t pid;
    uint32_t max_posted;
} mca_btl_bip_modex_t;

_Static_assert(sizeof(mca_btl_bip_modex_t) == 24, "modex record is 24 bytes");

#endif /* MCA_BTL_BIP_HDR_H */
