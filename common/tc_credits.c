/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * tc_credits.c: MPI-BIP's credit algorithm (section 3.5) and the software
 * FIFO of sends waiting for credit (section 3.4). See tc_credits.h.
 */
#include <string.h>

#include "tc_credits.h"

int tc_credits_init(tc_credits_t *cr, uint32_t n)
{
    /* One credit is always kept back for the credit-only message. */
    if (n < 2) {
        return -EINVAL;
    }
    memset(cr, 0, sizeof(*cr));
    cr->n = n;
    cr->c = n;
    cr->b = 0;
    tc_list_init(&cr->fifo);
    return 0;
}

void tc_credits_fini(tc_credits_t *cr)
{
    cr->c = 0;
    cr->b = 0;
}

void tc_credits_defer(tc_credits_t *cr, tc_list_item_t *item)
{
    tc_list_append(&cr->fifo, item);
    cr->stats.deferred++;
}

tc_list_item_t *tc_credits_next_ready(tc_credits_t *cr, uint32_t *piggyback)
{
    if (tc_list_is_empty(&cr->fifo) || cr->c < 2) {
        return NULL;
    }
    tc_credits_consume(cr, piggyback);
    cr->stats.sent++;
    return tc_list_pop_front(&cr->fifo);
}

void tc_credits_cancel(tc_credits_t *cr, tc_list_item_t *item, uint32_t piggyback)
{
    /* The statistics keep counting the attempt; only the account is undone. */
    cr->c++;
    cr->b += piggyback;
    if (NULL != item) {
        tc_list_prepend(&cr->fifo, item);
    }
}

int tc_credits_received_credit_only(tc_credits_t *cr, uint32_t credits)
{
    /* Nothing is owed back for the reserved slot: counting it in B is what
     * made two peers with N = 2 trade credit-only messages forever. */
    if (credits > cr->n - cr->c) {
        return -EPROTO;
    }
    cr->c += credits;
    cr->stats.credit_only_received++;
    return 0;
}

int tc_credits_take_credit_only(tc_credits_t *cr, uint32_t *piggyback)
{
    if (cr->b < 1) {
        return -EAGAIN;
    }
    /* the reserved slot carries it: C is not consumed */
    *piggyback = cr->b;
    cr->b = 0;
    cr->stats.credit_only_sent++;
    return 0;
}

void tc_credits_cancel_credit_only(tc_credits_t *cr, uint32_t piggyback)
{
    cr->b += piggyback;
}

tc_list_item_t *tc_credits_drain(tc_credits_t *cr)
{
    return tc_list_pop_front(&cr->fifo);
}
