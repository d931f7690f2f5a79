/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_sci_doorbell.c: btl_sci's idle handshake (btl_sci_doorbell.h) in
 * two threads, as a store-buffering litmus test.  In every round the
 * receiver goes idle and then looks for a message while the sender
 * publishes one and then asks whether to ring; a round in which neither
 * saw the other is a lost wake-up (the message would wait for the sweep).
 * Without the StoreLoad fence on the sender's side x86 shows such rounds
 * within a few thousand; with it there must be none.
 */

#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "btl_sci_doorbell.h"

#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define DOORBELL_UNDER_VALGRIND() (0 != RUNNING_ON_VALGRIND)
#endif
#endif
#ifndef DOORBELL_UNDER_VALGRIND
#define DOORBELL_UNDER_VALGRIND() 0
#endif

#define DOORBELL_ROUNDS 100000
/* valgrind runs one thread at a time, so it cannot show a reordering and
 * every barrier costs a time slice: a few rounds check memory safety */
#define DOORBELL_ROUNDS_VALGRIND 500

static uint32_t doorbell_rounds = DOORBELL_ROUNDS;

typedef struct {
    /* each on its own line, as in the segments */
    _Alignas(64) uint64_t seq;     /* the slot's sequence word */
    _Alignas(64) uint32_t idle;    /* the receiver's idle flag */
    _Alignas(64) uint32_t arrived; /* barrier: arrivals of both threads */
    uint8_t rang[DOORBELL_ROUNDS];
    uint8_t saw[DOORBELL_ROUNDS];
} doorbell_shared_t;

static inline void doorbell_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* barrier number k of the two threads */
static void doorbell_barrier(doorbell_shared_t *s, uint32_t k)
{
    unsigned spins = 0;

    tc_atomic_add_fetch(&s->arrived, 1u);
    while (tc_atomic_load_acquire(&s->arrived) < 2 * k) {
        doorbell_relax();
        /* on an oversubscribed host the other thread may not be running */
        if (0 == (++spins & 1023)) {
            sched_yield();
        }
    }
}

static void *doorbell_sender(void *arg)
{
    doorbell_shared_t *s = arg;

    for (uint32_t r = 1; r <= doorbell_rounds; ++r) {
        doorbell_barrier(s, 2 * r - 1);
        tc_atomic_store_release(&s->seq, (uint64_t) r); /* publish */
        s->rang[r - 1] = mca_btl_sci_doorbell_needed(&s->idle);
        doorbell_barrier(s, 2 * r);
    }
    return NULL;
}

static void *doorbell_receiver(void *arg)
{
    doorbell_shared_t *s = arg;

    for (uint32_t r = 1; r <= doorbell_rounds; ++r) {
        doorbell_barrier(s, 2 * r - 1);
        mca_btl_sci_doorbell_go_idle(&s->idle);
        s->saw[r - 1] = tc_atomic_load_acquire(&s->seq) == (uint64_t) r; /* poll once more */
        doorbell_barrier(s, 2 * r);
        /* both are past the round: active again for the next one */
        mca_btl_sci_doorbell_go_active(&s->idle);
    }
    return NULL;
}

static void test_no_lost_wakeup(void **state)
{
    doorbell_shared_t *s = calloc(1, sizeof(*s));
    pthread_t snd, rcv;
    long lost = 0;

    (void) state;
    assert_non_null(s);
    assert_int_equal(0, pthread_create(&snd, NULL, doorbell_sender, s));
    assert_int_equal(0, pthread_create(&rcv, NULL, doorbell_receiver, s));
    pthread_join(snd, NULL);
    pthread_join(rcv, NULL);
    for (long r = 0; r < (long) doorbell_rounds; ++r) {
        lost += !s->rang[r] && !s->saw[r];
    }
    free(s);
    if (0 != lost) {
        fail_msg("%ld of %u rounds lost the wake-up (neither side saw the other)", lost,
                 doorbell_rounds);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_lost_wakeup),
    };

    if (DOORBELL_UNDER_VALGRIND()) {
        doorbell_rounds = DOORBELL_ROUNDS_VALGRIND;
    }

    return cmocka_run_group_tests(tests, NULL, NULL);
}
