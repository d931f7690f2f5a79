/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_swfsim_watch.c: node-down notices (the SockModel WATCH request)
 * against a running simulator, in both models: SIZE offers the feature;
 * a watching node gets, for a node that dies (connection closed without
 * FINISH), a message of length 0 from it with its own tag, behind the
 * messages the dead node had sent; a node that watches only after the
 * death gets the notice at once; a notice wakes a RECVFROM of the dead
 * node; a node that finished gives no notice; nodes that do not watch
 * get nothing; WATCH twice, or with flags, drops the client. The client
 * library's tc_sockmodel_conn_watch asks for it.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "test_swfsim_harness.h"

#define WATCH_TAG0 0xDEADu
#define WATCH_TAG1 77u

static void watch(int fd, uint32_t tag)
{
    raw_cmd(fd, SOCKMODEL_WATCH, tag, 0, 0, 0);
    expect_reply(fd, SOCKMODEL_WATCH, SOCKMODEL_ST_OK, NULL, NULL, 0);
}

/* the reply to request (RECV, RECVFROM): a message of src with tag and payload */
static void expect_msg(int fd, uint32_t request, uint32_t src, uint32_t tag, const char *payload)
{
    tc_sockmodel_reply_t r;
    char buf[64];
    size_t len = strlen(payload);

    expect_reply(fd, request, SOCKMODEL_ST_OK, &r, buf, sizeof(buf));
    assert_int_equal(r.arg[SOCKMODEL_ARG_SRC], src);
    assert_int_equal(r.arg[SOCKMODEL_ARG_TAG], tag);
    assert_int_equal(r.arg[SOCKMODEL_ARG_LEN], len);
    assert_memory_equal(buf, payload, len);
}

/* RECV and check source, tag and payload */
static void recv_expect(int fd, uint32_t src, uint32_t tag, const char *payload)
{
    raw_cmd(fd, SOCKMODEL_RECV, 0, 0, 0, 0);
    expect_msg(fd, SOCKMODEL_RECV, src, tag, payload);
}

static void probe_none(int fd)
{
    raw_cmd(fd, SOCKMODEL_PROBE, 0, 0, 0, 0);
    expect_reply(fd, SOCKMODEL_PROBE, SOCKMODEL_ST_NONE, NULL, NULL, 0);
}

/* nothing queued: a WAITING_START of 200 ms expires (in torus mode a
 * waiting node does not hold back simulated time, where a PROBE's answer
 * would wait for every other running node's clock) */
static void wait_none(int fd)
{
    raw_cmd(fd, SOCKMODEL_WAITING_START, 200000, 0, 0, 0);
    expect_reply(fd, SOCKMODEL_WAITING_START, SOCKMODEL_ST_EXPIRED, NULL, NULL, 0);
}

/* first finishes while second waits (in torus mode time must pass for
 * first's FINISH to be answered), then second finishes */
static void finish_both(int first, int second)
{
    raw_cmd(first, SOCKMODEL_FINISH, 0, 0, 0, 0);
    wait_none(second);
    expect_reply(first, SOCKMODEL_FINISH, SOCKMODEL_ST_OK, NULL, NULL, 0);
    expect_eof(first);
    finish(second);
}

/* node 2 sends two messages to node 0 and dies; nodes 0 and 1 watch,
 * node 3 does not (and finishes first: in torus mode a silent running
 * node would hold back time) */
static void test_notice(void **state)
{
    const char *model = *state;
    sim_run_t s;
    int fd[4];
    tc_sockmodel_reply_t r;

    sim_start(&s, 4, "--model", model, (char *) NULL);
    connect_all(&s, fd, 4);
    raw_cmd(fd[0], SOCKMODEL_SIZE, 0, 0, 0, 0);
    expect_reply(fd[0], SOCKMODEL_SIZE, SOCKMODEL_ST_OK, &r, NULL, 0);
    assert_true(0 != (r.arg[3] & SOCKMODEL_FEATURE_WATCH));
    watch(fd[0], WATCH_TAG0);
    watch(fd[1], WATCH_TAG1);
    wait_none(fd[3]);
    finish(fd[3]);
    raw_send(fd[2], 0, 5, "first", 5);
    raw_send(fd[2], 0, 6, "second", 6);
    close(fd[2]);
    raw_cmd(fd[1], SOCKMODEL_RECV, 0, 0, 0, 0);
    /* behind the dead node's messages, with the watcher's own tag */
    recv_expect(fd[0], 2, 5, "first");
    recv_expect(fd[0], 2, 6, "second");
    recv_expect(fd[0], 2, WATCH_TAG0, "");
    /* node 0 waits (once only: nothing more comes), so that time passes
     * for node 1's notice */
    raw_cmd(fd[0], SOCKMODEL_WAITING_START, 200000, 0, 0, 0);
    expect_msg(fd[1], SOCKMODEL_RECV, 2, WATCH_TAG1, "");
    expect_reply(fd[0], SOCKMODEL_WAITING_START, SOCKMODEL_ST_EXPIRED, NULL, NULL, 0);
    wait_none(fd[1]);
    /* a finished node is no dead one */
    finish_both(fd[1], fd[0]);
    assert_int_equal(sim_wait(&s), 3); /* a node was dropped */
    sim_cleanup(&s);
}

/* a notice wakes a RECVFROM of the dead node; a node that watches only
 * after the death is told at once. Whoever is not answered meanwhile
 * waits (WAITING_START), so that simulated time goes on in torus mode. */
static void test_late(void **state)
{
    const char *model = *state;
    sim_run_t s;
    int fd[3];

    sim_start(&s, 3, "--model", model, (char *) NULL);
    connect_all(&s, fd, 3);
    watch(fd[0], WATCH_TAG0);
    raw_cmd(fd[1], SOCKMODEL_WAITING_START, 500000, 0, 0, 0);
    raw_cmd(fd[0], SOCKMODEL_RECVFROM, 2, 0, 0, 0);
    close(fd[2]);
    expect_msg(fd[0], SOCKMODEL_RECVFROM, 2, WATCH_TAG0, "");
    expect_reply(fd[1], SOCKMODEL_WAITING_START, SOCKMODEL_ST_EXPIRED, NULL, NULL, 0);
    /* node 0 has seen the death: node 1 watches now and is told */
    watch(fd[1], WATCH_TAG1);
    raw_cmd(fd[0], SOCKMODEL_WAITING_START, 500000, 0, 0, 0);
    recv_expect(fd[1], 2, WATCH_TAG1, "");
    expect_reply(fd[0], SOCKMODEL_WAITING_START, SOCKMODEL_ST_EXPIRED, NULL, NULL, 0);
    finish_both(fd[0], fd[1]);
    assert_int_equal(sim_wait(&s), 3);
    sim_cleanup(&s);
}

/* WATCH twice, or with flags, is a broken client: dropped, and its
 * death is announced to the other watcher like any other */
static void test_watch_misuse(void **state)
{
    sim_run_t s;
    int fd[3];

    (void) state;
    sim_start(&s, 3, (char *) NULL);
    connect_all(&s, fd, 3);
    watch(fd[0], WATCH_TAG0);
    watch(fd[1], WATCH_TAG1);
    raw_cmd(fd[1], SOCKMODEL_WATCH, WATCH_TAG1, 0, 0, 0);
    expect_eof(fd[1]);
    raw_cmd(fd[2], SOCKMODEL_WATCH, WATCH_TAG0, 1, 0, 0);
    expect_eof(fd[2]);
    /* both died, in some order */
    {
        tc_sockmodel_reply_t r;
        int seen = 0;

        for (int i = 0; i < 2; i++) {
            raw_cmd(fd[0], SOCKMODEL_RECV, 0, 0, 0, 0);
            expect_reply(fd[0], SOCKMODEL_RECV, SOCKMODEL_ST_OK, &r, NULL, 0);
            assert_int_equal(r.arg[SOCKMODEL_ARG_TAG], WATCH_TAG0);
            assert_int_equal(r.arg[SOCKMODEL_ARG_LEN], 0);
            assert_true(1 == r.arg[SOCKMODEL_ARG_SRC] || 2 == r.arg[SOCKMODEL_ARG_SRC]);
            seen |= 1 << r.arg[SOCKMODEL_ARG_SRC];
        }
        assert_int_equal(seen, 6);
    }
    probe_none(fd[0]);
    finish(fd[0]);
    assert_int_equal(sim_wait(&s), 3);
    sim_cleanup(&s);
}

/* a simulator of two nodes: node 0 the client library's connection c,
 * node 1 a raw client (returned) */
static int conn_start(sim_run_t *s, tc_sockmodel_conn_t *c)
{
    char host[300];
    int port, other;

    sim_start(s, 2, (char *) NULL);
    assert_int_equal(tc_sockmodel_address_parse(s->hostport, host, sizeof(host), &port), 0);
    other = raw_connect(s);
    raw_word(other, 1);
    tc_sockmodel_conn_init(c, 4.0, 0.0, 60000);
    assert_int_equal(tc_sockmodel_conn_connect(c, host, port, 0, 30000), 0);
    assert_int_equal(raw_read_word(other), 1);
    return other;
}

/* the client library: WATCH through tc_sockmodel_conn_watch, the notice
 * through the ordinary receive */
static void test_conn_watch(void **state)
{
    sim_run_t s;
    tc_sockmodel_conn_t c;
    tc_sockmodel_msg_info_t info;
    int other;
    char buf[16];

    (void) state;
    other = conn_start(&s, &c);
    /* before SIZE the features are unknown: refused without a word sent */
    assert_int_equal(tc_sockmodel_conn_watch(&c, WATCH_TAG0), -ENOTSUP);
    close(other);
    tc_sockmodel_conn_close(&c);
    assert_int_equal(sim_wait(&s), 3);
    sim_cleanup(&s);

    other = conn_start(&s, &c);
    assert_int_equal(tc_sockmodel_conn_size(&c), 0);
    assert_int_equal(tc_sockmodel_conn_watch(&c, WATCH_TAG0), 0);
    close(other);
    assert_int_equal(tc_sockmodel_conn_recv(&c, buf, sizeof(buf), &info, NULL, NULL), 0);
    assert_int_equal(info.src, 1);
    assert_int_equal(info.tag, WATCH_TAG0);
    assert_int_equal(info.len, 0);
    assert_int_equal(tc_sockmodel_conn_finish(&c), 0);
    assert_int_equal(sim_wait(&s), 3);
    sim_cleanup(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        SIM_MODEL_TEST(test_notice, "simpel"), SIM_MODEL_TEST(test_notice, "torus"),
        SIM_MODEL_TEST(test_late, "simpel"),   SIM_MODEL_TEST(test_late, "torus"),
        cmocka_unit_test(test_watch_misuse),   cmocka_unit_test(test_conn_watch),
    };
    signal(SIGPIPE, SIG_IGN);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
