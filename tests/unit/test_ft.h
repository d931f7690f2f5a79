/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_ft.h: what the unit tests of a lost peer share (test_ompi_lost,
 * test_sci_lost, test_bip_lost): OPAL's utility layer, a help directory,
 * and the MCA variable mpi_ft_enable registered as the MPI layer does
 * (mpirun --with-ft ulfm sets it), set to the value a case needs. Include
 * after <cmocka.h>.
 */
#ifndef TEST_FT_H
#define TEST_FT_H

#include <stdbool.h>

#include "opal/mca/base/mca_base_var.h"
#include "opal/util/show_help.h"

#include "tc_ompi.h"

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

/* group setup: OPAL's utility layer, the help files of help_dir */
static inline int test_ft_setup(const char *name, const char *help_dir)
{
    int argc = 1;
    char *args[] = {(char *) name, NULL}, **argv = args;

    if (OPAL_SUCCESS != tc_ompi_init_util(&argc, &argv)) {
        return -1;
    }
    (void) opal_show_help_add_dir(help_dir);
    return 0;
}

static inline int test_ft_teardown(void)
{
    test_ft_unset();
    opal_finalize_util();
    return 0;
}

#endif /* TEST_FT_H */
