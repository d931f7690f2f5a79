/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_ompi_glue.c: the parts of common/ompi that need no running Open
 * MPI: the parser of the btl selection (--mca btl LIST), the errno ->
 * OPAL_ERR_* mapping and the payload clamp of prepare_src.
 */
#include "opal_config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "opal/constants.h"

#include "tc_ompi.h"

static void check_sel(const char *list, const char *name, bool named, bool only)
{
    tc_ompi_btl_selection_t sel = tc_ompi_btl_list_parse(list, name);

    if (sel.named != named || sel.only != only) {
        fail_msg("list \"%s\", name %s: named %d only %d, expected %d %d", list ? list : "(null)",
                 name, sel.named, sel.only, named, only);
    }
}

static void test_selection(void **state)
{
    (void) state;
    check_sel(NULL, "sci", false, false);
    check_sel("", "sci", false, false);
    check_sel("sci", "sci", true, true);
    check_sel("self,sci", "sci", true, true);
    check_sel("sci,self", "sci", true, true);
    check_sel("self,sci,tcp", "sci", true, false);
    check_sel("vader,self", "sci", false, false);
    check_sel("self", "sci", false, false);
    check_sel("^sci", "sci", false, false);
    check_sel("^tcp,sci", "sci", false, false);
    /* whole tokens only */
    check_sel("scix,self", "sci", false, false);
    check_sel("sc,self", "sci", false, false);
    check_sel("selfie,sci", "sci", true, false);
    check_sel("swf", "swf", true, true);
    check_sel("tcp,swf", "swf", true, false);
    /* empty tokens are ignored */
    check_sel(",sci,,self,", "sci", true, true);
    check_sel("self,sctp", "sctp", true, true);
    check_sel("self,sctp", "sci", false, false);
}

static void test_errno(void **state)
{
    (void) state;
    assert_int_equal(tc_ompi_errno_to_opal(0), OPAL_SUCCESS);
    assert_int_equal(tc_ompi_errno_to_opal(-ENOMEM), OPAL_ERR_OUT_OF_RESOURCE);
    assert_int_equal(tc_ompi_errno_to_opal(ENOMEM), OPAL_ERR_OUT_OF_RESOURCE);
    assert_int_equal(tc_ompi_errno_to_opal(-EAGAIN), OPAL_ERR_TEMP_OUT_OF_RESOURCE);
    assert_int_equal(tc_ompi_errno_to_opal(-EBUSY), OPAL_ERR_RESOURCE_BUSY);
    assert_int_equal(tc_ompi_errno_to_opal(-EINVAL), OPAL_ERR_BAD_PARAM);
    assert_int_equal(tc_ompi_errno_to_opal(-EMSGSIZE), OPAL_ERR_VALUE_OUT_OF_BOUNDS);
    assert_int_equal(tc_ompi_errno_to_opal(-EACCES), OPAL_ERR_PERM);
    assert_int_equal(tc_ompi_errno_to_opal(-ENOENT), OPAL_ERR_NOT_FOUND);
    assert_int_equal(tc_ompi_errno_to_opal(-EEXIST), OPAL_EXISTS);
    assert_int_equal(tc_ompi_errno_to_opal(-ENOTSUP), OPAL_ERR_NOT_SUPPORTED);
    assert_int_equal(tc_ompi_errno_to_opal(-ETIMEDOUT), OPAL_ERR_TIMEOUT);
    assert_int_equal(tc_ompi_errno_to_opal(-ECONNRESET), OPAL_ERR_UNREACH);
    assert_int_equal(tc_ompi_errno_to_opal(-EPIPE), OPAL_ERR_UNREACH);
    assert_int_equal(tc_ompi_errno_to_opal(-EPROTO), OPAL_ERR_UNPACK_FAILURE);
    assert_int_equal(tc_ompi_errno_to_opal(-EXDEV), OPAL_ERROR);
}

static void test_payload(void **state)
{
    (void) state;
    assert_int_equal(tc_ompi_payload(32, 100, 1024), 100);
    assert_int_equal(tc_ompi_payload(32, 992, 1024), 992);
    assert_int_equal(tc_ompi_payload(32, 993, 1024), 992);
    assert_int_equal(tc_ompi_payload(32, 1 << 20, 1024), 992);
    assert_int_equal(tc_ompi_payload(1024, 5, 1024), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_selection),
        cmocka_unit_test(test_errno),
        cmocka_unit_test(test_payload),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
