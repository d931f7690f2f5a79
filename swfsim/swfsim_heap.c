/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * swfsim_heap.c: the simulator's priority queue of timed events, a binary
 * min-heap ordered by (time, insertion sequence) so that events due at
 * the same time come out in the order they were queued.
 */

#include <stdlib.h>
#include <string.h>

#include "swfsim.h"

static int swfsim_heap_before(const swfsim_event_t *a, const swfsim_event_t *b)
{
    if (a->time != b->time) {
        return a->time < b->time;
    }
    return a->seq < b->seq;
}

void swfsim_heap_init(swfsim_heap_t *h)
{
    memset(h, 0, sizeof(*h));
}

void swfsim_heap_fini(swfsim_heap_t *h)
{
    free(h->ev);
    memset(h, 0, sizeof(*h));
}

int swfsim_heap_push(swfsim_heap_t *h, const swfsim_event_t *ev)
{
    size_t i;

    if (h->len == h->cap) {
        size_t ncap = h->cap ? h->cap * 2 : 64;
        swfsim_event_t *nev = realloc(h->ev, ncap * sizeof(*nev));
        if (NULL == nev) {
            return -1;
        }
        h->ev = nev;
        h->cap = ncap;
    }
    i = h->len++;
    h->ev[i] = *ev;
    h->ev[i].seq = h->next_seq++;
    /* sift up */
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        swfsim_event_t tmp;
        if (!swfsim_heap_before(&h->ev[i], &h->ev[parent])) {
            break;
        }
        tmp = h->ev[i];
        h->ev[i] = h->ev[parent];
        h->ev[parent] = tmp;
        i = parent;
    }
    return 0;
}

int swfsim_heap_pop(swfsim_heap_t *h, swfsim_event_t *out)
{
    size_t i = 0;

    if (0 == h->len) {
        return -1;
    }
    *out = h->ev[0];
    h->ev[0] = h->ev[--h->len];
    /* sift down */
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        swfsim_event_t tmp;
        if (l < h->len && swfsim_heap_before(&h->ev[l], &h->ev[m])) {
            m = l;
        }
        if (r < h->len && swfsim_heap_before(&h->ev[r], &h->ev[m])) {
            m = r;
        }
        if (m == i) {
            break;
        }
        tmp = h->ev[i];
        h->ev[i] = h->ev[m];
        h->ev[m] = tmp;
        i = m;
    }
    return 0;
}
