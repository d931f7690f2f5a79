/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * tc_peerwatch.c: a peer's death from the end of a TCP connection to it
 * (tc_peerwatch.h). One listening socket, one thread; the thread owns
 * every connection, the caller only starts and closes it.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tc_atomic.h"
#include "tc_peerwatch.h"

typedef struct tc_peerwatch_conn {
    int fd;
    uint32_t id;
} tc_peerwatch_conn_t;

struct tc_peerwatch {
    int lfd;
    int wake[2]; /* a byte on wake[1]: the thread returns */
    int started;
    int32_t watched; /* opened connections still watched (atomic) */
    pthread_t thread;
    /* given at start; the thread's alone afterwards */
    uint32_t *ids;
    size_t nids;
    tc_peerwatch_lookup_fn_t lookup;
    tc_peerwatch_fn_t fn;
    void *arg;
    int connect_ms;
    tc_peerwatch_conn_t *out; /* opened, nids at most */
    size_t nout;
    int *in; /* accepted */
    size_t nin, max_in;
};

int tc_peerwatch_classify(long n, int err, unsigned char byte)
{
    if (1 == n) {
        return TC_PEERWATCH_BYE == byte ? TC_PEERWATCH_LEFT : TC_PEERWATCH_BAD;
    }
    if (0 == n) {
        return TC_PEERWATCH_DEAD;
    }
    if (EAGAIN == err || EWOULDBLOCK == err || EINTR == err) {
        return TC_PEERWATCH_QUIET;
    }
    return TC_PEERWATCH_DEAD;
}

/* a decimal number of 1..maxdigits digits, at most maxval; the end in *end */
static int tc_peerwatch_number(const char *s, int maxdigits, unsigned long maxval,
                               unsigned long *val, const char **end)
{
    unsigned long v = 0;
    int d = 0;

    while (s[d] >= '0' && s[d] <= '9') {
        if (d == maxdigits) {
            return -EINVAL;
        }
        v = v * 10 + (unsigned long) (s[d] - '0');
        ++d;
    }
    if (0 == d || v > maxval) {
        return -EINVAL;
    }
    *val = v;
    *end = s + d;
    return 0;
}

int tc_peerwatch_parse(const char *text, size_t len, tc_peerwatch_addr_t *out)
{
    char buf[TC_PEERWATCH_ADDR_MAX];
    const char *p;
    unsigned long port;
    size_t n;

    if (NULL == text || NULL == out) {
        return -EINVAL;
    }
    n = strnlen(text, len < sizeof(buf) ? len : sizeof(buf));
    if (0 == n || n >= sizeof(buf)) {
        return -EINVAL;
    }
    memcpy(buf, text, n);
    buf[n] = '\0';
    memset(out, 0, sizeof(*out));
    if (0 != tc_peerwatch_number(buf, 5, 65535, &port, &p) || 0 == port || ':' != *p) {
        return -EINVAL;
    }
    out->port = (uint16_t) port;
    ++p;
    for (;;) {
        char quad[16];
        size_t q = strspn(p, "0123456789.");

        if (0 == q || q >= sizeof(quad) || out->nips == TC_PEERWATCH_IPS) {
            return -EINVAL;
        }
        memcpy(quad, p, q);
        quad[q] = '\0';
        if (1 != inet_pton(AF_INET, quad, &out->ips[out->nips])) {
            return -EINVAL;
        }
        out->nips++;
        p += q;
        if ('\0' == *p) {
            return 0;
        }
        if (',' != *p) {
            return -EINVAL;
        }
        ++p;
    }
}

/* the host's up, non-loopback IPv4 addresses after "PORT:" */
static int tc_peerwatch_text(uint16_t port, char *addr, size_t size)
{
    struct ifaddrs *ifs = NULL;
    int len, nips = 0;

    len = snprintf(addr, size, "%u:", (unsigned) port);
    if (len < 0 || (size_t) len >= size) {
        return -ENOSPC;
    }
    if (0 == getifaddrs(&ifs)) {
        for (struct ifaddrs *i = ifs; NULL != i && nips < TC_PEERWATCH_IPS; i = i->ifa_next) {
            char ip[INET_ADDRSTRLEN];
            int w;

            if (NULL == i->ifa_addr || AF_INET != i->ifa_addr->sa_family ||
                0 == (i->ifa_flags & IFF_UP) || 0 != (i->ifa_flags & IFF_LOOPBACK) ||
                NULL ==
                    inet_ntop(AF_INET, &((struct sockaddr_in *) i->ifa_addr)->sin_addr, ip,
                              sizeof(ip))) {
                continue;
            }
            w = snprintf(addr + len, size - (size_t) len, "%s%s", 0 == nips ? "" : ",", ip);
            if (w < 0 || (size_t) w >= size - (size_t) len) {
                break; /* the text is full: the addresses so far */
            }
            len += w;
            ++nips;
        }
        freeifaddrs(ifs);
    }
    if (0 == nips) {
        len += snprintf(addr + len, size - (size_t) len, "127.0.0.1");
    }
    return (size_t) len < size ? 0 : -ENOSPC;
}

int tc_peerwatch_open(tc_peerwatch_t **pwp, char *addr, size_t size)
{
    struct sockaddr_in sin;
    socklen_t slen = sizeof(sin);
    tc_peerwatch_t *pw;
    int rc;

    *pwp = NULL;
    pw = calloc(1, sizeof(*pw));
    if (NULL == pw) {
        return -ENOMEM;
    }
    pw->wake[0] = pw->wake[1] = -1;
    pw->lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (pw->lfd < 0 || 0 != pipe2(pw->wake, O_CLOEXEC | O_NONBLOCK)) {
        rc = -errno;
        goto fail;
    }
    memset(&sin, 0, sizeof(sin));
    sin.sin_family = AF_INET;
    sin.sin_addr.s_addr = htonl(INADDR_ANY);
    if (0 != bind(pw->lfd, (struct sockaddr *) &sin, sizeof(sin)) ||
        0 != listen(pw->lfd, SOMAXCONN) ||
        0 != getsockname(pw->lfd, (struct sockaddr *) &sin, &slen)) {
        rc = -errno;
        goto fail;
    }
    rc = tc_peerwatch_text(ntohs(sin.sin_port), addr, size);
    if (0 != rc) {
        goto fail;
    }
    *pwp = pw;
    return 0;
fail:
    tc_peerwatch_close(pw);
    return rc;
}

/* one connection to ip:port within ms; -1 on failure or when woken */
static int tc_peerwatch_connect_one(tc_peerwatch_t *pw, uint32_t ip, uint16_t port, int ms)
{
    struct sockaddr_in sin;
    struct pollfd pf[2];
    int fd, err = 0;
    socklen_t elen = sizeof(err);

    fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        return -1;
    }
    memset(&sin, 0, sizeof(sin));
    sin.sin_family = AF_INET;
    sin.sin_port = htons(port);
    sin.sin_addr.s_addr = ip;
    if (0 == connect(fd, (struct sockaddr *) &sin, sizeof(sin))) {
        return fd;
    }
    if (EINPROGRESS != errno) {
        close(fd);
        return -1;
    }
    pf[0] = (struct pollfd){.fd = fd, .events = POLLOUT};
    pf[1] = (struct pollfd){.fd = pw->wake[0], .events = POLLIN};
    while (1) {
        int n = poll(pf, 2, ms);

        if (n < 0 && EINTR == errno) {
            continue;
        }
        if (n <= 0 || 0 != pf[1].revents ||
            0 != getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) || 0 != err) {
            close(fd);
            return -1;
        }
        return fd;
    }
}

/* take every connection waiting on the listener; beyond max_in, refuse */
static void tc_peerwatch_accept(tc_peerwatch_t *pw)
{
    for (;;) {
        int fd = accept4(pw->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

        if (fd < 0) {
            if (EINTR == errno) {
                continue;
            }
            return;
        }
        if (pw->nin == pw->max_in) {
            close(fd);
            continue;
        }
        pw->in[pw->nin++] = fd;
    }
}

static int tc_peerwatch_stopping(tc_peerwatch_t *pw)
{
    struct pollfd pf = {.fd = pw->wake[0], .events = POLLIN};

    return poll(&pf, 1, 0) > 0;
}

/* look up and connect to every peer, keeping the listener drained */
static void tc_peerwatch_connect_all(tc_peerwatch_t *pw)
{
    for (size_t i = 0; i < pw->nids && !tc_peerwatch_stopping(pw); ++i) {
        tc_peerwatch_addr_t a;
        char *text = NULL;
        int fd = -1;
        int rc;

        tc_peerwatch_accept(pw);
        if (0 != pw->lookup(pw->ids[i], &text, pw->arg) || NULL == text) {
            free(text);
            continue;
        }
        rc = tc_peerwatch_parse(text, TC_PEERWATCH_ADDR_MAX, &a);
        free(text);
        for (int k = 0; 0 == rc && fd < 0 && k < a.nips && !tc_peerwatch_stopping(pw); ++k) {
            fd = tc_peerwatch_connect_one(pw, a.ips[k], a.port, pw->connect_ms);
        }
        if (fd >= 0) {
            pw->out[pw->nout++] = (tc_peerwatch_conn_t){fd, pw->ids[i]};
            tc_atomic_fetch_add_relaxed(&pw->watched, 1);
        }
    }
}

/* an opened connection has something: the peer's end, goodbye, or noise */
static int tc_peerwatch_read_out(tc_peerwatch_t *pw, size_t i)
{
    unsigned char byte = 0;
    long n = (long) recv(pw->out[i].fd, &byte, 1, MSG_DONTWAIT);
    int what = tc_peerwatch_classify(n, n < 0 ? errno : 0, byte);

    if (TC_PEERWATCH_QUIET == what) {
        return 0;
    }
    if (TC_PEERWATCH_DEAD == what) {
        pw->fn(pw->out[i].id, pw->arg);
    }
    close(pw->out[i].fd);
    pw->out[i] = pw->out[--pw->nout];
    tc_atomic_fetch_add_relaxed(&pw->watched, -1);
    return 1;
}

/* an accepted connection has something: its end (or bytes nobody of ours
 * sends): close it */
static int tc_peerwatch_read_in(tc_peerwatch_t *pw, size_t i)
{
    unsigned char byte;
    long n = (long) recv(pw->in[i], &byte, 1, MSG_DONTWAIT);

    if (n < 0 && (EAGAIN == errno || EWOULDBLOCK == errno || EINTR == errno)) {
        return 0;
    }
    close(pw->in[i]);
    pw->in[i] = pw->in[--pw->nin];
    return 1;
}

static void *tc_peerwatch_main(void *arg)
{
    tc_peerwatch_t *pw = arg;
    size_t cap = 2 + pw->nids + pw->max_in;
    struct pollfd *pf = calloc(cap, sizeof(*pf));

    if (NULL == pf) {
        return NULL;
    }
    tc_peerwatch_connect_all(pw);
    for (;;) {
        size_t nout = pw->nout, nin = pw->nin, k = 2;
        int n;

        pf[0] = (struct pollfd){.fd = pw->wake[0], .events = POLLIN};
        pf[1] = (struct pollfd){.fd = pw->lfd, .events = POLLIN};
        for (size_t i = 0; i < nout; ++i) {
            pf[k++] = (struct pollfd){.fd = pw->out[i].fd, .events = POLLIN | POLLRDHUP};
        }
        for (size_t i = 0; i < nin; ++i) {
            pf[k++] = (struct pollfd){.fd = pw->in[i], .events = POLLIN | POLLRDHUP};
        }
        n = poll(pf, k, -1);
        if (n < 0 && EINTR != errno) {
            break;
        }
        if (n <= 0) {
            continue;
        }
        if (0 != pf[0].revents) {
            break;
        }
        /* from the end of each array: a closed one is replaced by the last */
        for (size_t i = nin; i-- > 0;) {
            if (0 != pf[2 + nout + i].revents) {
                (void) tc_peerwatch_read_in(pw, i);
            }
        }
        for (size_t i = nout; i-- > 0;) {
            if (0 != pf[2 + i].revents) {
                (void) tc_peerwatch_read_out(pw, i);
            }
        }
        if (0 != pf[1].revents) {
            tc_peerwatch_accept(pw);
        }
    }
    free(pf);
    return NULL;
}

int tc_peerwatch_start(tc_peerwatch_t *pw, const uint32_t *ids, size_t n,
                       tc_peerwatch_lookup_fn_t lookup, tc_peerwatch_fn_t fn, void *arg,
                       int connect_ms)
{
    sigset_t all, old;
    int rc;

    if (NULL == pw || pw->started || NULL == lookup || NULL == fn || (n > 0 && NULL == ids) ||
        n > (SIZE_MAX / 4 - 64) / sizeof(tc_peerwatch_conn_t)) {
        return -EINVAL;
    }
    pw->nids = n;
    pw->max_in = 2 * n + 16; /* a peer that reconnects while its old end is unseen */
    pw->ids = malloc((n > 0 ? n : 1) * sizeof(*pw->ids));
    pw->out = calloc(n > 0 ? n : 1, sizeof(*pw->out));
    pw->in = calloc(pw->max_in, sizeof(*pw->in));
    if (NULL == pw->ids || NULL == pw->out || NULL == pw->in) {
        return -ENOMEM; /* freed by tc_peerwatch_close */
    }
    if (n > 0) {
        memcpy(pw->ids, ids, n * sizeof(*ids));
    }
    pw->lookup = lookup;
    pw->fn = fn;
    pw->arg = arg;
    pw->connect_ms = connect_ms > 0 ? connect_ms : 1;
    /* the thread takes no signal meant for the application */
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    rc = pthread_create(&pw->thread, NULL, tc_peerwatch_main, pw);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (0 != rc) {
        return -rc;
    }
    pw->started = 1;
    return 0;
}

int tc_peerwatch_watched(tc_peerwatch_t *pw)
{
    return NULL == pw ? 0 : tc_atomic_load_relaxed(&pw->watched);
}

void tc_peerwatch_close(tc_peerwatch_t *pw)
{
    unsigned char bye = TC_PEERWATCH_BYE;

    if (NULL == pw) {
        return;
    }
    if (pw->started) {
        ssize_t w;

        do {
            w = write(pw->wake[1], "x", 1);
        } while (w < 0 && EINTR == errno);
        pthread_join(pw->thread, NULL);
    }
    if (pw->lfd >= 0 && NULL != pw->in) {
        /* those still waiting to be accepted are peers too */
        tc_peerwatch_accept(pw);
    }
    for (size_t i = 0; i < pw->nin; ++i) {
        (void) send(pw->in[i], &bye, 1, MSG_NOSIGNAL | MSG_DONTWAIT);
        close(pw->in[i]);
    }
    for (size_t i = 0; i < pw->nout; ++i) {
        close(pw->out[i].fd);
    }
    if (pw->lfd >= 0) {
        close(pw->lfd);
    }
    for (int i = 0; i < 2; ++i) {
        if (pw->wake[i] >= 0) {
            close(pw->wake[i]);
        }
    }
    free(pw->ids);
    free(pw->out);
    free(pw->in);
    free(pw);
}
