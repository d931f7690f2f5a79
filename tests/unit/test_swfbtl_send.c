/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_swfbtl_send.c: btl_swf's sendi and send to a peer the simulator
 * reported dead, or after the simulator went away. Open MPI 5.0's ob1
 * reads the descriptor sendi leaves after any failure and packs into it
 * unless it is NULL (its control messages, ACK and FIN, to a dead peer
 * under ULFM): sendi must fail with no descriptor, whatever the caller's
 * variable held, and send must fail leaving the caller its descriptor.
 * The component's send sources against libopen-pal, on a hand-made
 * module (no Open MPI init, no simulator).
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "btl_swf.h"
#include "btl_swf_frag.h"

/* what btl_swf_send.c needs of the rest of the component */
mca_btl_swf_component_t mca_btl_swf_component;
static int fatal_calls;

void mca_btl_swf_fatal(mca_btl_swf_module_t *m, const char *what)
{
    (void) what;
    m->failed = true;
    ++fatal_calls;
}

static mca_btl_swf_module_t module;
static mca_btl_swf_endpoint_t peer;

static void setup_module(bool module_failed, bool peer_failed)
{
    memset(&module, 0, sizeof(module));
    memset(&peer, 0, sizeof(peer));
    OBJ_CONSTRUCT(&module.lock, opal_mutex_t);
    module.super.btl_eager_limit = 4096;
    module.super.btl_max_send_size = 65536;
    module.failed = module_failed;
    peer.module = &module;
    peer.node = 1;
    peer.failed = peer_failed;
    fatal_calls = 0;
}

static void teardown_module(void)
{
    OBJ_DESTRUCT(&module.lock);
}

/* a header-only sendi (ob1's control messages) to a lost peer: an error,
 * the descriptor NULL, nothing written, the module still usable */
static void test_sendi_dead_peer(void **state)
{
    uint64_t hdr[4] = {1, 2, 3, 4};
    mca_btl_base_descriptor_t *des = (mca_btl_base_descriptor_t *) (uintptr_t) 0xdeadbeefUL;
    int rc;

    (void) state;
    setup_module(false, true);
    rc = mca_btl_swf_sendi(&module.super, &peer, NULL, hdr, sizeof(hdr), 0, 0, 0, 65, &des);
    assert_true(rc < 0);
    assert_null(des);
    assert_int_equal(fatal_calls, 0);
    assert_false(module.failed);
    assert_int_equal(module.frags_sent, 0);
    teardown_module();
}

/* the same once the simulator is gone */
static void test_sendi_module_failed(void **state)
{
    uint64_t hdr[2] = {5, 6};
    mca_btl_base_descriptor_t *des = (mca_btl_base_descriptor_t *) (uintptr_t) 0x1UL;

    (void) state;
    setup_module(true, false);
    assert_true(mca_btl_swf_sendi(&module.super, &peer, NULL, hdr, sizeof(hdr), 0, 0, 0, 65, &des) <
                0);
    assert_null(des);
    teardown_module();
}

/* too large for sendi: out of resource, no descriptor (ob1 falls back to
 * alloc + send itself) */
static void test_sendi_too_large(void **state)
{
    static uint64_t hdr[1024];
    mca_btl_base_descriptor_t *des = (mca_btl_base_descriptor_t *) (uintptr_t) 0x2UL;

    (void) state;
    setup_module(false, false);
    assert_int_equal(mca_btl_swf_sendi(&module.super, &peer, NULL, hdr, 4096 + 8, 0, 0, 0, 65, &des),
                     OPAL_ERR_OUT_OF_RESOURCE);
    assert_null(des);
    /* a caller that passes no variable at all */
    assert_int_equal(mca_btl_swf_sendi(&module.super, &peer, NULL, hdr, 4096 + 8, 0, 0, 0, 65, NULL),
                     OPAL_ERR_OUT_OF_RESOURCE);
    teardown_module();
}

/* btl_send to a lost peer: an error, the descriptor still the caller's
 * (ob1 frees it), no callback */
static int cb_calls;

static void count_cb(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *ep,
                     struct mca_btl_base_descriptor_t *des, int status)
{
    (void) btl;
    (void) ep;
    (void) des;
    (void) status;
    ++cb_calls;
}

static void test_send_dead_peer(void **state)
{
    mca_btl_swf_frag_t frag;
    unsigned char buf[64];

    (void) state;
    setup_module(false, true);
    OBJ_CONSTRUCT(&frag, mca_btl_swf_frag_t);
    memset(buf, 0xa5, sizeof(buf));
    frag.segment.seg_addr.pval = buf;
    frag.segment.seg_len = sizeof(buf);
    frag.base.des_flags = MCA_BTL_DES_SEND_ALWAYS_CALLBACK;
    frag.base.des_cbfunc = count_cb;
    cb_calls = 0;
    assert_true(mca_btl_swf_send(&module.super, &peer, &frag.base, 65) < 0);
    assert_int_equal(cb_calls, 0);
    assert_int_equal(module.frags_sent, 0);
    OBJ_DESTRUCT(&frag);
    teardown_module();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sendi_dead_peer),
        cmocka_unit_test(test_sendi_module_failed),
        cmocka_unit_test(test_sendi_too_large),
        cmocka_unit_test(test_send_dead_peer),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
