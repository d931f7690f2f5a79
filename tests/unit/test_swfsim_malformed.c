/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_swfsim_malformed.c: a running simulator against broken clients.
 * Before the start: garbage and impossible handshakes, duplicate ranks,
 * truncated hellos and early disconnects are refused or dropped and free
 * their slot.  After the start: an unknown request, an impossible size,
 * an impossible destination or source, a truncated frame or payload, a
 * command during WAITING_START, a disconnect while blocked, and clients
 * beyond N are dropped.  Every time the well-behaved nodes then complete
 * a verified exchange, and the simulator ends with the documented code.
 */

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "test_swfsim_harness.h"

/* rank a sends three patterned messages (0 B, 1 KiB, 100 KB) to rank b,
 * b checks them and answers; both finish */
static void good_exchange(int fa, uint32_t a, int fb, uint32_t b)
{
    static const uint32_t sizes[] = {0, 1024, 100000};
    unsigned char *out = malloc(100000), *in = malloc(100000);
    tc_sockmodel_reply_t r;

    assert_non_null(out);
    assert_non_null(in);
    for (unsigned i = 0; i < 3; i++) {
        fill_pattern(out, sizes[i], i + 1);
        raw_send(fa, b, 100 + i, out, sizes[i]);
    }
    /* a blocks in RECV now: in torus mode an idle running node would
     * hold simulated time back (it may still send at its clock) */
    raw_cmd(fa, SOCKMODEL_RECV, 0, 0, 0, 0);
    for (unsigned i = 0; i < 3; i++) {
        raw_cmd(fb, SOCKMODEL_RECVFROM, a, 0, 0, 0);
        expect_reply(fb, SOCKMODEL_RECVFROM, SOCKMODEL_ST_OK, &r, in, 100000);
        assert_int_equal(r.arg[SOCKMODEL_ARG_SRC], a);
        assert_int_equal(r.arg[SOCKMODEL_ARG_TAG], 100 + i);
        assert_int_equal(r.arg[SOCKMODEL_ARG_LEN], sizes[i]);
        fill_pattern(out, sizes[i], i + 1);
        assert_memory_equal(in, out, sizes[i]);
    }
    /* b answers and finishes: once finished it no longer holds time
     * back, so the answer can arrive in torus mode too */
    raw_send(fb, a, 7, "ok", 2);
    raw_cmd(fb, SOCKMODEL_FINISH, 0, 0, 0, 0);
    expect_reply(fb, SOCKMODEL_FINISH, SOCKMODEL_ST_OK, NULL, NULL, 0);
    expect_eof(fb);
    expect_reply(fa, SOCKMODEL_RECV, SOCKMODEL_ST_OK, &r, in, 16);
    assert_int_equal(r.arg[SOCKMODEL_ARG_SRC], b);
    assert_memory_equal(in, "ok", 2);
    raw_cmd(fa, SOCKMODEL_FINISH, 0, 0, 0, 0);
    expect_reply(fa, SOCKMODEL_FINISH, SOCKMODEL_ST_OK, NULL, NULL, 0);
    expect_eof(fa);
    free(out);
    free(in);
}

static void test_before_start(void **state)
{
    sim_run_t s;
    int g0, g1, fd;
    char *rep;

    (void) state;
    sim_start(&s, 2, (char *) NULL);

    /* asks for rank 0 and leaves before the start: rank 0 is free again */
    fd = raw_connect(&s);
    raw_word(fd, 0);
    close(fd);
    /* a truncated hello, then gone */
    fd = raw_connect(&s);
    assert_int_equal(tc_sockmodel_client_write_all(fd, "\0\0", 2), 0);
    close(fd);
    /* connect and vanish */
    close(raw_connect(&s));
    /* the refusals below are answered after the simulator has seen
     * these connections close (their end came first on loopback) */
    /* garbage instead of a hello */
    fd = raw_connect(&s);
    assert_int_equal(tc_sockmodel_client_write_all(fd, "GARBAGE!GARBAGE!", 16), 0);
    assert_int_equal(raw_read_word(fd), SOCKMODEL_RANK_REFUSED);
    expect_eof(fd);
    /* a rank that does not exist */
    fd = raw_connect(&s);
    raw_word(fd, 2);
    assert_int_equal(raw_read_word(fd), SOCKMODEL_RANK_REFUSED);
    expect_eof(fd);

    /* a good client takes rank 1; a second one asking for 1 is refused */
    g1 = raw_connect(&s);
    raw_word(g1, 1);
    fd = raw_connect(&s);
    raw_word(fd, 1);
    assert_int_equal(raw_read_word(fd), SOCKMODEL_RANK_REFUSED);
    expect_eof(fd);
    /* rank 0 (freed above) completes the run; commands sent before the
     * welcome are kept */
    g0 = raw_connect(&s);
    raw_word(g0, 0);
    raw_cmd(g0, SOCKMODEL_RANK, 0, 0, 0, 0);
    assert_int_equal(raw_read_word(g0), 0);
    assert_int_equal(raw_read_word(g1), 1);
    {
        tc_sockmodel_reply_t r;
        expect_reply(g0, SOCKMODEL_RANK, SOCKMODEL_ST_OK, &r, NULL, 0);
        assert_int_equal(r.arg[0], 0);
    }
    /* beyond N: refused, even with a valid-looking hello */
    fd = raw_connect(&s);
    raw_word(fd, SOCKMODEL_RANK_ANY);
    assert_int_equal(raw_read_word(fd), SOCKMODEL_RANK_REFUSED);
    expect_eof(fd);

    good_exchange(g0, 0, g1, 1);
    assert_int_equal(sim_wait(&s), 0);
    rep = sim_report(&s);
    assert_non_null(strstr(rep, "\"status\": \"ok\""));
    assert_non_null(strstr(rep, "\"refused_clients\": 4"));
    free(rep);
    sim_cleanup(&s);
}

enum { BAD_FIRST = 2, NBAD = 9 };

static void test_after_start(void **state)
{
    const char *model = *state;
    sim_run_t s;
    int fd[BAD_FIRST + NBAD];
    uint32_t n = BAD_FIRST + NBAD;
    unsigned char junk[64];
    tc_sockmodel_cmd_t c;
    char *rep;

    sim_start(&s, n, "--model", model, "--max-msg", "200000", (char *) NULL);
    for (uint32_t i = 0; i < n; i++) {
        fd[i] = raw_connect(&s);
        raw_word(fd[i], i);
    }
    for (uint32_t i = 0; i < n; i++) {
        assert_int_equal(raw_read_word(fd[i]), i);
    }

    /* 2: an unknown request code */
    raw_cmd(fd[2], 0x41414141u, 1, 2, 3, 4);
    expect_eof(fd[2]);
    /* 3: an impossible size: never allocated, the client is dropped */
    raw_cmd(fd[3], SOCKMODEL_SEND, 0, 0, 0xffffffffu, 0);
    expect_eof(fd[3]);
    /* 4: one byte over the limit */
    raw_cmd(fd[4], SOCKMODEL_SEND, 0, 0, 200001, 0);
    expect_eof(fd[4]);
    /* 5: an impossible destination, and 6: an impossible source */
    raw_cmd(fd[5], SOCKMODEL_SEND, n, 0, 4, 0);
    expect_eof(fd[5]);
    raw_cmd(fd[6], SOCKMODEL_RECVFROM, 99999, 0, 0, 0);
    expect_eof(fd[6]);
    /* 7: half a command, then gone */
    tc_sockmodel_cmd_make(&c, SOCKMODEL_PROBE, 0, 0, 0, 0, 0);
    tc_sockmodel_cmd_encode(junk, &c);
    assert_int_equal(tc_sockmodel_client_write_all(fd[7], junk, 13), 0);
    close(fd[7]);
    /* 8: a SEND whose payload stops short, then gone */
    raw_cmd(fd[8], SOCKMODEL_SEND, 0, 9, 1000, 0);
    assert_int_equal(tc_sockmodel_client_write_all(fd[8], junk, 10), 0);
    close(fd[8]);
    /* 9: a command other than WAITING_STOP while waiting */
    raw_cmd(fd[9], SOCKMODEL_WAITING_START, SOCKMODEL_WAIT_MAX_US, 0, 0, 0);
    raw_cmd(fd[9], SOCKMODEL_PROBE, 0, 0, 0, 0);
    expect_eof(fd[9]);
    /* 10: BARRIER_ENTER of a barrier it never initialised */
    raw_cmd(fd[10], SOCKMODEL_BARRIER_ENTER, 3, 0, 0, 0);
    expect_eof(fd[10]);

    /* a message to a dropped node is discarded, not a failure */
    raw_send(fd[0], 2, 1, "lost", 4);
    good_exchange(fd[0], 0, fd[1], 1);
    /* nodes were dropped after the start: exit code 3 */
    assert_int_equal(sim_wait(&s), 3);
    rep = sim_report(&s);
    assert_non_null(strstr(rep, "\"status\": \"node-dropped\""));
    assert_non_null(strstr(rep, "\"dropped_clients\": 9"));
    assert_non_null(strstr(rep, "{ \"rank\": 0, \"state\": \"finished\""));
    assert_non_null(strstr(rep, "{ \"rank\": 1, \"state\": \"finished\""));
    assert_non_null(strstr(rep, "{ \"rank\": 5, \"state\": \"dropped\""));
    assert_non_null(strstr(rep, "unknown request code"));
    assert_non_null(strstr(rep, "larger than the message limit"));
    free(rep);
    sim_cleanup(&s);
}

/* a client that disconnects while blocked in RECV is dropped and the
 * others carry on */
static void test_disconnect_while_blocked(void **state)
{
    sim_run_t s;
    int f0, f1, f2;

    (void) state;
    sim_start(&s, 3, "--model", "torus", (char *) NULL);
    f0 = raw_connect(&s);
    f1 = raw_connect(&s);
    f2 = raw_connect(&s);
    raw_word(f0, 0);
    raw_word(f1, 1);
    raw_word(f2, 2);
    assert_int_equal(raw_read_word(f0), 0);
    assert_int_equal(raw_read_word(f1), 1);
    assert_int_equal(raw_read_word(f2), 2);
    raw_cmd(f2, SOCKMODEL_RECV, 0, 0, 0, 0);
    {
        /* make sure the RECV is blocked before leaving */
        tc_sockmodel_reply_t r;
        raw_cmd(f0, SOCKMODEL_PROBE, 0, 0, 0, 0);
        expect_reply(f0, SOCKMODEL_PROBE, SOCKMODEL_ST_NONE, &r, NULL, 0);
    }
    close(f2);
    good_exchange(f0, 0, f1, 1);
    assert_int_equal(sim_wait(&s), 3);
    sim_cleanup(&s);
}

/* a node that floods one which never receives is dropped at the
 * simulator's memory limit; the others carry on */
static void test_memory_limit(void **state)
{
    sim_run_t s;
    int fd[3];
    unsigned char *big = calloc(1, 600000);

    (void) state;
    assert_non_null(big);
    sim_start(&s, 3, "--mem-limit", "1M", (char *) NULL);
    for (uint32_t i = 0; i < 3; i++) {
        fd[i] = raw_connect(&s);
        raw_word(fd[i], i);
    }
    for (uint32_t i = 0; i < 3; i++) {
        assert_int_equal(raw_read_word(fd[i]), i);
    }
    raw_send(fd[2], 1, 1, big, 600000);
    raw_cmd(fd[2], SOCKMODEL_SEND, 1, 2, 600000, 0);
    expect_eof(fd[2]);
    good_exchange(fd[0], 0, fd[1], 1);
    assert_int_equal(sim_wait(&s), 3);
    free(big);
    sim_cleanup(&s);
}

/* hello with a token: marker, rank, token bytes */
static void token_hello(int fd, uint32_t rank, const unsigned char *token)
{
    unsigned char hello[SOCKMODEL_HELLO_AUTH_BYTES];

    tc_sockmodel_put32(hello, SOCKMODEL_HELLO_AUTH);
    tc_sockmodel_put32(hello + 4, rank);
    memcpy(hello + 8, token, SOCKMODEL_TOKEN_BYTES);
    assert_int_equal(tc_sockmodel_client_write_all(fd, hello, sizeof(hello)), 0);
}

/* A simulator started with a job token refuses clients without it or
 * with another one (and logs it); the job's clients run as usual. */
static void test_token(void **state)
{
    sim_run_t s;
    unsigned char token[SOCKMODEL_TOKEN_BYTES], wrong[SOCKMODEL_TOKEN_BYTES],
        back[SOCKMODEL_TOKEN_BYTES];
    char line[2 * SOCKMODEL_TOKEN_BYTES + 2], path[64];
    int fd, g[2];
    char *rep;
    FILE *f;

    (void) state;
    for (unsigned i = 0; i < SOCKMODEL_TOKEN_BYTES; i++) {
        token[i] = (unsigned char) (i * 29u + 7u);
        wrong[i] = token[i];
    }
    wrong[SOCKMODEL_TOKEN_BYTES - 1] ^= 1u;
    tc_sockmodel_token_format(token, line);
    assert_int_equal(0, tc_sockmodel_token_parse(line, back));
    assert_memory_equal(token, back, sizeof(token));
    line[10] = 'g'; /* not a hex digit */
    assert_int_equal(-1, tc_sockmodel_token_parse(line, back));
    tc_sockmodel_token_format(token, line);
    snprintf(path, sizeof(path), "/tmp/swfsim-token.%d", (int) getpid());
    f = fopen(path, "w");
    assert_non_null(f);
    fputs(line, f);
    fclose(f);

    sim_start(&s, 2, "--token-file", path, (char *) NULL);
    /* the plain hello of a client that does not know the token */
    fd = raw_connect(&s);
    raw_word(fd, 0);
    assert_int_equal(raw_read_word(fd), SOCKMODEL_RANK_REFUSED);
    expect_eof(fd);
    /* a wrong token */
    fd = raw_connect(&s);
    token_hello(fd, 1, wrong);
    assert_int_equal(raw_read_word(fd), SOCKMODEL_RANK_REFUSED);
    expect_eof(fd);
    /* the job's clients */
    g[0] = raw_connect(&s);
    token_hello(g[0], 0, token);
    g[1] = raw_connect(&s);
    token_hello(g[1], 1, token);
    assert_int_equal(raw_read_word(g[0]), 0);
    assert_int_equal(raw_read_word(g[1]), 1);
    good_exchange(g[0], 0, g[1], 1);
    assert_int_equal(sim_wait(&s), 0);
    rep = sim_report(&s);
    assert_non_null(strstr(rep, "\"refused_clients\": 2"));
    free(rep);
    sim_cleanup(&s);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_token),
        cmocka_unit_test(test_before_start),
        SIM_MODEL_TEST(test_after_start, "simpel"),
        SIM_MODEL_TEST(test_after_start, "torus"),
        cmocka_unit_test(test_disconnect_while_blocked),
        cmocka_unit_test(test_memory_limit),
    };
    signal(SIGPIPE, SIG_IGN);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
