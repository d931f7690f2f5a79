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
    uint32_t model;         /* enum tc_sockmodel_model */
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
    /* where the wall time goes: requests written and the wall time spent
     * blocked until each one's reply was read, by request code */
    uint64_t req_count[SOCKMODEL_REQUEST_MAX + 1];
    uint64_t reply_wait_ns[SOCKMODEL_REQUEST_MAX + 1];
    /* a PROBE or WAITING_START written whose reply is not read yet (0:
     * none): progress polls for it without blocking (swf_conn_poll) */
    uint32_t pending;
    int stop_sent;          /* a WAITING_STOP follows the pending WAITING_START */
    uint64_t polls_empty;   /* polls that found no reply yet */
    uint64_t stops;         /* WAITING_STOPs written */
    /* the job token sent in the hello (SOCKMODEL_HELLO_AUTH), if any */
    int have_token;
    unsigned char token[SOCKMODEL_TOKEN_BYTES];
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

/* Non-blocking polling. swf_conn_probe_start and swf_conn_wait_start
 * write a PROBE or a WAITING_START and return without reading the reply;
 * swf_conn_poll reads it once it is there. Meanwhile SENDs may be
 * written (a pending WAITING_START is first ended with WAITING_STOP,
 * which swf_conn_send does); no other request may be started until the
 * reply was read (-EBUSY). */
enum {
    SWF_POLL_NOTYET = 0,    /* no reply yet: the request is still pending */
    SWF_POLL_NONE = 1,      /* PROBE NONE, or the wait EXPIRED or was STOPPED */
    SWF_POLL_FOUND = 2,     /* a queued message is announced in *info (not taken) */
    SWF_POLL_MSG = 3        /* a message was taken into buf, *info describes it */
};

int swf_conn_probe_start(swf_conn_t *c);
/* flags: 0 or SOCKMODEL_WAIT_RECV (when the simulator offers it) */
int swf_conn_wait_start(swf_conn_t *c, uint32_t timeout_us, uint32_t flags);

/* Read the reply of the pending request: with block 0 only when it has
 * arrived (else SWF_POLL_NOTYET), with block 1 waiting for it. *status
 * gets the reply's status (EXPIRED vs STOPPED). With nothing pending:
 * SWF_POLL_NONE. A WAITING_STOP's own reply is read in the same call.
 * The CPU time of a poll that finds nothing is not reported as the
 * node's work (the node is waiting). */
int swf_conn_poll(swf_conn_t *c, void *buf, size_t cap, swf_msg_info_t *info, int block,
                  uint32_t *status);

/* End a pending WAITING_START early (WAITING_STOP, no reply read). */
int swf_conn_wait_stop(swf_conn_t *c);

/* End whatever is pending and read its reply, waiting for it: a message
 * that came with it is in buf/info (SWF_POLL_MSG) or announced
 * (SWF_POLL_FOUND). Before FINISH, and before any blocking request. */
int swf_conn_settle(swf_conn_t *c, void *buf, size_t cap, swf_msg_info_t *info);

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
