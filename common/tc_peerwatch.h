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
 * one connection to each process it watches. Nothing is ever sent but one
 * goodbye byte:
 *   - on a connection this process opened: the end (EOF, RST) without the
 *     goodbye first means the peer died (fn is called once for it); the
 *     goodbye means it left in order (no call);
 *   - on a connection it accepted: it reads only to see the end (then
 *     closes it); at tc_peerwatch_close it writes the goodbye on each.
 * A silent network (a cut) is not an end: no call, no keepalive.
 * One thread per watcher polls the connections; it opens them itself (at
 * most connect_ms per address), so the caller never waits for a peer.
 * Costs two descriptors per watched peer (one opened, one accepted), none
 * on anybody's data path. Plain POSIX; the Open MPI side is
 * common/ompi/tc_ompi_watch.c.
 */
#ifndef TC_PEERWATCH_H
#define TC_PEERWATCH_H

#include <stddef.h>
#include <stdint.h>

#include "tc_common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* the published text: "PORT:A.B.C.D,A.B.C.D,..." at most this long */
#define TC_PEERWATCH_ADDR_MAX 160
/* IPv4 addresses kept of a host (the first that answers is used) */
#define TC_PEERWATCH_IPS 8
/* the only byte ever written: "this process leaves in order" */
#define TC_PEERWATCH_BYE 0x42

typedef struct tc_peerwatch tc_peerwatch_t;

/* A peer's address, parsed. */
typedef struct tc_peerwatch_addr {
    uint16_t port;                  /* host order */
    int nips;                       /* 1..TC_PEERWATCH_IPS */
    uint32_t ips[TC_PEERWATCH_IPS]; /* network order */
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
 * 1..TC_PEERWATCH_IPS dotted quads separated by ','; nothing else. */
int tc_peerwatch_parse(const char *text, size_t len, tc_peerwatch_addr_t *out);

/* What one read of at most one byte on a connection this process opened
 * says: n is recv's result, err its errno, byte what it read (n == 1). */
enum {
    TC_PEERWATCH_QUIET = 0, /* nothing yet (EAGAIN, EINTR) */
    TC_PEERWATCH_DEAD,      /* the end without a goodbye */
    TC_PEERWATCH_LEFT,      /* the goodbye */
    TC_PEERWATCH_BAD        /* a byte that is no goodbye: not our peer */
};
int tc_peerwatch_classify(long n, int err, unsigned char byte);

/* For tests: the number of connections opened and still watched. */
int tc_peerwatch_watched(tc_peerwatch_t *pw);

#ifdef __cplusplus
}
#endif

#endif /* TC_PEERWATCH_H */
