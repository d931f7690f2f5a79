/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * swfsim_watch.c: node-down notices (the WATCH request, docs/sockmodel.md).
 * A node that sent WATCH gets, for every other node that dies during the
 * run, a message of length 0 from the dead node with the tag it chose.
 * The notice leaves as if the dead node had sent it when it died: in
 * simpel mode it is queued at once, behind what the dead node had sent;
 * in torus mode it enters the dead node's injection queue behind the
 * messages still on their way, so it never overtakes them. A node that
 * finished (FINISH) is not dead and gives no notice.
 */

#include <stdlib.h>

#include "swfsim.h"

/* a node that can still receive */
static int swfsim_watch_alive(const swfsim_node_t *n)
{
    return SWFSIM_N_RUNNING == n->state || SWFSIM_N_BLOCKED_RECV == n->state ||
        SWFSIM_N_BLOCKED_BARRIER == n->state || SWFSIM_N_WAITING == n->state;
}

/* the notice of dead's death for watcher w */
static void swfsim_watch_notify(swfsim_t *sim, swfsim_node_t *dead, swfsim_node_t *w)
{
    swfsim_msg_t *m = malloc(sizeof(*m));

    if (NULL == m) {
        swfsim_warn("out of memory: node %u is not told that node %u died", w->rank, dead->rank);
        return;
    }
    m->next = NULL;
    m->src = dead->rank;
    m->dst = w->rank;
    m->tag = w->watch_tag;
    m->len = 0;
    /* when it died: not before the simulator's present */
    m->t_send = dead->clock > sim->now ? dead->clock : sim->now;
    m->t_deliver = 0;
    w->notices++;
    if (0 != swfsim_post(sim, dead, m)) {
        swfsim_warn("out of memory: node %u is not told that node %u died", w->rank, dead->rank);
    }
}

int swfsim_watch_start(swfsim_t *sim, swfsim_node_t *n, const tc_sockmodel_cmd_t *c)
{
    if (n->watching) {
        swfsim_node_drop(sim, n, "WATCH sent twice (tag %u, then %u)", n->watch_tag, c->param[0]);
        return -1;
    }
    n->watching = 1;
    n->watch_tag = c->param[0];
    {
        tc_sockmodel_reply_t r = {.code = SOCKMODEL_WATCH,
                                  .status = SOCKMODEL_ST_OK,
                                  .clock_ns = n->clock / SWFSIM_PS_PER_NS};

        swfsim_node_reply(sim, n, &r, NULL);
    }
    /* the nodes that died before are dead for this watcher too */
    for (uint32_t r = 0; r < sim->nnodes; r++) {
        swfsim_node_t *d = sim->nodes[r];

        if (d != n && SWFSIM_N_DEAD == d->state) {
            swfsim_watch_notify(sim, d, n);
        }
    }
    return 0;
}

void swfsim_watch_died(swfsim_t *sim, swfsim_node_t *dead)
{
    uint32_t told = 0;

    for (uint32_t r = 0; r < sim->nnodes; r++) {
        swfsim_node_t *w = sim->nodes[r];

        if (w != dead && w->watching && swfsim_watch_alive(w)) {
            swfsim_watch_notify(sim, dead, w);
            told++;
        }
    }
    if (told > 0) {
        swfsim_log(sim, "node %u died: %u watching nodes told", dead->rank, told);
    }
}

int swfsim_watch_is_notice(const swfsim_node_t *n, const swfsim_msg_t *m)
{
    return n->watching && 0 == m->len && m->tag == n->watch_tag;
}
