/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * tc_unit.h: what the unit tests of several components share that is no
 * component's: a progress function called from two threads at once (the
 * progress guards' tests, built with ThreadSanitizer). Include after
 * <cmocka.h>.
 */
#ifndef TC_UNIT_H
#define TC_UNIT_H

#include <pthread.h>

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
