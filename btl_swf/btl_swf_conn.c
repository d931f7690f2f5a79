/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * btl_swf_conn.c: the SockModel client (see btl_swf_conn.h): socket I/O
 * with bounded blocking, command framing from tc_sockmodel.h, reply
 * checking, and the consumetime accounting carried in every command.
 */

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

#include "btl_swf_conn.h"

static int swf_fail(swf_conn_t *c, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int swf_fail(swf_conn_t *c, int err, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(c->error, sizeof(c->error), fmt, ap);
    va_end(ap);
    return -err;
}

static uint64_t swf_ts_ns(const struct timespec *ts)
{
    return (uint64_t) ts->tv_sec * 1000000000ull + (uint64_t) ts->tv_nsec;
}

static uint64_t swf_mono_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return swf_ts_ns(&ts) / 1000000ull;
}

void swf_conn_init(swf_conn_t *c, double cycle_ns, double scale, int io_timeout_ms)
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
static uint64_t swf_cycles_since_mark(swf_conn_t *c)
{
    struct timespec now;
    double cycles;
    uint64_t whole;

    if (0.0 == c->scale || !c->have_mark) {
        return 0;
    }
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
    cycles = (double) (swf_ts_ns(&now) - swf_ts_ns(&c->mark)) * c->scale / c->cycle_ns;
    cycles += c->carry;
    if (cycles < 0.0) {
        cycles = 0.0;
    }
    whole = (uint64_t) cycles;
    c->carry = cycles - (double) whole;
    return whole;
}

static void swf_set_mark(swf_conn_t *c)
{
    if (0.0 != c->scale) {
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c->mark);
        c->have_mark = 1;
    }
}

/* ---- socket I/O ----------------------------------------------------- */

static int swf_write_iov(swf_conn_t *c, struct iovec *iov, int iovcnt)
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
                return swf_fail(c, ETIMEDOUT, "the simulator did not read for %d ms",
                                c->io_timeout_ms);
            }
            return swf_fail(c, errno, "write to the simulator failed: %s", strerror(errno));
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
static int swf_spin_readable(swf_conn_t *c)
{
    struct timespec start, now;
    char probe;
    ssize_t n;

    clock_gettime(CLOCK_MONOTONIC, &start);
    for (;;) {
        n = recv(c->fd, &probe, 1, MSG_PEEK | MSG_DONTWAIT);
        if (0 != n && !(n < 0 && (EAGAIN == errno || EWOULDBLOCK == errno))) {
            return 1;   /* data, end of stream or an error: recv reports it */
        }
        /* with more busy processes than cores the simulator may be
         * waiting for this very core: offer it on every round */
        sched_yield();
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (swf_ts_ns(&now) - swf_ts_ns(&start) >= (uint64_t) c->spin_us * 1000u) {
            return 0;
        }
    }
}

static int swf_read_all(swf_conn_t *c, void *buf, size_t len)
{
    char *p = buf;
    ssize_t n;

    while (len > 0) {
        n = recv(c->fd, p, len, MSG_DONTWAIT);
        if (n < 0 && (EAGAIN == errno || EWOULDBLOCK == errno)) {
            if (c->spin_us > 0) {
                (void) swf_spin_readable(c);
            }
            n = recv(c->fd, p, len, MSG_WAITALL);
        }
        if (n > 0) {
            p += n;
            len -= (size_t) n;
            continue;
        }
        if (0 == n) {
            return swf_fail(c, ECONNRESET, "the simulator closed the connection");
        }
        if (EINTR == errno) {
            continue;
        }
        if (EAGAIN == errno || EWOULDBLOCK == errno) {
            return swf_fail(c, ETIMEDOUT, "no reply from the simulator within %d ms",
                            c->io_timeout_ms);
        }
        return swf_fail(c, errno, "read from the simulator failed: %s", strerror(errno));
    }
    return 0;
}

/* Send one command (and its payload) with the consumetime since the
 * last command. Time beyond one 32-bit word goes in CONSUMETIME first. */
static int swf_command(swf_conn_t *c, uint32_t request, uint32_t p0, uint32_t p1,
                       uint32_t p2, const struct iovec *payload, int payload_cnt)
{
    unsigned char frame[SOCKMODEL_CMD_BYTES];
    struct iovec iov[8];
    sockmodel_cmd_t cmd;
    uint64_t cycles;
    int i, rc;

    if (c->fd < 0) {
        return swf_fail(c, ENOTCONN, "not connected to the simulator");
    }
    if (payload_cnt > 7) {
        return swf_fail(c, EINVAL, "too many payload pieces");
    }
    cycles = swf_cycles_since_mark(c);
    while (cycles > UINT32_MAX) {
        sockmodel_cmd_make(&cmd, SOCKMODEL_CONSUMETIME, 0, 0, 0, 0, UINT32_MAX);
        sockmodel_cmd_encode(frame, &cmd);
        iov[0].iov_base = frame;
        iov[0].iov_len = sizeof(frame);
        rc = swf_write_iov(c, iov, 1);
        if (rc < 0) {
            return rc;
        }
        c->commands++;
        c->cycles_reported += UINT32_MAX;
        cycles -= UINT32_MAX;
    }
    sockmodel_cmd_make(&cmd, request, p0, p1, p2, 0, (uint32_t) cycles);
    sockmodel_cmd_encode(frame, &cmd);
    iov[0].iov_base = frame;
    iov[0].iov_len = sizeof(frame);
    for (i = 0; i < payload_cnt; i++) {
        iov[i + 1] = payload[i];
    }
    rc = swf_write_iov(c, iov, payload_cnt + 1);
    if (rc < 0) {
        return rc;
    }
    c->commands++;
    c->cycles_reported += cycles;
    return 0;
}

/* Read the reply to request and check that it answers it. */
static int swf_reply(swf_conn_t *c, uint32_t request, sockmodel_reply_t *r)
{
    unsigned char frame[SOCKMODEL_REPLY_BYTES];
    int rc;

    rc = swf_read_all(c, frame, sizeof(frame));
    if (rc < 0) {
        return rc;
    }
    sockmodel_reply_decode(r, frame);
    if (r->code != request) {
        return swf_fail(c, EPROTO, "the simulator answered %s (%u) to %s",
                        sockmodel_request_name(r->code), r->code,
                        sockmodel_request_name(request));
    }
    c->clock_ns = r->clock_ns;
    return 0;
}

static void swf_info_from_reply(const sockmodel_reply_t *r, swf_msg_info_t *info)
{
    info->src = r->arg[SOCKMODEL_ARG_SRC];
    info->tag = r->arg[SOCKMODEL_ARG_TAG];
    info->len = r->arg[SOCKMODEL_ARG_LEN];
}

/* A PROBE reply: 1 and *info when a message is queued, 0 when none. */
static int swf_probe_result(swf_conn_t *c, const sockmodel_reply_t *r, swf_msg_info_t *info)
{
    if (SOCKMODEL_ST_FOUND == r->status) {
        swf_info_from_reply(r, info);
        return 1;
    }
    if (SOCKMODEL_ST_NONE == r->status) {
        return 0;
    }
    return swf_fail(c, EPROTO, "PROBE answered with status %s (%u)",
                    sockmodel_status_name(r->status), r->status);
}

/* A request without payload and its reply. */
static int swf_call(swf_conn_t *c, uint32_t request, uint32_t p0, uint32_t p1,
                    sockmodel_reply_t *r)
{
    int rc = swf_command(c, request, p0, p1, 0, NULL, 0);
    return 0 == rc ? swf_reply(c, request, r) : rc;
}

/* Send WAITING_START (timeout clamped to the protocol's bound) and read
 * its reply; the caller interprets the status. */
static int swf_wait_start(swf_conn_t *c, uint32_t timeout_us, uint32_t flags,
                          sockmodel_reply_t *r)
{
    if (timeout_us > SOCKMODEL_WAIT_MAX_US) {
        timeout_us = SOCKMODEL_WAIT_MAX_US;
    }
    return swf_call(c, SOCKMODEL_WAITING_START, timeout_us, flags, r);
}

/* ---- connection ----------------------------------------------------- */

int swf_conn_parse_address(const char *address, char *host, size_t host_len, int *port)
{
    const char *colon;
    char *end;
    size_t n;
    long value;

    if (NULL != address && 0 == strncmp(address, SWF_CONN_UNIX_PREFIX, 5)) {
        /* unix:PATH stays whole in host; the path must fit sun_path */
        n = strlen(address);
        if (n == 5 || n + 1 > host_len ||
            n - 5 >= sizeof(((struct sockaddr_un *) 0)->sun_path)) {
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

static void swf_set_io_timeout(swf_conn_t *c, int ms)
{
    struct timeval tv;

    tv.tv_sec = ms / 1000;
    tv.tv_usec = (ms % 1000) * 1000;
    (void) setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    (void) setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

static int swf_try_connect_unix(swf_conn_t *c, const char *path)
{
    struct sockaddr_un sa;
    int fd, err;

    memset(&sa, 0, sizeof(sa));
    sa.sun_family = AF_UNIX;
    if (strlen(path) >= sizeof(sa.sun_path)) {
        return swf_fail(c, ENAMETOOLONG, "the socket path %s is too long", path);
    }
    memcpy(sa.sun_path, path, strlen(path) + 1);
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        return swf_fail(c, errno, "socket: %s", strerror(errno));
    }
    if (0 != connect(fd, (struct sockaddr *) &sa, sizeof(sa))) {
        err = errno;
        close(fd);
        /* no socket file yet is the same as nobody listening yet */
        if (ENOENT == err) {
            err = ECONNREFUSED;
        }
        return swf_fail(c, err, "cannot connect to the simulator at unix:%s: %s", path,
                        strerror(err));
    }
    c->fd = fd;
    return 0;
}

static int swf_try_connect(swf_conn_t *c, const char *host, int port)
{
    struct addrinfo hints, *res = NULL, *ai;
    char port_str[16];
    int fd = -1, rc, err = ECONNREFUSED, one = 1;

    if (0 == strncmp(host, SWF_CONN_UNIX_PREFIX, 5)) {
        return swf_try_connect_unix(c, host + 5);
    }
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    snprintf(port_str, sizeof(port_str), "%d", port);
    rc = getaddrinfo(host, port_str, &hints, &res);
    if (0 != rc) {
        return swf_fail(c, EHOSTUNREACH, "cannot resolve %s: %s", host, gai_strerror(rc));
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
        return swf_fail(c, err, "cannot connect to the simulator at %s:%d: %s", host, port,
                        strerror(err));
    }
    /* commands are small and latency-bound (a TCP socket here) */
    (void) setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    c->fd = fd;
    return 0;
}

int swf_conn_connect(swf_conn_t *c, const char *host, int port, uint32_t want_rank,
                     int timeout_ms)
{
    unsigned char hello[SOCKMODEL_HELLO_BYTES], welcome[SOCKMODEL_WELCOME_BYTES];
    uint64_t deadline = swf_mono_ms() + (uint64_t) (timeout_ms > 0 ? timeout_ms : 0);
    struct iovec iov;
    struct pollfd pfd;
    size_t got = 0;
    uint32_t rank;
    int rc;

    /* a simulator that is still starting refuses: retry until the deadline */
    for (;;) {
        rc = swf_try_connect(c, host, port);
        if (0 == rc) {
            break;
        }
        if (-ECONNREFUSED != rc || swf_mono_ms() >= deadline) {
            return rc;
        }
        usleep(10000);
    }

    sockmodel_put32(hello, want_rank);
    iov.iov_base = hello;
    iov.iov_len = sizeof(hello);
    swf_set_io_timeout(c, timeout_ms > 0 ? timeout_ms : 0);
    rc = swf_write_iov(c, &iov, 1);
    if (rc < 0) {
        swf_conn_close(c);
        return rc;
    }
    /* the welcome comes once every node has connected */
    while (got < sizeof(welcome)) {
        uint64_t now = swf_mono_ms();
        ssize_t n;

        if (now >= deadline) {
            swf_conn_close(c);
            return swf_fail(c, ETIMEDOUT,
                            "the simulator at %s:%d did not start the run within %d s "
                            "(not every node connected)", host, port, timeout_ms / 1000);
        }
        pfd.fd = c->fd;
        pfd.events = POLLIN;
        pfd.revents = 0;
        rc = poll(&pfd, 1, (int) (deadline - now));
        if (rc < 0 && EINTR != errno) {
            swf_conn_close(c);
            return swf_fail(c, errno, "poll failed: %s", strerror(errno));
        }
        if (rc <= 0) {
            continue;
        }
        n = recv(c->fd, welcome + got, sizeof(welcome) - got, 0);
        if (0 == n) {
            swf_conn_close(c);
            return swf_fail(c, ECONNRESET,
                            "the simulator at %s:%d closed the connection during the handshake",
                            host, port);
        }
        if (n < 0) {
            if (EINTR == errno || EAGAIN == errno) {
                continue;
            }
            swf_conn_close(c);
            return swf_fail(c, errno, "handshake read failed: %s", strerror(errno));
        }
        got += (size_t) n;
    }
    rank = sockmodel_get32(welcome);
    if (SOCKMODEL_RANK_REFUSED == rank) {
        swf_conn_close(c);
        return swf_fail(c, EADDRINUSE, "the simulator at %s:%d refused rank %u", host, port,
                        want_rank);
    }
    if (SOCKMODEL_RANK_ANY != want_rank && rank != want_rank) {
        swf_conn_close(c);
        return swf_fail(c, EPROTO, "asked the simulator for rank %u and got %u", want_rank,
                        rank);
    }
    c->rank = rank;
    swf_set_io_timeout(c, c->io_timeout_ms);
    swf_set_mark(c);
    return 0;
}

void swf_conn_attach(swf_conn_t *c, int fd)
{
    c->fd = fd;
    swf_set_io_timeout(c, c->io_timeout_ms);
    swf_set_mark(c);
}

void swf_conn_close(swf_conn_t *c)
{
    if (c->fd >= 0) {
        close(c->fd);
        c->fd = -1;
    }
}

/* ---- requests ------------------------------------------------------- */

int swf_conn_size(swf_conn_t *c)
{
    sockmodel_reply_t r;
    int rc;

    rc = swf_call(c, SOCKMODEL_SIZE, 0, 0, &r);
    swf_set_mark(c);
    if (rc < 0) {
        return rc;
    }
    if (0 == r.arg[0] || r.arg[0] > SOCKMODEL_MAX_NODES || c->rank >= r.arg[0]) {
        return swf_fail(c, EPROTO, "the simulator reports %u nodes (our rank is %u)", r.arg[0],
                        c->rank);
    }
    c->nodes = r.arg[0];
    c->max_msg = r.arg[1];
    c->model = r.arg[2];
    c->features = r.arg[3];
    return 0;
}

int swf_conn_send(swf_conn_t *c, uint32_t dest, uint32_t tag, const struct iovec *iov,
                  int iovcnt, uint32_t len)
{
    int rc;

    if (dest >= c->nodes) {
        return swf_fail(c, EINVAL, "SEND to node %u of %u", dest, c->nodes);
    }
    if (len > c->max_msg) {
        return swf_fail(c, EMSGSIZE, "SEND of %u bytes exceeds the simulator's limit of %u",
                        len, c->max_msg);
    }
    rc = swf_command(c, SOCKMODEL_SEND, dest, tag, len, iov, iovcnt);
    swf_set_mark(c);
    return rc;
}

int swf_conn_probe(swf_conn_t *c, swf_msg_info_t *info)
{
    sockmodel_reply_t r;
    int rc;

    rc = swf_call(c, SOCKMODEL_PROBE, 0, 0, &r);
    swf_set_mark(c);
    if (rc < 0) {
        return rc;
    }
    return swf_probe_result(c, &r, info);
}

int swf_conn_wait(swf_conn_t *c, uint32_t timeout_us, swf_msg_info_t *info)
{
    sockmodel_reply_t r;
    int rc;

    rc = swf_wait_start(c, timeout_us, 0, &r);
    /* waiting is not CPU time of the simulated node */
    swf_set_mark(c);
    if (rc < 0) {
        return rc;
    }
    switch (r.status) {
    case SOCKMODEL_ST_FOUND:
        swf_info_from_reply(&r, info);
        return 1;
    case SOCKMODEL_ST_EXPIRED:
    case SOCKMODEL_ST_STOPPED:
        return 0;
    default:
        return swf_fail(c, EPROTO, "WAITING_START answered with status %s (%u)",
                        sockmodel_status_name(r.status), r.status);
    }
}

/* The payload announced by a reply: checked before a byte is read. */
static int swf_read_payload(swf_conn_t *c, const char *what, void *buf, size_t cap,
                            const swf_msg_info_t *info)
{
    if (info->len > cap || info->len > c->max_msg || info->src >= c->nodes) {
        return swf_fail(c, EMSGSIZE, "%s announced %u bytes from node %u (room for %zu, %u nodes)",
                        what, info->len, info->src, cap, c->nodes);
    }
    return swf_read_all(c, buf, info->len);
}

#ifdef SOCKMODEL_FEATURE_WAIT_RECV
int swf_conn_wait_recv(swf_conn_t *c, uint32_t timeout_us, void *buf, size_t cap,
                       swf_msg_info_t *info)
{
    sockmodel_reply_t r;
    int rc;

    rc = swf_wait_start(c, timeout_us, SOCKMODEL_WAIT_RECV, &r);
    if (0 == rc) {
        switch (r.status) {
        case SOCKMODEL_ST_OK:
            swf_info_from_reply(&r, info);
            rc = swf_read_payload(c, "WAITING_START", buf, cap, info);
            if (0 == rc) {
                rc = 1;
            }
            break;
        case SOCKMODEL_ST_EXPIRED:
        case SOCKMODEL_ST_STOPPED:
            rc = 0;
            break;
        default:
            rc = swf_fail(c, EPROTO, "WAITING_START answered with status %s (%u)",
                          sockmodel_status_name(r.status), r.status);
        }
    }
    swf_set_mark(c);
    return rc;
}
#endif

int swf_conn_recv(swf_conn_t *c, void *buf, size_t cap, swf_msg_info_t *info,
                  swf_msg_info_t *next, int *next_found)
{
    unsigned char frame[SOCKMODEL_CMD_BYTES];
    struct iovec iov;
    sockmodel_reply_t r;
    sockmodel_cmd_t cmd;
    int rc;

    if (NULL != next) {
        /* the PROBE rides behind the RECV; the simulator answers in order */
        sockmodel_cmd_make(&cmd, SOCKMODEL_PROBE, 0, 0, 0, 0, 0);
        sockmodel_cmd_encode(frame, &cmd);
        iov.iov_base = frame;
        iov.iov_len = sizeof(frame);
        rc = swf_command(c, SOCKMODEL_RECV, 0, 0, 0, &iov, 1);
        c->commands++;
    } else {
        rc = swf_command(c, SOCKMODEL_RECV, 0, 0, 0, NULL, 0);
    }
    if (0 == rc) {
        rc = swf_reply(c, SOCKMODEL_RECV, &r);
    }
    if (rc < 0) {
        return rc;
    }
    if (SOCKMODEL_ST_OK != r.status) {
        return swf_fail(c, EPROTO, "RECV answered with status %s (%u)",
                        sockmodel_status_name(r.status), r.status);
    }
    swf_info_from_reply(&r, info);
    rc = swf_read_payload(c, "RECV", buf, cap, info);
    if (0 == rc && NULL != next) {
        rc = swf_reply(c, SOCKMODEL_PROBE, &r);
        if (0 == rc) {
            rc = swf_probe_result(c, &r, next);
            if (rc >= 0) {
                *next_found = rc;
                rc = 0;
            }
        }
    }
    swf_set_mark(c);
    if (rc < 0) {
        return rc;
    }
    return (int) info->len;
}

int swf_conn_consume(swf_conn_t *c)
{
    int rc = swf_command(c, SOCKMODEL_CONSUMETIME, 0, 0, 0, NULL, 0);

    swf_set_mark(c);
    return rc;
}

int swf_conn_finish(swf_conn_t *c)
{
    sockmodel_reply_t r;
    int rc;

    rc = swf_call(c, SOCKMODEL_FINISH, 0, 0, &r);
    swf_conn_close(c);
    return rc;
}
