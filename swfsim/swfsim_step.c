/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * swfsim_step.c: the SockModel engine's time: one step of the simulator
 * (parse woken nodes, end waits whose real-time bound passed, run the
 * timed events in conservative order: an event is processed only when
 * no running node's clock is behind it), and the deadlock check.
 */

#include "swfsim_engine.h"

/* smallest clock of the nodes that hold back time */
static uint64_t swfsim_min_clock(const swfsim_t *sim)
{
    uint64_t m = UINT64_MAX;

    for (uint32_t r = 0; r < sim->nnodes; r++) {
        const swfsim_node_t *n = sim->nodes[r];
        if (SWFSIM_N_RUNNING == n->state && n->clock < m) {
            m = n->clock;
        }
    }
    return m;
}

static void swfsim_event(swfsim_t *sim, const swfsim_event_t *ev)
{
    swfsim_node_t *n;
    uint64_t t;

    sim->now = ev->time;
    sim->events++;
    switch (ev->type) {
    case SWFSIM_EV_CMD:
        n = sim->nodes[ev->node];
        if (n->gen != ev->gen || !n->active || SWFSIM_N_RUNNING != n->state) {
            return; /* cancelled by WAITING_STOP or by a drop */
        }
        swfsim_run_cmd(sim, n);
        if (!n->active) {
            swfsim_mark_ready(sim, n);
        }
        break;
    case SWFSIM_EV_INJECT: {
        swfsim_event_t d = {.type = SWFSIM_EV_DELIVER, .node = ev->msg->dst, .msg = ev->msg};
        int go = swfsim_inject_due(sim, ev, &t);
        if (go < 0) {
            swfsim_warn("out of memory for an event: messages held until the end");
        }
        if (1 != go) {
            break;
        }
        d.time = t;
        if (0 != swfsim_heap_push(&sim->heap, &d)) {
            swfsim_warn("out of memory for an event: message lost");
            swfsim_msg_free(sim, ev->msg);
        }
        break;
    }
    case SWFSIM_EV_DELIVER:
        swfsim_hist_add(&sim->latency, (ev->time - ev->msg->t_send) / SWFSIM_PS_PER_NS);
        swfsim_deliver(sim, ev->msg, ev->time);
        break;
    default:
        break;
    }
}

static void swfsim_check_deadlock(swfsim_t *sim)
{
    uint32_t alive = 0;

    for (uint32_t r = 0; r < sim->nnodes; r++) {
        swfsim_node_t *n = sim->nodes[r];
        if (SWFSIM_N_RUNNING == n->state || SWFSIM_N_WAITING == n->state) {
            return;
        }
        if (swfsim_alive(n)) {
            alive++;
        }
    }
    if (0 == alive) {
        sim->done = 1; /* everyone finished or was dropped */
        return;
    }
    if (0 != sim->heap.len || 0 != sim->nready) {
        return;
    }
    swfsim_warn("deadlock: every remaining node is blocked and nothing is in flight");
    for (uint32_t r = 0; r < sim->nnodes; r++) {
        swfsim_node_t *n = sim->nodes[r];
        if (swfsim_alive(n)) {
            swfsim_warn("  node %u blocked in %s(%u) at %llu ns, %llu messages queued", r,
                        tc_sockmodel_request_name(n->cmd.request), n->cmd.param[0],
                        (unsigned long long) (n->clock / SWFSIM_PS_PER_NS),
                        (unsigned long long) (NULL != n->qhead));
        }
    }
    sim->deadlock = 1;
    sim->exit_code = 2;
    sim->done = 1;
}

long swfsim_step(swfsim_t *sim, uint64_t now_us)
{
    long next = -1;

    if (!sim->started) {
        return -1;
    }
    for (;;) {
        int progressed = 0;

        /* parse nodes that were woken or may go on */
        while (sim->nready > 0) {
            swfsim_node_t *n = &sim->slots[sim->ready[--sim->nready]];
            n->on_ready = 0;
            swfsim_parse(sim, n);
            /* commands pipelined behind a timed one may have filled the
             * input buffer, which stopped reading: room again now */
            swfsim_net_input_room(sim, n);
            progressed = 1;
        }
        /* real-time ends of waits, also of those whose event has not
         * come due yet (then the node keeps its clock) */
        for (uint32_t r = 0; r < sim->nnodes; r++) {
            swfsim_node_t *n = sim->nodes[r];
            if (swfsim_waits(n) && n->deadline_us <= now_us) {
                if (SWFSIM_N_WAITING == n->state && sim->now > n->clock) {
                    n->clock = sim->now;
                }
                n->gen++;
                swfsim_wait_account(n);
                n->waits_expired++;
                swfsim_reply(sim, n, SOCKMODEL_WAITING_START, SOCKMODEL_ST_EXPIRED, 0, 0, 0, 0);
                swfsim_resume(sim, n);
                progressed = 1;
            }
        }
        if (sim->nready > 0) {
            continue;
        }
        /* events in the past of every running node */
        if (swfsim_is_torus(sim)) {
            uint64_t horizon = swfsim_min_clock(sim);
            const swfsim_event_t *top;
            while (0 == sim->nready && NULL != (top = swfsim_heap_top(&sim->heap)) &&
                   top->time <= horizon) {
                swfsim_event_t ev;
                swfsim_heap_pop(&sim->heap, &ev);
                swfsim_event(sim, &ev);
                progressed = 1;
                if (SWFSIM_EV_CMD == ev.type) {
                    horizon = swfsim_min_clock(sim);
                }
            }
        }
        if (!progressed && 0 == sim->nready) {
            break;
        }
    }
    swfsim_check_deadlock(sim);
    for (uint32_t r = 0; r < sim->nnodes; r++) {
        swfsim_node_t *n = sim->nodes[r];
        if (swfsim_waits(n)) {
            long left = n->deadline_us > now_us ? (long) (n->deadline_us - now_us) : 0;
            if (next < 0 || left < next) {
                next = left;
            }
        }
    }
    return next;
}
