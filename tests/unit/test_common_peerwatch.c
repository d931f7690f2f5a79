/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_common_peerwatch.c: tc_peerwatch. A watched process killed
 * (SIGKILL: its kernel ends the connection) is reported once; one that
 * closes its watcher (the goodbye) is not; an address that is garbage, a
 * port nobody listens on, a lookup that fails: no report, nothing left
 * open. The address parser against a table and a fuzz (random texts and
 * mutations of a good one), and the classification of every read.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "tc_atomic.h"
#include "tc_peerwatch.h"

static int32_t pw_calls;
static uint32_t pw_last;

static void pw_dead(uint32_t id, void *arg)
{
    (void) arg;
    tc_atomic_store_relaxed(&pw_last, id);
    tc_atomic_fetch_add(&pw_calls, 1);
}

/* the "published" text of every peer: arg */
static int pw_lookup(uint32_t id, char **text, void *arg)
{
    (void) id;
    *text = NULL == arg ? NULL : strdup((const char *) arg);
    return NULL == *text ? -1 : 0;
}

/* wait (at most 20 s: a busy machine) until the report count (pw NULL)
 * or the number of connections pw watches is want */
static int pw_wait(tc_peerwatch_t *pw, int want)
{
    for (int i = 0; i < 2000; ++i) {
        if ((NULL == pw ? tc_atomic_load_relaxed(&pw_calls) : tc_peerwatch_watched(pw)) == want) {
            return 0;
        }
        usleep(10000);
    }
    return -1;
}

/* a peer process: opens and starts a watcher (watching nobody), sends its
 * text on out, then waits for a byte on in: 'k' stay (to be killed), 'c'
 * close the watcher and exit */
static pid_t pw_peer(char *text, size_t size, int *ctl)
{
    int up[2], down[2];
    pid_t pid;

    assert_int_equal(pipe(up), 0);
    assert_int_equal(pipe(down), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (0 == pid) {
        tc_peerwatch_t *pw;
        char addr[TC_PEERWATCH_ADDR_MAX] = {0};
        char c = 0;

        close(up[0]);
        close(down[1]);
        if (0 != tc_peerwatch_open(&pw, addr, sizeof(addr)) ||
            0 != tc_peerwatch_start(pw, NULL, 0, pw_lookup, pw_dead, NULL, 1000) ||
            (ssize_t) sizeof(addr) != write(up[1], addr, sizeof(addr))) {
            _exit(1);
        }
        while (1 != read(down[0], &c, 1)) {
        }
        if ('c' == c) {
            tc_peerwatch_close(pw);
            _exit(0);
        }
        for (;;) {
            pause();
        }
    }
    close(up[1]);
    close(down[0]);
    assert_int_equal(read(up[0], text, size), (ssize_t) size);
    close(up[0]);
    *ctl = down[1];
    return pid;
}

/* a peer process watched as id, then killed (SIGKILL) or closing its
 * watcher (the goodbye): one report of id, or none */
static void pw_watch_peer(uint32_t id, bool killed)
{
    char text[TC_PEERWATCH_ADDR_MAX], mine[TC_PEERWATCH_ADDR_MAX];
    tc_peerwatch_t *pw;
    int ctl, status;
    pid_t pid;

    pid = pw_peer(text, sizeof(text), &ctl);
    tc_atomic_store_relaxed(&pw_calls, 0);
    assert_int_equal(tc_peerwatch_open(&pw, mine, sizeof(mine)), 0);
    assert_int_equal(tc_peerwatch_start(pw, &id, 1, pw_lookup, pw_dead, text, 2000), 0);
    assert_int_equal(tc_peerwatch_start(pw, &id, 1, pw_lookup, pw_dead, text, 2000), -EINVAL);
    assert_int_equal(pw_wait(pw, 1), 0);
    assert_int_equal(tc_atomic_load_relaxed(&pw_calls), 0);
    if (killed) {
        assert_int_equal(kill(pid, SIGKILL), 0);
    } else {
        assert_int_equal(write(ctl, "c", 1), 1);
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (killed) {
        assert_int_equal(pw_wait(NULL, 1), 0);
        assert_int_equal(tc_atomic_load_relaxed(&pw_last), id);
    } else {
        assert_true(WIFEXITED(status) && 0 == WEXITSTATUS(status));
    }
    /* the connection ended (after the goodbye, or without) */
    assert_int_equal(pw_wait(pw, 0), 0);
    usleep(100000);
    assert_int_equal(tc_atomic_load_relaxed(&pw_calls), killed ? 1 : 0); /* once, or never */
    tc_peerwatch_close(pw);
    close(ctl);
}

static void test_peerwatch_killed(void **state)
{
    (void) state;
    pw_watch_peer(7, true);
}

static void test_peerwatch_goodbye(void **state)
{
    (void) state;
    pw_watch_peer(3, false);
}

/* nobody to reach: a closed port, a garbage text, a failed lookup */
static void test_peerwatch_unreachable(void **state)
{
    char mine[TC_PEERWATCH_ADDR_MAX];
    uint32_t ids[3] = {1, 2, 3};
    tc_peerwatch_t *pw, *other;
    char other_text[TC_PEERWATCH_ADDR_MAX];

    (void) state;
    tc_atomic_store_relaxed(&pw_calls, 0);
    /* a port that is closed by now */
    assert_int_equal(tc_peerwatch_open(&other, other_text, sizeof(other_text)), 0);
    tc_peerwatch_close(other);
    assert_int_equal(tc_peerwatch_open(&pw, mine, sizeof(mine)), 0);
    assert_int_equal(tc_peerwatch_start(pw, ids, 3, pw_lookup, pw_dead, other_text, 500), 0);
    usleep(300000);
    tc_peerwatch_close(pw);
    assert_int_equal(tc_atomic_load_relaxed(&pw_calls), 0);
    /* garbage and no text at all */
    assert_int_equal(tc_peerwatch_open(&pw, mine, sizeof(mine)), 0);
    assert_int_equal(tc_peerwatch_start(pw, ids, 3, pw_lookup, pw_dead, "99999:1.2.3", 500), 0);
    usleep(100000);
    tc_peerwatch_close(pw);
    assert_int_equal(tc_peerwatch_open(&pw, mine, sizeof(mine)), 0);
    assert_int_equal(tc_peerwatch_start(pw, ids, 3, pw_lookup, pw_dead, NULL, 500), 0);
    tc_peerwatch_close(pw);
    /* never started; NULL */
    assert_int_equal(tc_peerwatch_open(&pw, mine, sizeof(mine)), 0);
    tc_peerwatch_close(pw);
    tc_peerwatch_close(NULL);
    assert_int_equal(tc_atomic_load_relaxed(&pw_calls), 0);
}

static void test_peerwatch_parse_table(void **state)
{
    static const char *bad[] = {
        "",
        ":",
        "0:1.2.3.4",
        "65536:1.2.3.4",
        "123456:1.2.3.4",
        "80",
        "80:",
        "80:1.2.3",
        "80:1.2.3.4,",
        "80:,1.2.3.4",
        "80:1.2.3.256",
        "80:1.2.3.4;",
        "80:1.2.3.4 ",
        " 80:1.2.3.4",
        "-80:1.2.3.4",
        "80:1.2.3.4.5",
        "80:1.2.3.4,1.2.3.4,1.2.3.4,1.2.3.4,1.2.3.4,1.2.3.4,1.2.3.4,1.2.3.4,1.2.3.4",
        "80:0001.2.3.4",
        "80:1.2.3.4\n",
    };
    tc_peerwatch_addr_t a;

    (void) state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); ++i) {
        assert_int_equal(tc_peerwatch_parse(bad[i], strlen(bad[i]) + 1, &a), -EINVAL);
    }
    assert_int_equal(tc_peerwatch_parse(NULL, 10, &a), -EINVAL);
    assert_int_equal(tc_peerwatch_parse("80:1.2.3.4", 10, NULL), -EINVAL);
    assert_int_equal(tc_peerwatch_parse("80:1.2.3.4", 0, &a), -EINVAL);
    assert_int_equal(tc_peerwatch_parse("65535:198.18.0.1,10.0.0.2", 100, &a), 0);
    assert_int_equal(a.port, 65535);
    assert_int_equal(a.nips, 2);
    assert_int_equal(a.ips[0], htonl(0xc6120001));
    assert_int_equal(a.ips[1], htonl(0x0a000002));
    /* not NUL-terminated: len bounds it */
    assert_int_equal(tc_peerwatch_parse("1:1.2.3.4XYZ", 9, &a), 0);
    assert_int_equal(a.port, 1);
    assert_int_equal(a.nips, 1);
    assert_int_equal(tc_peerwatch_parse("80:1.2.3.4,1.2.3.4,1.2.3.4,1.2.3.4,1.2.3.4,1.2.3.4,1.2."
                                        "3.4,1.2.3.4",
                                        200, &a),
                     0);
    assert_int_equal(a.nips, TC_PEERWATCH_IPS);
    /* longer than any text we publish */
    {
        char big[TC_PEERWATCH_ADDR_MAX + 8];

        memset(big, '1', sizeof(big));
        big[sizeof(big) - 1] = '\0';
        assert_int_equal(tc_peerwatch_parse(big, sizeof(big), &a), -EINVAL);
    }
}

/* random texts and one-byte mutations of a good one: never outside the
 * buffer (valgrind/ASan watch), and what parses is well formed */
static void test_peerwatch_parse_fuzz(void **state)
{
    static const char good[] = "40123:198.18.0.1,198.19.0.1";
    static const char alphabet[] = "0123456789.,: x\0\xff";
    unsigned seed = 35;
    tc_peerwatch_addr_t a;

    (void) state;
    for (int it = 0; it < 200000; ++it) {
        char buf[TC_PEERWATCH_ADDR_MAX + 16];
        size_t len = (size_t) (rand_r(&seed) % (int) sizeof(buf));
        char *heap;

        if (it & 1) {
            memcpy(buf, good, sizeof(good));
            len = sizeof(good) - 1;
            for (int m = 1 + rand_r(&seed) % 3; m > 0; --m) {
                buf[rand_r(&seed) % (int) len] =
                    alphabet[rand_r(&seed) % (int) (sizeof(alphabet) - 1)];
            }
        } else {
            for (size_t i = 0; i < len; ++i) {
                buf[i] = 0 == (it & 2) ? (char) rand_r(&seed)
                                       : alphabet[rand_r(&seed) % (int) (sizeof(alphabet) - 1)];
            }
        }
        /* exactly len bytes on the heap, no terminator: any read past
         * them is an invalid read */
        heap = malloc(len > 0 ? len : 1);
        assert_non_null(heap);
        memcpy(heap, buf, len);
        if (0 == tc_peerwatch_parse(heap, len, &a)) {
            assert_true(a.port > 0);
            assert_true(a.nips >= 1 && a.nips <= TC_PEERWATCH_IPS);
        }
        free(heap);
    }
}

static void test_peerwatch_classify(void **state)
{
    (void) state;
    assert_int_equal(tc_peerwatch_classify(0, 0, 0), TC_PEERWATCH_DEAD);
    assert_int_equal(tc_peerwatch_classify(-1, ECONNRESET, 0), TC_PEERWATCH_DEAD);
    assert_int_equal(tc_peerwatch_classify(-1, ETIMEDOUT, 0), TC_PEERWATCH_DEAD);
    assert_int_equal(tc_peerwatch_classify(-1, EAGAIN, 0), TC_PEERWATCH_QUIET);
    assert_int_equal(tc_peerwatch_classify(-1, EINTR, 0), TC_PEERWATCH_QUIET);
    assert_int_equal(tc_peerwatch_classify(1, 0, TC_PEERWATCH_BYE), TC_PEERWATCH_LEFT);
    for (int b = 0; b < 256; ++b) {
        if (TC_PEERWATCH_BYE != b) {
            assert_int_equal(tc_peerwatch_classify(1, 0, (unsigned char) b), TC_PEERWATCH_BAD);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_peerwatch_parse_table), cmocka_unit_test(test_peerwatch_parse_fuzz),
        cmocka_unit_test(test_peerwatch_classify),    cmocka_unit_test(test_peerwatch_killed),
        cmocka_unit_test(test_peerwatch_goodbye),     cmocka_unit_test(test_peerwatch_unreachable),
    };

    signal(SIGPIPE, SIG_IGN);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
