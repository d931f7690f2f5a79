/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * tc_hash.h: hash map from 64-bit keys to pointers (endpoint lookup by
 * peer id, SCTP association id -> endpoint, ...).
 *
 * Open addressing with linear probing and backward-shift deletion: no
 * tombstones, lookups stay short after many removals. Grows at 70% load.
 * Every 64-bit key is valid (including 0). Not thread safe.
 */
#ifndef TC_HASH_H
#define TC_HASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tc_common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tc_hash_entry {
    uint64_t key;
    void *value;
    bool used;
} tc_hash_entry_t;

typedef struct tc_hash {
    tc_hash_entry_t *table;
    size_t capacity; /* power of two */
    size_t count;
} tc_hash_t;

/* Prepare an empty map sized for about `expected` keys (0: a small default).
 * Returns 0 or -ENOMEM. */
int tc_hash_init(tc_hash_t *h, size_t expected);

/* Free the table (not the values). The map may be re-initialised. */
void tc_hash_fini(tc_hash_t *h);

/* Insert or replace. Returns 0 or -ENOMEM (the map is unchanged then). */
int tc_hash_put(tc_hash_t *h, uint64_t key, void *value);

/* Look up; returns true and stores the value in *value (if not NULL). */
bool tc_hash_get(const tc_hash_t *h, uint64_t key, void **value);

/* Remove; returns true if the key was present (old value in *value). */
bool tc_hash_remove(tc_hash_t *h, uint64_t key, void **value);

static inline size_t tc_hash_count(const tc_hash_t *h)
{
    return h->count;
}

/* Iteration: start with *pos = 0; returns false at the end. The map must
 * not be modified during an iteration. */
bool tc_hash_next(const tc_hash_t *h, size_t *pos, uint64_t *key, void **value);

#ifdef __cplusplus
}
#endif

#endif /* TC_HASH_H */
