/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_ft.h: what the unit tests of a lost peer share (test_ompi_lost,
 * test_sci_lost, test_bip_lost): OPAL's utility layer, a help directory,
 * the MCA variable mpi_ft_enable registered as the MPI layer does
 * (mpirun --with-ft ulfm sets it), set to the value a case needs, the
 * PML's error callback recorded, and a component's two cases (the same
 * run under fault tolerance and without). Include after <cmocka.h>.
 */
#ifndef TEST_FT_H
#define TEST_FT_H

#include <stdbool.h>

#include "opal/mca/base/mca_base_var.h"

#include "tc_ompi.h"
#include "tc_unit.h"

static bool test_ft_value;
static int test_ft_index = -1;

/* mpi_ft_enable, registered once, now value */
static inline void test_ft_set(bool value)
{
    test_ft_value = value;
    if (test_ft_index < 0) {
        test_ft_index = mca_base_var_register(
            "ompi", "mpi", "ft", "enable", "fault tolerance (test)", MCA_BASE_VAR_TYPE_BOOL, NULL,
            0, 0, OPAL_INFO_LVL_9, MCA_BASE_VAR_SCOPE_READONLY, &test_ft_value);
        assert_true(test_ft_index >= 0);
    }
}

/* the variable gone again (the case where the MPI layer is absent) */
static inline void test_ft_unset(void)
{
    if (test_ft_index >= 0) {
        (void) mca_base_var_deregister(test_ft_index);
        test_ft_index = -1;
    }
}

/* the PML's error callback, recorded */
static int test_ft_reports;
static int32_t test_ft_report_flags;
static struct opal_proc_t *test_ft_report_proc;

static inline void test_ft_error_cb(struct mca_btl_base_module_t *btl, int32_t flags,
                                    struct opal_proc_t *proc, char *info)
{
    (void) btl;
    (void) info;
    ++test_ft_reports;
    test_ft_report_flags = flags;
    test_ft_report_proc = proc;
}

static inline void test_ft_reports_reset(void)
{
    test_ft_reports = 0;
    test_ft_report_flags = -1;
    test_ft_report_proc = NULL;
}

/* n reports so far, the last for proc, fatal unless under fault tolerance */
static inline void test_ft_assert_reported(int n, bool ft, struct opal_proc_t *proc)
{
    assert_int_equal(n, test_ft_reports);
    assert_int_equal(ft ? MCA_BTL_ERROR_FLAGS_NONFATAL : MCA_BTL_ERROR_FLAGS_FATAL,
                     test_ft_report_flags);
    assert_ptr_equal(proc, test_ft_report_proc);
}

/* the endpoint of a lost peer refuses a send and a sendi at once (through
 * the module's table, as the PML calls them); later: a descriptor to send */
static inline void test_ft_assert_refused(mca_btl_base_module_t *btl,
                                          struct mca_btl_base_endpoint_t *ep,
                                          mca_btl_base_descriptor_t *later)
{
    mca_btl_base_descriptor_t *des = later; /* ob1 passes it uninitialised */

    assert_int_equal(OPAL_ERR_UNREACH, btl->btl_send(btl, ep, later, 1));
    assert_int_equal(OPAL_ERR_UNREACH, btl->btl_sendi(btl, ep, NULL, "x", 1, 0, 0, 0, 1, &des));
    assert_null(des);
}

/* a group of cases inside OPAL's utility layer, the variable removed
 * again at the end */
static inline int test_ft_group_teardown(void **state)
{
    test_ft_unset();
    return tc_unit_opal_teardown(state);
}

static inline int test_ft_run_group(const char *name, const char *help_dir,
                                    const struct CMUnitTest *tests, size_t n)
{
    return tc_unit_run_opal_group_with(name, help_dir, tests, n, tc_unit_opal_setup,
                                       test_ft_group_teardown);
}

/* a component's lost peer: its run under fault tolerance, then without */
static void (*test_ft_lost_run)(bool ft);

static inline void test_ft_lost_under_ft(void **state)
{
    (void) state;
    test_ft_lost_run(true);
}

static inline void test_ft_lost_without_ft(void **state)
{
    (void) state;
    test_ft_lost_run(false);
}

static inline int test_ft_lost_main(const char *name, const char *help_dir, void (*run)(bool ft))
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ft_lost_under_ft),
        cmocka_unit_test(test_ft_lost_without_ft),
    };

    test_ft_lost_run = run;
    return test_ft_run_group(name, help_dir, tests, sizeof(tests) / sizeof(tests[0]));
}

#endif /* TEST_FT_H */
