/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * swfsim_vnode.c: the engine of virtual nodes.  Each node runs its
 * program (swfsim_workload.h) until it blocks in a receive or a barrier;
 * its SENDs become the same INJECT and DELIVER events as a live node's,
 * processed in time order from the event heap through the torus model.
 * Nothing waits for real time, so events run as fast as the heap turns.
 *
 * A node always runs at a clock >= the time of the event being processed
 * (it starts at 0, and is woken at a delivery or a barrier's end), so
 * every packet it offers lies in the future and packets reach the torus
 * in time order, as in a live run.  Received messages wait in a hash of
 * per-(destination, source) FIFO queues, so a receive from a given
 * source costs the same whatever else is queued.
 */

#include <stdlib.h>
#include <string.h>

#include "swfsim_workload.h"
#include "swfsim_trace.h"

/* queued messages from one source to one destination */
typedef struct swfsim_vq {
    uint64_t key; /* dst << 32 | src */
    swfsim_msg_t *head, *tail;
    struct swfsim_vq *next;
} swfsim_vq_t;

typedef struct swfsim_vnode {
    swfsim_vop_t op; /* the operation under way */
    uint64_t idx;
    int have; /* op is loaded (its compute time is counted) */
    int blocked;
} swfsim_vnode_t;

typedef struct swfsim_vrunner {
    swfsim_t *sim;
    const swfsim_vprog_t *prog;
    swfsim_vnode_t *vn;
    uint32_t *ready; /* nodes to run (woken) */
    uint32_t nready;
    swfsim_vq_t **bucket;
    uint64_t nbucket, nq;
    swfsim_vq_t *free_q;
    swfsim_msg_t *free_msg;
    uint32_t barrier_in;
    uint64_t barrier_latest;
    int oom;
} swfsim_vrunner_t;

static swfsim_msg_t *swfsim_vmsg_alloc(swfsim_vrunner_t *v)
{
    swfsim_msg_t *m = v->free_msg;

    if (NULL != m) {
        v->free_msg = m->next;
        return m;
    }
    m = malloc(sizeof(*m));
    if (NULL == m) {
        v->oom = 1;
    }
    return m;
}

static void swfsim_vmsg_free(swfsim_vrunner_t *v, swfsim_msg_t *m)
{
    m->next = v->free_msg;
    v->free_msg = m;
}

static uint64_t swfsim_vq_hash(uint64_t key, uint64_t n)
{
    key ^= key >> 29;
    key *= 0xbf58476d1ce4e5b9ull;
    key ^= key >> 32;
    return key & (n - 1);
}

static int swfsim_vq_grow(swfsim_vrunner_t *v)
{
    uint64_t nn = v->nbucket ? v->nbucket * 2 : 1024;
    swfsim_vq_t **nb = calloc(nn, sizeof(*nb));

    if (NULL == nb) {
        return -1;
    }
    for (uint64_t i = 0; i < v->nbucket; i++) {
        swfsim_vq_t *q = v->bucket[i];
        while (NULL != q) {
            swfsim_vq_t *next = q->next;
            uint64_t h = swfsim_vq_hash(q->key, nn);
            q->next = nb[h];
            nb[h] = q;
            q = next;
        }
    }
    free(v->bucket);
    v->bucket = nb;
    v->nbucket = nn;
    return 0;
}

static void swfsim_vq_push(swfsim_vrunner_t *v, swfsim_msg_t *m)
{
    uint64_t key = (uint64_t) m->dst << 32 | m->src;
    uint64_t h = swfsim_vq_hash(key, v->nbucket);
    swfsim_vq_t *q;

    for (q = v->bucket[h]; NULL != q && q->key != key; q = q->next) {
    }
    if (NULL == q) {
        if (v->nq >= v->nbucket && 0 == swfsim_vq_grow(v)) {
            h = swfsim_vq_hash(key, v->nbucket);
        }
        q = v->free_q;
        if (NULL != q) {
            v->free_q = q->next;
        } else if (NULL == (q = malloc(sizeof(*q)))) {
            v->oom = 1;
            swfsim_vmsg_free(v, m);
            return;
        }
        q->key = key;
        q->head = q->tail = NULL;
        q->next = v->bucket[h];
        v->bucket[h] = q;
        v->nq++;
    }
    m->next = NULL;
    if (NULL == q->tail) {
        q->head = m;
    } else {
        q->tail->next = m;
    }
    q->tail = m;
}

/* take the oldest message from src to dst with a matching tag */
static swfsim_msg_t *swfsim_vq_take(swfsim_vrunner_t *v, uint32_t dst, uint32_t src, uint32_t tag)
{
    uint64_t key = (uint64_t) dst << 32 | src;
    uint64_t h = swfsim_vq_hash(key, v->nbucket);
    swfsim_vq_t *q, **qp = &v->bucket[h];
    swfsim_msg_t *m, *prev = NULL;

    for (q = *qp; NULL != q && q->key != key; qp = &q->next, q = q->next) {
    }
    if (NULL == q) {
        return NULL;
    }
    for (m = q->head; NULL != m; prev = m, m = m->next) {
        if (SWFSIM_VTAG_ANY == tag || m->tag == tag) {
            break;
        }
    }
    if (NULL == m) {
        return NULL;
    }
    if (NULL == prev) {
        q->head = m->next;
    } else {
        prev->next = m->next;
    }
    if (q->tail == m) {
        q->tail = prev;
    }
    if (NULL == q->head) {
        /* an empty queue goes back to the free list */
        *qp = q->next;
        q->next = v->free_q;
        v->free_q = q;
        v->nq--;
    }
    return m;
}

static void swfsim_vgive(swfsim_vrunner_t *v, swfsim_node_t *n, swfsim_msg_t *m)
{
    if (NULL != v->sim->trace) {
        swfsim_trace_recv(v->sim, n, m);
    }
    if (m->t_deliver > n->clock) {
        n->wait_ps += m->t_deliver - n->clock;
        n->clock = m->t_deliver;
    }
    n->msgs_recv++;
    n->bytes_recv += m->len;
    swfsim_vmsg_free(v, m);
}

static void swfsim_vpush(swfsim_vrunner_t *v, const swfsim_event_t *ev)
{
    if (0 != swfsim_heap_push(&v->sim->heap, ev)) {
        v->oom = 1;
        if (SWFSIM_EV_DELIVER == ev->type) { /* an INJECT's stays in its queue */
            swfsim_vmsg_free(v, ev->msg);
        }
    }
}

/* the barrier is complete: everybody leaves at the latest entry */
static void swfsim_vbarrier_leave(swfsim_vrunner_t *v)
{
    swfsim_t *sim = v->sim;

    for (uint32_t r = 0; r < sim->cfg.nodes; r++) {
        swfsim_node_t *n = sim->nodes[r];
        if (SWFSIM_N_BLOCKED_BARRIER == n->state) {
            n->wait_ps += v->barrier_latest - n->clock;
            n->clock = v->barrier_latest;
            n->state = SWFSIM_N_RUNNING;
            v->vn[r].blocked = 0;
            v->vn[r].have = 0;
            v->vn[r].idx++;
            v->ready[v->nready++] = r;
        }
    }
    v->barrier_in = 0;
    v->barrier_latest = 0;
}

/* run node r until it blocks or ends */
static void swfsim_vnode_run(swfsim_vrunner_t *v, uint32_t r)
{
    swfsim_t *sim = v->sim;
    swfsim_node_t *n = sim->nodes[r];
    swfsim_vnode_t *vn = &v->vn[r];

    for (;;) {
        if (!vn->have) {
            if (0 != v->prog->next(v->prog->ctx, r, vn->idx, &vn->op)) {
                if (NULL != sim->trace) {
                    tc_sockmodel_cmd_t fin = {.request = SOCKMODEL_FINISH};
                    swfsim_trace_cmd(sim, n, &fin);
                }
                n->state = SWFSIM_N_FINISHED;
                return;
            }
            vn->have = 1;
            n->clock += vn->op.compute_ps;
            if (NULL != sim->trace) {
                swfsim_trace_poll(sim, n, vn->op.compute_ps);
            }
        }
        switch (vn->op.kind) {
        case SWFSIM_VOP_SEND: {
            swfsim_msg_t *m = swfsim_vmsg_alloc(v);
            if (NULL == m) {
                return;
            }
            m->next = NULL;
            m->src = r;
            m->dst = vn->op.peer;
            m->tag = vn->op.tag;
            m->len = vn->op.len;
            m->t_send = n->clock;
            m->t_deliver = 0;
            swfsim_count_send(sim, n, m);
            if (0 != swfsim_inject_offer(sim, n, m)) {
                v->oom = 1;
                swfsim_vmsg_free(v, m);
            }
            break;
        }
        case SWFSIM_VOP_RECV: {
            swfsim_msg_t *m = swfsim_vq_take(v, r, vn->op.peer, vn->op.tag);
            if (NULL == m) {
                vn->blocked = 1;
                n->state = SWFSIM_N_BLOCKED_RECV;
                n->cmd.request = SOCKMODEL_RECVFROM;
                n->cmd.param[0] = vn->op.peer;
                return;
            }
            swfsim_vgive(v, n, m);
            break;
        }
        case SWFSIM_VOP_BARRIER:
            if (NULL != sim->trace) {
                swfsim_trace_barrier(sim, n);
            }
            vn->blocked = 1;
            n->state = SWFSIM_N_BLOCKED_BARRIER;
            if (n->clock > v->barrier_latest) {
                v->barrier_latest = n->clock;
            }
            if (++v->barrier_in == sim->cfg.nodes) {
                swfsim_vbarrier_leave(v);
            }
            return;
        default:
            break;
        }
        vn->have = 0;
        vn->idx++;
    }
}

static void swfsim_vrun_ready(swfsim_vrunner_t *v)
{
    while (v->nready > 0) {
        swfsim_vnode_run(v, v->ready[--v->nready]);
    }
}

/* a message's tail has reached its destination */
static void swfsim_vdeliver(swfsim_vrunner_t *v, swfsim_msg_t *m, uint64_t t)
{
    swfsim_t *sim = v->sim;
    uint32_t d = m->dst;
    swfsim_vnode_t *vn = &v->vn[d];

    m->t_deliver = t;
    swfsim_hist_add(&sim->latency, (t - m->t_send) / SWFSIM_PS_PER_NS);
    if (vn->blocked && SWFSIM_VOP_RECV == vn->op.kind && vn->op.peer == m->src &&
        (SWFSIM_VTAG_ANY == vn->op.tag || vn->op.tag == m->tag)) {
        /* nothing older from this source can be queued: it would have
         * been taken before the node blocked */
        swfsim_vgive(v, sim->nodes[d], m);
        sim->nodes[d]->state = SWFSIM_N_RUNNING;
        vn->blocked = 0;
        vn->have = 0;
        vn->idx++;
        v->ready[v->nready++] = d;
        return;
    }
    swfsim_vq_push(v, m);
}

int swfsim_vrun(swfsim_t *sim, const swfsim_vprog_t *prog)
{
    uint32_t N = sim->cfg.nodes;
    int torus = SOCKMODEL_MODEL_TORUS == sim->cfg.model;
    swfsim_vrunner_t v;
    swfsim_event_t ev;
    int blocked = 0;

    memset(&v, 0, sizeof(v));
    v.sim = sim;
    v.prog = prog;
    v.vn = calloc(N, sizeof(*v.vn));
    v.ready = calloc(N, sizeof(*v.ready));
    if (NULL == v.vn || NULL == v.ready || 0 != swfsim_vq_grow(&v)) {
        free(v.vn);
        free(v.ready);
        return 1;
    }
    for (uint32_t r = 0; r < N; r++) {
        swfsim_node_t *n = &sim->slots[r];
        n->state = SWFSIM_N_RUNNING;
        n->rank = r;
        n->clock = 0;
        sim->nodes[r] = n;
    }
    sim->started = 1;
    sim->wall_run_start = swfsim_wall();
    for (uint32_t r = N; r-- > 0;) {
        v.ready[v.nready++] = r; /* run in rank order: the stack pops 0 first */
    }
    swfsim_vrun_ready(&v);
    while (!v.oom && 0 == swfsim_heap_pop(&sim->heap, &ev)) {
        sim->now = ev.time;
        sim->events++;
        if (SWFSIM_EV_INJECT == ev.type) {
            swfsim_msg_t *m = ev.msg;
            swfsim_event_t d = {.type = SWFSIM_EV_DELIVER, .node = m->dst, .msg = m};
            if (torus) {
                int go = swfsim_inject_due(sim, &ev, &d.time);
                if (go < 0) {
                    v.oom = 1;
                }
                if (1 != go) {
                    continue;
                }
            } else {
                /* no network: straight through, in send order */
                swfsim_node_t *n = sim->nodes[m->src];
                n->inj_head = m->next;
                if (NULL == n->inj_head) {
                    n->inj_tail = NULL;
                } else {
                    swfsim_event_t e2 = {.time = n->inj_head->t_send,
                                         .type = SWFSIM_EV_INJECT,
                                         .node = m->src,
                                         .msg = n->inj_head};
                    swfsim_vpush(&v, &e2);
                }
                m->next = NULL;
                d.time = ev.time;
            }
            swfsim_vpush(&v, &d);
        } else if (SWFSIM_EV_DELIVER == ev.type) {
            swfsim_vdeliver(&v, ev.msg, ev.time);
            swfsim_vrun_ready(&v);
        }
    }
    for (uint32_t r = 0; r < N; r++) {
        if (v.vn[r].blocked) {
            blocked++;
        }
    }
    if (v.oom) {
        swfsim_warn("out of memory in the virtual run");
        sim->exit_code = 1;
    } else if (blocked) {
        swfsim_warn("deadlock: %d virtual nodes blocked and nothing in flight", blocked);
        for (uint32_t r = 0, shown = 0; r < N && shown < 8; r++) {
            if (v.vn[r].blocked) {
                swfsim_warn("  node %u blocked in %s (peer %u, op %llu) at %llu ns", r,
                            SWFSIM_VOP_RECV == v.vn[r].op.kind ? "a receive" : "a barrier",
                            v.vn[r].op.peer, (unsigned long long) v.vn[r].idx,
                            (unsigned long long) (sim->nodes[r]->clock / SWFSIM_PS_PER_NS));
                shown++;
            }
        }
        sim->deadlock = 1;
        sim->exit_code = 2;
    }
    sim->done = 1;
    sim->wall_end = swfsim_wall();
    /* free what is left: queued messages, events (after out of memory) */
    while (0 == swfsim_heap_pop(&sim->heap, &ev)) {
        if (SWFSIM_EV_DELIVER == ev.type) { /* INJECT: freed with its queue */
            free(ev.msg);
        }
    }
    for (uint32_t r = 0; r < N; r++) {
        while (NULL != sim->nodes[r]->inj_head) {
            swfsim_msg_t *m = sim->nodes[r]->inj_head;
            sim->nodes[r]->inj_head = m->next;
            free(m);
        }
        sim->nodes[r]->inj_tail = NULL;
    }
    for (uint64_t i = 0; i < v.nbucket; i++) {
        while (NULL != v.bucket[i]) {
            swfsim_vq_t *q = v.bucket[i];
            v.bucket[i] = q->next;
            while (NULL != q->head) {
                swfsim_msg_t *m = q->head;
                q->head = m->next;
                free(m);
            }
            free(q);
        }
    }
    while (NULL != v.free_q) {
        swfsim_vq_t *q = v.free_q;
        v.free_q = q->next;
        free(q);
    }
    while (NULL != v.free_msg) {
        swfsim_msg_t *m = v.free_msg;
        v.free_msg = m->next;
        free(m);
    }
    free(v.bucket);
    free(v.vn);
    free(v.ready);
    return sim->exit_code;
}

/* ------------------------------------------------------------------ */
/* programs as arrays                                                  */

int swfsim_vprog_array_init(swfsim_vprog_array_t *a, uint32_t nodes)
{
    memset(a, 0, sizeof(*a));
    a->nodes = nodes;
    a->count = calloc(nodes, sizeof(*a->count));
    a->cap = calloc(nodes, sizeof(*a->cap));
    a->ops = calloc(nodes, sizeof(*a->ops));
    if (NULL == a->count || NULL == a->cap || NULL == a->ops) {
        swfsim_vprog_array_fini(a);
        return -1;
    }
    return 0;
}

void swfsim_vprog_array_fini(swfsim_vprog_array_t *a)
{
    for (uint32_t r = 0; NULL != a->ops && r < a->nodes; r++) {
        free(a->ops[r]);
    }
    free(a->ops);
    free(a->count);
    free(a->cap);
    memset(a, 0, sizeof(*a));
}

int swfsim_vprog_array_add(swfsim_vprog_array_t *a, uint32_t r, const swfsim_vop_t *op)
{
    if (r >= a->nodes) {
        return -1;
    }
    if (a->count[r] == a->cap[r]) {
        uint64_t nc = a->cap[r] ? a->cap[r] * 2 : 16;
        swfsim_vop_t *no = realloc(a->ops[r], nc * sizeof(*no));
        if (NULL == no) {
            return -1;
        }
        a->ops[r] = no;
        a->cap[r] = nc;
    }
    a->ops[r][a->count[r]++] = *op;
    return 0;
}

static int swfsim_vprog_array_next(void *ctx, uint32_t r, uint64_t idx, swfsim_vop_t *op)
{
    const swfsim_vprog_array_t *a = ctx;

    if (r >= a->nodes || idx >= a->count[r]) {
        return 1;
    }
    *op = a->ops[r][idx];
    return 0;
}

void swfsim_vprog_array_prog(swfsim_vprog_array_t *a, swfsim_vprog_t *prog)
{
    prog->next = swfsim_vprog_array_next;
    prog->ctx = a;
}
