/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * tc_atomic.h: the one memory-ordering vocabulary of the code below Open
 * MPI (common/, device and socket layers, allocators): loads, stores,
 * read-modify-write operations and fences with their ordering in the
 * name, after UCX's ucs/arch/atomic.h. BTL glue that already depends on
 * Open MPI uses opal_atomic_* instead.
 *
 * Rules:
 * - A word that another thread or process reads or writes concurrently is
 *   accessed only through these macros; `volatile` is never a means of
 *   synchronisation (it orders nothing and makes nothing atomic).
 * - Publish with a release store (or a release fence before a relaxed
 *   store), consume with an acquire load.
 * - Two sides that each store a flag and then load the other's (Dekker:
 *   "I go idle" / "I published, are you idle?") need a full fence
 *   (StoreLoad) between their store and their load, on both sides;
 *   release/acquire does not order a store before a later load.
 *
 * The macros are type-generic over integers and pointers (GCC/Clang
 * __atomic builtins, which every supported compiler has).
 */
#ifndef TC_ATOMIC_H
#define TC_ATOMIC_H

#include <stdbool.h>
#include <stdint.h>

/* loads */
#define tc_atomic_load_relaxed(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define tc_atomic_load_acquire(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)

/* stores */
#define tc_atomic_store_relaxed(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)
#define tc_atomic_store_release(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)

/* read-modify-write, acquire and release (what a counter or a lock word
 * shared between processes needs) */
#define tc_atomic_fetch_add(p, v) __atomic_fetch_add((p), (v), __ATOMIC_ACQ_REL)
#define tc_atomic_add_fetch(p, v) __atomic_add_fetch((p), (v), __ATOMIC_ACQ_REL)
#define tc_atomic_fetch_and(p, v) __atomic_fetch_and((p), (v), __ATOMIC_ACQ_REL)
#define tc_atomic_fetch_or(p, v) __atomic_fetch_or((p), (v), __ATOMIC_ACQ_REL)
#define tc_atomic_fetch_xor(p, v) __atomic_fetch_xor((p), (v), __ATOMIC_ACQ_REL)
#define tc_atomic_swap(p, v) __atomic_exchange_n((p), (v), __ATOMIC_ACQ_REL)
/* taking a lock word: later accesses stay after the swap */
#define tc_atomic_swap_acquire(p, v) __atomic_exchange_n((p), (v), __ATOMIC_ACQUIRE)

/* read-modify-write with one-sided or no ordering: a statistics counter
 * (relaxed), a progress counter that publishes data written before it
 * (release) */
#define tc_atomic_fetch_add_relaxed(p, v) __atomic_fetch_add((p), (v), __ATOMIC_RELAXED)
#define tc_atomic_fetch_sub_relaxed(p, v) __atomic_fetch_sub((p), (v), __ATOMIC_RELAXED)
#define tc_atomic_add_fetch_release(p, v) __atomic_add_fetch((p), (v), __ATOMIC_RELEASE)
/* compare and swap: true when *p held *expected and now holds desired;
 * otherwise *expected receives the current value */
#define tc_atomic_cswap(p, expected, desired) \
    __atomic_compare_exchange_n((p), (expected), (desired), 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)
/* the weak form, for retry loops */
#define tc_atomic_cswap_weak(p, expected, desired) \
    __atomic_compare_exchange_n((p), (expected), (desired), 1, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)

/* the weak form without ordering: claiming a position whose contents
 * are ordered by another word (a slot's sequence number) */
#define tc_atomic_cswap_weak_relaxed(p, expected, desired) \
    __atomic_compare_exchange_n((p), (expected), (desired), 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)

/* fences */
#define tc_atomic_fence_acquire() __atomic_thread_fence(__ATOMIC_ACQUIRE)
#define tc_atomic_fence_release() __atomic_thread_fence(__ATOMIC_RELEASE)
/* orders every earlier store before every later load (StoreLoad), and
 * everything else: the fence of the Dekker pattern */
#define tc_atomic_fence_full() __atomic_thread_fence(__ATOMIC_SEQ_CST)

/* A statistics counter: an atomic add when other threads may update it
 * too (shared), a plain add on the single-thread path. */
static inline void tc_atomic_count(uint64_t *ctr, uint64_t v, bool shared)
{
    if (shared) {
        (void) tc_atomic_fetch_add_relaxed(ctr, v);
    } else {
        *ctr += v;
    }
}

/* The progress guard: one thread at a time in a progress function (or any
 * section the others may skip rather than wait for). Taken with an
 * acquire swap, so that what the previous holder did is visible; dropped
 * with a release store, so that what this holder did is visible to the
 * next. A write barrier and a plain store would order the stores only,
 * not the loads of the section. A zeroed tc_guard_t is free. */
typedef struct tc_guard {
    int32_t taken;
} tc_guard_t;

/* true when this thread took the guard */
static inline bool tc_guard_try_enter(tc_guard_t *g)
{
    return 0 == tc_atomic_swap_acquire(&g->taken, 1);
}

static inline void tc_guard_leave(tc_guard_t *g)
{
    tc_atomic_store_release(&g->taken, 0);
}

#endif /* TC_ATOMIC_H */
