/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * tc_ring_impl.h: private helpers shared by tc_ring.c (SPSC), tc_mpring.c
 * (MPSC) and tc_mpring.h's inline peek. Both lay out their slots the same
 * way (tc_ring_slot_hdr_t, TC_RING_STRIDE) and validate what they read from
 * shared memory the same way; only the sequence protocol differs.
 * Everything here is static inline, so the fast paths stay as they were.
 */
#ifndef TC_RING_IMPL_H
#define TC_RING_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tc_ring.h"
#include "tc_atomic.h"

/* nslots a power of two >= 2 (and not absurd), 0 < slot_size <= 1 GiB. */
static inline bool tc_ring_impl_geometry_ok(uint32_t nslots, uint32_t slot_size)
{
    return nslots >= 2 && 0 == (nslots & (nslots - 1)) && slot_size > 0 &&
        slot_size <= (1u << 30) && nslots <= (1u << 24);
}

/* mem can hold `need` bytes (0: invalid geometry) and is cache-line aligned. */
static inline bool tc_ring_impl_mem_ok(const void *mem, size_t memlen, size_t need)
{
    return NULL != mem && 0 != need && memlen >= need &&
        0 == ((uintptr_t) mem & (TC_CACHELINE - 1));
}

static inline tc_ring_slot_hdr_t *tc_ring_impl_slot(uint8_t *slots, size_t stride, uint32_t nslots,
                                                    uint64_t pos)
{
    return (tc_ring_slot_hdr_t *) (slots + (size_t) (pos & (nslots - 1)) * stride);
}

/* A slot whose sequence says "published": read the length once, check it
 * against the slot size before anyone uses it, and hand out the message.
 * 0 or -EPROTO (len > slot_size). tag may be NULL. */
static inline int tc_ring_impl_read_slot(const tc_ring_slot_hdr_t *s, uint32_t slot_size,
                                         const void **payload, uint32_t *len, uint32_t *tag)
{
    uint32_t l = tc_atomic_load_relaxed(&s->len);

    if (l > slot_size) {
        return -EPROTO;
    }
    *payload = (const uint8_t *) s + sizeof(*s);
    *len = l;
    if (NULL != tag) {
        *tag = tc_atomic_load_relaxed(&s->tag);
    }
    return 0;
}

#endif /* TC_RING_IMPL_H */
