/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_sci_atomic.c: the target side of btl_sci's emulated atomics
 * (btl_sci_aop.h) at both widths: every operation's result and returned
 * old value, MIN and MAX with negative values (signed, Open MPI's
 * convention: MIN(-1, 1) is -1, not 1 as an unsigned compare gives),
 * compare-and-swap hit and miss, and a 32-bit operation that leaves the
 * neighbouring word alone.
 */

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdint.h>

#include "btl_sci_aop.h"

static void test_minmax_signed_64(void **state)
{
    uint64_t w;
    (void) state;

    w = (uint64_t) -5;
    assert_int_equal((int64_t) mca_btl_sci_aop_apply64(MCA_BTL_SCI_AOP_MIN, &w, 3, 0), -5);
    assert_int_equal((int64_t) w, -5);
    assert_int_equal((int64_t) mca_btl_sci_aop_apply64(MCA_BTL_SCI_AOP_MAX, &w, 3, 0), -5);
    assert_int_equal((int64_t) w, 3);
    mca_btl_sci_aop_apply64(MCA_BTL_SCI_AOP_MIN, &w, (uint64_t) -7, 0);
    assert_int_equal((int64_t) w, -7);
    mca_btl_sci_aop_apply64(MCA_BTL_SCI_AOP_MAX, &w, (uint64_t) -9, 0);
    assert_int_equal((int64_t) w, -7);
    w = (uint64_t) INT64_MIN;
    mca_btl_sci_aop_apply64(MCA_BTL_SCI_AOP_MAX, &w, (uint64_t) INT64_MAX, 0);
    assert_true(w == (uint64_t) INT64_MAX);
    mca_btl_sci_aop_apply64(MCA_BTL_SCI_AOP_MIN, &w, (uint64_t) INT64_MIN, 0);
    assert_true(w == (uint64_t) INT64_MIN);
}

static void test_minmax_signed_32(void **state)
{
    uint32_t w[2] = {0, 0xdeadbeefu};
    (void) state;

    w[0] = (uint32_t) -1;
    assert_int_equal((int32_t) mca_btl_sci_aop_apply32(MCA_BTL_SCI_AOP_MIN, &w[0], 1, 0), -1);
    assert_int_equal((int32_t) w[0], -1);
    mca_btl_sci_aop_apply32(MCA_BTL_SCI_AOP_MAX, &w[0], 1, 0);
    assert_int_equal((int32_t) w[0], 1);
    /* the operand comes as 64 bits on the wire: only its low half counts */
    mca_btl_sci_aop_apply32(MCA_BTL_SCI_AOP_MIN, &w[0], (uint64_t) (int64_t) -100, 0);
    assert_int_equal((int32_t) w[0], -100);
    mca_btl_sci_aop_apply32(MCA_BTL_SCI_AOP_MAX, &w[0], (uint32_t) -200, 0);
    assert_int_equal((int32_t) w[0], -100);
    w[0] = (uint32_t) INT32_MIN;
    mca_btl_sci_aop_apply32(MCA_BTL_SCI_AOP_MAX, &w[0], (uint32_t) INT32_MAX, 0);
    assert_int_equal((int32_t) w[0], INT32_MAX);
    assert_true(w[1] == 0xdeadbeefu);
}

static void test_other_ops(void **state)
{
    uint64_t w = 10;
    uint32_t h = 10;
    (void) state;

    assert_int_equal(mca_btl_sci_aop_apply64(MCA_BTL_SCI_AOP_ADD, &w, (uint64_t) -3, 0), 10);
    assert_int_equal(w, 7);
    assert_int_equal(mca_btl_sci_aop_apply64(MCA_BTL_SCI_AOP_AND, &w, 6, 0), 7);
    assert_int_equal(w, 6);
    assert_int_equal(mca_btl_sci_aop_apply64(MCA_BTL_SCI_AOP_OR, &w, 1, 0), 6);
    assert_int_equal(w, 7);
    assert_int_equal(mca_btl_sci_aop_apply64(MCA_BTL_SCI_AOP_XOR, &w, 5, 0), 7);
    assert_int_equal(w, 2);
    assert_int_equal(mca_btl_sci_aop_apply64(MCA_BTL_SCI_AOP_SWAP, &w, 42, 0), 2);
    assert_int_equal(w, 42);
    assert_int_equal(mca_btl_sci_aop_apply64(MCA_BTL_SCI_AOP_CSWAP, &w, 1, 41), 42);
    assert_int_equal(w, 42); /* miss: unchanged */
    assert_int_equal(mca_btl_sci_aop_apply64(MCA_BTL_SCI_AOP_CSWAP, &w, 1, 42), 42);
    assert_int_equal(w, 1); /* hit */
    assert_int_equal(mca_btl_sci_aop_apply64(MCA_BTL_SCI_AOP_LAND, &w, 0, 0), 1);
    assert_int_equal(w, 0);
    assert_int_equal(mca_btl_sci_aop_apply64(MCA_BTL_SCI_AOP_LOR, &w, 5, 0), 0);
    assert_int_equal(w, 1);
    assert_int_equal(mca_btl_sci_aop_apply64(MCA_BTL_SCI_AOP_LXOR, &w, 5, 0), 1);
    assert_int_equal(w, 0);
    assert_int_equal(mca_btl_sci_aop_apply32(MCA_BTL_SCI_AOP_ADD, &h, (uint64_t) -11, 0), 10);
    assert_int_equal((int32_t) h, -1);
    assert_int_equal(mca_btl_sci_aop_apply32(MCA_BTL_SCI_AOP_CSWAP, &h, 3, (uint32_t) -1),
                     (uint32_t) -1);
    assert_int_equal(h, 3);
    assert_true(mca_btl_sci_aop_valid(MCA_BTL_SCI_AOP_LXOR));
    assert_false(mca_btl_sci_aop_valid(0));
    assert_false(mca_btl_sci_aop_valid(MCA_BTL_SCI_AOP_LXOR + 1));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_minmax_signed_64),
        cmocka_unit_test(test_minmax_signed_32),
        cmocka_unit_test(test_other_ops),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
