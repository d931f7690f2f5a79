/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_swfsim_join.c: nodes that join a running simulation (the hello
 * with SOCKMODEL_RANK_JOIN, docs/sockmodel.md), as a job started by
 * MPI_Comm_spawn joins its parent's: a joiner gets the next node number
 * and talks with the first nodes both ways; SIZE counts it and offers
 * the feature; its death is announced to watchers; the simulator waits
 * for a joined node that is still there and not for one that left;
 * --max-joined caps joiners; the torus model, a join before the start
 * and a wrong token are refused. tc_sockmodel_hello_parse is fuzzed with
 * random and mutated hellos of every length (never reading beyond them),
 * and a running simulator with random bytes from joiners.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <fcntl.h>

#include <cmocka.h>

#include "test_swfsim_harness.h"

#define JOIN_WATCH_TAG 0xD0D0u

static uint32_t join_rand(uint64_t *s)
{
    /* xorshift64* */
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return (uint32_t) ((*s * 2685821657736338717ull) >> 32);
}

/* a client that joins; its welcome word (a node number or REFUSED) */
static uint32_t join(const sim_run_t *s, int *fd)
{
    *fd = raw_connect(s);
    raw_word(*fd, SOCKMODEL_RANK_JOIN);
    return raw_read_word(*fd);
}

static void recv_expect(int fd, uint32_t src, uint32_t tag, const char *payload)
{
    tc_sockmodel_reply_t r;
    char buf[64];
    size_t len = strlen(payload);

    raw_cmd(fd, SOCKMODEL_RECV, 0, 0, 0, 0);
    expect_reply(fd, SOCKMODEL_RECV, SOCKMODEL_ST_OK, &r, buf, sizeof(buf));
    assert_int_equal(r.arg[SOCKMODEL_ARG_SRC], src);
    assert_int_equal(r.arg[SOCKMODEL_ARG_TAG], tag);
    assert_int_equal(r.arg[SOCKMODEL_ARG_LEN], len);
    assert_memory_equal(buf, payload, len);
}

/* two nodes, two joiners: numbers 2 and 3, traffic every way, SIZE */
static void test_join_traffic(void **state)
{
    sim_run_t s;
    int fd[4];
    tc_sockmodel_reply_t r;

    (void) state;
    sim_start(&s, 2, (char *) NULL);
    connect_all(&s, fd, 2);
    assert_int_equal(join(&s, &fd[2]), 2);
    assert_int_equal(join(&s, &fd[3]), 3);
    raw_cmd(fd[0], SOCKMODEL_SIZE, 0, 0, 0, 0);
    expect_reply(fd[0], SOCKMODEL_SIZE, SOCKMODEL_ST_OK, &r, NULL, 0);
    assert_int_equal(r.arg[0], 4);
    assert_true(0 != (r.arg[3] & SOCKMODEL_FEATURE_JOIN));
    raw_cmd(fd[3], SOCKMODEL_RANK, 0, 0, 0, 0);
    expect_reply(fd[3], SOCKMODEL_RANK, SOCKMODEL_ST_OK, &r, NULL, 0);
    assert_int_equal(r.arg[0], 3);
    raw_send(fd[0], 3, 7, "to-joined", 9);
    raw_send(fd[3], 1, 8, "from-joined", 11);
    raw_send(fd[2], 3, 9, "joined-joined", 13);
    recv_expect(fd[3], 0, 7, "to-joined");
    recv_expect(fd[3], 2, 9, "joined-joined");
    recv_expect(fd[1], 3, 8, "from-joined");
    for (int i = 0; i < 4; i++) {
        finish(fd[i]);
    }
    assert_int_equal(sim_wait(&s), 0);
    sim_cleanup(&s);
}

/* the first nodes finish; the joined one is still served, then the
 * simulator ends with it; a joiner that died is not waited for */
static void test_join_lifetime(void **state)
{
    sim_run_t s;
    int fd[4];
    tc_sockmodel_reply_t r;

    (void) state;
    sim_start(&s, 2, (char *) NULL);
    connect_all(&s, fd, 2);
    raw_cmd(fd[0], SOCKMODEL_WATCH, JOIN_WATCH_TAG, 0, 0, 0);
    expect_reply(fd[0], SOCKMODEL_WATCH, SOCKMODEL_ST_OK, NULL, NULL, 0);
    assert_int_equal(join(&s, &fd[2]), 2);
    assert_int_equal(join(&s, &fd[3]), 3);
    /* node 3 dies: a watcher is told, like for any node */
    close(fd[3]);
    recv_expect(fd[0], 3, JOIN_WATCH_TAG, "");
    finish(fd[0]);
    finish(fd[1]);
    /* only node 2 is left: still served */
    raw_send(fd[2], 2, 5, "self", 4);
    recv_expect(fd[2], 2, 5, "self");
    raw_cmd(fd[2], SOCKMODEL_PROBE, 0, 0, 0, 0);
    expect_reply(fd[2], SOCKMODEL_PROBE, SOCKMODEL_ST_NONE, &r, NULL, 0);
    finish(fd[2]);
    assert_int_equal(sim_wait(&s), 3); /* node 3 was dropped */
    sim_cleanup(&s);
}

/* --max-joined 1: the second joiner is refused, the run goes on; a SEND
 * to a node number nobody joined as drops its sender */
static void test_join_cap(void **state)
{
    sim_run_t s;
    int fd[4];

    (void) state;
    sim_start(&s, 2, "--max-joined", "1", (char *) NULL);
    connect_all(&s, fd, 2);
    assert_int_equal(join(&s, &fd[2]), 2);
    assert_int_equal(join(&s, &fd[3]), SOCKMODEL_RANK_REFUSED);
    expect_eof(fd[3]);
    raw_send(fd[1], 0, 1, "ok", 2);
    recv_expect(fd[0], 1, 1, "ok");
    raw_send(fd[2], 3, 1, "nobody", 6);
    expect_eof(fd[2]);
    finish(fd[0]);
    finish(fd[1]);
    assert_int_equal(sim_wait(&s), 3);
    sim_cleanup(&s);
}

/* refused: before the start, in torus mode, with --max-joined 0 (SIZE
 * then offers no joining), after the end */
static void test_join_refused(void **state)
{
    sim_run_t s;
    int fd[3];
    tc_sockmodel_reply_t r;

    (void) state;
    sim_start(&s, 2, (char *) NULL);
    assert_int_equal(join(&s, &fd[2]), SOCKMODEL_RANK_REFUSED);
    expect_eof(fd[2]);
    connect_all(&s, fd, 2);
    finish(fd[0]);
    finish(fd[1]);
    assert_int_equal(sim_wait(&s), 0);
    sim_cleanup(&s);

    sim_start(&s, 1, "--model", "torus", (char *) NULL);
    connect_all(&s, fd, 1);
    fd[2] = raw_connect(&s);
    raw_word(fd[2], SOCKMODEL_RANK_JOIN); /* may be refused before it is read */
    assert_int_equal(raw_read_word(fd[2]), SOCKMODEL_RANK_REFUSED);
    expect_eof(fd[2]);
    raw_cmd(fd[0], SOCKMODEL_SIZE, 0, 0, 0, 0);
    expect_reply(fd[0], SOCKMODEL_SIZE, SOCKMODEL_ST_OK, &r, NULL, 0);
    assert_int_equal(r.arg[3] & SOCKMODEL_FEATURE_JOIN, 0);
    finish(fd[0]);
    assert_int_equal(sim_wait(&s), 0);
    sim_cleanup(&s);

    sim_start(&s, 1, "--max-joined", "0", (char *) NULL);
    connect_all(&s, fd, 1);
    raw_cmd(fd[0], SOCKMODEL_SIZE, 0, 0, 0, 0);
    expect_reply(fd[0], SOCKMODEL_SIZE, SOCKMODEL_ST_OK, &r, NULL, 0);
    assert_int_equal(r.arg[3] & SOCKMODEL_FEATURE_JOIN, 0);
    fd[2] = raw_connect(&s);
    raw_word(fd[2], SOCKMODEL_RANK_JOIN);
    assert_int_equal(raw_read_word(fd[2]), SOCKMODEL_RANK_REFUSED);
    expect_eof(fd[2]);
    finish(fd[0]);
    assert_int_equal(sim_wait(&s), 0);
    sim_cleanup(&s);
}

/* with a token: a joiner without it or with a wrong one is refused, one
 * with it joins */
static void test_join_token(void **state)
{
    sim_run_t s;
    unsigned char tok[SOCKMODEL_TOKEN_BYTES], hello[SOCKMODEL_HELLO_AUTH_BYTES];
    char line[2 * SOCKMODEL_TOKEN_BYTES + 2], path[160];
    int fd[3];
    FILE *f;

    (void) state;
    memset(tok, 0x3c, sizeof(tok));
    tc_sockmodel_token_format(tok, line);
    snprintf(path, sizeof(path), "/tmp/swfsim-join-token.%d", (int) getpid());
    f = fopen(path, "w");
    assert_non_null(f);
    fputs(line, f);
    fclose(f);
    sim_start(&s, 1, "--token-file", path, (char *) NULL);
    fd[0] = raw_connect(&s);
    tc_sockmodel_put32(hello, SOCKMODEL_HELLO_AUTH);
    tc_sockmodel_put32(hello + 4, 0);
    memcpy(hello + 8, tok, sizeof(tok));
    assert_int_equal(tc_sockmodel_client_write_all(fd[0], hello, sizeof(hello)), 0);
    assert_int_equal(raw_read_word(fd[0]), 0);
    /* no token */
    assert_int_equal(join(&s, &fd[1]), SOCKMODEL_RANK_REFUSED);
    expect_eof(fd[1]);
    /* a wrong one */
    fd[1] = raw_connect(&s);
    tc_sockmodel_put32(hello + 4, SOCKMODEL_RANK_JOIN);
    hello[8] ^= 1;
    assert_int_equal(tc_sockmodel_client_write_all(fd[1], hello, sizeof(hello)), 0);
    assert_int_equal(raw_read_word(fd[1]), SOCKMODEL_RANK_REFUSED);
    expect_eof(fd[1]);
    /* the right one */
    fd[2] = raw_connect(&s);
    hello[8] ^= 1;
    assert_int_equal(tc_sockmodel_client_write_all(fd[2], hello, sizeof(hello)), 0);
    assert_int_equal(raw_read_word(fd[2]), 1);
    finish(fd[2]);
    finish(fd[0]);
    assert_int_equal(sim_wait(&s), 0);
    sim_cleanup(&s);
    unlink(path);
}

/* tc_sockmodel_hello_parse on buffers of exactly len bytes (valgrind and
 * ASan see a read beyond them): random bytes and mutated good hellos of
 * every length up to twice the largest */
static void test_hello_parse_fuzz(void **state)
{
    uint64_t seed = 0x9e3779b97f4a7c15ull;

    (void) state;
    for (int round = 0; round < 2000; round++) {
        size_t len = (size_t) round % (2 * SOCKMODEL_HELLO_AUTH_BYTES + 1);
        unsigned char *buf = malloc(len > 0 ? len : 1);
        tc_sockmodel_hello_t h;
        size_t took;

        assert_non_null(buf);
        for (size_t i = 0; i < len; i++) {
            buf[i] = (unsigned char) join_rand(&seed);
        }
        if (len >= 4 && 0 == (round & 1)) {
            /* a good hello's marker, then rank and token mutated */
            tc_sockmodel_put32(buf, SOCKMODEL_HELLO_AUTH);
        }
        took = tc_sockmodel_hello_parse(buf, len, &h);
        if (len < SOCKMODEL_HELLO_BYTES) {
            assert_int_equal(took, 0);
        } else if (SOCKMODEL_HELLO_AUTH == tc_sockmodel_get32(buf)) {
            assert_int_equal(took,
                             len < SOCKMODEL_HELLO_AUTH_BYTES ? 0 : SOCKMODEL_HELLO_AUTH_BYTES);
            if (took > 0) {
                assert_true(h.has_token);
                assert_int_equal(h.rank, tc_sockmodel_get32(buf + 4));
                assert_memory_equal(h.token, buf + 8, SOCKMODEL_TOKEN_BYTES);
            }
        } else {
            assert_int_equal(took, SOCKMODEL_HELLO_BYTES);
            assert_false(h.has_token);
            assert_int_equal(h.rank, tc_sockmodel_get32(buf));
        }
        free(buf);
    }
}

/* joiners that send random bytes after (or instead of) their hello, or
 * vanish: the simulator drops them, serves the first nodes on, and ends
 * with a documented status */
static void test_join_fuzz(void **state)
{
    (void) state;
    for (uint64_t seed = 1; seed <= 8; seed++) {
        uint64_t st = seed * 0x2545f4914f6cdd1dull;
        sim_run_t s;
        int fd[2], j[6], rc;

        sim_start(&s, 2, "--max-joined", "4", (char *) NULL);
        connect_all(&s, fd, 2);
        for (int k = 0; k < 6; k++) {
            unsigned char junk[200];
            size_t n = join_rand(&st) % sizeof(junk);

            j[k] = raw_connect(&s);
            for (size_t i = 0; i < n; i++) {
                junk[i] = (unsigned char) join_rand(&st);
            }
            if (join_rand(&st) & 1) {
                tc_sockmodel_put32(junk, SOCKMODEL_RANK_JOIN);
                n = n < 4 ? 4 : n;
            }
            (void) !write(j[k], junk, n);
            if (join_rand(&st) & 1) {
                close(j[k]);
                j[k] = -1;
            }
        }
        /* the first nodes are served throughout */
        raw_send(fd[0], 1, 3, "alive", 5);
        recv_expect(fd[1], 0, 3, "alive");
        for (int k = 0; k < 6; k++) {
            if (j[k] >= 0) {
                close(j[k]);
            }
        }
        finish(fd[0]);
        finish(fd[1]);
        rc = sim_wait(&s);
        assert_true(0 == rc || 3 == rc);
        sim_cleanup(&s);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_join_traffic), cmocka_unit_test(test_join_lifetime),
        cmocka_unit_test(test_join_cap),     cmocka_unit_test(test_join_refused),
        cmocka_unit_test(test_join_token),   cmocka_unit_test(test_hello_parse_fuzz),
        cmocka_unit_test(test_join_fuzz),
    };
    signal(SIGPIPE, SIG_IGN);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
