/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * tc_sockmodel_request.c: the SockModel client's requests: commands
 * framed and written (with the consumetime since the last command, the
 * CPU time between commands in simulated cycles), and one function per
 * request that expects no reply of its own or reads it at once (SIZE,
 * WATCH, SEND, the start of PROBE and WAITING_START, WAITING_STOP,
 * CONSUMETIME).
 */

#define _GNU_SOURCE /* ppoll; every piece of the client sees the same libc */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "tc_sockmodel_client_priv.h"

/* ---- consumetime ---------------------------------------------------- */

/* Cycles of CPU time since the end of the last command (0 the first
 * time); the rest of a cycle is carried over so that nothing is lost. */
static uint64_t tc_sm_cycles_since_mark(tc_sockmodel_conn_t *c)
{
    struct timespec now;
    double cycles;
    uint64_t whole;

    if (0.0 == c->scale || !c->have_mark) {
        return 0;
    }
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
    cycles = (double) (tc_sm_ts_ns(&now) - tc_sm_ts_ns(&c->mark)) * c->scale / c->cycle_ns;
    cycles += c->carry;
    if (cycles < 0.0) {
        cycles = 0.0;
    }
    whole = (uint64_t) cycles;
    c->carry = cycles - (double) whole;
    return whole;
}

void tc_sm_set_mark(tc_sockmodel_conn_t *c)
{
    if (0.0 != c->scale) {
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c->mark);
        c->have_mark = 1;
    }
}

/* ---- socket I/O ----------------------------------------------------- */

int tc_sm_write_iov(tc_sockmodel_conn_t *c, struct iovec *iov, int iovcnt)
{
    struct msghdr msg;
    ssize_t n;

    while (iovcnt > 0) {
        memset(&msg, 0, sizeof(msg));
        msg.msg_iov = iov;
        msg.msg_iovlen = (size_t) iovcnt;
        /* MSG_NOSIGNAL: a dead simulator is an error, not a SIGPIPE */
        n = sendmsg(c->fd, &msg, MSG_NOSIGNAL);
        if (n < 0) {
            int rc = tc_sm_io_error(c, "write to", "the simulator did not read for");

            if (rc < 0) {
                return rc;
            }
            continue;
        }
        while (iovcnt > 0 && (size_t) n >= iov->iov_len) {
            n -= (ssize_t) iov->iov_len;
            iov++;
            iovcnt--;
        }
        if (iovcnt > 0) {
            iov->iov_base = (char *) iov->iov_base + n;
            iov->iov_len -= (size_t) n;
        }
    }
    return 0;
}

/* Send one command (and its payload) with the consumetime since the
 * last command. Time beyond one 32-bit word goes in CONSUMETIME first. */
int tc_sm_command(tc_sockmodel_conn_t *c, uint32_t request, uint32_t p0, uint32_t p1, uint32_t p2,
                  const struct iovec *payload, int payload_cnt)
{
    unsigned char frame[SOCKMODEL_CMD_BYTES];
    struct iovec iov[8];
    tc_sockmodel_cmd_t cmd;
    uint64_t cycles;
    int i, rc;

    if (c->fd < 0) {
        return tc_sm_fail(c, ENOTCONN, "not connected to the simulator");
    }
    if (payload_cnt > 7) {
        return tc_sm_fail(c, EINVAL, "too many payload pieces");
    }
    cycles = tc_sm_cycles_since_mark(c);
    while (cycles > UINT32_MAX) {
        tc_sockmodel_cmd_make(&cmd, SOCKMODEL_CONSUMETIME, 0, 0, 0, 0, UINT32_MAX);
        tc_sockmodel_cmd_encode(frame, &cmd);
        iov[0].iov_base = frame;
        iov[0].iov_len = sizeof(frame);
        rc = tc_sm_write_iov(c, iov, 1);
        if (rc < 0) {
            return rc;
        }
        c->commands++;
        c->cycles_reported += UINT32_MAX;
        cycles -= UINT32_MAX;
    }
    tc_sockmodel_cmd_make(&cmd, request, p0, p1, p2, 0, (uint32_t) cycles);
    tc_sockmodel_cmd_encode(frame, &cmd);
    iov[0].iov_base = frame;
    iov[0].iov_len = sizeof(frame);
    for (i = 0; i < payload_cnt; i++) {
        iov[i + 1] = payload[i];
    }
    rc = tc_sm_write_iov(c, iov, payload_cnt + 1);
    if (rc < 0) {
        return rc;
    }
    c->commands++;
    c->req_count[request]++;
    c->cycles_reported += cycles;
    return 0;
}

/* A request without payload and its reply. */
int tc_sm_call(tc_sockmodel_conn_t *c, uint32_t request, uint32_t p0, uint32_t p1,
               tc_sockmodel_reply_t *r)
{
    int rc = tc_sm_busy(c, request);

    if (0 == rc) {
        rc = tc_sm_command(c, request, p0, p1, 0, NULL, 0);
    }
    if (0 == rc) {
        rc = tc_sm_reply(c, request, r);
    }
    tc_sm_set_mark(c);
    return rc;
}

/* A request with a reply of its own may not overtake a pending one. */
int tc_sm_busy(tc_sockmodel_conn_t *c, uint32_t request)
{
    if (0 != c->pending) {
        return tc_sm_fail(c, EBUSY, "%s while the reply to %s is not read",
                          tc_sockmodel_request_name(request),
                          tc_sockmodel_request_name(c->pending));
    }
    return 0;
}

/* ---- requests ------------------------------------------------------- */

int tc_sockmodel_conn_size(tc_sockmodel_conn_t *c)
{
    tc_sockmodel_reply_t r;
    int rc;

    rc = tc_sm_call(c, SOCKMODEL_SIZE, 0, 0, &r);
    if (rc < 0) {
        return rc;
    }
    if (0 == r.arg[0] || r.arg[0] > SOCKMODEL_MAX_NODES || c->rank >= r.arg[0]) {
        return tc_sm_fail(c, EPROTO, "the simulator reports %u nodes (our rank is %u)", r.arg[0],
                          c->rank);
    }
    c->nodes = r.arg[0];
    c->max_msg = r.arg[1];
    c->model = r.arg[2];
    c->features = r.arg[3];
    return 0;
}

int tc_sockmodel_conn_watch(tc_sockmodel_conn_t *c, uint32_t tag)
{
    tc_sockmodel_reply_t r;
    int rc;

    if (0 != c->pending) {
        return tc_sm_busy(c, SOCKMODEL_WATCH);
    }
    if (0 == (c->features & SOCKMODEL_FEATURE_WATCH)) {
        return tc_sm_fail(c, ENOTSUP, "the simulator offers no WATCH (features 0x%x)", c->features);
    }
    rc = tc_sm_call(c, SOCKMODEL_WATCH, tag, 0, &r);
    if (0 == rc && SOCKMODEL_ST_OK != r.status) {
        return tc_sm_fail(c, EPROTO, "WATCH answered with status %s",
                          tc_sockmodel_status_name(r.status));
    }
    return rc;
}

int tc_sockmodel_conn_wait_stop(tc_sockmodel_conn_t *c)
{
    int rc;

    if (SOCKMODEL_WAITING_START != c->pending || c->stop_sent) {
        return 0;
    }
    rc = tc_sm_command(c, SOCKMODEL_WAITING_STOP, 0, 0, 0, NULL, 0);
    if (0 == rc) {
        c->stop_sent = 1;
        c->stops++;
    }
    return rc;
}

int tc_sockmodel_conn_send(tc_sockmodel_conn_t *c, uint32_t dest, uint32_t tag,
                           const struct iovec *iov, int iovcnt, uint32_t len)
{
    int rc;

    if (dest >= c->nodes) {
        return tc_sm_fail(c, EINVAL, "SEND to node %u of %u", dest, c->nodes);
    }
    if (len > c->max_msg) {
        return tc_sm_fail(c, EMSGSIZE, "SEND of %u bytes exceeds the simulator's limit of %u", len,
                          c->max_msg);
    }
    /* a waiting node must stop waiting before it sends; a pending PROBE
     * needs nothing: the simulator runs the SEND after it, in order */
    rc = tc_sockmodel_conn_wait_stop(c);
    if (0 == rc) {
        rc = tc_sm_command(c, SOCKMODEL_SEND, dest, tag, len, iov, iovcnt);
    }
    tc_sm_set_mark(c);
    return rc;
}

int tc_sockmodel_conn_probe_start(tc_sockmodel_conn_t *c)
{
    int rc = tc_sm_busy(c, SOCKMODEL_PROBE);

    if (0 == rc) {
        rc = tc_sm_command(c, SOCKMODEL_PROBE, 0, 0, 0, NULL, 0);
    }
    if (0 == rc) {
        c->pending = SOCKMODEL_PROBE;
    }
    tc_sm_set_mark(c);
    return rc;
}

int tc_sockmodel_conn_wait_start(tc_sockmodel_conn_t *c, uint32_t timeout_us, uint32_t flags)
{
    int rc = tc_sm_busy(c, SOCKMODEL_WAITING_START);

    if (timeout_us > SOCKMODEL_WAIT_MAX_US) {
        timeout_us = SOCKMODEL_WAIT_MAX_US;
    }
    if (0 == rc) {
        rc = tc_sm_command(c, SOCKMODEL_WAITING_START, timeout_us, flags, 0, NULL, 0);
    }
    if (0 == rc) {
        c->pending = SOCKMODEL_WAITING_START;
        c->stop_sent = 0;
    }
    tc_sm_set_mark(c);
    return rc;
}

int tc_sockmodel_conn_consume(tc_sockmodel_conn_t *c)
{
    int rc = tc_sockmodel_conn_wait_stop(c);

    if (0 == rc) {
        rc = tc_sm_command(c, SOCKMODEL_CONSUMETIME, 0, 0, 0, NULL, 0);
    }

    tc_sm_set_mark(c);
    return rc;
}
