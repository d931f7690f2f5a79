/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_osc_hybrid_am.c: osc/hybrid's target side, mca_osc_hybrid_handle_am,
 * fed crafted and random records on a window of a fake module: valid
 * records of every type must be applied, and every malformed one (wrong
 * nseg, segment lengths that do not add up, payload lengths, truncation at
 * every byte, bad datatype and op codes, huge displacements, control
 * records that nobody asked for) refused without an access outside the
 * message, the window or the buffers the target allocates (run under ASan
 * or valgrind). A refusal is either an ERROR notice to the origin (and an
 * empty reply where the origin waits for one) with the window untouched,
 * or, where the record cannot be framed or answered, the return value 0,
 * on which the progress loop ends the job.
 *
 * No MPI job: Open MPI's datatype and op engines are initialised as
 * MPI_Init would (tc_ompi_init_util, then the MPI layer's datatypes and
 * ops), and the PML's isend and irecv are replaced by stubs that
 * log what the target sends and receives.
 */

#include "ompi_config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "opal/mca/base/base.h"
#include "opal/runtime/opal.h"
#include "opal/util/show_help.h"
#include "ompi/datatype/ompi_datatype.h"
#include "ompi/mca/op/base/base.h"
#include "ompi/mca/pml/pml.h"
#include "ompi/op/op.h"
#include "ompi/runtime/params.h"

#include "osc_hybrid.h"
#include "test_pattern.h"

/* the component's object: the test links the target side without
 * osc_hybrid_component.c */
mca_osc_hybrid_component_t mca_osc_hybrid_component;

#define NRANK 4
#define WIN 256
#define SRC 1
#define TAG_R (MCA_OSC_HYBRID_TAG_REPLY + 7)
#define TAG_D (MCA_OSC_HYBRID_TAG_DATA + 9)

typedef mca_osc_hybrid_hdr_t hdr_t;
typedef mca_osc_hybrid_seg_t seg_t;

/* ---- PML stubs: what the target sends and receives ---- */

typedef struct {
    int dst, tag;
    size_t len;
    unsigned char data[WIN * 4];
} sent_t;

typedef struct {
    void *buf;
    size_t len;
    int src, tag;
    ompi_request_t *req;
} recvd_t;

static sent_t sent[64];
static int nsent;
static recvd_t recvd[16];
static int nrecvd;

static int stub_req_free(ompi_request_t **r)
{
    free(*r);
    *r = NULL;
    return OMPI_SUCCESS;
}

static ompi_request_t *stub_req(bool complete)
{
    ompi_request_t *r = calloc(1, sizeof(*r));

    assert_non_null(r);
    r->req_complete = complete ? REQUEST_COMPLETED : REQUEST_PENDING;
    r->req_status.MPI_ERROR = MPI_SUCCESS;
    r->req_free = stub_req_free;
    return r;
}

static int stub_isend(const void *buf, size_t count, ompi_datatype_t *dt, int dst, int tag,
                      mca_pml_base_send_mode_t mode, ompi_communicator_t *comm,
                      ompi_request_t **req)
{
    sent_t *s;
    size_t len = count * dt->super.size;

    (void) mode;
    (void) comm;
    assert_true(nsent < (int) (sizeof(sent) / sizeof(sent[0])));
    assert_int_equal(dt->super.size, 1);
    s = &sent[nsent++];
    s->dst = dst;
    s->tag = tag;
    s->len = len;
    /* an eager send: the bytes are read now (every byte, so that ASan and
     * valgrind see a read beyond a buffer) */
    if (len > 0) {
        memcpy(s->data, buf, len < sizeof(s->data) ? len : sizeof(s->data));
        if (len > sizeof(s->data)) {
            volatile unsigned char sink = 0;
            for (size_t i = 0; i < len; ++i) {
                sink ^= ((const unsigned char *) buf)[i];
            }
            (void) sink;
        }
    }
    *req = stub_req(true);
    return OMPI_SUCCESS;
}

static int stub_irecv(void *buf, size_t count, ompi_datatype_t *dt, int src, int tag,
                      ompi_communicator_t *comm, ompi_request_t **req)
{
    recvd_t *r;

    (void) comm;
    assert_true(nrecvd < (int) (sizeof(recvd) / sizeof(recvd[0])));
    r = &recvd[nrecvd++];
    r->buf = buf;
    r->len = count * dt->super.size;
    r->src = src;
    r->tag = tag;
    r->req = stub_req(false);
    *req = r->req;
    return OMPI_SUCCESS;
}

/* ---- the fake window ---- */

static mca_osc_hybrid_module_t *m;
static char *win; /* exactly WIN bytes: ASan sees every access beyond */
static int fake_comm;

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n, size);
    assert_non_null(p);
    return p;
}

static void win_pattern(char *w, size_t n)
{
    for (size_t i = 0; i < n; ++i) {
        w[i] = (char) (i * 7 + 3);
    }
}

static bool win_untouched(void)
{
    for (size_t i = 0; i < WIN; ++i) {
        if (win[i] != (char) (i * 7 + 3)) {
            return false;
        }
    }
    return true;
}

static int setup(void **state)
{
    (void) state;
    m = xcalloc(1, sizeof(*m));
    m->comm = (ompi_communicator_t *) &fake_comm;
    m->rank = 0;
    m->size = NRANK;
    m->flavor = MPI_WIN_FLAVOR_CREATE;
    win = malloc(WIN);
    assert_non_null(win);
    win_pattern(win, WIN);
    m->base = win;
    m->win_size = WIN;
    m->disp_unit = 1;
    m->lk_excl = -1;
    /* the per-peer arrays as the component makes them */
    assert_int_equal(OMPI_SUCCESS, mca_osc_hybrid_peers_alloc(m, NRANK));
    nsent = 0;
    nrecvd = 0;
    return 0;
}

/* completes what the target has in flight, as its progress would */
static void run_pend(void)
{
    mca_osc_hybrid_complete_finished(m, -1);
}

static int teardown(void **state)
{
    (void) state;
    /* what is still in flight ends now (receives the test left open) */
    for (mca_osc_hybrid_pend_t *p = m->pend; NULL != p; p = p->next) {
        p->req->req_complete = REQUEST_COMPLETED;
    }
    run_pend();
    assert_null(m->pend);
    while (NULL != m->lkq_head) {
        mca_osc_hybrid_lockq_t *q = m->lkq_head;
        m->lkq_head = q->next;
        free(q);
    }
    mca_osc_hybrid_peers_free(m);
    mca_osc_hybrid_ft_release(m);
    mca_osc_hybrid_free_held(m);
    free(m->regions);
    free(win);
    free(m);
    m = NULL;
    win = NULL;
    return 0;
}

/* ---- records ---- */

typedef struct {
    hdr_t h;
    seg_t seg[8];
    uint32_t nseg; /* segments written (h.nseg may say otherwise) */
    unsigned char pl[WIN * 2];
    size_t npl; /* payload bytes written (h.payload_len may say otherwise) */
} rec_t;

static void rec_init(rec_t *r, int type)
{
    memset(r, 0, sizeof(*r));
    r->h.type = (uint8_t) type;
}

static void rec_seg(rec_t *r, int64_t off, uint64_t len)
{
    r->seg[r->nseg].off = off;
    r->seg[r->nseg].len = len;
    r->nseg++;
    r->h.nseg = r->nseg;
    r->h.stream_len += len;
}

static void rec_payload(rec_t *r, const void *p, size_t n)
{
    memcpy(r->pl + r->npl, p, n);
    r->npl += n;
    r->h.payload_len = r->npl;
}

/* a payload of n bytes of a pattern that differs from the window's */
static void rec_payload_pattern(rec_t *r, size_t n)
{
    for (size_t i = 0; i < n; ++i) {
        r->pl[r->npl + i] = (unsigned char) (0xa5 ^ i);
    }
    r->npl += n;
    r->h.payload_len = r->npl;
}

/* the record's bytes (padding included) at out; returns their number */
static size_t rec_bytes(const rec_t *r, unsigned char *out)
{
    size_t n = 0;

    memcpy(out, &r->h, sizeof(r->h));
    n += sizeof(r->h);
    memcpy(out + n, r->seg, r->nseg * sizeof(seg_t));
    n += r->nseg * sizeof(seg_t);
    memcpy(out + n, r->pl, r->npl);
    n += r->npl;
    while (n % 16) {
        out[n++] = 0;
    }
    return n;
}

/* Feeds n bytes (a copy in a buffer of exactly that size) to the target. */
static size_t feed_bytes(int src, const unsigned char *bytes, size_t n)
{
    char *msg = malloc(n ? n : 1);
    size_t used;

    assert_non_null(msg);
    memcpy(msg, bytes, n);
    used = mca_osc_hybrid_handle_am(m, src, msg, n);
    free(msg);
    return used;
}

static size_t feed(const rec_t *r)
{
    unsigned char buf[sizeof(rec_t) + 16];
    size_t n = rec_bytes(r, buf);
    return feed_bytes(SRC, buf, n);
}

static size_t rec_len(const rec_t *r)
{
    unsigned char buf[sizeof(rec_t) + 16];
    return rec_bytes(r, buf);
}

/* notices of a type the target sent to dst */
static int notices(int dst, int type)
{
    int n = 0;

    for (int i = 0; i < nsent; ++i) {
        hdr_t h;
        if (sent[i].dst != dst || MCA_OSC_HYBRID_TAG_AM != sent[i].tag || sent[i].len < sizeof(h)) {
            continue;
        }
        memcpy(&h, sent[i].data, sizeof(h));
        if (h.type == type) {
            n++;
        }
    }
    return n;
}

static const sent_t *reply_on(int tag)
{
    for (int i = 0; i < nsent; ++i) {
        if (sent[i].tag == tag) {
            return &sent[i];
        }
    }
    return NULL;
}

/* The record was refused and answered: one ERROR notice to the origin,
 * an empty reply where one is awaited, the window as it was, the op
 * counted (a fence waits for it). */
static void assert_refused(const rec_t *r, size_t used)
{
    assert_int_equal(used, rec_len(r));
    assert_int_equal(notices(SRC, MCA_OSC_HYBRID_HDR_ERROR), 1);
    if (MCA_OSC_HYBRID_HDR_GET == r->h.type || MCA_OSC_HYBRID_HDR_GACC == r->h.type ||
        MCA_OSC_HYBRID_HDR_CAS == r->h.type) {
        const sent_t *s = reply_on(r->h.reply_tag);
        assert_non_null(s);
        assert_int_equal(s->len, 0);
        assert_int_equal(s->dst, SRC);
    }
    assert_true(win_untouched());
    /* separate put data are counted once they are in */
    if (MCA_OSC_HYBRID_HDR_PUT == r->h.type && (r->h.flags & MCA_OSC_HYBRID_FLAG_DATA_FOLLOWS)) {
        assert_int_equal(m->ops_done, 0);
    } else {
        assert_int_equal(m->ops_done, 1);
    }
}

/* The record could not be framed or answered: the target stops (0), the
 * window as it was, nothing sent. */
static void assert_fatal(size_t used)
{
    assert_int_equal(used, 0);
    assert_true(win_untouched());
    assert_int_equal(nsent, 0);
}

static int32_t dt_code(MPI_Datatype d)
{
    return MPI_Type_c2f(d);
}

static int32_t op_code(MPI_Op o)
{
    return MPI_Op_c2f(o);
}

/* ---- valid records ---- */

static void test_put_inline(void **state)
{
    rec_t r;

    (void) state;
    rec_init(&r, MCA_OSC_HYBRID_HDR_PUT);
    r.h.disp = 10;
    rec_seg(&r, 0, 8);
    rec_seg(&r, 100, 16);
    rec_payload_pattern(&r, 24);
    assert_int_equal(feed(&r), rec_len(&r));
    assert_int_equal(notices(SRC, MCA_OSC_HYBRID_HDR_ERROR), 0);
    assert_memory_equal(win + 10, r.pl, 8);
    assert_memory_equal(win + 110, r.pl + 8, 16);
    assert_int_equal(m->ops_done, 1);
}

static void test_get(void **state)
{
    rec_t r;
    const sent_t *s;

    (void) state;
    /* one segment */
    rec_init(&r, MCA_OSC_HYBRID_HDR_GET);
    r.h.reply_tag = TAG_R;
    rec_seg(&r, 40, 100);
    assert_int_equal(feed(&r), rec_len(&r));
    s = reply_on(TAG_R);
    assert_non_null(s);
    assert_int_equal(s->len, 100);
    assert_memory_equal(s->data, win + 40, 100);
    /* three segments, with a displacement unit */
    m->disp_unit = 4;
    rec_init(&r, MCA_OSC_HYBRID_HDR_GET);
    r.h.reply_tag = TAG_R + 1;
    r.h.disp = 2;
    rec_seg(&r, 0, 3);
    rec_seg(&r, 20, 5);
    rec_seg(&r, 240, 8);
    assert_int_equal(feed(&r), rec_len(&r));
    s = reply_on(TAG_R + 1);
    assert_non_null(s);
    assert_int_equal(s->len, 16);
    assert_memory_equal(s->data, win + 8, 3);
    assert_memory_equal(s->data + 3, win + 28, 5);
    assert_memory_equal(s->data + 8, win + 248, 8);
    assert_int_equal(notices(SRC, MCA_OSC_HYBRID_HDR_ERROR), 0);
    assert_true(win_untouched());
    assert_int_equal(m->ops_done, 2);
}

static void test_acc_and_gacc(void **state)
{
    rec_t r;
    int32_t add[4] = {1, 2, 3, 4}, before[4], after[4];
    const sent_t *s;

    (void) state;
    memcpy(before, win + 64, sizeof(before));
    rec_init(&r, MCA_OSC_HYBRID_HDR_ACC);
    r.h.op = op_code(MPI_SUM);
    r.h.dt = dt_code(MPI_INT);
    rec_seg(&r, 64, 8);
    rec_seg(&r, 72, 8);
    rec_payload(&r, add, sizeof(add));
    assert_int_equal(feed(&r), rec_len(&r));
    memcpy(after, win + 64, sizeof(after));
    for (int i = 0; i < 4; ++i) {
        assert_int_equal(after[i], before[i] + add[i]);
    }
    /* get_accumulate: the old values come back */
    rec_init(&r, MCA_OSC_HYBRID_HDR_GACC);
    r.h.op = op_code(MPI_SUM);
    r.h.dt = dt_code(MPI_INT);
    r.h.reply_tag = TAG_R;
    rec_seg(&r, 64, 16);
    rec_payload(&r, add, sizeof(add));
    assert_int_equal(feed(&r), rec_len(&r));
    s = reply_on(TAG_R);
    assert_non_null(s);
    assert_int_equal(s->len, 16);
    assert_memory_equal(s->data, after, 16);
    /* MPI_NO_OP carries no payload and changes nothing */
    rec_init(&r, MCA_OSC_HYBRID_HDR_GACC);
    r.h.op = op_code(MPI_NO_OP);
    r.h.dt = dt_code(MPI_INT);
    r.h.reply_tag = TAG_R + 1;
    rec_seg(&r, 64, 16);
    memcpy(after, win + 64, sizeof(after));
    assert_int_equal(feed(&r), rec_len(&r));
    s = reply_on(TAG_R + 1);
    assert_non_null(s);
    assert_int_equal(s->len, 16);
    assert_memory_equal(s->data, after, 16);
    assert_memory_equal(win + 64, after, 16);
    assert_int_equal(notices(SRC, MCA_OSC_HYBRID_HDR_ERROR), 0);
    assert_int_equal(m->ops_done, 3);
}

/* a pair type with a hole: MPI_DOUBLE_INT (12 bytes of data, extent 16) */
static void test_acc_pair_type(void **state)
{
    rec_t r;
    struct {
        double d;
        int i;
    } cur = {1.5, 7}, in = {2.5, 3};
    unsigned char packed[12];

    (void) state;
    memcpy(win + 32, &cur.d, 8);
    memcpy(win + 40, &cur.i, 4);
    memcpy(packed, &in.d, 8);
    memcpy(packed + 8, &in.i, 4);
    rec_init(&r, MCA_OSC_HYBRID_HDR_ACC);
    r.h.op = op_code(MPI_MAXLOC);
    r.h.dt = dt_code(MPI_DOUBLE_INT);
    rec_seg(&r, 32, 12);
    rec_payload(&r, packed, 12);
    assert_int_equal(feed(&r), rec_len(&r));
    assert_int_equal(notices(SRC, MCA_OSC_HYBRID_HDR_ERROR), 0);
    memcpy(&cur.d, win + 32, 8);
    memcpy(&cur.i, win + 40, 4);
    assert_true(2.5 == cur.d);
    assert_int_equal(cur.i, 3);
}

static void test_cas(void **state)
{
    rec_t r;
    int64_t cur, swap = 0x1122334455667788LL, cmp;
    const sent_t *s;

    (void) state;
    memcpy(&cur, win + 16, 8);
    cmp = cur;
    rec_init(&r, MCA_OSC_HYBRID_HDR_CAS);
    r.h.dt = dt_code(MPI_INT64_T);
    r.h.reply_tag = TAG_R;
    rec_seg(&r, 16, 8);
    rec_payload(&r, &swap, 8);
    rec_payload(&r, &cmp, 8);
    assert_int_equal(feed(&r), rec_len(&r));
    s = reply_on(TAG_R);
    assert_non_null(s);
    assert_int_equal(s->len, 8);
    assert_memory_equal(s->data, &cur, 8);
    assert_memory_equal(win + 16, &swap, 8);
    assert_int_equal(notices(SRC, MCA_OSC_HYBRID_HDR_ERROR), 0);
}

/* a put whose data come as a message of their own */
static void test_put_data_follows(void **state)
{
    rec_t r;
    unsigned char data[40];

    (void) state;
    for (int i = 0; i < 40; ++i) {
        data[i] = (unsigned char) (0x5a ^ i);
    }
    rec_init(&r, MCA_OSC_HYBRID_HDR_PUT);
    r.h.flags = MCA_OSC_HYBRID_FLAG_DATA_FOLLOWS;
    r.h.reply_tag = TAG_D;
    rec_seg(&r, 0, 10);
    rec_seg(&r, 200, 30);
    assert_int_equal(feed(&r), rec_len(&r));
    assert_int_equal(nrecvd, 1);
    assert_int_equal(recvd[0].len, 40);
    assert_int_equal(recvd[0].src, SRC);
    assert_int_equal(recvd[0].tag, TAG_D);
    memcpy(recvd[0].buf, data, 40);
    recvd[0].req->req_complete = REQUEST_COMPLETED;
    run_pend();
    assert_memory_equal(win, data, 10);
    assert_memory_equal(win + 200, data + 10, 30);
    assert_int_equal(m->ops_done, 1);
    assert_int_equal(m->tdata_pending, 0);
    assert_int_equal(notices(SRC, MCA_OSC_HYBRID_HDR_ERROR), 0);
}

static void test_lock_flush_unlock(void **state)
{
    rec_t r;

    (void) state;
    rec_init(&r, MCA_OSC_HYBRID_HDR_LOCK);
    r.h.arg = MPI_LOCK_EXCLUSIVE;
    assert_int_equal(feed(&r), 48);
    assert_int_equal(notices(SRC, MCA_OSC_HYBRID_HDR_LOCK_ACK), 1);
    assert_int_equal(m->lk_excl, SRC);
    /* a shared request of another rank waits */
    rec_init(&r, MCA_OSC_HYBRID_HDR_LOCK);
    r.h.arg = MPI_LOCK_SHARED;
    assert_int_equal(feed_bytes(2, (const unsigned char *) &r.h, 48), 48);
    assert_int_equal(notices(2, MCA_OSC_HYBRID_HDR_LOCK_ACK), 0);
    rec_init(&r, MCA_OSC_HYBRID_HDR_FLUSH);
    assert_int_equal(feed(&r), 48);
    assert_int_equal(notices(SRC, MCA_OSC_HYBRID_HDR_FLUSH_ACK), 1);
    rec_init(&r, MCA_OSC_HYBRID_HDR_UNLOCK);
    assert_int_equal(feed(&r), 48);
    run_pend();
    assert_int_equal(notices(SRC, MCA_OSC_HYBRID_HDR_UNLOCK_ACK), 1);
    assert_int_equal(notices(2, MCA_OSC_HYBRID_HDR_LOCK_ACK), 1);
    assert_int_equal(m->lk_excl, -1);
    assert_int_equal(m->lk_shared, 1);
    rec_init(&r, MCA_OSC_HYBRID_HDR_UNLOCK);
    assert_int_equal(feed_bytes(2, (const unsigned char *) &r.h, 48), 48);
    run_pend();
    assert_int_equal(m->lk_shared, 0);
    assert_int_equal(notices(SRC, MCA_OSC_HYBRID_HDR_ERROR), 0);
    assert_int_equal(notices(2, MCA_OSC_HYBRID_HDR_ERROR), 0);
}

/* acknowledgements and notices this process asked for */
static void test_acks_and_notices(void **state)
{
    rec_t r;

    (void) state;
    m->lock_req[SRC] = 1;
    m->unlock_req[SRC] = 1;
    m->flush_req[SRC] = 2;
    rec_init(&r, MCA_OSC_HYBRID_HDR_LOCK_ACK);
    assert_int_equal(feed(&r), 48);
    rec_init(&r, MCA_OSC_HYBRID_HDR_UNLOCK_ACK);
    assert_int_equal(feed(&r), 48);
    rec_init(&r, MCA_OSC_HYBRID_HDR_FLUSH_ACK);
    assert_int_equal(feed(&r), 48);
    assert_int_equal(feed(&r), 48);
    rec_init(&r, MCA_OSC_HYBRID_HDR_POST);
    assert_int_equal(feed(&r), 48);
    rec_init(&r, MCA_OSC_HYBRID_HDR_COMPLETE);
    assert_int_equal(feed(&r), 48);
    rec_init(&r, MCA_OSC_HYBRID_HDR_ERROR);
    r.h.arg = OMPI_ERR_RMA_RANGE;
    assert_int_equal(feed(&r), 48);
    assert_int_equal(m->lock_ack[SRC], 1);
    assert_int_equal(m->unlock_ack[SRC], 1);
    assert_int_equal(m->flush_ack[SRC], 2);
    assert_int_equal(m->posts_recv[SRC], 1);
    assert_int_equal(m->completes_recv, 1);
    assert_int_equal(m->error, OMPI_ERR_RMA_RANGE);
    assert_int_equal(nsent, 0);
}

/* several records in one message, the last one without its padding */
static void test_gathered(void **state)
{
    unsigned char msg[1024];
    size_t n = 0, used, off = 0;
    rec_t a, b, c;
    int steps = 0;

    (void) state;
    rec_init(&a, MCA_OSC_HYBRID_HDR_PUT);
    rec_seg(&a, 0, 5); /* 48 + 16 + 5: 11 bytes of padding */
    rec_payload_pattern(&a, 5);
    rec_init(&b, MCA_OSC_HYBRID_HDR_FLUSH);
    rec_init(&c, MCA_OSC_HYBRID_HDR_PUT);
    rec_seg(&c, 50, 3);
    rec_payload_pattern(&c, 3);
    n += rec_bytes(&a, msg + n);
    n += rec_bytes(&b, msg + n);
    n += rec_bytes(&c, msg + n);
    n -= 13; /* c is 48 + 16 + 3 = 67 bytes, 13 of padding */
    while (off < n) {
        used = mca_osc_hybrid_handle_am(m, SRC, (char *) msg + off, n - off);
        assert_true(used > 0);
        off += used;
        steps++;
    }
    assert_int_equal(off, n);
    assert_int_equal(steps, 3);
    assert_memory_equal(win, a.pl, 5);
    assert_memory_equal(win + 50, c.pl, 3);
    assert_int_equal(notices(SRC, MCA_OSC_HYBRID_HDR_FLUSH_ACK), 1);
    assert_int_equal(m->ops_done, 2);
}

/* dynamic window: an access may span two adjacent attached regions */
static void test_dynamic(void **state)
{
    rec_t r;
    uintptr_t base = (uintptr_t) win;

    (void) state;
    m->flavor = MPI_WIN_FLAVOR_DYNAMIC;
    m->regions = xcalloc(4, sizeof(*m->regions));
    m->maxregions = 4;
    m->regions[0].base = win + 128;
    m->regions[0].len = 128;
    m->regions[1].base = win;
    m->regions[1].len = 100;
    m->regions[2].base = win + 100;
    m->regions[2].len = 28;
    m->nregions = 3;
    rec_init(&r, MCA_OSC_HYBRID_HDR_PUT);
    r.h.disp = (int64_t) base;
    rec_seg(&r, 90, 60); /* three regions */
    rec_payload_pattern(&r, 60);
    assert_int_equal(feed(&r), rec_len(&r));
    assert_int_equal(notices(SRC, MCA_OSC_HYBRID_HDR_ERROR), 0);
    assert_memory_equal(win + 90, r.pl, 60);
    /* one byte past the last region */
    m->nregions = 2;
    win_pattern(win, WIN);
    nsent = 0;
    m->ops_done = 0;
    rec_init(&r, MCA_OSC_HYBRID_HDR_PUT);
    r.h.disp = (int64_t) base;
    rec_seg(&r, 95, 10);
    rec_payload_pattern(&r, 10);
    assert_refused(&r, feed(&r));
    /* addresses that wrap around */
    {
        static const int64_t disps[] = {INT64_MAX, INT64_MIN, -1};
        static const int64_t offs[] = {1, INT64_MIN, INT64_MAX, -1};
        for (size_t i = 0; i < sizeof(disps) / sizeof(disps[0]); ++i) {
            for (size_t j = 0; j < sizeof(offs) / sizeof(offs[0]); ++j) {
                nsent = 0;
                m->ops_done = 0;
                rec_init(&r, MCA_OSC_HYBRID_HDR_GET);
                r.h.reply_tag = TAG_R;
                r.h.disp = disps[i];
                rec_seg(&r, offs[j], 4);
                assert_refused(&r, feed(&r));
            }
        }
    }
}

/* ---- malformed records: the reported defects ---- */

/* segment lengths that do not add up, payload_len == stream_len: a
 * multi-segment get used to copy 128 bytes into a 1-byte reply */
static void test_get_segments_do_not_add_up(void **state)
{
    rec_t r;

    (void) state;
    rec_init(&r, MCA_OSC_HYBRID_HDR_GET);
    r.h.reply_tag = TAG_R;
    rec_seg(&r, 0, 64);
    rec_seg(&r, 64, 64);
    r.h.stream_len = 1;
    rec_payload_pattern(&r, 1);
    assert_refused(&r, feed(&r));
}

/* ... a get_accumulate overflowed its fetch buffer */
static void test_gacc_segments_do_not_add_up(void **state)
{
    rec_t r;

    (void) state;
    rec_init(&r, MCA_OSC_HYBRID_HDR_GACC);
    r.h.op = op_code(MPI_SUM);
    r.h.dt = dt_code(MPI_INT);
    r.h.reply_tag = TAG_R;
    rec_seg(&r, 0, 64);
    rec_seg(&r, 64, 64);
    r.h.stream_len = 4;
    rec_payload_pattern(&r, 4);
    assert_refused(&r, feed(&r));
}

/* ... an accumulate and an inline put read past the payload */
static void test_acc_segments_do_not_add_up(void **state)
{
    rec_t r;

    (void) state;
    rec_init(&r, MCA_OSC_HYBRID_HDR_ACC);
    r.h.op = op_code(MPI_SUM);
    r.h.dt = dt_code(MPI_INT);
    rec_seg(&r, 0, 64);
    rec_seg(&r, 64, 64);
    r.h.stream_len = 4;
    rec_payload_pattern(&r, 4);
    assert_refused(&r, feed(&r));
}

static void test_put_segments_do_not_add_up(void **state)
{
    rec_t r;

    (void) state;
    rec_init(&r, MCA_OSC_HYBRID_HDR_PUT);
    rec_seg(&r, 0, 100);
    rec_seg(&r, 100, 100);
    r.h.stream_len = 8;
    rec_payload_pattern(&r, 8);
    assert_refused(&r, feed(&r));
}

/* a get_accumulate with a real op and no payload reached the reduction
 * with a NULL source */
static void test_gacc_op_without_payload(void **state)
{
    rec_t r;

    (void) state;
    rec_init(&r, MCA_OSC_HYBRID_HDR_GACC);
    r.h.op = op_code(MPI_SUM);
    r.h.dt = dt_code(MPI_INT);
    r.h.reply_tag = TAG_R;
    rec_seg(&r, 0, 8);
    assert_refused(&r, feed(&r));
    /* MPI_REPLACE likewise */
    nsent = 0;
    m->ops_done = 0;
    r.h.op = op_code(MPI_REPLACE);
    assert_refused(&r, feed(&r));
}

/* a predefined datatype of size 0 (MPI_LB, MPI_UB in Open MPI 4.1) */
static void test_dt_of_size_zero(void **state)
{
    rec_t r;
    int32_t code;
    int found = 0;

    (void) state;
    for (code = 0; code < 200; ++code) {
        MPI_Datatype d = MPI_Type_f2c(code);
        if (NULL == d || MPI_DATATYPE_NULL == d || !ompi_datatype_is_predefined(d) ||
            0 != d->super.size) {
            continue;
        }
        found++;
        for (int t = 0; t < 3; ++t) {
            static const int types[3] = {MCA_OSC_HYBRID_HDR_ACC, MCA_OSC_HYBRID_HDR_GACC,
                                         MCA_OSC_HYBRID_HDR_CAS};
            nsent = 0;
            m->ops_done = 0;
            rec_init(&r, types[t]);
            r.h.op = op_code(MPI_REPLACE);
            r.h.dt = code;
            r.h.reply_tag = TAG_R;
            rec_seg(&r, 0, 8);
            rec_payload_pattern(&r, 8);
            assert_refused(&r, feed(&r));
        }
    }
    if (0 == found) {
        skip(); /* Open MPI without MPI_LB/MPI_UB */
    }
}

/* an op that is not defined on the type (MPI_MAX on a complex type) */
static void test_op_undefined_on_type(void **state)
{
    rec_t r;

    (void) state;
    rec_init(&r, MCA_OSC_HYBRID_HDR_ACC);
    r.h.op = op_code(MPI_MAX);
    r.h.dt = dt_code(MPI_C_DOUBLE_COMPLEX);
    rec_seg(&r, 0, 32);
    rec_payload_pattern(&r, 32);
    assert_refused(&r, feed(&r));
    /* a logical op on a floating type */
    nsent = 0;
    m->ops_done = 0;
    r.h.op = op_code(MPI_BXOR);
    r.h.dt = dt_code(MPI_DOUBLE);
    assert_refused(&r, feed(&r));
}

static void test_bad_dt_and_op_codes(void **state)
{
    static const int32_t bad[] = {-1, -100000, 100000, INT32_MAX, INT32_MIN};
    rec_t r;

    (void) state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); ++i) {
        for (int which = 0; which < 2; ++which) {
            nsent = 0;
            m->ops_done = 0;
            rec_init(&r, MCA_OSC_HYBRID_HDR_ACC);
            r.h.op = which ? bad[i] : op_code(MPI_SUM);
            r.h.dt = which ? dt_code(MPI_INT) : bad[i];
            rec_seg(&r, 0, 8);
            rec_payload_pattern(&r, 8);
            assert_refused(&r, feed(&r));
        }
    }
    /* MPI_DATATYPE_NULL and MPI_OP_NULL */
    nsent = 0;
    m->ops_done = 0;
    r.h.op = op_code(MPI_SUM);
    r.h.dt = dt_code(MPI_DATATYPE_NULL);
    assert_refused(&r, feed(&r));
    nsent = 0;
    m->ops_done = 0;
    r.h.op = op_code(MPI_OP_NULL);
    r.h.dt = dt_code(MPI_INT);
    assert_refused(&r, feed(&r));
}

/* segments that end inside an element: refused before anything is
 * applied (the first segment used to be applied already) */
static void test_acc_partial_element(void **state)
{
    rec_t r;

    (void) state;
    rec_init(&r, MCA_OSC_HYBRID_HDR_ACC);
    r.h.op = op_code(MPI_SUM);
    r.h.dt = dt_code(MPI_INT);
    rec_seg(&r, 0, 8);
    rec_seg(&r, 16, 5);
    rec_payload_pattern(&r, 13);
    assert_refused(&r, feed(&r));
    /* a pair type cut inside an element */
    nsent = 0;
    m->ops_done = 0;
    rec_init(&r, MCA_OSC_HYBRID_HDR_ACC);
    r.h.op = op_code(MPI_MAXLOC);
    r.h.dt = dt_code(MPI_DOUBLE_INT);
    rec_seg(&r, 0, 12);
    rec_seg(&r, 16, 8);
    rec_payload_pattern(&r, 20);
    assert_refused(&r, feed(&r));
}

static void test_cas_malformed(void **state)
{
    rec_t r;

    (void) state;
    /* two segments */
    rec_init(&r, MCA_OSC_HYBRID_HDR_CAS);
    r.h.dt = dt_code(MPI_INT);
    r.h.reply_tag = TAG_R;
    rec_seg(&r, 0, 4);
    rec_seg(&r, 8, 4);
    rec_payload_pattern(&r, 8);
    assert_refused(&r, feed(&r));
    /* a payload of one element */
    nsent = 0;
    m->ops_done = 0;
    rec_init(&r, MCA_OSC_HYBRID_HDR_CAS);
    r.h.dt = dt_code(MPI_INT);
    r.h.reply_tag = TAG_R;
    rec_seg(&r, 0, 4);
    rec_payload_pattern(&r, 4);
    assert_refused(&r, feed(&r));
    /* a type larger than the reply buffer */
    nsent = 0;
    m->ops_done = 0;
    rec_init(&r, MCA_OSC_HYBRID_HDR_CAS);
    r.h.dt = dt_code(MPI_C_LONG_DOUBLE_COMPLEX);
    r.h.reply_tag = TAG_R;
    rec_seg(&r, 0, 32);
    rec_payload_pattern(&r, 64);
    assert_refused(&r, feed(&r));
}

static void test_huge_displacements(void **state)
{
    static const int64_t disps[] = {INT64_MAX, INT64_MIN, INT64_MAX / 4 + 1, -1, WIN};
    static const int64_t offs[] = {0, INT64_MAX, INT64_MIN, -WIN, WIN + 3};
    rec_t r;

    (void) state;
    m->disp_unit = 4;
    for (size_t i = 0; i < sizeof(disps) / sizeof(disps[0]); ++i) {
        for (size_t j = 0; j < sizeof(offs) / sizeof(offs[0]); ++j) {
            nsent = 0;
            m->ops_done = 0;
            rec_init(&r, MCA_OSC_HYBRID_HDR_GET);
            r.h.reply_tag = TAG_R;
            r.h.disp = disps[i];
            rec_seg(&r, offs[j], 2);
            assert_refused(&r, feed(&r));
        }
    }
    /* a length that wraps around */
    nsent = 0;
    m->ops_done = 0;
    m->disp_unit = 1;
    rec_init(&r, MCA_OSC_HYBRID_HDR_GET);
    r.h.reply_tag = TAG_R;
    r.h.disp = 16;
    rec_seg(&r, 0, UINT64_MAX - 7);
    assert_refused(&r, feed(&r));
}

/* a segment of length 0 names no byte, but its offset is still checked */
static void test_empty_segment(void **state)
{
    rec_t r;

    (void) state;
    rec_init(&r, MCA_OSC_HYBRID_HDR_PUT);
    rec_seg(&r, 0, 4);
    rec_seg(&r, INT64_MAX / 2, 0);
    rec_payload_pattern(&r, 4);
    assert_refused(&r, feed(&r));
    /* a data request without segments */
    nsent = 0;
    m->ops_done = 0;
    rec_init(&r, MCA_OSC_HYBRID_HDR_GET);
    r.h.reply_tag = TAG_R;
    assert_refused(&r, feed(&r));
}

static void test_bad_flags(void **state)
{
    rec_t r;

    (void) state;
    /* DATA_FOLLOWS on a get */
    rec_init(&r, MCA_OSC_HYBRID_HDR_GET);
    r.h.flags = MCA_OSC_HYBRID_FLAG_DATA_FOLLOWS;
    r.h.reply_tag = TAG_R;
    rec_seg(&r, 0, 4);
    assert_refused(&r, feed(&r));
    /* an unknown flag */
    nsent = 0;
    m->ops_done = 0;
    rec_init(&r, MCA_OSC_HYBRID_HDR_PUT);
    r.h.flags = 0x80;
    rec_seg(&r, 0, 4);
    rec_payload_pattern(&r, 4);
    assert_refused(&r, feed(&r));
}

static void test_payload_rules(void **state)
{
    rec_t r;

    (void) state;
    /* a get with payload */
    rec_init(&r, MCA_OSC_HYBRID_HDR_GET);
    r.h.reply_tag = TAG_R;
    rec_seg(&r, 0, 4);
    rec_payload_pattern(&r, 16);
    assert_refused(&r, feed(&r));
    /* a put with separate data and a payload */
    nsent = 0;
    m->ops_done = 0;
    rec_init(&r, MCA_OSC_HYBRID_HDR_PUT);
    r.h.flags = MCA_OSC_HYBRID_FLAG_DATA_FOLLOWS;
    r.h.reply_tag = TAG_D;
    rec_seg(&r, 0, 4);
    rec_payload_pattern(&r, 4);
    assert_refused(&r, feed(&r));
    /* its data are still taken off the wire (else the origin's send
     * never completes), but go nowhere */
    assert_int_equal(nrecvd, 1);
    assert_int_equal(recvd[0].len, 4);
    assert_int_equal(recvd[0].tag, TAG_D);
    memset(recvd[0].buf, 0xee, 4);
    recvd[0].req->req_complete = REQUEST_COMPLETED;
    run_pend();
    assert_true(win_untouched());
    assert_int_equal(m->ops_done, 1);
    assert_int_equal(m->tdata_pending, 0);
    /* an accumulate whose payload is short of its segments */
    nsent = 0;
    m->ops_done = 0;
    rec_init(&r, MCA_OSC_HYBRID_HDR_ACC);
    r.h.op = op_code(MPI_SUM);
    r.h.dt = dt_code(MPI_INT);
    rec_seg(&r, 0, 8);
    rec_payload_pattern(&r, 4);
    assert_refused(&r, feed(&r));
    /* a get larger than any request may be */
    nsent = 0;
    m->ops_done = 0;
    rec_init(&r, MCA_OSC_HYBRID_HDR_GET);
    r.h.reply_tag = TAG_R;
    for (int i = 0; i < 8; ++i) {
        rec_seg(&r, 0, (uint64_t) 1 << 28);
    }
    assert_refused(&r, feed(&r));
}

/* ---- records that cannot be framed or answered: fatal ---- */

/* a valid message of three records cut at every byte */
static void test_truncation_at_every_byte(void **state)
{
    unsigned char msg[1024];
    size_t n = 0, bounds[3], ends[3];
    rec_t a, b, c;

    (void) state;
    rec_init(&a, MCA_OSC_HYBRID_HDR_ACC);
    a.h.op = op_code(MPI_SUM);
    a.h.dt = dt_code(MPI_INT);
    rec_seg(&a, 0, 8);
    rec_seg(&a, 12, 4);
    rec_payload_pattern(&a, 12);
    rec_init(&b, MCA_OSC_HYBRID_HDR_GET);
    b.h.reply_tag = TAG_R;
    rec_seg(&b, 100, 20);
    rec_seg(&b, 140, 20);
    rec_init(&c, MCA_OSC_HYBRID_HDR_PUT);
    rec_seg(&c, 200, 7);
    rec_payload_pattern(&c, 7);
    bounds[0] = 0;
    n += rec_bytes(&a, msg + n);
    ends[0] = n - 4; /* 48 + 32 + 12 = 92, padded 96 */
    bounds[1] = n;
    n += rec_bytes(&b, msg + n);
    ends[1] = n;
    bounds[2] = n;
    n += rec_bytes(&c, msg + n);
    ends[2] = n - 9; /* 48 + 16 + 7 = 71, padded 80 */
    for (size_t cut = 1; cut < n; ++cut) {
        size_t off = 0;
        int k = 0;
        teardown(NULL);
        setup(NULL);
        while (off < cut) {
            size_t used = feed_bytes(SRC, msg + off, cut - off);
            /* a record that fits (its padding may be missing) is taken whole;
             * one cut short of its own bytes stops the message */
            if (cut >= ends[k]) {
                assert_true(used > 0);
            } else {
                assert_int_equal(used, 0);
                break;
            }
            off += used;
            k++;
        }
        assert_true(off == cut || off == bounds[k]);
    }
}

static void test_bad_framing(void **state)
{
    rec_t r;
    unsigned char buf[sizeof(rec_t) + 16];
    size_t n;

    (void) state;
    /* fewer bytes than a header */
    rec_init(&r, MCA_OSC_HYBRID_HDR_FLUSH);
    n = rec_bytes(&r, buf);
    assert_fatal(feed_bytes(SRC, buf, 47));
    assert_fatal(feed_bytes(SRC, buf, 1));
    /* unknown types */
    for (int t = 0; t < 256; t += (t < 20 ? 1 : 17)) {
        if (t >= MCA_OSC_HYBRID_HDR_PUT && t < MCA_OSC_HYBRID_HDR_TYPE_MAX) {
            continue;
        }
        rec_init(&r, t);
        n = rec_bytes(&r, buf);
        assert_fatal(feed_bytes(SRC, buf, n));
    }
    /* nseg beyond the message, in every size up to the largest */
    {
        static const uint32_t nsegs[] = {2, 3, 1000, 0x0fffffff, 0x10000000, UINT32_MAX};
        for (size_t i = 0; i < sizeof(nsegs) / sizeof(nsegs[0]); ++i) {
            rec_init(&r, MCA_OSC_HYBRID_HDR_GET);
            r.h.reply_tag = TAG_R;
            rec_seg(&r, 0, 4);
            r.h.nseg = nsegs[i];
            n = rec_bytes(&r, buf);
            assert_fatal(feed_bytes(SRC, buf, n));
        }
    }
    /* payload_len beyond the message, up to the largest */
    {
        static const uint64_t pls[] = {17, 100, (uint64_t) 1 << 32, UINT64_MAX - 63, UINT64_MAX};
        for (size_t i = 0; i < sizeof(pls) / sizeof(pls[0]); ++i) {
            rec_init(&r, MCA_OSC_HYBRID_HDR_PUT);
            rec_seg(&r, 0, 4);
            rec_payload_pattern(&r, 4);
            r.h.payload_len = pls[i];
            r.h.stream_len = pls[i];
            n = rec_bytes(&r, buf);
            assert_fatal(feed_bytes(SRC, buf, n));
        }
    }
    /* a sender rank outside the window */
    rec_init(&r, MCA_OSC_HYBRID_HDR_FLUSH);
    n = rec_bytes(&r, buf);
    assert_fatal(feed_bytes(-1, buf, n));
    assert_fatal(feed_bytes(NRANK, buf, n));
}

/* control records: a refusal would leave the origin waiting for its
 * answer, so a malformed one ends the job */
static void test_bad_control_records(void **state)
{
    rec_t r;
    unsigned char buf[sizeof(rec_t) + 16];
    size_t n;

    (void) state;
    /* a lock type that is neither shared nor exclusive */
    rec_init(&r, MCA_OSC_HYBRID_HDR_LOCK);
    r.h.arg = 77;
    assert_fatal(feed(&r));
    assert_int_equal(m->lk_shared, 0);
    assert_int_equal(m->lk_excl, -1);
    /* an unlock of a lock that was never granted */
    rec_init(&r, MCA_OSC_HYBRID_HDR_UNLOCK);
    assert_fatal(feed(&r));
    /* ... nor does it steal another rank's shared lock */
    rec_init(&r, MCA_OSC_HYBRID_HDR_LOCK);
    r.h.arg = MPI_LOCK_SHARED;
    n = rec_bytes(&r, buf);
    assert_int_equal(feed_bytes(2, buf, n), 48);
    assert_int_equal(m->lk_shared, 1);
    nsent = 0;
    rec_init(&r, MCA_OSC_HYBRID_HDR_UNLOCK);
    assert_fatal(feed(&r));
    assert_int_equal(m->lk_shared, 1);
    /* a second lock request of the same origin */
    rec_init(&r, MCA_OSC_HYBRID_HDR_LOCK);
    r.h.arg = MPI_LOCK_SHARED;
    n = rec_bytes(&r, buf);
    assert_fatal(feed_bytes(2, buf, n));
    /* acknowledgements nobody asked for */
    rec_init(&r, MCA_OSC_HYBRID_HDR_LOCK_ACK);
    assert_fatal(feed(&r));
    rec_init(&r, MCA_OSC_HYBRID_HDR_UNLOCK_ACK);
    assert_fatal(feed(&r));
    rec_init(&r, MCA_OSC_HYBRID_HDR_FLUSH_ACK);
    assert_fatal(feed(&r));
    assert_int_equal(m->lock_ack[SRC] + m->unlock_ack[SRC] + m->flush_ack[SRC], 0);
    /* a flush with segments, payload or flags */
    rec_init(&r, MCA_OSC_HYBRID_HDR_FLUSH);
    rec_seg(&r, 0, 4);
    assert_fatal(feed(&r));
    rec_init(&r, MCA_OSC_HYBRID_HDR_FLUSH);
    rec_payload_pattern(&r, 16);
    assert_fatal(feed(&r));
    rec_init(&r, MCA_OSC_HYBRID_HDR_COMPLETE);
    r.h.flags = MCA_OSC_HYBRID_FLAG_DATA_FOLLOWS;
    assert_fatal(feed(&r));
    assert_int_equal(m->completes_recv, 0);
}

/* a request whose answer cannot be addressed */
static void test_bad_reply_tags(void **state)
{
    static const int32_t tags[] = {0,
                                   -5,
                                   MCA_OSC_HYBRID_TAG_AM,
                                   MCA_OSC_HYBRID_TAG_REPLY - 1,
                                   MCA_OSC_HYBRID_TAG_REPLY + MCA_OSC_HYBRID_TAG_SPAN,
                                   MCA_OSC_HYBRID_TAG_DATA,
                                   INT32_MAX};
    rec_t r;

    (void) state;
    for (size_t i = 0; i < sizeof(tags) / sizeof(tags[0]); ++i) {
        rec_init(&r, MCA_OSC_HYBRID_HDR_GET);
        r.h.reply_tag = tags[i];
        rec_seg(&r, 0, 4);
        assert_fatal(feed(&r));
    }
    /* put data announced on a reply tag */
    rec_init(&r, MCA_OSC_HYBRID_HDR_PUT);
    r.h.flags = MCA_OSC_HYBRID_FLAG_DATA_FOLLOWS;
    r.h.reply_tag = TAG_R;
    rec_seg(&r, 0, 4);
    assert_fatal(feed(&r));
    assert_int_equal(nrecvd, 0);
}

/* ---- random records ---- */

/* valid records of every type, then random bytes, fields and lengths
 * changed; each must be applied, refused or stop the message */
static void test_random(void **state)
{
    const int rounds = 3000;
    unsigned char buf[sizeof(rec_t) + 64] __attribute__((aligned(16)));
    int applied = 0, refused = 0, fatal = 0;

    (void) state;
    for (int it = 0; it < rounds; ++it) {
        rec_t r;
        size_t n, used;
        int kind = (int) (test_rnd() % 6);

        teardown(NULL);
        setup(NULL);
        m->lock_req[SRC] = m->unlock_req[SRC] = m->flush_req[SRC] = 1;
        rec_init(&r, MCA_OSC_HYBRID_HDR_PUT + kind);
        if (MCA_OSC_HYBRID_HDR_GET == r.h.type || MCA_OSC_HYBRID_HDR_GACC == r.h.type ||
            MCA_OSC_HYBRID_HDR_CAS == r.h.type) {
            r.h.reply_tag = TAG_R;
        }
        if (MCA_OSC_HYBRID_HDR_ACC == r.h.type || MCA_OSC_HYBRID_HDR_GACC == r.h.type ||
            MCA_OSC_HYBRID_HDR_CAS == r.h.type) {
            r.h.dt = dt_code(0 == test_rnd() % 2 ? MPI_INT : MPI_DOUBLE_INT);
        }
        if (MCA_OSC_HYBRID_HDR_ACC == r.h.type || MCA_OSC_HYBRID_HDR_GACC == r.h.type) {
            r.h.op = op_code(0 == test_rnd() % 2 ? MPI_SUM : MPI_NO_OP);
        }
        for (uint32_t s = 0, ns = 1 + test_rnd() % 4; s < ns && kind < 5; ++s) {
            rec_seg(&r, (int64_t) (test_rnd() % WIN), 1 + test_rnd() % 64);
        }
        if (MCA_OSC_HYBRID_HDR_PUT == r.h.type || MCA_OSC_HYBRID_HDR_ACC == r.h.type ||
            (MCA_OSC_HYBRID_HDR_GACC == r.h.type && 0 == test_rnd() % 2)) {
            rec_payload_pattern(&r, r.h.stream_len > 256 ? 256 : r.h.stream_len);
        }
        if (5 == kind) {
            r.h.arg = MPI_LOCK_SHARED;
        }
        n = rec_bytes(&r, buf);
        /* mutate, or not */
        switch (test_rnd() % 6) {
        case 0:
            for (int k = 0, nk = 1 + test_rnd() % 4; k < nk; ++k) {
                buf[test_rnd() % n] = (unsigned char) test_rnd();
            }
            break;
        case 1:
            ((hdr_t *) buf)->nseg = (uint32_t) test_rnd() % 8;
            break;
        case 2:
            ((hdr_t *) buf)->payload_len = test_rnd() % 2 ? test_rnd() % 512 : test_rnd();
            break;
        case 3:
            ((hdr_t *) buf)->stream_len = test_rnd() % 2 ? test_rnd() % 512 : test_rnd();
            break;
        case 4:
            n = 1 + test_rnd() % n;
            break;
        default:
            break;
        }
        used = feed_bytes(SRC, buf, n);
        assert_true(used <= n);
        assert_true(0 == used || used >= sizeof(hdr_t));
        if (0 == used) {
            fatal++;
        } else if (notices(SRC, MCA_OSC_HYBRID_HDR_ERROR) > 0) {
            refused++;
        } else {
            applied++;
        }
        run_pend();
    }
    /* every outcome was reached often */
    print_message("random records: %d applied, %d refused, %d fatal\n", applied, refused, fatal);
    assert_true(applied > rounds / 20);
    assert_true(refused > rounds / 20);
    assert_true(fatal > rounds / 20);
}

static int group_setup(void **state)
{
    int argc = 0;
    char **argv = NULL;

    (void) state;
    /* a crash is cmocka's to report, not Open MPI's stack trace handler's */
    setenv("OMPI_MCA_opal_signal", "", 0);
    /* (5.0's opal_init_util leaves the convertor's engines to opal_init) */
    if (OPAL_SUCCESS != tc_ompi_init_util(&argc, &argv) || OMPI_SUCCESS != ompi_datatype_init() ||
        OPAL_SUCCESS != mca_base_framework_open(&ompi_op_base_framework, 0) ||
        OMPI_SUCCESS != ompi_op_base_find_available(false, false) ||
        OMPI_SUCCESS != ompi_op_init()) {
        return -1;
    }
    /* MPI_Type_f2c and friends outside MPI_Init */
    ompi_mpi_param_check = false;
    (void) opal_show_help_add_dir(TEST_OSC_HYBRID_HELP_DIR);
    mca_pml.pml_isend = stub_isend;
    mca_pml.pml_irecv = stub_irecv;
    mca_osc_hybrid_component.slot_size = 32768;
    mca_osc_hybrid_component.aggregate_max = 4096;
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_put_inline, setup, teardown),
        cmocka_unit_test_setup_teardown(test_get, setup, teardown),
        cmocka_unit_test_setup_teardown(test_acc_and_gacc, setup, teardown),
        cmocka_unit_test_setup_teardown(test_acc_pair_type, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cas, setup, teardown),
        cmocka_unit_test_setup_teardown(test_put_data_follows, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lock_flush_unlock, setup, teardown),
        cmocka_unit_test_setup_teardown(test_acks_and_notices, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gathered, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dynamic, setup, teardown),
        cmocka_unit_test_setup_teardown(test_get_segments_do_not_add_up, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gacc_segments_do_not_add_up, setup, teardown),
        cmocka_unit_test_setup_teardown(test_acc_segments_do_not_add_up, setup, teardown),
        cmocka_unit_test_setup_teardown(test_put_segments_do_not_add_up, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gacc_op_without_payload, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dt_of_size_zero, setup, teardown),
        cmocka_unit_test_setup_teardown(test_op_undefined_on_type, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_dt_and_op_codes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_acc_partial_element, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cas_malformed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_huge_displacements, setup, teardown),
        cmocka_unit_test_setup_teardown(test_empty_segment, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_flags, setup, teardown),
        cmocka_unit_test_setup_teardown(test_payload_rules, setup, teardown),
        cmocka_unit_test_setup_teardown(test_truncation_at_every_byte, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_framing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_control_records, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_reply_tags, setup, teardown),
        cmocka_unit_test_setup_teardown(test_random, setup, teardown),
    };
    /* TEST_FILTER=name runs the tests whose name matches (cmocka's pattern) */
    if (NULL != getenv("TEST_FILTER")) {
        cmocka_set_test_filter(getenv("TEST_FILTER"));
    }
    return cmocka_run_group_tests(tests, group_setup, NULL);
}
