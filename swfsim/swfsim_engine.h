/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * swfsim_engine.h: what the pieces of the SockModel protocol engine share
 * (swfsim_engine.c, swfsim_output.c, swfsim_queue.c, swfsim_cmd.c,
 * swfsim_step.c): the node-state tests, the work lists and the functions
 * one piece calls in another.  Private to the engine: the rest of the
 * simulator uses swfsim.h.
 */

#ifndef SWFSIM_ENGINE_H
#define SWFSIM_ENGINE_H

#include "swfsim.h"

static inline uint32_t swfsim_slot_index(const swfsim_t *sim, const swfsim_node_t *n)
{
    return (uint32_t) (n - sim->slots);
}

static inline int swfsim_is_torus(const swfsim_t *sim)
{
    return SOCKMODEL_MODEL_TORUS == sim->cfg.model;
}

/* a node that takes part in the run and can still act */
static inline int swfsim_alive(const swfsim_node_t *n)
{
    return SWFSIM_N_RUNNING == n->state || SWFSIM_N_BLOCKED_RECV == n->state ||
        SWFSIM_N_BLOCKED_BARRIER == n->state || SWFSIM_N_WAITING == n->state;
}

/* a WAITING_START is outstanding: waiting, or its event not yet due */
static inline int swfsim_waits(const swfsim_node_t *n)
{
    return SWFSIM_N_WAITING == n->state ||
        (SWFSIM_N_RUNNING == n->state && n->active && SOCKMODEL_WAITING_START == n->cmd.request &&
         0 != n->cmd.param[0]);
}

/* nodes may join this run after its start (SOCKMODEL_RANK_JOIN): the
 * simpel model only, whose nodes keep no clocks to catch up with */
static inline int swfsim_can_join(const swfsim_t *sim)
{
    return !swfsim_is_torus(sim) && sim->cfg.max_joined > 0;
}

static inline void swfsim_mark_ready(swfsim_t *sim, swfsim_node_t *n)
{
    if (!n->on_ready) {
        n->on_ready = 1;
        sim->ready[sim->nready++] = swfsim_slot_index(sim, n);
    }
}

static inline void swfsim_mark_dirty(swfsim_t *sim, swfsim_node_t *n)
{
    if (!n->on_dirty) {
        n->on_dirty = 1;
        sim->dirty[sim->ndirty++] = swfsim_slot_index(sim, n);
    }
}

/* state and node life (swfsim_engine.c) */
/* free the messages queued for a node that leaves, counted as discarded */
void swfsim_discard_queue(swfsim_t *sim, swfsim_node_t *n);

/* output (swfsim_output.c) */
/* a bare 32-bit word: the rank of the welcome, or RANK_REFUSED */
void swfsim_node_word(swfsim_t *sim, swfsim_node_t *n, uint32_t v);
/* a reply without payload, stamped with n's clock */
void swfsim_reply(swfsim_t *sim, swfsim_node_t *n, uint32_t code, uint32_t status, uint32_t a0,
                  uint32_t a1, uint32_t a2, uint32_t a3);

/* message queues (swfsim_queue.c) */
swfsim_msg_t *swfsim_find(swfsim_node_t *n, const tc_sockmodel_cmd_t *c, swfsim_msg_t **prev);
void swfsim_unlink(swfsim_node_t *n, swfsim_msg_t *m, swfsim_msg_t *prev);
void swfsim_give(swfsim_t *sim, swfsim_node_t *n, swfsim_msg_t *m, uint32_t code);
void swfsim_found(swfsim_t *sim, swfsim_node_t *n, uint32_t code, const swfsim_msg_t *m);
void swfsim_wait_account(swfsim_node_t *n);
void swfsim_wait_answer(swfsim_t *sim, swfsim_node_t *n);
void swfsim_resume(swfsim_t *sim, swfsim_node_t *n);
void swfsim_deliver(swfsim_t *sim, swfsim_msg_t *m, uint64_t t);

/* commands (swfsim_cmd.c) */
void swfsim_run_cmd(swfsim_t *sim, swfsim_node_t *n);
void swfsim_parse(swfsim_t *sim, swfsim_node_t *n);

#endif /* SWFSIM_ENGINE_H */
