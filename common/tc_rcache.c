/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * tc_rcache.c: registration cache (see tc_rcache.h).
 *
 * Structures, all under cache->lock:
 *   tree     AVL tree of the current registrations keyed by base; their
 *            ranges never overlap, so the registration covering an address
 *            is the one with the greatest base <= address.
 *   lru      current registrations with refcount 0, oldest first.
 *   zombies  registrations out of the tree (invalidated or superseded)
 *            that are still referenced; deregistered on their last put.
 *   garbage  registrations waiting to be deregistered. Invalidation may
 *            run inside a memory hook (inside free or munmap), where
 *            calling the provider or free() is not safe, so it only moves
 *            registrations here; every later call into the cache collects
 *            them outside the lock.
 *   inflight the ranges get() is registering right now, outside the lock.
 *            An invalidation that overlaps one marks it, so that get()
 *            throws its registration away even when the range had no
 *            registration yet (nothing was detached, so the generation
 *            alone would not show it).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tc_rcache.h"
#include "tc_atomic.h"

#define TC_REG_IN_TREE 0x1u
#define TC_REG_IN_LRU 0x2u
#define TC_REG_STALE 0x4u
#define TC_REG_ZOMBIE 0x8u

/* A range get() registers outside the lock (on get's stack). */
typedef struct tc_rcache_inflight {
    uintptr_t lo, hi;
    int invalidated;
    struct tc_rcache_inflight *next;
} tc_rcache_inflight_t;

/* A doubly-linked list threaded through lru_prev/lru_next; a registration
 * is on at most one of lru, zombies, garbage. */
typedef struct tc_reg_list {
    tc_rcache_reg_t *head;
    tc_rcache_reg_t *tail;
} tc_reg_list_t;

struct tc_rcache {
    pthread_mutex_t lock;
    tc_rcache_provider_t prov;
    size_t max_unused_count;
    size_t max_unused_bytes;
    uintptr_t page_mask;
    tc_rcache_reg_t *root;
    tc_reg_list_t lru;
    tc_reg_list_t zombies;
    tc_reg_list_t garbage;
    bool garbage_waiting; /* garbage non-empty: read without the lock */
    uint64_t generation; /* bumped by every change of the tree */
    tc_rcache_inflight_t *inflight;
    tc_rcache_stats_t stats;
};

/* ---- lists ---- */

static void tc_reg_list_append(tc_reg_list_t *l, tc_rcache_reg_t *r)
{
    r->lru_next = NULL;
    r->lru_prev = l->tail;
    if (NULL != l->tail) {
        l->tail->lru_next = r;
    } else {
        l->head = r;
    }
    l->tail = r;
}

static void tc_reg_list_remove(tc_reg_list_t *l, tc_rcache_reg_t *r)
{
    if (NULL != r->lru_prev) {
        r->lru_prev->lru_next = r->lru_next;
    } else {
        l->head = r->lru_next;
    }
    if (NULL != r->lru_next) {
        r->lru_next->lru_prev = r->lru_prev;
    } else {
        l->tail = r->lru_prev;
    }
    r->lru_prev = NULL;
    r->lru_next = NULL;
}

/* ---- AVL tree keyed by base ---- */

static int tc_avl_height(const tc_rcache_reg_t *n)
{
    return NULL == n ? 0 : n->height;
}

static void tc_avl_update(tc_rcache_reg_t *n)
{
    int hl = tc_avl_height(n->left), hr = tc_avl_height(n->right);
    n->height = 1 + (hl > hr ? hl : hr);
}

static tc_rcache_reg_t *tc_avl_rotate_right(tc_rcache_reg_t *n)
{
    tc_rcache_reg_t *l = n->left;
    n->left = l->right;
    l->right = n;
    tc_avl_update(n);
    tc_avl_update(l);
    return l;
}

static tc_rcache_reg_t *tc_avl_rotate_left(tc_rcache_reg_t *n)
{
    tc_rcache_reg_t *r = n->right;
    n->right = r->left;
    r->left = n;
    tc_avl_update(n);
    tc_avl_update(r);
    return r;
}

static tc_rcache_reg_t *tc_avl_balance(tc_rcache_reg_t *n)
{
    int bf;

    tc_avl_update(n);
    bf = tc_avl_height(n->left) - tc_avl_height(n->right);
    if (bf > 1) {
        if (tc_avl_height(n->left->left) < tc_avl_height(n->left->right)) {
            n->left = tc_avl_rotate_left(n->left);
        }
        return tc_avl_rotate_right(n);
    }
    if (bf < -1) {
        if (tc_avl_height(n->right->right) < tc_avl_height(n->right->left)) {
            n->right = tc_avl_rotate_right(n->right);
        }
        return tc_avl_rotate_left(n);
    }
    return n;
}

static tc_rcache_reg_t *tc_avl_insert(tc_rcache_reg_t *root, tc_rcache_reg_t *n)
{
    if (NULL == root) {
        n->left = n->right = NULL;
        n->height = 1;
        return n;
    }
    if (n->base < root->base) {
        root->left = tc_avl_insert(root->left, n);
    } else {
        root->right = tc_avl_insert(root->right, n);
    }
    return tc_avl_balance(root);
}

static tc_rcache_reg_t *tc_avl_remove_min(tc_rcache_reg_t *root, tc_rcache_reg_t **min)
{
    if (NULL == root->left) {
        *min = root;
        return root->right;
    }
    root->left = tc_avl_remove_min(root->left, min);
    return tc_avl_balance(root);
}

/* Remove the node n (found by its unique base). */
static tc_rcache_reg_t *tc_avl_remove(tc_rcache_reg_t *root, tc_rcache_reg_t *n)
{
    if (NULL == root) {
        return NULL;
    }
    if (n->base < root->base) {
        root->left = tc_avl_remove(root->left, n);
    } else if (n->base > root->base) {
        root->right = tc_avl_remove(root->right, n);
    } else {
        tc_rcache_reg_t *l = root->left, *r = root->right, *min;
        root->left = root->right = NULL;
        if (NULL == r) {
            return l;
        }
        r = tc_avl_remove_min(r, &min);
        min->left = l;
        min->right = r;
        return tc_avl_balance(min);
    }
    return tc_avl_balance(root);
}

/* Registration with the greatest base <= addr, or NULL. */
static tc_rcache_reg_t *tc_avl_find_le(tc_rcache_reg_t *n, uintptr_t addr)
{
    tc_rcache_reg_t *best = NULL;
    while (NULL != n) {
        if (n->base <= addr) {
            best = n;
            n = n->right;
        } else {
            n = n->left;
        }
    }
    return best;
}

/* Registration with the smallest base > addr, or NULL. */
static tc_rcache_reg_t *tc_avl_find_gt(tc_rcache_reg_t *n, uintptr_t addr)
{
    tc_rcache_reg_t *best = NULL;
    while (NULL != n) {
        if (n->base > addr) {
            best = n;
            n = n->left;
        } else {
            n = n->right;
        }
    }
    return best;
}

/* First registration overlapping [lo, hi), or NULL. */
static tc_rcache_reg_t *tc_rcache_first_overlap(tc_rcache_t *cache, uintptr_t lo, uintptr_t hi)
{
    tc_rcache_reg_t *r = tc_avl_find_le(cache->root, lo);
    if (NULL != r && r->base + r->len > lo) {
        return r;
    }
    r = tc_avl_find_gt(cache->root, lo);
    return (NULL != r && r->base < hi) ? r : NULL;
}

/* Next registration after r overlapping [.., hi), or NULL. */
static tc_rcache_reg_t *tc_rcache_next_overlap(tc_rcache_t *cache, tc_rcache_reg_t *r, uintptr_t hi)
{
    r = tc_avl_find_gt(cache->root, r->base);
    return (NULL != r && r->base < hi) ? r : NULL;
}

/* ---- state changes (lock held) ---- */

static void tc_rcache_lru_remove(tc_rcache_t *cache, tc_rcache_reg_t *r)
{
    tc_reg_list_remove(&cache->lru, r);
    r->flags &= ~TC_REG_IN_LRU;
    cache->stats.unused--;
    cache->stats.unused_bytes -= r->len;
}

/* Lock held: r to the garbage list, where the next call into the cache
 * (tc_rcache_collect) finds it. */
static void tc_rcache_garbage_add(tc_rcache_t *cache, tc_rcache_reg_t *r)
{
    tc_reg_list_append(&cache->garbage, r);
    tc_atomic_store_relaxed(&cache->garbage_waiting, true);
}

/* Take r out of the tree for good: to the garbage if nobody holds it,
 * to the zombies otherwise. */
static void tc_rcache_detach(tc_rcache_t *cache, tc_rcache_reg_t *r)
{
    cache->root = tc_avl_remove(cache->root, r);
    r->flags &= ~TC_REG_IN_TREE;
    r->flags |= TC_REG_STALE;
    cache->stats.cached--;
    cache->generation++;
    if (r->flags & TC_REG_IN_LRU) {
        tc_rcache_lru_remove(cache, r);
    }
    if (0 == r->refcount) {
        tc_rcache_garbage_add(cache, r);
    } else {
        r->flags |= TC_REG_ZOMBIE;
        tc_reg_list_append(&cache->zombies, r);
        cache->stats.zombies++;
    }
}

/* Evict least recently used registrations while a bound is exceeded. */
static void tc_rcache_enforce_bounds(tc_rcache_t *cache)
{
    while (
        NULL != cache->lru.head &&
        ((0 != cache->max_unused_count && cache->stats.unused > cache->max_unused_count) ||
         (0 != cache->max_unused_bytes && cache->stats.unused_bytes > cache->max_unused_bytes))) {
        cache->stats.evictions++;
        tc_rcache_detach(cache, cache->lru.head);
    }
}

static void tc_rcache_inflight_remove(tc_rcache_t *cache, tc_rcache_inflight_t *pend)
{
    tc_rcache_inflight_t **pp = &cache->inflight;

    while (*pp != pend) {
        pp = &(*pp)->next;
    }
    *pp = pend->next;
}

/* ---- outside the lock ---- */

/* Deregister and free everything on the garbage list.  Every get and put
 * comes here, and the list is nearly always empty: the flag, read without
 * the lock, spares them a lock round trip.  A flag set by another thread
 * and not yet seen here leaves its garbage to the next call. */
static void tc_rcache_collect(tc_rcache_t *cache)
{
    tc_rcache_reg_t *list;

    if (!tc_atomic_load_relaxed(&cache->garbage_waiting)) {
        return;
    }
    pthread_mutex_lock(&cache->lock);
    list = cache->garbage.head;
    cache->garbage.head = cache->garbage.tail = NULL;
    tc_atomic_store_relaxed(&cache->garbage_waiting, false);
    pthread_mutex_unlock(&cache->lock);

    while (NULL != list) {
        tc_rcache_reg_t *next = list->lru_next;
        cache->prov.dereg(cache->prov.ctx, (void *) list->base, list->len, list->handle);
        pthread_mutex_lock(&cache->lock);
        cache->stats.deregistrations++;
        pthread_mutex_unlock(&cache->lock);
        free(list);
        list = next;
    }
}

tc_rcache_t *tc_rcache_create(const tc_rcache_params_t *params)
{
    tc_rcache_t *cache;
    long page;

    if (NULL == params || NULL == params->provider.reg || NULL == params->provider.dereg) {
        return NULL;
    }
    cache = calloc(1, sizeof(*cache));
    if (NULL == cache) {
        return NULL;
    }
    if (0 != pthread_mutex_init(&cache->lock, NULL)) {
        free(cache);
        return NULL;
    }
    page = sysconf(_SC_PAGESIZE);
    if (page <= 0) {
        page = 4096;
    }
    cache->page_mask = (uintptr_t) page - 1;
    cache->prov = params->provider;
    cache->max_unused_count = params->max_unused_count;
    cache->max_unused_bytes = params->max_unused_bytes;
    return cache;
}

/* Page-aligned [lo, hi) around [addr, addr+len); false if it wraps. */
static bool tc_rcache_range(const tc_rcache_t *cache, const void *addr, size_t len, uintptr_t *lo,
                            uintptr_t *hi)
{
    uintptr_t a = (uintptr_t) addr;

    if (0 == len || a + len < a || a + len + cache->page_mask < a + len) {
        return false;
    }
    *lo = a & ~cache->page_mask;
    *hi = (a + len + cache->page_mask) & ~cache->page_mask;
    return true;
}

/* Lock held: a covering registration gets one more reference. */
static tc_rcache_reg_t *tc_rcache_lookup_locked(tc_rcache_t *cache, uintptr_t lo, uintptr_t hi)
{
    tc_rcache_reg_t *r = tc_avl_find_le(cache->root, lo);

    if (NULL == r || r->base + r->len < hi) {
        return NULL;
    }
    if (r->flags & TC_REG_IN_LRU) {
        tc_rcache_lru_remove(cache, r);
    }
    r->refcount++;
    return r;
}

int tc_rcache_find(tc_rcache_t *cache, const void *addr, size_t len, tc_rcache_reg_t **reg)
{
    uintptr_t lo, hi;
    tc_rcache_reg_t *r;

    if (!tc_rcache_range(cache, addr, len, &lo, &hi)) {
        return -EINVAL;
    }
    tc_rcache_collect(cache);
    pthread_mutex_lock(&cache->lock);
    r = tc_rcache_lookup_locked(cache, lo, hi);
    if (NULL != r) {
        cache->stats.hits++;
    }
    pthread_mutex_unlock(&cache->lock);
    if (NULL == r) {
        return -ENOENT;
    }
    *reg = r;
    return 0;
}

int tc_rcache_get(tc_rcache_t *cache, const void *addr, size_t len, tc_rcache_reg_t **reg)
{
    uintptr_t lo, hi;

    if (!tc_rcache_range(cache, addr, len, &lo, &hi)) {
        return -EINVAL;
    }
    tc_rcache_collect(cache);

    for (;;) {
        tc_rcache_reg_t *r, *nr;
        tc_rcache_inflight_t pend;
        uintptr_t ulo = lo, uhi = hi;
        uint64_t gen;
        int rc;

        pthread_mutex_lock(&cache->lock);
        r = tc_rcache_lookup_locked(cache, lo, hi);
        if (NULL != r) {
            cache->stats.hits++;
            pthread_mutex_unlock(&cache->lock);
            *reg = r;
            return 0;
        }
        /* Growth: one registration for the union with every overlapping
         * one (they are disjoint, so the union overlaps nothing else). */
        for (r = tc_rcache_first_overlap(cache, lo, hi); NULL != r;
             r = tc_rcache_next_overlap(cache, r, hi)) {
            if (r->base < ulo) {
                ulo = r->base;
            }
            if (r->base + r->len > uhi) {
                uhi = r->base + r->len;
            }
        }
        gen = cache->generation;
        pend.lo = ulo;
        pend.hi = uhi;
        pend.invalidated = 0;
        pend.next = cache->inflight;
        cache->inflight = &pend;
        pthread_mutex_unlock(&cache->lock);

        /* Allocate and register without the lock (see the file header). */
        nr = calloc(1, sizeof(*nr));
        rc = NULL == nr ? -ENOMEM : 0;
        if (0 == rc) {
            nr->base = ulo;
            nr->len = uhi - ulo;
            rc = cache->prov.reg(cache->prov.ctx, (void *) ulo, nr->len, &nr->handle);
            if (0 != rc) {
                /* The device may be out of registrable memory: give back
                 * what nobody uses and try once more. */
                tc_rcache_flush(cache);
                rc = cache->prov.reg(cache->prov.ctx, (void *) ulo, nr->len, &nr->handle);
            }
        }

        pthread_mutex_lock(&cache->lock);
        tc_rcache_inflight_remove(cache, &pend);
        if (0 != rc) {
            pthread_mutex_unlock(&cache->lock);
            free(nr);
            return rc;
        }
        cache->stats.registrations++;
        if (gen != cache->generation || pend.invalidated) {
            /* The tree changed meanwhile (another thread), or the range
             * was unmapped while we registered it (also when it had no
             * registration before): our registration may be stale or
             * overlap a new one. Throw it away and start over. */
            pthread_mutex_unlock(&cache->lock);
            cache->prov.dereg(cache->prov.ctx, (void *) nr->base, nr->len, nr->handle);
            pthread_mutex_lock(&cache->lock);
            cache->stats.deregistrations++;
            pthread_mutex_unlock(&cache->lock);
            free(nr);
            continue;
        }
        /* The overlapped registrations are superseded by the new one. */
        while (NULL != (r = tc_rcache_first_overlap(cache, ulo, uhi))) {
            tc_rcache_detach(cache, r);
        }
        nr->refcount = 1;
        nr->flags = TC_REG_IN_TREE;
        cache->root = tc_avl_insert(cache->root, nr);
        cache->stats.cached++;
        cache->stats.misses++;
        cache->generation++;
        pthread_mutex_unlock(&cache->lock);

        tc_rcache_collect(cache);
        *reg = nr;
        return 0;
    }
}

void tc_rcache_retain(tc_rcache_t *cache, tc_rcache_reg_t *reg)
{
    pthread_mutex_lock(&cache->lock);
    if (reg->flags & TC_REG_IN_LRU) {
        tc_rcache_lru_remove(cache, reg);
    }
    reg->refcount++;
    pthread_mutex_unlock(&cache->lock);
}

void tc_rcache_put(tc_rcache_t *cache, tc_rcache_reg_t *reg)
{
    pthread_mutex_lock(&cache->lock);
    if (0 == reg->refcount) {
        /* Unbalanced put: ignore rather than corrupt the lists. */
        pthread_mutex_unlock(&cache->lock);
        return;
    }
    if (0 == --reg->refcount) {
        if (reg->flags & TC_REG_ZOMBIE) {
            tc_reg_list_remove(&cache->zombies, reg);
            reg->flags &= ~TC_REG_ZOMBIE;
            cache->stats.zombies--;
            tc_rcache_garbage_add(cache, reg);
        } else {
            tc_reg_list_append(&cache->lru, reg);
            reg->flags |= TC_REG_IN_LRU;
            cache->stats.unused++;
            cache->stats.unused_bytes += reg->len;
            tc_rcache_enforce_bounds(cache);
        }
    }
    pthread_mutex_unlock(&cache->lock);
    tc_rcache_collect(cache);
}

size_t tc_rcache_invalidate(tc_rcache_t *cache, const void *addr, size_t len)
{
    uintptr_t lo = (uintptr_t) addr, hi;
    tc_rcache_reg_t *r;
    size_t n = 0;

    if (0 == len) {
        return 0;
    }
    hi = (lo + len < lo) ? UINTPTR_MAX : lo + len;
    /* No provider call and no free() here: we may be inside free/munmap. */
    pthread_mutex_lock(&cache->lock);
    while (NULL != (r = tc_rcache_first_overlap(cache, lo, hi))) {
        tc_rcache_detach(cache, r);
        cache->stats.invalidations++;
        n++;
    }
    /* a registration being made of this range right now is stale too */
    for (tc_rcache_inflight_t *p = cache->inflight; NULL != p; p = p->next) {
        if (p->lo < hi && lo < p->hi) {
            p->invalidated = 1;
        }
    }
    pthread_mutex_unlock(&cache->lock);
    return n;
}

void tc_rcache_release_pending(tc_rcache_t *cache)
{
    tc_rcache_collect(cache);
}

void tc_rcache_flush(tc_rcache_t *cache)
{
    pthread_mutex_lock(&cache->lock);
    while (NULL != cache->lru.head) {
        tc_rcache_detach(cache, cache->lru.head);
    }
    pthread_mutex_unlock(&cache->lock);
    tc_rcache_collect(cache);
}

bool tc_rcache_reg_is_stale(const tc_rcache_reg_t *reg)
{
    return 0 != (tc_atomic_load_relaxed(&reg->flags) & TC_REG_STALE);
}

void tc_rcache_get_stats(tc_rcache_t *cache, tc_rcache_stats_t *stats)
{
    pthread_mutex_lock(&cache->lock);
    *stats = cache->stats;
    pthread_mutex_unlock(&cache->lock);
}

size_t tc_rcache_destroy(tc_rcache_t *cache)
{
    size_t leaked = 0;
    tc_rcache_reg_t *r;

    if (NULL == cache) {
        return 0;
    }
    pthread_mutex_lock(&cache->lock);
    while (NULL != cache->root) {
        r = cache->root;
        if (r->refcount > 0) {
            leaked += r->refcount;
            r->refcount = 0;
        }
        tc_rcache_detach(cache, r);
    }
    /* Zombies still held by someone: the owner is going away anyway. */
    while (NULL != (r = cache->zombies.head)) {
        leaked += r->refcount;
        tc_reg_list_remove(&cache->zombies, r);
        r->flags &= ~TC_REG_ZOMBIE;
        cache->stats.zombies--;
        tc_rcache_garbage_add(cache, r);
    }
    pthread_mutex_unlock(&cache->lock);
    tc_rcache_collect(cache);
    pthread_mutex_destroy(&cache->lock);
    free(cache);
    return leaked;
}
