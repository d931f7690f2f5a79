/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_bip_medium.c: btl_bip's medium regime when the data write fails.
 * The peer's ACK names a posted receive; the sender writes the data there
 * (bip_send_large) and completes the send. When the write fails (the peer
 * is gone, or the ACK names no receive of that size), the send must be
 * completed with an error, never OPAL_SUCCESS: ob1 would take the message
 * as delivered. The write is made to fail here (--wrap=bip_send_large),
 * and the receive path's static ACK handler runs on a hand-made endpoint
 * (btl_bip_recv.c is compiled into this file), with the other component
 * sources and libopen-pal linked.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../btl_bip/btl_bip_recv.c"

static int bip_medium_write_rc;
static int bip_medium_writes;

int __wrap_bip_send_large(bip_peer_t *peer, uint32_t handle, size_t offset, const struct iovec *iov,
                          int iovcnt, size_t len);
int __wrap_bip_send_large(bip_peer_t *peer, uint32_t handle, size_t offset, const struct iovec *iov,
                          int iovcnt, size_t len)
{
    (void) peer;
    (void) handle;
    (void) offset;
    (void) iov;
    (void) iovcnt;
    (void) len;
    ++bip_medium_writes;
    return bip_medium_write_rc;
}

static int bip_medium_status;
static int bip_medium_callbacks;

static void bip_medium_cb(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *ep,
                          struct mca_btl_base_descriptor_t *des, int status)
{
    (void) btl;
    (void) ep;
    (void) des;
    bip_medium_status = status;
    ++bip_medium_callbacks;
}

static int bip_medium_errors;

static void bip_medium_error_cb(struct mca_btl_base_module_t *btl, int32_t flags,
                                struct opal_proc_t *proc, char *info)
{
    (void) btl;
    (void) flags;
    (void) proc;
    (void) info;
    ++bip_medium_errors;
}

/* one medium send awaiting its ACK; the ACK comes, the write returns
 * write_rc: the callback's status */
static int bip_medium_run(int write_rc)
{
    mca_btl_bip_endpoint_t ep;
    mca_btl_bip_frag_t frag;
    mca_btl_bip_ack_t ack;
    unsigned char payload[3000];

    memset(&ep, 0, sizeof(ep));
    OBJ_CONSTRUCT(&ep.lock, opal_mutex_t);
    OBJ_CONSTRUCT(&ep.await_ack, opal_list_t);
    ep.peer_rank = 1;
    ep.module = &mca_btl_bip_module;
    ep.state = MCA_BTL_BIP_EP_CONNECTED;
    tc_list_init(&ep.cr.fifo);
    OBJ_CONSTRUCT(&frag, mca_btl_bip_frag_t);
    frag.endpoint = &ep;
    frag.internal = false;
    frag.seq = 7;
    frag.size = sizeof(payload);
    frag.segments[0].seg_addr.pval = payload;
    frag.segments[0].seg_len = sizeof(payload);
    frag.base.des_segments = frag.segments;
    frag.base.des_segment_count = 1;
    frag.base.des_cbfunc = bip_medium_cb;
    frag.base.des_flags = 0;
    opal_list_append(&ep.await_ack, &frag.base.super.super);
    memset(&ack, 0, sizeof(ack));
    ack.kind = MCA_BTL_BIP_ACK_MEDIUM;
    ack.seq = 7;
    ack.size = sizeof(payload);
    ack.handle = 0x10003;

    bip_medium_write_rc = write_rc;
    bip_medium_callbacks = 0;
    bip_medium_status = 12345;
    mca_btl_bip_component.endpoints = &ep;
    mca_btl_bip_component.nprocs = 1;
    mca_btl_bip_component.max_eps = 1;
    mca_btl_bip_handle_ack(&ep, &ack);
    /* a lost peer is reported from progress */
    (void) mca_btl_bip_lost_progress();
    mca_btl_bip_component.endpoints = NULL;
    mca_btl_bip_component.nprocs = 0;
    mca_btl_bip_component.max_eps = 0;
    assert_int_equal(1, bip_medium_callbacks);
    assert_true(opal_list_is_empty(&ep.await_ack));
    OBJ_DESTRUCT(&frag);
    OBJ_DESTRUCT(&ep.await_ack);
    OBJ_DESTRUCT(&ep.lock);
    return bip_medium_status;
}

static void test_bip_medium_write_fails(void **state)
{
    (void) state;
    mca_btl_bip_component.output = -1;
    mca_btl_bip_module.error_cb = bip_medium_error_cb;
    OBJ_CONSTRUCT(&mca_btl_bip_component.posted, opal_list_t);
    OBJ_CONSTRUCT(&mca_btl_bip_component.recv_fifo, opal_list_t);
    OBJ_CONSTRUCT(&mca_btl_bip_component.lock, opal_mutex_t);

    bip_medium_writes = 0;
    bip_medium_errors = 0;
    assert_int_equal(OPAL_SUCCESS, bip_medium_run(0));
    assert_int_equal(1, bip_medium_writes);
    assert_int_equal(0, bip_medium_errors);

    /* the peer is gone */
    assert_int_not_equal(OPAL_SUCCESS, bip_medium_run(-ESRCH));
    assert_int_equal(1, bip_medium_errors);
    /* the ACK named no receive that takes the data */
    assert_int_not_equal(OPAL_SUCCESS, bip_medium_run(-ERANGE));
    assert_int_equal(2, bip_medium_errors);
    assert_int_equal(3, bip_medium_writes);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bip_medium_write_fails),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
