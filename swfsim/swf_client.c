/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * swf_client.c: the small blocking SockModel client (see swf_client.h).
 */

#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include "swf_client.h"

int swf_client_write_all(int fd, const void *buf, size_t len)
{
    const unsigned char *p = buf;

    while (len > 0) {
        ssize_t w = send(fd, p, len, MSG_NOSIGNAL);
        if (w < 0) {
            if (EINTR == errno) {
                continue;
            }
            return -1;
        }
        p += w;
        len -= (size_t) w;
    }
    return 0;
}

int swf_client_read_all(int fd, void *buf, size_t len)
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

int swf_client_read_port_file(const char *path, char *buf, size_t n, int timeout_ms)
{
    for (int waited = 0;; waited += 10) {
        FILE *f = fopen(path, "r");
        if (NULL != f) {
            char *ok = fgets(buf, (int) n, f);
            fclose(f);
            if (NULL != ok) {
                buf[strcspn(buf, "\r\n")] = '\0';
                return 0;
            }
        }
        if (waited >= timeout_ms) {
            return -1;
        }
        {
            struct timespec ts = { 0, 10 * 1000 * 1000 };
            nanosleep(&ts, NULL);
        }
    }
}

int swf_client_connect(swf_client_t *c, const char *hostport, uint32_t rank,
                       const char **why)
{
    char host[256];
    const char *colon = strrchr(hostport, ':');
    struct addrinfo hints, *res = NULL, *ai;
    unsigned char w[4];
    sockmodel_reply_t r;
    int one = 1;
    size_t hl;

    memset(c, 0, sizeof(*c));
    c->fd = -1;
    if (NULL == colon || (hl = (size_t) (colon - hostport)) == 0 || hl >= sizeof(host)) {
        *why = "address is not HOST:PORT";
        return -1;
    }
    memcpy(host, hostport, hl);
    host[hl] = '\0';
    memset(&hints, 0, sizeof(hints));
    hints.ai_socktype = SOCK_STREAM;
    if (0 != getaddrinfo(host, colon + 1, &hints, &res)) {
        *why = "cannot resolve the address";
        return -1;
    }
    for (ai = res; NULL != ai; ai = ai->ai_next) {
        c->fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (c->fd >= 0 && 0 == connect(c->fd, ai->ai_addr, ai->ai_addrlen)) {
            break;
        }
        if (c->fd >= 0) {
            close(c->fd);
            c->fd = -1;
        }
    }
    freeaddrinfo(res);
    if (c->fd < 0) {
        *why = "cannot connect";
        return -1;
    }
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    sockmodel_put32(w, rank);
    if (0 != swf_client_write_all(c->fd, w, 4) || 0 != swf_client_read_all(c->fd, w, 4)) {
        *why = "handshake failed (connection closed)";
        swf_client_close(c);
        return -1;
    }
    c->rank = sockmodel_get32(w);
    if (SOCKMODEL_RANK_REFUSED == c->rank) {
        *why = "the simulator refused the connection";
        swf_client_close(c);
        return -1;
    }
    if (0 != swf_client_call(c, SOCKMODEL_SIZE, 0, 0, &r, NULL, 0)) {
        *why = "SIZE failed";
        swf_client_close(c);
        return -1;
    }
    c->size = r.arg[0];
    c->max_msg = r.arg[1];
    c->model = r.arg[2];
    return 0;
}

int swf_client_cmd(swf_client_t *c, uint32_t req, uint32_t p0, uint32_t p1, uint32_t p2,
                   uint32_t consumetime, const void *payload)
{
    unsigned char b[SOCKMODEL_CMD_BYTES];
    sockmodel_cmd_t cmd;

    sockmodel_cmd_make(&cmd, req, p0, p1, p2, 0, consumetime);
    sockmodel_cmd_encode(b, &cmd);
    if (0 != swf_client_write_all(c->fd, b, sizeof(b))) {
        return -1;
    }
    if (SOCKMODEL_SEND == req && p2 > 0) {
        return swf_client_write_all(c->fd, payload, p2);
    }
    return 0;
}

int swf_client_reply(swf_client_t *c, sockmodel_reply_t *r, void *buf, size_t cap)
{
    unsigned char b[SOCKMODEL_REPLY_BYTES];

    if (0 != swf_client_read_all(c->fd, b, sizeof(b))) {
        return -1;
    }
    sockmodel_reply_decode(r, b);
    if (sockmodel_reply_has_payload(r)) {
        size_t len = r->arg[SOCKMODEL_ARG_LEN];
        size_t take = len < cap ? len : cap;
        if (take > 0 && 0 != swf_client_read_all(c->fd, buf, take)) {
            return -1;
        }
        /* drain what does not fit */
        while (take < len) {
            char sink[4096];
            size_t k = len - take < sizeof(sink) ? len - take : sizeof(sink);
            if (0 != swf_client_read_all(c->fd, sink, k)) {
                return -1;
            }
            take += k;
        }
    }
    return 0;
}

int swf_client_call(swf_client_t *c, uint32_t req, uint32_t p0, uint32_t p1,
                    sockmodel_reply_t *r, void *buf, size_t cap)
{
    if (0 != swf_client_cmd(c, req, p0, p1, 0, 0, NULL) ||
        0 != swf_client_reply(c, r, buf, cap)) {
        return -1;
    }
    if (r->code != req) {
        errno = EPROTO;
        return -1;
    }
    return 0;
}

int swf_client_send(swf_client_t *c, uint32_t dest, uint32_t tag, const void *buf,
                    uint32_t len)
{
    return swf_client_cmd(c, SOCKMODEL_SEND, dest, tag, len, 0, buf);
}

int swf_client_finish(swf_client_t *c)
{
    sockmodel_reply_t r;
    int rc = swf_client_call(c, SOCKMODEL_FINISH, 0, 0, &r, NULL, 0);
    swf_client_close(c);
    return rc;
}

void swf_client_close(swf_client_t *c)
{
    if (c->fd >= 0) {
        close(c->fd);
        c->fd = -1;
    }
}
