/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_via_verbs.c: unit tests of btl_via's verbs provider.  They need an
 * RDMA device (ibv_get_device_list returning at least one): without one,
 * or when the provider was not built (no libibverbs), the test prints why
 * and exits 77, which automake reports as SKIP.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vipl.h"

static const vipl_ops_t *ops;
static vipl_nic_t *nic;

/* open, tag, register with RDMA enables, a VI, loopback connect, a send
 * and an RDMA write with immediate through the device */
static void test_loopback(void **state)
{
    vipl_ptag_t *ptag;
    vipl_cq_t *cq;
    vipl_vi_t *a, *b;
    vipl_vi_attrs_t va = {0};
    vipl_mem_attrs_t ma = {0};
    vipl_vi_address_t aa, ba;
    vipl_mem_handle_t h;
    vipl_desc_t r, s, *done;
    char *buf = calloc(1, 8192);
    vipl_return_t ra = VIPL_NOT_DONE, rb = VIPL_NOT_DONE;

    (void) state;
    assert_non_null(buf);
    assert_int_equal(VIPL_SUCCESS, vipl_create_ptag(nic, &ptag));
    assert_int_equal(VIPL_SUCCESS, vipl_create_cq(nic, 16, &cq));
    va.reliability = VIPL_RELIABLE_DELIVERY;
    va.ptag = ptag;
    va.send_depth = va.recv_depth = 8;
    va.enable_rdma_write = true;
    assert_int_equal(VIPL_SUCCESS, vipl_create_vi(nic, &va, NULL, cq, &a));
    assert_int_equal(VIPL_SUCCESS, vipl_create_vi(nic, &va, NULL, cq, &b));
    ma.ptag = ptag;
    ma.enable_rdma_write = true;
    assert_int_equal(VIPL_SUCCESS, vipl_register_mem(nic, buf, 8192, &ma, &h));
    vipl_vi_address(a, &aa);
    vipl_vi_address(b, &ba);
    assert_int_equal(VIPL_SUCCESS, vipl_connect_peer_request(a, &ba));
    assert_int_equal(VIPL_SUCCESS, vipl_connect_peer_request(b, &aa));
    while (VIPL_NOT_DONE == ra || VIPL_NOT_DONE == rb) {
        ra = vipl_connect_peer_done(a);
        rb = vipl_connect_peer_done(b);
    }
    assert_int_equal(VIPL_SUCCESS, ra);
    memset(&r, 0, sizeof(r));
    r.seg_count = 1;
    r.ds[0].addr = buf + 4096;
    r.ds[0].handle = h;
    r.ds[0].length = 4096;
    assert_int_equal(VIPL_SUCCESS, vipl_post_recv(b, &r));
    memset(&s, 0, sizeof(s));
    strcpy(buf, "via over verbs");
    s.control = VIPL_CONTROL_OP_SEND | VIPL_CONTROL_IMMEDIATE;
    s.imm_data = 42;
    s.seg_count = 1;
    s.ds[0].addr = buf;
    s.ds[0].handle = h;
    s.ds[0].length = 15;
    assert_int_equal(VIPL_SUCCESS, vipl_post_send(a, &s));
    while (VIPL_SUCCESS != vipl_send_done(a, &done)) {
    }
    assert_int_equal(VIPL_STATUS_DONE, s.status);
    while (VIPL_SUCCESS != vipl_recv_done(b, &done)) {
    }
    assert_int_equal(42, r.imm_data);
    assert_string_equal("via over verbs", buf + 4096);
    vipl_destroy_vi(a);
    vipl_destroy_vi(b);
    vipl_deregister_mem(nic, buf, h);
    vipl_destroy_cq(cq);
    vipl_destroy_ptag(ptag);
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_loopback),
    };
    vipl_open_params_t p = {0};
    vipl_return_t rc;
    int failed;

    ops = vipl_provider("verbs");
    if (NULL == ops) {
        printf("SKIP: test_via_verbs: the verbs provider was not built (libibverbs not found at "
               "configure)\n");
        return 77;
    }
    rc = vipl_open_nic(ops, &p, &nic);
    if (VIPL_SUCCESS != rc) {
        printf("SKIP: test_via_verbs: no RDMA device on this host (ibv_get_device_list: %s); "
               "the verbs provider was compiled but not run\n",
               vipl_strerror(rc));
        return 77;
    }
    failed = cmocka_run_group_tests_name("via_verbs", tests, NULL, NULL);
    vipl_close_nic(nic);
    return failed;
}
