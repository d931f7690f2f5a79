/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_ompi_pack.c: the prepare_src helpers of common/ompi against Open
 * MPI's real convertor: tc_ompi_pack copies a contiguous buffer in pieces
 * and hands out the user's pointer in place; tc_ompi_frag_prepare_inplace
 * builds a two-segment descriptor (header room, then the user's data) up
 * to a fragment's capacity; tc_ompi_frag_list picks the eager or the max
 * free list by size. OPAL's utility layer is initialised
 * (datatypes, architecture), nothing else.
 */
#include "opal_config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "tc_unit.h"

#include "opal/constants.h"
#include "opal/datatype/opal_convertor.h"
#include "opal/datatype/opal_datatype.h"
#include "opal/runtime/opal.h"
#include "opal/util/arch.h"

#include "tc_ompi.h"
#include "tc_ompi_compat.h"

#define TEST_LEN 1000

static unsigned char test_pattern(size_t i)
{
    return (unsigned char) (i * 7 + 3);
}

static void test_pack_pieces(void **state)
{
    unsigned char src[TEST_LEN], dst[TEST_LEN];
    opal_convertor_t *conv = opal_convertor_create(opal_local_arch, 0);
    size_t size;

    (void) state;
    for (size_t i = 0; i < TEST_LEN; i++) {
        src[i] = test_pattern(i);
    }
    memset(dst, 0, sizeof(dst));
    assert_non_null(conv);
    assert_int_equal(opal_convertor_prepare_for_send(conv, &opal_datatype_uint1, TEST_LEN, src),
                     OPAL_SUCCESS);
    /* two fragments: 600 bytes, then what is left (asked for more) */
    size = 600;
    assert_int_equal(tc_ompi_pack(conv, dst, &size, NULL), OPAL_SUCCESS);
    assert_int_equal(size, 600);
    size = TEST_LEN;
    assert_int_equal(tc_ompi_pack(conv, dst + 600, &size, NULL), OPAL_SUCCESS);
    assert_int_equal(size, TEST_LEN - 600);
    for (size_t i = 0; i < TEST_LEN; i++) {
        if (dst[i] != test_pattern(i)) {
            fail_msg("byte %zu: %u, expected %u", i, dst[i], test_pattern(i));
        }
    }
    OBJ_RELEASE(conv);
}

static void test_pack_inplace(void **state)
{
    unsigned char src[TEST_LEN];
    opal_convertor_t *conv = opal_convertor_create(opal_local_arch, 0);
    void *data = NULL;
    size_t size = TEST_LEN;

    (void) state;
    memset(src, 0x5a, sizeof(src));
    assert_non_null(conv);
    assert_int_equal(opal_convertor_prepare_for_send(conv, &opal_datatype_uint1, TEST_LEN, src),
                     OPAL_SUCCESS);
    assert_false(opal_convertor_need_buffers(conv));
    /* no destination: the convertor hands out the user's buffer */
    assert_int_equal(tc_ompi_pack(conv, NULL, &size, &data), OPAL_SUCCESS);
    assert_int_equal(size, TEST_LEN);
    assert_ptr_equal(data, src);
    OBJ_RELEASE(conv);
}

/* a pool of one descriptor with two segments, and what was put back */
static mca_btl_base_descriptor_t test_des;
static mca_btl_base_segment_t test_segs[2];
static unsigned char test_buf[64];
static int test_des_out, test_des_puts;

static mca_btl_base_descriptor_t *test_frag_get(struct mca_btl_base_endpoint_t *ep)
{
    (void) ep;
    if (test_des_out) {
        return NULL;
    }
    test_des_out = 1;
    memset(&test_des, 0, sizeof(test_des));
    memset(test_segs, 0, sizeof(test_segs));
    test_des.des_segments = test_segs;
    test_des.des_segment_count = 1;
    test_segs[0].seg_addr.pval = test_buf;
    return &test_des;
}

static void test_frag_put(mca_btl_base_descriptor_t *des)
{
    assert_ptr_equal(des, &test_des);
    test_des_out = 0;
    ++test_des_puts;
}

static const tc_ompi_frag_ops_t test_frag_ops = {.get = test_frag_get, .put = test_frag_put};

static void test_prepare_inplace(void **state)
{
    unsigned char src[TEST_LEN];
    opal_convertor_t *conv = opal_convertor_create(opal_local_arch, 0);
    mca_btl_base_descriptor_t *des;
    size_t size = TEST_LEN;

    (void) state;
    for (size_t i = 0; i < TEST_LEN; i++) {
        src[i] = test_pattern(i);
    }
    test_des_out = 0;
    test_des_puts = 0;
    assert_non_null(conv);
    assert_int_equal(opal_convertor_prepare_for_send(conv, &opal_datatype_uint1, TEST_LEN, src),
                     OPAL_SUCCESS);
    /* capacity 300, 44 bytes of header: 256 bytes of the user's data */
    des = tc_ompi_frag_prepare_inplace(&test_frag_ops, 300, NULL, conv, 3, 44, &size, 0x11);
    assert_ptr_equal(des, &test_des);
    assert_int_equal(size, 256);
    assert_int_equal(des->des_segment_count, 2);
    assert_int_equal(des->des_segments[0].seg_len, 44);
    assert_ptr_equal(des->des_segments[0].seg_addr.pval, test_buf);
    assert_ptr_equal(des->des_segments[1].seg_addr.pval, src);
    assert_int_equal(des->des_segments[1].seg_len, 256);
    assert_int_equal(des->des_flags, 0x11);
    assert_int_equal(des->order, 3);
    /* the pool is empty: nothing, and the convertor did not move */
    size = TEST_LEN - 256;
    assert_null(tc_ompi_frag_prepare_inplace(&test_frag_ops, 300, NULL, conv, 3, 44, &size, 0));
    test_frag_put(des);
    /* the rest fits: it starts where the first piece ended */
    des = tc_ompi_frag_prepare_inplace(&test_frag_ops, 4096, NULL, conv, 0, 44, &size, 0);
    assert_non_null(des);
    assert_int_equal(size, TEST_LEN - 256);
    assert_ptr_equal(des->des_segments[1].seg_addr.pval, src + 256);
    assert_int_equal(des->des_segments[1].seg_len, TEST_LEN - 256);
    test_frag_put(des);
    assert_int_equal(test_des_puts, 2);
    OBJ_RELEASE(conv);
}

static void test_frag_list(void **state)
{
    mca_btl_base_module_t btl;
    opal_free_list_t eager, max;

    (void) state;
    memset(&btl, 0, sizeof(btl));
    btl.btl_eager_limit = 100;
    btl.btl_max_send_size = 1000;
    assert_ptr_equal(tc_ompi_frag_list(&btl, 0, &eager, &max), &eager);
    assert_ptr_equal(tc_ompi_frag_list(&btl, 100, &eager, &max), &eager);
    assert_ptr_equal(tc_ompi_frag_list(&btl, 101, &eager, &max), &max);
    assert_ptr_equal(tc_ompi_frag_list(&btl, 1000, &eager, &max), &max);
    assert_null(tc_ompi_frag_list(&btl, 1001, &eager, &max));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pack_pieces),
        cmocka_unit_test(test_pack_inplace),
        cmocka_unit_test(test_prepare_inplace),
        cmocka_unit_test(test_frag_list),
    };
    return tc_unit_run_opal_group("test_ompi_pack", NULL, tests, sizeof(tests) / sizeof(tests[0]));
}
