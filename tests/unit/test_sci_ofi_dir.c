/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_sci_ofi_dir.c: the parser of the ofi provider's wire records
 * (btl_sci/sci_ofi_dir.h): a valid directory round-trips; every
 * truncation, a wrong magic or version, an address or segment count that
 * does not fit, a zero-sized or wrapping segment are refused; then a
 * fuzz loop (seeded, reproducible) of random mutations and random bytes,
 * where every accepted record must describe only bytes inside the buffer;
 * the bye and the offer (full name, one segment) with each bad field.
 * Run under valgrind or ASan to catch reads past the end.
 */

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sci_ofi_dir.h"
#include "test_pattern.h"

static size_t build(uint8_t *buf, size_t addrlen, uint32_t nsegs)
{
    sci_ofi_dir_hdr_t hdr = {.magic = SCI_OFI_DIR_MAGIC,
                             .version = SCI_OFI_DIR_VERSION,
                             .addrlen = (uint16_t) addrlen,
                             .node_id = 5,
                             .nsegs = nsegs};
    size_t off = sizeof(hdr) + ((addrlen + 7) & ~(size_t) 7);

    memset(buf, 0, sci_ofi_dir_size(addrlen, nsegs));
    memcpy(buf, &hdr, sizeof(hdr));
    for (size_t i = 0; i < addrlen; ++i) {
        buf[sizeof(hdr) + i] = (uint8_t) (0xa0 + i);
    }
    for (uint32_t i = 0; i < nsegs; ++i) {
        sci_ofi_dir_seg_t s = {
            .segment_id = 100 + i, .size = 4096, .key = 7 + i, .addr = 0x10000 * (i + 1)};
        memcpy(buf + off + i * sizeof(s), &s, sizeof(s));
    }
    return sci_ofi_dir_size(addrlen, nsegs);
}

static void test_roundtrip_and_truncations(void **state)
{
    uint8_t buf[1024];
    sci_ofi_dir_view_t v;
    sci_ofi_dir_seg_t s;
    size_t len = build(buf, 16, 3);

    (void) state;
    assert_int_equal(0, sci_ofi_dir_parse(buf, len, &v));
    assert_int_equal(5, v.node_id);
    assert_int_equal(16, v.addrlen);
    assert_int_equal(3, v.nsegs);
    sci_ofi_dir_seg(&v, 2, &s);
    assert_int_equal(102, s.segment_id);
    assert_int_equal(9, s.key);
    for (size_t cut = 0; cut < len; ++cut) {
        assert_int_equal(-1, sci_ofi_dir_parse(buf, cut, &v));
    }
    /* a byte too many: the count no longer fills the rest */
    assert_int_equal(-1, sci_ofi_dir_parse(buf, len + 1, &v));
    assert_int_equal(-1, sci_ofi_dir_parse(NULL, len, &v));
}

static void test_bad_fields(void **state)
{
    uint8_t buf[1024];
    sci_ofi_dir_view_t v;
    sci_ofi_dir_hdr_t hdr;
    sci_ofi_dir_seg_t s;
    size_t len;

    (void) state;
    len = build(buf, 16, 2);
    memcpy(&hdr, buf, sizeof(hdr));
    hdr.magic ^= 1;
    memcpy(buf, &hdr, sizeof(hdr));
    assert_int_equal(-1, sci_ofi_dir_parse(buf, len, &v));

    len = build(buf, 16, 2);
    memcpy(&hdr, buf, sizeof(hdr));
    hdr.version = SCI_OFI_DIR_VERSION + 1;
    memcpy(buf, &hdr, sizeof(hdr));
    assert_int_equal(-1, sci_ofi_dir_parse(buf, len, &v));

    len = build(buf, 16, 2);
    memcpy(&hdr, buf, sizeof(hdr));
    hdr.nsegs = 0xffffffffu; /* count * 32 would wrap */
    memcpy(buf, &hdr, sizeof(hdr));
    assert_int_equal(-1, sci_ofi_dir_parse(buf, len, &v));

    len = build(buf, 16, 2);
    memcpy(&hdr, buf, sizeof(hdr));
    hdr.addrlen = 0xffff;
    memcpy(buf, &hdr, sizeof(hdr));
    assert_int_equal(-1, sci_ofi_dir_parse(buf, len, &v));

    len = build(buf, 16, 2);
    memcpy(&hdr, buf, sizeof(hdr));
    hdr.addrlen = 0;
    memcpy(buf, &hdr, sizeof(hdr));
    assert_int_equal(-1, sci_ofi_dir_parse(buf, len, &v));

    /* a segment of 0 bytes, and one whose end wraps */
    len = build(buf, 16, 2);
    memcpy(&s, buf + len - sizeof(s), sizeof(s));
    s.size = 0;
    memcpy(buf + len - sizeof(s), &s, sizeof(s));
    assert_int_equal(-1, sci_ofi_dir_parse(buf, len, &v));
    s.size = 4096;
    s.addr = UINT64_MAX - 100;
    memcpy(buf + len - sizeof(s), &s, sizeof(s));
    assert_int_equal(-1, sci_ofi_dir_parse(buf, len, &v));

    /* sizes the builder refuses */
    assert_int_equal(0, sci_ofi_dir_size(SCI_OFI_MAX_ADDR + 1, 1));
    assert_int_equal(0, sci_ofi_dir_size(8, SCI_OFI_MAX_SEGS + 1));
}

static void test_bye(void **state)
{
    sci_ofi_bye_t bye = {.magic = SCI_OFI_BYE_MAGIC, .name = 0x1234567800000012ull};
    uint64_t id = 0;

    (void) state;
    assert_int_equal(0, sci_ofi_bye_parse(&bye, sizeof(bye), &id));
    assert_true(0x1234567800000012ull == id);
    assert_int_equal(-1, sci_ofi_bye_parse(&bye, sizeof(bye) - 1, &id));
    assert_int_equal(-1, sci_ofi_bye_parse(&bye, sizeof(bye) + 1, &id));
    bye.magic = 0;
    assert_int_equal(-1, sci_ofi_bye_parse(&bye, sizeof(bye), &id));
}

/* an offer: magic, exact size, a non-empty segment that does not wrap */
static void test_offer(void **state)
{
    sci_ofi_offer_t good, o, out;
    uint8_t buf[sizeof(good) + 1];

    (void) state;
    memset(&good, 0, sizeof(good));
    good.magic = SCI_OFI_OFFER_MAGIC;
    good.name = 0xabcd000000000003ull;
    good.seg.segment_id = 0x00010042u;
    good.seg.index = 7;
    good.seg.size = 4096;
    good.seg.key = 99;
    good.seg.addr = 0x7f0000001000ull;
    assert_int_equal(0, sci_ofi_offer_parse(&good, sizeof(good), &out));
    assert_true(good.name == out.name);
    assert_int_equal(0x00010042u, out.seg.segment_id);
    assert_int_equal(7, out.seg.index);
    assert_true(4096 == out.seg.size && 99 == out.seg.key && good.seg.addr == out.seg.addr);
    for (size_t len = 0; len < sizeof(good); ++len) {
        assert_int_equal(-1, sci_ofi_offer_parse(&good, len, &out));
    }
    memcpy(buf, &good, sizeof(good));
    buf[sizeof(good)] = 0;
    assert_int_equal(-1, sci_ofi_offer_parse(buf, sizeof(buf), &out));
    assert_int_equal(-1, sci_ofi_offer_parse(NULL, sizeof(good), &out));
    o = good;
    o.magic = SCI_OFI_BYE_MAGIC;
    assert_int_equal(-1, sci_ofi_offer_parse(&o, sizeof(o), &out));
    o = good;
    o.seg.size = 0;
    assert_int_equal(-1, sci_ofi_offer_parse(&o, sizeof(o), &out));
    o = good;
    o.seg.addr = UINT64_MAX - 4095;
    assert_int_equal(-1, sci_ofi_offer_parse(&o, sizeof(o), &out));
    o.seg.addr = UINT64_MAX - 4096;
    assert_int_equal(0, sci_ofi_offer_parse(&o, sizeof(o), &out));
    /* a bye is no offer, an offer no bye */
    {
        sci_ofi_bye_t bye = {.magic = SCI_OFI_BYE_MAGIC, .name = 1};
        uint64_t id;

        assert_int_equal(-1, sci_ofi_offer_parse(&bye, sizeof(bye), &out));
        assert_int_equal(-1, sci_ofi_bye_parse(&good, sizeof(good), &id));
    }
}

/* remote words: the 64 bits name index, offset and the low 24 bits of the
 * value; the owner rebuilds the value from its current one, and a word
 * from before the current one changes nothing */
static void test_word(void **state)
{
    uint64_t data = 0, off;
    uint32_t index, low;

    (void) state;
    assert_int_equal(0,
                     sci_ofi_word_encode(0xffff, SCI_OFI_WORD_OFF_MAX, 0x1234567890abcdull, &data));
    sci_ofi_word_decode(data, &index, &off, &low);
    assert_int_equal(0xffff, index);
    assert_int_equal(SCI_OFI_WORD_OFF_MAX, off);
    assert_int_equal(0x90abcd, low);
    assert_int_equal(-1, sci_ofi_word_encode(0x10000, 8, 1, &data));
    assert_int_equal(-1, sci_ofi_word_encode(1, SCI_OFI_WORD_OFF_MAX + 8, 1, &data));
    assert_int_equal(-1, sci_ofi_word_encode(1, 12, 1, &data));
    /* across 2^24 and 2^32: the high bits come from the current value */
    assert_int_equal(0x1000004, sci_ofi_word_advance(0xfffffc, 0x000004));
    assert_int_equal(0x100000008ull, sci_ofi_word_advance(0xfffffff8ull, 0x000008));
    assert_int_equal(77, sci_ofi_word_advance(77, 77));
    /* behind (or 2^23 ahead, which is the same): stale, kept */
    assert_int_equal(100, sci_ofi_word_advance(100, 99));
    assert_int_equal(0, sci_ofi_word_advance(0, 0x800000));
    assert_int_equal(0x7fffff, sci_ofi_word_advance(0, 0x7fffff));
    /* no wrap at the top */
    assert_int_equal(UINT64_MAX - 1, sci_ofi_word_advance(UINT64_MAX - 1, 0x000005));
    for (int i = 0; i < 200000; ++i) {
        uint64_t cur = (uint64_t) test_rnd() << 32 | test_rnd();
        uint64_t step = test_rnd() & 0x7fffff;
        uint64_t v;

        if (cur > UINT64_MAX - step) {
            continue;
        }
        v = cur + step;
        assert_int_equal(
            0, sci_ofi_word_encode(test_rnd() & 0xffff, (uint64_t) (test_rnd() & 0xffffff) * 8, v, &data));
        sci_ofi_word_decode(data, &index, &off, &low);
        assert_true(index <= SCI_OFI_WORD_INDEX_MAX && off <= SCI_OFI_WORD_OFF_MAX &&
                    0 == (off & 7));
        assert_int_equal(v, sci_ofi_word_advance(cur, low));
        /* any 64 bits decode to something in range */
        sci_ofi_word_decode((uint64_t) test_rnd() << 32 | test_rnd(), &index, &off, &low);
        assert_true(index <= SCI_OFI_WORD_INDEX_MAX && off <= SCI_OFI_WORD_OFF_MAX &&
                    low <= SCI_OFI_WORD_LOW_MASK);
    }
}

static void test_fuzz(void **state)
{
    (void) state;
    for (int iter = 0; iter < 200000; ++iter) {
        uint8_t tmp[600];
        size_t len = build(tmp, 1 + test_rnd() % 64, test_rnd() % 8);
        uint8_t *buf;
        sci_ofi_dir_view_t v;

        /* mutate a few bytes, maybe cut or extend */
        for (int k = (int) (test_rnd() % 4); k > 0; --k) {
            tmp[test_rnd() % len] = (uint8_t) test_rnd();
        }
        if (0 == test_rnd() % 4) {
            len = test_rnd() % (len + 1);
        } else if (0 == test_rnd() % 8) {
            for (size_t i = len; i < sizeof(tmp); ++i) {
                tmp[i] = (uint8_t) test_rnd();
            }
            len = len + test_rnd() % (sizeof(tmp) - len);
        }
        /* an exact-size heap copy: a read past it is caught by ASan/valgrind */
        buf = malloc(len ? len : 1);
        assert_non_null(buf);
        memcpy(buf, tmp, len);
        if (0 == sci_ofi_dir_parse(buf, len, &v)) {
            assert_true(v.addr >= buf && v.addr + v.addrlen <= buf + len);
            assert_true(v.segs >= buf &&
                        v.segs + (size_t) v.nsegs * sizeof(sci_ofi_dir_seg_t) <= buf + len);
            for (uint32_t i = 0; i < v.nsegs; ++i) {
                sci_ofi_dir_seg_t s;
                sci_ofi_dir_seg(&v, i, &s);
                assert_true(s.size > 0 && s.addr <= UINT64_MAX - s.size);
            }
        }
        free(buf);
    }
}

/* the offer and the bye come from processes of other jobs too: mutated
 * good ones and random bytes of every length up to twice their size */
static void test_fuzz_offer_bye(void **state)
{
    sci_ofi_offer_t good = {.magic = SCI_OFI_OFFER_MAGIC, .name = (3ull << 32) | 5};
    sci_ofi_bye_t bye = {.magic = SCI_OFI_BYE_MAGIC, .name = 9};

    (void) state;
    good.seg.size = 4096;
    good.seg.addr = 0x7f0000001000ull;
    for (int iter = 0; iter < 100000; ++iter) {
        uint8_t tmp[2 * sizeof(sci_ofi_offer_t)];
        size_t len = test_rnd() % (sizeof(tmp) + 1);
        sci_ofi_offer_t out;
        uint64_t name;
        uint8_t *buf;

        for (size_t i = 0; i < sizeof(tmp); ++i) {
            tmp[i] = (uint8_t) test_rnd();
        }
        if (0 == iter % 3) {
            memcpy(tmp, &good, sizeof(good));
            len = sizeof(good);
        } else if (1 == iter % 3) {
            memcpy(tmp, &bye, sizeof(bye));
            len = sizeof(bye);
        }
        for (int k = (int) (test_rnd() % 3); k > 0; --k) {
            tmp[test_rnd() % sizeof(tmp)] = (uint8_t) test_rnd();
        }
        buf = malloc(len ? len : 1);
        assert_non_null(buf);
        memcpy(buf, tmp, len);
        if (0 == sci_ofi_offer_parse(buf, len, &out)) {
            assert_int_equal(sizeof(out), len);
            assert_true(SCI_OFI_OFFER_MAGIC == out.magic);
            assert_true(out.seg.size > 0 && out.seg.addr <= UINT64_MAX - out.seg.size);
        }
        if (0 == sci_ofi_bye_parse(buf, len, &name)) {
            assert_int_equal(sizeof(sci_ofi_bye_t), len);
        }
        free(buf);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip_and_truncations),
        cmocka_unit_test(test_bad_fields),
        cmocka_unit_test(test_bye),
        cmocka_unit_test(test_offer),
        cmocka_unit_test(test_word),
        cmocka_unit_test(test_fuzz),
        cmocka_unit_test(test_fuzz_offer_bye),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
