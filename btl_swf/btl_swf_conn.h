/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * btl_swf_conn.h: the SockModel client used by btl_swf: one TCP
 * connection to the simulator, the rank handshake, one function per
 * request the BTL needs, and the consumetime accounting (CPU time between
 * commands, in simulated cycles). Plain C and libc only, so the unit tests
 * drive it against a scripted server without Open MPI.
 *
 * Every function returns 0 (or a count) on success and a negative errno
 * value on failure; swf_conn_t.error then holds a one-line reason. After
 * a failure the connection is unusable (the stream may be mid-frame).
 */
#ifndef MCA_BTL_SWF_CONN_H
#define MCA_BTL_SWF_CONN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>
#include <time.h>

#include "tc_sockmodel.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct swf_conn {
    int fd;
    uint32_t rank;          /* our simulated node */
    uint32_t nodes;         /* from SIZE */
    uint32_t max_msg;       /* largest payload the simulator accepts */
    uint32_t model;         /* enum sockmodel_model */
    uint32_t features;      /* SIZE arg3: optional protocol features */
    uint64_t clock_ns;      /* simulated clock in the last reply */
    /* consumetime: CPU nanoseconds times scale, divided by the cycle */
    double cycle_ns;
    double scale;
    double carry;           /* fraction of a cycle not yet reported */
    struct timespec mark;   /* CPU time at the end of the last command */
    int have_mark;
    uint64_t cycles_reported;
    uint64_t commands;
    int io_timeout_ms;      /* bound on one blocking read or write; 0: none */
    int spin_us;            /* busy-poll a reply this long before sleeping */
    char error[256];
} swf_conn_t;

/* What a PROBE, WAITING_START or RECV reply says about a message. */
typedef struct swf_msg_info {
    uint32_t src;
    uint32_t tag;
    uint32_t len;
} swf_msg_info_t;

/* Prepare c (no I/O). scale 0 disables consumetime. */
void swf_conn_init(swf_conn_t *c, double cycle_ns, double scale, int io_timeout_ms);

/* Split "HOST:PORT" (HOST may be empty: loopback). "unix:PATH" names a
 * Unix-domain socket: host gets the whole string, port 0. 0 or -EINVAL. */
int swf_conn_parse_address(const char *address, char *host, size_t host_len, int *port);

#define SWF_CONN_UNIX_PREFIX "unix:"

/* Connect (host "unix:PATH": a Unix-domain socket, port unused),
 * retrying refused connections until timeout_ms, and run the
 * rank handshake; the simulator answers once every node is connected.
 * On success c->rank holds the assigned rank. */
int swf_conn_connect(swf_conn_t *c, const char *host, int port, uint32_t want_rank,
                     int timeout_ms);

/* Use an already connected socket (unit tests); no handshake. */
void swf_conn_attach(swf_conn_t *c, int fd);

/* SIZE: fills nodes, max_msg and model. */
int swf_conn_size(swf_conn_t *c);

/* SEND of len bytes gathered from iov to node dest; no reply. */
int swf_conn_send(swf_conn_t *c, uint32_t dest, uint32_t tag, const struct iovec *iov,
                  int iovcnt, uint32_t len);

/* PROBE: 1 and *info when a message is queued, 0 when none. */
int swf_conn_probe(swf_conn_t *c, swf_msg_info_t *info);

/* WAITING_START with a timeout in microseconds: 1 and *info when a
 * message is (or becomes) queued, 0 when the wait expired. */
int swf_conn_wait(swf_conn_t *c, uint32_t timeout_us, swf_msg_info_t *info);

#ifdef SOCKMODEL_FEATURE_WAIT_RECV
/* WAITING_START that hands over the message itself (RECV semantics with
 * a timeout; only when c->features has SOCKMODEL_FEATURE_WAIT_RECV):
 * 1 with the message in buf and *info, 0 when the wait expired. Saves
 * the RECV round trip of every message that arrives while waiting. */
int swf_conn_wait_recv(swf_conn_t *c, uint32_t timeout_us, void *buf, size_t cap,
                       swf_msg_info_t *info);
#endif

/* RECV into buf (cap bytes): the length, with *info filled. A message
 * larger than cap is an error (-EMSGSIZE) and is never read into buf.
 * With next != NULL a PROBE goes out in the same write and *next_found
 * (1/0) and *next tell whether another message is queued: one round trip
 * per message while messages stream in. */
int swf_conn_recv(swf_conn_t *c, void *buf, size_t cap, swf_msg_info_t *info,
                  swf_msg_info_t *next, int *next_found);

/* CONSUMETIME: report the CPU time used since the last command now. */
int swf_conn_consume(swf_conn_t *c);

/* FINISH: waits for the reply, then closes the socket. */
int swf_conn_finish(swf_conn_t *c);

/* Close without FINISH (error paths). */
void swf_conn_close(swf_conn_t *c);

#ifdef __cplusplus
}
#endif

#endif /* MCA_BTL_SWF_CONN_H */
