/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_via_endpoint.c: btl_via's endpoint bring-up when it fails after the
 * receives were posted on the peer's VI. A VI made at init outlives the
 * endpoint (its address was published), so a failed
 * mca_btl_via_endpoint_bring_up_locked must leave no receive posted into
 * the buffers it frees and no VI pointing at the endpoint: here the
 * connection request fails (the peer's address is not one the NIC
 * accepts) after every receive was posted.  A VI the bring-up made itself
 * (made on first use) goes again.  And the two ways to send on an
 * endpoint without credit: sendi's refuses, btl_send's queues.
 *
 * The component's sources run against libopen-pal on a hand-made
 * component state: an emu NIC, its CQ and one VI for vpid 1, and a
 * free list filled by hand (no Open MPI init).
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "btl_via.h"
#include "btl_via_endpoint.h"
#include "btl_via_frag.h"

#define VIA_EP_NFRAGS 4

static void test_via_endpoint_create_fails_after_posting(void **state)
{
    mca_btl_via_component_t *c = &mca_btl_via_component;
    mca_btl_via_dev_t *dev = &c->devs[MCA_BTL_VIA_DEV_LOCAL];
    mca_btl_via_frag_t frags[VIA_EP_NFRAGS];
    vipl_open_params_t p;
    vipl_vi_attrs_t va;
    vipl_vi_address_t bogus;
    char dir[] = "/tmp/test_via_endpoint.XXXXXX";
    vipl_vi_t *vis[2] = {NULL, NULL};
    mca_btl_via_endpoint_t *ep;

    (void) state;
    assert_non_null(mkdtemp(dir));
    memset(&p, 0, sizeof(p));
    p.segment_dir = dir;
    p.job_key = "ep";
    p.nic_id = 0;
    p.max_vis = 2;
    p.max_recv_depth = 8;
    p.max_regs = 16;
    p.nic_memory = 64 * 1024;
    p.expected_peers = 1;
    dev->ops = vipl_provider("emu");
    assert_int_equal(VIPL_SUCCESS, vipl_open_nic(dev->ops, &p, &dev->nic));
    assert_int_equal(VIPL_SUCCESS, vipl_create_ptag(dev->nic, &dev->ptag));
    assert_int_equal(VIPL_SUCCESS, vipl_create_cq(dev->nic, 16, &dev->recv_cq));
    memset(&va, 0, sizeof(va));
    va.reliability = VIPL_RELIABLE_DELIVERY;
    va.ptag = dev->ptag;
    va.send_depth = 8;
    va.recv_depth = 8;
    assert_int_equal(VIPL_SUCCESS, vipl_create_vi(dev->nic, &va, NULL, dev->recv_cq, &vis[1]));
    dev->vis = vis;
    c->nprocs = 2;
    c->my_vpid = 0;
    c->recv_descriptors = 8;
    dev->recv_descriptors = 8;
    dev->recv_size = 256;
    c->output = -1;
    OBJ_CONSTRUCT(&dev->frags, opal_free_list_t);
    OBJ_CONSTRUCT(&c->lock, opal_mutex_t);
    tc_ompi_done_list_construct(&c->completed_frags);
    for (int i = 0; i < VIA_EP_NFRAGS; ++i) {
        OBJ_CONSTRUCT(&frags[i], mca_btl_via_frag_t);
        frags[i].dev = dev;
        opal_free_list_return(&dev->frags, &frags[i].base.super);
    }

    /* an address whose magic is wrong: the request fails after the posts */
    memset(&bogus, 0xa5, sizeof(bogus));
    ep = mca_btl_via_endpoint_create(NULL, 1, MCA_BTL_VIA_DEV_LOCAL, &bogus);
    assert_non_null(ep);
    assert_int_equal(MCA_BTL_VIA_EP_IDLE, ep->state);
    assert_int_not_equal(OPAL_SUCCESS, mca_btl_via_endpoint_bring_up_locked(ep));
    assert_int_equal(MCA_BTL_VIA_EP_FAILED, ep->state);
    assert_null(ep->vi);
    assert_null(ep->rbufs);
    /* a failed endpoint is not brought up again */
    assert_int_not_equal(OPAL_SUCCESS, mca_btl_via_endpoint_bring_up_locked(ep));
    mca_btl_via_endpoint_destroy(ep);
    assert_int_equal(0, c->num_connecting);
    /* every fragment is back in the list */
    for (int i = 0; i < VIA_EP_NFRAGS; ++i) {
        assert_non_null(opal_free_list_get(&dev->frags));
    }
    for (int i = 0; i < VIA_EP_NFRAGS; ++i) {
        opal_free_list_return(&dev->frags, &frags[i].base.super);
    }
    /* no VI may keep the freed endpoint or receives into its buffers: the
     * VI is gone, or idle with nothing posted */
    if (NULL != vis[1]) {
        vipl_desc_t d[8];
        char *buf = vipl_mem_alloc(dev->nic, 8 * 256);
        vipl_mem_attrs_t ma = {.ptag = dev->ptag};
        vipl_mem_handle_t h;

        assert_null(vis[1]->user);
        assert_non_null(buf);
        assert_int_equal(VIPL_SUCCESS, vipl_register_mem(dev->nic, buf, 8 * 256, &ma, &h));
        for (int i = 0; i < 8; ++i) {
            memset(&d[i], 0, sizeof(d[i]));
            d[i].control = VIPL_CONTROL_OP_SEND;
            d[i].seg_count = 1;
            d[i].ds[0].addr = buf + i * 256;
            d[i].ds[0].handle = h;
            d[i].ds[0].length = 256;
            assert_int_equal(VIPL_SUCCESS, vipl_post_recv(vis[1], &d[i]));
        }
        vipl_destroy_vi(vis[1]);
        (void) vipl_deregister_mem(dev->nic, buf, h);
        vipl_mem_free(dev->nic, buf);
    }
    /* made on first use: the bring-up makes the VI (discriminator 1) and,
     * failing after the posts, destroys it again */
    vis[1] = NULL;
    dev->vi_attrs = va;
    ep = mca_btl_via_endpoint_create(NULL, 1, MCA_BTL_VIA_DEV_LOCAL, &bogus);
    assert_non_null(ep);
    assert_int_not_equal(OPAL_SUCCESS, mca_btl_via_endpoint_bring_up_locked(ep));
    assert_null(vis[1]);
    assert_int_equal(1, c->vis_created[MCA_BTL_VIA_DEV_LOCAL]);
    mca_btl_via_endpoint_destroy(ep);
    for (int i = 0; i < VIA_EP_NFRAGS; ++i) {
        assert_non_null(opal_free_list_get(&dev->frags));
    }
    for (int i = 0; i < VIA_EP_NFRAGS; ++i) {
        opal_free_list_return(&dev->frags, &frags[i].base.super);
    }

    /* one credit left (a send needs two): try_send (sendi's) refuses and
     * queues nothing, since ob1 completes a sendi at once; send_locked
     * (btl_send's, completed by callback) queues in order */
    ep = mca_btl_via_endpoint_create(NULL, 1, MCA_BTL_VIA_DEV_LOCAL, &bogus);
    assert_non_null(ep);
    ep->state = MCA_BTL_VIA_EP_CONNECTED;
    ep->credits.c = 1;
    assert_int_equal(OPAL_ERR_OUT_OF_RESOURCE,
                     mca_btl_via_endpoint_try_send_locked(ep, &frags[0]));
    assert_int_equal(0, tc_credits_queued(&ep->credits));
    assert_int_equal(1, tc_credits_available(&ep->credits));
    assert_int_equal(OPAL_SUCCESS, mca_btl_via_endpoint_send_locked(ep, &frags[0]));
    assert_int_equal(1, tc_credits_queued(&ep->credits));
    /* behind a queued send, even a credited one waits: MPI order */
    ep->credits.c = 4;
    assert_int_equal(OPAL_ERR_OUT_OF_RESOURCE,
                     mca_btl_via_endpoint_try_send_locked(ep, &frags[1]));
    assert_int_equal(1, tc_credits_queued(&ep->credits));
    assert_ptr_equal(&frags[0].link, tc_credits_drain(&ep->credits));
    ep->state = MCA_BTL_VIA_EP_IDLE;
    mca_btl_via_endpoint_destroy(ep);

    vipl_destroy_cq(dev->recv_cq);
    vipl_destroy_ptag(dev->ptag);
    vipl_close_nic(dev->nic);
    dev->vis = NULL;
    dev->nic = NULL;
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_via_endpoint_create_fails_after_posting),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
