/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * osc_hybrid_peer.c: a window's per-peer state, one entry per rank of the
 * window (operation counts, lock and flush requests and acknowledgements,
 * what is gathered for each target, the post/start group, failed peers):
 * allocated when the window is created and freed when it is released.
 * Apart from the component so that the unit tests build a window's module
 * the way the component does.
 */

#include "ompi_config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "osc_hybrid.h"

int mca_osc_hybrid_peers_alloc(mca_osc_hybrid_module_t *m, int n)
{
    m->ops_sent = calloc(n, sizeof(uint64_t));
    m->lock_req = calloc(n, sizeof(uint64_t));
    m->lock_ack = calloc(n, sizeof(uint64_t));
    m->unlock_req = calloc(n, sizeof(uint64_t));
    m->unlock_ack = calloc(n, sizeof(uint64_t));
    m->flush_req = calloc(n, sizeof(uint64_t));
    m->flush_ack = calloc(n, sizeof(uint64_t));
    m->flushed_at = calloc(n, sizeof(uint64_t));
    m->unacked = calloc(n, sizeof(uint64_t));
    m->agg_buf = calloc(n, sizeof(char *));
    m->agg_len = calloc(n, sizeof(uint32_t));
    m->agg_cap = calloc(n, sizeof(uint32_t));
    m->agg_dirty = calloc(n, sizeof(int));
    m->posts_recv = calloc(n, sizeof(int));
    m->lock_type = calloc(n, sizeof(int));
    m->lk_state = calloc(n, sizeof(int));
    m->start_member = calloc(n, sizeof(bool));
    m->wsend_out = calloc(n, sizeof(int));
    m->ft_gone = calloc(n, sizeof(bool));
    if (!m->ops_sent || !m->lock_req || !m->lock_ack || !m->unlock_req || !m->unlock_ack ||
        !m->flush_req || !m->flush_ack || !m->flushed_at || !m->posts_recv || !m->lock_type ||
        !m->lk_state || !m->wsend_out || !m->start_member || !m->unacked || !m->agg_buf ||
        !m->agg_len || !m->agg_cap || !m->agg_dirty || !m->ft_gone) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    return OMPI_SUCCESS;
}

void mca_osc_hybrid_peers_free(mca_osc_hybrid_module_t *m)
{
    free(m->ops_sent);
    free(m->lock_req);
    free(m->lock_ack);
    free(m->unlock_req);
    free(m->unlock_ack);
    free(m->flush_req);
    free(m->flush_ack);
    free(m->flushed_at);
    free(m->unacked);
    mca_osc_hybrid_agg_release(m);
    free(m->posts_recv);
    free(m->lock_type);
    free(m->lk_state);
    free(m->start_member);
    free(m->wsend_out);
}
