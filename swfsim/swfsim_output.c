/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * swfsim_output.c: the SockModel engine's output: each node's ring of
 * replies (header and the message it carries) waiting for the network
 * layer to write them, and the back-pressure when a client does not read.
 */

#include <stdlib.h>

#include "swfsim_engine.h"

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

void swfsim_node_word(swfsim_t *sim, swfsim_node_t *n, uint32_t v)
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

void swfsim_reply(swfsim_t *sim, swfsim_node_t *n, uint32_t code, uint32_t status, uint32_t a0,
                  uint32_t a1, uint32_t a2, uint32_t a3)
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

void swfsim_node_output_drained(swfsim_t *sim, swfsim_node_t *n)
{
    if (n->out_full && n->out_count <= SWFSIM_OUT_MAX / 2) {
        n->out_full = 0;
        swfsim_mark_ready(sim, n);
    }
}
