/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_sci_state.h: the hand-made btl_sci component state the tests of
 * its progress run on (test_sci_pending, test_sci_lost, test_sci_guard):
 * this process (local rank 0) and n - 1 peers on the host, no device, a
 * doorbell nobody rings. Endpoint i has peer rank i and a process of vpid
 * i; none is connected. Include after <cmocka.h>.
 */
#ifndef TEST_SCI_STATE_H
#define TEST_SCI_STATE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "btl_sci.h"
#include "btl_sci_endpoint.h"

#define TEST_SCI_STATE_MAX 3

typedef struct {
    uint64_t bell; /* our doorbell: 8 bytes */
    mca_btl_sci_endpoint_t *eps;
    mca_btl_sci_endpoint_t *conn[TEST_SCI_STATE_MAX];
    mca_btl_sci_endpoint_t *sweep[TEST_SCI_STATE_MAX];
    opal_proc_t procs[TEST_SCI_STATE_MAX];
} test_sci_state_t;

/* s stays where it is until test_sci_state_fini: the component points into it */
static inline void test_sci_state_init(test_sci_state_t *s, int n, unsigned int sweep_interval)
{
    mca_btl_sci_component_t *c = &mca_btl_sci_component;

    assert_true(n <= TEST_SCI_STATE_MAX);
    memset(s, 0, sizeof(*s));
    s->eps = calloc((size_t) n, sizeof(*s->eps));
    assert_non_null(s->eps);
    OBJ_CONSTRUCT(&c->pending_endpoints, opal_list_t);
    tc_ompi_done_list_construct(&c->completed_frags);
    OBJ_CONSTRUCT(&c->lock, opal_mutex_t);
    c->doorbell = (uint8_t *) &s->bell;
    c->running = true;
    c->local_rank = 0;
    c->num_local = n;
    c->endpoints = s->eps;
    c->connected = s->conn;
    c->sweep = s->sweep;
    c->num_connected = c->num_active = c->num_unconnected = 0;
    c->sweep_interval = sweep_interval;
    c->progress_calls = 0;
    c->lost_pending = 0;
    c->output = -1;
    for (int i = 0; i < n; ++i) {
        OBJ_CONSTRUCT(&s->eps[i], mca_btl_sci_endpoint_t);
        s->eps[i].peer_rank = i;
        s->eps[i].module = &mca_btl_sci_module;
        s->eps[i].proc = &s->procs[i];
        s->procs[i].proc_name.vpid = (uint32_t) i;
    }
}

static inline void test_sci_state_fini(test_sci_state_t *s)
{
    mca_btl_sci_component_t *c = &mca_btl_sci_component;

    OBJ_DESTRUCT(&c->pending_endpoints);
    c->doorbell = NULL;
    c->running = false;
    c->endpoints = NULL;
    c->connected = c->sweep = NULL;
    free(s->eps);
    s->eps = NULL;
}

#endif /* TEST_SCI_STATE_H */
