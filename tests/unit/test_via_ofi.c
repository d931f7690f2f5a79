/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_via_ofi.c: unit tests of btl_via's ofi provider (VIPL over
 * libfabric, provider tcp) between two NICs of one process over the
 * host's own address: connection of a VI pair, sends with immediate data,
 * RDMA write with immediate (the notice lends a posted receive
 * descriptor), RDMA read, inline sends completed at post in posting
 * order (no CQ entry, none twice), a message that
 * lands in a lent buffer, a refused local registration, and VIs made on
 * first use (a request for a VI that does not exist yet, reported by
 * vipl_connect_wait, from either side of the pair; both sides at once);
 * an orderly disconnect (goodbye, then fi_shutdown) told from an endpoint
 * that just goes, as a killed process's does; registrations from four
 * threads at once while RDMA writes land.  Without the
 * provider (libfabric not built in, or no tcp provider) it prints why and
 * exits 77 (SKIP).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vipl.h"

#define BUF (1u << 20)
#define DEPTH 4

typedef struct side {
    vipl_nic_t *nic;
    vipl_ptag_t *ptag;
    vipl_cq_t *cq;
    vipl_vi_t *vi;
    char *buf; /* BUF bytes of RDMA area, then DEPTH receive buffers of 4 KiB */
    vipl_mem_handle_t h;
    vipl_desc_t r[DEPTH];
} side_t;

static const vipl_ops_t *ops;
static side_t A, B;

static void side_open(side_t *s)
{
    vipl_open_params_t p = {0};
    vipl_vi_attrs_t va = {0};
    vipl_mem_attrs_t ma = {0};

    p.max_regs = 64;
    assert_int_equal(VIPL_SUCCESS, vipl_open_nic(ops, &p, &s->nic));
    assert_int_equal(VIPL_SUCCESS, vipl_create_ptag(s->nic, &s->ptag));
    assert_int_equal(VIPL_SUCCESS, vipl_create_cq(s->nic, 16, &s->cq));
    va.reliability = VIPL_RELIABLE_DELIVERY;
    va.ptag = s->ptag;
    va.send_depth = 16;
    va.recv_depth = DEPTH;
    va.enable_rdma_write = true;
    va.enable_rdma_read = true;
    assert_int_equal(VIPL_SUCCESS, vipl_create_vi(s->nic, &va, NULL, s->cq, &s->vi));
    s->buf = vipl_mem_alloc(s->nic, BUF + DEPTH * 4096);
    assert_non_null(s->buf);
    memset(s->buf, 0, BUF + DEPTH * 4096);
    ma.ptag = s->ptag;
    ma.enable_rdma_write = true;
    ma.enable_rdma_read = true;
    assert_int_equal(VIPL_SUCCESS,
                     vipl_register_mem(s->nic, s->buf, BUF + DEPTH * 4096, &ma, &s->h));
    for (int i = 0; i < DEPTH; ++i) {
        memset(&s->r[i], 0, sizeof(s->r[i]));
        s->r[i].seg_count = 1;
        s->r[i].ds[0].addr = s->buf + BUF + i * 4096;
        s->r[i].ds[0].handle = s->h;
        s->r[i].ds[0].length = 4096;
        /* posted before the connection, as the BTL does */
        assert_int_equal(VIPL_SUCCESS, vipl_post_recv(s->vi, &s->r[i]));
    }
}

static void side_close(side_t *s)
{
    (void) vipl_disconnect(s->vi);
    vipl_destroy_vi(s->vi);
    assert_int_equal(VIPL_SUCCESS, vipl_deregister_mem(s->nic, s->buf, s->h));
    vipl_mem_free(s->nic, s->buf);
    vipl_destroy_cq(s->cq);
    vipl_destroy_ptag(s->ptag);
    vipl_close_nic(s->nic);
}

/* the next receive completion of s, through the CQ as the BTL takes it */
static vipl_desc_t *next_recv(side_t *s, side_t *other)
{
    vipl_vi_t *vi;
    vipl_desc_t *d;
    bool is_recv;

    for (;;) {
        if (VIPL_SUCCESS == vipl_cq_done(s->cq, &vi, &is_recv)) {
            assert_ptr_equal(vi, s->vi);
            assert_true(is_recv);
            assert_int_equal(VIPL_SUCCESS, vipl_recv_done(vi, &d));
            return d;
        }
        /* the other side's CQ moves its data (tcp progresses on reads) */
        (void) vipl_cq_done(other->cq, &vi, &is_recv);
    }
}

static void wait_send(side_t *s, side_t *other, vipl_desc_t *want)
{
    vipl_desc_t *d;
    vipl_vi_t *vi;
    bool is_recv;

    while (VIPL_SUCCESS != vipl_send_done(s->vi, &d)) {
        (void) vipl_cq_done(other->cq, &vi, &is_recv);
    }
    assert_ptr_equal(want, d);
}

static int setup(void **state)
{
    vipl_vi_address_t aa, ba;
    vipl_return_t ra = VIPL_NOT_DONE, rb = VIPL_NOT_DONE;

    (void) state;
    side_open(&A);
    side_open(&B);
    vipl_vi_address(A.vi, &aa);
    vipl_vi_address(B.vi, &ba);
    assert_int_equal(VIPL_SUCCESS, vipl_connect_peer_request(A.vi, &ba));
    /* B asks later: a request that came first waits for it */
    for (int i = 0; i < 100; ++i) {
        assert_int_equal(VIPL_INVALID_STATE, vipl_connect_peer_done(B.vi));
        (void) vipl_connect_peer_done(A.vi);
    }
    assert_int_equal(VIPL_SUCCESS, vipl_connect_peer_request(B.vi, &aa));
    while (VIPL_NOT_DONE == ra || VIPL_NOT_DONE == rb) {
        ra = vipl_connect_peer_done(A.vi);
        rb = vipl_connect_peer_done(B.vi);
    }
    assert_int_equal(VIPL_SUCCESS, ra);
    assert_int_equal(VIPL_SUCCESS, rb);
    return 0;
}

static int teardown(void **state)
{
    (void) state;
    side_close(&A);
    side_close(&B);
    return 0;
}

static void send_imm(side_t *from, side_t *to, const char *text, uint32_t imm, bool inl)
{
    vipl_desc_t s;

    memset(&s, 0, sizeof(s));
    strcpy(from->buf, text);
    s.control = VIPL_CONTROL_OP_SEND | VIPL_CONTROL_IMMEDIATE | (inl ? VIPL_CONTROL_INLINE : 0);
    s.imm_data = imm;
    s.seg_count = 1;
    s.ds[0].addr = from->buf;
    s.ds[0].handle = from->h;
    s.ds[0].length = (uint32_t) strlen(text) + 1;
    assert_int_equal(VIPL_SUCCESS, vipl_post_send(from->vi, &s));
    wait_send(from, to, &s);
    assert_int_equal(VIPL_STATUS_DONE, s.status);
}

static void test_send(void **state)
{
    vipl_desc_t *d;

    (void) state;
    assert_string_equal("ofi", vipl_query_nic(A.nic)->provider);
    assert_false(vipl_query_nic(A.nic)->local_only);
    for (uint32_t i = 0; i < 3 * DEPTH; ++i) {
        char text[32];

        snprintf(text, sizeof(text), "message %u", i);
        send_imm(&A, &B, text, 1000 + i, 1 == i % 2);
        d = next_recv(&B, &A);
        assert_int_equal(VIPL_STATUS_DONE | VIPL_STATUS_IMMEDIATE, d->status);
        assert_int_equal(1000 + i, d->imm_data);
        assert_int_equal(strlen(text) + 1, d->length);
        assert_string_equal(text, (char *) d->ds[0].addr);
        assert_int_equal(VIPL_SUCCESS, vipl_post_recv(B.vi, d));
    }
    /* a zero-byte send with immediate data (a credit-only message) */
    send_imm(&B, &A, "", 7, false);
    d = next_recv(&A, &B);
    assert_int_equal(7, d->imm_data);
    assert_int_equal(VIPL_SUCCESS, vipl_post_recv(A.vi, d));
}

/* inline sends complete at post (FI_INJECT, no CQ entry) only while no
 * earlier send is pending: completions stay in posting order, and none
 * comes twice */
static void test_inject_order(void **state)
{
    vipl_desc_t s[DEPTH], *d;
    vipl_vi_t *vi;
    bool is_recv;

    (void) state;
    assert_true(vipl_query_nic(A.nic)->max_inline >= 8);
    for (int round = 0; round < 2; ++round) {
        for (uint32_t i = 0; i < DEPTH; ++i) {
            /* round 0: a 3000-byte send first, inline ones behind it;
             * round 1: inline only */
            bool inl = round > 0 || i > 0;

            memset(&s[i], 0, sizeof(s[i]));
            memset(A.buf + i * 4096, 'a' + (int) i, 4096);
            s[i].control =
                VIPL_CONTROL_OP_SEND | VIPL_CONTROL_IMMEDIATE | (inl ? VIPL_CONTROL_INLINE : 0);
            s[i].imm_data = 100 * (uint32_t) round + i;
            s[i].seg_count = 1;
            s[i].ds[0].addr = A.buf + i * 4096;
            s[i].ds[0].handle = A.h;
            s[i].ds[0].length = inl ? 8 : 3000;
            assert_int_equal(VIPL_SUCCESS, vipl_post_send(A.vi, &s[i]));
        }
        for (uint32_t i = 0; i < DEPTH; ++i) {
            wait_send(&A, &B, &s[i]);
            assert_int_equal(VIPL_STATUS_DONE, s[i].status);
        }
        for (uint32_t i = 0; i < DEPTH; ++i) {
            d = next_recv(&B, &A);
            assert_int_equal(100 * (uint32_t) round + i, d->imm_data);
            assert_int_equal(round > 0 || i > 0 ? 8 : 3000, d->length);
            assert_int_equal('a' + (int) i, ((char *) d->ds[0].addr)[d->length - 1]);
            assert_int_equal(VIPL_SUCCESS, vipl_post_recv(B.vi, d));
        }
    }
    /* no completion left over: an injected send made no CQ entry */
    for (int i = 0; i < 100; ++i) {
        (void) vipl_cq_done(A.cq, &vi, &is_recv);
        (void) vipl_cq_done(B.cq, &vi, &is_recv);
    }
    assert_int_equal(VIPL_NOT_DONE, vipl_send_done(A.vi, &d));
}

/* vipl_post_inline (fi_injectdata): in order with descriptor sends
 * around it, no completion ever, and refused above max_inline */
static void test_post_inline(void **state)
{
    const uint32_t max = vipl_query_nic(A.nic)->max_inline;
    vipl_desc_t s, *d;
    char msg[256];

    (void) state;
    assert_true(max >= 8 && max <= sizeof(msg));
    memset(msg, 'q', sizeof(msg));
    assert_int_equal(VIPL_INVALID_PARAMETER, vipl_post_inline(A.vi, msg, max + 1, 1));
    memset(&s, 0, sizeof(s));
    memset(A.buf, 'd', 3000);
    s.control = VIPL_CONTROL_OP_SEND | VIPL_CONTROL_IMMEDIATE;
    s.imm_data = 500;
    s.seg_count = 1;
    s.ds[0].addr = A.buf;
    s.ds[0].handle = A.h;
    s.ds[0].length = 3000;
    assert_int_equal(VIPL_SUCCESS, vipl_post_send(A.vi, &s));
    for (uint32_t i = 1; i < DEPTH; ++i) {
        msg[0] = (char) ('a' + i);
        assert_int_equal(VIPL_SUCCESS, vipl_post_inline(A.vi, msg, i % 2 ? max : 0, 500 + i));
        memset(msg, 0, sizeof(msg)); /* the bytes were taken at the call */
        memset(msg, 'q', sizeof(msg));
    }
    wait_send(&A, &B, &s);
    for (uint32_t i = 0; i < DEPTH; ++i) {
        d = next_recv(&B, &A);
        assert_int_equal(VIPL_STATUS_DONE | VIPL_STATUS_IMMEDIATE, d->status);
        assert_int_equal(500 + i, d->imm_data);
        assert_int_equal(0 == i ? 3000 : (i % 2 ? max : 0), d->length);
        if (i % 2) {
            assert_int_equal('a' + (int) i, ((char *) d->ds[0].addr)[0]);
            assert_int_equal('q', ((char *) d->ds[0].addr)[max - 1]);
        }
        assert_int_equal(VIPL_SUCCESS, vipl_post_recv(B.vi, d));
    }
    assert_int_equal(VIPL_NOT_DONE, vipl_send_done(A.vi, &d));
}

static void test_rdma(void **state)
{
    vipl_desc_t w, rd, *d;
    uint32_t *src = (uint32_t *) A.buf, *dst = (uint32_t *) B.buf;

    (void) state;
    for (uint32_t i = 0; i < BUF / 4; ++i) {
        src[i] = i * 2654435761u;
        dst[i] = 0;
    }
    memset(&w, 0, sizeof(w));
    w.control = VIPL_CONTROL_OP_RDMAWRITE | VIPL_CONTROL_IMMEDIATE;
    w.imm_data = 0xabc;
    w.seg_count = 1;
    w.ds[0].addr = A.buf;
    w.ds[0].handle = A.h;
    w.ds[0].length = BUF;
    w.remote_addr = (uintptr_t) B.buf;
    w.remote_handle = B.h;
    assert_int_equal(VIPL_SUCCESS, vipl_post_send(A.vi, &w));
    wait_send(&A, &B, &w);
    assert_int_equal(VIPL_STATUS_DONE, w.status);
    /* the notice completes a receive descriptor with the length libfabric
     * reports: the write's (as verbs) or 0 (the tcp provider) */
    d = next_recv(&B, &A);
    assert_int_equal(VIPL_STATUS_DONE | VIPL_STATUS_IMMEDIATE, d->status);
    assert_int_equal(0xabc, d->imm_data);
    assert_true(BUF == d->length || 0 == d->length);
    for (uint32_t i = 0; i < BUF / 4; ++i) {
        if (dst[i] != i * 2654435761u) {
            fail_msg("RDMA write: word %u is %x", i, dst[i]);
        }
    }
    /* a message while the descriptor is lent: it is held back until the
     * descriptor is posted again; then it comes in order */
    for (int i = 0; i < DEPTH; ++i) {
        char text[16];
        snprintf(text, sizeof(text), "lent %d", i);
        send_imm(&A, &B, text, 50 + i, false);
    }
    assert_int_equal(VIPL_SUCCESS, vipl_post_recv(B.vi, d));
    for (int i = 0; i < DEPTH - 1; ++i) {
        char text[16];
        snprintf(text, sizeof(text), "lent %d", i);
        d = next_recv(&B, &A);
        assert_int_equal(50 + i, d->imm_data);
        assert_string_equal(text, (char *) d->ds[0].addr);
        assert_int_equal(VIPL_SUCCESS, vipl_post_recv(B.vi, d));
    }
    d = next_recv(&B, &A);
    assert_int_equal(50 + DEPTH - 1, d->imm_data);
    assert_int_equal(VIPL_SUCCESS, vipl_post_recv(B.vi, d));

    /* RDMA read back into A's second half */
    memset(&rd, 0, sizeof(rd));
    rd.control = VIPL_CONTROL_OP_RDMAREAD;
    rd.seg_count = 1;
    rd.ds[0].addr = A.buf + BUF / 2;
    rd.ds[0].handle = A.h;
    rd.ds[0].length = BUF / 2;
    rd.remote_addr = (uintptr_t) B.buf;
    rd.remote_handle = B.h;
    memset(A.buf + BUF / 2, 0, BUF / 2);
    assert_int_equal(VIPL_SUCCESS, vipl_post_send(A.vi, &rd));
    wait_send(&A, &B, &rd);
    assert_int_equal(VIPL_STATUS_DONE, rd.status);
    assert_memory_equal(A.buf + BUF / 2, B.buf, BUF / 2);
}

/* Registrations from several threads at once on B's NIC while A writes
 * into B's registered memory (its CQ read in between, so the provider
 * looks keys up), checked by pattern: the provider keeps a domain's keys
 * in a tree it does not lock (common/tc_ofi.h), which without our guard
 * hung or crashed within a few thousand registrations. alarm() makes a
 * hang a failure. */
#define CHURN_THREADS 4
#define CHURN_ROUNDS 3000

typedef struct {
    char *buf;
    int failed;
} churn_t;

static void *churn(void *arg)
{
    churn_t *c = arg;
    vipl_mem_attrs_t ma = {.ptag = B.ptag, .enable_rdma_write = true, .enable_rdma_read = true};

    for (int i = 0; i < CHURN_ROUNDS; ++i) {
        vipl_mem_handle_t h;
        char *at = c->buf + (i % 16) * 4096;

        if (VIPL_SUCCESS != vipl_register_mem(B.nic, at, 4096, &ma, &h)) {
            c->failed++;
            continue;
        }
        if (VIPL_SUCCESS != vipl_deregister_mem(B.nic, at, h)) {
            c->failed++;
        }
    }
    return NULL;
}

static void test_register_threads(void **state)
{
    pthread_t t[CHURN_THREADS];
    churn_t c[CHURN_THREADS];
    uint32_t *src = (uint32_t *) A.buf, *dst = (uint32_t *) B.buf;
    const uint32_t words = (1u << 16) / 4;

    (void) state;
    alarm(300);
    for (int i = 0; i < CHURN_THREADS; ++i) {
        c[i].buf = malloc(17 * 4096);
        c[i].failed = 0;
        assert_non_null(c[i].buf);
        assert_int_equal(0, pthread_create(&t[i], NULL, churn, &c[i]));
    }
    for (uint32_t round = 0; round < 50; ++round) {
        vipl_desc_t w;

        for (uint32_t i = 0; i < words; ++i) {
            src[i] = i * 2654435761u + round;
        }
        memset(&w, 0, sizeof(w));
        w.control = VIPL_CONTROL_OP_RDMAWRITE;
        w.seg_count = 1;
        w.ds[0].addr = A.buf;
        w.ds[0].handle = A.h;
        w.ds[0].length = words * 4;
        w.remote_addr = (uintptr_t) B.buf;
        w.remote_handle = B.h;
        assert_int_equal(VIPL_SUCCESS, vipl_post_send(A.vi, &w));
        wait_send(&A, &B, &w);
        assert_int_equal(VIPL_STATUS_DONE, w.status);
        for (uint32_t i = 0; i < words; ++i) {
            if (dst[i] != i * 2654435761u + round) {
                fail_msg("round %u: word %u is %x", round, i, dst[i]);
            }
        }
    }
    for (int i = 0; i < CHURN_THREADS; ++i) {
        assert_int_equal(0, pthread_join(t[i], NULL));
        assert_int_equal(0, c[i].failed);
        free(c[i].buf);
    }
    alarm(0);
}

static void test_bad_local(void **state)
{
    vipl_desc_t s, *d;

    (void) state;
    memset(&s, 0, sizeof(s));
    s.control = VIPL_CONTROL_OP_SEND;
    s.seg_count = 1;
    s.ds[0].addr = A.buf;
    s.ds[0].handle = A.h + 5; /* no such registration */
    s.ds[0].length = 64;
    assert_int_equal(VIPL_SUCCESS, vipl_post_send(A.vi, &s));
    assert_int_equal(VIPL_SUCCESS, vipl_send_done(A.vi, &d));
    assert_ptr_equal(&s, d);
    assert_true(s.status & VIPL_STATUS_PROTECTION_ERROR);
    /* inline too large, RDMA read with immediate: refused at post */
    s.ds[0].handle = A.h;
    s.ds[0].length = vipl_query_nic(A.nic)->max_inline + 1;
    s.control = VIPL_CONTROL_OP_SEND | VIPL_CONTROL_INLINE;
    assert_int_equal(VIPL_INVALID_PARAMETER, vipl_post_send(A.vi, &s));
    s.control = VIPL_CONTROL_OP_RDMAREAD | VIPL_CONTROL_IMMEDIATE;
    assert_int_equal(VIPL_INVALID_PARAMETER, vipl_post_send(A.vi, &s));
}

/* ---- VIs made on first use: a peer's request reaches a NIC without the VI */

typedef struct lazy_side {
    vipl_nic_t *nic;
    vipl_ptag_t *ptag;
    vipl_cq_t *cq;
    vipl_vi_t *vi;
    char *buf;
    vipl_mem_handle_t h;
    vipl_desc_t r[DEPTH];
    uint32_t id; /* the "vpid": the discriminator of the peer's VI for us */
} lazy_side_t;

static void lazy_open(lazy_side_t *s, uint32_t id)
{
    vipl_open_params_t p = {0};
    vipl_mem_attrs_t ma = {0};

    memset(s, 0, sizeof(*s));
    s->id = id;
    p.max_regs = 16;
    assert_int_equal(VIPL_SUCCESS, vipl_open_nic(ops, &p, &s->nic));
    assert_true(vipl_query_nic(s->nic)->connect_wait);
    assert_int_equal(VIPL_SUCCESS, vipl_create_ptag(s->nic, &s->ptag));
    assert_int_equal(VIPL_SUCCESS, vipl_create_cq(s->nic, 16, &s->cq));
    s->buf = vipl_mem_alloc(s->nic, DEPTH * 4096);
    assert_non_null(s->buf);
    memset(s->buf, 0, DEPTH * 4096);
    ma.ptag = s->ptag;
    assert_int_equal(VIPL_SUCCESS, vipl_register_mem(s->nic, s->buf, DEPTH * 4096, &ma, &s->h));
}

/* the VI for peer `peer`, receives posted, connection requested */
static void lazy_vi(lazy_side_t *s, const lazy_side_t *peer)
{
    vipl_vi_attrs_t va = {0};
    vipl_vi_address_t to;

    va.reliability = VIPL_RELIABLE_DELIVERY;
    va.ptag = s->ptag;
    va.send_depth = 16;
    va.recv_depth = DEPTH;
    va.has_discriminator = true;
    va.discriminator = peer->id;
    assert_int_equal(VIPL_SUCCESS, vipl_create_vi(s->nic, &va, NULL, s->cq, &s->vi));
    /* a second VI of the same name is refused */
    {
        vipl_vi_t *dup = NULL;

        assert_int_not_equal(VIPL_SUCCESS, vipl_create_vi(s->nic, &va, NULL, s->cq, &dup));
    }
    for (int i = 0; i < DEPTH; ++i) {
        memset(&s->r[i], 0, sizeof(s->r[i]));
        s->r[i].seg_count = 1;
        s->r[i].ds[0].addr = s->buf + i * 4096;
        s->r[i].ds[0].handle = s->h;
        s->r[i].ds[0].length = 4096;
        assert_int_equal(VIPL_SUCCESS, vipl_post_recv(s->vi, &s->r[i]));
    }
    vipl_nic_vi_address(peer->nic, s->id, &to);
    assert_int_equal(VIPL_SUCCESS, vipl_connect_peer_request(s->vi, &to));
}

static void lazy_close(lazy_side_t *s)
{
    if (NULL != s->vi) {
        (void) vipl_disconnect(s->vi);
        vipl_destroy_vi(s->vi);
    }
    assert_int_equal(VIPL_SUCCESS, vipl_deregister_mem(s->nic, s->buf, s->h));
    vipl_mem_free(s->nic, s->buf);
    vipl_destroy_cq(s->cq);
    vipl_destroy_ptag(s->ptag);
    vipl_close_nic(s->nic);
}

/* one message from a to b, through b's CQ */
static void lazy_send(lazy_side_t *a, lazy_side_t *b, uint32_t imm)
{
    vipl_desc_t sd, *d;
    vipl_vi_t *vi;
    bool is_recv;

    memset(&sd, 0, sizeof(sd));
    snprintf(a->buf, 64, "lazy %u", imm);
    sd.control = VIPL_CONTROL_OP_SEND | VIPL_CONTROL_IMMEDIATE;
    sd.imm_data = imm;
    sd.seg_count = 1;
    sd.ds[0].addr = a->buf;
    sd.ds[0].handle = a->h;
    sd.ds[0].length = 64;
    assert_int_equal(VIPL_SUCCESS, vipl_post_send(a->vi, &sd));
    for (;;) {
        if (VIPL_SUCCESS == vipl_cq_done(b->cq, &vi, &is_recv)) {
            assert_ptr_equal(vi, b->vi);
            assert_int_equal(VIPL_SUCCESS, vipl_recv_done(vi, &d));
            break;
        }
        (void) vipl_cq_done(a->cq, &vi, &is_recv);
    }
    assert_int_equal(VIPL_STATUS_DONE | VIPL_STATUS_IMMEDIATE, d->status);
    assert_int_equal(imm, d->imm_data);
    assert_memory_equal(a->buf, d->ds[0].addr, 64);
    while (VIPL_SUCCESS != vipl_send_done(a->vi, &d)) {
        (void) vipl_cq_done(b->cq, &vi, &is_recv);
    }
    assert_int_equal(VIPL_STATUS_DONE, d->status);
}

/* the initiator's request reaches a NIC that has no VI for it: its
 * connect_wait names the VI to make, and the pair connects; run with
 * each NIC as the initiator, so that both the connector's request and the
 * other side's doorbell are the first contact */
static void lazy_pair(bool first_is_initiator)
{
    lazy_side_t x, y, *ini, *pas;
    uint32_t disc = 0;
    vipl_return_t ri = VIPL_NOT_DONE, rp = VIPL_NOT_DONE;
    vipl_vi_t *vi;
    bool is_recv;

    lazy_open(&x, 0);
    lazy_open(&y, 1);
    ini = first_is_initiator ? &x : &y;
    pas = first_is_initiator ? &y : &x;
    assert_int_equal(VIPL_NOT_DONE, vipl_connect_wait(pas->nic, &disc));
    lazy_vi(ini, pas);
    while (VIPL_SUCCESS != vipl_connect_wait(pas->nic, &disc)) {
        assert_int_equal(VIPL_NOT_DONE, vipl_connect_peer_done(ini->vi));
        (void) vipl_cq_done(ini->cq, &vi, &is_recv);
    }
    assert_int_equal(ini->id, disc);
    /* reported once */
    assert_int_equal(VIPL_NOT_DONE, vipl_connect_wait(pas->nic, &disc));
    lazy_vi(pas, ini);
    while (VIPL_NOT_DONE == ri || VIPL_NOT_DONE == rp) {
        ri = vipl_connect_peer_done(ini->vi);
        rp = vipl_connect_peer_done(pas->vi);
    }
    assert_int_equal(VIPL_SUCCESS, ri);
    assert_int_equal(VIPL_SUCCESS, rp);
    lazy_send(ini, pas, 11);
    lazy_send(pas, ini, 22);
    lazy_close(&x);
    lazy_close(&y);
}

static void test_lazy_connect(void **state)
{
    (void) state;
    lazy_pair(true);
    lazy_pair(false);
}

/* both sides make their VI and ask at once: one connection results */
static void test_lazy_both(void **state)
{
    lazy_side_t x, y;
    vipl_return_t rx = VIPL_NOT_DONE, ry = VIPL_NOT_DONE;
    uint32_t disc;

    (void) state;
    lazy_open(&x, 0);
    lazy_open(&y, 1);
    lazy_vi(&x, &y);
    lazy_vi(&y, &x);
    while (VIPL_NOT_DONE == rx || VIPL_NOT_DONE == ry) {
        rx = vipl_connect_peer_done(x.vi);
        ry = vipl_connect_peer_done(y.vi);
        /* nothing is reported: both VIs exist */
        assert_int_equal(VIPL_NOT_DONE, vipl_connect_wait(x.nic, &disc));
        assert_int_equal(VIPL_NOT_DONE, vipl_connect_wait(y.nic, &disc));
    }
    assert_int_equal(VIPL_SUCCESS, rx);
    assert_int_equal(VIPL_SUCCESS, ry);
    lazy_send(&x, &y, 33);
    lazy_send(&y, &x, 44);
    lazy_close(&x);
    lazy_close(&y);
}

/* both VIs made and connected at once (test_lazy_both's setup) */
static void lazy_connect_both(lazy_side_t *x, lazy_side_t *y)
{
    vipl_return_t rx = VIPL_NOT_DONE, ry = VIPL_NOT_DONE;

    lazy_open(x, 0);
    lazy_open(y, 1);
    lazy_vi(x, y);
    lazy_vi(y, x);
    while (VIPL_NOT_DONE == rx || VIPL_NOT_DONE == ry) {
        rx = vipl_connect_peer_done(x->vi);
        ry = vipl_connect_peer_done(y->vi);
    }
    assert_int_equal(VIPL_SUCCESS, rx);
    assert_int_equal(VIPL_SUCCESS, ry);
}

/* polls a VI until it breaks (a thread: the peer waits for our progress
 * to note its goodbye) */
static void *watch_vi(void *arg)
{
    lazy_side_t *s = arg;
    vipl_vi_state_t st = VIPL_STATE_CONNECTED;

    while (VIPL_STATE_ERROR != st) {
        vipl_vi_t *vi;
        bool is_recv;

        (void) vipl_cq_done(s->cq, &vi, &is_recv);
        (void) vipl_query_vi(s->vi, &st, NULL);
    }
    return NULL;
}

/* an orderly disconnect is reported as DISCONNECTED at the peer, a peer
 * whose endpoint just goes (as a killed process's socket does) as
 * PEER_GONE */
static void test_bye_or_gone(void **state)
{
    lazy_side_t x, y;
    vipl_vi_error_t why = VIPL_VIERR_NONE;
    pthread_t th;

    (void) state;
    lazy_connect_both(&x, &y);
    lazy_send(&x, &y, 55);
    assert_int_equal(0, pthread_create(&th, NULL, watch_vi, &y));
    assert_int_equal(VIPL_SUCCESS, vipl_disconnect(x.vi));
    assert_int_equal(0, pthread_join(th, NULL));
    assert_int_equal(VIPL_SUCCESS, vipl_query_vi(y.vi, NULL, &why));
    assert_int_equal(VIPL_VIERR_DISCONNECTED, why);
    lazy_close(&x);
    lazy_close(&y);

    lazy_connect_both(&x, &y);
    lazy_send(&y, &x, 66);
    /* no goodbye: the endpoint closes */
    vipl_destroy_vi(x.vi);
    x.vi = NULL;
    watch_vi(&y);
    assert_int_equal(VIPL_SUCCESS, vipl_query_vi(y.vi, NULL, &why));
    assert_int_equal(VIPL_VIERR_PEER_GONE, why);
    lazy_close(&x);
    lazy_close(&y);
}

/* a goodbye the peer does not answer in time (it makes no progress call
 * while we disconnect: we shut down after VIPL_OFI_BYE_WAIT_US): the end
 * of the connection is still orderly at the peer, from the first answer
 * vipl_query_vi gives once the VI is in error (the one the BTL acts on) */
static void test_bye_unanswered(void **state)
{
    lazy_side_t x, y;
    vipl_vi_error_t why = VIPL_VIERR_NONE;
    vipl_vi_state_t st = VIPL_STATE_CONNECTED;

    (void) state;
    lazy_connect_both(&x, &y);
    lazy_send(&x, &y, 77);
    assert_int_equal(VIPL_SUCCESS, vipl_disconnect(x.vi));
    while (VIPL_STATE_ERROR != st) {
        vipl_vi_t *vi;
        bool is_recv;

        (void) vipl_cq_done(y.cq, &vi, &is_recv);
        assert_int_equal(VIPL_SUCCESS, vipl_query_vi(y.vi, &st, &why));
    }
    assert_int_equal(VIPL_VIERR_DISCONNECTED, why);
    lazy_close(&x);
    lazy_close(&y);
}

/* ---- processes of other jobs: VIs named by the resolver ---------------- */

/* a NIC's resolver: the name of the one peer it knows -> the index it
 * gives that peer; anything else refused */
typedef struct other_names {
    uint64_t peer;
    uint32_t disc;
    int calls;
} other_names_t;

static int other_resolve(void *ctx, uint64_t name, uint32_t *disc)
{
    other_names_t *n = ctx;

    ++n->calls;
    if (name != n->peer) {
        return -1;
    }
    *disc = n->disc;
    return 0;
}

/* s's VI of discriminator disc for peer, whose VI for s is not known:
 * the peer NIC's address with VIPL_DISC_ANY */
static void other_vi(lazy_side_t *s, const lazy_side_t *peer, uint32_t disc)
{
    vipl_vi_attrs_t va = {0};
    vipl_vi_address_t nic, to;

    va.reliability = VIPL_RELIABLE_DELIVERY;
    va.ptag = s->ptag;
    va.send_depth = 16;
    va.recv_depth = DEPTH;
    va.has_discriminator = true;
    va.discriminator = disc;
    assert_int_equal(VIPL_SUCCESS, vipl_create_vi(s->nic, &va, NULL, s->cq, &s->vi));
    for (int i = 0; i < DEPTH; ++i) {
        memset(&s->r[i], 0, sizeof(s->r[i]));
        s->r[i].seg_count = 1;
        s->r[i].ds[0].addr = s->buf + i * 4096;
        s->r[i].ds[0].handle = s->h;
        s->r[i].ds[0].length = 4096;
        assert_int_equal(VIPL_SUCCESS, vipl_post_recv(s->vi, &s->r[i]));
    }
    vipl_nic_vi_address(peer->nic, 0, &nic);
    assert_true(ops->any_vi_address(&nic, &to));
    assert_int_equal(VIPL_SUCCESS, vipl_connect_peer_request(s->vi, &to));
}

/* x (job 1, vpid 0) and y (job 2, vpid 0): x knows y as index 5, y knows
 * x as 9; the initiator makes its VI, the other NIC's resolver names the
 * VI to make from the full name in the request (or doorbell), the pair
 * connects, messages cross, and the goodbye is orderly at the peer */
static void other_pair(bool x_initiates)
{
    lazy_side_t x, y, *ini, *pas;
    other_names_t xn = {.peer = (2ull << 32) | 0, .disc = 5},
                  yn = {.peer = (1ull << 32) | 0, .disc = 9};
    uint32_t disc = 0, want;
    vipl_return_t ri = VIPL_NOT_DONE, rp = VIPL_NOT_DONE;
    vipl_vi_error_t why = VIPL_VIERR_NONE;
    vipl_vi_t *vi;
    bool is_recv;

    lazy_open(&x, 0);
    lazy_open(&y, 0);
    ops->set_names(x.nic, yn.peer, other_resolve, &xn);
    ops->set_names(y.nic, xn.peer, other_resolve, &yn);
    ini = x_initiates ? &x : &y;
    pas = x_initiates ? &y : &x;
    want = x_initiates ? yn.disc : xn.disc;
    other_vi(ini, pas, x_initiates ? xn.disc : yn.disc);
    while (VIPL_SUCCESS != vipl_connect_wait(pas->nic, &disc)) {
        assert_int_equal(VIPL_NOT_DONE, vipl_connect_peer_done(ini->vi));
        (void) vipl_cq_done(ini->cq, &vi, &is_recv);
    }
    assert_int_equal(want, disc);
    assert_true((x_initiates ? yn.calls : xn.calls) > 0);
    other_vi(pas, ini, disc);
    while (VIPL_NOT_DONE == ri || VIPL_NOT_DONE == rp) {
        ri = vipl_connect_peer_done(ini->vi);
        rp = vipl_connect_peer_done(pas->vi);
    }
    assert_int_equal(VIPL_SUCCESS, ri);
    assert_int_equal(VIPL_SUCCESS, rp);
    lazy_send(ini, pas, 12);
    lazy_send(pas, ini, 34);
    /* both goodbyes name the VI right, learned or resolved */
    {
        pthread_t th;

        assert_int_equal(0, pthread_create(&th, NULL, watch_vi, pas));
        assert_int_equal(VIPL_SUCCESS, vipl_disconnect(ini->vi));
        assert_int_equal(0, pthread_join(th, NULL));
        assert_int_equal(VIPL_SUCCESS, vipl_query_vi(pas->vi, NULL, &why));
        assert_int_equal(VIPL_VIERR_DISCONNECTED, why);
    }
    lazy_close(&x);
    lazy_close(&y);
}

static void test_other_job(void **state)
{
    (void) state;
    other_pair(true);
    other_pair(false);
}

/* a request (or doorbell) whose name the resolver refuses makes no VI:
 * once the resolver was asked, connect_wait reports nothing */
static void test_other_job_refused(void **state)
{
    lazy_side_t x, y;
    other_names_t xn = {.peer = (2ull << 32) | 0, .disc = 5}, yn = {.peer = 77, .disc = 3};
    uint32_t disc;
    vipl_vi_t *vi;
    bool is_recv;

    (void) state;
    lazy_open(&x, 0);
    lazy_open(&y, 0);
    ops->set_names(x.nic, (1ull << 32) | 0, other_resolve, &xn);
    ops->set_names(y.nic, (2ull << 32) | 0, other_resolve, &yn);
    other_vi(&x, &y, 5);
    while (0 == yn.calls) {
        assert_int_equal(VIPL_NOT_DONE, vipl_connect_wait(y.nic, &disc));
        (void) vipl_cq_done(x.cq, &vi, &is_recv);
        (void) vipl_connect_peer_done(x.vi);
    }
    for (int i = 0; i < 1024; ++i) {
        assert_int_equal(VIPL_NOT_DONE, vipl_connect_wait(y.nic, &disc));
    }
    lazy_close(&x);
    lazy_close(&y);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_send),
        cmocka_unit_test(test_inject_order),
        cmocka_unit_test(test_post_inline),
        cmocka_unit_test(test_rdma),
        cmocka_unit_test(test_register_threads),
        cmocka_unit_test(test_bad_local),
        cmocka_unit_test(test_lazy_connect),
        cmocka_unit_test(test_lazy_both),
        cmocka_unit_test(test_bye_or_gone),
        cmocka_unit_test(test_bye_unanswered),
        cmocka_unit_test(test_other_job),
        cmocka_unit_test(test_other_job_refused),
    };
    vipl_open_params_t p = {0};
    vipl_nic_t *probe = NULL;

    ops = vipl_provider("ofi");
    if (NULL == ops) {
        printf("SKIP: test_via_ofi: the ofi provider was not built (no libfabric)\n");
        return 77;
    }
    if (VIPL_SUCCESS != vipl_open_nic(ops, &p, &probe)) {
        printf("SKIP: test_via_ofi: libfabric has no usable tcp provider here\n");
        return 77;
    }
    vipl_close_nic(probe);
    return cmocka_run_group_tests(tests, setup, teardown);
}
