/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * tc_unit.h: what the unit tests of several components share that is no
 * component's: a group of cases run inside OPAL's utility layer, and a
 * progress function called from two threads at once (the progress
 * guards' tests, built with ThreadSanitizer). Include after <cmocka.h>.
 */
#ifndef TC_UNIT_H
#define TC_UNIT_H

#include <pthread.h>
#include <stddef.h>

#include "opal/util/show_help.h"

#include "tc_ompi.h"

/* ---- a group of cases inside OPAL's utility layer ------------------------ */

static const char *tc_unit_opal_name;
static const char *tc_unit_opal_help_dir;

/* OPAL's utility layer as for a program of that name, and the help
 * files of the help directory, if any */
static inline int tc_unit_opal_setup(void **state)
{
    int argc = 1;
    char *args[] = {(char *) tc_unit_opal_name, NULL}, **argv = args;

    (void) state;
    if (OPAL_SUCCESS != tc_ompi_init_util(&argc, &argv)) {
        return -1;
    }
    if (NULL != tc_unit_opal_help_dir) {
        (void) opal_show_help_add_dir(tc_unit_opal_help_dir);
    }
    return 0;
}

static inline int tc_unit_opal_teardown(void **state)
{
    (void) state;
    opal_finalize_util();
    return 0;
}

/* the cases tests[0..n-1] between the setup and the teardown given (the
 * two above, or ones that call them) */
static inline int tc_unit_run_opal_group_with(const char *name, const char *help_dir,
                                              const struct CMUnitTest *tests, size_t n,
                                              CMFixtureFunction setup, CMFixtureFunction teardown)
{
    tc_unit_opal_name = name;
    tc_unit_opal_help_dir = help_dir;
    return _cmocka_run_group_tests(name, tests, n, setup, teardown);
}

static inline int tc_unit_run_opal_group(const char *name, const char *help_dir,
                                         const struct CMUnitTest *tests, size_t n)
{
    return tc_unit_run_opal_group_with(name, help_dir, tests, n, tc_unit_opal_setup,
                                       tc_unit_opal_teardown);
}

/* ---- progress from two threads -------------------------------------------- */

typedef struct {
    int (*progress)(void);
    int calls;
} tc_unit_progress_t;

static inline void *tc_unit_progress_thread(void *arg)
{
    const tc_unit_progress_t *p = arg;

    for (int i = 0; i < p->calls; ++i) {
        (void) p->progress();
    }
    return NULL;
}

/* two threads, each calling progress calls times; back when both are done */
static inline void tc_unit_progress_threads(int (*progress)(void), int calls)
{
    tc_unit_progress_t p = {progress, calls};
    pthread_t t[2];

    for (int i = 0; i < 2; ++i) {
        assert_int_equal(0, pthread_create(&t[i], NULL, tc_unit_progress_thread, &p));
    }
    for (int i = 0; i < 2; ++i) {
        assert_int_equal(0, pthread_join(t[i], NULL));
    }
}

#endif /* TC_UNIT_H */
