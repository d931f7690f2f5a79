/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * btl_sctp_sock.h: the small socket layer under btl/sctp.
 *
 * Two stacks implement it: `kernel` (libsctp, one one-to-many
 * SOCK_SEQPACKET socket) and `user` (usrsctp without its threads, driven
 * from our progress function, packets carried over our own UDP sockets
 * through AF_CONN). The BTL sees only this API: one socket per process,
 * peers added from modex addresses, messages sent on a stream, messages
 * and association events received with the peer's cookie.
 *
 * Errors follow libtransports_common: 0 or a negative errno value
 * (-EAGAIN: the socket buffer is full, try again from progress).
 * No Open MPI header here, so the layer is unit-testable alone.
 */
#ifndef MCA_BTL_SCTP_SOCK_H
#define MCA_BTL_SCTP_SOCK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { BTL_SCTP_STACK_AUTO = 0, BTL_SCTP_STACK_KERNEL = 1, BTL_SCTP_STACK_USER = 2 };

/* Most addresses one process binds and advertises (one per interface). */
#define BTL_SCTP_SOCK_MAX_ADDRS 8

/* One IPv4 address. ip and port in network byte order; mask (host order
 * prefix length) only for local addresses, to pick the path's source. */
typedef struct btl_sctp_sock_addr {
    uint32_t ip;
    uint16_t port; /* user: UDP port; kernel: SCTP port */
    uint16_t prefix;
    uint32_t mtu; /* local: the interface's MTU (0: unknown) */
} btl_sctp_sock_addr_t;

typedef struct btl_sctp_sock_config {
    int stack;           /* BTL_SCTP_STACK_KERNEL or _USER (not AUTO) */
    int sctp_port;       /* user: SCTP port inside the AF_CONN stack */
    int num_streams;     /* outbound and inbound streams per association */
    int sndbuf;          /* socket send buffer, bytes */
    int rcvbuf;          /* socket receive buffer, bytes */
    int nodelay;         /* disable Nagle-like bundling delay */
    int mtu;             /* user: largest SCTP packet in one UDP datagram
                         * (0: per peer, from the interface MTUs of its paths) */
    int crc32c;          /* user: 1 compute CRC32c, 0 rely on UDP checksum */
    int probe_ms;        /* user: path probe interval */
    int path_timeout_ms; /* user: path dead after this long without an ack */
    int rto_min_ms;      /* retransmission timeout bounds */
    int rto_max_ms;
    int rto_initial_ms;
    int max_retrans;      /* association aborts after this many retransmits */
    int path_max_retrans; /* kernel: a path fails after this many retransmits */
    int pf_retrans;       /* kernel: a path is potentially failed (SCTP-PF) after this many */
    int hb_ms;            /* SCTP heartbeat interval per path (0: off) */
    int cmt;              /* user: spread packets over every live path */
    size_t max_msg;       /* largest message the BTL sends (sizes buffers) */
    int prio_streams;     /* 1: stream 0 served before the others */
    int pool;             /* user: usrsctp allocates from btl_sctp_pool */
    int sack_freq;        /* user: packets per SACK (else after 1 ms) */
    int send_batch;       /* user: BTL_SCTP_SEND_SINGLE, _MMSG or _GSO */
    int gro;              /* user: receive coalesced datagrams (UDP_GRO) and split them */
    int segment;          /* user: SCTP packets of up to 64 KB, cut into datagrams of the path */
    int dgram;            /* user: largest datagram payload (0: from the interface MTU) */
} btl_sctp_sock_config_t;

/* How the user stack hands its UDP datagrams to the kernel: one sendto
 * each, several per sendmmsg, or runs of equal size as one UDP_SEGMENT
 * (generic segmentation offload) message each, several per sendmmsg. */
enum { BTL_SCTP_SEND_SINGLE = 0, BTL_SCTP_SEND_MMSG = 1, BTL_SCTP_SEND_GSO = 2 };

/* Fill cfg with defaults suitable for loopback and a LAN. */
void btl_sctp_sock_config_default(btl_sctp_sock_config_t *cfg, int stack);

typedef struct btl_sctp_sock btl_sctp_sock_t;
typedef struct btl_sctp_peer btl_sctp_peer_t;

enum {
    BTL_SCTP_SOCK_DATA = 0,  /* a message: data, len, stream */
    BTL_SCTP_SOCK_UP = 1,    /* association with the peer is up */
    BTL_SCTP_SOCK_LOST = 2,  /* association aborted or could not start */
    BTL_SCTP_SOCK_CLOSED = 3 /* the peer shut the association down */
};

typedef struct btl_sctp_sock_msg {
    int kind;     /* BTL_SCTP_SOCK_DATA, _UP, _LOST, _CLOSED */
    void *cookie; /* the peer's cookie; NULL: unknown sender */
    uint16_t stream;
    void *data; /* valid until the next recv on this socket */
    size_t len;
} btl_sctp_sock_msg_t;

/* Is this stack usable on this host? 0 or -errno, reason in why. */
int btl_sctp_sock_probe(int stack, char *why, size_t whylen);

/* Open the process's one socket bound to the given local addresses.
 * On failure returns -errno and writes a reason into why. */
int btl_sctp_sock_open(btl_sctp_sock_t **out, const btl_sctp_sock_config_t *cfg,
                       const btl_sctp_sock_addr_t *local, int nlocal, char *why, size_t whylen);

void btl_sctp_sock_close(btl_sctp_sock_t *s);

/* The bound addresses with their ports, to publish in the modex. */
int btl_sctp_sock_local_addrs(btl_sctp_sock_t *s, btl_sctp_sock_addr_t *addrs, int max);

int btl_sctp_sock_stack(const btl_sctp_sock_t *s);

/* Register a peer by its advertised addresses. The association is set
 * up lazily by the first send. cookie comes back with each message.
 * sctp_port: the peer's SCTP port (user stack; kernel ports are in addrs). */
int btl_sctp_sock_peer_add(btl_sctp_sock_t *s, const btl_sctp_sock_addr_t *addrs, int naddrs,
                           int sctp_port, void *cookie, btl_sctp_peer_t **out);

void btl_sctp_sock_peer_remove(btl_sctp_sock_t *s, btl_sctp_peer_t *p);

/* Send one message on a stream. 0: taken (copied into the stack);
 * -EAGAIN: no room now; other negative: the peer is unreachable. */
int btl_sctp_sock_send(btl_sctp_sock_t *s, btl_sctp_peer_t *p, uint16_t stream, const void *buf,
                       size_t len);

/* Most pieces of one message. */
#define BTL_SCTP_SOCK_MAX_IOV 8

/* Send one message gathered from iovcnt pieces (at most
 * BTL_SCTP_SOCK_MAX_IOV), starting at byte *done
 * of it (0 for a new message). 0: the whole message was taken; -EAGAIN:
 * no room for the rest, *done says how far it got (a message begun must
 * be finished with further calls before anything else goes to this
 * peer); other negative: the peer is unreachable. */
int btl_sctp_sock_sendv(btl_sctp_sock_t *s, btl_sctp_peer_t *p, uint16_t stream,
                        const struct iovec *iov, int iovcnt, size_t *done);

/* Drive the stack (user: read UDP, run timers, probe paths). Returns 0
 * only when no message or event can have become readable since the last
 * call (the caller may then skip btl_sctp_sock_recv); the kernel stack,
 * whose socket fills by itself, always returns 1. */
int btl_sctp_sock_progress(btl_sctp_sock_t *s);

/* Take the next message or event: 1 got one, 0 nothing, <0 error. */
int btl_sctp_sock_recv(btl_sctp_sock_t *s, btl_sctp_sock_msg_t *msg);

/* Paths to a peer and how many are alive now (user stack probes them;
 * the kernel stack reports its association's addresses). */
int btl_sctp_sock_paths(btl_sctp_sock_t *s, btl_sctp_peer_t *p, int *alive);

/* Index of the path the user stack sends on now (-1: all, none alive). */
int btl_sctp_sock_active_path(btl_sctp_sock_t *s, btl_sctp_peer_t *p);

/* Counters of the user stack (packets, retransmissions, timeouts) as one
 * line of text; -ENOTCONN when it does not run. */
int btl_sctp_sock_user_stats(char *buf, size_t len);

/* ---- for the implementations ---- */
typedef struct btl_sctp_sock_ops {
    int (*open)(btl_sctp_sock_t **out, const btl_sctp_sock_config_t *cfg,
                const btl_sctp_sock_addr_t *local, int nlocal, char *why, size_t whylen);
    void (*close)(btl_sctp_sock_t *s);
    int (*peer_add)(btl_sctp_sock_t *s, const btl_sctp_sock_addr_t *addrs, int naddrs,
                    int sctp_port, void *cookie, btl_sctp_peer_t **out);
    void (*peer_remove)(btl_sctp_sock_t *s, btl_sctp_peer_t *p);
    int (*sendv)(btl_sctp_sock_t *s, btl_sctp_peer_t *p, uint16_t stream, const struct iovec *iov,
                 int iovcnt, size_t *done);
    int (*progress)(btl_sctp_sock_t *s);
    int (*recv)(btl_sctp_sock_t *s, btl_sctp_sock_msg_t *msg);
    int (*paths)(btl_sctp_sock_t *s, btl_sctp_peer_t *p, int *alive);
    int (*active_path)(btl_sctp_sock_t *s, btl_sctp_peer_t *p);
} btl_sctp_sock_ops_t;

/* Every implementation's socket starts with this. open fills in the
 * bound addresses (with their ports), which local_addrs hands out. */
struct btl_sctp_sock {
    const btl_sctp_sock_ops_t *ops;
    int stack;
    int more; /* set by progress: it stopped before its sockets
                         * were empty, another round may find packets */
    /* user: datagrams dropped for an unknown sender (counts up, wraps) */
    unsigned int strangers;
    int nlocal;
    btl_sctp_sock_addr_t local[BTL_SCTP_SOCK_MAX_ADDRS];
};

extern const btl_sctp_sock_ops_t btl_sctp_sock_user_ops; /* NULL ops when not built */
extern const btl_sctp_sock_ops_t btl_sctp_sock_kernel_ops;
int btl_sctp_sock_user_probe(char *why, size_t whylen);
int btl_sctp_sock_kernel_probe(char *why, size_t whylen);

/* Key for address hashes: ip and port in one 64-bit value. */
static inline uint64_t btl_sctp_sock_addr_key(uint32_t ip, uint16_t port)
{
    return ((uint64_t) ip << 16) | port;
}

#ifdef __cplusplus
}
#endif

#endif /* MCA_BTL_SCTP_SOCK_H */
