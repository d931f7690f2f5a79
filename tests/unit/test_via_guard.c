/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_via_guard.c: btl_via's progress guard under threads, checked by
 * ThreadSanitizer (this program and the component sources in it are built
 * with -fsanitize=thread; a report makes it exit non-zero). Two threads
 * call the component's progress many times on a hand-made component state
 * (an emu NIC with an empty receive CQ, and receive completions held back
 * for progress that name no endpoint): every call that takes the guard
 * takes one held completion off the component's ring. The guard must be
 * taken with an acquire and given back with a release: taken with a
 * relaxed swap and given back with a write barrier and a plain store, no
 * ordering joins one holder's writes to the next holder's (and the plain
 * store races with the other thread's swap), which the sanitizer reports.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "btl_via.h"
#include "tc_unit.h"

#define VIA_GUARD_CALLS 100000

static void test_via_guard_two_threads(void **state)
{
    mca_btl_via_component_t *c = &mca_btl_via_component;
    mca_btl_via_dev_t *dev = &c->devs[MCA_BTL_VIA_DEV_LOCAL];
    char dir[] = "/tmp/test_via_guard.XXXXXX";
    vipl_open_params_t p;
    struct vipl_vi orphan; /* a VI that names no endpoint */
    vipl_desc_t d;

    (void) state;
    assert_non_null(mkdtemp(dir));
    memset(&p, 0, sizeof(p));
    p.segment_dir = dir;
    p.job_key = "g";
    p.max_vis = 1;
    p.max_recv_depth = 4;
    p.max_regs = 4;
    p.nic_memory = 4096;
    dev->ops = vipl_provider("emu");
    assert_int_equal(VIPL_SUCCESS, vipl_open_nic(dev->ops, &p, &dev->nic));
    assert_int_equal(VIPL_SUCCESS, vipl_create_cq(dev->nic, 4, &dev->recv_cq));
    tc_ompi_done_list_construct(&c->completed_frags);
    tc_ompi_done_list_construct(&c->completed_rdma);
    c->poll_batch = 1;
    c->output = -1;
    memset(&orphan, 0, sizeof(orphan));
    orphan.nic = dev->nic;
    memset(&d, 0, sizeof(d));
    c->held_cap = 2 * VIA_GUARD_CALLS + 1; /* never wraps */
    c->held = calloc(c->held_cap, sizeof(*c->held));
    assert_non_null(c->held);
    for (uint32_t i = 0; i < c->held_cap; ++i) {
        c->held[i].vi = &orphan;
        c->held[i].d = &d;
    }
    c->held_head = 0;
    c->held_count = c->held_cap;
    c->live = true;
    opal_set_using_threads(true);

    tc_unit_progress_threads(mca_btl_via_component_progress, VIA_GUARD_CALLS);
    /* every call that held the guard took one */
    assert_true(c->held_count < c->held_cap);
    assert_int_equal(c->held_cap, c->held_count + c->held_head);

    opal_set_using_threads(false);
    c->live = false;
    free(c->held);
    c->held = NULL;
    vipl_destroy_cq(dev->recv_cq);
    dev->recv_cq = NULL;
    vipl_close_nic(dev->nic);
    dev->nic = NULL;
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_via_guard_two_threads),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
