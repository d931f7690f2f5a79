/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * swfsim_engine.c: the SockModel protocol engine's state and the life of
 * a node: the simulator's tables (init, fini, connection slots), the
 * hello and the start of the run, a node dropped, and bytes arriving.
 * The engine's other pieces: swfsim_output.c (replies), swfsim_queue.c
 * (message queues and delivery), swfsim_cmd.c (commands), swfsim_step.c
 * (simulated time); swfsim_engine.h is what they share.  The network
 * layer (swfsim_net.c) moves the bytes; the engine makes no system calls
 * apart from reading the clock (swfsim_clock.c). Messages go through
 * swfsim_log.c.
 */

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "swfsim_engine.h"

#define SWFSIM_IN_CAP (64 * 1024)

int swfsim_init(swfsim_t *sim, const swfsim_config_t *cfg)
{
    memset(sim, 0, sizeof(*sim));
    sim->cfg = *cfg;
    sim->epfd = -1;
    sim->lfd = -1;
    /* room for N nodes and those that may join, plus some would-be
     * clients to refuse politely (both counts are at most
     * SOCKMODEL_MAX_NODES: no overflow) */
    sim->nnodes = cfg->nodes;
    sim->nslots = (cfg->nodes + cfg->max_joined) * 2 + 16;
    sim->slots = calloc(sim->nslots, sizeof(*sim->slots));
    sim->nodes = calloc((size_t) cfg->nodes + cfg->max_joined, sizeof(*sim->nodes));
    sim->dirty = calloc(sim->nslots, sizeof(*sim->dirty));
    sim->ready = calloc(sim->nslots, sizeof(*sim->ready));
    sim->barriers = calloc(SOCKMODEL_MAX_BARRIERS, sizeof(*sim->barriers));
    if (NULL == sim->slots || NULL == sim->nodes || NULL == sim->dirty || NULL == sim->ready ||
        NULL == sim->barriers) {
        swfsim_fini(sim);
        return -1;
    }
    for (uint32_t i = 0; i < sim->nslots; i++) {
        sim->slots[i].fd = -1;
    }
    swfsim_heap_init(&sim->heap);
    if (swfsim_is_torus(sim) && 0 != swfsim_torus_init(&sim->torus, cfg)) {
        swfsim_fini(sim);
        return -1;
    }
    sim->latency.min = UINT64_MAX;
    sim->wall_start = swfsim_wall();
    return 0;
}

void swfsim_msg_free(swfsim_t *sim, swfsim_msg_t *m)
{
    if (NULL != m) {
        sim->held_bytes -= m->len;
        free(m);
    }
}

static void swfsim_free_queue(swfsim_t *sim, swfsim_node_t *n)
{
    while (NULL != n->qhead) {
        swfsim_msg_t *m = n->qhead;
        n->qhead = m->next;
        swfsim_msg_free(sim, m);
    }
    n->qtail = NULL;
    n->queued_bytes = 0;
}

static void swfsim_free_output(swfsim_t *sim, swfsim_node_t *n)
{
    for (size_t i = 0; i < n->out_count; i++) {
        swfsim_msg_free(sim, n->out[(n->out_head + i) % n->out_cap].msg);
    }
    free(n->out);
    n->out = NULL;
    n->out_head = n->out_count = n->out_cap = n->out_off = 0;
}

/* release the buffers of a connection; statistics stay for the report */
static void swfsim_node_release(swfsim_t *sim, swfsim_node_t *n)
{
    free(n->in);
    n->in = NULL;
    n->in_off = n->in_len = n->in_cap = 0;
    swfsim_msg_free(sim, n->rx_msg);
    n->rx_msg = NULL;
    swfsim_free_output(sim, n);
}

void swfsim_fini(swfsim_t *sim)
{
    swfsim_event_t ev;

    if (NULL != sim->slots) {
        for (uint32_t i = 0; i < sim->nslots; i++) {
            swfsim_node_release(sim, &sim->slots[i]);
            swfsim_free_queue(sim, &sim->slots[i]);
            while (NULL != sim->slots[i].inj_head) {
                swfsim_msg_t *m = sim->slots[i].inj_head;
                sim->slots[i].inj_head = m->next;
                swfsim_msg_free(sim, m);
            }
        }
    }
    while (0 == swfsim_heap_pop(&sim->heap, &ev)) {
        if (SWFSIM_EV_DELIVER == ev.type) { /* INJECT: freed with its queue */
            swfsim_msg_free(sim, ev.msg);
        }
    }
    swfsim_heap_fini(&sim->heap);
    swfsim_torus_fini(&sim->torus);
    free(sim->slots);
    free(sim->nodes);
    free(sim->dirty);
    free(sim->ready);
    free(sim->barriers);
    sim->slots = NULL;
    sim->nodes = NULL;
    sim->dirty = sim->ready = NULL;
    sim->barriers = NULL;
}

swfsim_node_t *swfsim_slot_alloc(swfsim_t *sim)
{
    for (uint32_t i = 0; i < sim->nslots; i++) {
        swfsim_node_t *n = &sim->slots[i];
        int on_dirty, on_ready;
        if (SWFSIM_N_FREE != n->state) {
            continue;
        }
        /* the slot may still be listed for a flush or a parse: keep the
         * flags so that it is never listed twice */
        on_dirty = n->on_dirty;
        on_ready = n->on_ready;
        memset(n, 0, sizeof(*n));
        n->on_dirty = on_dirty;
        n->on_ready = on_ready;
        n->fd = -1;
        n->in = malloc(SWFSIM_IN_CAP);
        if (NULL == n->in) {
            return NULL;
        }
        n->in_cap = SWFSIM_IN_CAP;
        n->state = SWFSIM_N_HELLO;
        n->conn_order = sim->conn_counter++;
        n->rank = UINT32_MAX;
        return n;
    }
    return NULL;
}

/* ------------------------------------------------------------------ */
/* connection life                                                     */

static void swfsim_refuse(swfsim_t *sim, swfsim_node_t *n, const char *why, uint32_t asked)
{
    swfsim_warn("refusing a client (asked for rank %u): %s", asked, why);
    sim->refused++;
    n->in_off = n->in_len = 0;
    n->state = SWFSIM_N_CLOSING;
    swfsim_node_word(sim, n, SOCKMODEL_RANK_REFUSED);
}

/* Messages still queued for a node that leaves are counted and freed. */
void swfsim_discard_queue(swfsim_t *sim, swfsim_node_t *n)
{
    while (NULL != n->qhead) {
        swfsim_msg_t *m = n->qhead;
        n->qhead = m->next;
        n->discarded++;
        sim->discarded_total++;
        swfsim_msg_free(sim, m);
    }
    n->qtail = NULL;
    n->queued_bytes = 0;
}

void swfsim_node_drop(swfsim_t *sim, swfsim_node_t *n, const char *fmt, ...)
{
    va_list ap;
    int had_rank = (UINT32_MAX != n->rank);

    if (SWFSIM_N_FREE == n->state || SWFSIM_N_DEAD == n->state) {
        return;
    }
    va_start(ap, fmt);
    vsnprintf(n->why, sizeof(n->why), fmt, ap);
    va_end(ap);
    if (had_rank) {
        swfsim_warn("dropping node %u: %s", n->rank, n->why);
    } else if (SWFSIM_N_CLOSING != n->state) {
        swfsim_warn("dropping a client before the start: %s", n->why);
    }
    swfsim_net_close_node(sim, n);
    swfsim_node_release(sim, n);
    n->active = 0;
    n->gen++;
    if (had_rank) {
        if (SWFSIM_N_FINISHED != n->state) {
            sim->dropped++;
            if (0 == sim->exit_code) {
                sim->exit_code = 3;
            }
            n->state = SWFSIM_N_DEAD;
            swfsim_watch_died(sim, n);
        }
        swfsim_discard_queue(sim, n);
    } else {
        /* before the start the slot becomes free again */
        if (SWFSIM_N_CLOSING != n->state) {
            sim->dropped++;
        }
        swfsim_free_queue(sim, n);
        n->state = SWFSIM_N_FREE;
    }
}

static int swfsim_cmp_conn(const void *a, const void *b)
{
    const swfsim_node_t *x = *(swfsim_node_t *const *) a;
    const swfsim_node_t *y = *(swfsim_node_t *const *) b;
    return x->conn_order < y->conn_order ? -1 : (x->conn_order > y->conn_order);
}

/* all N nodes are there: hand out ranks and send the welcomes */
static void swfsim_start(swfsim_t *sim)
{
    uint32_t N = sim->cfg.nodes, k = 0, next = 0;
    swfsim_node_t **any = calloc(N, sizeof(*any));

    for (uint32_t i = 0; i < sim->nslots; i++) {
        swfsim_node_t *n = &sim->slots[i];
        if (SWFSIM_N_READY != n->state) {
            continue;
        }
        if (SOCKMODEL_RANK_ANY == n->req_rank) {
            if (NULL != any) {
                any[k++] = n;
            }
        } else {
            sim->nodes[n->req_rank] = n;
            n->rank = n->req_rank;
        }
    }
    if (NULL != any) {
        qsort(any, k, sizeof(*any), swfsim_cmp_conn);
        for (uint32_t j = 0; j < k; j++) {
            while (next < N && NULL != sim->nodes[next]) {
                next++;
            }
            sim->nodes[next] = any[j];
            any[j]->rank = next;
        }
        free(any);
    }
    sim->started = 1;
    sim->wall_run_start = swfsim_wall();
    for (uint32_t r = 0; r < N; r++) {
        swfsim_node_t *n = sim->nodes[r];
        n->state = SWFSIM_N_RUNNING;
        n->clock = 0;
        swfsim_node_word(sim, n, r);
        swfsim_mark_ready(sim, n);
    }
    /* connections still in their hello are beyond N */
    for (uint32_t i = 0; i < sim->nslots; i++) {
        if (SWFSIM_N_HELLO == sim->slots[i].state) {
            swfsim_refuse(sim, &sim->slots[i], "the run has already started", 0);
        }
    }
    swfsim_log(sim, "all %u nodes connected, %s model: running", N,
               swfsim_is_torus(sim) ? "torus" : "simpel");
}

/* a node joins the running simulation: the next node number, running at
 * once (its clock is the simulation's, 0 in simpel) */
static void swfsim_join(swfsim_t *sim, swfsim_node_t *n)
{
    uint32_t r;

    if (!sim->started) {
        swfsim_refuse(sim, n, "a node may join only once the run has started", n->req_rank);
        return;
    }
    if (!swfsim_can_join(sim)) {
        swfsim_refuse(sim, n,
                      swfsim_is_torus(sim) ? "the torus model takes no joining nodes"
                                           : "joining is off (--max-joined 0)",
                      n->req_rank);
        return;
    }
    if (sim->done) {
        swfsim_refuse(sim, n, "the run is over", n->req_rank);
        return;
    }
    if (sim->joined >= sim->cfg.max_joined) {
        swfsim_refuse(sim, n, "no room for another joining node (--max-joined)", n->req_rank);
        return;
    }
    r = sim->nnodes;
    sim->nodes[r] = n;
    n->rank = r;
    n->state = SWFSIM_N_RUNNING;
    n->clock = sim->now;
    sim->nnodes++;
    sim->joined++;
    swfsim_node_word(sim, n, r);
    swfsim_mark_ready(sim, n);
    swfsim_log(sim, "node %u joined the run (%u of at most %u)", r, sim->joined,
               sim->cfg.max_joined);
}

static void swfsim_hello(swfsim_t *sim, swfsim_node_t *n)
{
    tc_sockmodel_hello_t h;
    uint32_t r, N = sim->cfg.nodes, ready = 0;
    size_t took = tc_sockmodel_hello_parse(n->in + n->in_off, n->in_len - n->in_off, &h);

    if (0 == took) {
        return;
    }
    n->in_off += took;
    r = h.rank;
    n->req_rank = r;
    if (sim->cfg.have_token && !h.has_token) {
        swfsim_refuse(sim, n, "no job token in the hello", r);
        return;
    }
    if (sim->cfg.have_token && !tc_sockmodel_token_equal(h.token, sim->cfg.token)) {
        swfsim_refuse(sim, n, "wrong job token", r);
        return;
    }
    if (SOCKMODEL_RANK_JOIN == r) {
        swfsim_join(sim, n);
        return;
    }
    if (sim->started) {
        swfsim_refuse(sim, n, "the run has already started", r);
        return;
    }
    if (SOCKMODEL_RANK_ANY != r && r >= N) {
        swfsim_refuse(sim, n, "no such rank", r);
        return;
    }
    for (uint32_t i = 0; i < sim->nslots; i++) {
        swfsim_node_t *o = &sim->slots[i];
        if (SWFSIM_N_READY == o->state) {
            if (SOCKMODEL_RANK_ANY != r && o->req_rank == r) {
                swfsim_refuse(sim, n, "rank already taken", r);
                return;
            }
            ready++;
        }
    }
    n->state = SWFSIM_N_READY;
    if (ready + 1 == N) {
        swfsim_start(sim);
    }
}

void swfsim_node_input(swfsim_t *sim, swfsim_node_t *n)
{
    if (SWFSIM_N_HELLO == n->state) {
        swfsim_hello(sim, n);
    }
    if (SWFSIM_N_CLOSING == n->state || SWFSIM_N_FINISHED == n->state) {
        n->in_off = n->in_len = 0; /* nobody listens any more */
        return;
    }
    if (sim->started) {
        swfsim_parse(sim, n);
    }
}
