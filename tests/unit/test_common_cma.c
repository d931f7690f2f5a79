/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_common_cma.c: unit tests of tc_cma_probe: a probe of this process
 * succeeds where the kernel allows CMA (else it reports why, as a negative
 * errno the device layers map), and a probe of a process that does not
 * exist fails with -ESRCH.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include <cmocka.h>

#include "tc_cma.h"

static void test_cma_probe_self(void **state)
{
    int rc = tc_cma_probe(getpid());
    (void) state;

    if (-ENOSYS == rc || -EPERM == rc) {
        skip(); /* no CMA in this kernel or container */
    }
    assert_int_equal(rc, 0);
    /* a second probe (PR_SET_PTRACER already declared) still succeeds */
    assert_int_equal(tc_cma_probe(getpid()), 0);
}

static void test_cma_probe_no_such_process(void **state)
{
    int rc;
    (void) state;

    if (-ENOSYS == tc_cma_probe(getpid())) {
        skip();
    }
    /* pid_max is at most 2^22 on Linux: this pid never exists */
    rc = tc_cma_probe((pid_t) 0x7ffffff0);
    assert_int_equal(rc, -ESRCH);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cma_probe_self),
        cmocka_unit_test(test_cma_probe_no_such_process),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
