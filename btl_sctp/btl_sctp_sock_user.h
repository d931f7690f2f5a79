/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * btl_sctp_sock_user.h: what the two halves of the user stack share: the
 * usrsctp glue (btl_sctp_sock_user.c) and the UDP path layer below it
 * (btl_sctp_sock_udp.c). Private to the socket layer; only compiled with
 * usrsctp.
 *
 * The UDP layer owns one UDP socket per local address, the paths to each
 * peer (one per advertised peer address), the path probes and the choice
 * of the path in use; it hands SCTP packets to the glue
 * (btl_sctp_user_input) and sends the packets usrsctp puts out
 * (btl_sctp_udp_output). The glue owns the usrsctp socket and the
 * associations.
 */
#ifndef MCA_BTL_SCTP_SOCK_USER_H
#define MCA_BTL_SCTP_SOCK_USER_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <usrsctp.h>

#include "btl_sctp_hdr.h"
#include "btl_sctp_sock.h"
#include "tc_hash.h"

/* Loopback carries 64 KiB datagrams; IPv4 + UDP headers take 28 bytes,
 * and 16 more are kept free: usrsctp's AF_CONN packets come out larger
 * than the size it is given (on a 1500-byte link, 1460 gave datagrams of
 * at most 1472 bytes, 1464 and 1472 sent every data packet as two IP
 * fragments). */
#define USER_LOOPBACK_MTU 65000
/* The largest UDP payload of an IPv4 datagram: a loopback path's
 * datagram, which no packet of USER_LOOPBACK_MTU (plus the slack below)
 * exceeds, so that nothing is cut there. */
#define USER_UDP_MAX_DGRAM 65507
#define USER_IP_UDP_HDRS 28
#define USER_UDP_SLACK 16
#define USER_UDP_OVERHEAD (USER_IP_UDP_HDRS + USER_UDP_SLACK)

/* Packets taken per socket per progress call: the caller reads the
 * messages in between, so the stack's receive buffer never fills up
 * (a full one advertises a zero window and stalls the sender). */
#define USER_PROGRESS_BURST 16

/* Datagrams taken by one recvmmsg. */
#define USER_RX_BATCH 8

/* Send batching (btl_sctp_sock_gso.c): per UDP socket up to
 * USER_TX_GROUPS messages of at most USER_TX_SLOT bytes each leave with
 * one sendmmsg; a GSO message holds at most USER_TX_MAX_SEGS segments
 * (the kernel's UDP_MAX_SEGMENTS before 6.9) and USER_TX_GSO_BYTES (a
 * UDP datagram's limit, with room). */
#define USER_TX_GROUPS 16
#define USER_TX_SLOT 65536
#define USER_TX_MAX_SEGS 64
#define USER_TX_GSO_BYTES 65000
/* With CMT a GSO message holds at most this many packets, and the paths
 * take turns (see btl_sctp_udp_queue). */
#define USER_TX_CMT_SEGS 8

/* Most datagrams one GRO buffer is split into (a kernel coalesces at
 * most 64 segments; one segment of 1 byte per byte is refused anyway). */
#define USER_GRO_MAX_SEGS 64

/* Connected UDP sockets (btl_sctp_sock_conn.c): a path to another host
 * sends on a socket of its own, bound to its local socket's address and
 * port (SO_REUSEPORT) and connected to the peer's address, so the kernel
 * skips the route and address lookup of every datagram, and hands the
 * peer's datagrams to that socket. Each one is one more socket to poll:
 * at most USER_CONN_MAX per process; further paths share their local
 * socket as before. */
#define USER_CONN_MAX 4
/* UDP sockets of a process: one per local address, then connected ones. */
#define USER_NSOCK_MAX (BTL_SCTP_SOCK_MAX_ADDRS + USER_CONN_MAX)

typedef struct user_tx_group {
    struct sockaddr_in to;
    int sock;      /* the UDP socket it leaves on (a connected one: no address) */
    size_t bytes;  /* in the group's slot */
    unsigned seg;  /* segment size: the first packet's length */
    unsigned nseg; /* packets */
    int closed;    /* a shorter packet ended it */
} user_tx_group_t;

typedef struct user_tx {
    unsigned char *buf; /* USER_TX_GROUPS slots of USER_TX_SLOT bytes */
    int ngroups;
    user_tx_group_t g[USER_TX_GROUPS];
} user_tx_t;

/* CMT's receive pass: one packet of a batch (a datagram, or a segment of
 * a GRO buffer). */
typedef struct user_rx_pkt {
    unsigned char *data;
    size_t len;
    int sock; /* UDP socket index */
    int from; /* index of the sender's address in the pass */
    int has;  /* carries DATA or I-DATA: tsn..tsn_last */
    uint32_t tsn, tsn_last;
} user_rx_pkt_t;

/* A packet whose segments arrived apart, gathered (btl_sctp_sock_seg.c). */
typedef struct user_reasm {
    int busy; /* a packet is being gathered */
    uint32_t id;
    unsigned count, seg_len, got;
    uint64_t have; /* segments in, by index */
    size_t len;    /* the packet's length once its last segment is in */
    unsigned char buf[MCA_BTL_SCTP_SEG_PKT_MAX];
} user_reasm_t;

/* One segment, as btl_sctp_seg_parse found it. */
typedef struct btl_sctp_seg_info {
    uint32_t id;
    unsigned index, count, seg_len;
    size_t off, len; /* where its bytes go in the packet, how many */
    const unsigned char *data;
} btl_sctp_seg_info_t;

typedef struct user_path {
    int lidx;              /* index of our local address and its shared UDP socket */
    int sock;              /* the UDP socket it sends on: its connected one, or lidx */
    struct sockaddr_in to; /* the peer's UDP address on this path */
    uint64_t last_ack_ms;  /* last probe ack (0: never) */
    uint64_t last_probe_ms;
    uint32_t mtu;     /* SCTP packet size over this path */
    uint32_t dgram;   /* largest datagram payload (link MTU less IPv4 and UDP) */
    user_reasm_t *ra; /* segments of a packet that arrived apart (NULL: none yet) */
} user_path_t;

typedef struct user_sock user_sock_t;

/* CMT: a data packet that arrived ahead of a gap, held back until the gap
 * fills or USER_CMT_HOLD_MS pass (then the gap is a loss for SCTP to
 * repair). Packets up to USER_CMT_HOLD_SLOT bytes are held, at most
 * USER_CMT_HOLD_MAX per peer. */
#define USER_CMT_HOLD_MS 4
#define USER_CMT_HOLD_MAX 128
#define USER_CMT_HOLD_SLOT 9216

typedef struct user_held {
    uint32_t first, last; /* TSNs of its first and last DATA/I-DATA chunk */
    uint64_t t;           /* arrival, ms */
    size_t len;
    int l; /* the UDP socket it came in on */
    struct sockaddr_in from;
    unsigned char *buf; /* a slot of the peer's hold area */
} user_held_t;

struct btl_sctp_peer {
    user_sock_t *sock;
    void *cookie;
    struct sockaddr_conn sconn; /* the peer's AF_CONN address: points at us */
    int npaths;
    user_path_t paths[BTL_SCTP_SOCK_MAX_ADDRS];
    int active; /* path in use, -1: send on all */
    int nlive;  /* live paths, their indices in live[] (CMT) */
    int live[BTL_SCTP_SOCK_MAX_ADDRS];
    unsigned rr; /* CMT: round-robin position over live[] */
    /* CMT receiver: the next TSN in order, packets held ahead of a gap
     * (sorted by first TSN), their slots */
    uint32_t next_tsn;
    int tsn_known;
    int nheld;
    user_held_t *held;
    unsigned char *hold_mem;
    unsigned char *free_slot[USER_CMT_HOLD_MAX];
    int nfree;
    uint32_t mtu;      /* SCTP packet size in use (active path's) */
    int has_assoc_mtu; /* mtu was applied to the association */
    int probing;       /* started once the peer is used */
    sctp_assoc_t assoc_id;
    int has_assoc;
};

struct user_sock {
    btl_sctp_sock_t base;
    btl_sctp_sock_config_t cfg;
    struct socket *so;
    int udp_fd[USER_NSOCK_MAX];    /* one per base.local address, then the
                                    * connected ones (-1: closed) */
    int sock_lidx[USER_NSOCK_MAX]; /* the local address of each */
    int nsock;
    tc_hash_t by_addr;       /* UDP ip:port -> peer */
    tc_hash_t by_assoc;      /* association id -> peer */
    btl_sctp_peer_t **peers; /* for probing */
    int npeers, maxpeers;
    uint64_t last_ms;
    unsigned char *pkt; /* pkt_bufs UDP datagrams of pkt_size bytes */
    size_t pkt_bufs;
    unsigned char *msg;   /* one received message */
    unsigned char *stage; /* head of a message sent in pieces */
    size_t stage_size;
    size_t msg_size;
    size_t pkt_size;
    int per_peer_mtu;                /* MTU from each peer's paths */
    uint64_t hot_ms[USER_NSOCK_MAX]; /* last SCTP packet per UDP socket */
    int pending_recv;                /* the last receive returned a message */
    int holding;                     /* CMT: peers with held packets */
    int kick;                        /* a path in use died: run the timers ahead */
    uint64_t cmt_held, cmt_flushed;  /* CMT: packets held, released by timeout */
    int discarding;                  /* the rest of an oversize record is still
                                      * to be dropped (its pieces may come later) */
    user_tx_t *tx;                   /* per local address: datagrams to send (NULL:
                                      * one sendto each) */
    int tx_pending;                  /* some tx holds datagrams */
    int gso;                         /* UDP_SEGMENT messages are sent */
    unsigned tx_max_segs;            /* packets per GSO message, at most */
    int gro;                         /* UDP_GRO is on: received buffers are split */
    int segment;                     /* SCTP packets of up to 64 KB, cut into
                                      * datagrams of the path (btl_sctp_sock_seg.c) */
    uint32_t seg_id;                 /* number of the next segmented packet */
    user_rx_pkt_t *rx;               /* CMT: the packets of a receive pass */
    int *rx_order;                   /* CMT: their order of delivery */
    size_t rx_max;
};

static inline uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t) ts.tv_sec * 1000 + (uint64_t) ts.tv_nsec / 1000000;
}

/* ---- the UDP path layer (btl_sctp_sock_udp.c) ---- */

/* One bound UDP socket per local address (us->base.local, us->udp_fd),
 * buffers from us->cfg. 0, or a negative errno and the reason in why. */
int btl_sctp_udp_open(user_sock_t *us, const btl_sctp_sock_addr_t *local, int nlocal, char *why,
                      size_t whylen);
void btl_sctp_udp_close(user_sock_t *us);
/* A socket buffer size: opt_force (root may exceed net.core.[rw]mem_max),
 * else opt. */
void btl_sctp_udp_set_buf(int fd, int opt_force, int opt, int size);
/* Free a peer's CMT hold area. */
void btl_sctp_udp_peer_fini(btl_sctp_peer_t *p);
/* The paths to a new peer, one per address some local socket can reach;
 * sets p->npaths (0: unreachable). */
void btl_sctp_udp_peer_paths(user_sock_t *us, btl_sctp_peer_t *p, const btl_sctp_sock_addr_t *addrs,
                             int naddrs);
/* Send one SCTP packet to p: on the path in use (with CMT, on the next
 * live path in turn), or on every path while none is known to be alive. */
void btl_sctp_udp_output(btl_sctp_peer_t *p, const void *buf, size_t len);
/* Read the UDP sockets: answer probes, note acks, hand SCTP packets to
 * btl_sctp_user_input. Returns the datagrams taken; *drained = 0 when the
 * burst limit stopped it before a socket was empty. */
int btl_sctp_udp_poll(user_sock_t *us, uint64_t now, int *drained);
/* The process's CMT counters: packets held ahead of a gap, gaps given up
 * after USER_CMT_HOLD_MS, gaps given up with the hold area full. */
void btl_sctp_udp_cmt_counts(uint64_t *held, uint64_t *timeout, uint64_t *full);
/* Probe the paths of every peer in use that are due, choose each peer's path. */
void btl_sctp_udp_probe_paths(user_sock_t *us, uint64_t now);
/* The ops table's paths and active_path. */
int btl_sctp_udp_paths(btl_sctp_sock_t *s, btl_sctp_peer_t *p, int *alive);
int btl_sctp_udp_active_path(btl_sctp_sock_t *s, btl_sctp_peer_t *p);

/* ---- connected sockets per path (btl_sctp_sock_conn.c) ---- */

/* A connected socket for a new path (path->sock), or path->lidx when the
 * process has USER_CONN_MAX of them or one cannot be set up. */
void btl_sctp_udp_conn_open(user_sock_t *us, user_path_t *path);
/* Close a path's connected socket (the shared one stays). */
void btl_sctp_udp_conn_close(user_sock_t *us, user_path_t *path);
struct msghdr;
struct mmsghdr;
/* sendmsg/sendmmsg on UDP socket s: on a connected socket, an error left
 * by an ICMP message about an earlier datagram fails one call without
 * sending; that call is made once more. */
int btl_sctp_udp_sendmsg(user_sock_t *us, int s, struct msghdr *mh);
int btl_sctp_udp_sendmmsg(user_sock_t *us, int s, struct mmsghdr *mm, unsigned n);
/* recvmmsg on UDP socket s, MSG_DONTWAIT, the same way for receive. */
int btl_sctp_udp_recvmmsg(user_sock_t *us, int s, struct mmsghdr *mm, unsigned n);
/* The address for msg_name on socket s: NULL on a connected one. */
static inline void *btl_sctp_udp_name(const user_sock_t *us, int s, const struct sockaddr_in *to)
{
    return s >= us->base.nlocal ? NULL : (void *) to;
}

/* ---- datagram batching (btl_sctp_sock_gso.c) ---- */

/* Send buffers and socket options of us->cfg.send_batch and us->cfg.gro;
 * after btl_sctp_udp_open. 0 or -ENOMEM. */
int btl_sctp_udp_batch_open(user_sock_t *us);
void btl_sctp_udp_batch_close(user_sock_t *us);
/* UDP_GRO on a socket opened later (a connected one), when it is in use. */
void btl_sctp_udp_gro_add(user_sock_t *us, int fd);
/* Queue one packet on a path (or send it at once when batching is off);
 * a packet larger than the path's datagram leaves at once as segments. */
void btl_sctp_udp_queue(user_sock_t *us, const user_path_t *path, const void *buf, size_t len);
/* Send every queued datagram; called when a call into the stack returns. */
void btl_sctp_udp_flush(user_sock_t *us);
/* The datagrams of a received buffer of len bytes whose GRO segment size
 * is seg (0: not coalesced): at most max (offset, length) pairs, each
 * inside the buffer. Returns their number, or -1 when the buffer would
 * hold more than max (then it is dropped). */
int btl_sctp_udp_gro_split(size_t len, long seg, size_t max, size_t *off, size_t *seglen);
/* The GRO segment size in a received message's control data (0: none). */
struct msghdr;
long btl_sctp_udp_gro_size(const struct msghdr *mh);
/* Receive counters: buffers read, buffers that were coalesced, datagrams. */
void btl_sctp_udp_note_rx(size_t bufs, size_t coalesced, size_t dgrams);
/* Segment counters: packets put together in place, gathered from
 * segments that came apart, segments dropped as invalid. */
void btl_sctp_udp_note_seg(size_t whole, size_t gathered, size_t bad);
/* packets sent as segments, packets that could not be cut, packets put
 * together in place, gathered, segments dropped */
void btl_sctp_udp_seg_counts(uint64_t c[5]);
/* datagrams sent, send calls, messages, GSO messages resent singly,
 * buffers received, coalesced buffers, datagrams received */
void btl_sctp_udp_batch_counts(uint64_t c[7]);

/* ---- SCTP packets larger than a datagram (btl_sctp_sock_seg.c) ---- */

/* The segment header at the start of a datagram of n bytes: 0 and *s
 * filled when every field is valid (see mca_btl_sctp_seg_t), else -1. */
int btl_sctp_seg_parse(const unsigned char *d, size_t n, btl_sctp_seg_info_t *s);
/* Datagrams of at most dgram bytes a packet of len bytes needs. */
unsigned btl_sctp_seg_count(size_t len, size_t dgram);
/* Write the segments of packet (buf, len) for datagrams of dgram bytes
 * into out, one after the other: each datagram but the last exactly dgram
 * bytes. Returns the bytes written, or 0 when they do not fit in cap or
 * the packet needs 1 or more than MCA_BTL_SCTP_SEG_MAX segments. */
size_t btl_sctp_seg_write(unsigned char *out, size_t cap, const void *buf, size_t len, size_t dgram,
                          uint32_t id);
/* Add a parsed segment to a reassembly buffer (a segment of another
 * packet drops the one gathered so far). Returns the packet's length when
 * this segment completed it (in ra->buf), else 0. */
size_t btl_sctp_seg_add(user_reasm_t *ra, const btl_sctp_seg_info_t *s);
/* Datagrams i.. of a received buffer (base, each at off[k] with len[k]
 * bytes, in order and apart) that are the whole of one packet, segments
 * 0..count-1 in order: the packet is put together in place (at base +
 * off[i]) and returned in *pkt, *pktlen; the result is count. 0 when
 * datagram i does not start such a run. */
int btl_sctp_seg_whole(unsigned char *base, const size_t *off, const size_t *len, int n, int i,
                       unsigned char **pkt, size_t *pktlen);
/* SCTP packet size for a path whose datagrams carry dgram bytes: as many
 * segments as one GSO message holds (the whole datagram on loopback). */
size_t btl_sctp_seg_packet_size(size_t dgram);

/* ---- the usrsctp glue (btl_sctp_sock_user.c), called by the UDP layer ---- */

/* An SCTP packet from p, for usrsctp. */
void btl_sctp_user_input(btl_sctp_peer_t *p, void *pkt, size_t n);
/* The association's packet size after a change of the path in use. */
void btl_sctp_user_apply_mtu(btl_sctp_peer_t *p);

#endif /* MCA_BTL_SCTP_SOCK_USER_H */
