/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * swfsim_queue.c: the SockModel engine's message queues: matching a
 * RECV*, PROBE* or WAITING_START against a node's queue, handing a
 * message over, and delivering a message that reached its destination
 * (which may wake a node blocked in RECV or WAITING_START).
 */

#include "swfsim_engine.h"
#include "swfsim_trace.h"

enum { SWFSIM_MATCH_ANY, SWFSIM_MATCH_FROM, SWFSIM_MATCH_TAG };

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
swfsim_msg_t *swfsim_find(swfsim_node_t *n, const tc_sockmodel_cmd_t *c, swfsim_msg_t **prev)
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

void swfsim_unlink(swfsim_node_t *n, swfsim_msg_t *m, swfsim_msg_t *prev)
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
void swfsim_give(swfsim_t *sim, swfsim_node_t *n, swfsim_msg_t *m, uint32_t code)
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

void swfsim_found(swfsim_t *sim, swfsim_node_t *n, uint32_t code, const swfsim_msg_t *m)
{
    if (m->t_deliver > n->clock) {
        n->clock = m->t_deliver;
    }
    swfsim_reply(sim, n, code, SOCKMODEL_ST_FOUND, m->src, m->tag, m->len, 0);
}

/* a WAITING_START ends: the wall time since it was read counts as waiting */
void swfsim_wait_account(swfsim_node_t *n)
{
    uint64_t now = swfsim_now_us();

    if (now > n->wait_since_us) {
        n->wait_wall_us += now - n->wait_since_us;
    }
}

/* answer n's WAITING_START with the first queued message: report it
 * (FOUND), or with SOCKMODEL_WAIT_RECV hand it over like RECV */
void swfsim_wait_answer(swfsim_t *sim, swfsim_node_t *n)
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
void swfsim_resume(swfsim_t *sim, swfsim_node_t *n)
{
    n->state = SWFSIM_N_RUNNING;
    n->active = 0;
    swfsim_mark_ready(sim, n);
}

/* message m has reached its destination at time t */
void swfsim_deliver(swfsim_t *sim, swfsim_msg_t *m, uint64_t t)
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
