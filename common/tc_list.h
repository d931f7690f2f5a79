/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * tc_list.h: intrusive doubly-linked list / FIFO queue (header only).
 *
 * The item lives inside the caller's object (a fragment, a request), so
 * queueing never allocates. A list is a circular ring around a sentinel.
 * Not thread safe: the owner serialises access.
 *
 *   struct frag { tc_list_item_t link; ... };
 *   tc_list_t q;  tc_list_init(&q);
 *   tc_list_append(&q, &f->link);
 *   tc_list_item_t *it = tc_list_pop_front(&q);   NULL when empty
 *   struct frag *f = TC_CONTAINER_OF(it, struct frag, link);
 */
#ifndef TC_LIST_H
#define TC_LIST_H

#include <stdbool.h>
#include <stddef.h>

#include "tc_common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tc_list_item {
    struct tc_list_item *next;
    struct tc_list_item *prev;
} tc_list_item_t;

typedef struct tc_list {
    tc_list_item_t sentinel;
    size_t count;
} tc_list_t;

static inline void tc_list_init(tc_list_t *l)
{
    l->sentinel.next = &l->sentinel;
    l->sentinel.prev = &l->sentinel;
    l->count = 0;
}

/* An item that is on no list has NULL links (helps catch double insertion). */
static inline void tc_list_item_init(tc_list_item_t *it)
{
    it->next = NULL;
    it->prev = NULL;
}

static inline bool tc_list_is_empty(const tc_list_t *l)
{
    return l->sentinel.next == &l->sentinel;
}

static inline size_t tc_list_size(const tc_list_t *l)
{
    return l->count;
}

static inline void tc_list_insert_after_(tc_list_t *l, tc_list_item_t *pos, tc_list_item_t *it)
{
    it->prev = pos;
    it->next = pos->next;
    pos->next->prev = it;
    pos->next = it;
    l->count++;
}

/* Add at the tail (FIFO order). */
static inline void tc_list_append(tc_list_t *l, tc_list_item_t *it)
{
    tc_list_insert_after_(l, l->sentinel.prev, it);
}

/* Add at the head (put back an item that could not be sent after all). */
static inline void tc_list_prepend(tc_list_t *l, tc_list_item_t *it)
{
    tc_list_insert_after_(l, &l->sentinel, it);
}

/* Unlink an item that is on list l. */
static inline void tc_list_remove(tc_list_t *l, tc_list_item_t *it)
{
    it->prev->next = it->next;
    it->next->prev = it->prev;
    it->next = NULL;
    it->prev = NULL;
    l->count--;
}

/* First item, or NULL when the list is empty. */
static inline tc_list_item_t *tc_list_first(const tc_list_t *l)
{
    return tc_list_is_empty(l) ? NULL : l->sentinel.next;
}

/* Last item, or NULL when the list is empty. */
static inline tc_list_item_t *tc_list_last(const tc_list_t *l)
{
    return tc_list_is_empty(l) ? NULL : l->sentinel.prev;
}

/* Successor of it, or NULL at the end. */
static inline tc_list_item_t *tc_list_next(const tc_list_t *l, const tc_list_item_t *it)
{
    return it->next == &l->sentinel ? NULL : it->next;
}

/* Remove and return the head, or NULL when empty. */
static inline tc_list_item_t *tc_list_pop_front(tc_list_t *l)
{
    tc_list_item_t *it = tc_list_first(l);
    if (NULL != it) {
        tc_list_remove(l, it);
    }
    return it;
}

/* Iterate; the body may remove the current item (tmp holds the successor). */
#define TC_LIST_FOREACH_SAFE(it, tmp, l)                                        \
    for ((it) = (l)->sentinel.next, (tmp) = (it)->next; (it) != &(l)->sentinel; \
         (it) = (tmp), (tmp) = (it)->next)

#ifdef __cplusplus
}
#endif

#endif /* TC_LIST_H */
