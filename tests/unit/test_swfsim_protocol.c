/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_swfsim_protocol.c: the request semantics of docs/sockmodel.md
 * against a running simulator: SIZE/RANK, PROBE, RECV and variants: matching and
 * order, self-sends, WAITING_START (found, expired, stopped, woken; with
 * SOCKMODEL_WAIT_RECV the message itself) and
 * WAITING_STOP, barriers, the torus clocks (CONSUMETIME, probe cost,
 * arrival times) and deadlock detection.
 */

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <pthread.h>

#include "test_swfsim_harness.h"

static void test_matching(void **state)
{
    sim_run_t s;
    int fd[2];
    tc_sockmodel_reply_t r;
    char buf[64];

    (void) state;
    sim_start(&s, 2, (char *) NULL);
    connect_all(&s, fd, 2);
    raw_cmd(fd[1], SOCKMODEL_SIZE, 0, 0, 0, 0);
    expect_reply(fd[1], SOCKMODEL_SIZE, SOCKMODEL_ST_OK, &r, NULL, 0);
    assert_int_equal(r.arg[0], 2);
    assert_int_equal(r.arg[1], SOCKMODEL_MAX_MSG_DEFAULT);
    assert_int_equal(r.arg[2], SOCKMODEL_MODEL_SIMPEL);
    raw_cmd(fd[1], SOCKMODEL_RANK, 0, 0, 0, 0);
    expect_reply(fd[1], SOCKMODEL_RANK, SOCKMODEL_ST_OK, &r, NULL, 0);
    assert_int_equal(r.arg[0], 1);

    raw_cmd(fd[1], SOCKMODEL_PROBE, 0, 0, 0, 0);
    expect_reply(fd[1], SOCKMODEL_PROBE, SOCKMODEL_ST_NONE, NULL, NULL, 0);
    raw_send(fd[0], 1, 5, "first", 5);
    raw_send(fd[0], 1, 7, "second", 6);
    raw_send(fd[0], 1, 5, "third", 5);
    raw_send(fd[1], 1, 9, "self", 4);
    raw_send(fd[0], 1, 11, NULL, 0);
    /* a round trip on each: the simulator has read both streams */
    raw_cmd(fd[0], SOCKMODEL_RANK, 0, 0, 0, 0);
    expect_reply(fd[0], SOCKMODEL_RANK, SOCKMODEL_ST_OK, NULL, NULL, 0);
    raw_cmd(fd[1], SOCKMODEL_RANK, 0, 0, 0, 0);
    expect_reply(fd[1], SOCKMODEL_RANK, SOCKMODEL_ST_OK, NULL, NULL, 0);
    /* PROBETAG sees the tag-7 message without taking it */
    raw_cmd(fd[1], SOCKMODEL_PROBETAG, 7, 0, 0, 0);
    expect_reply(fd[1], SOCKMODEL_PROBETAG, SOCKMODEL_ST_FOUND, &r, NULL, 0);
    assert_int_equal(r.arg[0], 0);
    assert_int_equal(r.arg[1], 7);
    assert_int_equal(r.arg[2], 6);
    raw_cmd(fd[1], SOCKMODEL_PROBETAG, 8, 0, 0, 0);
    expect_reply(fd[1], SOCKMODEL_PROBETAG, SOCKMODEL_ST_NONE, NULL, NULL, 0);
    raw_cmd(fd[1], SOCKMODEL_PROBEFROM, 1, 0, 0, 0);
    expect_reply(fd[1], SOCKMODEL_PROBEFROM, SOCKMODEL_ST_FOUND, &r, NULL, 0);
    assert_int_equal(r.arg[1], 9);
    /* RECVTAG takes the tag-7 one out of the middle */
    raw_cmd(fd[1], SOCKMODEL_RECVTAG, 7, 0, 0, 0);
    expect_reply(fd[1], SOCKMODEL_RECVTAG, SOCKMODEL_ST_OK, &r, buf, sizeof(buf));
    assert_int_equal(r.arg[2], 6);
    assert_memory_equal(buf, "second", 6);
    /* RECVFROM self, then RECV gets the rest in arrival order */
    raw_cmd(fd[1], SOCKMODEL_RECVFROM, 1, 0, 0, 0);
    expect_reply(fd[1], SOCKMODEL_RECVFROM, SOCKMODEL_ST_OK, &r, buf, sizeof(buf));
    assert_memory_equal(buf, "self", 4);
    raw_cmd(fd[1], SOCKMODEL_RECV, 0, 0, 0, 0);
    expect_reply(fd[1], SOCKMODEL_RECV, SOCKMODEL_ST_OK, &r, buf, sizeof(buf));
    assert_memory_equal(buf, "first", 5);
    raw_cmd(fd[1], SOCKMODEL_RECV, 0, 0, 0, 0);
    expect_reply(fd[1], SOCKMODEL_RECV, SOCKMODEL_ST_OK, &r, buf, sizeof(buf));
    assert_memory_equal(buf, "third", 5);
    raw_cmd(fd[1], SOCKMODEL_RECV, 0, 0, 0, 0);
    expect_reply(fd[1], SOCKMODEL_RECV, SOCKMODEL_ST_OK, &r, buf, sizeof(buf));
    assert_int_equal(r.arg[1], 11);
    assert_int_equal(r.arg[2], 0);
    raw_cmd(fd[1], SOCKMODEL_PROBE, 0, 0, 0, 0);
    expect_reply(fd[1], SOCKMODEL_PROBE, SOCKMODEL_ST_NONE, NULL, NULL, 0);
    /* a blocked RECV is answered when the message comes */
    raw_cmd(fd[1], SOCKMODEL_RECVFROM, 0, 0, 0, 0);
    raw_send(fd[0], 1, 3, "late", 4);
    expect_reply(fd[1], SOCKMODEL_RECVFROM, SOCKMODEL_ST_OK, &r, buf, sizeof(buf));
    assert_memory_equal(buf, "late", 4);
    finish(fd[0]);
    finish(fd[1]);
    assert_int_equal(sim_wait(&s), 0);
    sim_cleanup(&s);
}

/* Node 0 has a RECV outstanding: node 1 answers it, both finish and the
 * run ends cleanly. */
static void end_with_bye(sim_run_t *s, int fd[2])
{
    tc_sockmodel_reply_t r;
    char buf[16];

    raw_send(fd[1], 0, 1, "bye", 3);
    finish(fd[1]);
    expect_reply(fd[0], SOCKMODEL_RECV, SOCKMODEL_ST_OK, &r, buf, sizeof(buf));
    assert_memory_equal(buf, "bye", 3);
    finish(fd[0]);
    assert_int_equal(sim_wait(s), 0);
    sim_cleanup(s);
}

static void test_waiting(void **state)
{
    const char *model = *state;
    sim_run_t s;
    int fd[2];
    tc_sockmodel_reply_t r;
    char buf[16];

    sim_start(&s, 2, "--model", model, (char *) NULL);
    connect_all(&s, fd, 2);
    /* timeout 0: a plain probe */
    raw_cmd(fd[1], SOCKMODEL_WAITING_START, 0, 0, 0, 0);
    expect_reply(fd[1], SOCKMODEL_WAITING_START, SOCKMODEL_ST_EXPIRED, NULL, NULL, 0);
    /* nothing comes: the wait ends by itself */
    raw_cmd(fd[1], SOCKMODEL_WAITING_START, 20000, 0, 0, 0);
    expect_reply(fd[1], SOCKMODEL_WAITING_START, SOCKMODEL_ST_EXPIRED, NULL, NULL, 0);
    /* stopped: STOPPED first, then the WAITING_STOP reply */
    raw_cmd(fd[1], SOCKMODEL_WAITING_START, SOCKMODEL_WAIT_MAX_US, 0, 0, 0);
    raw_cmd(fd[1], SOCKMODEL_WAITING_STOP, 0, 0, 0, 0);
    expect_reply(fd[1], SOCKMODEL_WAITING_START, SOCKMODEL_ST_STOPPED, NULL, NULL, 0);
    expect_reply(fd[1], SOCKMODEL_WAITING_STOP, SOCKMODEL_ST_OK, NULL, NULL, 0);
    /* a WAITING_STOP with nothing outstanding: only OK */
    raw_cmd(fd[1], SOCKMODEL_WAITING_STOP, 0, 0, 0, 0);
    expect_reply(fd[1], SOCKMODEL_WAITING_STOP, SOCKMODEL_ST_OK, NULL, NULL, 0);
    /* woken by a message; node 0 then waits too so time can move on */
    raw_cmd(fd[1], SOCKMODEL_WAITING_START, SOCKMODEL_WAIT_MAX_US, 0, 0, 0);
    raw_send(fd[0], 1, 42, "wake", 4);
    raw_cmd(fd[0], SOCKMODEL_RECV, 0, 0, 0, 0);
    expect_reply(fd[1], SOCKMODEL_WAITING_START, SOCKMODEL_ST_FOUND, &r, NULL, 0);
    assert_int_equal(r.arg[0], 0);
    assert_int_equal(r.arg[1], 42);
    assert_int_equal(r.arg[2], 4);
    /* a message already queued: answered at once */
    raw_cmd(fd[1], SOCKMODEL_WAITING_START, SOCKMODEL_WAIT_MAX_US, 0, 0, 0);
    expect_reply(fd[1], SOCKMODEL_WAITING_START, SOCKMODEL_ST_FOUND, NULL, NULL, 0);
    raw_cmd(fd[1], SOCKMODEL_RECV, 0, 0, 0, 0);
    expect_reply(fd[1], SOCKMODEL_RECV, SOCKMODEL_ST_OK, &r, buf, sizeof(buf));
    assert_memory_equal(buf, "wake", 4);
    end_with_bye(&s, fd);
}

/* WAITING_START with SOCKMODEL_WAIT_RECV hands the message over like RECV */
static void test_wait_recv(void **state)
{
    const char *model = *state;
    sim_run_t s;
    int fd[2];
    tc_sockmodel_reply_t r;
    char buf[16];

    sim_start(&s, 2, "--model", model, (char *) NULL);
    connect_all(&s, fd, 2);
    raw_cmd(fd[1], SOCKMODEL_SIZE, 0, 0, 0, 0);
    expect_reply(fd[1], SOCKMODEL_SIZE, SOCKMODEL_ST_OK, &r, NULL, 0);
    assert_true(r.arg[3] & SOCKMODEL_FEATURE_WAIT_RECV);
    /* nothing queued and nothing comes: EXPIRED, no payload */
    raw_cmd(fd[1], SOCKMODEL_WAITING_START, 20000, SOCKMODEL_WAIT_RECV, 0, 0);
    expect_reply(fd[1], SOCKMODEL_WAITING_START, SOCKMODEL_ST_EXPIRED, NULL, NULL, 0);
    /* woken by an arriving message: it comes with the reply */
    raw_cmd(fd[1], SOCKMODEL_WAITING_START, SOCKMODEL_WAIT_MAX_US, SOCKMODEL_WAIT_RECV, 0, 0);
    raw_send(fd[0], 1, 42, "wake", 4);
    raw_cmd(fd[0], SOCKMODEL_RECV, 0, 0, 0, 0);
    memset(buf, 0, sizeof(buf));
    expect_reply(fd[1], SOCKMODEL_WAITING_START, SOCKMODEL_ST_OK, &r, buf, sizeof(buf));
    assert_int_equal(r.arg[0], 0);
    assert_int_equal(r.arg[1], 42);
    assert_int_equal(r.arg[2], 4);
    assert_memory_equal(buf, "wake", 4);
    /* it was taken: the queue is empty */
    raw_cmd(fd[1], SOCKMODEL_PROBE, 0, 0, 0, 0);
    expect_reply(fd[1], SOCKMODEL_PROBE, SOCKMODEL_ST_NONE, NULL, NULL, 0);
    /* two already queued (one of them empty): answered at once, in order */
    raw_send(fd[1], 1, 7, "self", 4);
    raw_send(fd[1], 1, 8, NULL, 0);
    raw_cmd(fd[1], SOCKMODEL_WAITING_START, SOCKMODEL_WAIT_MAX_US, SOCKMODEL_WAIT_RECV, 0, 0);
    expect_reply(fd[1], SOCKMODEL_WAITING_START, SOCKMODEL_ST_OK, &r, buf, sizeof(buf));
    assert_int_equal(r.arg[1], 7);
    assert_memory_equal(buf, "self", 4);
    raw_cmd(fd[1], SOCKMODEL_WAITING_START, SOCKMODEL_WAIT_MAX_US, SOCKMODEL_WAIT_RECV, 0, 0);
    expect_reply(fd[1], SOCKMODEL_WAITING_START, SOCKMODEL_ST_OK, &r, buf, sizeof(buf));
    assert_int_equal(r.arg[1], 8);
    assert_int_equal(r.arg[2], 0);
    end_with_bye(&s, fd);
}

static void test_barrier(void **state)
{
    sim_run_t s;
    int fd[3];
    tc_sockmodel_reply_t r;

    (void) state;
    sim_start(&s, 3, "--model", "torus", (char *) NULL);
    connect_all(&s, fd, 3);
    for (int i = 0; i < 3; i++) {
        raw_cmd(fd[i], SOCKMODEL_BARRIER_INIT, 0, 0, 0, 0);
        expect_reply(fd[i], SOCKMODEL_BARRIER_INIT, SOCKMODEL_ST_OK, &r, NULL, 0);
        assert_int_equal(r.arg[0], 0);
    }
    for (uint32_t round = 0; round < 2; round++) {
        /* node i arrives after (i+1)*1000 cycles: all leave at 12 us */
        for (int i = 0; i < 3; i++) {
            raw_cmd(fd[i], SOCKMODEL_BARRIER_ENTER, 0, 0, 0, (uint32_t) (i + 1) * 1000);
        }
        for (int i = 0; i < 3; i++) {
            expect_reply(fd[i], SOCKMODEL_BARRIER_ENTER, SOCKMODEL_ST_OK, &r, NULL, 0);
            assert_int_equal(r.arg[0], 0);
            assert_int_equal(r.arg[1], round);
            assert_int_equal(r.clock_ns, 12000 * (round + 1));
        }
    }
    for (int i = 0; i < 3; i++) {
        finish(fd[i]);
    }
    assert_int_equal(sim_wait(&s), 0);
    sim_cleanup(&s);
}

static void test_torus_clocks(void **state)
{
    sim_run_t s;
    int fd[2];
    tc_sockmodel_reply_t r;
    char buf[16];
    char *rep;

    (void) state;
    sim_start(&s, 2, "--model", "torus", (char *) NULL); /* 2x1 */
    connect_all(&s, fd, 2);
    /* node 1 probes at time 0: whatever the real-time order, the message
     * node 0 sends at 4 us cannot be there yet */
    raw_cmd(fd[0], SOCKMODEL_CONSUMETIME, 900, 0, 0, 100);
    raw_send(fd[0], 1, 5, "12345678", 8);
    raw_cmd(fd[1], SOCKMODEL_PROBE, 0, 0, 0, 0);
    expect_reply(fd[1], SOCKMODEL_PROBE, SOCKMODEL_ST_NONE, &r, NULL, 0);
    assert_int_equal(r.clock_ns, 400);          /* the probe cost */
    raw_cmd(fd[0], SOCKMODEL_RECV, 0, 0, 0, 0); /* node 0 stops holding time */
    /* one hop, 8 bytes: 4000 + 2*96 + 32 + 32 = 4256 ns */
    raw_cmd(fd[1], SOCKMODEL_RECV, 0, 0, 0, 0);
    expect_reply(fd[1], SOCKMODEL_RECV, SOCKMODEL_ST_OK, &r, buf, sizeof(buf));
    assert_int_equal(r.clock_ns, 4256);
    assert_memory_equal(buf, "12345678", 8);
    /* answered at once (4256 ns): arrives at 4256 + 256; then node 1
     * computes for 250 cycles (1 us) */
    raw_send(fd[1], 0, 6, "87654321", 8);
    raw_cmd(fd[1], SOCKMODEL_CONSUMETIME, 0, 0, 0, 250);
    /* node 1's FINISH at 5256 ns comes due only after node 0, woken at
     * 4512 ns, has moved on (here: finished) */
    raw_cmd(fd[1], SOCKMODEL_FINISH, 0, 0, 0, 0);
    expect_reply(fd[0], SOCKMODEL_RECV, SOCKMODEL_ST_OK, &r, buf, sizeof(buf));
    assert_int_equal(r.clock_ns, 4256 + 256);
    finish(fd[0]);
    expect_reply(fd[1], SOCKMODEL_FINISH, SOCKMODEL_ST_OK, &r, NULL, 0);
    assert_int_equal(r.clock_ns, 5256);
    expect_eof(fd[1]);
    assert_int_equal(sim_wait(&s), 0);
    rep = sim_report(&s);
    assert_non_null(strstr(rep, "\"sim_end_ns\": 5256"));
    assert_non_null(strstr(rep, "\"latency_ns\": { \"count\": 2, \"min\": 256,"));
    assert_non_null(
        strstr(rep, "{ \"link\": \"r0+x\", \"packets\": 1, \"bytes\": 16, \"busy_ns\": 64"));
    free(rep);
    sim_cleanup(&s);
}

/* Commands pipelined behind a timed one: node 0 writes a PROBE that
 * cannot come due yet (node 1 holds time at 0) and then more SENDs than
 * the simulator's input buffer holds, so the simulator stops reading it.
 * Once the PROBE has run, reading must resume, or node 1 never gets
 * the messages (a client that polls without waiting does exactly this). */
#define PIPE_SENDS 4000

static void *pipe_writer(void *arg)
{
    int fd = *(int *) arg;

    raw_cmd(fd, SOCKMODEL_CONSUMETIME, 1000, 0, 0, 0);
    raw_cmd(fd, SOCKMODEL_PROBE, 0, 0, 0, 0);
    for (uint32_t i = 0; i < PIPE_SENDS; i++) {
        unsigned char b[4];

        tc_sockmodel_put32(b, i);
        raw_send(fd, 1, i, b, 4);
    }
    /* and stop holding time */
    raw_cmd(fd, SOCKMODEL_RECV, 0, 0, 0, 0);
    return NULL;
}

static void test_pipelined_behind_timed(void **state)
{
    sim_run_t s;
    int fd[2];
    tc_sockmodel_reply_t r;
    unsigned char buf[8];
    pthread_t th;

    (void) state;
    sim_start(&s, 2, "--model", "torus", (char *) NULL);
    connect_all(&s, fd, 2);
    assert_int_equal(0, pthread_create(&th, NULL, pipe_writer, &fd[0]));
    /* let the writer fill the simulator's input before node 1 moves */
    usleep(200 * 1000);
    for (uint32_t i = 0; i < PIPE_SENDS; i++) {
        raw_cmd(fd[1], SOCKMODEL_RECV, 0, 0, 0, 0);
        expect_reply(fd[1], SOCKMODEL_RECV, SOCKMODEL_ST_OK, &r, buf, sizeof(buf));
        assert_int_equal(r.arg[SOCKMODEL_ARG_TAG], i);
        assert_int_equal(tc_sockmodel_get32(buf), i);
    }
    assert_int_equal(0, pthread_join(th, NULL));
    raw_send(fd[1], 0, 99, "done", 4);
    raw_cmd(fd[1], SOCKMODEL_FINISH, 0, 0, 0, 0); /* node 1 stops holding time */
    expect_reply(fd[0], SOCKMODEL_PROBE, SOCKMODEL_ST_NONE, &r, NULL, 0);
    expect_reply(fd[0], SOCKMODEL_RECV, SOCKMODEL_ST_OK, &r, buf, sizeof(buf));
    assert_memory_equal(buf, "done", 4);
    expect_reply(fd[1], SOCKMODEL_FINISH, SOCKMODEL_ST_OK, NULL, NULL, 0);
    expect_eof(fd[1]);
    finish(fd[0]);
    assert_int_equal(sim_wait(&s), 0);
    sim_cleanup(&s);
}

static void run_deadlock(const char *model)
{
    sim_run_t s;
    int fd[2];
    char *rep;

    sim_start(&s, 2, "--model", model, (char *) NULL);
    connect_all(&s, fd, 2);
    raw_cmd(fd[0], SOCKMODEL_RECVFROM, 1, 0, 0, 0);
    raw_cmd(fd[1], SOCKMODEL_RECVTAG, 3, 0, 0, 0);
    expect_eof(fd[0]);
    expect_eof(fd[1]);
    assert_int_equal(sim_wait(&s), 2);
    rep = sim_report(&s);
    assert_non_null(strstr(rep, "\"status\": \"deadlock\""));
    free(rep);
    sim_cleanup(&s);
}

static void test_deadlock(void **state)
{
    (void) state;
    run_deadlock("simpel");
    run_deadlock("torus");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_matching),
        SIM_MODEL_TEST(test_waiting, "simpel"),
        SIM_MODEL_TEST(test_waiting, "torus"),
        SIM_MODEL_TEST(test_wait_recv, "simpel"),
        SIM_MODEL_TEST(test_wait_recv, "torus"),
        cmocka_unit_test(test_barrier),
        cmocka_unit_test(test_torus_clocks),
        cmocka_unit_test(test_deadlock),
        cmocka_unit_test(test_pipelined_behind_timed),
    };
    signal(SIGPIPE, SIG_IGN);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
