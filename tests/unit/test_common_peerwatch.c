/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_common_peerwatch.c: tc_peerwatch. A watched process killed
 * (SIGKILL: its kernel ends the connection) is reported once; one that
 * closes its watcher (the goodbye) is not; an address that is garbage, a
 * port nobody listens on, a lookup that fails: no report, nothing left
 * open. A stranger (no token) that fills the listener never makes a live
 * peer reported dead. The address parser and the listener's reading of a
 * hello against tables and fuzzes, and the classification of every read.
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
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "tc_atomic.h"
#include "tc_peerwatch.h"

/* more than a listener watching nobody keeps (2n + 16), more than it
 * lets wait for a hello (TC_PEERWATCH_PENDING) */
#define PW_STRANGERS 80

/* a token in its published form */
#define PW_TOK "00112233445566778899aabbccddeeff00112233445566778899AABBCCDDEEFF"

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
        /* the test gone (the pipe's end): leave too */
        if (1 != read(down[0], &c, 1) || 'c' == c) {
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

/* a connection to the listener of text, reads time out after 10 s */
static int pw_dial(const tc_peerwatch_addr_t *a)
{
    struct timeval tv = {.tv_sec = 10};
    struct sockaddr_in sin;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

    assert_true(fd >= 0);
    memset(&sin, 0, sizeof(sin));
    sin.sin_family = AF_INET;
    sin.sin_port = htons(a->port);
    sin.sin_addr.s_addr = a->ips[0];
    assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)), 0);
    assert_int_equal(connect(fd, (struct sockaddr *) &sin, sizeof(sin)), 0);
    return fd;
}

/* send len bytes on a new connection; what comes back: the ACK (1), the
 * end (0), or nothing in 10 s (-1) */
static int pw_probe(const tc_peerwatch_addr_t *a, const void *buf, size_t len)
{
    unsigned char b = 0;
    int fd = pw_dial(a);
    ssize_t n;

    assert_int_equal(send(fd, buf, len, MSG_NOSIGNAL), (ssize_t) len);
    n = recv(fd, &b, 1, 0);
    close(fd);
    return 1 == n ? (TC_PEERWATCH_ACK == b ? 1 : -2) : 0 == n ? 0 : -1;
}

/* a stranger fills the listener's slots before the job's process comes:
 * the live peer is never reported dead, it is watched, and its death
 * is still reported; a stranger's bytes get no ACK, the job's hello does */
static void test_peerwatch_stranger(void **state)
{
    char text[TC_PEERWATCH_ADDR_MAX], mine[TC_PEERWATCH_ADDR_MAX];
    int fds[PW_STRANGERS], ctl, status;
    tc_peerwatch_hello_t h;
    tc_peerwatch_addr_t a;
    unsigned char b;
    uint32_t id = 5;
    tc_peerwatch_t *pw;
    pid_t pid;

    (void) state;
    pid = pw_peer(text, sizeof(text), &ctl);
    tc_atomic_store_relaxed(&pw_calls, 0);
    assert_int_equal(tc_peerwatch_parse(text, sizeof(text), &a), 0);
    for (int i = 0; i < PW_STRANGERS; ++i) {
        fds[i] = pw_dial(&a);
    }
    usleep(200000); /* the peer's thread has taken them all */
    assert_int_equal(tc_peerwatch_open(&pw, mine, sizeof(mine)), 0);
    assert_int_equal(tc_peerwatch_start(pw, &id, 1, pw_lookup, pw_dead, text, 2000), 0);
    assert_int_equal(pw_wait(pw, 1), 0);
    usleep(500000);
    assert_int_equal(tc_atomic_load_relaxed(&pw_calls), 0);
    assert_int_equal(tc_peerwatch_watched(pw), 1);
    /* the silent strangers were closed (the hello's deadline) */
    assert_int_equal(recv(fds[0], &b, 1, 0), 0);
    assert_int_equal(recv(fds[PW_STRANGERS - 1], &b, 1, 0), 0);
    /* noise, a wrong token: no ACK, the end; the right hello: the ACK */
    assert_int_equal(pw_probe(&a, "GET / HTTP/1.0\r\n\r\n", 18), 0);
    memcpy(h.magic, TC_PEERWATCH_MAGIC, sizeof(h.magic));
    memcpy(h.token, a.token, sizeof(h.token));
    h.token[17] ^= 1;
    assert_int_equal(pw_probe(&a, &h, sizeof(h)), 0);
    h.token[17] ^= 1;
    assert_int_equal(pw_probe(&a, &h, sizeof(h)), 1);
    assert_int_equal(tc_atomic_load_relaxed(&pw_calls), 0);
    assert_int_equal(kill(pid, SIGKILL), 0);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_int_equal(pw_wait(NULL, 1), 0);
    assert_int_equal(tc_atomic_load_relaxed(&pw_last), id);
    tc_peerwatch_close(pw);
    for (int i = 0; i < PW_STRANGERS; ++i) {
        close(fds[i]);
    }
    close(ctl);
}

/* two watchers that watch each other (each opens while the other's hello
 * waits for an answer): both watched, a goodbye is no death */
static void test_peerwatch_mutual(void **state)
{
    char t1[TC_PEERWATCH_ADDR_MAX], t2[TC_PEERWATCH_ADDR_MAX];
    uint32_t id1 = 1, id2 = 2;
    tc_peerwatch_t *pw1, *pw2;

    (void) state;
    tc_atomic_store_relaxed(&pw_calls, 0);
    assert_int_equal(tc_peerwatch_open(&pw1, t1, sizeof(t1)), 0);
    assert_int_equal(tc_peerwatch_open(&pw2, t2, sizeof(t2)), 0);
    assert_int_equal(tc_peerwatch_start(pw1, &id2, 1, pw_lookup, pw_dead, t2, 2000), 0);
    assert_int_equal(tc_peerwatch_start(pw2, &id1, 1, pw_lookup, pw_dead, t1, 2000), 0);
    assert_int_equal(pw_wait(pw1, 1), 0);
    assert_int_equal(pw_wait(pw2, 1), 0);
    tc_peerwatch_close(pw2);
    assert_int_equal(pw_wait(pw1, 0), 0);
    tc_peerwatch_close(pw1);
    assert_int_equal(tc_atomic_load_relaxed(&pw_calls), 0);
}

/* the listener's reading of a hello, byte by byte */
static void test_peerwatch_hello(void **state)
{
    unsigned char tok[TC_PEERWATCH_TOKEN_BYTES], buf[TC_PEERWATCH_HELLO_BYTES + 1];

    (void) state;
    for (unsigned i = 0; i < sizeof(tok); ++i) {
        tok[i] = (unsigned char) (i * 7 + 1);
    }
    memcpy(buf, TC_PEERWATCH_MAGIC, 8);
    memcpy(buf + 8, tok, sizeof(tok));
    buf[TC_PEERWATCH_HELLO_BYTES] = 0;
    assert_int_equal(tc_peerwatch_hello_check(buf, 0, tok), TC_PEERWATCH_HELLO_MORE);
    assert_int_equal(tc_peerwatch_hello_check(NULL, 0, tok), TC_PEERWATCH_HELLO_MORE);
    assert_int_equal(tc_peerwatch_hello_check(NULL, 1, tok), TC_PEERWATCH_HELLO_BAD);
    assert_int_equal(tc_peerwatch_hello_check(buf, 1, NULL), TC_PEERWATCH_HELLO_BAD);
    for (size_t got = 1; got < TC_PEERWATCH_HELLO_BYTES; ++got) {
        assert_int_equal(tc_peerwatch_hello_check(buf, got, tok), TC_PEERWATCH_HELLO_MORE);
    }
    assert_int_equal(tc_peerwatch_hello_check(buf, TC_PEERWATCH_HELLO_BYTES, tok),
                     TC_PEERWATCH_HELLO_OK);
    assert_int_equal(tc_peerwatch_hello_check(buf, TC_PEERWATCH_HELLO_BYTES + 1, tok),
                     TC_PEERWATCH_HELLO_BAD);
    /* every byte wrong in turn: the magic at once, the token at the end */
    for (size_t i = 0; i < TC_PEERWATCH_HELLO_BYTES; ++i) {
        buf[i] ^= 0x20;
        assert_int_equal(tc_peerwatch_hello_check(buf, i + 1, tok),
                         i < 8 || i + 1 == TC_PEERWATCH_HELLO_BYTES ? TC_PEERWATCH_HELLO_BAD
                                                                    : TC_PEERWATCH_HELLO_MORE);
        assert_int_equal(tc_peerwatch_hello_check(buf, TC_PEERWATCH_HELLO_BYTES, tok),
                         TC_PEERWATCH_HELLO_BAD);
        buf[i] ^= 0x20;
    }
}

/* what the listener reads, fuzzed: random streams and mutated hellos in
 * random pieces, kept as the listener keeps them (at most a hello, in an
 * exact-size heap buffer): OK only for exactly the right hello */
static void test_peerwatch_hello_fuzz(void **state)
{
    unsigned char tok[TC_PEERWATCH_TOKEN_BYTES], right[TC_PEERWATCH_HELLO_BYTES];
    unsigned seed = 3535;

    (void) state;
    for (unsigned i = 0; i < sizeof(tok); ++i) {
        tok[i] = (unsigned char) rand_r(&seed);
    }
    memcpy(right, TC_PEERWATCH_MAGIC, 8);
    memcpy(right + 8, tok, sizeof(tok));
    for (int it = 0; it < 200000; ++it) {
        unsigned char stream[2 * TC_PEERWATCH_HELLO_BYTES];
        size_t len = (size_t) (rand_r(&seed) % (int) sizeof(stream)), off = 0, got = 0;
        unsigned char *kept = malloc(TC_PEERWATCH_HELLO_BYTES);
        int what = TC_PEERWATCH_HELLO_MORE;

        assert_non_null(kept);
        if (it & 1) {
            memcpy(stream, right, sizeof(right));
            memcpy(stream + sizeof(right), right, sizeof(right));
            for (int m = rand_r(&seed) % 3; m > 0; --m) {
                stream[rand_r(&seed) % (int) sizeof(right)] ^=
                    (unsigned char) (1 + rand_r(&seed) % 255);
            }
        } else {
            for (size_t i = 0; i < len; ++i) {
                stream[i] = (unsigned char) rand_r(&seed);
            }
        }
        while (TC_PEERWATCH_HELLO_MORE == what && off < len) {
            size_t piece = 1 + (size_t) (rand_r(&seed) % 16);

            piece = piece < len - off ? piece : len - off;
            piece = piece < TC_PEERWATCH_HELLO_BYTES - got ? piece : TC_PEERWATCH_HELLO_BYTES - got;
            memcpy(kept + got, stream + off, piece);
            got += piece;
            off += piece;
            what = tc_peerwatch_hello_check(kept, got, tok);
        }
        if (TC_PEERWATCH_HELLO_OK == what) {
            assert_int_equal(got, TC_PEERWATCH_HELLO_BYTES);
            assert_memory_equal(kept, right, sizeof(right));
        } else if (len >= TC_PEERWATCH_HELLO_BYTES && 0 == memcmp(stream, right, sizeof(right))) {
            fail_msg("the right hello was refused");
        }
        free(kept);
    }
}

static void test_peerwatch_parse_table(void **state)
{
    static const char *bad[] = {
        "",
        ":",
        "0:1.2.3.4/" PW_TOK,
        "65536:1.2.3.4/" PW_TOK,
        "123456:1.2.3.4/" PW_TOK,
        "80",
        "80:",
        "80:1.2.3/" PW_TOK,
        "80:1.2.3.4,/" PW_TOK,
        "80:,1.2.3.4/" PW_TOK,
        "80:1.2.3.256/" PW_TOK,
        "80:1.2.3.4;/" PW_TOK,
        "80:1.2.3.4 /" PW_TOK,
        " 80:1.2.3.4/" PW_TOK,
        "-80:1.2.3.4/" PW_TOK,
        "80:1.2.3.4.5/" PW_TOK,
        "80:1.2.3.4,1.2.3.4,1.2.3.4,1.2.3.4,1.2.3.4,1.2.3.4,1.2.3.4,1.2.3.4,1.2.3.4/" PW_TOK,
        "80:0001.2.3.4/" PW_TOK,
        "80:1.2.3.4/" PW_TOK "\n",
        "80:1.2.3.4/" PW_TOK "0",
        "80:1.2.3.4/0" PW_TOK,
        "80:1.2.3.4",          /* no token */
        "80:1.2.3.4/",         /* an empty one */
        "80:1.2.3.4/00112233", /* a short one */
        "80:1.2.3.4/" PW_TOK "/" PW_TOK,
        "80:1.2.3.4/g0112233445566778899aabbccddeeff00112233445566778899aabbccddeeff",
    };
    tc_peerwatch_addr_t a;

    (void) state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); ++i) {
        assert_int_equal(tc_peerwatch_parse(bad[i], strlen(bad[i]) + 1, &a), -EINVAL);
    }
    assert_int_equal(tc_peerwatch_parse(NULL, 10, &a), -EINVAL);
    assert_int_equal(tc_peerwatch_parse("80:1.2.3.4/" PW_TOK, 100, NULL), -EINVAL);
    assert_int_equal(tc_peerwatch_parse("80:1.2.3.4/" PW_TOK, 0, &a), -EINVAL);
    assert_int_equal(tc_peerwatch_parse("65535:198.18.0.1,10.0.0.2/" PW_TOK, 100, &a), 0);
    assert_int_equal(a.port, 65535);
    assert_int_equal(a.nips, 2);
    assert_int_equal(a.ips[0], htonl(0xc6120001));
    assert_int_equal(a.ips[1], htonl(0x0a000002));
    assert_int_equal(a.token[0], 0x00);
    assert_int_equal(a.token[1], 0x11);
    assert_int_equal(a.token[31], 0xff);
    /* not NUL-terminated: len bounds it */
    assert_int_equal(tc_peerwatch_parse("1:1.2.3.4/" PW_TOK "XYZ", 10 + 64, &a), 0);
    assert_int_equal(a.port, 1);
    assert_int_equal(a.nips, 1);
    assert_int_equal(tc_peerwatch_parse("1:1.2.3.4/" PW_TOK, 10 + 63, &a), -EINVAL);
    assert_int_equal(tc_peerwatch_parse("80:1.2.3.4,1.2.3.4,1.2.3.4,1.2.3.4,1.2.3.4,1.2.3.4,1.2."
                                        "3.4,1.2.3.4/" PW_TOK,
                                        300, &a),
                     0);
    assert_int_equal(a.nips, TC_PEERWATCH_IPS);
    /* the longest text we publish fits */
    assert_int_equal(tc_peerwatch_parse("65535:255.255.255.255,255.255.255.255,255.255.255.255,"
                                        "255.255.255.255,255.255.255.255,255.255.255.255,"
                                        "255.255.255.255,255.255.255.255/" PW_TOK,
                                        TC_PEERWATCH_ADDR_MAX, &a),
                     0);
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
    static const char good[] = "40123:198.18.0.1,198.19.0.1/" PW_TOK;
    static const char alphabet[] = "0123456789abcdefABCDEF.,:/ x\0\xff";
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
        cmocka_unit_test(test_peerwatch_stranger),    cmocka_unit_test(test_peerwatch_hello),
        cmocka_unit_test(test_peerwatch_hello_fuzz),  cmocka_unit_test(test_peerwatch_mutual),
    };

    signal(SIGPIPE, SIG_IGN);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
