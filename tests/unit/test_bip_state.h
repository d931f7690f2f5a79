/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_bip_state.h: the hand-made btl_bip component state the tests of
 * its progress run on (test_bip_lost, test_bip_guard): a real device of
 * rank 0 with an empty queue in a private directory, no peer connected,
 * the liveness check too far away to run. Include after <cmocka.h>.
 */
#ifndef TEST_BIP_STATE_H
#define TEST_BIP_STATE_H

#include <stdbool.h>
#include <unistd.h>

#include "bip_device.h"
#include "btl_bip.h"

/* dir: a mkdtemp template, the device's directory until test_bip_state_fini */
static inline void test_bip_state_init(char *dir, bool threads)
{
    mca_btl_bip_component_t *c = &mca_btl_bip_component;
    bip_dev_params_t p = {.job_key = "t",
                          .rank = 0,
                          .expected_peers = 0,
                          .nslots = 4,
                          .slot_size = 64,
                          .max_posted = 2,
                          .frag_size = 4096};

    assert_non_null(mkdtemp(dir));
    p.dir = dir;
    assert_int_equal(0, bip_open(&p, &c->dev));
    OBJ_CONSTRUCT(&c->posted, opal_list_t);
    OBJ_CONSTRUCT(&c->recv_fifo, opal_list_t);
    OBJ_CONSTRUCT(&c->lock, opal_mutex_t);
    tc_ompi_done_list_construct(&c->completed_frags);
    c->threads = threads;
    c->unlinked = true;
    c->poll_batch = 4;
    c->check_interval = 1u << 30;
    c->progress_calls = 1u << 30;
    c->output = -1;
}

static inline void test_bip_state_fini(const char *dir)
{
    mca_btl_bip_component_t *c = &mca_btl_bip_component;

    bip_close(c->dev);
    c->dev = NULL;
    rmdir(dir);
}

#endif /* TEST_BIP_STATE_H */
