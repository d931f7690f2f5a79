/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * tc_rcache.h: registration cache. Registering memory with a NIC (or
 * exporting it as a segment) is expensive, so a registration is kept and
 * reused (CHEMPI's point) until memory pressure or an unmap ends it.
 *
 * - Registrations cover page-aligned ranges and are kept in a balanced
 *   tree keyed by address; the ranges in the tree never overlap.
 * - tc_rcache_get() returns a registration covering [addr, addr+len) and
 *   takes a reference: an existing covering one if any, otherwise a new one
 *   registered through the provider. A request that overlaps existing
 *   registrations gets one registration covering the union ("growth"); the
 *   overlapped ones leave the tree (still valid for holders of a reference,
 *   deregistered when their last reference drops). Merely adjacent ranges
 *   stay separate registrations.
 * - tc_rcache_put() drops a reference. Unused registrations stay in the
 *   cache on an LRU list bounded in count and in bytes; the least recently
 *   used are deregistered first when a bound is exceeded.
 * - tc_rcache_invalidate() is called when memory is freed or unmapped:
 *   every registration overlapping the range leaves the tree at once (never
 *   returned by a lookup again). An unused one is deregistered at the next
 *   call into the cache (invalidate itself may run inside free/munmap,
 *   where neither the provider nor free() may be called), or right away
 *   with tc_rcache_release_pending(); one still in use is deregistered
 *   when its last reference drops. common/ompi connects this to Open MPI's
 *   memory release hooks (opal_mem_hooks_register_release).
 * - Provider callbacks and malloc/free are never called with the cache's
 *   lock held, so a provider may itself free memory (and re-enter
 *   tc_rcache_invalidate through the hook).
 *
 * Thread safe (one mutex per cache).
 */
#ifndef TC_RCACHE_H
#define TC_RCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tc_common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tc_rcache tc_rcache_t;

/* The provider that does real (de)registration of [base, base+len). On
 * success register stores its handle (an ibv_mr, a segment id, a table
 * index) in *handle and returns 0; a negative errno otherwise. If
 * register fails the cache evicts its unused registrations and tries once
 * more (the NIC may be out of registrable memory). */
typedef struct tc_rcache_provider {
    int (*reg)(void *ctx, void *base, size_t len, void **handle);
    int (*dereg)(void *ctx, void *base, size_t len, void *handle);
    void *ctx;
} tc_rcache_provider_t;

typedef struct tc_rcache_params {
    tc_rcache_provider_t provider;
    size_t max_unused_count; /* 0: no bound on the number of unused regs */
    size_t max_unused_bytes; /* 0: no bound on their total size */
} tc_rcache_params_t;

/* One registration. Read-only for users; valid while a reference is held. */
typedef struct tc_rcache_reg {
    uintptr_t base; /* page aligned */
    size_t len;     /* multiple of the page size */
    void *handle;   /* the provider's handle */
    /* private below */
    uint32_t refcount;
    uint32_t flags;
    struct tc_rcache_reg *left, *right; /* tree */
    int height;
    struct tc_rcache_reg *lru_prev, *lru_next;
} tc_rcache_reg_t;

typedef struct tc_rcache_stats {
    uint64_t hits;            /* get() served by an existing registration */
    uint64_t misses;          /* get() that registered */
    uint64_t registrations;   /* provider reg calls that succeeded */
    uint64_t deregistrations; /* provider dereg calls */
    uint64_t evictions;       /* deregistered because of an LRU bound */
    uint64_t invalidations;   /* registrations ended by invalidate() */
    size_t cached;            /* registrations in the tree */
    size_t unused;            /* of which on the LRU (refcount 0) */
    size_t unused_bytes;
    size_t zombies; /* out of the tree but still referenced */
} tc_rcache_stats_t;

/* Create a cache. Returns NULL on bad params (no reg/dereg) or no memory. */
tc_rcache_t *tc_rcache_create(const tc_rcache_params_t *params);

/* Deregister everything still cached and free the cache. Registrations
 * still referenced are deregistered too (and their holders must not use
 * them any more); returns the number of such leaked references. */
size_t tc_rcache_destroy(tc_rcache_t *cache);

/* Get a registration covering [addr, addr+len), len > 0, with one
 * reference. Returns 0, -EINVAL (len 0 or range wraps around), or the
 * provider's error. */
int tc_rcache_get(tc_rcache_t *cache, const void *addr, size_t len, tc_rcache_reg_t **reg);

/* Look up only: like get() but never registers; returns -ENOENT if no
 * cached registration covers the range. */
int tc_rcache_find(tc_rcache_t *cache, const void *addr, size_t len, tc_rcache_reg_t **reg);

/* Take one more reference on a registration already held. */
void tc_rcache_retain(tc_rcache_t *cache, tc_rcache_reg_t *reg);

/* Drop a reference. At zero: deregistered now if the registration was
 * invalidated or superseded, otherwise put on the LRU (which may evict). */
void tc_rcache_put(tc_rcache_t *cache, tc_rcache_reg_t *reg);

/* Memory [addr, addr+len) is going away (free, munmap, ...). Safe to call
 * from a memory hook: it neither allocates nor calls the provider. Returns
 * the number of registrations invalidated. */
size_t tc_rcache_invalidate(tc_rcache_t *cache, const void *addr, size_t len);

/* Deregister now the registrations that invalidate() left pending (every
 * get/find/put/flush also does it). Not from inside a memory hook. */
void tc_rcache_release_pending(tc_rcache_t *cache);

/* Deregister every unused registration (e.g. on memory pressure). */
void tc_rcache_flush(tc_rcache_t *cache);

/* True if the registration was invalidated or superseded (it stays usable
 * by the holder until put, but the memory behind it may be gone). */
bool tc_rcache_reg_is_stale(const tc_rcache_reg_t *reg);

void tc_rcache_get_stats(tc_rcache_t *cache, tc_rcache_stats_t *stats);

/* Open MPI's memory release hooks drive tc_rcache_invalidate through
 * tc_ompi_rcache_hook_register (common/ompi/tc_ompi.h). */

#ifdef __cplusplus
}
#endif

#endif /* TC_RCACHE_H */
