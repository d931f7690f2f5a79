/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * tc_sockmodel_wait.c: the SockModel client's progress and waiting:
 * polling for the reply to a pending PROBE or WAITING_START without
 * blocking, sleeping on the socket, and the blocking PROBE, WAITING_START
 * and RECV (with a PROBE riding behind it).
 */

#define _GNU_SOURCE /* ppoll; every piece of the client sees the same libc */
#include <errno.h>
#include <poll.h>
#include <string.h>

#include "tc_sockmodel_client_priv.h"

/* Send WAITING_START (timeout clamped to the protocol's bound) and read
 * its reply; the caller interprets the status. */
static int tc_sm_wait_start(tc_sockmodel_conn_t *c, uint32_t timeout_us, uint32_t flags,
                            tc_sockmodel_reply_t *r)
{
    if (timeout_us > SOCKMODEL_WAIT_MAX_US) {
        timeout_us = SOCKMODEL_WAIT_MAX_US;
    }
    return tc_sm_call(c, SOCKMODEL_WAITING_START, timeout_us, flags, r);
}

int tc_sockmodel_conn_poll(tc_sockmodel_conn_t *c, void *buf, size_t cap,
                           tc_sockmodel_msg_info_t *info, int block, uint32_t *status)
{
    tc_sockmodel_reply_t r;
    uint32_t request = c->pending;
    int rc, result;

    *status = SOCKMODEL_ST_NONE;
    if (0 == request) {
        return TC_SOCKMODEL_POLL_NONE;
    }
    if (!block) {
        rc = tc_sm_reply_ready(c);
        if (rc <= 0) {
            if (0 == rc) {
                c->polls_empty++;
                /* polling is waiting, not the node's work */
                tc_sm_set_mark(c);
            }
            return rc;
        }
    }
    rc = tc_sm_reply(c, request, &r);
    if (rc < 0) {
        return rc;
    }
    *status = r.status;
    c->pending = 0;
    switch (r.status) {
    case SOCKMODEL_ST_FOUND:
        tc_sm_info_from_reply(&r, info);
        result = TC_SOCKMODEL_POLL_FOUND;
        break;
    case SOCKMODEL_ST_NONE:
        result = SOCKMODEL_PROBE == request ? TC_SOCKMODEL_POLL_NONE : -1;
        break;
    case SOCKMODEL_ST_EXPIRED:
    case SOCKMODEL_ST_STOPPED:
        result = SOCKMODEL_WAITING_START == request ? TC_SOCKMODEL_POLL_NONE : -1;
        break;
    case SOCKMODEL_ST_OK:
        /* a WAITING_START with SOCKMODEL_WAIT_RECV that took a message */
        result = SOCKMODEL_WAITING_START == request ? TC_SOCKMODEL_POLL_MSG : -1;
        if (TC_SOCKMODEL_POLL_MSG == result) {
            tc_sm_info_from_reply(&r, info);
            rc = tc_sm_read_payload(c, "WAITING_START", buf, cap, info);
            if (rc < 0) {
                return rc;
            }
        }
        break;
    default:
        result = -1;
        break;
    }
    if (result < 0) {
        return tc_sm_fail(c, EPROTO, "%s answered with status %s (%u)",
                          tc_sockmodel_request_name(request), tc_sockmodel_status_name(r.status),
                          r.status);
    }
    if (SOCKMODEL_WAITING_START == request && c->stop_sent) {
        /* the stop is answered at once, after the wait's own reply */
        c->stop_sent = 0;
        rc = tc_sm_reply(c, SOCKMODEL_WAITING_STOP, &r);
        if (rc < 0) {
            return rc;
        }
    }
    tc_sm_set_mark(c);
    return result;
}

int tc_sockmodel_fd_sleep(int fd, unsigned timeout_us)
{
    struct pollfd pfd;
    struct timespec ts;
    int rc;

    if (fd < 0) {
        return -EBADF;
    }
    pfd.fd = fd;
    pfd.events = POLLIN;
    pfd.revents = 0;
    ts.tv_sec = (time_t) (timeout_us / 1000000u);
    ts.tv_nsec = (long) (timeout_us % 1000000u) * 1000L;
    rc = ppoll(&pfd, 1, &ts, NULL);
    if (rc < 0) {
        return EINTR == errno ? 0 : -errno;
    }
    return rc > 0 ? 1 : 0;
}

int tc_sockmodel_conn_probe(tc_sockmodel_conn_t *c, tc_sockmodel_msg_info_t *info)
{
    tc_sockmodel_reply_t r;
    int rc;

    rc = tc_sm_call(c, SOCKMODEL_PROBE, 0, 0, &r);
    if (rc < 0) {
        return rc;
    }
    return tc_sm_probe_result(c, &r, info);
}

int tc_sockmodel_conn_wait(tc_sockmodel_conn_t *c, uint32_t timeout_us,
                           tc_sockmodel_msg_info_t *info)
{
    tc_sockmodel_reply_t r;
    int rc;

    /* waiting is not CPU time of the simulated node (the call sets the mark) */
    rc = tc_sm_wait_start(c, timeout_us, 0, &r);
    if (rc < 0) {
        return rc;
    }
    switch (r.status) {
    case SOCKMODEL_ST_FOUND:
        tc_sm_info_from_reply(&r, info);
        return 1;
    case SOCKMODEL_ST_EXPIRED:
    case SOCKMODEL_ST_STOPPED:
        return 0;
    default:
        return tc_sm_fail(c, EPROTO, "WAITING_START answered with status %s (%u)",
                          tc_sockmodel_status_name(r.status), r.status);
    }
}
#ifdef SOCKMODEL_FEATURE_WAIT_RECV
int tc_sockmodel_conn_wait_recv(tc_sockmodel_conn_t *c, uint32_t timeout_us, void *buf, size_t cap,
                                tc_sockmodel_msg_info_t *info)
{
    tc_sockmodel_reply_t r;
    int rc;

    rc = tc_sm_wait_start(c, timeout_us, SOCKMODEL_WAIT_RECV, &r);
    if (0 == rc) {
        switch (r.status) {
        case SOCKMODEL_ST_OK:
            tc_sm_info_from_reply(&r, info);
            rc = tc_sm_read_payload(c, "WAITING_START", buf, cap, info);
            if (0 == rc) {
                rc = 1;
            }
            break;
        case SOCKMODEL_ST_EXPIRED:
        case SOCKMODEL_ST_STOPPED:
            rc = 0;
            break;
        default:
            rc = tc_sm_fail(c, EPROTO, "WAITING_START answered with status %s (%u)",
                            tc_sockmodel_status_name(r.status), r.status);
        }
    }
    tc_sm_set_mark(c);
    return rc;
}
#endif

int tc_sockmodel_conn_recv(tc_sockmodel_conn_t *c, void *buf, size_t cap,
                           tc_sockmodel_msg_info_t *info, tc_sockmodel_msg_info_t *next,
                           int *next_found)
{
    unsigned char frame[SOCKMODEL_CMD_BYTES];
    struct iovec iov;
    tc_sockmodel_reply_t r;
    tc_sockmodel_cmd_t cmd;
    int rc;

    if (0 != c->pending) {
        return tc_sm_busy(c, SOCKMODEL_RECV);
    }
    if (NULL != next) {
        /* the PROBE rides behind the RECV; the simulator answers in order */
        tc_sockmodel_cmd_make(&cmd, SOCKMODEL_PROBE, 0, 0, 0, 0, 0);
        tc_sockmodel_cmd_encode(frame, &cmd);
        iov.iov_base = frame;
        iov.iov_len = sizeof(frame);
        rc = tc_sm_command(c, SOCKMODEL_RECV, 0, 0, 0, &iov, 1);
        c->commands++;
        c->req_count[SOCKMODEL_PROBE]++;
    } else {
        rc = tc_sm_command(c, SOCKMODEL_RECV, 0, 0, 0, NULL, 0);
    }
    if (0 == rc) {
        rc = tc_sm_reply(c, SOCKMODEL_RECV, &r);
    }
    if (rc < 0) {
        return rc;
    }
    if (SOCKMODEL_ST_OK != r.status) {
        return tc_sm_fail(c, EPROTO, "RECV answered with status %s (%u)",
                          tc_sockmodel_status_name(r.status), r.status);
    }
    tc_sm_info_from_reply(&r, info);
    rc = tc_sm_read_payload(c, "RECV", buf, cap, info);
    if (0 == rc && NULL != next) {
        rc = tc_sm_reply(c, SOCKMODEL_PROBE, &r);
        if (0 == rc) {
            rc = tc_sm_probe_result(c, &r, next);
            if (rc >= 0) {
                *next_found = rc;
                rc = 0;
            }
        }
    }
    tc_sm_set_mark(c);
    if (rc < 0) {
        return rc;
    }
    return (int) info->len;
}
int tc_sockmodel_conn_settle(tc_sockmodel_conn_t *c, void *buf, size_t cap,
                             tc_sockmodel_msg_info_t *info)
{
    uint32_t status;
    int rc;

    if (0 == c->pending) {
        return TC_SOCKMODEL_POLL_NONE;
    }
    rc = tc_sockmodel_conn_wait_stop(c);
    if (0 == rc) {
        rc = tc_sockmodel_conn_poll(c, buf, cap, info, 1, &status);
    }
    return rc;
}
