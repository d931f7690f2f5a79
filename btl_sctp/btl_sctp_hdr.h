/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * btl_sctp_hdr.h: the wire format of btl/sctp.
 *
 * Every SCTP message is one BTL fragment: this 8-byte header, then the
 * payload. SCTP keeps message boundaries, so no length prefix is needed;
 * hdr_size repeats the payload length and the receiver checks it against
 * the message length before use. Fields are in network byte order.
 *
 * Streams: stream 0 carries every control message and every fragment up
 * to the eager limit, in order; PML fragments larger than the eager limit
 * (only ob1's FRAG data of a pipelined rendezvous, which carries its own
 * offset) are spread round-robin over streams 1..n-1 so that they never
 * hold back small messages.
 */
#ifndef MCA_BTL_SCTP_HDR_H
#define MCA_BTL_SCTP_HDR_H

#include <stddef.h>
#include <stdint.h>

enum {
    MCA_BTL_SCTP_HDR_DATA = 1, /* a fragment for the active-message tag */
    MCA_BTL_SCTP_HDR_BYE = 2   /* sender is finalizing: its association may close */
};

typedef struct mca_btl_sctp_hdr_t {
    uint8_t hdr_type; /* MCA_BTL_SCTP_HDR_* */
    uint8_t hdr_tag;  /* BTL active-message tag */
    uint16_t hdr_pad;
    uint32_t hdr_size; /* payload bytes that follow */
} mca_btl_sctp_hdr_t;

#define MCA_BTL_SCTP_HDR_SIZE sizeof(mca_btl_sctp_hdr_t)

/* What a process publishes in the modex. */
/* 2: the user stack's datagrams may be segments (mca_btl_sctp_seg_t) */
#define MCA_BTL_SCTP_MODEX_VERSION 2
typedef struct mca_btl_sctp_modex_addr_t {
    uint32_t ip;   /* network order */
    uint16_t port; /* network order: UDP (user) or SCTP (kernel) port */
    uint16_t pad;
} mca_btl_sctp_modex_addr_t;

typedef struct mca_btl_sctp_modex_t {
    uint8_t version;
    uint8_t stack; /* BTL_SCTP_STACK_KERNEL or _USER */
    uint8_t naddrs;
    uint8_t crc32c;     /* user stack: 1 computes CRC32c */
    uint16_t sctp_port; /* user stack: SCTP port in the AF_CONN stack */
    uint16_t num_streams;
    mca_btl_sctp_modex_addr_t addrs[]; /* naddrs entries */
} mca_btl_sctp_modex_t;

/* The user stack's path probe (btl_sctp_sock_udp.c): a UDP datagram of
 * its own between the UDP sockets of two processes, next to the SCTP
 * packets. It starts with two zero bytes, which no SCTP packet does (its
 * source port, 0, is invalid), so the receiver tells the two apart by
 * them. A PROBE is sent on each path every btl_sctp_path_probe_ms; the
 * receiver turns it into a PROBE_ACK and sends it back on the path it
 * came in on (same socket, same address). The ack names the prober's path
 * index, and a path is alive while acks come back within
 * btl_sctp_path_timeout_ms. A datagram that starts with two zero bytes
 * but is not exactly MCA_BTL_SCTP_PROBE_SIZE bytes is dropped. */
enum {
    MCA_BTL_SCTP_PROBE = 1,     /* please answer */
    MCA_BTL_SCTP_PROBE_ACK = 2, /* the answer: the probe, echoed */
    MCA_BTL_SCTP_SEGMENT = 3    /* a piece of an SCTP packet (mca_btl_sctp_seg_t) */
};

typedef struct mca_btl_sctp_probe_t {
    uint16_t zero; /* 0: not an SCTP packet */
    uint8_t kind;  /* MCA_BTL_SCTP_PROBE or _PROBE_ACK */
    uint8_t pad;   /* 0 */
    uint32_t seq;  /* network order: the prober's clock in ms, echoed */
    uint32_t path; /* network order: the prober's path index, echoed */
} mca_btl_sctp_probe_t;

#define MCA_BTL_SCTP_PROBE_SIZE sizeof(mca_btl_sctp_probe_t)

/* The user stack's segment (btl_sctp_sock_seg.c): an SCTP packet larger
 * than a path's datagram (its MTU less the IPv4 and UDP headers) leaves
 * as `count` UDP datagrams, each this header and the next seg_len bytes
 * of the packet (the last one the rest); the receiver puts the packet
 * back together before usrsctp sees it. Like a probe it starts with two
 * zero bytes. Every segment but the last carries exactly seg_len bytes,
 * the last 1 to seg_len; a packet is at most MCA_BTL_SCTP_SEG_PKT_MAX
 * bytes. A segment that breaks a rule is dropped. */
#define MCA_BTL_SCTP_SEG_MAX 64         /* segments per packet */
#define MCA_BTL_SCTP_SEG_PKT_MAX 65535u /* bytes of a reassembled packet */

typedef struct mca_btl_sctp_seg_t {
    uint16_t zero;    /* 0: not an SCTP packet */
    uint8_t kind;     /* MCA_BTL_SCTP_SEGMENT */
    uint8_t index;    /* this segment, 0..count-1 */
    uint8_t count;    /* segments of the packet, 2..MCA_BTL_SCTP_SEG_MAX */
    uint8_t pad;      /* 0 */
    uint16_t seg_len; /* network order: packet bytes in every segment but the last */
    uint32_t id;      /* network order: the packet's number at the sending socket */
} mca_btl_sctp_seg_t;

#define MCA_BTL_SCTP_SEG_HDR_SIZE sizeof(mca_btl_sctp_seg_t)

/* These layouts are on the wire or in the modex; docs/btl_sctp.md gives
 * the same offsets. */
_Static_assert(8 == sizeof(mca_btl_sctp_hdr_t), "sctp header: 8 bytes");
_Static_assert(0 == offsetof(mca_btl_sctp_hdr_t, hdr_type) &&
                   1 == offsetof(mca_btl_sctp_hdr_t, hdr_tag) &&
                   2 == offsetof(mca_btl_sctp_hdr_t, hdr_pad) &&
                   4 == offsetof(mca_btl_sctp_hdr_t, hdr_size),
               "sctp header: field offsets");

_Static_assert(8 == sizeof(mca_btl_sctp_modex_addr_t), "sctp modex address: 8 bytes");
_Static_assert(0 == offsetof(mca_btl_sctp_modex_addr_t, ip) &&
                   4 == offsetof(mca_btl_sctp_modex_addr_t, port) &&
                   6 == offsetof(mca_btl_sctp_modex_addr_t, pad),
               "sctp modex address: field offsets");

_Static_assert(8 == sizeof(mca_btl_sctp_modex_t), "sctp modex entry: 8 bytes before the addresses");
_Static_assert(0 == offsetof(mca_btl_sctp_modex_t, version) &&
                   1 == offsetof(mca_btl_sctp_modex_t, stack) &&
                   2 == offsetof(mca_btl_sctp_modex_t, naddrs) &&
                   3 == offsetof(mca_btl_sctp_modex_t, crc32c) &&
                   4 == offsetof(mca_btl_sctp_modex_t, sctp_port) &&
                   6 == offsetof(mca_btl_sctp_modex_t, num_streams) &&
                   8 == offsetof(mca_btl_sctp_modex_t, addrs),
               "sctp modex entry: field offsets");

_Static_assert(12 == sizeof(mca_btl_sctp_probe_t), "sctp path probe: 12 bytes");
_Static_assert(0 == offsetof(mca_btl_sctp_probe_t, zero) &&
                   2 == offsetof(mca_btl_sctp_probe_t, kind) &&
                   3 == offsetof(mca_btl_sctp_probe_t, pad) &&
                   4 == offsetof(mca_btl_sctp_probe_t, seq) &&
                   8 == offsetof(mca_btl_sctp_probe_t, path),
               "sctp path probe: field offsets");

_Static_assert(12 == sizeof(mca_btl_sctp_seg_t), "sctp segment header: 12 bytes");
_Static_assert(0 == offsetof(mca_btl_sctp_seg_t, zero) && 2 == offsetof(mca_btl_sctp_seg_t, kind) &&
                   3 == offsetof(mca_btl_sctp_seg_t, index) &&
                   4 == offsetof(mca_btl_sctp_seg_t, count) &&
                   5 == offsetof(mca_btl_sctp_seg_t, pad) &&
                   6 == offsetof(mca_btl_sctp_seg_t, seg_len) &&
                   8 == offsetof(mca_btl_sctp_seg_t, id),
               "sctp segment header: field offsets");

#endif /* MCA_BTL_SCTP_HDR_H */
