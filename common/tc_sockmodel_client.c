/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * tc_sockmodel_client.c: the SockModel client's connection (see
 * tc_sockmodel_client.h): a tc_sockmodel_conn_t set up, connected over
 * TCP or a unix socket (retrying while the simulator is still starting),
 * the rank handshake with the job token, and its end (FINISH, close).  The other pieces
 * are named in tc_sockmodel_client_priv.h.
 */

#define _GNU_SOURCE /* ppoll; every piece of the client sees the same libc */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/un.h>
#include <unistd.h>

#include "tc_sockmodel_client_priv.h"

static uint64_t tc_sm_mono_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return tc_sm_ts_ns(&ts) / 1000000ull;
}

void tc_sockmodel_conn_init(tc_sockmodel_conn_t *c, double cycle_ns, double scale,
                            int io_timeout_ms)
{
    memset(c, 0, sizeof(*c));
    c->fd = -1;
    c->cycle_ns = cycle_ns > 0.0 ? cycle_ns : 4.0;
    c->scale = scale > 0.0 ? scale : 0.0;
    c->io_timeout_ms = io_timeout_ms > 0 ? io_timeout_ms : 0;
}

static void tc_sm_set_io_timeout(tc_sockmodel_conn_t *c, int ms)
{
    struct timeval tv;

    tv.tv_sec = ms / 1000;
    tv.tv_usec = (ms % 1000) * 1000;
    (void) setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    (void) setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

static int tc_sm_try_connect_unix(tc_sockmodel_conn_t *c, const char *path)
{
    struct sockaddr_un sa;
    int fd, err;

    memset(&sa, 0, sizeof(sa));
    sa.sun_family = AF_UNIX;
    if (strlen(path) >= sizeof(sa.sun_path)) {
        return tc_sm_fail(c, ENAMETOOLONG, "the socket path %s is too long", path);
    }
    memcpy(sa.sun_path, path, strlen(path) + 1);
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        return tc_sm_fail(c, errno, "socket: %s", strerror(errno));
    }
    if (0 != connect(fd, (struct sockaddr *) &sa, sizeof(sa))) {
        err = errno;
        close(fd);
        /* no socket file yet is the same as nobody listening yet */
        if (ENOENT == err) {
            err = ECONNREFUSED;
        }
        return tc_sm_fail(c, err, "cannot connect to the simulator at unix:%s: %s", path,
                          strerror(err));
    }
    c->fd = fd;
    return 0;
}

static int tc_sm_try_connect(tc_sockmodel_conn_t *c, const char *host, int port)
{
    struct addrinfo hints, *res = NULL, *ai;
    char port_str[16];
    int fd = -1, rc, err = ECONNREFUSED, one = 1;

    if (0 == strncmp(host, TC_SOCKMODEL_UNIX_PREFIX, 5)) {
        return tc_sm_try_connect_unix(c, host + 5);
    }
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    snprintf(port_str, sizeof(port_str), "%d", port);
    rc = getaddrinfo(host, port_str, &hints, &res);
    if (0 != rc) {
        return tc_sm_fail(c, EHOSTUNREACH, "cannot resolve %s: %s", host, gai_strerror(rc));
    }
    for (ai = res; NULL != ai; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd < 0) {
            err = errno;
            continue;
        }
        if (0 == connect(fd, ai->ai_addr, ai->ai_addrlen)) {
            break;
        }
        err = errno;
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd < 0) {
        return tc_sm_fail(c, err, "cannot connect to the simulator at %s:%d: %s", host, port,
                          strerror(err));
    }
    /* commands are small and latency-bound (a TCP socket here) */
    (void) setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    c->fd = fd;
    return 0;
}

int tc_sockmodel_conn_connect(tc_sockmodel_conn_t *c, const char *host, int port,
                              uint32_t want_rank, int timeout_ms)
{
    unsigned char hello[SOCKMODEL_HELLO_AUTH_BYTES], welcome[SOCKMODEL_WELCOME_BYTES];
    uint64_t deadline = tc_sm_mono_ms() + (uint64_t) (timeout_ms > 0 ? timeout_ms : 0);
    struct iovec iov;
    struct pollfd pfd;
    size_t got = 0;
    uint32_t rank;
    int rc;

    /* a simulator that is still starting refuses: retry until the deadline */
    for (;;) {
        rc = tc_sm_try_connect(c, host, port);
        if (0 == rc) {
            break;
        }
        if (-ECONNREFUSED != rc || tc_sm_mono_ms() >= deadline) {
            return rc;
        }
        usleep(10000);
    }

    if (c->have_token) {
        tc_sockmodel_put32(hello, SOCKMODEL_HELLO_AUTH);
        tc_sockmodel_put32(hello + 4, want_rank);
        memcpy(hello + 8, c->token, SOCKMODEL_TOKEN_BYTES);
        iov.iov_len = SOCKMODEL_HELLO_AUTH_BYTES;
    } else {
        tc_sockmodel_put32(hello, want_rank);
        iov.iov_len = SOCKMODEL_HELLO_BYTES;
    }
    iov.iov_base = hello;
    tc_sm_set_io_timeout(c, timeout_ms > 0 ? timeout_ms : 0);
    rc = tc_sm_write_iov(c, &iov, 1);
    if (rc < 0) {
        tc_sockmodel_conn_close(c);
        return rc;
    }
    /* the welcome comes once every node has connected */
    while (got < sizeof(welcome)) {
        uint64_t now = tc_sm_mono_ms();
        ssize_t n;

        if (now >= deadline) {
            tc_sockmodel_conn_close(c);
            return tc_sm_fail(c, ETIMEDOUT,
                              "the simulator at %s:%d did not start the run within %d s "
                              "(not every node connected)",
                              host, port, timeout_ms / 1000);
        }
        pfd.fd = c->fd;
        pfd.events = POLLIN;
        pfd.revents = 0;
        rc = poll(&pfd, 1, (int) (deadline - now));
        if (rc < 0 && EINTR != errno) {
            tc_sockmodel_conn_close(c);
            return tc_sm_fail(c, errno, "poll failed: %s", strerror(errno));
        }
        if (rc <= 0) {
            continue;
        }
        n = recv(c->fd, welcome + got, sizeof(welcome) - got, 0);
        if (0 == n) {
            tc_sockmodel_conn_close(c);
            return tc_sm_fail(c, ECONNRESET,
                              "the simulator at %s:%d closed the connection during the handshake",
                              host, port);
        }
        if (n < 0) {
            if (EINTR == errno || EAGAIN == errno) {
                continue;
            }
            tc_sockmodel_conn_close(c);
            return tc_sm_fail(c, errno, "handshake read failed: %s", strerror(errno));
        }
        got += (size_t) n;
    }
    rank = tc_sockmodel_get32(welcome);
    if (SOCKMODEL_RANK_REFUSED == rank && SOCKMODEL_RANK_JOIN == want_rank) {
        tc_sockmodel_conn_close(c);
        return tc_sm_fail(c, EADDRINUSE, "the simulator at %s:%d refused a joining node", host,
                          port);
    }
    if (SOCKMODEL_RANK_REFUSED == rank) {
        tc_sockmodel_conn_close(c);
        return tc_sm_fail(c, EADDRINUSE, "the simulator at %s:%d refused rank %u", host, port,
                          want_rank);
    }
    if (SOCKMODEL_RANK_ANY != want_rank && SOCKMODEL_RANK_JOIN != want_rank && rank != want_rank) {
        tc_sockmodel_conn_close(c);
        return tc_sm_fail(c, EPROTO, "asked the simulator for rank %u and got %u", want_rank, rank);
    }
    c->rank = rank;
    tc_sm_set_io_timeout(c, c->io_timeout_ms);
    tc_sm_set_mark(c);
    return 0;
}

void tc_sockmodel_conn_attach(tc_sockmodel_conn_t *c, int fd)
{
    c->fd = fd;
    tc_sm_set_io_timeout(c, c->io_timeout_ms);
    tc_sm_set_mark(c);
}

void tc_sockmodel_conn_close(tc_sockmodel_conn_t *c)
{
    if (c->fd >= 0) {
        close(c->fd);
        c->fd = -1;
    }
}

int tc_sockmodel_conn_finish(tc_sockmodel_conn_t *c)
{
    tc_sockmodel_reply_t r;
    int rc = tc_sm_call(c, SOCKMODEL_FINISH, 0, 0, &r);

    /* refused while a reply is pending: that reply is still to be read */
    if (-EBUSY != rc) {
        tc_sockmodel_conn_close(c);
    }
    return rc;
}
