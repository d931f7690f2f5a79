/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_via_wire.c: what btl_via reads from other processes, checked.
 * The modex record (mca_btl_via_modex_parse): a well-formed record read
 * on each device slot, every malformed field refused, a geometry that
 * differs reported with the peer's figures, and a fuzz pass that feeds
 * the parser records with random bytes changed and random lengths, each
 * in a buffer of exactly its length (so valgrind or ASan sees any read
 * past it).  A receive completion (mca_btl_via_rx_class): every kind with
 * the lengths it may and may not have, errors and missing immediate
 * data, and every immediate value's kind against random lengths.
 */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "btl_via_hdr.h"

#define VIA_MX_NPROCS 4u
#define VIA_MX_FUZZ_ROUNDS 20000

/* a record as a process of VIA_MX_NPROCS publishes it: slot 0 emu
 * (4 KiB buffers), slot 1 ofi (64 KiB); the address of (slot, vpid)
 * filled with the byte (slot * 16 + vpid + 1) */
static unsigned char *via_mx_record(size_t *len)
{
    size_t n = mca_btl_via_modex_size(VIA_MX_NPROCS);
    unsigned char *rec = calloc(1, n);
    mca_btl_via_modex_hdr_t hdr;

    assert_non_null(rec);
    memset(&hdr, 0, sizeof(hdr));
    hdr.magic = MCA_BTL_VIA_MODEX_MAGIC;
    hdr.nprocs = VIA_MX_NPROCS;
    hdr.slot[0] = (mca_btl_via_modex_slot_t){1, 32, 4096, 4194304};
    hdr.slot[1] = (mca_btl_via_modex_slot_t){3, 32, 65536, 4194304};
    memcpy(rec, &hdr, sizeof(hdr));
    for (uint32_t k = 0; k < 2; ++k) {
        for (uint32_t v = 0; v < VIA_MX_NPROCS; ++v) {
            memset(rec + sizeof(hdr) + ((size_t) k * VIA_MX_NPROCS + v) * VIPL_ADDR_BYTES,
                   (int) (k * 16 + v + 1), VIPL_ADDR_BYTES);
        }
    }
    *len = n;
    return rec;
}

static const mca_btl_via_modex_slot_t via_mx_mine[2] = {{1, 32, 4096, 4194304},
                                                        {3, 32, 65536, 65536}};

/* rec parsed as vpid 0's in a job of VIA_MX_NPROCS, for our slot (our
 * slot 0's figures when slot is out of range) */
static int via_mx_parse(const void *rec, size_t len, int slot, mca_btl_via_modex_slot_t *theirs,
                        vipl_vi_address_t *addr)
{
    const mca_btl_via_modex_slot_t *mine = &via_mx_mine[1 == slot ? 1 : 0];

    return mca_btl_via_modex_parse(rec, len, VIA_MX_NPROCS, 0, slot, mine, theirs, addr);
}

static void test_via_modex_size(void **state)
{
    (void) state;
    assert_int_equal(40 + 2 * 48, mca_btl_via_modex_size(1));
    assert_int_equal(0, mca_btl_via_modex_size(0));
    /* no wrap on a 64-bit size_t: a huge count only makes a size no
     * record has */
    assert_true(mca_btl_via_modex_size(UINT32_MAX) > (size_t) UINT32_MAX);
}

static void test_via_modex_good(void **state)
{
    mca_btl_via_modex_slot_t theirs;
    vipl_vi_address_t addr;
    size_t len;
    unsigned char *rec = via_mx_record(&len);

    (void) state;
    for (int k = 0; k < 2; ++k) {
        for (uint32_t v = 0; v < VIA_MX_NPROCS; ++v) {
            memset(&addr, 0, sizeof(addr));
            assert_int_equal(0,
                             mca_btl_via_modex_parse(rec, len, VIA_MX_NPROCS, v, k, &via_mx_mine[k],
                                                     &theirs, &addr));
            for (int b = 0; b < VIPL_ADDR_BYTES; ++b) {
                assert_int_equal(k * 16 + v + 1, addr.bytes[b]);
            }
        }
    }
    /* max_transfer may differ between the ends (each splits its own) */
    assert_int_equal(4194304, theirs.max_transfer);
    /* a process of another job reads the record with the count it
     * carries: the NIC address of slot 1 is vpid 0's entry; a record cut
     * short, one with a count that does not fit its size, and a header
     * alone are refused */
    memset(&addr, 0, sizeof(addr));
    assert_int_equal(0, mca_btl_via_modex_parse_nic(rec, len, 1, &via_mx_mine[1], &theirs, &addr));
    assert_int_equal(1 * 16 + 0 + 1, addr.bytes[0]);
    assert_int_equal(-EPROTO,
                     mca_btl_via_modex_parse_nic(rec, len - 1, 1, &via_mx_mine[1], &theirs, &addr));
    assert_int_equal(-EPROTO,
                     mca_btl_via_modex_parse_nic(rec, sizeof(mca_btl_via_modex_hdr_t) - 1, 1,
                                                 &via_mx_mine[1], &theirs, &addr));
    ((mca_btl_via_modex_hdr_t *) rec)->nprocs = VIA_MX_NPROCS + 1;
    assert_int_equal(-EPROTO,
                     mca_btl_via_modex_parse_nic(rec, len, 1, &via_mx_mine[1], &theirs, &addr));
    ((mca_btl_via_modex_hdr_t *) rec)->nprocs = 0;
    assert_int_equal(-EPROTO,
                     mca_btl_via_modex_parse_nic(rec, len, 1, &via_mx_mine[1], &theirs, &addr));
    free(rec);
}

static void test_via_modex_malformed(void **state)
{
    mca_btl_via_modex_slot_t theirs;
    vipl_vi_address_t addr;
    size_t len;
    unsigned char *rec = via_mx_record(&len);
    mca_btl_via_modex_hdr_t *hdr = (mca_btl_via_modex_hdr_t *) rec;

    (void) state;
    /* lengths: short, long, empty, a header alone */
    assert_int_equal(-EPROTO, via_mx_parse(rec, len - 1, 0, &theirs, &addr));
    assert_int_equal(-EPROTO, via_mx_parse(rec, len + 1, 0, &theirs, &addr));
    assert_int_equal(-EPROTO, via_mx_parse(rec, 0, 0, &theirs, &addr));
    assert_int_equal(-EPROTO, via_mx_parse(rec, sizeof(*hdr), 0, &theirs, &addr));
    assert_int_equal(-EPROTO, via_mx_parse(NULL, len, 0, &theirs, &addr));
    /* slot and vpid out of range */
    assert_int_equal(-EPROTO, via_mx_parse(rec, len, 2, &theirs, &addr));
    assert_int_equal(-EPROTO, via_mx_parse(rec, len, -1, &theirs, &addr));
    assert_int_equal(-EPROTO,
                     mca_btl_via_modex_parse(rec, len, VIA_MX_NPROCS, VIA_MX_NPROCS, 0,
                                             &via_mx_mine[0], &theirs, &addr));
    /* a job of another size: the record's own count, and ours */
    hdr->nprocs = VIA_MX_NPROCS + 1;
    assert_int_equal(-EPROTO, via_mx_parse(rec, len, 0, &theirs, &addr));
    hdr->nprocs = VIA_MX_NPROCS;
    assert_int_equal(-EPROTO,
                     mca_btl_via_modex_parse(rec, len, VIA_MX_NPROCS - 1, 0, 0, &via_mx_mine[0],
                                             &theirs, &addr));
    /* magic */
    hdr->magic ^= 1u;
    assert_int_equal(-EPROTO, via_mx_parse(rec, len, 0, &theirs, &addr));
    hdr->magic ^= 1u;
    /* the slot not open at the peer, or another provider there */
    hdr->slot[1].provider = 0;
    assert_int_equal(-ENOENT, via_mx_parse(rec, len, 1, &theirs, &addr));
    hdr->slot[1].provider = 2;
    assert_int_equal(-ENOENT, via_mx_parse(rec, len, 1, &theirs, &addr));
    hdr->slot[1].provider = 3;
    /* geometry: credits or buffer size differ, reported with the peer's */
    hdr->slot[1].recv_size = 16384;
    assert_int_equal(-ERANGE, via_mx_parse(rec, len, 1, &theirs, &addr));
    assert_int_equal(16384, theirs.recv_size);
    hdr->slot[1].recv_size = 65536;
    hdr->slot[0].recv_descriptors = 4;
    assert_int_equal(-ERANGE, via_mx_parse(rec, len, 0, &theirs, &addr));
    assert_int_equal(4, theirs.recv_descriptors);
    /* the other slot is still fine */
    assert_int_equal(0, via_mx_parse(rec, len, 1, &theirs, &addr));
    free(rec);
}

/* random records: changed bytes and lengths, each in an exact buffer; an
 * accepted one must hand back the bytes at the entry's place */
static void test_via_modex_fuzz(void **state)
{
    size_t len;
    unsigned char *good = via_mx_record(&len);
    unsigned accepted = 0;

    (void) state;
    srand(20260411);
    for (int round = 0; round < VIA_MX_FUZZ_ROUNDS; ++round) {
        size_t n = (0 == round % 4) ? (size_t) rand() % (len + 64) : len;
        unsigned char *rec = malloc(n ? n : 1);
        mca_btl_via_modex_slot_t theirs;
        vipl_vi_address_t addr;
        uint32_t nprocs = (0 == round % 7) ? (uint32_t) rand() : VIA_MX_NPROCS;
        uint32_t vpid = (uint32_t) rand() % (VIA_MX_NPROCS + 1);
        int slot = rand() % 4 - 1;
        int flips = rand() % 8;
        int rc;

        assert_non_null(rec);
        memcpy(rec, good, n < len ? n : len);
        if (n > len) {
            memset(rec + len, 0xee, n - len);
        }
        for (int f = 0; f < flips && n > 0; ++f) {
            /* the header is where the checks are: hit it most */
            size_t at = (size_t) rand() % (rand() % 2 ? (n < 40 ? n : 40) : n);
            rec[at] = (unsigned char) rand();
        }
        rc =
            mca_btl_via_modex_parse(rec, n, nprocs, vpid, slot,
                                    &via_mx_mine[slot >= 0 && slot < 2 ? slot : 0], &theirs, &addr);
        assert_true(0 == rc || -EPROTO == rc || -ENOENT == rc || -ERANGE == rc);
        if (0 == rc) {
            ++accepted;
            assert_int_equal(len, n);
            assert_memory_equal(addr.bytes,
                                rec + 40 + ((size_t) slot * VIA_MX_NPROCS + vpid) * VIPL_ADDR_BYTES,
                                VIPL_ADDR_BYTES);
        }
        free(rec);
    }
    /* the pass is not vacuous: unchanged records still go through */
    assert_true(accepted > 0);
    free(good);
}

/* one receive completion and its class */
typedef struct via_rx_case {
    uint32_t status, kind, credits, length, buf_len;
    int cls;
} via_rx_case_t;

static void test_via_rx_class_cases(void **state)
{
    const uint32_t ok = VIPL_STATUS_DONE | VIPL_STATUS_IMMEDIATE;
    const via_rx_case_t cases[] = {
        {ok, MCA_BTL_VIA_KIND_AM, 3, 100, 4096, MCA_BTL_VIA_RX_AM},
        {ok, MCA_BTL_VIA_KIND_AM, 0, 4096, 4096, MCA_BTL_VIA_RX_AM},
        {ok, MCA_BTL_VIA_KIND_AM, 0, 4097, 4096, MCA_BTL_VIA_RX_MALFORMED},
        {ok, MCA_BTL_VIA_KIND_CREDIT, 31, 0, 4096, MCA_BTL_VIA_RX_CREDIT},
        {ok, MCA_BTL_VIA_KIND_CREDIT, 31, 1, 4096, MCA_BTL_VIA_RX_MALFORMED},
        {ok, MCA_BTL_VIA_KIND_RETURN, 16, 0, 4096, MCA_BTL_VIA_RX_RETURN},
        {ok, MCA_BTL_VIA_KIND_RETURN, 16, 8, 4096, MCA_BTL_VIA_RX_MALFORMED},
        /* a put's notice may carry the RDMA write's length (verbs) */
        {ok, MCA_BTL_VIA_KIND_PUT_DONE, 1, 1u << 20, 4096, MCA_BTL_VIA_RX_PUT_DONE},
        {ok, 0, 0, 0, 4096, MCA_BTL_VIA_RX_MALFORMED},
        {VIPL_STATUS_DONE, MCA_BTL_VIA_KIND_AM, 0, 8, 4096, MCA_BTL_VIA_RX_MALFORMED},
        {ok | VIPL_STATUS_FLUSHED_ERROR, MCA_BTL_VIA_KIND_AM, 0, 8, 4096, MCA_BTL_VIA_RX_ERROR},
    };

    (void) state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
        const via_rx_case_t *t = cases + i;

        assert_int_equal(t->cls,
                         mca_btl_via_rx_class(t->status, MCA_BTL_VIA_IMM(t->kind, 65, t->credits),
                                              t->length, t->buf_len));
    }
    for (uint32_t k = MCA_BTL_VIA_KIND_MAX; k <= MCA_BTL_VIA_IMM_KIND_MASK; ++k) {
        assert_int_equal(MCA_BTL_VIA_RX_MALFORMED,
                         mca_btl_via_rx_class(ok, MCA_BTL_VIA_IMM(k, 0, 0), 0, 4096));
    }
}

/* every immediate value's kind with random lengths and status bits: the
 * class follows the kind and the length rule alone */
static void test_via_rx_class_fuzz(void **state)
{
    (void) state;
    srand(20260412);
    for (int round = 0; round < VIA_MX_FUZZ_ROUNDS * 5; ++round) {
        uint32_t imm = ((uint32_t) rand() << 16) ^ (uint32_t) rand();
        uint32_t status =
            (uint32_t) rand() & (VIPL_STATUS_ERROR_MASK | VIPL_STATUS_IMMEDIATE | VIPL_STATUS_DONE);
        uint32_t len = (0 == round % 3) ? 0 : (uint32_t) rand() % 70000;
        uint32_t buf = 0 == round % 2 ? 4096 : 65536;
        uint32_t kind = MCA_BTL_VIA_IMM_KIND(imm);
        int cls = mca_btl_via_rx_class(status, imm, len, buf);

        if (status & VIPL_STATUS_ERROR_MASK) {
            assert_int_equal(MCA_BTL_VIA_RX_ERROR, cls);
        } else if (!(status & VIPL_STATUS_IMMEDIATE) || 0 == kind || kind >= MCA_BTL_VIA_KIND_MAX) {
            assert_int_equal(MCA_BTL_VIA_RX_MALFORMED, cls);
        } else if (MCA_BTL_VIA_KIND_AM == kind) {
            assert_int_equal(len <= buf ? MCA_BTL_VIA_RX_AM : MCA_BTL_VIA_RX_MALFORMED, cls);
        } else if (MCA_BTL_VIA_KIND_PUT_DONE == kind) {
            assert_int_equal(MCA_BTL_VIA_RX_PUT_DONE, cls);
        } else {
            assert_true(0 == len ? MCA_BTL_VIA_RX_MALFORMED != cls
                                 : MCA_BTL_VIA_RX_MALFORMED == cls);
        }
        /* the credit field never leaks into the kind or the tag */
        assert_true(MCA_BTL_VIA_IMM_CREDITS(imm) <= MCA_BTL_VIA_IMM_CREDIT_MAX);
        assert_true(MCA_BTL_VIA_IMM_TAGOF(imm) <= 0xffu);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_via_rx_class_cases),  cmocka_unit_test(test_via_rx_class_fuzz),
        cmocka_unit_test(test_via_modex_size),      cmocka_unit_test(test_via_modex_good),
        cmocka_unit_test(test_via_modex_malformed), cmocka_unit_test(test_via_modex_fuzz),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
