/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * swfsim_cmd.c: the SockModel engine's commands: parsing a node's input
 * buffer into commands, checking and executing them (SIZE, SEND,
 * BARRIER_*, WATCH at once; RECV*, PROBE*, WAITING_START, FINISH at the
 * node's simulated time), and the WAITING_STOP that ends a wait.
 */

#include <stdlib.h>
#include <string.h>

#include "swfsim_engine.h"
#include "swfsim_trace.h"

static void swfsim_finish(swfsim_t *sim, swfsim_node_t *n)
{
    swfsim_reply(sim, n, SOCKMODEL_FINISH, SOCKMODEL_ST_OK, 0, 0, 0, 0);
    n->active = 0;
    n->state = SWFSIM_N_FINISHED;
    swfsim_discard_queue(sim, n);
    swfsim_log(sim, "node %u finished at %llu ns", n->rank,
               (unsigned long long) (n->clock / SWFSIM_PS_PER_NS));
}

static void swfsim_probe_cost(swfsim_t *sim, swfsim_node_t *n)
{
    if (swfsim_is_torus(sim)) {
        n->clock += (uint64_t) sim->cfg.probe_cycles * sim->cfg.cycle_ps;
        if (NULL != sim->trace) {
            swfsim_trace_poll(sim, n, (uint64_t) sim->cfg.probe_cycles * sim->cfg.cycle_ps);
        }
    }
}

static void swfsim_barrier_enter(swfsim_t *sim, swfsim_node_t *n)
{
    uint32_t id = n->cmd.param[0];
    swfsim_barrier_t *b = &sim->barriers[id];

    if (NULL != sim->trace) {
        swfsim_trace_barrier(sim, n);
    }
    b->entered++;
    if (n->clock > b->latest) {
        b->latest = n->clock;
    }
    n->state = SWFSIM_N_BLOCKED_BARRIER;
    if (b->entered < b->participants) {
        return;
    }
    /* the last one is in: everybody leaves at the latest entry time */
    for (uint32_t r = 0; r < sim->nnodes; r++) {
        swfsim_node_t *o = sim->nodes[r];
        if (SWFSIM_N_BLOCKED_BARRIER == o->state && o->cmd.param[0] == id) {
            o->wait_ps += b->latest - o->clock;
            o->clock = b->latest;
            swfsim_reply(sim, o, SOCKMODEL_BARRIER_ENTER, SOCKMODEL_ST_OK, id, b->round, 0, 0);
            swfsim_resume(sim, o);
        }
    }
    b->round++;
    b->entered = 0;
    b->latest = 0;
}

/* run n's active command now (its time has come) */
void swfsim_run_cmd(swfsim_t *sim, swfsim_node_t *n)
{
    tc_sockmodel_cmd_t *c = &n->cmd;
    swfsim_msg_t *m, *prev = NULL;

    switch (c->request) {
    case SOCKMODEL_PROBE:
    case SOCKMODEL_PROBEFROM:
    case SOCKMODEL_PROBETAG:
        m = swfsim_find(n, c, &prev);
        swfsim_probe_cost(sim, n);
        if (NULL != m) {
            swfsim_found(sim, n, c->request, m);
        } else {
            swfsim_reply(sim, n, c->request, SOCKMODEL_ST_NONE, 0, 0, 0, 0);
        }
        n->active = 0;
        break;
    case SOCKMODEL_RECV:
    case SOCKMODEL_RECVFROM:
    case SOCKMODEL_RECVTAG:
        m = swfsim_find(n, c, &prev);
        if (NULL != m) {
            swfsim_unlink(n, m, prev);
            swfsim_give(sim, n, m, c->request);
            n->active = 0;
        } else {
            n->state = SWFSIM_N_BLOCKED_RECV;
        }
        break;
    case SOCKMODEL_WAITING_START:
        if (NULL != n->qhead) {
            swfsim_probe_cost(sim, n);
            swfsim_wait_answer(sim, n);
            n->active = 0;
        } else if (0 == c->param[0]) {
            swfsim_probe_cost(sim, n);
            n->waits_expired++;
            swfsim_reply(sim, n, SOCKMODEL_WAITING_START, SOCKMODEL_ST_EXPIRED, 0, 0, 0, 0);
            n->active = 0;
        } else {
            /* the real-time bound runs from the command's arrival (set
             * in swfsim_timed), however long its event waited */
            n->state = SWFSIM_N_WAITING;
        }
        break;
    case SOCKMODEL_BARRIER_ENTER:
        swfsim_barrier_enter(sim, n);
        break;
    case SOCKMODEL_FINISH:
        swfsim_finish(sim, n);
        break;
    default:
        n->active = 0;
        break;
    }
}

void swfsim_count_send(swfsim_t *sim, swfsim_node_t *n, const swfsim_msg_t *m)
{
    n->msgs_sent++;
    n->bytes_sent += m->len;
    sim->msgs_total++;
    sim->bytes_total += m->len;
    if (NULL != sim->trace) {
        swfsim_trace_send(sim, n, m);
    }
}

/* a complete SEND: the payload is in m */
static void swfsim_send(swfsim_t *sim, swfsim_node_t *n, swfsim_msg_t *m)
{
    swfsim_count_send(sim, n, m);
    m->t_send = n->clock;
    if (0 != swfsim_post(sim, n, m)) {
        swfsim_node_drop(sim, n, "out of memory for an event");
    }
}

int swfsim_post(swfsim_t *sim, swfsim_node_t *n, swfsim_msg_t *m)
{
    if (swfsim_is_torus(sim)) {
        if (0 != swfsim_inject_offer(sim, n, m)) {
            swfsim_msg_free(sim, m);
            return -1;
        }
    } else {
        swfsim_deliver(sim, m, 0);
    }
    return 0;
}

/* a command that must run at the node's current simulated time */
static void swfsim_timed(swfsim_t *sim, swfsim_node_t *n, const tc_sockmodel_cmd_t *c)
{
    n->cmd = *c;
    n->active = 1;
    n->gen++;
    if (SOCKMODEL_WAITING_START == c->request) {
        uint32_t us = c->param[0];
        if (us > SOCKMODEL_WAIT_MAX_US) {
            us = SOCKMODEL_WAIT_MAX_US;
        }
        n->wait_since_us = swfsim_now_us();
        n->deadline_us = n->wait_since_us + us;
    }
    if (swfsim_is_torus(sim)) {
        swfsim_event_t ev = {
            .time = n->clock, .type = SWFSIM_EV_CMD, .node = n->rank, .gen = n->gen};
        if (0 != swfsim_heap_push(&sim->heap, &ev)) {
            swfsim_node_drop(sim, n, "out of memory for an event");
        }
    } else {
        swfsim_run_cmd(sim, n);
    }
}

/* WAITING_STOP while a WAITING_START is outstanding */
static void swfsim_wait_stop(swfsim_t *sim, swfsim_node_t *n)
{
    if (SWFSIM_N_WAITING == n->state && sim->now > n->clock) {
        n->clock = sim->now;
    }
    n->gen++; /* a WAITING_START event still queued is now stale */
    swfsim_wait_account(n);
    n->waits_stopped++;
    n->state = SWFSIM_N_RUNNING;
    n->active = 0;
    swfsim_reply(sim, n, SOCKMODEL_WAITING_START, SOCKMODEL_ST_STOPPED, 0, 0, 0, 0);
    swfsim_reply(sim, n, SOCKMODEL_WAITING_STOP, SOCKMODEL_ST_OK, 0, 0, 0, 0);
}

/* execute one decoded, checked command; returns -1 if n was dropped */
static int swfsim_exec(swfsim_t *sim, swfsim_node_t *n, const tc_sockmodel_cmd_t *c)
{
    uint32_t N = sim->nnodes;

    switch (c->request) {
    case SOCKMODEL_SIZE:
        swfsim_reply(sim, n, SOCKMODEL_SIZE, SOCKMODEL_ST_OK, N, sim->cfg.max_msg,
                     (uint32_t) sim->cfg.model,
                     SOCKMODEL_FEATURE_WAIT_RECV | SOCKMODEL_FEATURE_WATCH |
                         (swfsim_can_join(sim) ? SOCKMODEL_FEATURE_JOIN : 0u));
        break;
    case SOCKMODEL_WATCH:
        return swfsim_watch_start(sim, n, c);
    case SOCKMODEL_RANK:
        swfsim_reply(sim, n, SOCKMODEL_RANK, SOCKMODEL_ST_OK, n->rank, 0, 0, 0);
        break;
    case SOCKMODEL_CONSUMETIME:
        if (swfsim_is_torus(sim)) {
            n->clock += (uint64_t) c->param[0] * sim->cfg.cycle_ps;
        }
        break;
    case SOCKMODEL_SEND: {
        swfsim_msg_t *m;
        if (sim->held_bytes + c->param[2] > sim->cfg.mem_limit) {
            swfsim_node_drop(sim, n,
                             "SEND of %u bytes would exceed the simulator's memory "
                             "limit (%llu bytes held)",
                             c->param[2], (unsigned long long) sim->held_bytes);
            return -1;
        }
        m = malloc(sizeof(*m) + c->param[2]);
        if (NULL == m) {
            swfsim_node_drop(sim, n, "cannot allocate %u bytes for a SEND", c->param[2]);
            return -1;
        }
        m->next = NULL;
        m->src = n->rank;
        m->dst = c->param[0];
        m->tag = c->param[1];
        m->len = c->param[2];
        sim->held_bytes += m->len;
        m->t_send = n->clock;
        m->t_deliver = 0;
        n->rx_msg = m;
        n->rx_got = 0;
        break;
    }
    case SOCKMODEL_BARRIER_INIT: {
        uint32_t id = n->barrier_inits;
        uint32_t parts = c->param[0] ? c->param[0] : N;
        swfsim_barrier_t *b;
        if (id >= SOCKMODEL_MAX_BARRIERS) {
            swfsim_node_drop(sim, n, "more than %u barriers", SOCKMODEL_MAX_BARRIERS);
            return -1;
        }
        b = &sim->barriers[id];
        if (0 == b->participants) {
            b->participants = parts;
            if (id >= sim->nbarriers) {
                sim->nbarriers = id + 1;
            }
        } else if (b->participants != parts) {
            swfsim_node_drop(sim, n, "BARRIER_INIT %u with %u participants, the barrier has %u", id,
                             parts, b->participants);
            return -1;
        }
        n->barrier_inits++;
        swfsim_reply(sim, n, SOCKMODEL_BARRIER_INIT, SOCKMODEL_ST_OK, id, 0, 0, 0);
        break;
    }
    case SOCKMODEL_BARRIER_ENTER:
        if (c->param[0] >= n->barrier_inits) {
            swfsim_node_drop(sim, n, "BARRIER_ENTER %u: barrier not initialised by this node",
                             c->param[0]);
            return -1;
        }
        swfsim_timed(sim, n, c);
        break;
    case SOCKMODEL_WAITING_STOP:
        /* nothing outstanding: the WAITING_START reply already went out */
        swfsim_reply(sim, n, SOCKMODEL_WAITING_STOP, SOCKMODEL_ST_OK, 0, 0, 0, 0);
        break;
    default:
        /* FINISH, RECV*, PROBE*, WAITING_START */
        swfsim_timed(sim, n, c);
        break;
    }
    return 0;
}

/* parse and execute as many buffered commands as n's state allows */
void swfsim_parse(swfsim_t *sim, swfsim_node_t *n)
{
    tc_sockmodel_cmd_t c;
    const char *why;

    for (;;) {
        size_t avail;

        if (SWFSIM_N_RUNNING != n->state && SWFSIM_N_WAITING != n->state &&
            SWFSIM_N_BLOCKED_RECV != n->state && SWFSIM_N_BLOCKED_BARRIER != n->state) {
            return;
        }
        if (n->out_count >= SWFSIM_OUT_MAX) {
            /* the client does not read its replies: wait until it does */
            n->out_full = 1;
            break;
        }
        avail = n->in_len - n->in_off;
        if (NULL != n->rx_msg) {
            swfsim_msg_t *m = n->rx_msg;
            size_t need = m->len - n->rx_got;
            size_t take = need < avail ? need : avail;
            memcpy(m->data + n->rx_got, n->in + n->in_off, take);
            n->in_off += take;
            n->rx_got += (uint32_t) take;
            if (n->rx_got < m->len) {
                break;
            }
            n->rx_msg = NULL;
            swfsim_send(sim, n, m);
            continue;
        }
        if (avail < SOCKMODEL_CMD_BYTES) {
            break;
        }
        if (n->active) {
            uint32_t req;
            if (SWFSIM_N_WAITING != n->state &&
                !(SWFSIM_N_RUNNING == n->state && SOCKMODEL_WAITING_START == n->cmd.request)) {
                break; /* pipelined commands wait for the current one */
            }
            req = tc_sockmodel_get32(n->in + n->in_off);
            if (SOCKMODEL_WAITING_STOP != req) {
                swfsim_node_drop(sim, n, "%s (code %u) while WAITING_START is unanswered",
                                 tc_sockmodel_request_name(req), req);
                return;
            }
            tc_sockmodel_cmd_decode(&c, n->in + n->in_off);
            n->in_off += SOCKMODEL_CMD_BYTES;
            if (NULL != sim->trace) {
                swfsim_trace_cmd(sim, n, &c);
            }
            if (swfsim_is_torus(sim)) {
                n->clock += (uint64_t) c.consumetime * sim->cfg.cycle_ps;
            }
            swfsim_wait_stop(sim, n);
            continue;
        }
        tc_sockmodel_cmd_decode(&c, n->in + n->in_off);
        n->in_off += SOCKMODEL_CMD_BYTES;
        why = tc_sockmodel_cmd_check(&c, sim->nnodes, sim->cfg.max_msg);
        if (NULL != why) {
            swfsim_node_drop(sim, n, "%s: request %u (%s) params %u %u %u %u", why, c.request,
                             tc_sockmodel_request_name(c.request), c.param[0], c.param[1],
                             c.param[2], c.param[3]);
            return;
        }
        if (NULL != sim->trace) {
            swfsim_trace_cmd(sim, n, &c);
        }
        if (swfsim_is_torus(sim)) {
            n->clock += (uint64_t) c.consumetime * sim->cfg.cycle_ps;
        }
        if (0 != swfsim_exec(sim, n, &c)) {
            return;
        }
    }
    /* keep the unparsed rest at the front of the buffer */
    if (n->in_off == n->in_len) {
        n->in_off = n->in_len = 0;
    } else if (n->in_off > 0 && n->in_len == n->in_cap) {
        memmove(n->in, n->in + n->in_off, n->in_len - n->in_off);
        n->in_len -= n->in_off;
        n->in_off = 0;
    }
}
