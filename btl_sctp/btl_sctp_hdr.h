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
#ifndef BTL_SCTP_HDR_H
#define BTL_SCTP_HDR_H

#include <stdint.h>

enum {
    MCA_BTL_SCTP_HDR_DATA = 1, /* a fragment for the active-message tag */
    MCA_BTL_SCTP_HDR_BYE = 2   /* sender is finalizing: its association may close */
};

typedef struct mca_btl_sctp_hdr_t {
    uint8_t hdr_type;  /* MCA_BTL_SCTP_HDR_* */
    uint8_t hdr_tag;   /* BTL active-message tag */
    uint16_t hdr_pad;
    uint32_t hdr_size; /* payload bytes that follow */
} mca_btl_sctp_hdr_t;

#define MCA_BTL_SCTP_HDR_SIZE sizeof(mca_btl_sctp_hdr_t)

/* What a process publishes in the modex. */
#define MCA_BTL_SCTP_MODEX_VERSION 1
typedef struct mca_btl_sctp_modex_addr_t {
    uint32_t ip;       /* network order */
    uint16_t port;     /* network order: UDP (user) or SCTP (kernel) port */
    uint16_t pad;
} mca_btl_sctp_modex_addr_t;

typedef struct mca_btl_sctp_modex_t {
    uint8_t version;
    uint8_t stack;        /* BTL_SCTP_STACK_KERNEL or _USER */
    uint8_t naddrs;
    uint8_t crc32c;       /* user stack: 1 computes CRC32c */
    uint16_t sctp_port;   /* user stack: SCTP port in the AF_CONN stack */
    uint16_t num_streams;
    mca_btl_sctp_modex_addr_t addrs[]; /* naddrs entries */
} mca_btl_sctp_modex_t;

#endif /* BTL_SCTP_HDR_H */
