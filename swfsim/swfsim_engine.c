/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * swfsim_engine.c: the SockModel protocol engine.  Parses commands from
 * each node's input buffer, keeps the per-node message queues, runs the
 * timed events in conservative order (an event is processed only when no
 * running node's clock is behind it), and queues replies.  The network
 * layer (swfsim_net.c) moves the bytes; this file makes no system calls
 * apart from reading the clock (swfsim_clock.c). Messages go through
 * swfsim_log.c.
 */

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "swfsim.h"
#include "swfsim_trace.h"

#define SWFSIM_IN_CAP (64 * 1024)

enum { SWFSIM_MATCH_ANY, SWFSIM_MATCH_FROM, SWFSIM_MATCH_TAG };

static uint32_t swfsim_slot_index(const swfsim_t *sim, const swfsim_node_t *n)
{
    return (uint32_t) (n - sim->slots);
}

static int swfsim_is_torus(const swfsim_t *sim)
{
    return SOCKMODEL_MODEL_TORUS == sim->cfg.model;
}

/* a node that takes part in the run and can still act */
static int swfsim_alive(const swfsim_node_t *n)
{
    return SWFSIM_N_RUNNING == n->state || SWFSIM_N_BLOCKED_RECV == n->state ||
        SWFSIM_N_BLOCKED_BARRIER == n->state || SWFSIM_N_WAITING == n->state;
}

/* a WAITING_START is outstanding: waiting, or its event not yet due */
static int swfsim_waits(const swfsim_node_t *n)
{
    return SWFSIM_N_WAITING == n->state ||
        (SWFSIM_N_RUNNING == n->state && n->active && SOCKMODEL_WAITING_START == n->cmd.request &&
         0 != n->cmd.param[0]);
}

static void swfsim_mark_ready(swfsim_t *sim, swfsim_node_t *n)
{
    if (!n->on_ready) {
        n->on_ready = 1;
        sim->ready[sim->nready++] = swfsim_slot_index(sim, n);
    }
}

static void swfsim_mark_dirty(swfsim_t *sim, swfsim_node_t *n)
{
    if (!n->on_dirty) {
        n->on_dirty = 1;
        sim->dirty[sim->ndirty++] = swfsim_slot_index(sim, n);
    }
}

int swfsim_init(swfsim_t *sim, const swfsim_config_t *cfg)
{
    memset(sim, 0, sizeof(*sim));
    sim->cfg = *cfg;
    sim->epfd = -1;
    sim->lfd = -1;
    /* room for N nodes plus some would-be clients to refuse politely */
    sim->nslots = cfg->nodes * 2 + 16;
    sim->slots = calloc(sim->nslots, sizeof(*sim->slots));
    sim->nodes = calloc(cfg->nodes, sizeof(*sim->nodes));
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
/* output                                                              */

static swfsim_out_t *swfsim_out_push(swfsim_t *sim, swfsim_node_t *n)
{
    swfsim_out_t *o;

    if (n->out_count == n->out_cap) {
        size_t ncap = n->out_cap ? n->out_cap * 2 : 16;
        swfsim_out_t *no = malloc(ncap * sizeof(*no));
        if (NULL == no) {
            return NULL;
        }
        for (size_t i = 0; i < n->out_count; i++) {
            no[i] = n->out[(n->out_head + i) % n->out_cap];
        }
        free(n->out);
        n->out = no;
        n->out_cap = ncap;
        n->out_head = 0;
    }
    o = &n->out[(n->out_head + n->out_count) % n->out_cap];
    n->out_count++;
    if (n->out_count > n->out_peak) {
        n->out_peak = n->out_count;
    }
    swfsim_mark_dirty(sim, n);
    return o;
}

void swfsim_node_reply(swfsim_t *sim, swfsim_node_t *n, const tc_sockmodel_reply_t *r,
                       swfsim_msg_t *payload)
{
    swfsim_out_t *o = swfsim_out_push(sim, n);

    if (NULL == o) {
        swfsim_msg_free(sim, payload);
        swfsim_node_drop(sim, n, "out of memory for a reply");
        return;
    }
    tc_sockmodel_reply_encode(o->hdr, r);
    o->hdr_len = SOCKMODEL_REPLY_BYTES;
    o->msg = payload;
}

static void swfsim_node_word(swfsim_t *sim, swfsim_node_t *n, uint32_t v)
{
    swfsim_out_t *o = swfsim_out_push(sim, n);

    if (NULL == o) {
        swfsim_node_drop(sim, n, "out of memory for a reply");
        return;
    }
    tc_sockmodel_put32(o->hdr, v);
    o->hdr_len = 4;
    o->msg = NULL;
}

static void swfsim_reply(swfsim_t *sim, swfsim_node_t *n, uint32_t code, uint32_t status,
                         uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3)
{
    tc_sockmodel_reply_t r;

    r.code = code;
    r.status = status;
    r.arg[0] = a0;
    r.arg[1] = a1;
    r.arg[2] = a2;
    r.arg[3] = a3;
    r.clock_ns = n->clock / SWFSIM_PS_PER_NS;
    swfsim_node_reply(sim, n, &r, NULL);
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
static void swfsim_discard_queue(swfsim_t *sim, swfsim_node_t *n)
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

static void swfsim_hello(swfsim_t *sim, swfsim_node_t *n)
{
    uint32_t r, N = sim->cfg.nodes, ready = 0;

    if (n->in_len - n->in_off < SOCKMODEL_HELLO_BYTES) {
        return;
    }
    r = tc_sockmodel_get32(n->in + n->in_off);
    if (SOCKMODEL_HELLO_AUTH == r) {
        /* the hello with a token: marker, rank, token */
        const unsigned char *token = n->in + n->in_off + 8;

        if (n->in_len - n->in_off < SOCKMODEL_HELLO_AUTH_BYTES) {
            return;
        }
        r = tc_sockmodel_get32(n->in + n->in_off + 4);
        n->in_off += SOCKMODEL_HELLO_AUTH_BYTES;
        if (sim->cfg.have_token && !tc_sockmodel_token_equal(token, sim->cfg.token)) {
            n->req_rank = r;
            swfsim_refuse(sim, n, "wrong job token", r);
            return;
        }
    } else {
        n->in_off += SOCKMODEL_HELLO_BYTES;
        if (sim->cfg.have_token) {
            n->req_rank = r;
            swfsim_refuse(sim, n, "no job token in the hello", r);
            return;
        }
    }
    n->req_rank = r;
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

/* ------------------------------------------------------------------ */
/* message queues                                                      */

static int swfsim_match(const swfsim_msg_t *m, int kind, uint32_t val)
{
    switch (kind) {
    case SWFSIM_MATCH_FROM:
        return m->src == val;
    case SWFSIM_MATCH_TAG:
        return m->tag == val;
    default:
        return 1;
    }
}

static void swfsim_cmd_match(const tc_sockmodel_cmd_t *c, int *kind, uint32_t *val)
{
    *val = c->param[0];
    switch (c->request) {
    case SOCKMODEL_RECVFROM:
    case SOCKMODEL_PROBEFROM:
        *kind = SWFSIM_MATCH_FROM;
        break;
    case SOCKMODEL_RECVTAG:
    case SOCKMODEL_PROBETAG:
        *kind = SWFSIM_MATCH_TAG;
        break;
    default:
        *kind = SWFSIM_MATCH_ANY;
        break;
    }
}

/* first queued message matching c; *prev gets its predecessor */
static swfsim_msg_t *swfsim_find(swfsim_node_t *n, const tc_sockmodel_cmd_t *c, swfsim_msg_t **prev)
{
    int kind;
    uint32_t val;
    swfsim_msg_t *p = NULL;

    swfsim_cmd_match(c, &kind, &val);
    for (swfsim_msg_t *m = n->qhead; NULL != m; p = m, m = m->next) {
        if (swfsim_match(m, kind, val)) {
            *prev = p;
            return m;
        }
    }
    return NULL;
}

static void swfsim_unlink(swfsim_node_t *n, swfsim_msg_t *m, swfsim_msg_t *prev)
{
    if (NULL == prev) {
        n->qhead = m->next;
    } else {
        prev->next = m->next;
    }
    if (n->qtail == m) {
        n->qtail = prev;
    }
    m->next = NULL;
    n->queued_bytes -= m->len;
}

/* hand message m (already unlinked) to n as the answer to a RECV* */
static void swfsim_give(swfsim_t *sim, swfsim_node_t *n, swfsim_msg_t *m, uint32_t code)
{
    tc_sockmodel_reply_t r;

    if (m->t_deliver > n->clock) {
        n->wait_ps += m->t_deliver - n->clock;
        n->clock = m->t_deliver;
    }
    n->msgs_recv++;
    n->bytes_recv += m->len;
    /* a node-down notice is no message of the run: a replay has no send
     * to match it */
    if (NULL != sim->trace && !swfsim_watch_is_notice(n, m)) {
        swfsim_trace_recv(sim, n, m);
    }
    r.code = code;
    r.status = SOCKMODEL_ST_OK;
    r.arg[0] = m->src;
    r.arg[1] = m->tag;
    r.arg[2] = m->len;
    r.arg[3] = 0;
    r.clock_ns = n->clock / SWFSIM_PS_PER_NS;
    swfsim_node_reply(sim, n, &r, m);
}

static void swfsim_found(swfsim_t *sim, swfsim_node_t *n, uint32_t code, const swfsim_msg_t *m)
{
    if (m->t_deliver > n->clock) {
        n->clock = m->t_deliver;
    }
    swfsim_reply(sim, n, code, SOCKMODEL_ST_FOUND, m->src, m->tag, m->len, 0);
}

/* a WAITING_START ends: the wall time since it was read counts as waiting */
static void swfsim_wait_account(swfsim_node_t *n)
{
    uint64_t now = swfsim_now_us();

    if (now > n->wait_since_us) {
        n->wait_wall_us += now - n->wait_since_us;
    }
}

/* answer n's WAITING_START with the first queued message: report it
 * (FOUND), or with SOCKMODEL_WAIT_RECV hand it over like RECV */
static void swfsim_wait_answer(swfsim_t *sim, swfsim_node_t *n)
{
    swfsim_msg_t *m = n->qhead;

    swfsim_wait_account(n);
    n->waits_found++;

    if (0 != (n->cmd.param[1] & SOCKMODEL_WAIT_RECV)) {
        swfsim_unlink(n, m, NULL);
        swfsim_give(sim, n, m, SOCKMODEL_WAITING_START);
    } else {
        swfsim_found(sim, n, SOCKMODEL_WAITING_START, m);
    }
}

/* a node leaves RECV/WAITING/BARRIER and may parse further commands */
static void swfsim_resume(swfsim_t *sim, swfsim_node_t *n)
{
    n->state = SWFSIM_N_RUNNING;
    n->active = 0;
    swfsim_mark_ready(sim, n);
}

/* message m has reached its destination at time t */
static void swfsim_deliver(swfsim_t *sim, swfsim_msg_t *m, uint64_t t)
{
    swfsim_node_t *d = sim->nodes[m->dst];
    swfsim_msg_t *prev, *hit;

    m->t_deliver = t;
    if (!swfsim_alive(d)) {
        d->discarded++;
        sim->discarded_total++;
        swfsim_msg_free(sim, m);
        return;
    }
    m->next = NULL;
    if (NULL == d->qtail) {
        d->qhead = m;
    } else {
        d->qtail->next = m;
    }
    d->qtail = m;
    d->queued_bytes += m->len;

    if (SWFSIM_N_BLOCKED_RECV == d->state) {
        hit = swfsim_find(d, &d->cmd, &prev);
        if (NULL != hit) {
            swfsim_unlink(d, hit, prev);
            swfsim_give(sim, d, hit, d->cmd.request);
            swfsim_resume(sim, d);
        }
    } else if (SWFSIM_N_WAITING == d->state) {
        swfsim_wait_answer(sim, d);
        swfsim_resume(sim, d);
    }
}

/* ------------------------------------------------------------------ */
/* commands                                                            */

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
    for (uint32_t r = 0; r < sim->cfg.nodes; r++) {
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
static void swfsim_run_cmd(swfsim_t *sim, swfsim_node_t *n)
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

/* a complete SEND: the payload is in m */
static void swfsim_send(swfsim_t *sim, swfsim_node_t *n, swfsim_msg_t *m)
{
    n->msgs_sent++;
    n->bytes_sent += m->len;
    sim->msgs_total++;
    sim->bytes_total += m->len;
    if (NULL != sim->trace) {
        swfsim_trace_send(sim, n, m);
    }
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
    uint32_t N = sim->cfg.nodes;

    switch (c->request) {
    case SOCKMODEL_SIZE:
        swfsim_reply(sim, n, SOCKMODEL_SIZE, SOCKMODEL_ST_OK, N, sim->cfg.max_msg,
                     (uint32_t) sim->cfg.model,
                     SOCKMODEL_FEATURE_WAIT_RECV | SOCKMODEL_FEATURE_WATCH);
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
static void swfsim_parse(swfsim_t *sim, swfsim_node_t *n)
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
        why = tc_sockmodel_cmd_check(&c, sim->cfg.nodes, sim->cfg.max_msg);
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

void swfsim_node_output_drained(swfsim_t *sim, swfsim_node_t *n)
{
    if (n->out_full && n->out_count <= SWFSIM_OUT_MAX / 2) {
        n->out_full = 0;
        swfsim_mark_ready(sim, n);
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

/* ------------------------------------------------------------------ */
/* time                                                                */

/* smallest clock of the nodes that hold back time */
static uint64_t swfsim_min_clock(const swfsim_t *sim)
{
    uint64_t m = UINT64_MAX;

    for (uint32_t r = 0; r < sim->cfg.nodes; r++) {
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

    for (uint32_t r = 0; r < sim->cfg.nodes; r++) {
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
    for (uint32_t r = 0; r < sim->cfg.nodes; r++) {
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
        for (uint32_t r = 0; r < sim->cfg.nodes; r++) {
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
    for (uint32_t r = 0; r < sim->cfg.nodes; r++) {
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
