/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * tc_sockmodel_client.h: the one SockModel client of the project, used by
 * btl_swf, swfsim-load, the example client and the tests:
 *   - the addresses: the single parser and writer of HOST:PORT and
 *     unix:PATH, and of the port-file line a simulator writes;
 *   - tc_sockmodel_conn_*: one stream connection to the simulator with the
 *     rank handshake (and job token), one function per request, polling
 *     without blocking, and the consumetime accounting (CPU time between
 *     commands, in simulated cycles) - what btl_swf drives;
 *   - tc_sockmodel_client_*: plain blocking frame I/O on a connected
 *     socket for load generators and tests that script the protocol.
 * Plain C and libc only, so the unit tests drive it without Open MPI.
 *
 * Every function returns 0 (or a count) on success and a negative errno
 * value on failure; tc_sockmodel_conn_t.error then holds a one-line reason. After
 * a failure the connection is unusable (the stream may be mid-frame).
 */
#ifndef TC_SOCKMODEL_CLIENT_H
#define TC_SOCKMODEL_CLIENT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>
#include <time.h>

#include "tc_sockmodel.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tc_sockmodel_conn {
    int fd;
    uint32_t rank;     /* our simulated node */
    uint32_t nodes;    /* from SIZE */
    uint32_t max_msg;  /* largest payload the simulator accepts */
    uint32_t model;    /* enum tc_sockmodel_model */
    uint32_t features; /* SIZE arg3: optional protocol features */
    uint64_t clock_ns; /* simulated clock in the last reply */
    /* consumetime: CPU nanoseconds times scale, divided by the cycle */
    double cycle_ns;
    double scale;
    double carry;         /* fraction of a cycle not yet reported */
    struct timespec mark; /* CPU time at the end of the last command */
    int have_mark;
    uint64_t cycles_reported;
    uint64_t commands;
    int io_timeout_ms; /* bound on one blocking read or write; 0: none */
    int spin_us;       /* busy-poll a reply this long before sleeping */
    /* where the wall time goes: requests written and the wall time spent
     * blocked until each one's reply was read, by request code */
    uint64_t req_count[SOCKMODEL_REQUEST_MAX + 1];
    uint64_t reply_wait_ns[SOCKMODEL_REQUEST_MAX + 1];
    /* a PROBE or WAITING_START written whose reply is not read yet (0:
     * none): progress polls for it without blocking (tc_sockmodel_conn_poll) */
    uint32_t pending;
    int stop_sent;        /* a WAITING_STOP follows the pending WAITING_START */
    uint64_t polls_empty; /* polls that found no reply yet */
    uint64_t stops;       /* WAITING_STOPs written */
    /* the job token sent in the hello (SOCKMODEL_HELLO_AUTH), if any */
    int have_token;
    unsigned char token[SOCKMODEL_TOKEN_BYTES];
    char error[256];
} tc_sockmodel_conn_t;

/* What a PROBE, WAITING_START or RECV reply says about a message. */
typedef struct tc_sockmodel_msg_info {
    uint32_t src;
    uint32_t tag;
    uint32_t len;
} tc_sockmodel_msg_info_t;

/* Prepare c (no I/O). scale 0 disables consumetime. */
void tc_sockmodel_conn_init(tc_sockmodel_conn_t *c, double cycle_ns, double scale,
                            int io_timeout_ms);

/* ---- addresses and the port file ------------------------------------ */

#define TC_SOCKMODEL_UNIX_PREFIX "unix:"
/* the port-file line of a launcher that could not start its simulator */
#define TC_SOCKMODEL_PORT_FILE_FAILED "failed"

/* Split "HOST:PORT" (HOST may be empty: loopback; [v6]:PORT). "unix:PATH"
 * names a Unix-domain socket: host gets the whole string, port 0.
 * 0 or -EINVAL. */
int tc_sockmodel_address_parse(const char *address, char *host, size_t host_len, int *port);

/* The address as text: "HOST:PORT", or host itself when it is unix:PATH
 * (port 0). 0, or -ENAMETOOLONG. */
int tc_sockmodel_address_format(char *buf, size_t len, const char *host, int port);

/* Write the one-line port file atomically (a temporary file renamed over
 * path, mode 0600), so that a process polling for it never reads half of
 * it. 0 or -errno. */
int tc_sockmodel_port_file_write(const char *path, const char *line);

/* Read a port file: 1 with the address (host, *port as by
 * tc_sockmodel_address_parse) when it holds a complete line, 0 when it is
 * not there or not complete yet, -EINVAL when the line is not an address,
 * -ECANCELED when it is TC_SOCKMODEL_PORT_FILE_FAILED. */
int tc_sockmodel_port_file_read(const char *path, char *host, size_t host_len, int *port);

/* The same, waiting up to timeout_ms for the file: the address as text in
 * buf. 0 or -1. */
int tc_sockmodel_port_file_wait(const char *path, char *buf, size_t len, int timeout_ms);

/* ---- the connection --------------------------------------------------- */

/* Connect (host "unix:PATH": a Unix-domain socket, port unused),
 * retrying refused connections until timeout_ms, and run the
 * rank handshake; the simulator answers once every node is connected.
 * On success c->rank holds the assigned rank. */
int tc_sockmodel_conn_connect(tc_sockmodel_conn_t *c, const char *host, int port,
                              uint32_t want_rank, int timeout_ms);

/* Use an already connected socket (unit tests); no handshake. */
void tc_sockmodel_conn_attach(tc_sockmodel_conn_t *c, int fd);

/* SIZE: fills nodes, max_msg and model. */
int tc_sockmodel_conn_size(tc_sockmodel_conn_t *c);

/* WATCH (when c->features has SOCKMODEL_FEATURE_WATCH, else -ENOTSUP):
 * from now on a node that dies is announced by a message of length 0
 * from it with tag (tc_sockmodel.h). 0 once the simulator said OK. */
int tc_sockmodel_conn_watch(tc_sockmodel_conn_t *c, uint32_t tag);
/* SEND of len bytes gathered from iov to node dest; no reply. */
int tc_sockmodel_conn_send(tc_sockmodel_conn_t *c, uint32_t dest, uint32_t tag,
                           const struct iovec *iov, int iovcnt, uint32_t len);

/* PROBE: 1 and *info when a message is queued, 0 when none. */
int tc_sockmodel_conn_probe(tc_sockmodel_conn_t *c, tc_sockmodel_msg_info_t *info);

/* WAITING_START with a timeout in microseconds: 1 and *info when a
 * message is (or becomes) queued, 0 when the wait expired. */
int tc_sockmodel_conn_wait(tc_sockmodel_conn_t *c, uint32_t timeout_us,
                           tc_sockmodel_msg_info_t *info);

#ifdef SOCKMODEL_FEATURE_WAIT_RECV
/* WAITING_START that hands over the message itself (RECV semantics with
 * a timeout; only when c->features has SOCKMODEL_FEATURE_WAIT_RECV):
 * 1 with the message in buf and *info, 0 when the wait expired. Saves
 * the RECV round trip of every message that arrives while waiting. */
int tc_sockmodel_conn_wait_recv(tc_sockmodel_conn_t *c, uint32_t timeout_us, void *buf, size_t cap,
                                tc_sockmodel_msg_info_t *info);
#endif

/* RECV into buf (cap bytes): the length, with *info filled. A message
 * larger than cap is an error (-EMSGSIZE) and is never read into buf.
 * With next != NULL a PROBE goes out in the same write and *next_found
 * (1/0) and *next tell whether another message is queued: one round trip
 * per message while messages stream in. */
int tc_sockmodel_conn_recv(tc_sockmodel_conn_t *c, void *buf, size_t cap,
                           tc_sockmodel_msg_info_t *info, tc_sockmodel_msg_info_t *next,
                           int *next_found);

/* Non-blocking polling. tc_sockmodel_conn_probe_start and tc_sockmodel_conn_wait_start
 * write a PROBE or a WAITING_START and return without reading the reply;
 * tc_sockmodel_conn_poll reads it once it is there. Meanwhile SENDs may be
 * written (a pending WAITING_START is first ended with WAITING_STOP,
 * which tc_sockmodel_conn_send does); no other request may be started until the
 * reply was read (-EBUSY). */
enum {
    TC_SOCKMODEL_POLL_NOTYET = 0, /* no reply yet: the request is still pending */
    TC_SOCKMODEL_POLL_NONE = 1,   /* PROBE NONE, or the wait EXPIRED or was STOPPED */
    TC_SOCKMODEL_POLL_FOUND = 2,  /* a queued message is announced in *info (not taken) */
    TC_SOCKMODEL_POLL_MSG = 3     /* a message was taken into buf, *info describes it */
};

int tc_sockmodel_conn_probe_start(tc_sockmodel_conn_t *c);
/* flags: 0 or SOCKMODEL_WAIT_RECV (when the simulator offers it) */
int tc_sockmodel_conn_wait_start(tc_sockmodel_conn_t *c, uint32_t timeout_us, uint32_t flags);

/* Read the reply of the pending request: with block 0 only when it has
 * arrived (else TC_SOCKMODEL_POLL_NOTYET), with block 1 waiting for it. *status
 * gets the reply's status (EXPIRED vs STOPPED). With nothing pending:
 * TC_SOCKMODEL_POLL_NONE. A WAITING_STOP's own reply is read in the same call.
 * The CPU time of a poll that finds nothing is not reported as the
 * node's work (the node is waiting). */
int tc_sockmodel_conn_poll(tc_sockmodel_conn_t *c, void *buf, size_t cap,
                           tc_sockmodel_msg_info_t *info, int block, uint32_t *status);

/* Sleep in the kernel until fd has bytes to read (or was closed: the
 * next read says which) or timeout_us passed: 1 readable, 0 not yet,
 * negative errno when poll failed. A thread that sleeps here is woken
 * when the simulator's answer arrives, where one that yields stays
 * queued behind every busy thread of the host. fd rather than a
 * connection: callers sleep without holding their connection's lock. */
int tc_sockmodel_fd_sleep(int fd, unsigned timeout_us);

/* End a pending WAITING_START early (WAITING_STOP, no reply read). */
int tc_sockmodel_conn_wait_stop(tc_sockmodel_conn_t *c);

/* End whatever is pending and read its reply, waiting for it: a message
 * that came with it is in buf/info (TC_SOCKMODEL_POLL_MSG) or announced
 * (TC_SOCKMODEL_POLL_FOUND). Before FINISH, and before any blocking request. */
int tc_sockmodel_conn_settle(tc_sockmodel_conn_t *c, void *buf, size_t cap,
                             tc_sockmodel_msg_info_t *info);

/* CONSUMETIME: report the CPU time used since the last command now. */
int tc_sockmodel_conn_consume(tc_sockmodel_conn_t *c);

/* FINISH: waits for the reply, then closes the socket. */
int tc_sockmodel_conn_finish(tc_sockmodel_conn_t *c);

/* Close without FINISH (error paths). */
void tc_sockmodel_conn_close(tc_sockmodel_conn_t *c);

/* ---- plain blocking frames (load generators, tests) ------------------ */

typedef struct tc_sockmodel_client {
    int fd;
    uint32_t rank;
    uint32_t size;
    uint32_t max_msg;
    uint32_t model;
} tc_sockmodel_client_t;

/* Connect to an address (HOST:PORT or unix:PATH) with the handshake (rank
 * or SOCKMODEL_RANK_ANY; token NULL or SOCKMODEL_TOKEN_BYTES bytes) and
 * SIZE. Blocks until the simulator has all its nodes. 0, or -1 with a
 * reason in *why. */
int tc_sockmodel_client_connect(tc_sockmodel_client_t *c, const char *address, uint32_t rank,
                                const unsigned char *token, const char **why);
int tc_sockmodel_client_write_all(int fd, const void *buf, size_t len);
int tc_sockmodel_client_read_all(int fd, void *buf, size_t len);
/* one command (and the payload of a SEND) */
int tc_sockmodel_client_cmd(tc_sockmodel_client_t *c, uint32_t req, uint32_t p0, uint32_t p1,
                            uint32_t p2, uint32_t consumetime, const void *payload);
/* one reply; a payload goes into buf up to cap bytes, the rest is read
 * and discarded */
int tc_sockmodel_client_reply(tc_sockmodel_client_t *c, tc_sockmodel_reply_t *r, void *buf,
                              size_t cap);
/* command and its reply, the reply's code checked */
int tc_sockmodel_client_call(tc_sockmodel_client_t *c, uint32_t req, uint32_t p0, uint32_t p1,
                             tc_sockmodel_reply_t *r, void *buf, size_t cap);
int tc_sockmodel_client_send(tc_sockmodel_client_t *c, uint32_t dest, uint32_t tag, const void *buf,
                             uint32_t len);
int tc_sockmodel_client_finish(tc_sockmodel_client_t *c);
void tc_sockmodel_client_close(tc_sockmodel_client_t *c);

#ifdef __cplusplus
}
#endif

#endif /* TC_SOCKMODEL_CLIENT_H */
