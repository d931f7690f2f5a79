/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_swfsim_fuzz.c: random traffic against a running simulator.  Four
 * clients send seeded random streams mixing valid commands, impossible
 * values, unknown codes, truncated frames and sudden disconnects, in
 * both models.  The simulator must never crash or hang: it ends with a
 * documented exit status (0 done, 2 deadlock, 3 nodes dropped, 4 not all
 * nodes came) and, under valgrind, without memory errors. A second run
 * mixes WATCH and node deaths (node-down notices to nodes that die next).
 */

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <fcntl.h>
#include <poll.h>
#include <cmocka.h>

#include "test_swfsim_harness.h"

#define FUZZ_NODES 4
#define FUZZ_STEPS 300

static uint32_t fuzz_rand(uint64_t *s)
{
    /* xorshift64* */
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return (uint32_t) ((*s * 2685821657736338717ull) >> 32);
}

static void fuzz_drain(int *fd)
{
    char buf[65536];

    for (int i = 0; i < FUZZ_NODES; i++) {
        if (fd[i] >= 0) {
            while (read(fd[i], buf, sizeof(buf)) > 0) {
            }
        }
    }
}

/* every client still connected goes; the simulator's exit code */
static int fuzz_end(sim_run_t *s, int *fd)
{
    for (int i = 0; i < FUZZ_NODES; i++) {
        if (fd[i] >= 0) {
            close(fd[i]);
        }
    }
    return sim_wait(s);
}

static void fuzz_run(uint64_t seed, const char *model)
{
    static const uint32_t picks[] = {0, 1, 2, 3, 4, 99999, 0xffffffffu};
    sim_run_t s;
    int fd[FUZZ_NODES];
    unsigned char frame[SOCKMODEL_CMD_BYTES + 5000];
    int rc;

    sim_start(&s, FUZZ_NODES, "--model", model, "--max-msg", "5000", "--connect-timeout", "30",
              (char *) NULL);
    for (int i = 0; i < FUZZ_NODES; i++) {
        fd[i] = raw_connect(&s);
        raw_word(fd[i], (fuzz_rand(&seed) & 1) ? (uint32_t) i : SOCKMODEL_RANK_ANY);
        fcntl(fd[i], F_SETFL, O_NONBLOCK);
    }
    memset(frame, 0x5a, sizeof(frame));
    for (int step = 0; step < FUZZ_STEPS; step++) {
        int k = (int) (fuzz_rand(&seed) % FUZZ_NODES);
        uint32_t x = fuzz_rand(&seed);
        uint32_t req = (x % 64) ? 1 + x % SOCKMODEL_REQUEST_MAX : fuzz_rand(&seed);
        uint32_t p0 =
            (fuzz_rand(&seed) % 8) ? fuzz_rand(&seed) % FUZZ_NODES : picks[fuzz_rand(&seed) % 7];
        uint32_t p2 = (fuzz_rand(&seed) % 16) ? fuzz_rand(&seed) % 5001 : fuzz_rand(&seed);
        size_t len = SOCKMODEL_CMD_BYTES;
        tc_sockmodel_cmd_t c;

        if (fd[k] < 0) {
            continue;
        }
        if (SOCKMODEL_WAITING_START == req) {
            p0 = fuzz_rand(&seed) % 20000;
        }
        if (SOCKMODEL_FINISH == req && fuzz_rand(&seed) % 4) {
            req = SOCKMODEL_PROBE; /* keep runs alive a while */
        }
        tc_sockmodel_cmd_make(&c, req, p0, fuzz_rand(&seed) % 4, p2, 0, fuzz_rand(&seed) % 1000);
        tc_sockmodel_cmd_encode(frame, &c);
        if (SOCKMODEL_SEND == req && p2 <= 5000 && fuzz_rand(&seed) % 10) {
            len += p2;
        }
        if (0 == fuzz_rand(&seed) % 100) {
            len = fuzz_rand(&seed) % len; /* truncated */
        }
        (void) !send(fd[k], frame, len, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (0 == fuzz_rand(&seed) % 100) {
            close(fd[k]);
            fd[k] = -1;
        }
        fuzz_drain(fd);
    }
    rc = fuzz_end(&s, fd);
    if (0 != rc && 2 != rc && 3 != rc && 4 != rc) {
        fprintf(stderr, "fuzz seed %llu model %s: simulator exit %d\n", (unsigned long long) seed,
                model, rc);
    }
    assert_true(0 == rc || 2 == rc || 3 == rc || 4 == rc);
    sim_cleanup(&s);
}

/* Requests sent as fast as possible and no reply ever read (pipelined
 * PROBE and SIZE, in a seeded random mix): the simulator must stop
 * reading this client once its queued replies pass the bound, so the
 * client's writes block long before all of them are out, and the queue
 * never grew beyond the bound. Then the client reads every reply it is
 * owed, in order, and the run ends normally. */
static void unread_run(uint64_t seed, const char *model)
{
    enum { UNREAD_CMDS = 1000000 };
    sim_run_t s;
    int fd[2], flags;
    uint64_t rng = seed;
    size_t sent = 0, done = 0;
    unsigned char *cmds = malloc((size_t) UNREAD_CMDS * SOCKMODEL_CMD_BYTES);
    uint32_t *kinds = malloc(sizeof(uint32_t) * UNREAD_CMDS);
    size_t off = 0, total = (size_t) UNREAD_CMDS * SOCKMODEL_CMD_BYTES;
    char *rep, *peak;
    tc_sockmodel_reply_t r;

    assert_non_null(cmds);
    assert_non_null(kinds);
    for (size_t i = 0; i < UNREAD_CMDS; i++) {
        tc_sockmodel_cmd_t c;

        kinds[i] = (fuzz_rand(&rng) & 1u) ? SOCKMODEL_PROBE : SOCKMODEL_SIZE;
        tc_sockmodel_cmd_make(&c, kinds[i], 0, 0, 0, 0, 0);
        tc_sockmodel_cmd_encode(cmds + i * SOCKMODEL_CMD_BYTES, &c);
    }
    sim_start(&s, 2, "--model", model, (char *) NULL);
    for (uint32_t i = 0; i < 2; i++) {
        fd[i] = raw_connect(&s);
        raw_word(fd[i], i);
    }
    for (uint32_t i = 0; i < 2; i++) {
        assert_int_equal(raw_read_word(fd[i]), i);
    }
    /* node 1 waits, so that node 0's probes come due in torus mode */
    raw_cmd(fd[1], SOCKMODEL_RECV, 0, 0, 0, 0);
    flags = fcntl(fd[0], F_GETFL);
    assert_int_equal(0, fcntl(fd[0], F_SETFL, flags | O_NONBLOCK));
    for (int stalls = 0; off < total && stalls < 50;) {
        ssize_t w = write(fd[0], cmds + off, total - off);

        if (w > 0) {
            off += (size_t) w;
            stalls = 0;
        } else {
            struct pollfd p = {.fd = fd[0], .events = POLLOUT};

            assert_true(w < 0 && (EAGAIN == errno || EWOULDBLOCK == errno));
            if (0 == poll(&p, 1, 20)) {
                stalls++;
            }
        }
    }
    /* the simulator stopped reading: not everything got out (the kernel's
     * socket buffers hold a few MB of it) */
    assert_true(off < total);
    assert_int_equal(0, fcntl(fd[0], F_SETFL, flags));
    sent = off / SOCKMODEL_CMD_BYTES;
    /* read what is owed, then write the rest in pieces the simulator
     * answers without reaching the bound, reading their replies */
    while (done < UNREAD_CMDS) {
        if (done == sent && off < total) {
            size_t chunk =
                total - off < 1024 * SOCKMODEL_CMD_BYTES ? total - off : 1024 * SOCKMODEL_CMD_BYTES;

            assert_int_equal(tc_sockmodel_client_write_all(fd[0], cmds + off, chunk), 0);
            off += chunk;
            sent = off / SOCKMODEL_CMD_BYTES;
        }
        while (done < sent) {
            if (getenv("UNREAD_DEBUG") && 0 == done % 100000) {
                fprintf(stderr, "%s done %zu sent %zu off %zu\n", model, done, sent, off);
            }
            expect_reply(fd[0], kinds[done],
                         SOCKMODEL_PROBE == kinds[done] ? SOCKMODEL_ST_NONE : SOCKMODEL_ST_OK, &r,
                         NULL, 0);
            done++;
        }
    }
    /* node 0 finishes, so that it no longer holds time back (torus) */
    raw_send(fd[0], 1, 1, "end", 3);
    raw_cmd(fd[0], SOCKMODEL_FINISH, 0, 0, 0, 0);
    expect_reply(fd[1], SOCKMODEL_RECV, SOCKMODEL_ST_OK, &r, NULL, 0);
    raw_cmd(fd[1], SOCKMODEL_FINISH, 0, 0, 0, 0);
    expect_reply(fd[0], SOCKMODEL_FINISH, SOCKMODEL_ST_OK, NULL, NULL, 0);
    expect_reply(fd[1], SOCKMODEL_FINISH, SOCKMODEL_ST_OK, NULL, NULL, 0);
    assert_int_equal(sim_wait(&s), 0);
    rep = sim_report(&s);
    peak = strstr(rep, "\"out_peak\": ");
    assert_non_null(peak);
    assert_true(strtoul(peak + 12, NULL, 10) <= SWFSIM_OUT_MAX + 2);
    free(rep);
    sim_cleanup(&s);
    close(fd[0]);
    close(fd[1]);
    free(cmds);
    free(kinds);
}

static void test_unread_replies(void **state)
{
    (void) state;
    unread_run(7, "simpel");
    unread_run(8, "torus");
}

/* Node deaths under WATCH: every client sends WATCH (now and then a
 * second one, or one with flags: dropped), then a seeded mix of SENDs to
 * watching and dying nodes, PROBEs, short waits and disconnects, so that
 * notices are queued for nodes that die next, in both models. */
static void watch_fuzz_run(uint64_t seed, const char *model)
{
    sim_run_t s;
    int fd[FUZZ_NODES];
    unsigned char frame[SOCKMODEL_CMD_BYTES + 64];
    int rc;

    sim_start(&s, FUZZ_NODES, "--model", model, "--max-msg", "64", "--connect-timeout", "30",
              (char *) NULL);
    for (int i = 0; i < FUZZ_NODES; i++) {
        fd[i] = raw_connect(&s);
        raw_word(fd[i], (uint32_t) i);
    }
    /* each node's rank word back: the simulator has started (every node
     * known) before the first death, which would otherwise, on a slow
     * machine, drop a client still in its handshake and leave the
     * simulator waiting for a node that never comes (exit 4) */
    for (int i = 0; i < FUZZ_NODES; i++) {
        assert_int_equal(raw_read_word(fd[i]), (uint32_t) i);
        fcntl(fd[i], F_SETFL, O_NONBLOCK);
    }
    memset(frame, 0x3c, sizeof(frame));
    for (int step = 0; step < FUZZ_STEPS; step++) {
        int k = (int) (fuzz_rand(&seed) % FUZZ_NODES);
        uint32_t x = fuzz_rand(&seed) % 16;
        size_t len = SOCKMODEL_CMD_BYTES;
        tc_sockmodel_cmd_t c;

        if (fd[k] < 0) {
            continue;
        }
        if (0 == step / FUZZ_NODES || x < 1) {
            /* WATCH: mostly well formed, sometimes twice or with flags */
            tc_sockmodel_cmd_make(&c, SOCKMODEL_WATCH, fuzz_rand(&seed),
                                  (fuzz_rand(&seed) % 8) ? 0 : fuzz_rand(&seed), 0, 0, 0);
        } else if (x < 8) {
            uint32_t n = fuzz_rand(&seed) % 65;

            tc_sockmodel_cmd_make(&c, SOCKMODEL_SEND, fuzz_rand(&seed) % FUZZ_NODES,
                                  fuzz_rand(&seed) % 4, n, 0, 0);
            len += n;
        } else if (x < 12) {
            tc_sockmodel_cmd_make(&c, SOCKMODEL_PROBE, 0, 0, 0, 0, 0);
        } else if (x < 14) {
            tc_sockmodel_cmd_make(&c, SOCKMODEL_WAITING_START, fuzz_rand(&seed) % 2000, 0, 0, 0, 0);
        } else {
            tc_sockmodel_cmd_make(&c, SOCKMODEL_RECVFROM, fuzz_rand(&seed) % FUZZ_NODES, 0, 0, 0,
                                  0);
        }
        tc_sockmodel_cmd_encode(frame, &c);
        (void) !send(fd[k], frame, len, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (0 == fuzz_rand(&seed) % 25) {
            close(fd[k]); /* a death, announced to every watcher left */
            fd[k] = -1;
        }
        fuzz_drain(fd);
    }
    rc = fuzz_end(&s, fd);
    if (0 != rc && 2 != rc && 3 != rc) {
        fprintf(stderr, "watch fuzz seed %llu model %s: simulator exit %d\n",
                (unsigned long long) seed, model, rc);
    }
    assert_true(0 == rc || 2 == rc || 3 == rc);
    sim_cleanup(&s);
}

static void test_watch_fuzz(void **state)
{
    (void) state;
    for (uint64_t seed = 1; seed <= 12; seed++) {
        watch_fuzz_run(seed * 0x2545f4914f6cdd1dull, (seed & 1) ? "torus" : "simpel");
    }
}

static void test_fuzz(void **state)
{
    (void) state;
    for (uint64_t seed = 1; seed <= 24; seed++) {
        fuzz_run(seed * 0x9e3779b97f4a7c15ull, (seed & 1) ? "torus" : "simpel");
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fuzz),
        cmocka_unit_test(test_watch_fuzz),
        cmocka_unit_test(test_unread_replies),
    };
    signal(SIGPIPE, SIG_IGN);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
