/*
 * tc_rcache_hook.c: connects registration caches to Open MPI's memory
 * release hooks, so that memory given back to the system (free of a large
 * block, munmap, heap trimming) invalidates the registrations over it.
 *
 * OPAL accepts one registration per callback function, so one callback
 * here serves every registered cache. The only file of this library that
 * needs Open MPI headers.
 */
#include "opal_config.h"

#include <pthread.h>
#include <stdbool.h>

#include "opal/constants.h"
#include "opal/memoryhooks/memory.h"

#include "tc_rcache.h"

/* A BTL or two per process each with a cache or two: a small table. */
#define TC_RCACHE_HOOK_MAX 16

static pthread_mutex_t tc_rcache_hook_lock = PTHREAD_MUTEX_INITIALIZER;
static tc_rcache_t *tc_rcache_hook_caches[TC_RCACHE_HOOK_MAX];
static int tc_rcache_hook_count;
static bool tc_rcache_hook_installed;

static void tc_rcache_hook_release(void *buf, size_t length, void *cbdata, bool from_alloc)
{
    (void) cbdata;
    (void) from_alloc;
    /* Runs inside free/munmap: tc_rcache_invalidate neither allocates nor
     * calls the provider, and this lock is never held around malloc. */
    pthread_mutex_lock(&tc_rcache_hook_lock);
    for (int i = 0; i < TC_RCACHE_HOOK_MAX; i++) {
        if (NULL != tc_rcache_hook_caches[i]) {
            tc_rcache_invalidate(tc_rcache_hook_caches[i], buf, length);
        }
    }
    pthread_mutex_unlock(&tc_rcache_hook_lock);
}

int tc_rcache_hook_register(tc_rcache_t *cache)
{
    int support = opal_mem_hooks_support_level();
    int slot = -1;

    if (0 == (support & (OPAL_MEMORY_FREE_SUPPORT | OPAL_MEMORY_MUNMAP_SUPPORT))) {
        return -ENOTSUP;
    }
    pthread_mutex_lock(&tc_rcache_hook_lock);
    for (int i = 0; i < TC_RCACHE_HOOK_MAX; i++) {
        if (cache == tc_rcache_hook_caches[i]) {
            pthread_mutex_unlock(&tc_rcache_hook_lock);
            return 0;
        }
        if (slot < 0 && NULL == tc_rcache_hook_caches[i]) {
            slot = i;
        }
    }
    if (slot < 0) {
        pthread_mutex_unlock(&tc_rcache_hook_lock);
        return -ENOSPC;
    }
    if (!tc_rcache_hook_installed) {
        int rc = opal_mem_hooks_register_release(tc_rcache_hook_release, NULL);
        if (OPAL_SUCCESS != rc && OPAL_EXISTS != rc) {
            pthread_mutex_unlock(&tc_rcache_hook_lock);
            return -ENOTSUP;
        }
        tc_rcache_hook_installed = true;
    }
    tc_rcache_hook_caches[slot] = cache;
    tc_rcache_hook_count++;
    pthread_mutex_unlock(&tc_rcache_hook_lock);
    return 0;
}

void tc_rcache_hook_unregister(tc_rcache_t *cache)
{
    bool remove_hook = false;

    pthread_mutex_lock(&tc_rcache_hook_lock);
    for (int i = 0; i < TC_RCACHE_HOOK_MAX; i++) {
        if (cache == tc_rcache_hook_caches[i]) {
            tc_rcache_hook_caches[i] = NULL;
            tc_rcache_hook_count--;
        }
    }
    if (0 == tc_rcache_hook_count && tc_rcache_hook_installed) {
        tc_rcache_hook_installed = false;
        remove_hook = true;
    }
    pthread_mutex_unlock(&tc_rcache_hook_lock);
    /* OPAL takes its own lock; do not call it with ours held. */
    if (remove_hook) {
        opal_mem_hooks_unregister_release(tc_rcache_hook_release);
    }
}
