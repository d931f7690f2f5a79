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

/* The arrays this file frees, and those it only allocates: the agg_ ones
 * are osc_hybrid_agg.c's to free (with the buffers agg_buf points to),
 * ft_gone osc_hybrid_ft.c's (with the rest of the failure state). */
#define OSC_HYBRID_PEERS_OWN(X)                                                                 \
    X(ops_sent)                                                                                 \
    X(lock_req) X(lock_ack) X(unlock_req) X(unlock_ack) X(flush_req) X(flush_ack) X(flushed_at) \
        X(unacked) X(posts_recv) X(lock_type) X(lk_state) X(start_member) X(wsend_out)
#define OSC_HYBRID_PEERS_LENT(X) X(agg_buf) X(agg_len) X(agg_cap) X(agg_dirty) X(ft_gone)

/* one zeroed array of n elements of the field's type */
#define OSC_HYBRID_PEERS_CALLOC(field)                \
    m->field = calloc((size_t) n, sizeof(*m->field)); \
    missing |= (NULL == m->field);
#define OSC_HYBRID_PEERS_FREE(field) free(m->field);

int mca_osc_hybrid_peers_alloc(mca_osc_hybrid_module_t *m, int n)
{
    bool missing = false;

    OSC_HYBRID_PEERS_OWN(OSC_HYBRID_PEERS_CALLOC)
    OSC_HYBRID_PEERS_LENT(OSC_HYBRID_PEERS_CALLOC)
    return missing ? OMPI_ERR_OUT_OF_RESOURCE : OMPI_SUCCESS;
}

void mca_osc_hybrid_peers_free(mca_osc_hybrid_module_t *m)
{
    OSC_HYBRID_PEERS_OWN(OSC_HYBRID_PEERS_FREE)
    mca_osc_hybrid_agg_release(m);
}
