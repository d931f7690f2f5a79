/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * tc_sockmodel_plain.c: the SockModel client's plain blocking frame I/O
 * (tc_sockmodel_client_*): a socket connected through the connection's
 * handshake, then commands written and replies read whole, with no bound
 * on blocking, for load generators and tests that script the protocol.
 */

#define _GNU_SOURCE /* ppoll; every piece of the client sees the same libc */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/types.h>
#include <unistd.h>

#include "tc_sockmodel_client_priv.h"

int tc_sockmodel_client_write_all(int fd, const void *buf, size_t len)
{
    return tc_sm_write_fd(fd, buf, len, 1);
}

int tc_sockmodel_client_read_all(int fd, void *buf, size_t len)
{
    unsigned char *p = buf;

    while (len > 0) {
        ssize_t r = read(fd, p, len);

        if (r < 0) {
            if (EINTR == errno) {
                continue;
            }
            return -1;
        }
        if (0 == r) {
            errno = ECONNRESET;
            return -1;
        }
        p += r;
        len -= (size_t) r;
    }
    return 0;
}

int tc_sockmodel_client_connect(tc_sockmodel_client_t *c, const char *address, uint32_t rank,
                                const unsigned char *token, const char **why)
{
    static __thread char reason[256];
    tc_sockmodel_conn_t conn;
    char host[4200];
    int port = 0;

    memset(c, 0, sizeof(*c));
    c->fd = -1;
    if (0 != tc_sockmodel_address_parse(address, host, sizeof(host), &port)) {
        *why = "the address is neither HOST:PORT nor unix:PATH";
        return -1;
    }
    /* the handshake and SIZE of the connection client, then plain I/O */
    tc_sockmodel_conn_init(&conn, 4.0, 0.0, 0);
    if (NULL != token) {
        conn.have_token = 1;
        memcpy(conn.token, token, SOCKMODEL_TOKEN_BYTES);
    }
    if (0 != tc_sockmodel_conn_connect(&conn, host, port, rank, 600 * 1000) ||
        0 != tc_sockmodel_conn_size(&conn)) {
        snprintf(reason, sizeof(reason), "%s", conn.error);
        *why = reason;
        tc_sockmodel_conn_close(&conn);
        return -1;
    }
    c->fd = conn.fd;
    c->rank = conn.rank;
    c->size = conn.nodes;
    c->max_msg = conn.max_msg;
    c->model = conn.model;
    /* no bound on blocking from here on: the callers wait as long as
     * their script says */
    {
        struct timeval tv = {0, 0};

        (void) setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        (void) setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    }
    return 0;
}

int tc_sockmodel_client_cmd(tc_sockmodel_client_t *c, uint32_t req, uint32_t p0, uint32_t p1,
                            uint32_t p2, uint32_t consumetime, const void *payload)
{
    unsigned char b[SOCKMODEL_CMD_BYTES];
    tc_sockmodel_cmd_t cmd;

    tc_sockmodel_cmd_make(&cmd, req, p0, p1, p2, 0, consumetime);
    tc_sockmodel_cmd_encode(b, &cmd);
    if (0 != tc_sockmodel_client_write_all(c->fd, b, sizeof(b))) {
        return -1;
    }
    if (SOCKMODEL_SEND == req && p2 > 0) {
        return tc_sockmodel_client_write_all(c->fd, payload, p2);
    }
    return 0;
}

int tc_sockmodel_client_reply(tc_sockmodel_client_t *c, tc_sockmodel_reply_t *r, void *buf,
                              size_t cap)
{
    unsigned char b[SOCKMODEL_REPLY_BYTES];

    if (0 != tc_sockmodel_client_read_all(c->fd, b, sizeof(b))) {
        return -1;
    }
    tc_sockmodel_reply_decode(r, b);
    if (tc_sockmodel_reply_has_payload(r)) {
        size_t len = r->arg[SOCKMODEL_ARG_LEN];
        size_t take = len < cap ? len : cap;

        if (take > 0 && 0 != tc_sockmodel_client_read_all(c->fd, buf, take)) {
            return -1;
        }
        /* drain what does not fit */
        while (take < len) {
            char sink[4096];
            size_t k = len - take < sizeof(sink) ? len - take : sizeof(sink);

            if (0 != tc_sockmodel_client_read_all(c->fd, sink, k)) {
                return -1;
            }
            take += k;
        }
    }
    return 0;
}

int tc_sockmodel_client_call(tc_sockmodel_client_t *c, uint32_t req, uint32_t p0, uint32_t p1,
                             tc_sockmodel_reply_t *r, void *buf, size_t cap)
{
    if (0 != tc_sockmodel_client_cmd(c, req, p0, p1, 0, 0, NULL) ||
        0 != tc_sockmodel_client_reply(c, r, buf, cap)) {
        return -1;
    }
    if (r->code != req) {
        errno = EPROTO;
        return -1;
    }
    return 0;
}

int tc_sockmodel_client_send(tc_sockmodel_client_t *c, uint32_t dest, uint32_t tag, const void *buf,
                             uint32_t len)
{
    return tc_sockmodel_client_cmd(c, SOCKMODEL_SEND, dest, tag, len, 0, buf);
}

int tc_sockmodel_client_finish(tc_sockmodel_client_t *c)
{
    tc_sockmodel_reply_t r;
    int rc = tc_sockmodel_client_call(c, SOCKMODEL_FINISH, 0, 0, &r, NULL, 0);

    tc_sockmodel_client_close(c);
    return rc;
}

void tc_sockmodel_client_close(tc_sockmodel_client_t *c)
{
    if (c->fd >= 0) {
        close(c->fd);
        c->fd = -1;
    }
}
