/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * btl_sci_doorbell.h: the two halves of btl_sci's idle handshake, without
 * Open MPI (the unit tests run them in two threads).
 *
 * A receiver that found a peer's ring empty for a while stores "idle" into
 * the peer's segment and then polls the ring once more; a sender publishes
 * a message (the slot's seq, a release store) and then loads that flag, and
 * rings the receiver's doorbell when it is set.  Each side stores and then
 * loads what the other stored (Dekker): without a StoreLoad fence on BOTH
 * sides, each load may be served before the own store is visible, so the
 * sender sees "not idle" while the receiver sees "no message" and the
 * message waits for the next sweep.  With the fences at least one of the
 * two sees the other.
 */

#ifndef MCA_BTL_SCI_DOORBELL_H
#define MCA_BTL_SCI_DOORBELL_H

#include <stdbool.h>
#include <stdint.h>

#include "tc_atomic.h"

/* sender, after the publish: must the receiver's doorbell be rung? */
static inline bool mca_btl_sci_doorbell_needed(const uint32_t *idle_in)
{
    tc_atomic_fence_full();
    return 0 != tc_atomic_load_relaxed(idle_in);
}

/* sender: ring (one byte of the receiver's doorbell segment) */
static inline void mca_btl_sci_doorbell_ring(uint8_t *bell)
{
    tc_atomic_store_relaxed(bell, (uint8_t) 1);
}

/* receiver: tell the peer to ring; the caller polls the ring once more
 * after this returns */
static inline void mca_btl_sci_doorbell_go_idle(uint32_t *idle_out)
{
    tc_atomic_store_relaxed(idle_out, 1u);
    tc_atomic_fence_full();
}

/* receiver: polling the peer again, no doorbell wanted */
static inline void mca_btl_sci_doorbell_go_active(uint32_t *idle_out)
{
    tc_atomic_store_relaxed(idle_out, 0u);
}

/* receiver: any of the 8 doorbell bytes from byte 0 of word on set? */
static inline bool mca_btl_sci_doorbell_any(const uint8_t *word)
{
    return 0 != tc_atomic_load_relaxed((const uint64_t *) word);
}

/* receiver: was this byte rung?  Clears it (the caller then polls the
 * ring, so a message published before the clear is seen) */
static inline bool mca_btl_sci_doorbell_take(uint8_t *bell)
{
    if (0 == tc_atomic_load_relaxed(bell)) {
        return false;
    }
    tc_atomic_store_relaxed(bell, (uint8_t) 0);
    return true;
}

#endif /* MCA_BTL_SCI_DOORBELL_H */
