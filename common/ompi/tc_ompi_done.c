/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * tc_ompi_done.c: the completed-fragments list (tc_ompi.h): fragments or
 * operations that completed where their callback may not run (inside a
 * send, under an endpoint lock), handed to the next progress call.
 */

#include "opal_config.h"

#include "tc_ompi.h"

void tc_ompi_done_list_construct(tc_ompi_done_list_t *d)
{
    OBJ_CONSTRUCT(&d->list, opal_list_t);
    OBJ_CONSTRUCT(&d->lock, opal_mutex_t);
}

void tc_ompi_done_list_destruct(tc_ompi_done_list_t *d)
{
    OBJ_DESTRUCT(&d->list);
    OBJ_DESTRUCT(&d->lock);
}

void tc_ompi_done_list_push(tc_ompi_done_list_t *d, opal_list_item_t *item)
{
    OPAL_THREAD_LOCK(&d->lock);
    opal_list_append(&d->list, item);
    OPAL_THREAD_UNLOCK(&d->lock);
}

opal_list_item_t *tc_ompi_done_list_pop(tc_ompi_done_list_t *d)
{
    opal_list_item_t *item;

    OPAL_THREAD_LOCK(&d->lock);
    item = opal_list_remove_first(&d->list);
    OPAL_THREAD_UNLOCK(&d->lock);
    return item;
}

int tc_ompi_done_list_drain(tc_ompi_done_list_t *d, void (*complete)(opal_list_item_t *item))
{
    opal_list_item_t *item;
    int count = 0;

    while (NULL != (item = tc_ompi_done_list_pop(d))) {
        complete(item);
        ++count;
    }
    return count;
}
