/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_sci_modex.c: btl_sci's modex record as another process sent it
 * (btl_sci/btl_sci_hdr.h): the fixed record is taken only from a buffer
 * that holds it, what follows is handed on untouched, and the ring
 * geometry of each module (shm rings, ofi rings) is compared field by
 * field. Then a seeded fuzz loop of random lengths and bytes in buffers
 * of exactly that size (run under valgrind: a read past the end shows).
 */

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "btl_sci_hdr.h"

static mca_btl_sci_modex_t record(void)
{
    mca_btl_sci_modex_t r = {.node_id = 7,
                             .local_rank = 1,
                             .nslots = 64,
                             .slot_size = 2112,
                             .pid = 4242,
                             .ofi_nslots = 32,
                             .ofi_slot_size = 32832,
                             .pad = 0};
    return r;
}

static void test_parse_and_truncations(void **state)
{
    mca_btl_sci_modex_t r = record(), got;
    uint8_t buf[sizeof(r) + 40];
    const void *rest = NULL;
    size_t restlen = 0;

    (void) state;
    memcpy(buf, &r, sizeof(r));
    memset(buf + sizeof(r), 0xab, 40);
    assert_int_equal(0, mca_btl_sci_modex_parse(buf, sizeof(buf), &got, &rest, &restlen));
    assert_memory_equal(&got, &r, sizeof(r));
    assert_ptr_equal(rest, buf + sizeof(r));
    assert_int_equal(restlen, 40);
    /* the record alone: an empty rest (shm only, no directory) */
    assert_int_equal(0, mca_btl_sci_modex_parse(buf, sizeof(r), &got, &rest, &restlen));
    assert_int_equal(restlen, 0);
    /* every truncation of the fixed part, and no buffer at all */
    for (size_t cut = 0; cut < sizeof(r); ++cut) {
        uint8_t *copy = malloc(cut ? cut : 1);

        assert_non_null(copy);
        memcpy(copy, buf, cut);
        assert_int_equal(-EPROTO, mca_btl_sci_modex_parse(copy, cut, &got, &rest, &restlen));
        free(copy);
    }
    assert_int_equal(-EPROTO, mca_btl_sci_modex_parse(NULL, 64, &got, &rest, &restlen));
}

/* each module compares its own pair of fields and nothing else */
static void test_geometry(void **state)
{
    mca_btl_sci_modex_t r = record();

    (void) state;
    assert_true(mca_btl_sci_modex_geometry_ok(&r, true, 64, 2112));
    assert_true(mca_btl_sci_modex_geometry_ok(&r, false, 32, 32832));
    assert_false(mca_btl_sci_modex_geometry_ok(&r, true, 32, 32832));
    assert_false(mca_btl_sci_modex_geometry_ok(&r, false, 64, 2112));
    assert_false(mca_btl_sci_modex_geometry_ok(&r, true, 64, 2048));
    assert_false(mca_btl_sci_modex_geometry_ok(&r, true, 128, 2112));
    assert_false(mca_btl_sci_modex_geometry_ok(&r, false, 32, 65600));
    assert_false(mca_btl_sci_modex_geometry_ok(&r, false, 16, 32832));
    /* a peer whose ofi rings differ still matches on shm, and back */
    r.ofi_slot_size = 65600;
    assert_true(mca_btl_sci_modex_geometry_ok(&r, true, 64, 2112));
    assert_false(mca_btl_sci_modex_geometry_ok(&r, false, 32, 32832));
    r = record();
    r.slot_size = 4160;
    assert_false(mca_btl_sci_modex_geometry_ok(&r, true, 64, 2112));
    assert_true(mca_btl_sci_modex_geometry_ok(&r, false, 32, 32832));
}

/* random lengths and bytes: accepted exactly when the record fits, the
 * rest always inside the buffer, the record read as it lies */
static void test_fuzz(void **state)
{
    unsigned int seed = 20260301;
    unsigned long accepted = 0, refused = 0;

    (void) state;
    for (int round = 0; round < 200000; ++round) {
        size_t len = (size_t) (rand_r(&seed) % 97);
        uint8_t *buf = malloc(len ? len : 1);
        mca_btl_sci_modex_t got;
        const void *rest = NULL;
        size_t restlen = 0;
        int rc;

        assert_non_null(buf);
        for (size_t i = 0; i < len; ++i) {
            buf[i] = (uint8_t) rand_r(&seed);
        }
        rc = mca_btl_sci_modex_parse(buf, len, &got, &rest, &restlen);
        if (len < sizeof(got)) {
            assert_int_equal(-EPROTO, rc);
            ++refused;
        } else {
            assert_int_equal(0, rc);
            assert_memory_equal(&got, buf, sizeof(got));
            assert_ptr_equal(rest, buf + sizeof(got));
            assert_int_equal(restlen + sizeof(got), len);
            assert_int_equal(mca_btl_sci_modex_geometry_ok(&got, true, got.nslots, got.slot_size),
                             1);
            assert_int_equal(
                mca_btl_sci_modex_geometry_ok(&got, false, got.ofi_nslots, got.ofi_slot_size), 1);
            assert_int_equal(
                mca_btl_sci_modex_geometry_ok(&got, false, got.ofi_nslots + 1, got.ofi_slot_size),
                0);
            ++accepted;
        }
        free(buf);
    }
    assert_true(accepted > 0 && refused > 0);
    printf("fuzz: %lu records accepted, %lu refused\n", accepted, refused);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_and_truncations),
        cmocka_unit_test(test_geometry),
        cmocka_unit_test(test_fuzz),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
