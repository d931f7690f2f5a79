/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_bip_ofi.c: unit tests of btl_bip's ofi provider through the BIP
 * device API (bip_device.h, provider "ofi"), libfabric's tcp provider
 * over the loopback interface (BIP_TEST_OFI_PROVIDER names another, e.g.
 * "tcp;ofi_rxm"): two and three devices in one process. Small messages
 * from two senders into one multi-receive buffer (order per sender,
 * stamps, patterns, many buffer reposts), the queue holding all that the
 * credits allow while a message is in use, a large send into
 * a posted receive (RDMA writes, fragments, two iovecs, an offset), the
 * refusal of a stale handle and of a write outside the receive, a read
 * of a registration (and of a wrong key), a dead peer reported as
 * -ESRCH, and a fuzz test of the message check of the multi-receive
 * buffer, messages sent in place (bip_ssend_gather), and registrations
 * from four threads at once while reads of another registration go on.
 * The target of an RMA operation progresses only while it reads its
 * completion queue: a thread keeps the other device reading.
 * Skips visibly when libfabric offers no suitable provider.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <rdma/fabric.h>

#include "bip_device.h"
#include "bip_provider.h"
#include "test_bip_ofi.h"
#include "btl_bip_hdr.h"
#include "tc_atomic.h"
#define SLOT 256
#define HDRB sizeof(bip_ofi_msg_hdr_t) /* the ofi message header */

/* a device whose queue holds what `credits` allow one peer, in messages of
 * up to `slot` bytes (0, 0: the provider's defaults over SLOT) */
static int open_dev_queue(uint32_t stamp, uint32_t credits, uint32_t slot, bip_dev_t **dev)
{
    bip_dev_params_t p = {.rank = 0,
                          .expected_peers = 0,
                          .nslots = 16,
                          .slot_size = SLOT,
                          .max_posted = 4,
                          .frag_size = 4096,
                          .provider = "ofi",
                          .ofi_prov = test_provider(),
                          .ofi_domain = test_domain(),
                          .stamp = stamp,
                          .remote_peers = 1,
                          .ofi_timeout = 3,
                          .credits = credits,
                          .ofi_slot_size = slot};

    return bip_open(&p, dev);
}

static int open_dev(uint32_t stamp, uint32_t max_posted, size_t frag, bip_dev_t **dev)
{
    bip_dev_params_t p = {.rank = 0,
                          .expected_peers = 0,
                          .nslots = 16,
                          .slot_size = SLOT,
                          .max_posted = max_posted,
                          .frag_size = frag,
                          .provider = "ofi",
                          .ofi_prov = test_provider(),
                          .ofi_domain = test_domain(),
                          .stamp = stamp,
                          .remote_peers = 1,
                          .ofi_timeout = 3};

    return bip_open(&p, dev);
}

static double bip_test_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

static int skip_if_no_ofi(void)
{
    bip_dev_t *dev;
    int rc = open_dev(0, 4, 4096, &dev);

    if (test_bip_no_ofi("test_bip_ofi", rc)) {
        return 1;
    }
    bip_close(dev);
    return 0;
}

static unsigned char pattern(uint32_t sender, uint32_t seq, size_t i)
{
    return (unsigned char) (sender * 131u + seq * 7u + i * 13u + 1u);
}

/* the length of message seq of a sender of varied lengths: 4 to SLOT */
static uint32_t msg_len(uint32_t sender, uint32_t seq)
{
    return 4 + (seq * 37u + sender) % (SLOT - 3);
}

/* a message: its sequence number, then its pattern */
static void msg_fill(unsigned char *buf, uint32_t sender, uint32_t seq, uint32_t len)
{
    memcpy(buf, &seq, 4);
    for (uint32_t i = 4; i < len; ++i) {
        buf[i] = pattern(sender, seq, i);
    }
}

/* what the receiver expects of one sender's messages */
typedef struct expect {
    uint32_t stamp;     /* its device's stamp: the source of its messages */
    uint32_t sender;    /* its pattern */
    uint32_t fixed_len; /* every message this long; 0: msg_len() */
    uint32_t next;      /* the sequence number of its next message */
} expect_t;

/* Receive count messages on dev, each from one of the nex senders, in
 * order per sender, with its length and pattern; releases each. */
static void recv_check(bip_dev_t *dev, expect_t *ex, int nex, uint32_t count)
{
    for (uint32_t got = 0; got < count; ++got) {
        const void *msg;
        const unsigned char *m;
        uint32_t len, src, seq;
        expect_t *e = NULL;
        int rc;

        do {
            rc = bip_srecv_peek(dev, &msg, &len, &src);
        } while (-EAGAIN == rc);
        assert_int_equal(rc, 0);
        for (int k = 0; k < nex; ++k) {
            if (ex[k].stamp == src) {
                e = &ex[k];
            }
        }
        assert_non_null(e);
        assert_true(len >= 4);
        m = msg;
        memcpy(&seq, m, 4);
        assert_int_equal(seq, e->next);
        assert_int_equal(len, 0 != e->fixed_len ? e->fixed_len : msg_len(e->sender, seq));
        for (uint32_t i = 4; i < len; ++i) {
            assert_int_equal(m[i], pattern(e->sender, seq, i));
        }
        e->next++;
        bip_srecv_release(dev);
    }
}

/* a thread that keeps a device reading its completion queue */
typedef struct spinner {
    pthread_t thr;
    bip_dev_t *dev;
    uint32_t handle; /* 0: peek only; else until this receive is full */
    size_t want;
    volatile int stop;
    long got;
} spinner_t;

static void *spin_main(void *arg)
{
    spinner_t *s = arg;

    while (!s->stop) {
        const void *msg;
        uint32_t len, src;

        if (0 != s->handle) {
            s->got = bip_recv_test(s->dev, s->handle);
            if (s->got < 0 || (size_t) s->got == s->want) {
                break;
            }
        } else if (0 == bip_srecv_peek(s->dev, &msg, &len, &src)) {
            bip_srecv_release(s->dev);
        }
    }
    return NULL;
}

/* b reads what a registered: a and b (fragments of 256 KiB), b connected
 * to a, len bytes at src registered on a, a spinner keeping a's CQ read
 * (the target of a read moves its data only then) */
typedef struct reader {
    bip_dev_t *a, *b;
    bip_peer_t *ba;
    bip_rkey_t key;
    void *reg;
    spinner_t sp;
} reader_t;

static void reader_open(reader_t *r, void *src, size_t len)
{
    memset(r, 0, sizeof(*r));
    assert_int_equal(open_dev(0, 4, 256 * 1024, &r->a), 0);
    assert_int_equal(open_dev(1, 4, 256 * 1024, &r->b), 0);
    test_bip_connect_to(r->b, r->a, 0, &r->ba);
    assert_int_equal(bip_mem_register(r->a, src, len, &r->key, &r->reg), 0);
    assert_int_not_equal(r->key.key, 0);
    r->sp.dev = r->a;
    assert_int_equal(pthread_create(&r->sp.thr, NULL, spin_main, &r->sp), 0);
}

static void reader_close(reader_t *r)
{
    r->sp.stop = 1;
    pthread_join(r->sp.thr, NULL);
    bip_mem_deregister(r->a, r->reg);
    bip_peer_disconnect(r->ba);
    bip_close(r->a);
    bip_close(r->b);
}

#define PER_SENDER 3000

typedef struct sender {
    pthread_t thr;
    bip_dev_t *dev;
    bip_peer_t *peer;
    uint32_t s;
    int rc;
} sender_t;

/* one sender's messages (its own device, its own thread: a publish may
 * wait for the receiver, which reads in the main thread) */
static void *sender_main(void *arg)
{
    sender_t *snd = arg;

    for (uint32_t seq = 0; seq < PER_SENDER && 0 == snd->rc; ++seq) {
        unsigned char *buf;
        uint32_t mlen = msg_len(snd->s, seq);

        snd->rc = bip_ssend_reserve(snd->peer, (void **) &buf);
        if (0 != snd->rc) {
            break;
        }
        msg_fill(buf, snd->s, seq, mlen);
        snd->rc = bip_ssend_publish(snd->peer, mlen);
        if (0 == seq % 64) {
            const void *msg;
            uint32_t len, src;

            /* the sender's own completions: staged buffers come back */
            (void) bip_srecv_peek(snd->dev, &msg, &len, &src);
        }
    }
    return NULL;
}

/* two senders into one receiver: every message once, in order per
 * sender, with its stamp and pattern; 3000 x up to 256 B passes the
 * two 1 MiB multi-receive buffers several times */
static void test_small_two_senders(void **state)
{
    bip_dev_t *b;
    sender_t snd[2];
    expect_t ex[2] = {{.stamp = 10, .sender = 0}, {.stamp = 12, .sender = 1}};
    (void) state;

    if (skip_if_no_ofi()) {
        skip();
    }
    assert_int_equal(open_dev(11, 4, 4096, &b), 0);
    assert_string_equal(bip_dev_providers(b), "ofi");
    for (int s = 0; s < 2; ++s) {
        memset(snd + s, 0, sizeof(snd[s]));
        snd[s].s = (uint32_t) s;
        assert_int_equal(open_dev(10 + 2 * (uint32_t) s, 4, 4096, &snd[s].dev), 0);
        test_bip_connect_to(snd[s].dev, b, 11, &snd[s].peer);
    }
    for (int s = 0; s < 2; ++s) {
        assert_int_equal(pthread_create(&snd[s].thr, NULL, sender_main, snd + s), 0);
    }
    recv_check(b, ex, 2, 2 * PER_SENDER);
    for (int s = 0; s < 2; ++s) {
        pthread_join(snd[s].thr, NULL);
        assert_int_equal(snd[s].rc, 0);
        assert_int_equal(ex[s].next, PER_SENDER);
        bip_peer_disconnect(snd[s].peer);
        bip_close(snd[s].dev);
    }
    bip_close(b);
}

/* bip_ssend_gather: messages sent from the sender's memory (a copied
 * head, two pieces in place) between copied ones, each buffer freed only
 * when reaped: the receiver sees the same messages, in order */
static void *gather_sender_main(void *arg)
{
    sender_t *snd = arg;
    uint32_t reaped = 0, gathered = 0;
    void *cookie;
    int status;

    for (uint32_t seq = 0; seq < PER_SENDER || (0 == snd->rc && reaped < gathered); ++seq) {
        uint32_t mlen = msg_len(0, seq), h = mlen < 20 ? mlen : 20, m = (mlen - h) / 2;
        unsigned char *buf = seq < PER_SENDER ? malloc(mlen) : NULL, *slot;

        if (NULL != buf) {
            struct iovec iov[2] = {{buf + h, m}, {buf + h + m, mlen - h - m}};

            msg_fill(buf, 0, seq, mlen);
            snd->rc = 2 == seq % 3 ? bip_ssend_reserve(snd->peer, (void **) &slot)
                                   : bip_ssend_gather(snd->peer, buf, h, iov, 2, buf);
            if (2 == seq % 3 && 0 == snd->rc) { /* the copying way, in between */
                memcpy(slot, buf, mlen);
                snd->rc = bip_ssend_publish(snd->peer, mlen);
            }
            gathered += 1 == snd->rc;
            snd->rc = 1 == snd->rc ? 0 : (free(buf), snd->rc); /* 0: sent at once */
        }
        while (0 == snd->rc && 1 == bip_ssend_reap(snd->dev, &cookie, &status)) {
            snd->rc = status;
            free(cookie);
            reaped++;
        }
    }
    return NULL;
}

static void test_gather(void **state)
{
    bip_dev_t *b;
    sender_t snd = {.s = 0};
    expect_t ex = {.stamp = 10, .sender = 0};
    unsigned char big[SLOT + 8] = {0};
    struct iovec iov = {big, SLOT};
    (void) state;

    if (skip_if_no_ofi()) {
        skip();
    }
    assert_int_equal(open_dev(11, 4, 4096, &b), 0);
    assert_int_equal(open_dev(10, 4, 4096, &snd.dev), 0);
    test_bip_connect_to(snd.dev, b, 11, &snd.peer);
    /* refused before anything moves: a head too long, a message too long */
    assert_int_equal(bip_ssend_gather(snd.peer, big, BIP_GATHER_HEAD_MAX + 8, NULL, 0, NULL),
                     -ENOTSUP);
    assert_int_equal(bip_ssend_gather(snd.peer, big, 8, &iov, 1, NULL), -EMSGSIZE);
    assert_int_equal(pthread_create(&snd.thr, NULL, gather_sender_main, &snd), 0);
    recv_check(b, &ex, 1, PER_SENDER);
    pthread_join(snd.thr, NULL);
    assert_int_equal(snd.rc, 0);
    bip_peer_disconnect(snd.peer);
    bip_close(snd.dev);
    bip_close(b);
}

/* N: the messages one peer may have unreleased; N x 64 KiB (2.6 MB) is
 * more than two buffers of the provider's 1 MiB floor would hold */
#define HELD_CREDITS 40
#define HELD_SLOT (64 * 1024 + 64) /* the largest message: 64 KiB and headers */
#define HELD_ROUNDS 3              /* x N x 64 KiB: past both buffers */

typedef struct held_sender {
    pthread_t thr;
    bip_peer_t *peer;
    int rc;
    int released; /* atomic: rounds the receiver released */
    int sent;     /* atomic: rounds sent */
    int stop;     /* atomic: the receiver has every message */
} held_sender_t;

/* N largest messages per round, a round once the receiver released the
 * previous one (what the credits let a sender do) */
static void *held_sender_main(void *arg)
{
    held_sender_t *h = arg;
    uint32_t seq = 0;

    for (int round = 0; round < HELD_ROUNDS && 0 == h->rc; ++round) {
        /* waiting, the sender's provider keeps moving its data (rxm
         * sends large messages by a rendezvous it serves) */
        while (tc_atomic_load_acquire(&h->released) < round) {
            (void) bip_peer_alive(h->peer);
        }
        for (int k = 0; k < HELD_CREDITS && 0 == h->rc; ++k, ++seq) {
            unsigned char *buf;

            h->rc = bip_ssend_reserve(h->peer, (void **) &buf);
            if (0 != h->rc) {
                break;
            }
            msg_fill(buf, 7, seq, HELD_SLOT);
            h->rc = bip_ssend_publish(h->peer, HELD_SLOT);
        }
        tc_atomic_store_release(&h->sent, round + 1);
    }
    tc_atomic_store_release(&h->sent, HELD_ROUNDS);
    while (!tc_atomic_load_acquire(&h->stop)) {
        (void) bip_peer_alive(h->peer);
    }
    return NULL;
}

/* MPI-BIP's static queue cannot overflow: it holds every message the
 * credits allow. A sender sends N messages of the largest size while
 * the receiver holds the first in use and only reads its CQ; then the
 * receiver reads from the sender, whose answer comes on the same
 * connection behind those messages: the provider must have taken them
 * all into the multi-receive buffers (a provider that holds a message
 * back for want of a buffer, as libfabric's own tcp endpoint does,
 * leaves the read unanswered, and the read times out). Then every
 * message comes out once, in order, with its pattern; two more rounds
 * pass both buffers' release and repost. */
static void test_held_message(void **state)
{
    bip_dev_t *a, *b;
    bip_peer_t *b_to_a;
    held_sender_t h;
    expect_t ex1 = {.stamp = 20, .sender = 7, .fixed_len = HELD_SLOT};
    static unsigned char rsrc[5000], rdst[5000];
    bip_rkey_t key;
    void *reg;
    spinner_t sp;
    const void *msg;
    uint32_t len, src, seq;
    int rc;
    (void) state;

    if (skip_if_no_ofi()) {
        skip();
    }
    assert_int_equal(open_dev_queue(21, HELD_CREDITS, HELD_SLOT, &b), 0);
    assert_int_equal(open_dev_queue(20, HELD_CREDITS, HELD_SLOT, &a), 0);
    memset(&h, 0, sizeof(h));
    test_bip_connect_to(a, b, 21, &h.peer);
    test_bip_connect_to(b, a, 20, &b_to_a);
    assert_int_equal(pthread_create(&h.thr, NULL, held_sender_main, &h), 0);
    do {
        rc = bip_srecv_peek(b, &msg, &len, &src);
    } while (-EAGAIN == rc);
    assert_int_equal(rc, 0);
    memcpy(&seq, msg, 4);
    assert_int_equal(seq, 0);
    /* the first message stays in use; only the CQ is read */
    while (tc_atomic_load_acquire(&h.sent) < 1) {
        (void) bip_peer_alive(b_to_a);
    }
    assert_int_equal(h.rc, 0);
    /* still holding: a read from the sender, answered behind them */
    memset(&sp, 0, sizeof(sp));
    sp.dev = a;
    assert_int_equal(pthread_create(&sp.thr, NULL, spin_main, &sp), 0);
    for (size_t i = 0; i < sizeof(rsrc); ++i) {
        rsrc[i] = pattern(8, 9, i);
    }
    memset(rdst, 0, sizeof(rdst));
    assert_int_equal(bip_mem_register(a, rsrc, sizeof(rsrc), &key, &reg), 0);
    assert_int_equal(bip_read_large_key(b_to_a, rdst, key.base, &key, sizeof(rsrc)), 0);
    assert_memory_equal(rdst, rsrc, sizeof(rsrc));
    sp.stop = 1;
    pthread_join(sp.thr, NULL);
    bip_mem_deregister(a, reg);
    bip_srecv_release(b);
    ex1.next = 1;
    recv_check(b, &ex1, 1, HELD_CREDITS - 1);
    for (int round = 1; round < HELD_ROUNDS; ++round) {
        tc_atomic_store_release(&h.released, round);
        recv_check(b, &ex1, 1, HELD_CREDITS);
    }
    tc_atomic_store_release(&h.stop, 1);
    pthread_join(h.thr, NULL);
    assert_int_equal(h.rc, 0);
    assert_int_equal(ex1.next, HELD_ROUNDS * HELD_CREDITS);
    bip_peer_disconnect(b_to_a);
    bip_peer_disconnect(h.peer);
    bip_close(a);
    bip_close(b);
}

/* a large send into a posted receive: two iovecs, 64 KiB fragments, an
 * offset; the guard bytes around the written range stay untouched */
static void test_large_send(void **state)
{
    const size_t len = 3 * 1024 * 1024 + 5, off = 100, cap = len + 200, guard = 4096;
    unsigned char *src = malloc(len), *dst = malloc(cap + guard);
    bip_dev_t *a, *b;
    bip_peer_t *ab;
    spinner_t sp;
    struct iovec iov[2];
    uint32_t handle;
    (void) state;

    if (skip_if_no_ofi()) {
        free(src);
        free(dst);
        skip();
    }
    assert_non_null(src);
    assert_non_null(dst);
    for (size_t i = 0; i < len; ++i) {
        src[i] = pattern(1, 2, i);
    }
    memset(dst, 0xee, cap + guard);
    assert_int_equal(open_dev(0, 4, 64 * 1024, &a), 0);
    assert_int_equal(open_dev(1, 4, 64 * 1024, &b), 0);
    test_bip_connect_to(a, b, 1, &ab);
    assert_int_equal(bip_post_recv(b, dst, cap, &handle), 0);
    assert_int_equal(bip_recv_test(b, handle), 0);

    memset(&sp, 0, sizeof(sp));
    sp.dev = b;
    sp.handle = handle;
    sp.want = len;
    assert_int_equal(pthread_create(&sp.thr, NULL, spin_main, &sp), 0);
    iov[0].iov_base = src;
    iov[0].iov_len = 1000;
    iov[1].iov_base = src + 1000;
    iov[1].iov_len = len - 1000;
    assert_int_equal(bip_send_large(ab, handle, off, iov, 2, len), 0);
    pthread_join(sp.thr, NULL);
    assert_int_equal(sp.got, (long) len);
    assert_memory_equal(dst + off, src, len);
    for (size_t i = 0; i < off; ++i) {
        assert_int_equal(dst[i], 0xee);
    }
    for (size_t i = off + len; i < cap; ++i) {
        assert_int_equal(dst[i], 0xee);
    }

    /* outside the receive: the receiver's provider drops the write (the
     * sender is not told: tcp completes it when sent), nothing lands
     * beyond the region and the receive counts no byte of it */
    memset(&sp, 0, sizeof(sp));
    sp.dev = b;
    assert_int_equal(pthread_create(&sp.thr, NULL, spin_main, &sp), 0);
    iov[0].iov_base = src;
    iov[0].iov_len = 300;
    (void) bip_send_large(ab, handle, cap - 100, iov, 1, 300);
    /* a stale handle: the region is gone */
    bip_recv_unpost(b, handle);
    assert_int_equal(bip_recv_test(b, handle), -EINVAL);
    memset(dst, 0xee, cap);
    (void) bip_send_large(ab, handle, 0, iov, 1, 300);
    /* the receiver's provider checks each write against the region when
     * it reads its CQ (tcp drops the connection of such a write): read
     * on for a while; a byte written outside would fail below */
    for (int i = 0; i < 20000; ++i) {
        const void *msg;
        uint32_t mlen, msrc;

        if (0 == bip_srecv_peek(b, &msg, &mlen, &msrc)) {
            bip_srecv_release(b);
        }
    }
    sp.stop = 1;
    pthread_join(sp.thr, NULL);
    for (size_t i = 0; i < cap; ++i) {
        assert_int_equal(dst[i], 0xee);
    }
    for (size_t i = cap; i < cap + guard; ++i) {
        assert_int_equal(dst[i], 0xee);
    }

    bip_peer_disconnect(ab);
    bip_close(a);
    bip_close(b);
    free(src);
    free(dst);
}

/* the receiver reads a registration of the sender (fi_read) */
static void test_read_large(void **state)
{
    const size_t len = 2 * 1024 * 1024 + 3;
    unsigned char *src = malloc(len + 64), *dst = malloc(len);
    bip_rkey_t bad;
    reader_t r;
    (void) state;

    if (skip_if_no_ofi()) {
        free(src);
        free(dst);
        skip();
    }
    for (size_t i = 0; i < len + 64; ++i) {
        src[i] = pattern(3, 4, i);
    }
    memset(dst, 0, len);
    reader_open(&r, src, len + 64);
    assert_int_equal(bip_peer_can_read(r.ba), 0);
    assert_int_equal(bip_read_large_key(r.ba, dst, (uint64_t) (uintptr_t) (src + 64), &r.key, len),
                     0);
    assert_memory_equal(dst, src + 64, len);
    /* a key nobody registered, and an address below the registration */
    bad = r.key;
    bad.key ^= 0x5555;
    assert_int_not_equal(bip_read_large_key(r.ba, dst, r.key.base, &bad, 100), 0);
    assert_int_equal(bip_read_large_key(r.ba, dst, r.key.base - 1, &r.key, 100), -EFAULT);
    assert_int_equal(bip_read_large_key(r.ba, dst, r.key.base, NULL, 100), -EINVAL);
    reader_close(&r);
    free(src);
    free(dst);
}

/* Registrations from several threads at once on a's device while b
 * reads a's registered memory (a spinner reads a's CQ, so the provider
 * looks keys up), checked by pattern: the provider keeps a domain's keys
 * in a tree it does not lock (common/tc_ofi.h), which without our guard
 * hung or crashed within a few thousand registrations. alarm() makes a
 * hang a failure. */
#define CHURN_THREADS 4
#define CHURN_ROUNDS 3000

typedef struct {
    pthread_t thr;
    bip_dev_t *dev;
    unsigned char *buf;
    int failed;
} churn_t;

static void *churn_main(void *arg)
{
    churn_t *c = arg;

    for (int i = 0; i < CHURN_ROUNDS; ++i) {
        bip_rkey_t key;
        void *reg;

        if (0 != bip_mem_register(c->dev, c->buf + (i % 16) * 4096, 4096, &key, &reg)) {
            c->failed++;
            continue;
        }
        bip_mem_deregister(c->dev, reg);
    }
    return NULL;
}

static void test_register_threads(void **state)
{
    const size_t len = 64 * 1024;
    unsigned char *src = malloc(len), *dst = malloc(len);
    churn_t c[CHURN_THREADS];
    reader_t r;
    (void) state;

    if (skip_if_no_ofi()) {
        free(src);
        free(dst);
        skip();
    }
    reader_open(&r, src, len);
    alarm(300);
    for (int i = 0; i < CHURN_THREADS; ++i) {
        c[i].dev = r.a;
        c[i].buf = malloc(17 * 4096);
        c[i].failed = 0;
        assert_non_null(c[i].buf);
        assert_int_equal(pthread_create(&c[i].thr, NULL, churn_main, &c[i]), 0);
    }
    for (uint32_t round = 0; round < 50; ++round) {
        for (size_t i = 0; i < len; ++i) {
            src[i] = pattern(round, 7, i);
        }
        memset(dst, 0, len);
        assert_int_equal(bip_read_large_key(r.ba, dst, (uint64_t) (uintptr_t) src, &r.key, len),
                         0);
        assert_memory_equal(dst, src, len);
    }
    for (int i = 0; i < CHURN_THREADS; ++i) {
        assert_int_equal(pthread_join(c[i].thr, NULL), 0);
        assert_int_equal(c[i].failed, 0);
        free(c[i].buf);
    }
    alarm(0);
    reader_close(&r);
    free(src);
    free(dst);
}

/* asynchronous reads: several in flight, each reaped once with its
 * cookie and the data in place; a key nobody registered is reaped with
 * an error */
static void test_read_async(void **state)
{
    const size_t len = 3 * 1024 * 1024 + 5;
    unsigned char *src = malloc(len), *dst1 = malloc(len), *dst2 = malloc(len), small[8];
    bip_rkey_t key, bad;
    bip_peer_t *ba;
    bip_dev_t *b;
    void *cookie;
    int status, seen1 = 0, seen2 = 0, seen3 = 0, seen4 = 0;
    reader_t r;
    (void) state;

    if (skip_if_no_ofi()) {
        free(src);
        free(dst1);
        free(dst2);
        skip();
    }
    for (size_t i = 0; i < len; ++i) {
        src[i] = pattern(5, 6, i);
    }
    memset(dst1, 0, len);
    memset(dst2, 0, len);
    reader_open(&r, src, len);
    key = r.key;
    ba = r.ba;
    b = r.b;

    /* nothing in flight: nothing to reap */
    assert_int_equal(bip_read_reap(b, &cookie, &status), 0);
    assert_int_equal(bip_read_start(ba, dst1, key.base, &key, len, &seen1), 1);
    assert_int_equal(bip_read_start(ba, dst2, key.base + 1, &key, len - 1, &seen2), 1);
    assert_int_equal(bip_read_start(ba, small, key.base + len - 5, &key, 5, &seen3), 1);
    /* checks before anything is posted fail at once */
    assert_int_equal(bip_read_start(ba, dst1, key.base - 1, &key, 10, &seen4), -EFAULT);
    assert_int_equal(bip_read_start(ba, dst1, key.base, NULL, 10, &seen4), -EINVAL);
    while (seen1 + seen2 + seen3 < 3) {
        if (1 == bip_read_reap(b, &cookie, &status)) {
            assert_int_equal(status, 0);
            assert_true(cookie == &seen1 || cookie == &seen2 || cookie == &seen3);
            ++*(int *) cookie;
        }
    }
    assert_int_equal(seen1, 1);
    assert_int_equal(seen2, 1);
    assert_int_equal(seen3, 1);
    assert_int_equal(bip_read_reap(b, &cookie, &status), 0);
    assert_memory_equal(dst1, src, len);
    assert_memory_equal(dst2, src + 1, len - 1);
    assert_memory_equal(small, src + len - 5, 5);

    /* a stale key: the read is reaped with an error, not lost */
    bad = key;
    bad.key ^= 0x5555;
    assert_int_equal(bip_read_start(ba, dst1, key.base, &bad, 100, &seen4), 1);
    while (0 == seen4) {
        if (1 == bip_read_reap(b, &cookie, &status)) {
            assert_ptr_equal(cookie, &seen4);
            assert_int_not_equal(status, 0);
            seen4 = 1;
        }
    }
    reader_close(&r);
    free(src);
    free(dst1);
    free(dst2);
}

/* a peer process that died: a large send to it fails with -ESRCH and
 * the peer is reported gone */
static void test_dead_peer(void **state)
{
    int fds[2];
    unsigned char addr[BIP_ADDR_MAX], buf[4096];
    size_t alen = 0;
    bip_dev_t *a;
    bip_peer_t *peer;
    bip_peer_info_t info;
    struct iovec iov = {.iov_base = buf, .iov_len = sizeof(buf)};
    pid_t kid;
    int rc, status;
    (void) state;

    if (skip_if_no_ofi()) {
        skip();
    }
    assert_int_equal(pipe(fds), 0);
    kid = fork();
    assert_true(kid >= 0);
    if (0 == kid) {
        bip_dev_t *k;

        close(fds[0]);
        if (0 != open_dev(7, 4, 4096, &k) || 0 != bip_dev_address(k, addr, &alen)) {
            _exit(2);
        }
        if (write(fds[1], &alen, sizeof(alen)) != (ssize_t) sizeof(alen) ||
            write(fds[1], addr, alen) != (ssize_t) alen) {
            _exit(3);
        }
        pause();
        _exit(0);
    }
    close(fds[1]);
    assert_int_equal(read(fds[0], &alen, sizeof(alen)), (ssize_t) sizeof(alen));
    assert_true(alen > 0 && alen <= BIP_ADDR_MAX);
    assert_int_equal(read(fds[0], addr, alen), (ssize_t) alen);
    close(fds[0]);
    /* opened before the peer dies: our endpoint cannot take its port */
    assert_int_equal(open_dev(0, 4, 4096, &a), 0);
    kill(kid, SIGKILL);
    assert_int_equal(waitpid(kid, &status, 0), kid);

    info.rank = 7;
    info.local_rank = -1;
    info.addr = addr;
    info.addrlen = alen;
    assert_int_equal(bip_peer_connect_info(a, &info, &peer), 0);
    memset(buf, 1, sizeof(buf));
    rc = bip_send_large(peer, 1u << 12, 0, &iov, 1, sizeof(buf));
    assert_int_equal(rc, -ESRCH);
    assert_int_equal(bip_peer_alive(peer), -ESRCH);
    bip_peer_disconnect(peer);
    bip_close(a);
}

/* A peer that dies after the connection carried messages: the small
 * messages sent to it afterwards (fi_inject size, the kind that carries
 * credits) report it (-ESRCH) within the device's timeout (3 s here),
 * from the publish or from bip_peer_alive. */
static void test_dead_peer_small(void **state)
{
    int fds[2], ack[2];
    unsigned char addr[BIP_ADDR_MAX];
    size_t alen = 0;
    bip_dev_t *a;
    bip_peer_t *peer;
    bip_peer_info_t info;
    pid_t kid;
    int status, alive = 0;
    char c = 0;
    (void) state;

    if (skip_if_no_ofi()) {
        skip();
    }
    assert_int_equal(pipe(fds), 0);
    assert_int_equal(pipe(ack), 0);
    kid = fork();
    assert_true(kid >= 0);
    if (0 == kid) {
        bip_dev_t *k;
        int got = 0;

        close(fds[0]);
        close(ack[0]);
        if (0 != open_dev(7, 4, 4096, &k) || 0 != bip_dev_address(k, addr, &alen)) {
            _exit(2);
        }
        if (write(fds[1], &alen, sizeof(alen)) != (ssize_t) sizeof(alen) ||
            write(fds[1], addr, alen) != (ssize_t) alen) {
            _exit(3);
        }
        /* take the first messages, so the connection is up, then wait to
         * be killed without reading again */
        while (got < 8) {
            const void *msg;
            uint32_t len, src;

            if (0 == bip_srecv_peek(k, &msg, &len, &src)) {
                bip_srecv_release(k);
                ++got;
            }
        }
        if (write(ack[1], "k", 1) != 1) {
            _exit(4);
        }
        pause();
        _exit(0);
    }
    close(fds[1]);
    close(ack[1]);
    assert_int_equal(read(fds[0], &alen, sizeof(alen)), (ssize_t) sizeof(alen));
    assert_true(alen > 0 && alen <= BIP_ADDR_MAX);
    assert_int_equal(read(fds[0], addr, alen), (ssize_t) alen);
    close(fds[0]);
    assert_int_equal(open_dev(0, 4, 4096, &a), 0);
    info.rank = 7;
    info.local_rank = -1;
    info.addr = addr;
    info.addrlen = alen;
    assert_int_equal(bip_peer_connect_info(a, &info, &peer), 0);
    for (int i = 0; i < 8; ++i) {
        unsigned char *buf;

        assert_int_equal(bip_ssend_reserve(peer, (void **) &buf), 0);
        memset(buf, i, 8);
        assert_int_equal(bip_ssend_publish(peer, 8), 0);
    }
    while (1 != read(ack[0], &c, 1)) {
        const void *msg;
        uint32_t len, src;

        (void) bip_srecv_peek(a, &msg, &len, &src);
    }
    close(ack[0]);
    kill(kid, SIGKILL);
    assert_int_equal(waitpid(kid, &status, 0), kid);
    /* 8-byte messages (credit-only size) until the peer is reported, for
     * at most three times the device's timeout (3 s) */
    for (double end = bip_test_now() + 9.0; bip_test_now() < end;) {
        unsigned char *buf;
        int rc = bip_ssend_reserve(peer, (void **) &buf);

        if (0 == rc) {
            memset(buf, 0x5a, 8);
            rc = bip_ssend_publish(peer, 8);
        }
        alive = bip_peer_alive(peer);
        if (0 != rc || 0 != alive) {
            alive = -ESRCH;
            break;
        }
        usleep(10000);
    }
    assert_int_equal(alive, -ESRCH);
    assert_int_equal(bip_peer_alive(peer), -ESRCH);
    bip_peer_disconnect(peer);
    bip_close(a);
}

/* the check of a message in the multi-receive buffer against random
 * bytes and lengths, small ones and ones of the ofi reach's 64 KiB slot:
 * never a message longer than what arrived or than a slot, never a read
 * outside the buffer (ASan/valgrind watch the reads: every buffer is
 * exactly its length) */
static void test_fuzz_msg_check(void **state)
{
    unsigned int seed = 12345;
    (void) state;

    for (int round = 0; round < 200000; ++round) {
        size_t got = (size_t) (rand_r(&seed) % 64);
        unsigned char *buf = malloc(got + 1);
        const void *msg = NULL;
        uint32_t len = 0, src = 0, slot = 1 + (uint32_t) (rand_r(&seed) % 64);
        int rc;

        assert_non_null(buf);
        for (size_t i = 0; i < got; ++i) {
            buf[i] = (unsigned char) rand_r(&seed);
        }
        if (got >= HDRB && 0 == rand_r(&seed) % 2) {
            /* a plausible length now and then, so the accept path runs */
            size_t pad = (size_t) (rand_r(&seed) % 8);
            uint32_t l = (uint32_t) (got - HDRB >= pad ? got - HDRB - pad : 0);

            memcpy(buf + 4, &l, 4);
        }
        rc = bip_ofi_msg_check(buf, got, slot, &msg, &len, &src);
        if (0 == rc) {
            assert_true(got >= sizeof(bip_ofi_msg_hdr_t));
            assert_ptr_equal(msg, buf + sizeof(bip_ofi_msg_hdr_t));
            assert_true(len <= slot);
            assert_true(len <= got - sizeof(bip_ofi_msg_hdr_t));
            assert_true(got - sizeof(bip_ofi_msg_hdr_t) - len <= 7);
            memcpy(&src, buf, 4);
        } else {
            assert_int_equal(rc, -EPROTO);
        }
        free(buf);
    }
    /* messages of the ofi reach's size (64 KiB of data and headers):
     * lengths at, below and above a slot and what arrived */
    for (int round = 0; round < 4000; ++round) {
        const uint32_t slot = 65664;
        size_t got = slot - 64 + (size_t) (rand_r(&seed) % 160);
        unsigned char *buf = malloc(got);
        uint32_t l = (uint32_t) (got - HDRB) - 8u + (uint32_t) (rand_r(&seed) % 24);
        const void *msg = NULL;
        uint32_t len = 0, src = 0;

        assert_non_null(buf);
        memset(buf, 0x5a, got);
        if (0 == rand_r(&seed) % 8) {
            l = (uint32_t) rand_r(&seed) * 2654435761u;
        }
        memcpy(buf + 4, &l, 4);
        if (0 == bip_ofi_msg_check(buf, got, slot, &msg, &len, &src)) {
            assert_true(len <= slot);
            assert_true(len <= got - sizeof(bip_ofi_msg_hdr_t));
            assert_true(got - sizeof(bip_ofi_msg_hdr_t) - len <= 7);
            assert_int_equal(len, l);
        } else {
            assert_true(l > slot || l > got - HDRB || got - HDRB - l > 7);
        }
        free(buf);
    }
    /* edge cases */
    {
        unsigned char b[HDRB + 8] = {0};
        const void *msg;
        uint32_t len, src, l = 8;

        assert_int_equal(bip_ofi_msg_check(NULL, sizeof(b), 64, &msg, &len, &src), -EPROTO);
        assert_int_equal(bip_ofi_msg_check(b, HDRB - 1, 64, &msg, &len, &src), -EPROTO);
        memcpy(b + 4, &l, 4);
        assert_int_equal(bip_ofi_msg_check(b, sizeof(b), 64, &msg, &len, &src), 0);
        assert_int_equal(len, 8);
        assert_int_equal(bip_ofi_msg_check(b, sizeof(b), 7, &msg, &len, &src), -EPROTO);
        l = UINT32_MAX;
        memcpy(b + 4, &l, 4);
        assert_int_equal(bip_ofi_msg_check(b, sizeof(b), UINT32_MAX, &msg, &len, &src), -EPROTO);
        l = 0;
        memcpy(b + 4, &l, 4);
        assert_int_equal(bip_ofi_msg_check(b, sizeof(b), 64, &msg, &len, &src), -EPROTO);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small_two_senders), cmocka_unit_test(test_gather),
        cmocka_unit_test(test_held_message),      cmocka_unit_test(test_large_send),
        cmocka_unit_test(test_read_large),        cmocka_unit_test(test_read_async),
        cmocka_unit_test(test_dead_peer),         cmocka_unit_test(test_dead_peer_small),
        cmocka_unit_test(test_fuzz_msg_check),
        cmocka_unit_test(test_register_threads),
    };

    signal(SIGPIPE, SIG_IGN);
    if (NULL != getenv("BIP_TEST_FILTER")) {
        cmocka_set_test_filter(getenv("BIP_TEST_FILTER"));
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
