/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_via_emu.c: unit tests of btl_via's device layer (vipl.h) over the
 * emu provider, without MPI: NIC segments (mode 0600, names gone once
 * every peer attached), descriptor life cycle, completion order per work
 * queue and through a CQ, every protection refusal of an RDMA write or
 * read (each leaves the target memory unchanged), RDMA write with
 * immediate data, a send without a posted receive, and a peer that dies
 * (its VI goes to error, every outstanding descriptor completes, nothing
 * hangs).  Two NICs in one process stand for two hosts; the peer-death
 * test forks a real second process.
 */

#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vipl.h"

#define BUF 4096

typedef struct side {
    vipl_nic_t *nic;
    vipl_ptag_t *ptag;
    vipl_cq_t *rcq;
    vipl_vi_t *vi;
    char *rbuf; /* NIC memory: receive buffers */
    vipl_mem_handle_t rh;
    char *sbuf; /* ordinary memory: send buffers */
    vipl_mem_handle_t sh;
} side_t;

typedef struct fixture {
    char dir[64];
    side_t s[2];
} fixture_t;

static const vipl_ops_t *ops;
static bool strict_mode; /* open the NICs strict (vipl_open_params_t) */

static int count_files(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;

    if (NULL == d) {
        return -1;
    }
    while (NULL != (e = readdir(d))) {
        if ('.' != e->d_name[0]) {
            ++n;
        }
    }
    closedir(d);
    return n;
}

static void fill(void *p, size_t n, unsigned seed)
{
    unsigned char *c = p;
    for (size_t i = 0; i < n; ++i) {
        c[i] = (unsigned char) ((i * 31u + seed * 7u + (i >> 8)) & 0xff);
    }
}

static int check(const void *p, size_t n, unsigned seed)
{
    const unsigned char *c = p;
    for (size_t i = 0; i < n; ++i) {
        if (c[i] != (unsigned char) ((i * 31u + seed * 7u + (i >> 8)) & 0xff)) {
            return 0;
        }
    }
    return 1;
}

static void open_side(fixture_t *f, side_t *s, uint32_t id, uint32_t expected)
{
    vipl_open_params_t p = {0};
    vipl_mem_attrs_t ma = {0};
    vipl_vi_attrs_t va = {0};

    p.segment_dir = f->dir;
    p.job_key = "t";
    p.nic_id = id;
    p.max_vis = 4;
    p.max_recv_depth = 16;
    p.max_regs = 64;
    p.nic_memory = 64 * BUF;
    p.expected_peers = expected;
    p.strict = strict_mode;
    assert_int_equal(VIPL_SUCCESS, vipl_open_nic(ops, &p, &s->nic));
    assert_string_equal("emu", vipl_query_nic(s->nic)->provider);
    assert_int_equal(VIPL_SUCCESS, vipl_create_ptag(s->nic, &s->ptag));
    assert_int_equal(VIPL_SUCCESS, vipl_create_cq(s->nic, 8, &s->rcq));
    va.reliability = VIPL_RELIABLE_DELIVERY;
    va.ptag = s->ptag;
    va.send_depth = 16;
    va.recv_depth = 16;
    va.enable_rdma_write = true;
    va.enable_rdma_read = true;
    assert_int_equal(VIPL_SUCCESS, vipl_create_vi(s->nic, &va, NULL, s->rcq, &s->vi));
    s->rbuf = vipl_mem_alloc(s->nic, 16 * BUF);
    assert_non_null(s->rbuf);
    ma.ptag = s->ptag;
    assert_int_equal(VIPL_SUCCESS, vipl_register_mem(s->nic, s->rbuf, 16 * BUF, &ma, &s->rh));
    s->sbuf = malloc(16 * BUF);
    assert_non_null(s->sbuf);
    assert_int_equal(VIPL_SUCCESS, vipl_register_mem(s->nic, s->sbuf, 16 * BUF, &ma, &s->sh));
}

static void close_side(side_t *s)
{
    if (NULL == s->nic) {
        return;
    }
    (void) vipl_deregister_mem(s->nic, s->sbuf, s->sh);
    (void) vipl_deregister_mem(s->nic, s->rbuf, s->rh);
    vipl_mem_free(s->nic, s->rbuf);
    free(s->sbuf);
    vipl_destroy_vi(s->vi);
    vipl_destroy_cq(s->rcq);
    vipl_destroy_ptag(s->ptag);
    vipl_close_nic(s->nic);
    memset(s, 0, sizeof(*s));
}

static void connect_pair(fixture_t *f)
{
    vipl_vi_address_t a0, a1;
    vipl_return_t r0 = VIPL_NOT_DONE, r1 = VIPL_NOT_DONE;

    vipl_vi_address(f->s[0].vi, &a0);
    vipl_vi_address(f->s[1].vi, &a1);
    assert_int_equal(VIPL_SUCCESS, vipl_connect_peer_request(f->s[0].vi, &a1));
    assert_int_equal(VIPL_SUCCESS, vipl_connect_peer_request(f->s[1].vi, &a0));
    for (int i = 0; i < 10 && (VIPL_SUCCESS != r0 || VIPL_SUCCESS != r1); ++i) {
        r0 = vipl_connect_peer_done(f->s[0].vi);
        r1 = vipl_connect_peer_done(f->s[1].vi);
    }
    assert_int_equal(VIPL_SUCCESS, r0);
    assert_int_equal(VIPL_SUCCESS, r1);
}

static int setup(void **state)
{
    fixture_t *f = calloc(1, sizeof(*f));

    assert_non_null(f);
    strcpy(f->dir, "/tmp/test_via_emu.XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    open_side(f, &f->s[0], 0, 1);
    open_side(f, &f->s[1], 1, 1);
    *state = f;
    return 0;
}

static int setup_strict(void **state)
{
    strict_mode = true;
    return setup(state);
}

static int teardown(void **state)
{
    strict_mode = false;
    fixture_t *f = *state;

    close_side(&f->s[0]);
    close_side(&f->s[1]);
    assert_int_equal(0, count_files(f->dir));
    rmdir(f->dir);
    free(f);
    return 0;
}

static void post_recv(side_t *s, vipl_desc_t *d, int slot)
{
    memset(d, 0, sizeof(*d));
    d->control = VIPL_CONTROL_OP_SEND;
    d->seg_count = 1;
    d->ds[0].addr = s->rbuf + (size_t) slot * BUF;
    d->ds[0].handle = s->rh;
    d->ds[0].length = BUF;
    memset(d->ds[0].addr, 0xee, BUF);
    assert_int_equal(VIPL_SUCCESS, vipl_post_recv(s->vi, d));
}

static void make_send(side_t *s, vipl_desc_t *d, int slot, uint32_t len)
{
    memset(d, 0, sizeof(*d));
    d->control = VIPL_CONTROL_OP_SEND;
    d->seg_count = 1;
    d->ds[0].addr = s->sbuf + (size_t) slot * BUF;
    d->ds[0].handle = s->sh;
    d->ds[0].length = len;
}

/* segments: 0600, and the names are gone once the peer attached */
static void test_segments(void **state)
{
    fixture_t *f = *state;
    char path[256];
    struct stat st;

    assert_int_equal(2, count_files(f->dir));
    snprintf(path, sizeof(path), "%s/via.t.0", f->dir);
    assert_int_equal(0, stat(path, &st));
    assert_int_equal(0600, st.st_mode & 0777);
    connect_pair(f);
    assert_int_equal(0, count_files(f->dir));
}

/* post, complete, reap; the descriptor carries the data and the length */
static void test_descriptor_life_cycle(void **state)
{
    fixture_t *f = *state;
    vipl_desc_t r, s, *done = NULL;
    vipl_vi_state_t vs;
    vipl_vi_error_t ve;

    /* not connected yet: no send */
    make_send(&f->s[0], &s, 0, 100);
    assert_int_equal(VIPL_INVALID_STATE, vipl_post_send(f->s[0].vi, &s));
    /* receives may be posted before the connection */
    post_recv(&f->s[1], &r, 0);
    connect_pair(f);
    assert_int_equal(VIPL_NOT_DONE, vipl_recv_done(f->s[1].vi, &done));
    assert_int_equal(VIPL_NOT_DONE, vipl_send_done(f->s[0].vi, &done));

    fill(f->s[0].sbuf, 1000, 3);
    make_send(&f->s[0], &s, 0, 1000);
    s.control |= VIPL_CONTROL_IMMEDIATE;
    s.imm_data = 0xabcd1234u;
    assert_int_equal(VIPL_SUCCESS, vipl_post_send(f->s[0].vi, &s));
    assert_int_equal(VIPL_SUCCESS, vipl_send_done(f->s[0].vi, &done));
    assert_ptr_equal(&s, done);
    assert_int_equal(VIPL_STATUS_DONE, s.status);
    assert_int_equal(1000, s.length);

    assert_int_equal(VIPL_SUCCESS, vipl_recv_done(f->s[1].vi, &done));
    assert_ptr_equal(&r, done);
    assert_true(r.status & VIPL_STATUS_DONE);
    assert_true(r.status & VIPL_STATUS_IMMEDIATE);
    assert_int_equal(0, r.status & VIPL_STATUS_ERROR_MASK);
    assert_int_equal(1000, r.length);
    assert_int_equal(0xabcd1234u, r.imm_data);
    assert_true(check(f->s[1].rbuf, 1000, 3));
    /* nothing beyond the message was written */
    assert_int_equal(0xee, (unsigned char) f->s[1].rbuf[1000]);
    assert_int_equal(VIPL_NOT_DONE, vipl_recv_done(f->s[1].vi, &done));

    /* a zero-byte send still consumes a receive */
    post_recv(&f->s[1], &r, 1);
    make_send(&f->s[0], &s, 0, 0);
    assert_int_equal(VIPL_SUCCESS, vipl_post_send(f->s[0].vi, &s));
    assert_int_equal(VIPL_SUCCESS, vipl_send_done(f->s[0].vi, &done));
    assert_int_equal(VIPL_SUCCESS, vipl_recv_done(f->s[1].vi, &done));
    assert_int_equal(0, r.length);
    assert_int_equal(0, r.status & VIPL_STATUS_IMMEDIATE);

    assert_int_equal(VIPL_SUCCESS, vipl_query_vi(f->s[0].vi, &vs, &ve));
    assert_int_equal(VIPL_STATE_CONNECTED, vs);
    assert_int_equal(VIPL_VIERR_NONE, ve);
}

/* every work queue completes in posting order; the CQ names the VI */
static void test_completion_order(void **state)
{
    fixture_t *f = *state;
    vipl_desc_t r[8], s[8], *done;
    vipl_vi_t *vi;
    bool is_recv;

    connect_pair(f);
    for (int i = 0; i < 8; ++i) {
        post_recv(&f->s[1], &r[i], i);
    }
    for (int i = 0; i < 8; ++i) {
        uint32_t len = 100u + 37u * (uint32_t) i;
        fill(f->s[0].sbuf + (size_t) i * BUF, len, (unsigned) i);
        make_send(&f->s[0], &s[i], i, len);
        assert_int_equal(VIPL_SUCCESS, vipl_post_send(f->s[0].vi, &s[i]));
    }
    for (int i = 0; i < 8; ++i) {
        assert_int_equal(VIPL_SUCCESS, vipl_send_done(f->s[0].vi, &done));
        assert_ptr_equal(&s[i], done);
    }
    for (int i = 0; i < 8; ++i) {
        assert_int_equal(VIPL_SUCCESS, vipl_cq_done(f->s[1].rcq, &vi, &is_recv));
        assert_ptr_equal(f->s[1].vi, vi);
        assert_true(is_recv);
        assert_int_equal(VIPL_SUCCESS, vipl_recv_done(vi, &done));
        assert_ptr_equal(&r[i], done);
        assert_int_equal(100u + 37u * (uint32_t) i, done->length);
        assert_true(check(done->ds[0].addr, done->length, (unsigned) i));
    }
    assert_int_equal(VIPL_NOT_DONE, vipl_cq_done(f->s[1].rcq, &vi, &is_recv));
}

/* one RDMA write descriptor; returns its completion status */
static uint32_t rdma(side_t *from, uint32_t op, void *laddr, vipl_mem_handle_t lh, uint32_t len,
                     uint64_t raddr, vipl_mem_handle_t rh)
{
    vipl_desc_t d, *done = NULL;

    memset(&d, 0, sizeof(d));
    d.control = op;
    d.seg_count = 1;
    d.ds[0].addr = laddr;
    d.ds[0].handle = lh;
    d.ds[0].length = len;
    d.remote_addr = raddr;
    d.remote_handle = rh;
    assert_int_equal(VIPL_SUCCESS, vipl_post_send(from->vi, &d));
    assert_int_equal(VIPL_SUCCESS, vipl_send_done(from->vi, &done));
    assert_ptr_equal(&d, done);
    return d.status;
}

/* every refusal: completes with an RDMA protection error, writes nothing */
static void test_rdma_protection(void **state)
{
    fixture_t *f = *state;
    side_t *a = &f->s[0], *b = &f->s[1];
    vipl_ptag_t *other;
    vipl_mem_attrs_t ma = {0};
    vipl_mem_handle_t ok, wrongtag, nowrite, gone;
    char *target = malloc(4 * BUF);
    uint64_t t = (uintptr_t) target;

    assert_non_null(target);
    connect_pair(f);
    fill(a->sbuf, BUF, 9);
    memset(target, 0x5a, 4 * BUF);

    ma.ptag = b->ptag;
    ma.enable_rdma_write = true;
    ma.enable_rdma_read = true;
    assert_int_equal(VIPL_SUCCESS, vipl_register_mem(b->nic, target, 2 * BUF, &ma, &ok));
    assert_int_equal(VIPL_SUCCESS, vipl_create_ptag(b->nic, &other));
    ma.ptag = other;
    assert_int_equal(VIPL_SUCCESS,
                     vipl_register_mem(b->nic, target + 2 * BUF, BUF, &ma, &wrongtag));
    ma.ptag = b->ptag;
    ma.enable_rdma_write = false;
    ma.enable_rdma_read = false;
    assert_int_equal(VIPL_SUCCESS, vipl_register_mem(b->nic, target + 3 * BUF, BUF, &ma, &nowrite));
    ma.enable_rdma_write = true;
    ma.enable_rdma_read = true;
    assert_int_equal(VIPL_SUCCESS, vipl_register_mem(b->nic, target, BUF, &ma, &gone));
    assert_int_equal(VIPL_SUCCESS, vipl_deregister_mem(b->nic, target, gone));
    /* a stale handle cannot be deregistered twice */
    assert_int_equal(VIPL_INVALID_PARAMETER, vipl_deregister_mem(b->nic, target, gone));

    /* wrong protection tag */
    assert_int_equal(VIPL_STATUS_DONE | VIPL_STATUS_RDMA_PROT_ERROR,
                     rdma(a, VIPL_CONTROL_OP_RDMAWRITE, a->sbuf, a->sh, 64, t + 2 * BUF, wrongtag));
    /* unknown handle: deregistered, an index beyond the table, garbage */
    assert_int_equal(VIPL_STATUS_DONE | VIPL_STATUS_RDMA_PROT_ERROR,
                     rdma(a, VIPL_CONTROL_OP_RDMAWRITE, a->sbuf, a->sh, 64, t, gone));
    assert_int_equal(
        VIPL_STATUS_DONE | VIPL_STATUS_RDMA_PROT_ERROR,
        rdma(a, VIPL_CONTROL_OP_RDMAWRITE, a->sbuf, a->sh, 64, t, ((uint64_t) 2 << 32) | 100000u));
    assert_int_equal(
        VIPL_STATUS_DONE | VIPL_STATUS_RDMA_PROT_ERROR,
        rdma(a, VIPL_CONTROL_OP_RDMAWRITE, a->sbuf, a->sh, 64, t, ok ^ ((uint64_t) 2 << 32)));
    /* outside the region: before, across the end, after */
    assert_int_equal(VIPL_STATUS_DONE | VIPL_STATUS_RDMA_PROT_ERROR,
                     rdma(a, VIPL_CONTROL_OP_RDMAWRITE, a->sbuf, a->sh, 64, t - 8, ok));
    assert_int_equal(VIPL_STATUS_DONE | VIPL_STATUS_RDMA_PROT_ERROR,
                     rdma(a, VIPL_CONTROL_OP_RDMAWRITE, a->sbuf, a->sh, 64, t + 2 * BUF - 32, ok));
    assert_int_equal(VIPL_STATUS_DONE | VIPL_STATUS_RDMA_PROT_ERROR,
                     rdma(a, VIPL_CONTROL_OP_RDMAWRITE, a->sbuf, a->sh, 64, t + 2 * BUF, ok));
    /* RDMA write not enabled on the region */
    assert_int_equal(VIPL_STATUS_DONE | VIPL_STATUS_RDMA_PROT_ERROR,
                     rdma(a, VIPL_CONTROL_OP_RDMAWRITE, a->sbuf, a->sh, 64, t + 3 * BUF, nowrite));
    /* the local side is checked too: an unregistered source */
    assert_int_equal(VIPL_STATUS_DONE | VIPL_STATUS_PROTECTION_ERROR,
                     rdma(a, VIPL_CONTROL_OP_RDMAWRITE, a->sbuf, 0, 64, t, ok));
    /* none of it reached the target */
    for (size_t i = 0; i < 4 * BUF; ++i) {
        if (0x5a != (unsigned char) target[i]) {
            fail_msg("target byte %zu changed by a refused RDMA write", i);
        }
    }
    /* and a read of a region without read enable returns nothing */
    memset(a->sbuf, 0x11, 64);
    assert_int_equal(VIPL_STATUS_DONE | VIPL_STATUS_RDMA_PROT_ERROR,
                     rdma(a, VIPL_CONTROL_OP_RDMAREAD, a->sbuf, a->sh, 64, t + 3 * BUF, nowrite));
    assert_int_equal(0x11, (unsigned char) a->sbuf[0]);

    /* the legal write and read work, exactly in range */
    fill(a->sbuf, BUF, 9);
    assert_int_equal(VIPL_STATUS_DONE,
                     rdma(a, VIPL_CONTROL_OP_RDMAWRITE, a->sbuf, a->sh, BUF, t + BUF, ok));
    assert_true(check(target + BUF, BUF, 9));
    assert_int_equal(0x5a, (unsigned char) target[BUF - 1]);
    fill(target, 512, 4);
    assert_int_equal(VIPL_STATUS_DONE,
                     rdma(a, VIPL_CONTROL_OP_RDMAREAD, a->sbuf + BUF, a->sh, 512, t, ok));
    assert_true(check(a->sbuf + BUF, 512, 4));

    vipl_deregister_mem(b->nic, target, ok);
    vipl_deregister_mem(b->nic, target + 2 * BUF, wrongtag);
    vipl_deregister_mem(b->nic, target + 3 * BUF, nowrite);
    vipl_destroy_ptag(other);
    free(target);
}

/* RDMA write with immediate: data first, then a receive completion with
 * the immediate; a large write in many descriptors, gathered */
static void test_rdma_write_immediate(void **state)
{
    fixture_t *f = *state;
    side_t *a = &f->s[0], *b = &f->s[1];
    const size_t big = 1 << 20, chunk = 65536;
    vipl_mem_attrs_t ma = {0};
    vipl_mem_handle_t lh, rh;
    vipl_desc_t r, *d = calloc(big / chunk, sizeof(*d)), *done;
    char *src = malloc(big), *dst = malloc(big);

    assert_non_null(d);
    assert_non_null(src);
    assert_non_null(dst);
    connect_pair(f);
    fill(src, big, 21);
    memset(dst, 0, big);
    ma.ptag = a->ptag;
    assert_int_equal(VIPL_SUCCESS, vipl_register_mem(a->nic, src, big, &ma, &lh));
    ma.ptag = b->ptag;
    ma.enable_rdma_write = true;
    assert_int_equal(VIPL_SUCCESS, vipl_register_mem(b->nic, dst, big, &ma, &rh));
    post_recv(b, &r, 0);
    for (size_t i = 0; i < big / chunk; ++i) {
        d[i].control = VIPL_CONTROL_OP_RDMAWRITE;
        d[i].seg_count = 1;
        d[i].ds[0].addr = src + i * chunk;
        d[i].ds[0].handle = lh;
        d[i].ds[0].length = (uint32_t) chunk;
        d[i].remote_addr = (uintptr_t) dst + i * chunk;
        d[i].remote_handle = rh;
        if (i + 1 == big / chunk) {
            d[i].control |= VIPL_CONTROL_IMMEDIATE;
            d[i].imm_data = 77;
        }
        if (VIPL_SUCCESS != vipl_post_send(a->vi, &d[i])) {
            /* send queue full: reap one */
            assert_int_equal(VIPL_SUCCESS, vipl_send_done(a->vi, &done));
            assert_int_equal(VIPL_SUCCESS, vipl_post_send(a->vi, &d[i]));
        }
    }
    while (VIPL_SUCCESS == vipl_send_done(a->vi, &done)) {
        assert_int_equal(VIPL_STATUS_DONE, done->status);
        assert_int_equal(chunk, done->length);
    }
    assert_int_equal(VIPL_SUCCESS, vipl_recv_done(b->vi, &done));
    assert_ptr_equal(&r, done);
    assert_true(r.status & VIPL_STATUS_IMMEDIATE);
    assert_int_equal(0, r.status & VIPL_STATUS_ERROR_MASK);
    assert_int_equal(77, r.imm_data);
    assert_int_equal(0, r.length);
    assert_true(check(dst, big, 21));
    /* too long for one descriptor */
    assert_int_equal(
        VIPL_STATUS_DONE | VIPL_STATUS_LENGTH_ERROR,
        rdma(a, VIPL_CONTROL_OP_RDMAWRITE, src, lh, (uint32_t) chunk + 1, (uintptr_t) dst, rh));
    vipl_deregister_mem(a->nic, src, lh);
    vipl_deregister_mem(b->nic, dst, rh);
    free(src);
    free(dst);
    free(d);
}

/* a send that finds no receive: error at both ends, the VI breaks */
static void test_recv_not_posted(void **state)
{
    fixture_t *f = *state;
    vipl_desc_t s, r, *done;
    vipl_vi_state_t vs;
    vipl_vi_error_t ve;

    connect_pair(f);
    make_send(&f->s[0], &s, 0, 10);
    assert_int_equal(VIPL_SUCCESS, vipl_post_send(f->s[0].vi, &s));
    assert_int_equal(VIPL_SUCCESS, vipl_send_done(f->s[0].vi, &done));
    assert_true(s.status & VIPL_STATUS_REMOTE_DESC_ERROR);
    assert_int_equal(VIPL_SUCCESS, vipl_query_vi(f->s[0].vi, &vs, &ve));
    assert_int_equal(VIPL_STATE_ERROR, vs);
    assert_int_equal(VIPL_VIERR_RECV_NOT_POSTED, ve);
    assert_int_equal(VIPL_SUCCESS, vipl_query_vi(f->s[1].vi, &vs, &ve));
    assert_int_equal(VIPL_STATE_ERROR, vs);
    assert_int_equal(VIPL_VIERR_RECV_NOT_POSTED, ve);
    /* no more sends; a receive posted now cannot be used */
    assert_int_equal(VIPL_INVALID_STATE, vipl_post_send(f->s[0].vi, &s));
    make_send(&f->s[0], &r, 0, 0);
    memset(&r, 0, sizeof(r));
    r.seg_count = 1;
    r.ds[0].addr = f->s[1].rbuf;
    r.ds[0].handle = f->s[1].rh;
    r.ds[0].length = BUF;
    assert_int_equal(VIPL_INVALID_STATE, vipl_post_recv(f->s[1].vi, &r));
}

/* a receive buffer too small, a bad receive handle: descriptor errors */
static void test_length_and_recv_protection(void **state)
{
    fixture_t *f = *state;
    vipl_desc_t s, r, *done;

    connect_pair(f);
    memset(&r, 0, sizeof(r));
    r.seg_count = 1;
    r.ds[0].addr = f->s[1].rbuf;
    r.ds[0].handle = f->s[1].rh;
    r.ds[0].length = 16;
    memset(f->s[1].rbuf, 0xee, 64);
    assert_int_equal(VIPL_SUCCESS, vipl_post_recv(f->s[1].vi, &r));
    make_send(&f->s[0], &s, 0, 64);
    assert_int_equal(VIPL_SUCCESS, vipl_post_send(f->s[0].vi, &s));
    assert_int_equal(VIPL_SUCCESS, vipl_send_done(f->s[0].vi, &done));
    assert_true(s.status & VIPL_STATUS_REMOTE_DESC_ERROR);
    assert_int_equal(VIPL_SUCCESS, vipl_recv_done(f->s[1].vi, &done));
    assert_true(r.status & VIPL_STATUS_LENGTH_ERROR);
    assert_int_equal(0xee, (unsigned char) f->s[1].rbuf[0]);
}

/* a small (inline) message is checked at the receiver: too long for the
 * buffer, or a buffer handle that is not the receiver's, writes nothing */
static void test_inline_checks(void **state)
{
    fixture_t *f = *state;
    vipl_desc_t s, r, *done;

    connect_pair(f);
    memset(&r, 0, sizeof(r));
    r.seg_count = 1;
    r.ds[0].addr = f->s[1].rbuf;
    r.ds[0].handle = f->s[1].rh;
    r.ds[0].length = 16;
    memset(f->s[1].rbuf, 0xee, 64);
    assert_int_equal(VIPL_SUCCESS, vipl_post_recv(f->s[1].vi, &r));
    fill(f->s[0].sbuf, 20, 5);
    make_send(&f->s[0], &s, 0, 20);
    assert_int_equal(VIPL_SUCCESS, vipl_post_send(f->s[0].vi, &s));
    assert_int_equal(VIPL_SUCCESS, vipl_send_done(f->s[0].vi, &done));
    assert_int_equal(VIPL_SUCCESS, vipl_recv_done(f->s[1].vi, &done));
    assert_true(r.status & VIPL_STATUS_LENGTH_ERROR);
    assert_int_equal(0, r.length);
    for (int i = 0; i < 64; ++i) {
        assert_int_equal(0xee, (unsigned char) f->s[1].rbuf[i]);
    }
}

static void test_inline_bad_handle(void **state)
{
    fixture_t *f = *state;
    vipl_desc_t s, r, *done;

    connect_pair(f);
    memset(&r, 0, sizeof(r));
    r.seg_count = 1;
    r.ds[0].addr = f->s[1].rbuf;
    r.ds[0].handle = f->s[1].sh; /* registered, but another region */
    r.ds[0].length = 64;
    memset(f->s[1].rbuf, 0xee, 64);
    assert_int_equal(VIPL_SUCCESS, vipl_post_recv(f->s[1].vi, &r));
    make_send(&f->s[0], &s, 0, 8);
    assert_int_equal(VIPL_SUCCESS, vipl_post_send(f->s[0].vi, &s));
    assert_int_equal(VIPL_SUCCESS, vipl_send_done(f->s[0].vi, &done));
    assert_int_equal(VIPL_SUCCESS, vipl_recv_done(f->s[1].vi, &done));
    assert_true(r.status & VIPL_STATUS_PROTECTION_ERROR);
    for (int i = 0; i < 64; ++i) {
        assert_int_equal(0xee, (unsigned char) f->s[1].rbuf[i]);
    }
}

/* an inline send (VIPL_CONTROL_INLINE): unregistered memory is copied at
 * post and arrives; the same send without the flag is a protection error;
 * more than max_inline bytes, or an RDMA op with the flag, is refused at
 * post and uses no receive descriptor */
static void test_inline_send(void **state)
{
    fixture_t *f = *state;
    vipl_desc_t s, r[2], *done;
    unsigned char stackbuf[64];
    uint32_t max = f->s[0].nic->attrs.max_inline;

    connect_pair(f);
    assert_true(max >= 8 && max <= sizeof(stackbuf));
    post_recv(&f->s[1], &r[0], 0);
    post_recv(&f->s[1], &r[1], 1);
    fill(stackbuf, max, 9);
    memset(&s, 0, sizeof(s));
    s.control = VIPL_CONTROL_OP_SEND | VIPL_CONTROL_INLINE | VIPL_CONTROL_IMMEDIATE;
    s.imm_data = 0x1234;
    s.seg_count = 2;
    s.ds[0].addr = stackbuf;
    s.ds[0].length = 3;
    s.ds[1].addr = stackbuf + 3;
    s.ds[1].length = max - 3;
    /* too long, or not a send: refused, nothing consumed */
    s.ds[1].length = max - 2;
    assert_int_equal(VIPL_INVALID_PARAMETER, vipl_post_send(f->s[0].vi, &s));
    s.ds[1].length = max - 3;
    s.control = VIPL_CONTROL_OP_RDMAWRITE | VIPL_CONTROL_INLINE;
    assert_int_equal(VIPL_INVALID_PARAMETER, vipl_post_send(f->s[0].vi, &s));
    assert_int_equal(VIPL_NOT_DONE, vipl_send_done(f->s[0].vi, &done));
    s.control = VIPL_CONTROL_OP_SEND | VIPL_CONTROL_INLINE | VIPL_CONTROL_IMMEDIATE;
    assert_int_equal(VIPL_SUCCESS, vipl_post_send(f->s[0].vi, &s));
    memset(stackbuf, 0, sizeof(stackbuf)); /* reusable once posted */
    assert_int_equal(VIPL_SUCCESS, vipl_send_done(f->s[0].vi, &done));
    assert_ptr_equal(done, &s);
    assert_int_equal(VIPL_STATUS_DONE, s.status);
    assert_int_equal(VIPL_SUCCESS, vipl_recv_done(f->s[1].vi, &done));
    assert_ptr_equal(done, &r[0]);
    assert_int_equal(VIPL_STATUS_DONE | VIPL_STATUS_IMMEDIATE, r[0].status);
    assert_int_equal(max, r[0].length);
    assert_int_equal(0x1234, r[0].imm_data);
    assert_true(check(f->s[1].rbuf, max, 9));
    /* vipl_post_inline: the same without a descriptor, never reported */
    fill(stackbuf, max, 10);
    assert_int_equal(VIPL_INVALID_PARAMETER, vipl_post_inline(f->s[0].vi, stackbuf, max + 1, 1));
    assert_int_equal(VIPL_SUCCESS, vipl_post_inline(f->s[0].vi, stackbuf, max, 0x4321));
    assert_int_equal(VIPL_NOT_DONE, vipl_send_done(f->s[0].vi, &done));
    assert_int_equal(VIPL_SUCCESS, vipl_recv_done(f->s[1].vi, &done));
    assert_ptr_equal(done, &r[1]);
    assert_int_equal(VIPL_STATUS_DONE | VIPL_STATUS_IMMEDIATE, r[1].status);
    assert_int_equal(0x4321, r[1].imm_data);
    assert_true(check(f->s[1].rbuf + BUF, max, 10));
    /* without the flag the unregistered buffer is refused, nothing moves */
    s.control = VIPL_CONTROL_OP_SEND;
    assert_int_equal(VIPL_SUCCESS, vipl_post_send(f->s[0].vi, &s));
    assert_int_equal(VIPL_SUCCESS, vipl_send_done(f->s[0].vi, &done));
    assert_true(s.status & VIPL_STATUS_PROTECTION_ERROR);
    assert_int_equal(VIPL_NOT_DONE, vipl_recv_done(f->s[1].vi, &done));
    /* no receive posted: the inline send breaks the VI */
    assert_int_equal(VIPL_INVALID_STATE, vipl_post_inline(f->s[0].vi, stackbuf, 4, 1));
}

/* vipl_post_inline2 (header and payload gathered into the peer's slot)
 * and vipl_cq_recv_done (the CQ's next receive completion in one call),
 * through the emu ops and through the generic paths vipl.h takes for a
 * provider without them: the same messages, in order, with their data
 * and immediate data; too long a pair is refused and consumes nothing */
static void test_inline2_cq_recv(void **state)
{
    fixture_t *f = *state;
    vipl_desc_t r[6], *done;
    vipl_vi_t *vi;
    unsigned char a[64], b[64];
    uint32_t max = f->s[0].nic->attrs.max_inline;
    const vipl_ops_t *emu = f->s[0].nic->ops;
    vipl_ops_t plain = *emu;
    /* (header, payload) lengths of each message */
    uint32_t al[6], bl[6];

    connect_pair(f);
    assert_true(max >= 8 && max <= sizeof(a));
    al[0] = 3, bl[0] = max - 3;
    al[1] = max, bl[1] = 0;
    al[2] = 0, bl[2] = max;
    al[3] = 14, bl[3] = 8;
    al[4] = 5, bl[4] = max - 5;
    al[5] = 1, bl[5] = 1;
    for (int i = 0; i < 6; ++i) {
        post_recv(&f->s[1], &r[i], i);
    }
    plain.post_inline2 = NULL;
    plain.cq_recv_done = NULL;
    assert_int_equal(VIPL_NOT_DONE, vipl_cq_recv_done(f->s[1].rcq, &vi, &done));
    assert_int_equal(VIPL_INVALID_PARAMETER, vipl_post_inline2(f->s[0].vi, a, max - 3, b, 4, 1));
    for (int i = 0; i < 6; ++i) {
        /* the last three through the generic gather and poll */
        f->s[0].nic->ops = i < 3 ? emu : &plain;
        fill(a, al[i], 20u + (unsigned) i);
        fill(b, bl[i], 40u + (unsigned) i);
        assert_int_equal(VIPL_SUCCESS,
                         vipl_post_inline2(f->s[0].vi, a, al[i], b, bl[i], 0x100u + (uint32_t) i));
        memset(a, 0, sizeof(a)); /* copied when the call returns */
        memset(b, 0, sizeof(b));
    }
    f->s[0].nic->ops = &plain;
    assert_int_equal(VIPL_INVALID_PARAMETER, vipl_post_inline2(f->s[0].vi, a, max - 3, b, 4, 1));
    f->s[0].nic->ops = emu;
    assert_int_equal(VIPL_NOT_DONE, vipl_send_done(f->s[0].vi, &done));
    for (int i = 0; i < 6; ++i) {
        f->s[1].nic->ops = i % 2 ? &plain : emu;
        vi = NULL;
        assert_int_equal(VIPL_SUCCESS, vipl_cq_recv_done(f->s[1].rcq, &vi, &done));
        assert_ptr_equal(f->s[1].vi, vi);
        assert_ptr_equal(&r[i], done);
        assert_int_equal(VIPL_STATUS_DONE | VIPL_STATUS_IMMEDIATE, done->status);
        assert_int_equal(al[i] + bl[i], done->length);
        assert_int_equal(0x100u + (uint32_t) i, done->imm_data);
        fill(a, al[i], 20u + (unsigned) i);
        fill(b, bl[i], 40u + (unsigned) i);
        assert_memory_equal(done->ds[0].addr, a, al[i]);
        assert_memory_equal((unsigned char *) done->ds[0].addr + al[i], b, bl[i]);
    }
    assert_int_equal(VIPL_NOT_DONE, vipl_cq_recv_done(f->s[1].rcq, &vi, &done));
    f->s[1].nic->ops = &plain;
    assert_int_equal(VIPL_NOT_DONE, vipl_cq_recv_done(f->s[1].rcq, &vi, &done));
    f->s[1].nic->ops = emu;
    /* no receive posted any more: the send breaks the VI */
    assert_int_equal(VIPL_INVALID_STATE, vipl_post_inline2(f->s[0].vi, a, 2, b, 2, 1));
}

/* invalid attributes are refused */
static void test_bad_attributes(void **state)
{
    fixture_t *f = *state;
    vipl_vi_attrs_t va = {0};
    vipl_mem_attrs_t ma = {0};
    vipl_mem_handle_t h;
    vipl_vi_t *vi;

    va.reliability = 0;
    va.ptag = f->s[0].ptag;
    va.send_depth = va.recv_depth = 4;
    assert_int_equal(VIPL_INVALID_RELIABILITY_LEVEL,
                     vipl_create_vi(f->s[0].nic, &va, NULL, NULL, &vi));
    va.reliability = VIPL_RELIABLE_DELIVERY;
    va.ptag = f->s[1].ptag; /* another NIC's tag */
    assert_int_equal(VIPL_INVALID_PTAG, vipl_create_vi(f->s[0].nic, &va, NULL, NULL, &vi));
    va.ptag = f->s[0].ptag;
    va.recv_depth = 1000;
    assert_int_equal(VIPL_INVALID_PARAMETER, vipl_create_vi(f->s[0].nic, &va, NULL, NULL, &vi));
    ma.ptag = f->s[0].ptag;
    assert_int_equal(VIPL_INVALID_PARAMETER,
                     vipl_register_mem(f->s[0].nic, f->s[0].sbuf, 0, &ma, &h));
    assert_int_equal(VIPL_INVALID_PARAMETER,
                     vipl_register_mem(f->s[0].nic, (void *) (uintptr_t) -16, 64, &ma, &h));
}

/* a forked peer connects, then is killed: the VI goes to error, posted
 * descriptors are flushed, sends and RDMA are refused, nothing hangs and
 * no file is left */
static void test_peer_death(void **state)
{
    fixture_t *f = *state;
    int to_child[2], to_parent[2];
    vipl_vi_address_t mine, theirs;
    vipl_desc_t r[4], s, *done;
    vipl_vi_state_t vs;
    vipl_vi_error_t ve;
    pid_t pid;
    char c;
    int flushed = 0;

    /* the child replaces side 1 */
    close_side(&f->s[1]);
    assert_int_equal(0, pipe(to_child));
    assert_int_equal(0, pipe(to_parent));
    pid = fork();
    assert_true(pid >= 0);
    if (0 == pid) {
        side_t cs = {0};
        vipl_desc_t cr;
        fixture_t cf = *f;
        vipl_return_t rc;

        open_side(&cf, &cs, 2, 1);
        vipl_vi_address(cs.vi, &mine);
        if (sizeof(mine) != write(to_parent[1], &mine, sizeof(mine)) ||
            sizeof(theirs) != read(to_child[0], &theirs, sizeof(theirs))) {
            _exit(1);
        }
        post_recv(&cs, &cr, 0);
        (void) vipl_connect_peer_request(cs.vi, &theirs);
        do {
            rc = vipl_connect_peer_done(cs.vi);
        } while (VIPL_NOT_DONE == rc);
        c = VIPL_SUCCESS == rc ? 'c' : 'x';
        if (1 != write(to_parent[1], &c, 1)) {
            _exit(1);
        }
        for (;;) {
            pause();
        }
    }
    assert_int_equal(sizeof(theirs), read(to_parent[0], &theirs, sizeof(theirs)));
    vipl_vi_address(f->s[0].vi, &mine);
    for (int i = 0; i < 4; ++i) {
        post_recv(&f->s[0], &r[i], i);
    }
    assert_int_equal(sizeof(mine), write(to_child[1], &mine, sizeof(mine)));
    assert_int_equal(VIPL_SUCCESS, vipl_connect_peer_request(f->s[0].vi, &theirs));
    while (VIPL_NOT_DONE == vipl_connect_peer_done(f->s[0].vi)) {
        usleep(100);
    }
    assert_int_equal(1, read(to_parent[0], &c, 1));
    assert_int_equal('c', c);
    /* alive: one send works */
    fill(f->s[0].sbuf, 32, 1);
    make_send(&f->s[0], &s, 0, 32);
    assert_int_equal(VIPL_SUCCESS, vipl_post_send(f->s[0].vi, &s));
    assert_int_equal(VIPL_SUCCESS, vipl_send_done(f->s[0].vi, &done));
    assert_int_equal(VIPL_STATUS_DONE, s.status);

    kill(pid, SIGKILL);
    assert_int_equal(pid, waitpid(pid, NULL, 0));
    /* polling finds out (bounded: the check runs every few thousand polls) */
    for (long i = 0; i < 10000000 && flushed < 4; ++i) {
        if (VIPL_SUCCESS == vipl_recv_done(f->s[0].vi, &done)) {
            assert_true(done->status & VIPL_STATUS_FLUSHED_ERROR);
            ++flushed;
        }
    }
    assert_int_equal(4, flushed);
    assert_int_equal(VIPL_SUCCESS, vipl_query_vi(f->s[0].vi, &vs, &ve));
    assert_int_equal(VIPL_STATE_ERROR, vs);
    assert_int_equal(VIPL_VIERR_PEER_GONE, ve);
    assert_int_equal(VIPL_INVALID_STATE, vipl_post_send(f->s[0].vi, &s));
    assert_int_equal(0, count_files(f->dir));
    close(to_child[0]);
    close(to_child[1]);
    close(to_parent[0]);
    close(to_parent[1]);
}

/* ---- hostile values in a peer's segment ---------------------------------- */

/* the emu NIC header as the segment holds it (vipl_emu.c asserts this
 * layout): the offsets a peer reads and must check */
enum {
    HDR_MAGIC = 0,
    HDR_VERSION = 4,
    HDR_NIC_ID = 8,
    HDR_PID = 12,
    HDR_MAX_VIS = 16,
    HDR_MAX_RECV_DEPTH = 20,
    HDR_MAX_REGS = 24,
    HDR_REG_OFF = 32,
    HDR_VI_OFF = 40,
    HDR_VI_STRIDE = 48,
    HDR_MEM_OFF = 56,
    HDR_MEM_SIZE = 64,
    HDR_EXPECTED = 76,
    REG_SIZE = 40,
    REG_BASE = 16,
    REG_LEN = 24,
    REG_SEG_OFF = 32,
    VI_REC_SIZE = 192,
    SLOT_SIZE = 64,
    SLOT_ADDR = 8
};

static void put32(unsigned char *p, size_t off, uint32_t v)
{
    memcpy(p + off, &v, sizeof(v));
}

static void put64(unsigned char *p, size_t off, uint64_t v)
{
    memcpy(p + off, &v, sizeof(v));
}

static uint64_t get64(const unsigned char *p, size_t off)
{
    uint64_t v;

    memcpy(&v, p + off, sizeof(v));
    return v;
}

/* a segment of NIC id 7 whose geometry sums wrap around 2^64: each must
 * be refused at connection (before, they were accepted and the peer's
 * tables read outside the mapping) */
static void test_hostile_header(void **state)
{
    fixture_t *f = *state;
    const uint64_t size = 8192;
    struct {
        uint64_t reg_off, vi_off, mem_off, mem_size;
    } cases[] = {
        {UINT64_MAX - 7, 128, 4096, 4096},   /* reg_off + tables wraps */
        {128, UINT64_MAX - 63, 4096, 4096},  /* vi_off + VI records wraps */
        {128, 192, UINT64_MAX - 4095, 8192}, /* mem_off + mem_size wraps */
        {128, 192, 4096, UINT64_MAX - 2047}, /* mem_size alone past the end */
    };

    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); ++k) {
        unsigned char hdr[128];
        char path[128];
        vipl_vi_address_t a;
        uint32_t nic_id = 7;
        int32_t pid = (int32_t) getpid();
        int fd;

        memset(hdr, 0, sizeof(hdr));
        put32(hdr, HDR_MAGIC, 0x45504956u);
        put32(hdr, HDR_VERSION, 1);
        put32(hdr, HDR_NIC_ID, nic_id);
        put32(hdr, HDR_PID, (uint32_t) pid);
        put32(hdr, HDR_MAX_VIS, 1);
        put32(hdr, HDR_MAX_RECV_DEPTH, 1);
        put32(hdr, HDR_MAX_REGS, 1);
        put64(hdr, HDR_REG_OFF, cases[k].reg_off);
        put64(hdr, HDR_VI_OFF, cases[k].vi_off);
        put64(hdr, HDR_VI_STRIDE, VI_REC_SIZE + SLOT_SIZE);
        put64(hdr, HDR_MEM_OFF, cases[k].mem_off);
        put64(hdr, HDR_MEM_SIZE, cases[k].mem_size);
        put32(hdr, HDR_EXPECTED, 100);
        snprintf(path, sizeof(path), "%s/via.t.%u", f->dir, nic_id);
        fd = open(path, O_CREAT | O_EXCL | O_RDWR, 0600);
        assert_true(fd >= 0);
        assert_int_equal(0, ftruncate(fd, (off_t) size));
        assert_int_equal((ssize_t) sizeof(hdr), pwrite(fd, hdr, sizeof(hdr), 0));
        close(fd);

        /* a VI address naming that NIC (index 0, this process) */
        vipl_vi_address(f->s[1].vi, &a);
        memcpy(a.bytes + 4, &nic_id, sizeof(nic_id));
        memcpy(a.bytes + 8, &pid, sizeof(pid));
        memset(a.bytes + 12, 0, 4);
        assert_int_equal(VIPL_INVALID_PARAMETER, vipl_connect_peer_request(f->s[0].vi, &a));
        assert_int_equal(0, unlink(path));
    }
}

/* a peer whose registration entry claims a length that wraps its segment
 * offset around 2^64, and a receive slot far beyond its buffer: the send
 * must not copy through the mapping (before, it wrote outside it) */
static void test_hostile_registration(void **state)
{
    fixture_t *f = *state;
    vipl_desc_t s, r, *done;
    char path[128];
    unsigned char *seg;
    struct stat st;
    uint64_t reg_off, vi_off, seg_off = 0;
    unsigned char *entry = NULL;
    int fd;

    /* map side 1's segment before the connection removes its name */
    snprintf(path, sizeof(path), "%s/via.t.1", f->dir);
    fd = open(path, O_RDWR);
    assert_true(fd >= 0);
    assert_int_equal(0, fstat(fd, &st));
    seg = mmap(NULL, (size_t) st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    assert_true(MAP_FAILED != seg);
    connect_pair(f);
    post_recv(&f->s[1], &r, 0);

    reg_off = get64(seg, HDR_REG_OFF);
    vi_off = get64(seg, HDR_VI_OFF);
    for (uint32_t i = 0; i < 64; ++i) {
        unsigned char *e = seg + reg_off + (size_t) i * REG_SIZE;

        if (get64(e, REG_BASE) == (uint64_t) (uintptr_t) f->s[1].rbuf) {
            entry = e;
            seg_off = get64(e, REG_SEG_OFF);
            break;
        }
    }
    assert_non_null(entry);
    assert_true(seg_off > 0 && seg_off < (uint64_t) st.st_size);
    put64(entry, REG_LEN, (uint64_t) 0 - seg_off);
    put64(seg, vi_off + VI_REC_SIZE + SLOT_ADDR,
          (uint64_t) (uintptr_t) f->s[1].rbuf + ((uint64_t) 1 << 40));

    fill(f->s[0].sbuf, 64, 3);
    make_send(&f->s[0], &s, 0, 64);
    assert_int_equal(VIPL_SUCCESS, vipl_post_send(f->s[0].vi, &s));
    assert_int_equal(VIPL_SUCCESS, vipl_send_done(f->s[0].vi, &done));
    assert_true(s.status & VIPL_STATUS_ERROR_MASK);
    put64(entry, REG_LEN, 16 * BUF);
    munmap(seg, (size_t) st.st_size);
}

/* NIC memory: a request whose rounding would wrap gets nothing */
static void test_mem_alloc_huge(void **state)
{
    fixture_t *f = *state;

    assert_null(vipl_mem_alloc(f->s[0].nic, SIZE_MAX));
    assert_null(vipl_mem_alloc(f->s[0].nic, SIZE_MAX - 63));
    assert_null(vipl_mem_alloc(f->s[0].nic, (size_t) 1 << 40));
}

/* the provider table */
/* ---- strict mode: each way a verbs NIC differs, which the BTL must
 * survive (docs/btl_via.md, "the three verbs failures") ------------------ */

/* failure 1: a VI is connected as soon as it asked, and what it sends
 * before the peer's VI asked too is lost: the send fails with a transport
 * error and the VI breaks (verbs: a queue pair in INIT drops packets, the
 * sender's retries run out) */
static void test_strict_send_before_peer(void **state)
{
    fixture_t *f = *state;
    side_t *a = &f->s[0], *b = &f->s[1];
    vipl_vi_address_t ab;
    vipl_vi_state_t st;
    vipl_vi_error_t why;
    vipl_desc_t r, s, *done;

    post_recv(b, &r, 0);
    vipl_vi_address(b->vi, &ab);
    assert_int_equal(VIPL_SUCCESS, vipl_connect_peer_request(a->vi, &ab));
    /* not waiting for b: connected at once */
    assert_int_equal(VIPL_SUCCESS, vipl_connect_peer_done(a->vi));
    make_send(a, &s, 0, 64);
    fill(s.ds[0].addr, 64, 5);
    assert_int_equal(VIPL_SUCCESS, vipl_post_send(a->vi, &s));
    assert_int_equal(VIPL_SUCCESS, vipl_send_done(a->vi, &done));
    assert_ptr_equal(&s, done);
    assert_int_equal(VIPL_STATUS_DONE | VIPL_STATUS_TRANSPORT_ERROR, s.status);
    assert_int_equal(VIPL_SUCCESS, vipl_query_vi(a->vi, &st, &why));
    assert_int_equal(VIPL_STATE_ERROR, st);
    /* nothing reached b */
    assert_int_equal(VIPL_NOT_DONE, vipl_recv_done(b->vi, &done));
}

/* ... and once both asked, it goes through */
static void test_strict_send_after_peer(void **state)
{
    fixture_t *f = *state;
    side_t *a = &f->s[0], *b = &f->s[1];
    vipl_desc_t r, s, *done;

    post_recv(b, &r, 0);
    connect_pair(f);
    make_send(a, &s, 0, 64);
    fill(s.ds[0].addr, 64, 6);
    s.control |= VIPL_CONTROL_IMMEDIATE;
    s.imm_data = 9;
    assert_int_equal(VIPL_SUCCESS, vipl_post_send(a->vi, &s));
    assert_int_equal(VIPL_SUCCESS, vipl_send_done(a->vi, &done));
    assert_int_equal(VIPL_STATUS_DONE, s.status);
    assert_int_equal(VIPL_SUCCESS, vipl_recv_done(b->vi, &done));
    assert_int_equal(64, r.length);
    assert_int_equal(9, r.imm_data);
    assert_true(check(r.ds[0].addr, 64, 6));
}

/* failure 2: the receive completion of an RDMA write with immediate
 * carries the write's length (emu's default reports 0) */
static void test_strict_write_immediate_length(void **state)
{
    fixture_t *f = *state;
    side_t *a = &f->s[0], *b = &f->s[1];
    vipl_mem_attrs_t ma = {0};
    vipl_mem_handle_t rh;
    vipl_desc_t r, w, *done;
    char *dst = calloc(1, 3 * BUF);

    assert_non_null(dst);
    connect_pair(f);
    ma.ptag = b->ptag;
    ma.enable_rdma_write = true;
    assert_int_equal(VIPL_SUCCESS, vipl_register_mem(b->nic, dst, 3 * BUF, &ma, &rh));
    post_recv(b, &r, 0);
    fill(a->sbuf, 3 * BUF, 8);
    memset(&w, 0, sizeof(w));
    w.control = VIPL_CONTROL_OP_RDMAWRITE | VIPL_CONTROL_IMMEDIATE;
    w.imm_data = 0x3001;
    w.seg_count = 1;
    w.ds[0].addr = a->sbuf;
    w.ds[0].handle = a->sh;
    w.ds[0].length = 3 * BUF; /* larger than the receive buffer */
    w.remote_addr = (uintptr_t) dst;
    w.remote_handle = rh;
    assert_int_equal(VIPL_SUCCESS, vipl_post_send(a->vi, &w));
    assert_int_equal(VIPL_SUCCESS, vipl_send_done(a->vi, &done));
    assert_int_equal(VIPL_STATUS_DONE, w.status);
    assert_int_equal(VIPL_SUCCESS, vipl_recv_done(b->vi, &done));
    assert_ptr_equal(&r, done);
    assert_int_equal(VIPL_STATUS_DONE | VIPL_STATUS_IMMEDIATE, r.status);
    assert_int_equal(0x3001, r.imm_data);
    assert_int_equal(3 * BUF, r.length);
    assert_true(check(dst, 3 * BUF, 8));
    vipl_deregister_mem(b->nic, dst, rh);
    free(dst);
}

/* failure 3: max_inline is 0 and an inline send is refused at post, even
 * an empty one (a credit-only message) */
static void test_strict_no_inline(void **state)
{
    fixture_t *f = *state;
    side_t *a = &f->s[0], *b = &f->s[1];
    vipl_desc_t r, s, *done;

    assert_int_equal(0, vipl_query_nic(a->nic)->max_inline);
    post_recv(b, &r, 0);
    connect_pair(f);
    make_send(a, &s, 0, 0);
    s.control |= VIPL_CONTROL_INLINE | VIPL_CONTROL_IMMEDIATE;
    assert_int_equal(VIPL_INVALID_PARAMETER, vipl_post_send(a->vi, &s));
    assert_int_equal(VIPL_INVALID_PARAMETER, vipl_post_inline(a->vi, &s, 0, 1));
    /* the same message without the flag goes */
    s.control &= ~VIPL_CONTROL_INLINE;
    s.imm_data = 0x200;
    assert_int_equal(VIPL_SUCCESS, vipl_post_send(a->vi, &s));
    assert_int_equal(VIPL_SUCCESS, vipl_send_done(a->vi, &done));
    assert_int_equal(VIPL_STATUS_DONE, s.status);
    assert_int_equal(VIPL_SUCCESS, vipl_recv_done(b->vi, &done));
    assert_int_equal(0, r.length);
    assert_int_equal(0x200, r.imm_data);
}

static void test_providers(void **state)
{
    (void) state;
    assert_non_null(vipl_provider("emu"));
    assert_null(vipl_provider("nonesuch"));
    assert_null(vipl_provider(NULL));
    assert_string_equal("done", vipl_status_string(VIPL_STATUS_DONE));
    assert_string_equal("RDMA protection error at the target",
                        vipl_status_string(VIPL_STATUS_DONE | VIPL_STATUS_RDMA_PROT_ERROR));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_providers),
        cmocka_unit_test_setup_teardown(test_segments, setup, teardown),
        cmocka_unit_test_setup_teardown(test_descriptor_life_cycle, setup, teardown),
        cmocka_unit_test_setup_teardown(test_completion_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rdma_protection, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rdma_write_immediate, setup, teardown),
        cmocka_unit_test_setup_teardown(test_recv_not_posted, setup, teardown),
        cmocka_unit_test_setup_teardown(test_length_and_recv_protection, setup, teardown),
        cmocka_unit_test_setup_teardown(test_inline_checks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_inline_bad_handle, setup, teardown),
        cmocka_unit_test_setup_teardown(test_inline_send, setup, teardown),
        cmocka_unit_test_setup_teardown(test_inline2_cq_recv, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_attributes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_peer_death, setup, teardown),
        cmocka_unit_test_setup_teardown(test_strict_send_before_peer, setup_strict, teardown),
        cmocka_unit_test_setup_teardown(test_strict_send_after_peer, setup_strict, teardown),
        cmocka_unit_test_setup_teardown(test_strict_write_immediate_length, setup_strict, teardown),
        cmocka_unit_test_setup_teardown(test_strict_no_inline, setup_strict, teardown),
        cmocka_unit_test_setup_teardown(test_hostile_header, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hostile_registration, setup, teardown),
        cmocka_unit_test_setup_teardown(test_mem_alloc_huge, setup, teardown),
    };

    ops = vipl_provider("emu");
    return cmocka_run_group_tests_name("via_emu", tests, NULL, NULL);
}
