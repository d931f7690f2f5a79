/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_osc_hybrid_wire.c: osc/hybrid's record checks (osc_hybrid_wire.c)
 * fuzzed on their own, without Open MPI: random and crafted records,
 * truncated at every byte, against an independent model of the rules
 * written with 128-bit arithmetic; the range check against a byte-by-byte
 * model of a window and of attached regions. Every message lies in a
 * buffer of exactly its size, so that ASan and valgrind see any read
 * beyond it.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <mpi.h>

#include "osc_hybrid_wire.h"
#define TEST_RANDOM_SEED 0x2545f4914f6cdd1dULL
#include "test_pattern.h"

typedef mca_osc_hybrid_hdr_t hdr_t;
typedef mca_osc_hybrid_seg_t seg_t;
typedef unsigned __int128 u128;

enum { VERDICT_OK, VERDICT_ANSWERED, VERDICT_FATAL };

/* ---- a model of the rules (docs/osc_hybrid.md, "Wire format") ---- */

static bool model_in(int32_t tag, int32_t first)
{
    return (int64_t) tag >= first && (int64_t) tag < (int64_t) first + MCA_OSC_HYBRID_TAG_SPAN;
}

/* The verdict for left bytes holding h, its segments (as far as they are
 * there) and payload. */
static int model(const unsigned char *msg, size_t left)
{
    hdr_t h;
    u128 need;
    bool follows, data;

    if (left < sizeof(h)) {
        return VERDICT_FATAL;
    }
    memcpy(&h, msg, sizeof(h));
    if (h.type < MCA_OSC_HYBRID_HDR_PUT || h.type >= MCA_OSC_HYBRID_HDR_TYPE_MAX) {
        return VERDICT_FATAL;
    }
    need = (u128) sizeof(h) + (u128) h.nseg * sizeof(seg_t) + (u128) h.payload_len;
    if (need > left) {
        return VERDICT_FATAL;
    }
    data = h.type <= MCA_OSC_HYBRID_HDR_CAS;
    if (!data) {
        if (h.nseg || h.payload_len || h.stream_len || h.flags || h.reserved || h.op || h.dt ||
            h.disp || h.reply_tag) {
            return VERDICT_FATAL;
        }
        if (MCA_OSC_HYBRID_HDR_LOCK == h.type && MPI_LOCK_SHARED != h.arg &&
            MPI_LOCK_EXCLUSIVE != h.arg) {
            return VERDICT_FATAL;
        }
        return VERDICT_OK;
    }
    follows = (h.flags & MCA_OSC_HYBRID_FLAG_DATA_FOLLOWS) != 0;
    if (MCA_OSC_HYBRID_HDR_GET == h.type || MCA_OSC_HYBRID_HDR_GACC == h.type ||
        MCA_OSC_HYBRID_HDR_CAS == h.type) {
        if (!model_in(h.reply_tag, MCA_OSC_HYBRID_TAG_REPLY)) {
            return VERDICT_FATAL;
        }
    }
    if (MCA_OSC_HYBRID_HDR_PUT == h.type && follows) {
        if (!model_in(h.reply_tag, MCA_OSC_HYBRID_TAG_DATA) ||
            h.stream_len > MCA_OSC_HYBRID_STREAM_MAX) {
            return VERDICT_FATAL;
        }
    }
    if ((h.flags & ~MCA_OSC_HYBRID_FLAG_DATA_FOLLOWS) || h.reserved ||
        (follows && MCA_OSC_HYBRID_HDR_PUT != h.type)) {
        return VERDICT_ANSWERED;
    }
    if (((MCA_OSC_HYBRID_HDR_PUT == h.type && !follows) || MCA_OSC_HYBRID_HDR_ACC == h.type) &&
        0 != h.reply_tag) {
        return VERDICT_ANSWERED;
    }
    if (0 == h.nseg || h.stream_len > MCA_OSC_HYBRID_STREAM_MAX) {
        return VERDICT_ANSWERED;
    }
    {
        u128 sum = 0;
        for (uint32_t i = 0; i < h.nseg; ++i) {
            seg_t s;
            memcpy(&s, msg + sizeof(h) + i * sizeof(seg_t), sizeof(s));
            if (0 == s.len) {
                return VERDICT_ANSWERED;
            }
            sum += s.len;
        }
        if (sum != h.stream_len) {
            return VERDICT_ANSWERED;
        }
    }
    switch (h.type) {
    case MCA_OSC_HYBRID_HDR_PUT:
        return h.payload_len == (follows ? 0 : h.stream_len) ? VERDICT_OK : VERDICT_ANSWERED;
    case MCA_OSC_HYBRID_HDR_GET:
        return 0 == h.payload_len ? VERDICT_OK : VERDICT_ANSWERED;
    case MCA_OSC_HYBRID_HDR_ACC:
        return h.payload_len == h.stream_len ? VERDICT_OK : VERDICT_ANSWERED;
    case MCA_OSC_HYBRID_HDR_GACC:
        return (0 == h.payload_len || h.payload_len == h.stream_len) ? VERDICT_OK
                                                                     : VERDICT_ANSWERED;
    default:
        return (1 == h.nseg && (u128) h.payload_len == 2 * (u128) h.stream_len) ? VERDICT_OK
                                                                                : VERDICT_ANSWERED;
    }
}

/* Runs the check on a copy of n bytes in a buffer of exactly n bytes and
 * compares it with the model; returns the verdict. */
static int check(const unsigned char *bytes, size_t n)
{
    unsigned char *msg = malloc(n ? n : 1);
    mca_osc_hybrid_rec_t rec;
    int err, verdict, expect = model(bytes, n);

    assert_non_null(msg);
    memcpy(msg, bytes, n);
    err = mca_osc_hybrid_check_record(msg, n, &rec);
    verdict = (MCA_OSC_HYBRID_WIRE_OK == err) ? VERDICT_OK
        : mca_osc_hybrid_wire_fatal(err)      ? VERDICT_FATAL
                                              : VERDICT_ANSWERED;
    if (verdict != expect) {
        hdr_t h = {0};
        memcpy(&h, bytes, n < sizeof(h) ? 0 : sizeof(h));
        fail_msg("%zu bytes, type %d nseg %u stream %llu payload %llu flags %#x tag %d: check "
                 "says %d (%s), model %d",
                 n, h.type, h.nseg, (unsigned long long) h.stream_len,
                 (unsigned long long) h.payload_len, h.flags, h.reply_tag, verdict,
                 mca_osc_hybrid_wire_strerror(err), expect);
    }
    if (VERDICT_FATAL != verdict || rec.len > 0) {
        /* framed: the record lies in the message, and so do its parts */
        size_t body =
            sizeof(hdr_t) + (size_t) rec.hdr.nseg * sizeof(seg_t) + (size_t) rec.hdr.payload_len;
        assert_true(rec.len >= body);
        assert_true(rec.len <= n);
        assert_true(rec.len == n || 0 == rec.len % 16);
        assert_true((NULL == rec.segs) == (0 == rec.hdr.nseg));
        assert_true((NULL == rec.payload) == (0 == rec.hdr.payload_len));
        if (NULL != rec.segs) {
            assert_ptr_equal(rec.segs, (const void *) (msg + sizeof(hdr_t)));
        }
        if (NULL != rec.payload) {
            assert_ptr_equal(rec.payload, (const void *) (msg + body - rec.hdr.payload_len));
        }
    }
    free(msg);
    return verdict;
}

/* ---- building records ---- */

typedef struct {
    unsigned char b[2048] __attribute__((aligned(16)));
    size_t n;
} msg_t;

static hdr_t *msg_hdr(msg_t *m)
{
    return (hdr_t *) m->b;
}

static void msg_start(msg_t *m, int type)
{
    memset(m, 0, sizeof(*m));
    msg_hdr(m)->type = (uint8_t) type;
    m->n = sizeof(hdr_t);
}

static void msg_seg(msg_t *m, int64_t off, uint64_t len)
{
    seg_t s = {.off = off, .len = len};
    memcpy(m->b + m->n, &s, sizeof(s));
    m->n += sizeof(s);
    msg_hdr(m)->nseg++;
    msg_hdr(m)->stream_len += len;
}

static void msg_payload(msg_t *m, size_t len)
{
    for (size_t i = 0; i < len; ++i) {
        m->b[m->n + i] = (unsigned char) (i * 13 + 1);
    }
    m->n += len;
    msg_hdr(m)->payload_len += len;
}

static void msg_pad(msg_t *m)
{
    while (m->n % 16) {
        m->b[m->n++] = 0;
    }
}

/* One valid record of a random type. */
static void msg_random_valid(msg_t *m)
{
    int type = MCA_OSC_HYBRID_HDR_PUT + (int) (test_rnd() % (MCA_OSC_HYBRID_HDR_TYPE_MAX - 1));
    uint32_t ns = 1 + (uint32_t) (test_rnd() % 6);

    msg_start(m, type);
    switch (type) {
    case MCA_OSC_HYBRID_HDR_PUT:
        if (test_rnd() % 2) {
            msg_hdr(m)->flags = MCA_OSC_HYBRID_FLAG_DATA_FOLLOWS;
            msg_hdr(m)->reply_tag = MCA_OSC_HYBRID_TAG_DATA + (int32_t) (test_rnd() % 1000);
            for (uint32_t i = 0; i < ns; ++i) {
                msg_seg(m, (int64_t) (test_rnd() % 4096), 1 + test_rnd() % 100000);
            }
        } else {
            for (uint32_t i = 0; i < ns; ++i) {
                msg_seg(m, (int64_t) (test_rnd() % 4096), 1 + test_rnd() % 100);
            }
            msg_payload(m, msg_hdr(m)->stream_len);
        }
        break;
    case MCA_OSC_HYBRID_HDR_GET:
        msg_hdr(m)->reply_tag = MCA_OSC_HYBRID_TAG_REPLY + (int32_t) (test_rnd() % 1000);
        for (uint32_t i = 0; i < ns; ++i) {
            msg_seg(m, (int64_t) (test_rnd() % 4096) - 2048, 1 + test_rnd() % 100000);
        }
        break;
    case MCA_OSC_HYBRID_HDR_ACC:
    case MCA_OSC_HYBRID_HDR_GACC:
        msg_hdr(m)->op = 3;
        msg_hdr(m)->dt = 5;
        if (MCA_OSC_HYBRID_HDR_GACC == type) {
            msg_hdr(m)->reply_tag = MCA_OSC_HYBRID_TAG_REPLY + MCA_OSC_HYBRID_TAG_SPAN - 1;
        }
        for (uint32_t i = 0; i < ns; ++i) {
            msg_seg(m, 8 * (int64_t) (test_rnd() % 512), 8 * (1 + test_rnd() % 12));
        }
        if (MCA_OSC_HYBRID_HDR_ACC == type || test_rnd() % 2) {
            msg_payload(m, msg_hdr(m)->stream_len);
        }
        break;
    case MCA_OSC_HYBRID_HDR_CAS:
        msg_hdr(m)->dt = 5;
        msg_hdr(m)->reply_tag = MCA_OSC_HYBRID_TAG_REPLY;
        msg_seg(m, 8, 8);
        msg_payload(m, 16);
        break;
    case MCA_OSC_HYBRID_HDR_LOCK:
        msg_hdr(m)->arg = test_rnd() % 2 ? MPI_LOCK_SHARED : MPI_LOCK_EXCLUSIVE;
        break;
    case MCA_OSC_HYBRID_HDR_ERROR:
        msg_hdr(m)->arg = -(int32_t) (test_rnd() % 100);
        break;
    default:
        break;
    }
    msg_pad(m);
}

/* ---- tests ---- */

static void test_valid_records(void **state)
{
    (void) state;
    for (int it = 0; it < 20000; ++it) {
        msg_t m;
        msg_random_valid(&m);
        assert_int_equal(check(m.b, m.n), VERDICT_OK);
    }
}

/* every valid record, cut at every byte: framed (the padding may go) or
 * fatal, never a read past the cut */
static void test_truncation(void **state)
{
    (void) state;
    for (int it = 0; it < 300; ++it) {
        msg_t m;
        size_t body;
        msg_random_valid(&m);
        body = sizeof(hdr_t) + msg_hdr(&m)->nseg * sizeof(seg_t) + msg_hdr(&m)->payload_len;
        for (size_t cut = 0; cut < m.n; ++cut) {
            int v = check(m.b, cut);
            assert_int_equal(v, cut >= body ? VERDICT_OK : VERDICT_FATAL);
        }
    }
}

/* every field and byte of valid records changed at random */
static void test_mutations(void **state)
{
    static const uint64_t big[] = {0,
                                   1,
                                   15,
                                   16,
                                   17,
                                   48,
                                   0x7fffffff,
                                   0x80000000,
                                   0xffffffff,
                                   (uint64_t) 1 << 30,
                                   ((uint64_t) 1 << 30) + 1,
                                   (uint64_t) 1 << 32,
                                   (uint64_t) 1 << 60,
                                   UINT64_MAX / 16,
                                   UINT64_MAX / 16 + 1,
                                   UINT64_MAX - 47,
                                   UINT64_MAX - 1,
                                   UINT64_MAX};
    const size_t nbig = sizeof(big) / sizeof(big[0]);
    int verdicts[3] = {0, 0, 0};

    (void) state;
    for (int it = 0; it < 200000; ++it) {
        msg_t m;
        hdr_t *h;
        msg_random_valid(&m);
        h = msg_hdr(&m);
        for (int k = 0, nk = 1 + (int) (test_rnd() % 3); k < nk; ++k) {
            switch (test_rnd() % 11) {
            case 0:
                m.b[test_rnd() % (m.n + 1)] ^= (unsigned char) (1u << (test_rnd() % 8));
                break;
            case 1:
                m.b[test_rnd() % (m.n + 1)] = (unsigned char) test_rnd();
                break;
            case 2:
                h->nseg = (uint32_t) (test_rnd() % 3 ? test_rnd() % 8 : big[test_rnd() % nbig]);
                break;
            case 3:
                h->payload_len = test_rnd() % 3 ? test_rnd() % 256 : big[test_rnd() % nbig];
                break;
            case 4:
                h->stream_len = test_rnd() % 3 ? test_rnd() % 256 : big[test_rnd() % nbig];
                break;
            case 5:
                h->type = (uint8_t) test_rnd();
                break;
            case 6:
                h->flags = (uint8_t) (1u << (test_rnd() % 8));
                break;
            case 7:
                h->reply_tag = (int32_t) (test_rnd() % 2 ? big[test_rnd() % nbig] : test_rnd());
                break;
            case 8:
                if (h->nseg > 0 && sizeof(hdr_t) + h->nseg * sizeof(seg_t) <= m.n) {
                    seg_t *s = (seg_t *) (m.b + sizeof(hdr_t)) + test_rnd() % h->nseg;
                    s->len = test_rnd() % 2 ? test_rnd() % 64 : big[test_rnd() % nbig];
                }
                break;
            case 9:
                m.n = test_rnd() % (m.n + 1);
                break;
            default:
                h->arg = (int32_t) test_rnd() % 4;
                break;
            }
        }
        verdicts[check(m.b, m.n)]++;
    }
    print_message("mutated records: %d valid, %d answered, %d fatal\n", verdicts[VERDICT_OK],
                  verdicts[VERDICT_ANSWERED], verdicts[VERDICT_FATAL]);
    for (int v = 0; v < 3; ++v) {
        assert_true(verdicts[v] > 10000);
    }
}

/* the reported defect: lengths that do not add up must be refused
 * whatever payload_len says */
static void test_segment_sums(void **state)
{
    static const int types[] = {MCA_OSC_HYBRID_HDR_PUT, MCA_OSC_HYBRID_HDR_GET,
                                MCA_OSC_HYBRID_HDR_ACC, MCA_OSC_HYBRID_HDR_GACC};
    mca_osc_hybrid_rec_t rec;

    (void) state;
    for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); ++t) {
        for (uint64_t stream = 0; stream < 300; stream += 7) {
            msg_t m;
            msg_start(&m, types[t]);
            msg_hdr(&m)->reply_tag = MCA_OSC_HYBRID_TAG_REPLY;
            if (MCA_OSC_HYBRID_HDR_PUT == types[t] || MCA_OSC_HYBRID_HDR_ACC == types[t]) {
                msg_hdr(&m)->reply_tag = 0;
            }
            msg_seg(&m, 0, 64);
            msg_seg(&m, 64, 64);
            msg_hdr(&m)->stream_len = stream;
            msg_payload(&m, stream);
            msg_pad(&m);
            if (128 == stream) {
                continue;
            }
            assert_int_equal(mca_osc_hybrid_check_record(m.b, m.n, &rec), MCA_OSC_HYBRID_WIRE_SUM);
        }
    }
    /* a sum that wraps around 2^64 */
    {
        msg_t m;
        msg_start(&m, MCA_OSC_HYBRID_HDR_GET);
        msg_hdr(&m)->reply_tag = MCA_OSC_HYBRID_TAG_REPLY;
        msg_seg(&m, 0, UINT64_MAX);
        msg_seg(&m, 0, 17);
        msg_hdr(&m)->stream_len = 16;
        assert_int_equal(mca_osc_hybrid_check_record(m.b, m.n, &rec), MCA_OSC_HYBRID_WIRE_SUM);
    }
}

/* the rule of each notice */
static void test_notices(void **state)
{
    mca_osc_hybrid_rec_t rec;

    (void) state;
    for (int t = MCA_OSC_HYBRID_HDR_LOCK; t < MCA_OSC_HYBRID_HDR_TYPE_MAX; ++t) {
        msg_t m;
        msg_start(&m, t);
        if (MCA_OSC_HYBRID_HDR_LOCK == t) {
            assert_int_equal(mca_osc_hybrid_check_record(m.b, m.n, &rec),
                             MCA_OSC_HYBRID_WIRE_LOCK_TYPE);
            msg_hdr(&m)->arg = MPI_LOCK_EXCLUSIVE;
        }
        assert_int_equal(mca_osc_hybrid_check_record(m.b, m.n, &rec), MCA_OSC_HYBRID_WIRE_OK);
        assert_int_equal(rec.len, 48);
        msg_hdr(&m)->disp = 1;
        assert_int_equal(mca_osc_hybrid_check_record(m.b, m.n, &rec), MCA_OSC_HYBRID_WIRE_NOTICE);
        msg_hdr(&m)->disp = 0;
        msg_hdr(&m)->op = 3;
        assert_int_equal(mca_osc_hybrid_check_record(m.b, m.n, &rec), MCA_OSC_HYBRID_WIRE_NOTICE);
    }
}

/* ---- the range check against a byte model ---- */

static void test_range_window(void **state)
{
    static const int64_t edge[] = {INT64_MIN,     INT64_MIN + 1, -4096,    -1, 0, 1, 255, 256, 4096,
                                   INT64_MAX / 8, INT64_MAX - 1, INT64_MAX};
    const size_t nedge = sizeof(edge) / sizeof(edge[0]);

    (void) state;
    for (int it = 0; it < 200000; ++it) {
        mca_osc_hybrid_wire_win_t w = {.dynamic = false,
                                       .base = (uintptr_t) 0x10000000,
                                       .size = test_rnd() % 1024,
                                       .disp_unit = 1 + (int64_t) (test_rnd() % 16)};
        seg_t segs[3];
        uint32_t n = 1 + (uint32_t) (test_rnd() % 3);
        int64_t disp = test_rnd() % 4 ? (int64_t) (test_rnd() % 200) - 50 : edge[test_rnd() % nedge];
        bool ok = true;
        uintptr_t origin = 0;
        int err;
        __int128 start = (__int128) disp * w.disp_unit;

        if (test_rnd() % 8 == 0) {
            w.disp_unit = INT64_MAX / (1 + (int64_t) (test_rnd() % 4));
        }
        start = (__int128) disp * w.disp_unit;
        for (uint32_t i = 0; i < n; ++i) {
            __int128 lo;
            segs[i].off = test_rnd() % 4 ? (int64_t) (test_rnd() % 1200) - 100 : edge[test_rnd() % nedge];
            segs[i].len = test_rnd() % 4 ? test_rnd() % 600 : (uint64_t) edge[test_rnd() % nedge];
            lo = start + segs[i].off;
            /* the model: every byte in [0, size), and the intermediate
             * values representable in 64 bits */
            if (start < INT64_MIN || start > INT64_MAX || lo < 0 || lo > INT64_MAX ||
                segs[i].len > MCA_OSC_HYBRID_STREAM_MAX || lo + segs[i].len > w.size) {
                ok = false;
            }
        }
        err = mca_osc_hybrid_check_range(&w, disp, segs, n, &origin);
        if ((MCA_OSC_HYBRID_WIRE_OK == err) != ok) {
            fail_msg("disp %lld unit %lld size %llu seg0 (%lld, %llu): check %d, model %d",
                     (long long) disp, (long long) w.disp_unit, (unsigned long long) w.size,
                     (long long) segs[0].off, (unsigned long long) segs[0].len, err, ok);
        }
        if (ok) {
            for (uint32_t i = 0; i < n; ++i) {
                uintptr_t a = origin + (uintptr_t) segs[i].off;
                assert_true(a >= w.base && a - w.base <= w.size &&
                            segs[i].len <= w.size - (a - w.base));
            }
        }
    }
}

/* attached regions, some adjacent, some overlapping, some apart */
static void test_range_dynamic(void **state)
{
    enum { SPACE = 512 };
    const uintptr_t base = (uintptr_t) 0x7f0000000000ULL;

    (void) state;
    for (int it = 0; it < 100000; ++it) {
        mca_osc_hybrid_region_t reg[4];
        bool covered[SPACE] = {false};
        mca_osc_hybrid_wire_win_t w = {.dynamic = true, .regions = reg};
        seg_t segs[2];
        uint32_t n = 1 + (uint32_t) (test_rnd() % 2);
        int64_t disp = (int64_t) base + (int64_t) (test_rnd() % SPACE) - 64;
        bool ok = true;
        uintptr_t origin = 0;
        int err;

        w.nregions = (int) (test_rnd() % 5);
        for (int r = 0; r < w.nregions; ++r) {
            size_t at = test_rnd() % SPACE, len = test_rnd() % 160;
            if (at + len > SPACE) {
                len = SPACE - at;
            }
            reg[r].base = (char *) (base + at);
            reg[r].len = len;
            for (size_t b = at; b < at + len; ++b) {
                covered[b] = true;
            }
        }
        if (0 == test_rnd() % 16) {
            disp = test_rnd() % 2 ? INT64_MAX - (int64_t) (test_rnd() % 100) : -(int64_t) (test_rnd() % 100);
        }
        for (uint32_t i = 0; i < n; ++i) {
            __int128 lo;
            segs[i].off = (int64_t) (test_rnd() % 200) - 100;
            segs[i].len = test_rnd() % 16 ? test_rnd() % 200 : UINT64_MAX - test_rnd() % 4;
            lo = (__int128) disp + segs[i].off;
            /* the model: 64-bit addresses, every byte (none for a length
             * of 0) attached */
            if (lo < 0 || lo > INT64_MAX || segs[i].len > MCA_OSC_HYBRID_STREAM_MAX) {
                ok = false;
                continue;
            }
            if (0 == segs[i].len) {
                continue;
            }
            if (lo < (__int128) base || lo + segs[i].len > (__int128) base + SPACE) {
                ok = false;
                continue;
            }
            for (uint64_t b = 0; b < segs[i].len; ++b) {
                if (!covered[(size_t) (lo - (__int128) base) + b]) {
                    ok = false;
                    break;
                }
            }
        }
        err = mca_osc_hybrid_check_range(&w, disp, segs, n, &origin);
        if ((MCA_OSC_HYBRID_WIRE_OK == err) != ok) {
            fail_msg("dynamic: disp %+lld seg0 (%lld, %llu), %d regions: check %d, model %d",
                     (long long) ((__int128) disp - (__int128) base), (long long) segs[0].off,
                     (unsigned long long) segs[0].len, w.nregions, err, ok);
        }
        if (ok) {
            assert_true(origin == (uintptr_t) disp);
        }
    }
}

static void test_codes(void **state)
{
    (void) state;
    assert_false(mca_osc_hybrid_wire_fatal(MCA_OSC_HYBRID_WIRE_OK));
    for (int e = MCA_OSC_HYBRID_WIRE_OK + 1; e < MCA_OSC_HYBRID_WIRE_END; ++e) {
        const char *s = mca_osc_hybrid_wire_strerror(e);
        if (MCA_OSC_HYBRID_WIRE_FATAL_END == e) {
            continue;
        }
        assert_non_null(s);
        assert_string_not_equal(s, "an unknown error");
        assert_int_equal(mca_osc_hybrid_wire_fatal(e), e < MCA_OSC_HYBRID_WIRE_FATAL_END);
    }
    assert_int_equal(mca_osc_hybrid_record_len(0, 0), 48);
    assert_int_equal(mca_osc_hybrid_record_len(1, 1), 80);
    assert_int_equal(mca_osc_hybrid_record_len(2, 16), 96);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid_records), cmocka_unit_test(test_truncation),
        cmocka_unit_test(test_mutations),     cmocka_unit_test(test_segment_sums),
        cmocka_unit_test(test_notices),       cmocka_unit_test(test_range_window),
        cmocka_unit_test(test_range_dynamic), cmocka_unit_test(test_codes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
