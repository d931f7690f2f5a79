/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * tc_ompi_rcache_hook.c: connects registration caches to Open MPI's memory
 * release hooks, so that memory given back to the system (free of a large
 * block, munmap, heap trimming) invalidates the registrations over it.
 *
 * OPAL accepts one registration per callback function, so one callback
 * here serves every registered cache.
 */
#include "opal_config.h"

#include <pthread.h>
#include <stdbool.h>

#include "opal/constants.h"
#include "opal/memoryhooks/memory.h"

#include "tc_ompi.h"

/* A BTL or two per process each with a cache or two: a small table. */
#define TC_RCACHE_HOOK_MAX 16

/* Lock order. OPAL calls the hook with its own callback lock held, and the
 * hook takes table_lock; so table_lock is never held while calling into
 * OPAL. install_lock serialises register/unregister around the OPAL calls
 * and is never taken inside the hook. */
static pthread_mutex_t tc_ompi_rcache_hook_install_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t tc_ompi_rcache_hook_table_lock = PTHREAD_MUTEX_INITIALIZER;
static tc_rcache_t *tc_ompi_rcache_hook_caches[TC_RCACHE_HOOK_MAX];
static int tc_ompi_rcache_hook_count;
static bool tc_ompi_rcache_hook_installed;

static void tc_ompi_rcache_hook_release(void *buf, size_t length, void *cbdata, bool from_alloc)
{
    (void) cbdata;
    (void) from_alloc;
    /* Runs inside free/munmap: tc_rcache_invalidate neither allocates nor
     * calls the provider, and no lock taken here is held around malloc. */
    pthread_mutex_lock(&tc_ompi_rcache_hook_table_lock);
    for (int i = 0; i < TC_RCACHE_HOOK_MAX; i++) {
        if (NULL != tc_ompi_rcache_hook_caches[i]) {
            tc_rcache_invalidate(tc_ompi_rcache_hook_caches[i], buf, length);
        }
    }
    pthread_mutex_unlock(&tc_ompi_rcache_hook_table_lock);
}

int tc_ompi_rcache_hook_register(tc_rcache_t *cache)
{
    int slot = -1, rc = 0;

    if (0 ==
        (opal_mem_hooks_support_level() &
         (OPAL_MEMORY_FREE_SUPPORT | OPAL_MEMORY_MUNMAP_SUPPORT))) {
        return -ENOTSUP;
    }
    pthread_mutex_lock(&tc_ompi_rcache_hook_install_lock);
    pthread_mutex_lock(&tc_ompi_rcache_hook_table_lock);
    for (int i = 0; i < TC_RCACHE_HOOK_MAX; i++) {
        if (cache == tc_ompi_rcache_hook_caches[i]) {
            rc = 1; /* already registered */
            break;
        }
        if (slot < 0 && NULL == tc_ompi_rcache_hook_caches[i]) {
            slot = i;
        }
    }
    if (0 == rc && slot < 0) {
        rc = -ENOSPC;
    }
    pthread_mutex_unlock(&tc_ompi_rcache_hook_table_lock);

    if (0 == rc && !tc_ompi_rcache_hook_installed) {
        int orc = opal_mem_hooks_register_release(tc_ompi_rcache_hook_release, NULL);
        if (OPAL_SUCCESS != orc && OPAL_EXISTS != orc) {
            rc = -ENOTSUP;
        } else {
            tc_ompi_rcache_hook_installed = true;
        }
    }
    if (0 == rc) {
        pthread_mutex_lock(&tc_ompi_rcache_hook_table_lock);
        tc_ompi_rcache_hook_caches[slot] = cache;
        tc_ompi_rcache_hook_count++;
        pthread_mutex_unlock(&tc_ompi_rcache_hook_table_lock);
    }
    pthread_mutex_unlock(&tc_ompi_rcache_hook_install_lock);
    return rc > 0 ? 0 : rc;
}

void tc_ompi_rcache_hook_unregister(tc_rcache_t *cache)
{
    bool last;

    pthread_mutex_lock(&tc_ompi_rcache_hook_install_lock);
    /* After this block no running hook can still use the cache. */
    pthread_mutex_lock(&tc_ompi_rcache_hook_table_lock);
    for (int i = 0; i < TC_RCACHE_HOOK_MAX; i++) {
        if (cache == tc_ompi_rcache_hook_caches[i]) {
            tc_ompi_rcache_hook_caches[i] = NULL;
            tc_ompi_rcache_hook_count--;
        }
    }
    last = 0 == tc_ompi_rcache_hook_count;
    pthread_mutex_unlock(&tc_ompi_rcache_hook_table_lock);
    if (last && tc_ompi_rcache_hook_installed) {
        opal_mem_hooks_unregister_release(tc_ompi_rcache_hook_release);
        tc_ompi_rcache_hook_installed = false;
    }
    pthread_mutex_unlock(&tc_ompi_rcache_hook_install_lock);
}
