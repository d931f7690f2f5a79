/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * tc_sockmodel_client_priv.h: what the pieces of the SockModel client
 * share (tc_sockmodel_client.c: the connection and its handshake;
 * tc_sockmodel_request.c: commands written and the consumetime
 * accounting; tc_sockmodel_reply.c: replies read and checked;
 * tc_sockmodel_wait.c: polling and waiting; tc_sockmodel_addr.c:
 * addresses and the port file; tc_sockmodel_plain.c: plain blocking
 * frames).  Private to common/: users include tc_sockmodel_client.h.
 */
#ifndef TC_SOCKMODEL_CLIENT_PRIV_H
#define TC_SOCKMODEL_CLIENT_PRIV_H

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>

#include "tc_sockmodel_client.h"

/* Record a one-line reason in c->error; returns -err. Here, not in one
 * piece, because every piece reports its failures through it. */
static inline int tc_sm_fail(tc_sockmodel_conn_t *c, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static inline int tc_sm_fail(tc_sockmodel_conn_t *c, int err, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(c->error, sizeof(c->error), fmt, ap);
    va_end(ap);
    return -err;
}

/* After a failed read or write of the socket (errno set): 0 when it was
 * interrupted and is to be tried again, else the error, a timeout (the
 * socket's timeout ran out: timeout_what, then the timeout) or the
 * system's (op: what failed) */
static inline int tc_sm_io_error(tc_sockmodel_conn_t *c, const char *op, const char *timeout_what)
{
    if (EINTR == errno) {
        return 0;
    }
    if (EAGAIN == errno || EWOULDBLOCK == errno) {
        return tc_sm_fail(c, ETIMEDOUT, "%s %d ms", timeout_what, c->io_timeout_ms);
    }
    return tc_sm_fail(c, errno, "%s the simulator failed: %s", op, strerror(errno));
}

static inline uint64_t tc_sm_ts_ns(const struct timespec *ts)
{
    return (uint64_t) ts->tv_sec * 1000000000ull + (uint64_t) ts->tv_nsec;
}

/* requests (tc_sockmodel_request.c) */
/* the end of a command: CPU time from here on is the node's work */
void tc_sm_set_mark(tc_sockmodel_conn_t *c);
int tc_sm_write_iov(tc_sockmodel_conn_t *c, struct iovec *iov, int iovcnt);
/* one command (and its payload) with the consumetime since the last one */
int tc_sm_command(tc_sockmodel_conn_t *c, uint32_t request, uint32_t p0, uint32_t p1, uint32_t p2,
                  const struct iovec *payload, int payload_cnt);
/* a request without payload and its reply, then the mark set; -EBUSY,
 * nothing sent, while the reply to a pending PROBE or WAITING_START is
 * unread */
int tc_sm_call(tc_sockmodel_conn_t *c, uint32_t request, uint32_t p0, uint32_t p1,
               tc_sockmodel_reply_t *r);
/* -EBUSY while the reply to a pending PROBE or WAITING_START is unread */
int tc_sm_busy(tc_sockmodel_conn_t *c, uint32_t request);

/* replies (tc_sockmodel_reply.c) */
int tc_sm_read_all(tc_sockmodel_conn_t *c, void *buf, size_t len);
/* the reply to request, checked to answer it */
int tc_sm_reply(tc_sockmodel_conn_t *c, uint32_t request, tc_sockmodel_reply_t *r);
void tc_sm_info_from_reply(const tc_sockmodel_reply_t *r, tc_sockmodel_msg_info_t *info);
/* a PROBE reply: 1 and *info when a message is queued, 0 when none */
int tc_sm_probe_result(tc_sockmodel_conn_t *c, const tc_sockmodel_reply_t *r,
                       tc_sockmodel_msg_info_t *info);
/* the payload a reply announced, bounds-checked before a byte is read */
int tc_sm_read_payload(tc_sockmodel_conn_t *c, const char *what, void *buf, size_t cap,
                       const tc_sockmodel_msg_info_t *info);
/* 1 when a whole reply header is there, 0 when not yet, <0 on a lost link */
int tc_sm_reply_ready(tc_sockmodel_conn_t *c);

/* addresses and the port file (tc_sockmodel_addr.c) */
/* all of buf to fd: a socket by send (a peer gone is an error, not a
 * SIGPIPE), a file by write; 0, or -1 with errno set */
int tc_sm_write_fd(int fd, const void *buf, size_t len, int is_socket);

#endif /* TC_SOCKMODEL_CLIENT_PRIV_H */
