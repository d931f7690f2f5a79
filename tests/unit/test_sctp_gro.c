/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_sctp_gro.c: the user stack's receive splitting (btl_sctp_sock_gso.c)
 * fuzzed on its own: btl_sctp_udp_gro_split against a byte-by-byte model
 * for random and edge lengths and segment sizes (negative, zero, larger
 * than the buffer, more segments than allowed), and btl_sctp_udp_gro_size
 * on random control buffers, truncated and crafted control messages. The
 * control data lies in a buffer of exactly its length, so that ASan and
 * valgrind see any read beyond it.
 */
#include "tc_config.h"

#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <cmocka.h>

#if TC_HAVE_USRSCTP
#include "btl_sctp_sock_user.h"
#include "test_pattern.h"

#ifndef SOL_UDP
#define SOL_UDP 17
#endif
#ifndef UDP_GRO
#define UDP_GRO 104
#endif

#define MAXSEG USER_GRO_MAX_SEGS

/* The model: which datagram each byte of the buffer belongs to, or -1
 * when the buffer is refused. */
static int model_count(size_t len, long seg, size_t max)
{
    size_t n;
    if (0 == len) {
        return 0;
    }
    if (seg <= 0 || (size_t) seg >= len) {
        return max >= 1 ? 1 : -1;
    }
    n = (len + (size_t) seg - 1) / (size_t) seg;
    return n > max ? -1 : (int) n;
}

static void check_split(size_t len, long seg, size_t max)
{
    size_t off[MAXSEG + 1], sl[MAXSEG + 1];
    int want = model_count(len, seg, max);
    int n;
    size_t next = 0;

    assert_true(max <= MAXSEG);
    memset(off, 0xa5, sizeof(off));
    memset(sl, 0xa5, sizeof(sl));
    n = btl_sctp_udp_gro_split(len, seg, max, off, sl);
    assert_int_equal(n, want);
    if (n <= 0) {
        return;
    }
    /* contiguous, inside the buffer, every one the segment size but the
     * last, none empty, and nothing written past the n-th pair */
    for (int i = 0; i < n; ++i) {
        assert_int_equal(off[i], next);
        assert_true(sl[i] > 0);
        assert_true(off[i] + sl[i] <= len);
        if (n > 1) {
            assert_true(sl[i] <= (size_t) seg);
            if (i + 1 < n) {
                assert_int_equal(sl[i], (size_t) seg);
            }
        }
        next += sl[i];
    }
    assert_int_equal(next, len);
    for (size_t i = (size_t) n; i < max + 1 && i <= MAXSEG; ++i) {
        assert_int_equal(off[i], (size_t) 0xa5a5a5a5a5a5a5a5ULL);
    }
}

static void test_split_edges(void **state)
{
    static const long segs[] = {-65536, -1,   0,    1,     2,     12,    1023,          1024,
                                1456,   1472, 8972, 65535, 65536, 65537, (long) 1 << 40};
    static const size_t lens[] = {
        0, 1, 2, 12, 1455, 1456, 1457, 2912, 2913, 64 * 1456, 64 * 1456 + 1, 65000, 65535, 65536};
    (void) state;
    for (size_t i = 0; i < sizeof(segs) / sizeof(segs[0]); ++i) {
        for (size_t j = 0; j < sizeof(lens) / sizeof(lens[0]); ++j) {
            check_split(lens[j], segs[i], MAXSEG);
            check_split(lens[j], segs[i], 1);
            check_split(lens[j], segs[i], 0);
        }
    }
    /* 64 full segments are one buffer, 65 are refused */
    assert_int_equal(
        64,
        btl_sctp_udp_gro_split(64 * 1000, 1000, MAXSEG, (size_t[MAXSEG]){0}, (size_t[MAXSEG]){0}));
    assert_int_equal(-1,
                     btl_sctp_udp_gro_split(64 * 1000 + 1, 1000, MAXSEG, (size_t[MAXSEG]){0},
                                            (size_t[MAXSEG]){0}));
}

static void test_split_fuzz(void **state)
{
    (void) state;
    for (int k = 0; k < 200000; ++k) {
        size_t len = (size_t) (test_rnd() % 70000);
        long seg;
        switch (test_rnd() % 4) {
        case 0:
            seg = (long) (test_rnd() % 70000) - 1000;
            break;
        case 1:
            seg = (long) (test_rnd() % 2000);
            break;
        case 2:
            seg = len > 0 ? (long) (len / (1 + test_rnd() % 80)) : 0;
            break;
        default:
            seg = (long) (int64_t) test_rnd();
            break;
        }
        check_split(len, seg, (size_t) (test_rnd() % (MAXSEG + 1)));
    }
}

/* gro_size on control data of exactly ctl_len bytes copied from src. */
static long gro_size_of(const void *src, size_t ctl_len)
{
    struct msghdr mh;
    unsigned char *ctl = ctl_len ? malloc(ctl_len) : NULL;
    long v;

    if (ctl_len) {
        assert_non_null(ctl);
        memcpy(ctl, src, ctl_len);
    }
    memset(&mh, 0, sizeof(mh));
    mh.msg_control = ctl;
    mh.msg_controllen = ctl_len;
    v = btl_sctp_udp_gro_size(&mh);
    free(ctl);
    return v;
}

static size_t put_cmsg(unsigned char *buf, size_t at, int level, int type, int value, size_t len)
{
    struct cmsghdr c;
    memset(&c, 0, sizeof(c));
    c.cmsg_level = level;
    c.cmsg_type = type;
    c.cmsg_len = len;
    memcpy(buf + at, &c, sizeof(c));
    memcpy(buf + at + CMSG_LEN(0), &value, sizeof(value));
    return at + CMSG_SPACE(sizeof(int));
}

static void test_gro_size(void **state)
{
    unsigned char buf[4 * CMSG_SPACE(sizeof(int))];
    size_t at;
    (void) state;

    memset(buf, 0, sizeof(buf));
    assert_int_equal(0, gro_size_of(buf, 0));
    /* a valid GRO message */
    at = put_cmsg(buf, 0, SOL_UDP, UDP_GRO, 1456, CMSG_LEN(sizeof(int)));
    assert_int_equal(1456, gro_size_of(buf, at));
    /* truncated control data: never read beyond it */
    for (size_t l = 0; l < at; ++l) {
        long v = gro_size_of(buf, l);
        assert_true(0 == v || 1456 == v);
    }
    /* behind another message */
    memset(buf, 0, sizeof(buf));
    at = put_cmsg(buf, 0, SOL_SOCKET, 1, 7, CMSG_LEN(sizeof(int)));
    at = put_cmsg(buf, at, SOL_UDP, UDP_GRO, 8972, CMSG_LEN(sizeof(int)));
    assert_int_equal(8972, gro_size_of(buf, at));
    /* negative or zero: not coalesced */
    memset(buf, 0, sizeof(buf));
    at = put_cmsg(buf, 0, SOL_UDP, UDP_GRO, -5, CMSG_LEN(sizeof(int)));
    assert_int_equal(0, gro_size_of(buf, at));
    /* a length that claims more than there is */
    memset(buf, 0, sizeof(buf));
    at = put_cmsg(buf, 0, SOL_UDP, UDP_GRO, 1456, sizeof(buf) * 4);
    assert_int_equal(0, gro_size_of(buf, at));
    /* a length too short for the value */
    memset(buf, 0, sizeof(buf));
    at = put_cmsg(buf, 0, SOL_UDP, UDP_GRO, 1456, CMSG_LEN(1));
    assert_int_equal(0, gro_size_of(buf, at));
}

static void test_gro_size_fuzz(void **state)
{
    unsigned char buf[4 * CMSG_SPACE(sizeof(int))];
    (void) state;
    for (int k = 0; k < 200000; ++k) {
        size_t len = (size_t) (test_rnd() % (sizeof(buf) + 1));
        long v;
        for (size_t i = 0; i < sizeof(buf); ++i) {
            buf[i] = (unsigned char) test_rnd();
        }
        if (test_rnd() % 2) {
            /* mostly plausible headers, so that the walk goes deep */
            size_t at = 0;
            while (at + CMSG_SPACE(sizeof(int)) <= sizeof(buf)) {
                at = put_cmsg(buf, at, test_rnd() % 2 ? SOL_UDP : (int) test_rnd(),
                              test_rnd() % 2 ? UDP_GRO : (int) test_rnd(), (int) test_rnd(),
                              test_rnd() % 4 ? CMSG_LEN(sizeof(int)) : (size_t) (test_rnd() % 64));
            }
        }
        v = gro_size_of(buf, len);
        assert_true(v >= 0 && v <= INT32_MAX);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_split_edges),
        cmocka_unit_test(test_split_fuzz),
        cmocka_unit_test(test_gro_size),
        cmocka_unit_test(test_gro_size_fuzz),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

#else /* !TC_HAVE_USRSCTP */
#include <stdio.h>

int main(void)
{
    printf("test_sctp_gro: skipped, built without usrsctp\n");
    return 77;
}
#endif
