/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * btl_sci_expose.h: the memory this process exposes to its peers right
 * now: one entry per btl_register_mem that has not been deregistered,
 * with the exact range the caller asked for.  The target side of the
 * emulated atomics accepts an address only inside one of them.  The
 * registration cache is no substitute: it keeps released registrations
 * (on its LRU), rounds ranges to pages and merges overlapping ones into
 * a union that may span bytes nobody exposed, so a stray atomic after
 * MPI_Win_free could change reused heap memory.
 *
 * Plain C without Open MPI (the unit tests use it); the caller locks.
 */

#ifndef MCA_BTL_SCI_EXPOSE_H
#define MCA_BTL_SCI_EXPOSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct mca_btl_sci_expose {
    uint64_t base;
    uint64_t len;
    struct mca_btl_sci_expose *prev, *next;
} mca_btl_sci_expose_t;

typedef struct mca_btl_sci_expose_set {
    mca_btl_sci_expose_t *head;
    size_t count;
} mca_btl_sci_expose_set_t;

static inline void mca_btl_sci_expose_add(mca_btl_sci_expose_set_t *set, mca_btl_sci_expose_t *e,
                                          uint64_t base, uint64_t len)
{
    e->base = base;
    e->len = len;
    e->prev = NULL;
    e->next = set->head;
    if (NULL != set->head) {
        set->head->prev = e;
    }
    set->head = e;
    set->count++;
}

static inline void mca_btl_sci_expose_remove(mca_btl_sci_expose_set_t *set, mca_btl_sci_expose_t *e)
{
    if (NULL != e->prev) {
        e->prev->next = e->next;
    } else {
        set->head = e->next;
    }
    if (NULL != e->next) {
        e->next->prev = e->prev;
    }
    e->prev = e->next = NULL;
    set->count--;
}

/* is [addr, addr+width) inside one exposed range?  Linear: the live
 * registrations of a process are few (windows, transfers in flight) */
static inline bool mca_btl_sci_expose_covers(const mca_btl_sci_expose_set_t *set, uint64_t addr,
                                             uint64_t width)
{
    for (const mca_btl_sci_expose_t *e = set->head; NULL != e; e = e->next) {
        if (addr >= e->base && width <= e->len && addr - e->base <= e->len - width) {
            return true;
        }
    }
    return false;
}

#endif /* MCA_BTL_SCI_EXPOSE_H */
