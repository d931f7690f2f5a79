/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_via_verbs_batch.c: the verbs provider's handling of one
 * ibv_poll_cq batch, without an RDMA device: work completions made by
 * hand go through vipl_verbs_take (the provider's source is included, so
 * its static functions are reachable) into their VIs' done queues and the
 * CQ's ring, which VipCQDone reports from in CQ order.  Checked: order
 * across VIs and queues, lengths, immediate data (network order on the
 * wire), an error completion breaking its VI, a completion of an unknown
 * queue pair dropped, a batch larger than the ring, and a destroyed VI
 * leaving the ring.  What needs a device (posting, ibv_poll_cq itself) is
 * not run here.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "vipl_verbs.c"

/* vipl.c (with every provider's table) is not linked: what the verbs
 * provider takes from it, unused here */
const vipl_ops_t *vipl_provider(const char *name)
{
    (void) name;
    return NULL;
}

void *vipl_host_mem_alloc(vipl_nic_t *nic, size_t len)
{
    (void) nic;
    (void) len;
    return NULL;
}

void vipl_host_mem_free(vipl_nic_t *nic, void *ptr)
{
    (void) nic;
    (void) ptr;
}

typedef struct batch_fixture {
    vipl_verbs_nic_t nic;
    vipl_verbs_vi_t *vis[2];
    vipl_verbs_vi_t a, b;
    struct ibv_qp qa, qb;
    vipl_verbs_cq_t cq;
} batch_fixture_t;

static void batch_setup(batch_fixture_t *f)
{
    memset(f, 0, sizeof(*f));
    pthread_mutex_init(&f->nic.lock, NULL);
    f->qa.qp_num = 100;
    f->qb.qp_num = 200;
    f->a.qp = &f->qa;
    f->b.qp = &f->qb;
    f->a.nic = f->b.nic = &f->nic;
    f->a.recv_cq = f->b.recv_cq = &f->cq;
    f->a.state = f->b.state = VIPL_STATE_CONNECTED;
    f->vis[0] = &f->a;
    f->vis[1] = &f->b;
    f->nic.vis = f->vis;
    f->nic.num_vis = 2;
    f->nic.cap_vis = 2;
}

static struct ibv_wc batch_wc(uint32_t qpn, vipl_desc_t *d, enum ibv_wc_status st, uint32_t len)
{
    struct ibv_wc wc;

    memset(&wc, 0, sizeof(wc));
    wc.qp_num = qpn;
    wc.wr_id = (uintptr_t) d;
    wc.status = st;
    wc.byte_len = len;
    return wc;
}

static void test_batch_order(void **state)
{
    batch_fixture_t f;
    vipl_desc_t r1, r2, r3, s1, *d;
    struct ibv_wc wc[5];
    vipl_verbs_vi_t *vi;
    bool is_recv;

    (void) state;
    batch_setup(&f);
    memset(&r1, 0, sizeof(r1));
    r2 = r3 = s1 = r1;
    r1.prov_ = r2.prov_ = r3.prov_ = VIPL_VERBS_RECV_MARK;
    wc[0] = batch_wc(100, &r1, IBV_WC_SUCCESS, 8);
    wc[0].wc_flags = IBV_WC_WITH_IMM;
    wc[0].imm_data = htonl(0x12345678u);
    wc[1] = batch_wc(100, &s1, IBV_WC_SUCCESS, 0);
    wc[2] = batch_wc(200, &r3, IBV_WC_SUCCESS, 16);
    wc[3] = batch_wc(100, &r2, IBV_WC_WR_FLUSH_ERR, 99);
    wc[4] = batch_wc(999, &r2, IBV_WC_SUCCESS, 1); /* no such queue pair */

    assert_int_equal(4, vipl_verbs_take(&f.nic, &f.cq, wc, 5));
    /* the ring in CQ order */
    assert_true(vipl_verbs_ready_pop(&f.cq, &vi, &is_recv));
    assert_ptr_equal(&f.a, vi);
    assert_true(is_recv);
    assert_true(vipl_verbs_ready_pop(&f.cq, &vi, &is_recv));
    assert_ptr_equal(&f.a, vi);
    assert_false(is_recv);
    assert_true(vipl_verbs_ready_pop(&f.cq, &vi, &is_recv));
    assert_ptr_equal(&f.b, vi);
    assert_true(is_recv);
    assert_true(vipl_verbs_ready_pop(&f.cq, &vi, &is_recv));
    assert_ptr_equal(&f.a, vi);
    assert_true(is_recv);
    assert_false(vipl_verbs_ready_pop(&f.cq, &vi, &is_recv));

    /* the VIs' queues */
    d = vipl_desc_pop(&f.a.rdone_head, &f.a.rdone_tail);
    assert_ptr_equal(&r1, d);
    assert_int_equal(VIPL_STATUS_DONE | VIPL_STATUS_IMMEDIATE, d->status);
    assert_int_equal(0x12345678u, d->imm_data);
    assert_int_equal(8, d->length);
    d = vipl_desc_pop(&f.a.rdone_head, &f.a.rdone_tail);
    assert_ptr_equal(&r2, d);
    assert_int_equal(VIPL_STATUS_DONE | VIPL_STATUS_FLUSHED_ERROR, d->status);
    assert_int_equal(0, d->length);
    assert_null(vipl_desc_pop(&f.a.rdone_head, &f.a.rdone_tail));
    assert_ptr_equal(&s1, vipl_desc_pop(&f.a.sdone_head, &f.a.sdone_tail));
    assert_int_equal(VIPL_STATUS_DONE, s1.status);
    d = vipl_desc_pop(&f.b.rdone_head, &f.b.rdone_tail);
    assert_ptr_equal(&r3, d);
    assert_int_equal(16, d->length);
    /* the flushed receive broke its VI, not the other */
    assert_int_equal(VIPL_STATE_ERROR, f.a.state);
    assert_int_equal(VIPL_STATE_CONNECTED, f.b.state);
    pthread_mutex_destroy(&f.nic.lock);
}

/* more completions than the ring holds (a direct VipRecvDone poll takes
 * its own batch): every one reaches its VI, the ring keeps the first */
static void test_batch_overflow_and_forget(void **state)
{
    batch_fixture_t f;
    vipl_desc_t d[VIPL_VERBS_POLL + 4];
    struct ibv_wc wc[VIPL_VERBS_POLL + 4];
    vipl_verbs_vi_t *vi;
    bool is_recv;
    int n = VIPL_VERBS_POLL + 4, got = 0;

    (void) state;
    batch_setup(&f);
    for (int i = 0; i < n; ++i) {
        memset(&d[i], 0, sizeof(d[i]));
        d[i].prov_ = VIPL_VERBS_RECV_MARK;
        wc[i] = batch_wc(i % 2 ? 200 : 100, &d[i], IBV_WC_SUCCESS, (uint32_t) i);
    }
    assert_int_equal(n, vipl_verbs_take(&f.nic, &f.cq, wc, n));
    assert_int_equal(VIPL_VERBS_POLL, f.cq.ready_count);
    for (vipl_desc_t *x; NULL != (x = vipl_desc_pop(&f.a.rdone_head, &f.a.rdone_tail));) {
        assert_int_equal(0, x->length % 2);
        ++got;
    }
    for (vipl_desc_t *x; NULL != (x = vipl_desc_pop(&f.b.rdone_head, &f.b.rdone_tail));) {
        assert_int_equal(1, x->length % 2);
        ++got;
    }
    assert_int_equal(n, got);
    /* VI b goes: the ring forgets it, a's entries stay in order */
    vipl_verbs_ready_forget(&f.cq, &f.b);
    assert_int_equal(VIPL_VERBS_POLL / 2, f.cq.ready_count);
    while (vipl_verbs_ready_pop(&f.cq, &vi, &is_recv)) {
        assert_ptr_equal(&f.a, vi);
        assert_true(is_recv);
    }
    pthread_mutex_destroy(&f.nic.lock);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_batch_order),
        cmocka_unit_test(test_batch_overflow_and_forget),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
