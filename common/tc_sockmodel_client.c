/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * tc_sockmodel_client.c: the SockModel client (see tc_sockmodel_client.h):
 * addresses and port files, the connection (socket I/O with bounded
 * blocking, command framing from tc_sockmodel.h, reply checking, polling,
 * consumetime accounting), and plain blocking frame I/O.
 */

#define _GNU_SOURCE /* ppoll */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/un.h>
#include <unistd.h>

#include "tc_sockmodel_client.h"

static int tc_sm_fail(tc_sockmodel_conn_t *c, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int tc_sm_fail(tc_sockmodel_conn_t *c, int err, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(c->error, sizeof(c->error), fmt, ap);
    va_end(ap);
    return -err;
}

static uint64_t tc_sm_ts_ns(const struct timespec *ts)
{
    return (uint64_t) ts->tv_sec * 1000000000ull + (uint64_t) ts->tv_nsec;
}

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

static void tc_sm_set_mark(tc_sockmodel_conn_t *c)
{
    if (0.0 != c->scale) {
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c->mark);
        c->have_mark = 1;
    }
}

/* ---- socket I/O ----------------------------------------------------- */

static int tc_sm_write_iov(tc_sockmodel_conn_t *c, struct iovec *iov, int iovcnt)
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
            if (EINTR == errno) {
                continue;
            }
            if (EAGAIN == errno || EWOULDBLOCK == errno) {
                return tc_sm_fail(c, ETIMEDOUT, "the simulator did not read for %d ms",
                                  c->io_timeout_ms);
            }
            return tc_sm_fail(c, errno, "write to the simulator failed: %s", strerror(errno));
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

static int tc_sm_read_all(tc_sockmodel_conn_t *c, void *buf, size_t len)
{
    char *p = buf;
    ssize_t n;

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
        if (EINTR == errno) {
            continue;
        }
        if (EAGAIN == errno || EWOULDBLOCK == errno) {
            return tc_sm_fail(c, ETIMEDOUT, "no reply from the simulator within %d ms",
                              c->io_timeout_ms);
        }
        return tc_sm_fail(c, errno, "read from the simulator failed: %s", strerror(errno));
    }
    return 0;
}

/* Send one command (and its payload) with the consumetime since the
 * last command. Time beyond one 32-bit word goes in CONSUMETIME first. */
static int tc_sm_command(tc_sockmodel_conn_t *c, uint32_t request, uint32_t p0, uint32_t p1,
                         uint32_t p2, const struct iovec *payload, int payload_cnt)
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

/* Read the reply to request and check that it answers it. */
static int tc_sm_reply(tc_sockmodel_conn_t *c, uint32_t request, tc_sockmodel_reply_t *r)
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

static void tc_sm_info_from_reply(const tc_sockmodel_reply_t *r, tc_sockmodel_msg_info_t *info)
{
    info->src = r->arg[SOCKMODEL_ARG_SRC];
    info->tag = r->arg[SOCKMODEL_ARG_TAG];
    info->len = r->arg[SOCKMODEL_ARG_LEN];
}

/* A PROBE reply: 1 and *info when a message is queued, 0 when none. */
static int tc_sm_probe_result(tc_sockmodel_conn_t *c, const tc_sockmodel_reply_t *r,
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

/* A request without payload and its reply. */
static int tc_sm_call(tc_sockmodel_conn_t *c, uint32_t request, uint32_t p0, uint32_t p1,
                      tc_sockmodel_reply_t *r)
{
    int rc = tc_sm_command(c, request, p0, p1, 0, NULL, 0);
    return 0 == rc ? tc_sm_reply(c, request, r) : rc;
}

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

/* A request with a reply of its own may not overtake a pending one. */
static int tc_sm_busy(tc_sockmodel_conn_t *c, uint32_t request)
{
    if (0 != c->pending) {
        return tc_sm_fail(c, EBUSY, "%s while the reply to %s is not read",
                          tc_sockmodel_request_name(request),
                          tc_sockmodel_request_name(c->pending));
    }
    return 0;
}

/* ---- connection ----------------------------------------------------- */

int tc_sockmodel_address_parse(const char *address, char *host, size_t host_len, int *port)
{
    const char *colon;
    char *end;
    size_t n;
    long value;

    if (NULL != address && 0 == strncmp(address, TC_SOCKMODEL_UNIX_PREFIX, 5)) {
        /* unix:PATH stays whole in host; the path must fit sun_path */
        n = strlen(address);
        if (n == 5 || n + 1 > host_len || n - 5 >= sizeof(((struct sockaddr_un *) 0)->sun_path)) {
            return -EINVAL;
        }
        memcpy(host, address, n + 1);
        *port = 0;
        return 0;
    }
    if (NULL == address || NULL == (colon = strrchr(address, ':'))) {
        return -EINVAL;
    }
    n = (size_t) (colon - address);
    if (n + 1 > host_len) {
        return -EINVAL;
    }
    if (0 == n) {
        snprintf(host, host_len, "127.0.0.1");
    } else {
        memcpy(host, address, n);
        host[n] = '\0';
        /* [::1]:port */
        if ('[' == host[0] && n > 2 && ']' == host[n - 1]) {
            memmove(host, host + 1, n - 2);
            host[n - 2] = '\0';
        }
    }
    errno = 0;
    value = strtol(colon + 1, &end, 10);
    if (0 != errno || end == colon + 1 || '\0' != *end || value <= 0 || value > 65535) {
        return -EINVAL;
    }
    *port = (int) value;
    return 0;
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
    if (SOCKMODEL_RANK_REFUSED == rank) {
        tc_sockmodel_conn_close(c);
        return tc_sm_fail(c, EADDRINUSE, "the simulator at %s:%d refused rank %u", host, port,
                          want_rank);
    }
    if (SOCKMODEL_RANK_ANY != want_rank && rank != want_rank) {
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

/* ---- requests ------------------------------------------------------- */

int tc_sockmodel_conn_size(tc_sockmodel_conn_t *c)
{
    tc_sockmodel_reply_t r;
    int rc;

    if (0 != c->pending) {
        return tc_sm_busy(c, SOCKMODEL_SIZE);
    }
    rc = tc_sm_call(c, SOCKMODEL_SIZE, 0, 0, &r);
    tc_sm_set_mark(c);
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
        return tc_sm_fail(c, ENOTSUP, "the simulator offers no WATCH (features 0x%x)",
                          c->features);
    }
    rc = tc_sm_call(c, SOCKMODEL_WATCH, tag, 0, &r);
    if (0 == rc && SOCKMODEL_ST_OK != r.status) {
        return tc_sm_fail(c, EPROTO, "WATCH answered with status %s",
                          tc_sockmodel_status_name(r.status));
    }
    return rc;
}

static int tc_sm_read_payload(tc_sockmodel_conn_t *c, const char *what, void *buf, size_t cap,
                              const tc_sockmodel_msg_info_t *info);

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

/* 1 when a whole reply header can be read without blocking, 0 when not
 * yet, negative when the connection is gone. */
static int tc_sm_reply_ready(tc_sockmodel_conn_t *c)
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

    if (0 != c->pending) {
        return tc_sm_busy(c, SOCKMODEL_PROBE);
    }
    rc = tc_sm_call(c, SOCKMODEL_PROBE, 0, 0, &r);
    tc_sm_set_mark(c);
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

    if (0 != c->pending) {
        return tc_sm_busy(c, SOCKMODEL_WAITING_START);
    }
    rc = tc_sm_wait_start(c, timeout_us, 0, &r);
    /* waiting is not CPU time of the simulated node */
    tc_sm_set_mark(c);
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

/* The payload announced by a reply: checked before a byte is read. */
static int tc_sm_read_payload(tc_sockmodel_conn_t *c, const char *what, void *buf, size_t cap,
                              const tc_sockmodel_msg_info_t *info)
{
    if (info->len > cap || info->len > c->max_msg || info->src >= c->nodes) {
        return tc_sm_fail(c, EMSGSIZE,
                          "%s announced %u bytes from node %u (room for %zu, %u nodes)", what,
                          info->len, info->src, cap, c->nodes);
    }
    return tc_sm_read_all(c, buf, info->len);
}

#ifdef SOCKMODEL_FEATURE_WAIT_RECV
int tc_sockmodel_conn_wait_recv(tc_sockmodel_conn_t *c, uint32_t timeout_us, void *buf, size_t cap,
                                tc_sockmodel_msg_info_t *info)
{
    tc_sockmodel_reply_t r;
    int rc;

    if (0 != c->pending) {
        return tc_sm_busy(c, SOCKMODEL_WAITING_START);
    }
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

int tc_sockmodel_conn_consume(tc_sockmodel_conn_t *c)
{
    int rc = tc_sockmodel_conn_wait_stop(c);

    if (0 == rc) {
        rc = tc_sm_command(c, SOCKMODEL_CONSUMETIME, 0, 0, 0, NULL, 0);
    }

    tc_sm_set_mark(c);
    return rc;
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

int tc_sockmodel_conn_finish(tc_sockmodel_conn_t *c)
{
    tc_sockmodel_reply_t r;
    int rc;

    if (0 != c->pending) {
        return tc_sm_busy(c, SOCKMODEL_FINISH);
    }
    rc = tc_sm_call(c, SOCKMODEL_FINISH, 0, 0, &r);
    tc_sockmodel_conn_close(c);
    return rc;
}

/* ---- addresses and the port file ------------------------------------ */

/* all of buf to a file descriptor (a file: no MSG_NOSIGNAL) */
static int tc_sockmodel_client_write_fd(int fd, const void *buf, size_t len)
{
    const char *p = buf;

    while (len > 0) {
        ssize_t w = write(fd, p, len);

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

int tc_sockmodel_address_format(char *buf, size_t len, const char *host, int port)
{
    int n;

    if (0 == strncmp(host, TC_SOCKMODEL_UNIX_PREFIX, 5)) {
        n = snprintf(buf, len, "%s", host);
    } else if (NULL != strchr(host, ':')) {
        n = snprintf(buf, len, "[%s]:%d", host, port); /* IPv6 */
    } else {
        n = snprintf(buf, len, "%s:%d", host, port);
    }
    return (n < 0 || (size_t) n >= len) ? -ENAMETOOLONG : 0;
}

int tc_sockmodel_port_file_write(const char *path, const char *line)
{
    char tmp[4200];
    size_t n = strlen(line);
    int fd, err;

    if ((size_t) snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long) getpid()) >= sizeof(tmp)) {
        return -ENAMETOOLONG;
    }
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) {
        return -errno;
    }
    if (0 != tc_sockmodel_client_write_fd(fd, line, n) ||
        0 != tc_sockmodel_client_write_fd(fd, "\n", 1)) {
        err = errno;
        close(fd);
        unlink(tmp);
        return -err;
    }
    if (0 != close(fd) || 0 != rename(tmp, path)) {
        err = errno;
        unlink(tmp);
        return -err;
    }
    return 0;
}

int tc_sockmodel_port_file_read(const char *path, char *host, size_t host_len, int *port)
{
    char buf[4200], *end;
    ssize_t n;
    int fd;

    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return 0;
    }
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0) {
        return 0;
    }
    buf[n] = '\0';
    /* only a complete line counts: the writer may be mid-way */
    end = strchr(buf, '\n');
    if (NULL == end) {
        return 0;
    }
    *end = '\0';
    if (0 == strcmp(buf, TC_SOCKMODEL_PORT_FILE_FAILED)) {
        return -ECANCELED;
    }
    return 0 == tc_sockmodel_address_parse(buf, host, host_len, port) ? 1 : -EINVAL;
}

int tc_sockmodel_port_file_wait(const char *path, char *buf, size_t len, int timeout_ms)
{
    char host[4200];
    int port = 0, rc;

    for (int waited = 0;; waited += 10) {
        rc = tc_sockmodel_port_file_read(path, host, sizeof(host), &port);
        if (rc > 0) {
            return 0 == tc_sockmodel_address_format(buf, len, host, port) ? 0 : -1;
        }
        if (rc < 0 || waited >= timeout_ms) {
            return -1;
        }
        usleep(10000);
    }
}

/* ---- plain blocking frames ------------------------------------------ */

int tc_sockmodel_client_write_all(int fd, const void *buf, size_t len)
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
