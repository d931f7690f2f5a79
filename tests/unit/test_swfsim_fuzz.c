/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_swfsim_fuzz.c: random traffic against a running simulator.  Four
 * clients send seeded random streams mixing valid commands, impossible
 * values, unknown codes, truncated frames and sudden disconnects, in
 * both models.  The simulator must never crash or hang: it ends with a
 * documented exit status (0 done, 2 deadlock, 3 nodes dropped, 4 not all
 * nodes came) and, under valgrind, without memory errors.
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

static void fuzz_run(uint64_t seed, const char *model)
{
    static const uint32_t picks[] = { 0, 1, 2, 3, 4, 99999, 0xffffffffu };
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
        uint32_t p0 = (fuzz_rand(&seed) % 8) ? fuzz_rand(&seed) % FUZZ_NODES : picks[fuzz_rand(&seed) % 7];
        uint32_t p2 = (fuzz_rand(&seed) % 16) ? fuzz_rand(&seed) % 5001 : fuzz_rand(&seed);
        size_t len = SOCKMODEL_CMD_BYTES;
        sockmodel_cmd_t c;

        if (fd[k] < 0) {
            continue;
        }
        if (SOCKMODEL_WAITING_START == req) {
            p0 = fuzz_rand(&seed) % 20000;
        }
        if (SOCKMODEL_FINISH == req && fuzz_rand(&seed) % 4) {
            req = SOCKMODEL_PROBE;   /* keep runs alive a while */
        }
        sockmodel_cmd_make(&c, req, p0, fuzz_rand(&seed) % 4, p2, 0, fuzz_rand(&seed) % 1000);
        sockmodel_cmd_encode(frame, &c);
        if (SOCKMODEL_SEND == req && p2 <= 5000 && fuzz_rand(&seed) % 10) {
            len += p2;
        }
        if (0 == fuzz_rand(&seed) % 100) {
            len = fuzz_rand(&seed) % len;     /* truncated */
        }
        (void) !send(fd[k], frame, len, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (0 == fuzz_rand(&seed) % 100) {
            close(fd[k]);
            fd[k] = -1;
        }
        fuzz_drain(fd);
    }
    for (int i = 0; i < FUZZ_NODES; i++) {
        if (fd[i] >= 0) {
            close(fd[i]);
        }
    }
    rc = sim_wait(&s);
    if (0 != rc && 2 != rc && 3 != rc && 4 != rc) {
        fprintf(stderr, "fuzz seed %llu model %s: simulator exit %d\n",
                (unsigned long long) seed, model, rc);
    }
    assert_true(0 == rc || 2 == rc || 3 == rc || 4 == rc);
    sim_cleanup(&s);
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
    };
    signal(SIGPIPE, SIG_IGN);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
