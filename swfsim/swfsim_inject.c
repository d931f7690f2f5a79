/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * swfsim_inject.c: a node's injection queue.  A node's packets enter the
 * torus in the order it sent them, the next one when the previous has
 * left the injection link (or at its send time, if later), so flows that
 * share a link take turns instead of the first sender reserving it far
 * ahead.  Only the queue's head has an INJECT event in the heap, so a
 * node that sends many messages at once costs one event per message.
 * Used by live and virtual nodes alike.
 */

#include "swfsim.h"

static uint64_t swfsim_inject_free(const swfsim_t *sim, uint32_t node)
{
    return sim->torus.links[4 * sim->torus.dx * sim->torus.dy + node].free_at;
}

int swfsim_inject_offer(swfsim_t *sim, swfsim_node_t *n, swfsim_msg_t *m)
{
    swfsim_event_t ev = {.time = m->t_send, .type = SWFSIM_EV_INJECT, .node = m->src, .msg = m};

    m->next = NULL;
    if (NULL != n->inj_tail) {
        n->inj_tail->next = m;
        n->inj_tail = m;
        return 0;
    }
    if (0 != swfsim_heap_push(&sim->heap, &ev)) {
        return -1;
    }
    n->inj_head = n->inj_tail = m;
    return 0;
}

int swfsim_inject_due(swfsim_t *sim, const swfsim_event_t *ev, uint64_t *deliver)
{
    swfsim_msg_t *m = ev->msg, *next;
    swfsim_node_t *n = sim->nodes[m->src];
    uint64_t busy = swfsim_inject_free(sim, m->src);

    if (busy > ev->time) {
        /* the link is still busy: come back when it is free */
        swfsim_event_t again = *ev;
        again.time = busy;
        return 0 == swfsim_heap_push(&sim->heap, &again) ? 0 : -1;
    }
    n->inj_head = m->next;
    if (NULL == n->inj_head) {
        n->inj_tail = NULL;
    }
    m->next = NULL;
    *deliver = swfsim_torus_transfer(&sim->torus, m->src, m->dst, m->len, ev->time, NULL);
    next = n->inj_head;
    if (NULL != next) {
        uint64_t free_at = swfsim_inject_free(sim, m->src);
        swfsim_event_t e2 = {.time = next->t_send > free_at ? next->t_send : free_at,
                             .type = SWFSIM_EV_INJECT,
                             .node = m->src,
                             .msg = next};
        if (0 != swfsim_heap_push(&sim->heap, &e2)) {
            return -1; /* the queue stays; freed at the end */
        }
    }
    return 1;
}
