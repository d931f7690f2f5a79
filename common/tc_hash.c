/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * tc_hash.c: open-addressing hash map with 64-bit keys (see tc_hash.h).
 */
#include <stdlib.h>

#include "tc_hash.h"

#define TC_HASH_MIN_CAPACITY 16

/* splitmix64 finaliser: spreads sequential ids over the whole table. */
static inline uint64_t tc_hash_mix(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return x;
}

static size_t tc_hash_capacity_for(size_t expected)
{
    size_t cap = TC_HASH_MIN_CAPACITY;
    /* Keep the load factor under 70% for the expected number of keys. */
    while (cap * 7 / 10 < expected) {
        cap *= 2;
    }
    return cap;
}

int tc_hash_init(tc_hash_t *h, size_t expected)
{
    h->capacity = tc_hash_capacity_for(expected);
    h->count = 0;
    h->table = calloc(h->capacity, sizeof(*h->table));
    if (NULL == h->table) {
        h->capacity = 0;
        return -ENOMEM;
    }
    return 0;
}

void tc_hash_fini(tc_hash_t *h)
{
    free(h->table);
    h->table = NULL;
    h->capacity = 0;
    h->count = 0;
}

/* Slot holding key, or the empty slot where it would go. */
static size_t tc_hash_probe(const tc_hash_entry_t *table, size_t capacity, uint64_t key)
{
    size_t mask = capacity - 1;
    size_t i = (size_t) tc_hash_mix(key) & mask;

    while (table[i].used && table[i].key != key) {
        i = (i + 1) & mask;
    }
    return i;
}

static int tc_hash_grow(tc_hash_t *h)
{
    size_t newcap = h->capacity * 2;
    tc_hash_entry_t *nt = calloc(newcap, sizeof(*nt));

    if (NULL == nt) {
        return -ENOMEM;
    }
    for (size_t i = 0; i < h->capacity; i++) {
        if (h->table[i].used) {
            size_t j = tc_hash_probe(nt, newcap, h->table[i].key);
            nt[j] = h->table[i];
        }
    }
    free(h->table);
    h->table = nt;
    h->capacity = newcap;
    return 0;
}

int tc_hash_put(tc_hash_t *h, uint64_t key, void *value)
{
    size_t i;

    if (NULL == h->table) {
        int rc = tc_hash_init(h, 0);
        if (0 != rc) {
            return rc;
        }
    }
    i = tc_hash_probe(h->table, h->capacity, key);
    if (h->table[i].used) {
        h->table[i].value = value;
        return 0;
    }
    if ((h->count + 1) * 10 > h->capacity * 7) {
        int rc = tc_hash_grow(h);
        if (0 != rc) {
            return rc;
        }
        i = tc_hash_probe(h->table, h->capacity, key);
    }
    h->table[i].used = true;
    h->table[i].key = key;
    h->table[i].value = value;
    h->count++;
    return 0;
}

bool tc_hash_get(const tc_hash_t *h, uint64_t key, void **value)
{
    size_t i;

    if (NULL == h->table) {
        return false;
    }
    i = tc_hash_probe(h->table, h->capacity, key);
    if (!h->table[i].used) {
        return false;
    }
    if (NULL != value) {
        *value = h->table[i].value;
    }
    return true;
}

bool tc_hash_remove(tc_hash_t *h, uint64_t key, void **value)
{
    size_t mask, i, j;

    if (NULL == h->table) {
        return false;
    }
    mask = h->capacity - 1;
    i = tc_hash_probe(h->table, h->capacity, key);
    if (!h->table[i].used) {
        return false;
    }
    if (NULL != value) {
        *value = h->table[i].value;
    }
    /* Backward-shift deletion: move later entries of the same probe run
     * into the hole if the hole lies between their home slot and them. */
    j = i;
    for (;;) {
        size_t home;
        j = (j + 1) & mask;
        if (!h->table[j].used) {
            break;
        }
        home = (size_t) tc_hash_mix(h->table[j].key) & mask;
        if (((j - home) & mask) >= ((j - i) & mask)) {
            h->table[i] = h->table[j];
            i = j;
        }
    }
    h->table[i].used = false;
    h->table[i].value = NULL;
    h->count--;
    return true;
}

bool tc_hash_next(const tc_hash_t *h, size_t *pos, uint64_t *key, void **value)
{
    for (size_t i = *pos; i < h->capacity; i++) {
        if (h->table[i].used) {
            if (NULL != key) {
                *key = h->table[i].key;
            }
            if (NULL != value) {
                *value = h->table[i].value;
            }
            *pos = i + 1;
            return true;
        }
    }
    *pos = h->capacity;
    return false;
}
