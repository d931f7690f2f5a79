/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_sctp_seg.c: the user stack's segments (btl_sctp_sock_seg.c) on
 * their own: packets of random and edge sizes cut for random datagram
 * sizes and put back together in place (btl_sctp_seg_whole) and from
 * segments in random order with duplicates and losses (btl_sctp_seg_add),
 * every byte checked; the header parser against a model on crafted and
 * random headers, each datagram in a buffer of exactly its length so that
 * ASan and valgrind see any read beyond it.
 */
#include "tc_config.h"

#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#if TC_HAVE_USRSCTP
#include "btl_sctp_hdr.h"
#include "btl_sctp_sock_user.h"
#define TEST_RANDOM_SEED 0x2545f4914f6cdd1dULL
#include "test_pattern.h"

#define HDR MCA_BTL_SCTP_SEG_HDR_SIZE

static void fill(unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; ++i) {
        p[i] = (unsigned char) (i * 131u + seed * 7u + (i >> 8));
    }
}

/* The model of a valid segment header. */
static int model_valid(const unsigned char *d, size_t n)
{
    unsigned count, index, seg_len;
    size_t len;
    if (n <= HDR || 0 != d[0] || 0 != d[1] || MCA_BTL_SCTP_SEGMENT != d[2] || 0 != d[5]) {
        return 0;
    }
    index = d[3];
    count = d[4];
    seg_len = (unsigned) d[6] << 8 | d[7];
    len = n - HDR;
    if (count < 2 || count > MCA_BTL_SCTP_SEG_MAX || index >= count || 0 == seg_len) {
        return 0;
    }
    if (index + 1 < count ? len != seg_len : len > seg_len) {
        return 0;
    }
    if (index + 1 == count) {
        return (count - 1) * (size_t) seg_len + len <= MCA_BTL_SCTP_SEG_PKT_MAX;
    }
    return (count - 1) * (size_t) seg_len + 1 <= MCA_BTL_SCTP_SEG_PKT_MAX;
}

static void check_parse(const unsigned char *src, size_t n)
{
    unsigned char *d = malloc(n ? n : 1); /* exactly n bytes */
    btl_sctp_seg_info_t s;
    int want, got;

    assert_non_null(d);
    memcpy(d, src, n);
    want = model_valid(d, n);
    got = 0 == btl_sctp_seg_parse(d, n, &s);
    assert_int_equal(want, got);
    if (got) {
        assert_true(s.off + s.len <= MCA_BTL_SCTP_SEG_PKT_MAX);
        assert_int_equal(s.index, d[3]);
        assert_int_equal(s.count, d[4]);
        assert_ptr_equal(s.data, d + HDR);
    }
    free(d);
}

static void put_hdr(unsigned char *d, unsigned index, unsigned count, unsigned seg_len, uint32_t id)
{
    memset(d, 0, HDR);
    d[2] = MCA_BTL_SCTP_SEGMENT;
    d[3] = (unsigned char) index;
    d[4] = (unsigned char) count;
    d[6] = (unsigned char) (seg_len >> 8);
    d[7] = (unsigned char) seg_len;
    id = htonl(id);
    memcpy(d + 8, &id, 4);
}

static void test_parse_edges(void **state)
{
    unsigned char d[HDR + 70000];
    (void) state;

    memset(d, 0, sizeof(d));
    for (size_t n = 0; n <= HDR + 2; ++n) {
        check_parse(d, n); /* too short, or all zero */
    }
    /* every field at and around its limits */
    const unsigned counts[] = {0, 1, 2, 3, 63, 64, 65, 255};
    const unsigned lens[] = {0, 1, 2, 1023, 1024, 1025, 1460, 8960, 32767, 65535};
    for (size_t ci = 0; ci < sizeof(counts) / sizeof(counts[0]); ++ci) {
        for (size_t li = 0; li < sizeof(lens) / sizeof(lens[0]); ++li) {
            unsigned count = counts[ci], seg_len = lens[li];
            unsigned idx[] = {0, count ? count - 1 : 0, count, count + 1};
            for (size_t ii = 0; ii < 4; ++ii) {
                size_t pl[] = {0, 1, seg_len ? seg_len - 1 : 0, seg_len, (size_t) seg_len + 1};
                for (size_t pi = 0; pi < 5; ++pi) {
                    if (HDR + pl[pi] > sizeof(d)) {
                        continue;
                    }
                    put_hdr(d, idx[ii], count, seg_len, 7);
                    check_parse(d, HDR + pl[pi]);
                    d[5] = 1; /* pad must be 0 */
                    check_parse(d, HDR + pl[pi]);
                    d[5] = 0;
                    d[1] = 1; /* an SCTP packet, not a segment */
                    check_parse(d, HDR + pl[pi]);
                    d[1] = 0;
                    d[2] = MCA_BTL_SCTP_PROBE;
                    check_parse(d, HDR + pl[pi]);
                }
            }
        }
    }
}

static void test_parse_fuzz(void **state)
{
    unsigned char d[HDR + 2048];
    (void) state;

    for (int r = 0; r < 200000; ++r) {
        size_t n = test_rnd() % sizeof(d);
        for (size_t i = 0; i < n; ++i) {
            d[i] = (unsigned char) test_rnd();
        }
        if (n > HDR && test_rnd() % 2) {
            /* plausible: a segment header with random fields */
            unsigned count = (unsigned) (test_rnd() % 70);
            put_hdr(d, (unsigned) (test_rnd() % (count + 2)), count,
                    test_rnd() % 4 ? (unsigned) (n - HDR) + (unsigned) (test_rnd() % 3) - 1
                              : (unsigned) test_rnd() % 65536,
                    (uint32_t) test_rnd());
        }
        check_parse(d, n);
    }
}

/* Cut a packet for datagrams of dgram bytes; the datagrams' offsets and
 * lengths in out. Returns their number. */
static int cut(unsigned char *out, size_t cap, const unsigned char *pkt, size_t len, size_t dgram,
               uint32_t id, size_t *off, size_t *dl)
{
    size_t total = btl_sctp_seg_write(out, cap, pkt, len, dgram, id), at = 0;
    unsigned count = btl_sctp_seg_count(len, dgram);
    int n = 0;

    if (0 == total) {
        return 0;
    }
    assert_true(count >= 2 && count <= MCA_BTL_SCTP_SEG_MAX);
    assert_int_equal(total, len + count * HDR);
    while (at < total) {
        off[n] = at;
        dl[n] = total - at < dgram ? total - at : dgram;
        at += dl[n++];
    }
    assert_int_equal(n, (int) count);
    return n;
}

/* A packet cut and put back together in place, alone and between other
 * datagrams in one buffer, for random sizes. */
static void test_whole_roundtrip(void **state)
{
    static unsigned char pkt[MCA_BTL_SCTP_SEG_PKT_MAX], buf[3 * 70000];
    size_t off[3 * MCA_BTL_SCTP_SEG_MAX], dl[3 * MCA_BTL_SCTP_SEG_MAX];
    (void) state;

    for (int r = 0; r < 3000; ++r) {
        size_t dgram = r % 7 == 0 ? 1472 : 13 + test_rnd() % 9000, len = 1 + test_rnd() % 65000;
        unsigned count = btl_sctp_seg_count(len, dgram);
        size_t pre = test_rnd() % 200 + 1, at, total;
        unsigned char *got;
        size_t gotlen;
        int n;

        fill(pkt, len, (unsigned) r);
        /* a datagram before and one after the packet's segments */
        memset(buf, 0xa5, pre);
        off[0] = 0;
        dl[0] = pre;
        n = cut(buf + pre, sizeof(buf) - pre - 100, pkt, len, dgram, (uint32_t) r, off + 1,
                dl + 1);
        if (count < 2 || count > MCA_BTL_SCTP_SEG_MAX ||
            len + count * HDR > sizeof(buf) - pre - 100) {
            assert_int_equal(n, 0); /* refused: one datagram, or too many segments */
            continue;
        }
        assert_int_equal(n, (int) count);
        for (int k = 1; k <= n; ++k) {
            off[k] += pre;
        }
        total = off[n] + dl[n];
        memset(buf + total, 0x5a, 50);
        off[n + 1] = total;
        dl[n + 1] = 50;
        assert_int_equal(0, btl_sctp_seg_whole(buf, off, dl, n + 2, 0, &got, &gotlen));
        assert_int_equal(n, btl_sctp_seg_whole(buf, off, dl, n + 2, 1, &got, &gotlen));
        assert_int_equal(gotlen, len);
        assert_ptr_equal(got, buf + pre);
        assert_memory_equal(got, pkt, len);
        for (at = 0; at < pre; ++at) {
            assert_int_equal(buf[at], 0xa5); /* the datagram before is untouched */
        }
        for (at = 0; at < 50; ++at) {
            assert_int_equal(buf[total + at], 0x5a); /* and the one after */
        }
    }
}

/* Runs that are not a whole packet in order are left alone: a segment
 * missing, two swapped, one of another packet, the run cut short. */
static void test_whole_refuses(void **state)
{
    static unsigned char pkt[20000], buf[40000], copy[40000];
    size_t off[MCA_BTL_SCTP_SEG_MAX], dl[MCA_BTL_SCTP_SEG_MAX];
    unsigned char *got;
    size_t gotlen;
    int n;
    (void) state;

    fill(pkt, sizeof(pkt), 3);
    n = cut(buf, sizeof(buf), pkt, sizeof(pkt), 1472, 99, off, dl);
    assert_true(n > 3);
    memcpy(copy, buf, sizeof(buf));
    /* short by one */
    assert_int_equal(0, btl_sctp_seg_whole(buf, off, dl, n - 1, 0, &got, &gotlen));
    /* starts at segment 1 */
    assert_int_equal(0, btl_sctp_seg_whole(buf, off, dl, n, 1, &got, &gotlen));
    /* two swapped */
    {
        size_t o = off[1];
        off[1] = off[2];
        off[2] = o;
        assert_int_equal(0, btl_sctp_seg_whole(buf, off, dl, n, 0, &got, &gotlen));
        off[2] = off[1];
        off[1] = o;
    }
    /* one of another packet */
    buf[off[2] + 11] ^= 1;
    assert_int_equal(0, btl_sctp_seg_whole(buf, off, dl, n, 0, &got, &gotlen));
    buf[off[2] + 11] ^= 1;
    assert_memory_equal(buf, copy, sizeof(buf)); /* nothing moved */
    assert_int_equal(n, btl_sctp_seg_whole(buf, off, dl, n, 0, &got, &gotlen));
    assert_memory_equal(got, pkt, sizeof(pkt));
}

/* Segments gathered one by one: in random order, with duplicates, and
 * with packets that lose a segment (the next packet replaces them). */
static void test_gather(void **state)
{
    static unsigned char pkt[MCA_BTL_SCTP_SEG_PKT_MAX], buf[70000];
    size_t off[MCA_BTL_SCTP_SEG_MAX], dl[MCA_BTL_SCTP_SEG_MAX];
    user_reasm_t *ra = malloc(sizeof(*ra));
    int complete = 0, lossy = 0;
    (void) state;

    assert_non_null(ra);
    ra->busy = 0;
    for (int r = 0; r < 2000; ++r) {
        size_t dgram = 100 + test_rnd() % 9000, len = 2 + test_rnd() % 64000, got = 0;
        int order[MCA_BTL_SCTP_SEG_MAX], n, drop;
        fill(pkt, len, (unsigned) r + 1000);
        n = cut(buf, sizeof(buf), pkt, len, dgram, (uint32_t) r, off, dl);
        if (0 == n) {
            continue;
        }
        for (int k = 0; k < n; ++k) {
            order[k] = k;
        }
        for (int k = n - 1; k > 0; --k) {
            int j = (int) (test_rnd() % (uint64_t) (k + 1)), t = order[k];
            order[k] = order[j];
            order[j] = t;
        }
        drop = test_rnd() % 5 == 0 ? (int) (test_rnd() % (uint64_t) n) : -1;
        for (int k = 0; k < n; ++k) {
            btl_sctp_seg_info_t s;
            size_t res;
            /* each segment from a buffer of exactly its size */
            unsigned char *d = malloc(dl[order[k]]);
            assert_non_null(d);
            memcpy(d, buf + off[order[k]], dl[order[k]]);
            assert_int_equal(0, btl_sctp_seg_parse(d, dl[order[k]], &s));
            if (order[k] != drop) {
                res = btl_sctp_seg_add(ra, &s);
                if (test_rnd() % 4 == 0) {
                    assert_int_equal(0, btl_sctp_seg_add(ra, &s)); /* a duplicate */
                }
                if (res > 0) {
                    got = res;
                }
            }
            free(d);
        }
        if (drop >= 0) {
            assert_int_equal(got, 0);
            ++lossy;
        } else {
            assert_int_equal(got, len);
            assert_memory_equal(ra->buf, pkt, len);
            ++complete;
        }
    }
    assert_true(complete > 1000 && lossy > 100);
    free(ra);
}

static void test_packet_size(void **state)
{
    (void) state;
    /* MTU 1500 and 9000: the packet and its headers fit one GSO message */
    const size_t dgrams[] = {548, 1472, 4000, 8972, 16000, 40000, 64000};
    for (size_t i = 0; i < sizeof(dgrams) / sizeof(dgrams[0]); ++i) {
        size_t pk = btl_sctp_seg_packet_size(dgrams[i]) + USER_UDP_SLACK;
        unsigned count = btl_sctp_seg_count(pk, dgrams[i]);
        assert_true(count <= MCA_BTL_SCTP_SEG_MAX);
        assert_true(pk + count * HDR <= USER_TX_GSO_BYTES);
        assert_true(pk >= 30000); /* large packets, not the datagram's size */
    }
    assert_int_equal(btl_sctp_seg_packet_size(USER_LOOPBACK_MTU), USER_LOOPBACK_MTU);
    assert_int_equal(btl_sctp_seg_packet_size(1472), 44 * 1460 - USER_UDP_SLACK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_edges),     cmocka_unit_test(test_parse_fuzz),
        cmocka_unit_test(test_whole_roundtrip), cmocka_unit_test(test_whole_refuses),
        cmocka_unit_test(test_gather),          cmocka_unit_test(test_packet_size),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    printf("%d passed, %d failed\n", (int) (sizeof(tests) / sizeof(tests[0])) - failed, failed);
    return failed;
}

#else

int main(void)
{
    printf("test_sctp_seg: skipped (no usrsctp)\n0 passed, 0 failed\n");
    return 77;
}

#endif
