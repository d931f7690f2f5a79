/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * tc_peerwatch.c: a peer's death from the end of a TCP connection to it
 * (tc_peerwatch.h). One listening socket, one thread; the thread owns
 * every connection, the caller only starts and closes it. Nothing the
 * thread does blocks: two watchers that open connections to each other
 * must each answer the other's hello while waiting for their own answer.
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
#include <time.h>
#include <unistd.h>

#include "tc_atomic.h"
#include "tc_peerwatch.h"

/* a connection this process opens, by its state */
enum {
    TC_PW_OUT_WAIT = 0, /* no connection: (re)try at deadline */
    TC_PW_OUT_CONNECTING,
    TC_PW_OUT_HELLO,   /* hello sent, waiting for the ACK */
    TC_PW_OUT_WATCHED, /* ACKed: its end is the peer's death */
    TC_PW_OUT_GONE     /* no more to do for this peer */
};

typedef struct tc_peerwatch_out {
    int fd; /* -1 unless CONNECTING, HELLO or WATCHED */
    int state;
    int ip;    /* the address tried (index in addr.ips) */
    int tries; /* refusals before the ACK so far */
    uint32_t id;
    uint64_t deadline; /* ms: of the connect, of the ACK, or of the next try */
    tc_peerwatch_addr_t addr;
} tc_peerwatch_out_t;

/* a connection accepted, not yet shown a whole hello */
typedef struct tc_peerwatch_pend {
    int fd;
    size_t got;
    uint64_t deadline; /* ms */
    unsigned char hello[TC_PEERWATCH_HELLO_BYTES];
} tc_peerwatch_pend_t;

struct tc_peerwatch {
    int lfd;
    int wake[2]; /* a byte on wake[1]: the thread returns */
    int started;
    int32_t watched; /* opened connections ACKed and still watched (atomic) */
    pthread_t thread;
    unsigned char token[TC_PEERWATCH_TOKEN_BYTES]; /* this listener's secret */
    /* given at start; the thread's alone afterwards */
    uint32_t *ids;
    size_t nids;
    tc_peerwatch_lookup_fn_t lookup;
    tc_peerwatch_fn_t fn;
    void *arg;
    int connect_ms;
    tc_peerwatch_out_t *out; /* one per id */
    int *in;                 /* accepted and shown the hello */
    size_t nin, max_in;
    tc_peerwatch_pend_t *pend; /* accepted, no hello yet */
    size_t npend;
};

static uint64_t tc_peerwatch_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t) ts.tv_sec * 1000u + (uint64_t) ts.tv_nsec / 1000000u;
}

int tc_peerwatch_hello_check(const unsigned char *buf, size_t got, const unsigned char *token)
{
    const size_t mlen = sizeof(((tc_peerwatch_hello_t *) 0)->magic);
    const tc_peerwatch_hello_t *h = (const tc_peerwatch_hello_t *) buf;

    if (got > TC_PEERWATCH_HELLO_BYTES || (got > 0 && NULL == buf) || NULL == token) {
        return TC_PEERWATCH_HELLO_BAD;
    }
    if (0 == got) {
        return TC_PEERWATCH_HELLO_MORE;
    }
    if (0 != memcmp(buf, TC_PEERWATCH_MAGIC, got < mlen ? got : mlen)) {
        return TC_PEERWATCH_HELLO_BAD;
    }
    if (got < TC_PEERWATCH_HELLO_BYTES) {
        return TC_PEERWATCH_HELLO_MORE;
    }
    return tc_sockmodel_token_equal(h->token, token) ? TC_PEERWATCH_HELLO_OK
                                                     : TC_PEERWATCH_HELLO_BAD;
}

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
        if ('/' == *p) {
            ++p;
            /* exactly the digits, nothing after them */
            return strlen(p) == 2u * TC_PEERWATCH_TOKEN_BYTES &&
                    0 == tc_sockmodel_token_parse(p, out->token)
                ? 0
                : -EINVAL;
        }
        if (',' != *p) {
            return -EINVAL;
        }
        ++p;
    }
}

/* "PORT:" the host's up, non-loopback IPv4 addresses, "/TOKEN" */
static int tc_peerwatch_text(uint16_t port, const unsigned char *token, char *addr, size_t size)
{
    char hex[2 * TC_PEERWATCH_TOKEN_BYTES + 2];
    struct ifaddrs *ifs = NULL;
    size_t room;
    int len, nips = 0;

    /* the token always fits: the addresses take what is left */
    if (size < sizeof(hex) + 16) {
        return -ENOSPC;
    }
    room = size - sizeof(hex);
    len = snprintf(addr, room, "%u:", (unsigned) port);
    if (len < 0 || (size_t) len >= room) {
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
            w = snprintf(addr + len, room - (size_t) len, "%s%s", 0 == nips ? "" : ",", ip);
            if (w < 0 || (size_t) w >= room - (size_t) len) {
                break; /* the text is full: the addresses so far */
            }
            len += w;
            ++nips;
        }
        freeifaddrs(ifs);
    }
    if (0 == nips) {
        len += snprintf(addr + len, room - (size_t) len, "127.0.0.1");
    }
    tc_sockmodel_token_format(token, hex);
    hex[2 * TC_PEERWATCH_TOKEN_BYTES] = '\0'; /* no newline */
    len += snprintf(addr + len, size - (size_t) len, "/%s", hex);
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
    if (0 != tc_sockmodel_token_random(pw->token)) {
        pw->lfd = -1;
        rc = -EIO;
        goto fail;
    }
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
    rc = tc_peerwatch_text(ntohs(sin.sin_port), pw->token, addr, size);
    if (0 != rc) {
        goto fail;
    }
    *pwp = pw;
    return 0;
fail:
    tc_peerwatch_close(pw);
    return rc;
}

/* ---- connections this process opens ---------------------------------- */

static void tc_peerwatch_out_drop(tc_peerwatch_out_t *o)
{
    if (o->fd >= 0) {
        close(o->fd);
        o->fd = -1;
    }
}

/* a connection to the first of o's addresses from index ip that takes
 * one (connecting); none: this peer is gone (nobody listens there) */
static void tc_peerwatch_out_connect(tc_peerwatch_t *pw, tc_peerwatch_out_t *o, int ip,
                                     uint64_t now)
{
    tc_peerwatch_out_drop(o);
    for (; ip < o->addr.nips; ++ip) {
        struct sockaddr_in sin;
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

        if (fd < 0) {
            break;
        }
        memset(&sin, 0, sizeof(sin));
        sin.sin_family = AF_INET;
        sin.sin_port = htons(o->addr.port);
        sin.sin_addr.s_addr = o->addr.ips[ip];
        if (0 == connect(fd, (struct sockaddr *) &sin, sizeof(sin)) || EINPROGRESS == errno) {
            o->fd = fd;
            o->ip = ip;
            o->state = TC_PW_OUT_CONNECTING;
            o->deadline = now + (uint64_t) pw->connect_ms;
            return;
        }
        close(fd);
    }
    o->state = TC_PW_OUT_GONE;
}

/* closed before the ACK (refused, busy, too slow): not a death; later */
static void tc_peerwatch_out_retry(tc_peerwatch_out_t *o, uint64_t now)
{
    tc_peerwatch_out_drop(o);
    if (++o->tries >= TC_PEERWATCH_TRIES) {
        o->state = TC_PW_OUT_GONE;
        return;
    }
    o->state = TC_PW_OUT_WAIT;
    o->deadline = now + (50u << (o->tries < 6 ? o->tries : 6)); /* 0.1 .. 3.2 s */
}

/* the connect ended: send the hello with the listener's token */
static void tc_peerwatch_out_connected(tc_peerwatch_t *pw, tc_peerwatch_out_t *o, uint64_t now)
{
    tc_peerwatch_hello_t h;
    socklen_t elen = sizeof(int);
    int err = 0;

    if (0 != getsockopt(o->fd, SOL_SOCKET, SO_ERROR, &err, &elen) || 0 != err) {
        tc_peerwatch_out_connect(pw, o, o->ip + 1, now);
        return;
    }
    memcpy(h.magic, TC_PEERWATCH_MAGIC, sizeof(h.magic));
    memcpy(h.token, o->addr.token, sizeof(h.token));
    /* a new connection's send buffer takes 40 bytes at once */
    if ((ssize_t) sizeof(h) != send(o->fd, &h, sizeof(h), MSG_NOSIGNAL | MSG_DONTWAIT)) {
        tc_peerwatch_out_retry(o, now);
        return;
    }
    o->state = TC_PW_OUT_HELLO;
    o->deadline = now + (uint64_t) pw->connect_ms;
}

/* an opened connection has something to read: the ACK (before it), or
 * the peer's end, its goodbye, or noise (after it) */
static void tc_peerwatch_out_read(tc_peerwatch_t *pw, tc_peerwatch_out_t *o, uint64_t now)
{
    unsigned char byte = 0;
    long n = (long) recv(o->fd, &byte, 1, MSG_DONTWAIT);
    int err = n < 0 ? errno : 0;
    int what = tc_peerwatch_classify(n, err, byte);

    if (TC_PEERWATCH_QUIET == what) {
        return;
    }
    if (TC_PW_OUT_HELLO == o->state) {
        if (1 == n && TC_PEERWATCH_ACK == byte) {
            o->state = TC_PW_OUT_WATCHED;
            tc_atomic_fetch_add_relaxed(&pw->watched, 1);
        } else {
            tc_peerwatch_out_retry(o, now);
        }
        return;
    }
    if (TC_PEERWATCH_DEAD == what) {
        pw->fn(o->id, pw->arg);
    }
    tc_peerwatch_out_drop(o);
    o->state = TC_PW_OUT_GONE;
    tc_atomic_fetch_add_relaxed(&pw->watched, -1);
}

/* the time has come for a connection without an answer, or for a try */
static void tc_peerwatch_out_timer(tc_peerwatch_t *pw, tc_peerwatch_out_t *o, uint64_t now)
{
    if (now < o->deadline) {
        return;
    }
    if (TC_PW_OUT_WAIT == o->state) {
        tc_peerwatch_out_connect(pw, o, 0, now);
    } else if (TC_PW_OUT_CONNECTING == o->state) {
        tc_peerwatch_out_connect(pw, o, o->ip + 1, now);
    } else if (TC_PW_OUT_HELLO == o->state) {
        tc_peerwatch_out_retry(o, now);
    }
}

/* look up every peer (a bounded wait each in the caller's lookup) */
static void tc_peerwatch_lookup_all(tc_peerwatch_t *pw, uint64_t now)
{
    for (size_t i = 0; i < pw->nids; ++i) {
        tc_peerwatch_out_t *o = &pw->out[i];
        char *text = NULL;

        o->fd = -1;
        o->id = pw->ids[i];
        o->state = TC_PW_OUT_GONE;
        if (0 == pw->lookup(o->id, &text, pw->arg) && NULL != text &&
            0 == tc_peerwatch_parse(text, TC_PEERWATCH_ADDR_MAX, &o->addr)) {
            o->state = TC_PW_OUT_WAIT;
            o->deadline = now;
        }
        free(text);
    }
}

/* ---- connections this process accepts -------------------------------- */

static void tc_peerwatch_pend_drop(tc_peerwatch_t *pw, size_t i)
{
    close(pw->pend[i].fd);
    pw->pend[i] = pw->pend[--pw->npend];
}

/* take every connection waiting on the listener: each must show a hello
 * in time; beyond TC_PEERWATCH_PENDING waiting, refuse (the opener of
 * ours tries again) */
static void tc_peerwatch_accept(tc_peerwatch_t *pw, uint64_t now)
{
    for (;;) {
        int fd = accept4(pw->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

        if (fd < 0) {
            if (EINTR == errno) {
                continue;
            }
            return;
        }
        if (pw->npend == TC_PEERWATCH_PENDING) {
            close(fd);
            continue;
        }
        pw->pend[pw->npend++] =
            (tc_peerwatch_pend_t){.fd = fd, .got = 0, .deadline = now + TC_PEERWATCH_HELLO_MS};
    }
}

/* a waiting connection has bytes (or its end): read at most the rest of
 * a hello; a right one takes a slot and gets the ACK */
static void tc_peerwatch_pend_read(tc_peerwatch_t *pw, size_t i)
{
    tc_peerwatch_pend_t *p = &pw->pend[i];
    long n = (long) recv(p->fd, p->hello + p->got, TC_PEERWATCH_HELLO_BYTES - p->got, MSG_DONTWAIT);
    unsigned char ack = TC_PEERWATCH_ACK;
    int what;

    if (n < 0 && (EAGAIN == errno || EWOULDBLOCK == errno || EINTR == errno)) {
        return;
    }
    if (n <= 0) {
        tc_peerwatch_pend_drop(pw, i);
        return;
    }
    p->got += (size_t) n;
    what = tc_peerwatch_hello_check(p->hello, p->got, pw->token);
    if (TC_PEERWATCH_HELLO_MORE == what) {
        return;
    }
    if (TC_PEERWATCH_HELLO_OK != what || pw->nin == pw->max_in ||
        1 != send(p->fd, &ack, 1, MSG_NOSIGNAL | MSG_DONTWAIT)) {
        tc_peerwatch_pend_drop(pw, i);
        return;
    }
    pw->in[pw->nin++] = p->fd;
    *p = pw->pend[--pw->npend];
}

/* an accepted connection has something: its end (or bytes nobody of ours
 * sends): close it */
static void tc_peerwatch_in_read(tc_peerwatch_t *pw, size_t i)
{
    unsigned char byte;
    long n = (long) recv(pw->in[i], &byte, 1, MSG_DONTWAIT);

    if (n < 0 && (EAGAIN == errno || EWOULDBLOCK == errno || EINTR == errno)) {
        return;
    }
    close(pw->in[i]);
    pw->in[i] = pw->in[--pw->nin];
}

/* ---- the thread ------------------------------------------------------- */

/* the poll set: wake, listener, every out (fd -1: ignored), in, pend; the
 * time to the nearest deadline (-1: none) */
static int tc_peerwatch_pollset(tc_peerwatch_t *pw, struct pollfd *pf, size_t *k, uint64_t now)
{
    uint64_t next = UINT64_MAX;

    *k = 0;
    pf[(*k)++] = (struct pollfd){.fd = pw->wake[0], .events = POLLIN};
    pf[(*k)++] = (struct pollfd){.fd = pw->lfd, .events = POLLIN};
    for (size_t i = 0; i < pw->nids; ++i) {
        tc_peerwatch_out_t *o = &pw->out[i];
        short ev = TC_PW_OUT_CONNECTING == o->state ? POLLOUT : POLLIN | POLLRDHUP;

        pf[(*k)++] = (struct pollfd){.fd = o->fd, .events = ev};
        if (TC_PW_OUT_WAIT == o->state || TC_PW_OUT_CONNECTING == o->state ||
            TC_PW_OUT_HELLO == o->state) {
            next = o->deadline < next ? o->deadline : next;
        }
    }
    for (size_t i = 0; i < pw->nin; ++i) {
        pf[(*k)++] = (struct pollfd){.fd = pw->in[i], .events = POLLIN | POLLRDHUP};
    }
    for (size_t i = 0; i < pw->npend; ++i) {
        pf[(*k)++] = (struct pollfd){.fd = pw->pend[i].fd, .events = POLLIN | POLLRDHUP};
        next = pw->pend[i].deadline < next ? pw->pend[i].deadline : next;
    }
    if (UINT64_MAX == next) {
        return -1;
    }
    return next <= now ? 0 : (int) (next - now < 60000 ? next - now : 60000);
}

static void *tc_peerwatch_main(void *arg)
{
    tc_peerwatch_t *pw = arg;
    size_t cap = 2 + pw->nids + pw->max_in + TC_PEERWATCH_PENDING;
    struct pollfd *pf = calloc(cap, sizeof(*pf));

    if (NULL == pf) {
        return NULL;
    }
    tc_peerwatch_lookup_all(pw, tc_peerwatch_now());
    for (;;) {
        uint64_t now = tc_peerwatch_now();
        size_t nin = pw->nin, npend = pw->npend, k;
        int timeout = tc_peerwatch_pollset(pw, pf, &k, now);
        int n = poll(pf, k, timeout);

        if (n < 0 && EINTR != errno) {
            break;
        }
        if (n > 0 && 0 != pf[0].revents) {
            break;
        }
        now = tc_peerwatch_now();
        if (n > 0) {
            const struct pollfd *pin = pf + 2 + pw->nids, *ppend = pin + nin;

            /* from the end of each array: a closed one is replaced by the
             * last; a hello that is right moves to the end of in */
            for (size_t i = nin; i-- > 0;) {
                if (0 != pin[i].revents) {
                    tc_peerwatch_in_read(pw, i);
                }
            }
            for (size_t i = npend; i-- > 0;) {
                if (0 != ppend[i].revents) {
                    tc_peerwatch_pend_read(pw, i);
                }
            }
            for (size_t i = 0; i < pw->nids; ++i) {
                tc_peerwatch_out_t *o = &pw->out[i];
                short rev = pf[2 + i].revents;

                if (0 == rev || o->fd < 0) {
                    continue;
                }
                if (TC_PW_OUT_CONNECTING == o->state) {
                    tc_peerwatch_out_connected(pw, o, now);
                } else {
                    tc_peerwatch_out_read(pw, o, now);
                }
            }
            if (0 != pf[1].revents) {
                tc_peerwatch_accept(pw, now);
            }
        }
        /* hellos too slow, answers too slow, tries due */
        for (size_t i = pw->npend; i-- > 0;) {
            if (now >= pw->pend[i].deadline) {
                tc_peerwatch_pend_drop(pw, i);
            }
        }
        for (size_t i = 0; i < pw->nids; ++i) {
            tc_peerwatch_out_timer(pw, &pw->out[i], now);
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
        n > (SIZE_MAX / 4 - 64) / sizeof(tc_peerwatch_out_t)) {
        return -EINVAL;
    }
    pw->nids = n;
    pw->max_in = 2 * n + 16; /* a peer that reconnects while its old end is unseen */
    pw->ids = malloc((n > 0 ? n : 1) * sizeof(*pw->ids));
    pw->out = calloc(n > 0 ? n : 1, sizeof(*pw->out));
    pw->in = calloc(pw->max_in, sizeof(*pw->in));
    pw->pend = calloc(TC_PEERWATCH_PENDING, sizeof(*pw->pend));
    if (NULL == pw->ids || NULL == pw->out || NULL == pw->in || NULL == pw->pend) {
        pw->nids = 0; /* nothing to close in out; freed by tc_peerwatch_close */
        return -ENOMEM;
    }
    for (size_t i = 0; i < n; ++i) {
        pw->ids[i] = ids[i];
        pw->out[i].fd = -1;
        pw->out[i].state = TC_PW_OUT_GONE;
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
    /* the goodbye to those that showed the hello; the others (and those
     * not accepted yet) see the end before any ACK: no death to them */
    for (size_t i = 0; i < pw->nin; ++i) {
        (void) send(pw->in[i], &bye, 1, MSG_NOSIGNAL | MSG_DONTWAIT);
        close(pw->in[i]);
    }
    for (size_t i = 0; i < pw->npend; ++i) {
        close(pw->pend[i].fd);
    }
    for (size_t i = 0; NULL != pw->out && i < pw->nids; ++i) {
        tc_peerwatch_out_drop(&pw->out[i]);
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
    free(pw->pend);
    free(pw);
}
