/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * tc_sockmodel_reply.c: the SockModel client's replies: reading from the
 * simulator (busy-polling briefly before blocking, within the I/O bound),
 * checking that a reply answers its request, and the message information
 * and payload it announces, bounds-checked before use.
 */

#define _GNU_SOURCE /* ppoll; every piece of the client sees the same libc */
#include <errno.h>
#include <sched.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "tc_sockmodel_client_priv.h"

/* Busy-poll the socket for up to spin_us: a sleep and wake-up costs more
 * than a whole simulator round trip. 1 when data is there, 0 when not. */
static int tc_sm_spin_readable(tc_sockmodel_conn_t *c)
{
    struct timespec start, now;
    char probe;
    ssize_t n;

    clock_gettime(CLOCK_MONOTONIC, &start);
    for (;;) {
        n = recv(c->fd, &probe, 1, MSG_PEEK | MSG_DONTWAIT);
        if (0 != n && !(n < 0 && (EAGAIN == errno || EWOULDBLOCK == errno))) {
            return 1; /* data, end of stream or an error: recv reports it */
        }
        /* with more busy processes than cores the simulator may be
         * waiting for this very core: offer it on every round */
        sched_yield();
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (tc_sm_ts_ns(&now) - tc_sm_ts_ns(&start) >= (uint64_t) c->spin_us * 1000u) {
            return 0;
        }
    }
}

int tc_sm_read_all(tc_sockmodel_conn_t *c, void *buf, size_t len)
{
    char *p = buf;
    ssize_t n;
    int rc;

    while (len > 0) {
        n = recv(c->fd, p, len, MSG_DONTWAIT);
        if (n < 0 && (EAGAIN == errno || EWOULDBLOCK == errno)) {
            if (c->spin_us > 0) {
                (void) tc_sm_spin_readable(c);
            }
            n = recv(c->fd, p, len, MSG_WAITALL);
        }
        if (n > 0) {
            p += n;
            len -= (size_t) n;
            continue;
        }
        if (0 == n) {
            return tc_sm_fail(c, ECONNRESET, "the simulator closed the connection");
        }
        rc = tc_sm_io_error(c, "read from", "no reply from the simulator within");
        if (rc < 0) {
            return rc;
        }
    }
    return 0;
}

/* Read the reply to request and check that it answers it. */
int tc_sm_reply(tc_sockmodel_conn_t *c, uint32_t request, tc_sockmodel_reply_t *r)
{
    unsigned char frame[SOCKMODEL_REPLY_BYTES];
    struct timespec t0, t1;
    int rc;

    clock_gettime(CLOCK_MONOTONIC, &t0);
    rc = tc_sm_read_all(c, frame, sizeof(frame));
    if (rc < 0) {
        return rc;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (request <= SOCKMODEL_REQUEST_MAX) {
        c->reply_wait_ns[request] += tc_sm_ts_ns(&t1) - tc_sm_ts_ns(&t0);
    }
    tc_sockmodel_reply_decode(r, frame);
    if (r->code != request) {
        return tc_sm_fail(c, EPROTO, "the simulator answered %s (%u) to %s",
                          tc_sockmodel_request_name(r->code), r->code,
                          tc_sockmodel_request_name(request));
    }
    c->clock_ns = r->clock_ns;
    return 0;
}

void tc_sm_info_from_reply(const tc_sockmodel_reply_t *r, tc_sockmodel_msg_info_t *info)
{
    info->src = r->arg[SOCKMODEL_ARG_SRC];
    info->tag = r->arg[SOCKMODEL_ARG_TAG];
    info->len = r->arg[SOCKMODEL_ARG_LEN];
}

/* A PROBE reply: 1 and *info when a message is queued, 0 when none. */
int tc_sm_probe_result(tc_sockmodel_conn_t *c, const tc_sockmodel_reply_t *r,
                       tc_sockmodel_msg_info_t *info)
{
    if (SOCKMODEL_ST_FOUND == r->status) {
        tc_sm_info_from_reply(r, info);
        return 1;
    }
    if (SOCKMODEL_ST_NONE == r->status) {
        return 0;
    }
    return tc_sm_fail(c, EPROTO, "PROBE answered with status %s (%u)",
                      tc_sockmodel_status_name(r->status), r->status);
}

/* The payload announced by a reply: checked before a byte is read. */
int tc_sm_read_payload(tc_sockmodel_conn_t *c, const char *what, void *buf, size_t cap,
                       const tc_sockmodel_msg_info_t *info)
{
    if (info->len > cap || info->len > c->max_msg || info->src >= c->nodes) {
        return tc_sm_fail(c, EMSGSIZE,
                          "%s announced %u bytes from node %u (room for %zu, %u nodes)", what,
                          info->len, info->src, cap, c->nodes);
    }
    return tc_sm_read_all(c, buf, info->len);
}

/* 1 when a whole reply header can be read without blocking, 0 when not
 * yet, negative when the connection is gone. */
int tc_sm_reply_ready(tc_sockmodel_conn_t *c)
{
    unsigned char frame[SOCKMODEL_REPLY_BYTES];
    ssize_t n;

    n = recv(c->fd, frame, sizeof(frame), MSG_PEEK | MSG_DONTWAIT);
    if (n == (ssize_t) sizeof(frame)) {
        return 1;
    }
    if (0 == n) {
        return tc_sm_fail(c, ECONNRESET, "the simulator closed the connection");
    }
    if (n < 0 && EAGAIN != errno && EWOULDBLOCK != errno && EINTR != errno) {
        return tc_sm_fail(c, errno, "read from the simulator failed: %s", strerror(errno));
    }
    return 0;
}
