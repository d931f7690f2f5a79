/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_common_credits.c: unit tests of tc_credits, MPI-BIP's credit
 * algorithm: exhaustion and the forced credit-only message, the reserved
 * last credit, FIFO order under exhaustion, bad credit values, no endless
 * exchange of credit-only messages at any N >= 2, and a two-peer
 * simulation that checks the slot invariant and delivery order, with the
 * credit-only message at N-1 and with the early return at N/2.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tc_credits.h"

typedef struct req {
    tc_list_item_t link;
    int id;
} req_t;

static void test_init_rejects_small_n(void **state)
{
    tc_credits_t cr;
    (void) state;

    assert_int_equal(tc_credits_init(&cr, 0), -EINVAL);
    assert_int_equal(tc_credits_init(&cr, 1), -EINVAL);
    assert_int_equal(tc_credits_init(&cr, 2), 0);
    assert_int_equal(tc_credits_available(&cr), 2);
    assert_int_equal(tc_credits_owed(&cr), 0);
}

/* N-1 ordinary sends use every credit but the reserved one; the receiver
 * reaches B = N-1 and must force a credit-only message that refills C. */
static void test_exhaustion_and_forced_return(void **state)
{
    const uint32_t n = 4;
    tc_credits_t i_to_j, j_to_i;
    uint32_t pb[8], back;
    (void) state;

    tc_credits_init(&i_to_j, n);
    tc_credits_init(&j_to_i, n);
    for (uint32_t k = 0; k < n - 1; k++) {
        assert_int_equal(tc_credits_try_send(&i_to_j, &pb[k]), 0);
        assert_int_equal(pb[k], 0);
    }
    assert_int_equal(tc_credits_available(&i_to_j), 1);
    /* Exhausted: the last credit is reserved for credit-only messages. */
    assert_int_equal(tc_credits_try_send(&i_to_j, &pb[7]), -EAGAIN);
    assert_int_equal(tc_credits_available(&i_to_j), 1);

    for (uint32_t k = 0; k < n - 1; k++) {
        assert_false(tc_credits_need_credit_only(&j_to_i));
        assert_int_equal(tc_credits_received(&j_to_i, pb[k]), 0);
    }
    assert_int_equal(tc_credits_owed(&j_to_i), n - 1);
    assert_true(tc_credits_need_credit_only(&j_to_i));
    assert_int_equal(tc_credits_take_credit_only(&j_to_i, &back), 0);
    assert_int_equal(back, n - 1);
    assert_int_equal(tc_credits_owed(&j_to_i), 0);
    /* the credit-only message travels in the reserved slot: C unchanged */
    assert_int_equal(tc_credits_available(&j_to_i), n);
    assert_false(tc_credits_need_credit_only(&j_to_i));
    assert_int_equal(j_to_i.stats.credit_only_sent, 1);

    /* i gets its credits back and owes j nothing for the reserved slot. */
    assert_int_equal(tc_credits_received_credit_only(&i_to_j, back), 0);
    assert_int_equal(tc_credits_available(&i_to_j), n);
    assert_int_equal(tc_credits_owed(&i_to_j), 0);
    assert_false(tc_credits_need_credit_only(&i_to_j));
    assert_int_equal(i_to_j.stats.credit_only_received, 1);
    assert_int_equal(tc_credits_try_send(&i_to_j, &pb[0]), 0);
    assert_int_equal(pb[0], 0);
}

/* N = 2: a single ordinary message in flight, the second credit is only
 * ever used by a credit-only message. */
static void test_reserved_last_credit(void **state)
{
    tc_credits_t cr;
    uint32_t pb;
    (void) state;

    tc_credits_init(&cr, 2);
    /* Nothing owed: no credit-only message possible or needed. */
    assert_int_equal(tc_credits_take_credit_only(&cr, &pb), -EAGAIN);
    assert_int_equal(tc_credits_try_send(&cr, &pb), 0);
    assert_int_equal(tc_credits_try_send(&cr, &pb), -EAGAIN);
    /* A message arrives from the peer carrying no credit: B = 1 = N-1. */
    assert_int_equal(tc_credits_received(&cr, 0), 0);
    assert_true(tc_credits_need_credit_only(&cr));
    /* Ordinary sends still wait, the credit-only message may go: it
     * uses the reserved slot and leaves C alone. */
    assert_int_equal(tc_credits_try_send(&cr, &pb), -EAGAIN);
    assert_int_equal(tc_credits_take_credit_only(&cr, &pb), 0);
    assert_int_equal(pb, 1);
    assert_int_equal(tc_credits_available(&cr), 1);
    assert_false(tc_credits_need_credit_only(&cr));
    /* Its credit-only message returns our slot and owes nothing back. */
    assert_int_equal(tc_credits_received_credit_only(&cr, 1), 0);
    assert_int_equal(tc_credits_available(&cr), 2);
    assert_false(tc_credits_need_credit_only(&cr));
    assert_int_equal(tc_credits_take_credit_only(&cr, &pb), -EAGAIN);
    /* More credits than we spent: a protocol error. */
    assert_int_equal(tc_credits_received_credit_only(&cr, 1), -EPROTO);
    assert_int_equal(tc_credits_try_send(&cr, &pb), 0);
    assert_int_equal(pb, 0);
    /* a refused credit-only message is undone */
    assert_int_equal(tc_credits_received(&cr, 1), 0);
    assert_int_equal(tc_credits_take_credit_only(&cr, &pb), 0);
    tc_credits_cancel_credit_only(&cr, pb);
    assert_int_equal(tc_credits_owed(&cr), 1);
    assert_true(tc_credits_need_credit_only(&cr));
}

/* Issue found in review: with N = 2 each credit-only message brought the
 * other side's B to N-1 and forced the next one, forever. For every N,
 * one side sends N-1 messages; once everything is delivered the wire must
 * go quiet after exactly one credit-only message. */
static void test_no_credit_only_pingpong(void **state)
{
    (void) state;
    for (uint32_t n = 2; n <= 16; n++) {
        tc_credits_t i, j;
        uint32_t pb, back;
        int rounds = 0;
        /* credit-only messages in flight: to j (from i) and to i (from j) */
        int to_i = 0, to_j = 0;
        uint32_t val_to_i = 0, val_to_j = 0;

        tc_credits_init(&i, n);
        tc_credits_init(&j, n);
        for (uint32_t k = 0; k < n - 1; k++) {
            assert_int_equal(tc_credits_try_send(&i, &pb), 0);
            assert_int_equal(tc_credits_received(&j, pb), 0);
        }
        assert_true(tc_credits_need_credit_only(&j));
        assert_int_equal(tc_credits_take_credit_only(&j, &back), 0);
        to_i = 1;
        val_to_i = back;
        /* deliver credit-only messages until none is left (bounded) */
        while ((to_i || to_j) && rounds < 100) {
            if (to_i) {
                to_i = 0;
                assert_int_equal(tc_credits_received_credit_only(&i, val_to_i), 0);
                if (tc_credits_need_credit_only(&i)) {
                    assert_int_equal(tc_credits_take_credit_only(&i, &val_to_j), 0);
                    to_j = 1;
                }
            }
            if (to_j) {
                to_j = 0;
                assert_int_equal(tc_credits_received_credit_only(&j, val_to_j), 0);
                if (tc_credits_need_credit_only(&j)) {
                    assert_int_equal(tc_credits_take_credit_only(&j, &val_to_i), 0);
                    to_i = 1;
                }
            }
            rounds++;
        }
        assert_int_equal(rounds, 1);
        assert_int_equal(i.stats.credit_only_sent + j.stats.credit_only_sent, 1);
        /* both sides whole again */
        assert_int_equal(tc_credits_available(&i), n);
        assert_int_equal(tc_credits_available(&j), n);
        assert_int_equal(tc_credits_owed(&i), 0);
        assert_int_equal(tc_credits_owed(&j), 0);
    }
}

/* Under exhaustion sends queue up and leave strictly in order; a new send
 * never overtakes queued ones even when a credit is free. */
static void test_fifo_order_under_exhaustion(void **state)
{
    const uint32_t n = 3;
    tc_credits_t cr;
    req_t reqs[20];
    int expect = 0, sent_now = 0;
    uint32_t pb;
    tc_list_item_t *it;
    (void) state;

    tc_credits_init(&cr, n);
    for (int k = 0; k < 20; k++) {
        reqs[k].id = k;
        if (0 == tc_credits_try_send(&cr, &pb)) {
            assert_int_equal(k, expect);
            expect++;
            sent_now++;
        } else {
            tc_credits_defer(&cr, &reqs[k].link);
        }
    }
    assert_int_equal(sent_now, n - 1);
    assert_int_equal(tc_credits_queued(&cr), 20 - (n - 1));
    assert_null(tc_credits_next_ready(&cr, &pb));

    /* Credits trickle back one at a time. */
    while (tc_credits_queued(&cr) > 0) {
        assert_int_equal(tc_credits_received(&cr, 1), 0);
        /* A fresh send must queue behind the waiting ones. */
        assert_int_equal(tc_credits_try_send(&cr, &pb), -EAGAIN);
        while (NULL != (it = tc_credits_next_ready(&cr, &pb))) {
            req_t *r = TC_CONTAINER_OF(it, req_t, link);
            assert_int_equal(r->id, expect);
            expect++;
        }
    }
    assert_int_equal(expect, 20);
    assert_int_equal(cr.stats.deferred, 20 - (n - 1));

    /* cancel puts an item back at the head and restores the account. */
    tc_credits_received(&cr, 1);
    tc_credits_defer(&cr, &reqs[0].link);
    tc_credits_defer(&cr, &reqs[1].link);
    {
        uint32_t before_c = tc_credits_available(&cr), before_b = tc_credits_owed(&cr);
        it = tc_credits_next_ready(&cr, &pb);
        assert_ptr_equal(it, &reqs[0].link);
        tc_credits_cancel(&cr, it, pb);
        assert_int_equal(tc_credits_available(&cr), before_c);
        assert_int_equal(tc_credits_owed(&cr), before_b);
        assert_ptr_equal(tc_credits_drain(&cr), &reqs[0].link);
        assert_ptr_equal(tc_credits_drain(&cr), &reqs[1].link);
        assert_null(tc_credits_drain(&cr));
    }
    tc_credits_fini(&cr);
}

/* Credit values from the wire are checked against what we can be owed. */
static void test_bogus_credits_rejected(void **state)
{
    tc_credits_t cr;
    uint32_t pb;
    (void) state;

    tc_credits_init(&cr, 4);
    /* Nothing sent yet: the peer owes us nothing. */
    assert_int_equal(tc_credits_received(&cr, 1), -EPROTO);
    assert_int_equal(tc_credits_owed(&cr), 0);
    tc_credits_try_send(&cr, &pb);
    tc_credits_try_send(&cr, &pb);
    assert_int_equal(tc_credits_received(&cr, 3), -EPROTO);
    assert_int_equal(tc_credits_received(&cr, 0xffffffffu), -EPROTO);
    assert_int_equal(tc_credits_received(&cr, 2), 0);
    assert_int_equal(tc_credits_available(&cr), 4);
    /* A peer that sends more than N-1 ordinary messages without our
     * credits (the last slot is reserved for credit-only messages). */
    for (int k = 0; k < 2; k++) {
        assert_int_equal(tc_credits_received(&cr, 0), 0);
    }
    assert_int_equal(tc_credits_owed(&cr), 3);
    assert_int_equal(tc_credits_received(&cr, 0), -EPROTO);
}

/* Credits applied ahead of their message (a sender that found no credit
 * reads them while the message stays in its slot): C grows at once, B
 * only when the message is accounted, and the bound C <= N holds. */
static void test_returned_ahead(void **state)
{
    tc_credits_t cr;
    uint32_t pb;
    (void) state;

    tc_credits_init(&cr, 4);
    assert_int_equal(tc_credits_returned(&cr, 1), -EPROTO);
    for (int k = 0; k < 3; k++) {
        assert_int_equal(tc_credits_try_send(&cr, &pb), 0);
    }
    assert_int_equal(tc_credits_try_send(&cr, &pb), -EAGAIN);
    assert_int_equal(tc_credits_returned(&cr, 4), -EPROTO);
    assert_int_equal(tc_credits_returned(&cr, 0xffffffffu), -EPROTO);
    assert_int_equal(tc_credits_available(&cr), 1);
    assert_int_equal(tc_credits_returned(&cr, 2), 0);
    assert_int_equal(tc_credits_available(&cr), 3);
    assert_int_equal(tc_credits_owed(&cr), 0);
    assert_int_equal(tc_credits_try_send(&cr, &pb), 0);
    /* the message itself, later, with its credits taken already */
    assert_int_equal(tc_credits_received(&cr, 0), 0);
    assert_int_equal(tc_credits_owed(&cr), 1);
    assert_int_equal(tc_credits_available(&cr), 2);
    assert_int_equal(tc_credits_returned(&cr, 3), -EPROTO);
    assert_int_equal(tc_credits_returned(&cr, 2), 0);
    assert_int_equal(tc_credits_available(&cr), 4);
}

/* The worked example of docs/common.md, step by step (N = 4). */
static void test_worked_example(void **state)
{
    tc_credits_t i, j;
    req_t m4, m6;
    uint32_t c1, c2, c3, r1, c4, c5, co, c6;
    tc_list_item_t *it;
    (void) state;

    tc_credits_init(&i, 4);
    tc_credits_init(&j, 4);
    /* 1 */
    assert_int_equal(tc_credits_try_send(&i, &c1), 0);
    assert_int_equal(tc_credits_try_send(&i, &c2), 0);
    assert_int_equal(tc_credits_try_send(&i, &c3), 0);
    assert_int_equal(c1 + c2 + c3, 0);
    /* 2 */
    assert_int_equal(tc_credits_try_send(&i, &c4), -EAGAIN);
    tc_credits_defer(&i, &m4.link);
    assert_int_equal(tc_credits_available(&i), 1);
    /* 3, 4 */
    tc_credits_received(&j, c1);
    tc_credits_received(&j, c2);
    assert_int_equal(tc_credits_owed(&j), 2);
    assert_int_equal(tc_credits_try_send(&j, &r1), 0);
    assert_int_equal(r1, 2);
    /* 5, 6 */
    tc_credits_received(&i, r1);
    assert_int_equal(tc_credits_available(&i), 3);
    assert_int_equal(tc_credits_owed(&i), 1);
    it = tc_credits_next_ready(&i, &c4);
    assert_ptr_equal(it, &m4.link);
    assert_int_equal(c4, 1);
    assert_int_equal(tc_credits_available(&i), 2);
    /* 7 */
    tc_credits_received(&j, c3);
    tc_credits_received(&j, c4);
    assert_int_equal(tc_credits_available(&j), 4);
    assert_int_equal(tc_credits_owed(&j), 2);
    assert_false(tc_credits_need_credit_only(&j));
    /* 8 */
    assert_int_equal(tc_credits_try_send(&i, &c5), 0);
    assert_int_equal(c5, 0);
    assert_int_equal(tc_credits_try_send(&i, &c6), -EAGAIN);
    tc_credits_defer(&i, &m6.link);
    /* 9, 10 */
    tc_credits_received(&j, c5);
    assert_int_equal(tc_credits_owed(&j), 3);
    assert_true(tc_credits_need_credit_only(&j));
    assert_int_equal(tc_credits_take_credit_only(&j, &co), 0);
    assert_int_equal(co, 3);
    assert_int_equal(tc_credits_available(&j), 4);
    /* 11, 12 */
    assert_int_equal(tc_credits_received_credit_only(&i, co), 0);
    assert_int_equal(tc_credits_available(&i), 4);
    assert_int_equal(tc_credits_owed(&i), 0);
    it = tc_credits_next_ready(&i, &c6);
    assert_ptr_equal(it, &m6.link);
    assert_int_equal(c6, 0);
    assert_int_equal(tc_credits_available(&i), 3);
    /* 13 */
    tc_credits_received(&j, c6);
    assert_int_equal(tc_credits_available(&j), 4);
    assert_int_equal(tc_credits_owed(&j), 1);
}

/* ---- two-peer simulation ---- */

#define SIM_MSGS 400
#define SIM_QMAX 64

/* credit-only messages also at B >= N/2 (tc_credits_want_return) */
static bool sim_early;

typedef struct sim_msg {
    int app_id; /* -1: credit-only */
    uint32_t credits;
} sim_msg_t;

typedef struct sim_peer {
    tc_credits_t cr; /* my account towards the other peer */
    req_t reqs[SIM_MSGS];
    int next_app;             /* next application message to submit */
    int next_expected;        /* next application id I must receive */
    sim_msg_t wire[SIM_QMAX]; /* messages in flight to the other peer */
    int wire_head, wire_count;
} sim_peer_t;

static void sim_post(sim_peer_t *from, int app_id, uint32_t credits)
{
    assert_true(from->wire_count < SIM_QMAX);
    from->wire[(from->wire_head + from->wire_count) % SIM_QMAX] =
        (sim_msg_t){.app_id = app_id, .credits = credits};
    from->wire_count++;
}

/* The peer's receive queue holds at most N of my messages: N-1 ordinary
 * ones and one credit-only message in the reserved slot. */
static void sim_check_invariant(sim_peer_t *a, sim_peer_t *b, uint32_t n)
{
    uint32_t returning = 0, ordinary = 0, credit_only = 0;
    for (int k = 0; k < b->wire_count; k++) {
        returning += b->wire[(b->wire_head + k) % SIM_QMAX].credits;
    }
    for (int k = 0; k < a->wire_count; k++) {
        if (a->wire[(a->wire_head + k) % SIM_QMAX].app_id >= 0) {
            ordinary++;
        } else {
            credit_only++;
        }
    }
    /* C(a->b) + ordinary in flight a->b + B(b<-a) + credits in flight
     * b->a == N */
    assert_int_equal(tc_credits_available(&a->cr) + ordinary + tc_credits_owed(&b->cr) + returning,
                     n);
    assert_true(ordinary <= n - 1);
    assert_true(credit_only <= 1);
}

static void sim_progress_sends(sim_peer_t *p)
{
    tc_list_item_t *it;
    uint32_t pb;

    while (NULL != (it = tc_credits_next_ready(&p->cr, &pb))) {
        sim_post(p, TC_CONTAINER_OF(it, req_t, link)->id, pb);
    }
    if (tc_credits_need_credit_only(&p->cr) || (sim_early && tc_credits_want_return(&p->cr))) {
        assert_int_equal(tc_credits_take_credit_only(&p->cr, &pb), 0);
        sim_post(p, -1, pb);
    }
}

static void sim_deliver_one(sim_peer_t *from, sim_peer_t *to)
{
    sim_msg_t m = from->wire[from->wire_head];
    from->wire_head = (from->wire_head + 1) % SIM_QMAX;
    from->wire_count--;
    if (m.app_id >= 0) {
        assert_int_equal(tc_credits_received(&to->cr, m.credits), 0);
    } else {
        assert_int_equal(tc_credits_received_credit_only(&to->cr, m.credits), 0);
    }
    if (m.app_id >= 0) {
        assert_int_equal(m.app_id, to->next_expected);
        to->next_expected++;
    }
    sim_progress_sends(to);
}

static void sim_submit(sim_peer_t *p)
{
    uint32_t pb;
    req_t *r = &p->reqs[p->next_app];

    r->id = p->next_app++;
    if (0 == tc_credits_try_send(&p->cr, &pb)) {
        sim_post(p, r->id, pb);
    } else {
        tc_credits_defer(&p->cr, &r->link);
    }
}

static void run_sim(uint32_t n, unsigned seed)
{
    sim_peer_t *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
    long steps = 0;
    uint64_t credit_only;

    srand(seed);
    tc_credits_init(&a->cr, n);
    tc_credits_init(&b->cr, n);
    while (a->next_expected < SIM_MSGS || b->next_expected < SIM_MSGS) {
        int action = rand() % 4;
        if (0 == action && a->next_app < SIM_MSGS) {
            sim_submit(a);
        } else if (1 == action && b->next_app < SIM_MSGS) {
            sim_submit(b);
        } else if (2 == action && a->wire_count > 0) {
            sim_deliver_one(a, b);
        } else if (3 == action && b->wire_count > 0) {
            sim_deliver_one(b, a);
        }
        sim_check_invariant(a, b, n);
        sim_check_invariant(b, a, n);
        /* Liveness: the algorithm never deadlocks, so this is generous. */
        assert_true(++steps < 1000000);
    }
    /* For every N >= 2 the exchange of credit-only messages dies out. */
    credit_only = a->cr.stats.credit_only_sent + b->cr.stats.credit_only_sent;
    while (a->wire_count > 0 || b->wire_count > 0) {
        if (a->wire_count > 0) {
            sim_deliver_one(a, b);
        }
        if (b->wire_count > 0) {
            sim_deliver_one(b, a);
        }
        assert_true(++steps < 1000000);
    }
    assert_int_equal(tc_credits_queued(&a->cr), 0);
    assert_int_equal(tc_credits_queued(&b->cr), 0);
    assert_true(a->cr.stats.credit_only_sent + b->cr.stats.credit_only_sent <= credit_only + 2);
    assert_int_equal(a->wire_count + b->wire_count, 0);
    free(a);
    free(b);
}

/* every N from 2 to nmax, 5 seeds each */
static void run_sims(bool early, uint32_t nmax, unsigned mult)
{
    sim_early = early;
    for (uint32_t n = 2; n <= nmax; n++) {
        for (unsigned seed = 1; seed <= 5; seed++) {
            run_sim(n, seed * mult + n);
        }
    }
    sim_early = false;
}

static void test_two_peer_simulation(void **state)
{
    (void) state;
    run_sims(false, 8, 7919u);
}

/* The early return keeps every invariant (at most one credit-only message
 * in flight, at most N-1 ordinary ones) and order, at every N */
static void test_two_peer_simulation_early(void **state)
{
    (void) state;
    run_sims(true, 16, 104729u);
}

/* the threshold: N/2 owed, never below N = 4, never with nothing owed */
static void test_want_return(void **state)
{
    tc_credits_t cr;
    (void) state;

    tc_credits_init(&cr, 2);
    assert_int_equal(tc_credits_received(&cr, 0), 0);
    assert_false(tc_credits_want_return(&cr));
    tc_credits_init(&cr, 3);
    assert_int_equal(tc_credits_received(&cr, 0), 0);
    assert_false(tc_credits_want_return(&cr));
    tc_credits_init(&cr, 8);
    assert_false(tc_credits_want_return(&cr));
    for (uint32_t k = 1; k < 4; ++k) {
        assert_int_equal(tc_credits_received(&cr, 0), 0);
        assert_false(tc_credits_want_return(&cr));
    }
    assert_int_equal(tc_credits_received(&cr, 0), 0);
    assert_true(tc_credits_want_return(&cr));
    assert_false(tc_credits_need_credit_only(&cr));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_init_rejects_small_n),
        cmocka_unit_test(test_exhaustion_and_forced_return),
        cmocka_unit_test(test_reserved_last_credit),
        cmocka_unit_test(test_fifo_order_under_exhaustion),
        cmocka_unit_test(test_bogus_credits_rejected),
        cmocka_unit_test(test_returned_ahead),
        cmocka_unit_test(test_worked_example),
        cmocka_unit_test(test_no_credit_only_pingpong),
        cmocka_unit_test(test_two_peer_simulation),
        cmocka_unit_test(test_two_peer_simulation_early),
        cmocka_unit_test(test_want_return),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
