/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * tc_peerwatch.h: learn at once that a process on another host died, from
 * the end of a TCP connection to it.
 *
 * A provider that hides a peer's death (a libfabric RDM endpoint: sends to
 * a vanished peer return -FI_EAGAIN for ever; a user SCTP stack: silence
 * until its retransmissions give up) learns nothing when a whole host is
 * killed, and the runtime may end the job before it says anything. The
 * kernel of the dead process's host closes its sockets at once (FIN or
 * RST). So each process listens on one TCP socket (any IPv4 address,
 * an ephemeral port), publishes the text of tc_peerwatch_open, and opens
 * one connection to each process it watches.
 *
 * Anyone on the networks can connect to the listener, so a connection
 * counts only once it has shown the listener's secret: a random token,
 * published in the text with the address (the job's processes alone read
 * it). The opener sends a hello (tc_peerwatch_hello_t) and the listener
 * answers one ACK byte; nothing else is ever sent but one goodbye byte:
 *   - on a connection this process opened: before the ACK, its end means
 *     nothing (the listener refused it, or was busy: try again later);
 *     after it, the end (EOF, RST) without the goodbye first means the
 *     peer died (fn is called once for it); the goodbye means it left in
 *     order (no call);
 *   - on a connection it accepted: no slot and no answer until a whole,
 *     right hello has come within TC_PEERWATCH_HELLO_MS (else it is
 *     closed); then it reads only to see the end; at tc_peerwatch_close it
 *     writes the goodbye on each.
 * A silent network (a cut) is not an end: no call, no keepalive.
 * One thread per watcher opens, answers and polls every connection without
 * blocking on any, so the caller never waits for a peer. Costs two
 * descriptors per watched peer (one opened, one accepted), none on
 * anybody's data path. Plain POSIX; the Open MPI side is
 * common/ompi/tc_ompi_watch.c.
 */
#ifndef TC_PEERWATCH_H
#define TC_PEERWATCH_H

#include <stddef.h>
#include <stdint.h>

#include "tc_common.h"
#include "tc_sockmodel.h"

#ifdef __cplusplus
extern "C" {
#endif

/* the listener's secret (the SockModel job token's size and hex form) */
#define TC_PEERWATCH_TOKEN_BYTES SOCKMODEL_TOKEN_BYTES
/* the published text: "PORT:A.B.C.D,A.B.C.D,.../TOKEN" (TOKEN: 64 hex
 * digits) at most this long, NUL included */
#define TC_PEERWATCH_ADDR_MAX 224
/* IPv4 addresses kept of a host (the first that answers is used) */
#define TC_PEERWATCH_IPS 8
/* the goodbye: "this process leaves in order" */
#define TC_PEERWATCH_BYE 0x42
/* the listener's answer to a right hello: "this connection counts" */
#define TC_PEERWATCH_ACK 0x41
/* the first bytes of a hello (the last one is the protocol's version) */
#define TC_PEERWATCH_MAGIC "tcpeerw1"
/* a connection's hello must be whole within this (ms) */
#define TC_PEERWATCH_HELLO_MS 2000
/* connections accepted and not yet shown a hello, at most */
#define TC_PEERWATCH_PENDING 64
/* a connection refused before the ACK is tried again this often at most */
#define TC_PEERWATCH_TRIES 12

/* The opener's first and only message (40 bytes, no padding). */
typedef struct tc_peerwatch_hello {
    char magic[8];                                 /* TC_PEERWATCH_MAGIC, no NUL */
    unsigned char token[TC_PEERWATCH_TOKEN_BYTES]; /* the listener's, from its text */
} tc_peerwatch_hello_t;

#define TC_PEERWATCH_HELLO_BYTES 40u
_Static_assert(sizeof(tc_peerwatch_hello_t) == TC_PEERWATCH_HELLO_BYTES, "hello: 40 bytes");

typedef struct tc_peerwatch tc_peerwatch_t;

/* A peer's address, parsed. */
typedef struct tc_peerwatch_addr {
    uint16_t port;                  /* host order */
    int nips;                       /* 1..TC_PEERWATCH_IPS */
    uint32_t ips[TC_PEERWATCH_IPS]; /* network order */
    unsigned char token[TC_PEERWATCH_TOKEN_BYTES];
} tc_peerwatch_addr_t;

/* Called from the watcher's thread when peer id died. */
typedef void (*tc_peerwatch_fn_t)(uint32_t id, void *arg);
/* Called from the watcher's thread to learn peer id's published text:
 * a malloc()ed string in *text, or non-zero when unknown. */
typedef int (*tc_peerwatch_lookup_fn_t)(uint32_t id, char **text, void *arg);

/* Listen (ips: the host's up, non-loopback IPv4 addresses, or 127.0.0.1
 * alone when it has none) and write the text to publish into addr (size
 * TC_PEERWATCH_ADDR_MAX). 0, or a negative errno. */
int tc_peerwatch_open(tc_peerwatch_t **pw, char *addr, size_t size);

/* Start the thread: it looks up and connects to each of ids[0..n-1]
 * (copied), then watches them, and accepts the others' connections.
 * Once only; 0 or a negative errno. */
int tc_peerwatch_start(tc_peerwatch_t *pw, const uint32_t *ids, size_t n,
                       tc_peerwatch_lookup_fn_t lookup, tc_peerwatch_fn_t fn, void *arg,
                       int connect_ms);

/* Goodbye on every accepted connection, stop and join the thread, close
 * every descriptor, free. After it returns fn is never called again. NULL
 * is a no-op. */
void tc_peerwatch_close(tc_peerwatch_t *pw);

/* Parse a published text (at most len bytes, NUL-terminated or not):
 * 0 and *out filled, or -EINVAL. Strict: a decimal port 1..65535, ':',
 * 1..TC_PEERWATCH_IPS dotted quads separated by ',', '/', 64 hex digits;
 * nothing else. */
int tc_peerwatch_parse(const char *text, size_t len, tc_peerwatch_addr_t *out);

/* What the listener has read of a connection's hello so far (got bytes
 * of buf; token: its own secret). */
enum {
    TC_PEERWATCH_HELLO_MORE = 0, /* right so far, not whole */
    TC_PEERWATCH_HELLO_OK,       /* whole and right: the connection counts */
    TC_PEERWATCH_HELLO_BAD       /* wrong (or too long): close it */
};
int tc_peerwatch_hello_check(const unsigned char *buf, size_t got, const unsigned char *token);

/* What one read of at most one byte on a connection this process opened
 * says: n is recv's result, err its errno, byte what it read (n == 1). */
enum {
    TC_PEERWATCH_QUIET = 0, /* nothing yet (EAGAIN, EINTR) */
    TC_PEERWATCH_DEAD,      /* the end without a goodbye */
    TC_PEERWATCH_LEFT,      /* the goodbye */
    TC_PEERWATCH_BAD        /* a byte that is no goodbye: not our peer */
};
int tc_peerwatch_classify(long n, int err, unsigned char byte);

/* For tests: the number of connections opened, answered (ACK) and still
 * watched. */
int tc_peerwatch_watched(tc_peerwatch_t *pw);

#ifdef __cplusplus
}
#endif

#endif /* TC_PEERWATCH_H */
