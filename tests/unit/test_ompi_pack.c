/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_ompi_pack.c: the prepare_src helpers of common/ompi against Open
 * MPI's real convertor: tc_ompi_pack copies a contiguous buffer in pieces
 * and hands out the user's pointer in place; tc_ompi_frag_list picks the
 * eager or the max free list by size. OPAL's utility layer is initialised
 * (datatypes, architecture), nothing else.
 */
#include "opal_config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

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

static int test_setup(void **state)
{
    int argc = 1;
    char *args[] = {"test_ompi_pack", NULL}, **argv = args;

    (void) state;
    return OPAL_SUCCESS == tc_ompi_init_util(&argc, &argv) ? 0 : -1;
}

static int test_teardown(void **state)
{
    (void) state;
    opal_finalize_util();
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pack_pieces),
        cmocka_unit_test(test_pack_inplace),
        cmocka_unit_test(test_frag_list),
    };
    return cmocka_run_group_tests(tests, test_setup, test_teardown);
}
