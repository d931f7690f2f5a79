/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_bip_msg.c: btl_bip's parser of the messages of its static receive
 * queue (mca_btl_bip_handle_msg in btl_bip_recv.c, compiled into this
 * file) against hostile input, for an endpoint of each reach: the
 * same-host module (4160-byte SHORTs, medium fragments up to 32 KiB)
 * and the ofi module (65600-byte SHORTs, no medium range). Every
 * message is a heap buffer of exactly its length, so valgrind or ASan
 * sees any read past it. Checked: a SHORT reaches ob1 only with a
 * registered tag and a length within what arrived, and the callback
 * sees exactly that many bytes; a REQ is taken only with a size in the
 * module's medium range (above its short limit, at most its
 * max_send_size), else the peer is reported; short REQs and ACKs, an
 * ACK that answers no request, bad credits and unknown types are
 * reported; every slot is released exactly once. The device is not
 * opened: the release of a slot and the post of a receive are replaced
 * (--wrap) by counters.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../btl_bip/btl_bip_recv.c"

#define MSG_TAG 65 /* the ob1 tag this test registers */

static int msg_releases;

void __wrap_bip_srecv_release(bip_dev_t *dev);
void __wrap_bip_srecv_release(bip_dev_t *dev)
{
    (void) dev;
    ++msg_releases;
}

/* every receive waits in the receive FIFO: nothing is posted */
int __wrap_bip_peer_post_recv(bip_peer_t *peer, void *buf, size_t len, uint32_t *handle);
int __wrap_bip_peer_post_recv(bip_peer_t *peer, void *buf, size_t len, uint32_t *handle)
{
    (void) peer;
    (void) buf;
    (void) len;
    (void) handle;
    return -EAGAIN;
}

static int msg_delivered;
static size_t msg_delivered_len;
static unsigned msg_sum;

/* the callback ob1 would have for MSG_TAG: every byte it is given is
 * read, so a byte past the message is an invalid read */
static void msg_seen(const mca_btl_base_segment_t *seg)
{
    const unsigned char *p = seg->seg_addr.pval;

    for (size_t i = 0; i < seg->seg_len; ++i) {
        msg_sum += p[i];
    }
    msg_delivered_len = seg->seg_len;
    ++msg_delivered;
}

#if TC_OMPI_SERIES >= 50
static void msg_cb(mca_btl_base_module_t *btl, const mca_btl_base_receive_descriptor_t *desc)
{
    (void) btl;
    msg_seen(desc->des_segments);
}
#else
static void msg_cb(mca_btl_base_module_t *btl, mca_btl_base_tag_t tag,
                   mca_btl_base_descriptor_t *desc, void *cbdata)
{
    (void) btl;
    (void) tag;
    (void) cbdata;
    msg_seen(desc->des_segments);
}
#endif

static int msg_errors;

static void msg_error_cb(struct mca_btl_base_module_t *btl, int32_t flags, struct opal_proc_t *proc,
                         char *info)
{
    (void) btl;
    (void) flags;
    (void) proc;
    (void) info;
    ++msg_errors;
}

static void msg_setup_component(void)
{
    mca_btl_bip_component_t *c = &mca_btl_bip_component;

    c->output = -1;
    c->nprocs = 4;
    c->max_eps = 4;
    c->my_vpid = 0;
    c->short_limit = 4096 + 64;
    c->threads = false;
    OBJ_CONSTRUCT(&c->recv_fifo, opal_list_t);
    OBJ_CONSTRUCT(&c->posted, opal_list_t);
    OBJ_CONSTRUCT(&c->lock, opal_mutex_t);
    mca_btl_bip_module.short_limit = 4096 + 64;
    mca_btl_bip_module.super.btl_max_send_size = 32 * 1024;
    mca_btl_bip_module.error_cb = msg_error_cb;
    mca_btl_bip_ofi_module.short_limit = 64 * 1024 + 64;
    mca_btl_bip_ofi_module.super.btl_max_send_size = 64 * 1024 + 64;
    mca_btl_bip_ofi_module.error_cb = msg_error_cb;
    c->endpoints = calloc(c->nprocs, sizeof(*c->endpoints));
    assert_non_null(c->endpoints);
    for (uint32_t i = 0; i < c->nprocs; ++i) {
        OBJ_CONSTRUCT(c->endpoints + i, mca_btl_bip_endpoint_t);
        c->endpoints[i].peer_rank = (int) i;
    }
    mca_btl_base_active_message_trigger[MSG_TAG].cbfunc = msg_cb;
    mca_btl_base_active_message_trigger[MSG_TAG].cbdata = NULL;
}

static void msg_teardown_component(void)
{
    mca_btl_bip_component_t *c = &mca_btl_bip_component;
    opal_list_item_t *item;

    while (NULL != (item = opal_list_remove_first(&c->recv_fifo))) {
        mca_btl_bip_rreq_t *rreq = (mca_btl_bip_rreq_t *) item;

        free(rreq->buf);
        OBJ_RELEASE(rreq);
    }
    for (uint32_t i = 0; i < c->nprocs; ++i) {
        c->endpoints[i].peer = NULL;
        OBJ_DESTRUCT(c->endpoints + i);
    }
    free(c->endpoints);
    c->endpoints = NULL;
    OBJ_DESTRUCT(&c->recv_fifo);
    OBJ_DESTRUCT(&c->posted);
    OBJ_DESTRUCT(&c->lock);
    mca_btl_base_active_message_trigger[MSG_TAG].cbfunc = NULL;
}

/* endpoint `rank` connected through the given module, with a fresh
 * credit account (as at connect) */
static mca_btl_bip_endpoint_t *msg_endpoint(uint32_t rank, mca_btl_bip_module_t *mod)
{
    mca_btl_bip_endpoint_t *ep = mca_btl_bip_component.endpoints + rank;

    tc_credits_fini(&ep->cr);
    (void) tc_credits_init(&ep->cr, 64);
    ep->module = mod;
    ep->state = MCA_BTL_BIP_EP_CONNECTED;
    ep->lost = 0; /* a peer is reported once: each case starts afresh */
    return ep;
}

/* hand one message of len bytes (a heap copy of exactly that length) to
 * the parser; returns whether the peer was reported */
static bool msg_feed(const void *bytes, uint32_t len, uint32_t src)
{
    unsigned char *m = malloc(len ? len : 1);
    int errors = msg_errors, releases = msg_releases;

    assert_non_null(m);
    memcpy(m, bytes, len);
    mca_btl_bip_handle_msg(m, len, src);
    /* a lost peer is reported from progress */
    (void) mca_btl_bip_lost_progress();
    /* the slot is released once, whatever the message was */
    assert_int_equal(msg_releases, releases + 1);
    free(m);
    return msg_errors != errors;
}

static void msg_put_hdr(unsigned char *buf, uint8_t type, uint8_t tag, uint16_t credits,
                        uint32_t len)
{
    mca_btl_bip_hdr_t h = {.type = type, .tag = tag, .credits = credits, .len = len};

    memcpy(buf, &h, sizeof(h));
}

/* a REQ for `size` bytes to an endpoint of `mod`: taken (a receive waits
 * in the FIFO) or the peer reported */
static bool msg_req(mca_btl_bip_module_t *mod, uint64_t size)
{
    unsigned char buf[sizeof(mca_btl_bip_hdr_t) + sizeof(mca_btl_bip_req_t)];
    mca_btl_bip_req_t req = {.seq = 1, .size = size};
    size_t waiting = opal_list_get_size(&mca_btl_bip_component.recv_fifo);
    bool reported;

    (void) msg_endpoint(1, mod);
    msg_put_hdr(buf, MCA_BTL_BIP_REQ, MSG_TAG, 0, 0);
    memcpy(buf + sizeof(mca_btl_bip_hdr_t), &req, sizeof(req));
    reported = msg_feed(buf, sizeof(buf), 1);
    /* a REQ that was taken has a receive waiting for a posted slot; a
     * peer reported lost has none left (released with the loss) */
    if (!reported) {
        assert_int_equal(opal_list_get_size(&mca_btl_bip_component.recv_fifo), waiting + 1);
    } else {
        mca_btl_bip_rreq_t *rreq;

        OPAL_LIST_FOREACH(rreq, &mca_btl_bip_component.recv_fifo, mca_btl_bip_rreq_t)
        {
            assert_ptr_not_equal(rreq->ep, mca_btl_bip_component.endpoints + 1);
        }
    }
    return reported;
}

/* the medium range of each reach, at its edges */
static void test_msg_req_range(void **state)
{
    mca_btl_bip_module_t *shm = &mca_btl_bip_module, *ofi = &mca_btl_bip_ofi_module;
    (void) state;

    msg_setup_component();
    assert_true(msg_req(shm, shm->short_limit));
    assert_false(msg_req(shm, shm->short_limit + 1));
    assert_false(msg_req(shm, shm->super.btl_max_send_size));
    assert_true(msg_req(shm, shm->super.btl_max_send_size + 1));
    assert_true(msg_req(shm, UINT64_MAX));
    assert_true(msg_req(shm, 0));
    /* the ofi reach sends every fragment up to max_send_size as SHORT:
     * its medium range is empty, a REQ is always refused */
    assert_true(msg_req(ofi, ofi->short_limit));
    assert_true(msg_req(ofi, ofi->short_limit + 1));
    assert_true(msg_req(ofi, shm->short_limit + 1));
    assert_true(msg_req(ofi, UINT64_MAX));
    msg_teardown_component();
}

/* SHORTs whose length is within, at and past what arrived */
static void test_msg_short_lengths(void **state)
{
    const uint32_t sizes[] = {8, 9, 64, 4160 + 8, 65600 + 8};
    unsigned char *buf = calloc(1, 65600 + 8);
    (void) state;

    assert_non_null(buf);
    msg_setup_component();
    for (int r = 0; r < 2; ++r) {
        mca_btl_bip_module_t *mod = 0 == r ? &mca_btl_bip_module : &mca_btl_bip_ofi_module;

        for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); ++k) {
            uint32_t len = sizes[k], body = len - (uint32_t) sizeof(mca_btl_bip_hdr_t);

            /* exactly what arrived: delivered, every byte seen */
            (void) msg_endpoint(2, mod);
            msg_put_hdr(buf, MCA_BTL_BIP_SHORT, MSG_TAG, 0, body);
            msg_delivered = 0;
            assert_false(msg_feed(buf, len, 2));
            assert_int_equal(msg_delivered, 1);
            assert_int_equal(msg_delivered_len, body);
            /* one byte more than arrived, or far more: reported, not
             * delivered */
            for (uint32_t extra = 1; extra <= 2; ++extra) {
                (void) msg_endpoint(2, mod);
                msg_put_hdr(buf, MCA_BTL_BIP_SHORT, MSG_TAG, 0, 1 == extra ? body + 1 : UINT32_MAX);
                msg_delivered = 0;
                assert_true(msg_feed(buf, len, 2));
                assert_int_equal(msg_delivered, 0);
            }
            /* a tag nobody registered */
            (void) msg_endpoint(2, mod);
            msg_put_hdr(buf, MCA_BTL_BIP_SHORT, MSG_TAG + 1, 0, body);
            assert_true(msg_feed(buf, len, 2));
        }
    }
    msg_teardown_component();
    free(buf);
}

/* random messages of random lengths from random senders: nothing is
 * read past a message, nothing but a valid SHORT reaches ob1, every
 * slot is released once */
static void test_msg_fuzz(void **state)
{
    unsigned int seed = 4242;
    unsigned char *buf = malloc(70000);
    (void) state;

    assert_non_null(buf);
    msg_setup_component();
    for (int round = 0; round < 100000; ++round) {
        mca_btl_bip_module_t *mod =
            rand_r(&seed) % 2 ? &mca_btl_bip_module : &mca_btl_bip_ofi_module;
        uint32_t len = (uint32_t) (rand_r(&seed) % 5 ? rand_r(&seed) % 80 : rand_r(&seed) % 70000);
        uint32_t src = (uint32_t) (rand_r(&seed) % 6); /* 0 (us), 4 and 5 are no peers */

        for (uint32_t i = 0; i < len; ++i) {
            buf[i] = (unsigned char) rand_r(&seed);
        }
        if (len >= sizeof(mca_btl_bip_hdr_t)) {
            /* a plausible header now and then: known types, our tag,
             * small credits, a length near what arrived */
            if (rand_r(&seed) % 2) {
                buf[0] = (unsigned char) (1 + rand_r(&seed) % 5);
            }
            if (rand_r(&seed) % 2) {
                buf[1] = MSG_TAG;
            }
            if (rand_r(&seed) % 2) {
                uint16_t cr = (uint16_t) (rand_r(&seed) % 4);

                memcpy(buf + 2, &cr, 2);
            }
            if (rand_r(&seed) % 2) {
                uint32_t l = len - (uint32_t) sizeof(mca_btl_bip_hdr_t) +
                    (uint32_t) (rand_r(&seed) % 3) - 1u;

                memcpy(buf + 4, &l, 4);
            }
        }
        if (src >= 1 && src <= 3) {
            (void) msg_endpoint(src, mod);
        }
        msg_delivered = 0;
        (void) msg_feed(buf, len, src);
        if (1 == msg_delivered) {
            mca_btl_bip_hdr_t h;

            memcpy(&h, buf, sizeof(h));
            assert_int_equal(h.type, MCA_BTL_BIP_SHORT);
            assert_int_equal(h.tag, MSG_TAG);
            assert_true(h.len <= len - sizeof(h));
            assert_int_equal(msg_delivered_len, h.len);
        }
    }
    msg_teardown_component();
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_msg_req_range),
        cmocka_unit_test(test_msg_short_lengths),
        cmocka_unit_test(test_msg_fuzz),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
