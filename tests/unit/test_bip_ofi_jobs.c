/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_bip_ofi_jobs.c: btl_bip's ofi provider and processes of another
 * job (MPI_Comm_spawn, connect/accept): every ofi message carries the
 * sender's jobid; a message of the own job reports the sender's stamp as
 * before, one of another job the stamp the receiving device's resolver
 * gives that (jobid, vpid) on first contact, and a message the resolver
 * refuses (or no resolver) is dropped as -EPROTO with the next message
 * still delivered. Both send paths (reserve + publish, sent in place).
 * Devices in one process over libfabric's tcp provider on the loopback
 * interface (BIP_TEST_OFI_DOMAIN, BIP_TEST_OFI_PROVIDER); skips visibly
 * when there is none.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include <cmocka.h>
#include <rdma/fabric.h>

#include "bip_device.h"
#include "btl_bip_hdr.h"
#include "test_bip_ofi.h"

#define SLOT 256
#define JOB_A 0x70000u /* the receiver's job */
#define JOB_B 0x90000u /* the spawned job */
#define JOB_C 0xb0000u /* a job the resolver has no room for */
#define INDEX_B3 42u   /* the index the resolver gives (JOB_B, vpid 3) */

static unsigned int resolve_calls;

/* the BTL's resolver in small: one process of another job gets an index */
static int test_resolve(uint32_t jobid, uint32_t vpid, uint32_t *stamp)
{
    ++resolve_calls;
    if (JOB_B == jobid && 3 == vpid) {
        *stamp = INDEX_B3;
        return 0;
    }
    return -ENOSPC;
}

static int open_job_dev(uint32_t jobid, uint32_t stamp, bool resolver, bip_dev_t **dev)
{
    bip_dev_params_t p = {.nslots = 16,
                          .slot_size = SLOT,
                          .max_posted = 4,
                          .frag_size = 4096,
                          .provider = "ofi",
                          .ofi_prov = test_provider(),
                          .ofi_domain = test_domain(),
                          .stamp = stamp,
                          .remote_peers = 1,
                          .ofi_timeout = 3,
                          .jobid = jobid,
                          .resolve = resolver ? test_resolve : NULL,
                          .other_jobs = 4};

    return bip_open(&p, dev);
}

static void fill(unsigned char *buf, uint32_t len, unsigned int seed)
{
    for (uint32_t i = 0; i < len; ++i) {
        buf[i] = (unsigned char) (seed * 131u + i * 7u + 1u);
    }
}

/* one message by reserve + publish, or in place (gather), in a thread
 * of its own: the sender's connection and sends wait for the receiver,
 * which reads in the main thread */
typedef struct sender {
    pthread_t thr;
    bip_dev_t *from;
    bip_peer_t *peer;
    uint32_t len;
    unsigned int seed;
    bool gather;
    int rc;
} sender_t;

static void *sender_main(void *arg)
{
    sender_t *snd = arg;
    unsigned char data[SLOT];
    void *buf;

    fill(data, snd->len, snd->seed);
    if (snd->gather) {
        struct iovec iov = {.iov_base = data + 8, .iov_len = snd->len - 8};
        void *cookie = NULL;
        int status = -1;

        snd->rc = bip_ssend_gather(snd->peer, data, 8, &iov, 1, data);
        if (1 == snd->rc) {
            /* the data must stay until reaped */
            while (1 != bip_ssend_reap(snd->from, &cookie, &status)) {
            }
            snd->rc = cookie == data ? status : -EINVAL;
        }
        if (-ENOTSUP != snd->rc) {
            return NULL;
        }
    }
    snd->rc = bip_ssend_reserve(snd->peer, &buf);
    if (0 == snd->rc) {
        memcpy(buf, data, snd->len);
        snd->rc = bip_ssend_publish(snd->peer, snd->len);
    }
    return NULL;
}

static int recv_one(bip_dev_t *dev, uint32_t want_len, unsigned int seed, uint32_t *src);

/* one message from `from` to `to`: what the receiver's peek said */
static int send_recv(bip_dev_t *from, bip_peer_t *peer, bip_dev_t *to, uint32_t len,
                     unsigned int seed, bool gather, uint32_t *src)
{
    sender_t snd = {.from = from, .peer = peer, .len = len, .seed = seed, .gather = gather};
    int rc;

    assert_int_equal(pthread_create(&snd.thr, NULL, sender_main, &snd), 0);
    rc = recv_one(to, len, seed, src);
    pthread_join(snd.thr, NULL);
    assert_int_equal(snd.rc, 0);
    return rc;
}

/* the next message: its stamp and pattern, or the drop of a refused one */
static int recv_one(bip_dev_t *dev, uint32_t want_len, unsigned int seed, uint32_t *src)
{
    unsigned char want[SLOT];
    const void *msg;
    uint32_t len;
    int rc;

    while (-EAGAIN == (rc = bip_srecv_peek(dev, &msg, &len, src))) {
    }
    if (0 != rc) {
        return rc;
    }
    fill(want, want_len, seed);
    assert_int_equal(len, want_len);
    assert_memory_equal(msg, want, want_len);
    bip_srecv_release(dev);
    return 0;
}

static int skip_if_no_ofi(void)
{
    bip_dev_t *dev;
    int rc = open_job_dev(JOB_A, 0, false, &dev);

    if (test_bip_no_ofi("test_bip_ofi_jobs", rc)) {
        return 1;
    }
    bip_close(dev);
    return 0;
}

static void test_other_job_stamps(void **state)
{
    bip_dev_t *a, *own, *b3, *c0;
    bip_peer_t *p_own, *p_b3, *p_c0;
    uint32_t src = 0;
    (void) state;

    if (skip_if_no_ofi()) {
        skip();
    }
    resolve_calls = 0;
    assert_int_equal(open_job_dev(JOB_A, 0, true, &a), 0);
    assert_int_equal(open_job_dev(JOB_A, 1, true, &own), 0);
    assert_int_equal(open_job_dev(JOB_B, 3, true, &b3), 0);
    assert_int_equal(open_job_dev(JOB_C, 0, true, &c0), 0);
    test_bip_connect_to(own, a, 0, &p_own);
    test_bip_connect_to(b3, a, 0, &p_b3);
    test_bip_connect_to(c0, a, 0, &p_c0);

    for (int g = 0; g < 2; ++g) {
        resolve_calls = 0;
        /* own job: its stamp, the resolver not asked */
        assert_int_equal(send_recv(own, p_own, a, 40, 1, g, &src), 0);
        assert_int_equal(src, 1);
        assert_int_equal(resolve_calls, 0);
        /* another job: the resolver's index, not the sender's vpid 3 */
        assert_int_equal(send_recv(b3, p_b3, a, 200, 2, g, &src), 0);
        assert_int_equal(src, INDEX_B3);
        assert_int_equal(resolve_calls, 1);
        /* a job the resolver refuses: dropped, the next message delivered */
        assert_int_equal(send_recv(c0, p_c0, a, 24, 3, g, &src), -EPROTO);
        assert_int_equal(resolve_calls, 2);
        assert_int_equal(send_recv(b3, p_b3, a, 16, 4, g, &src), 0);
        assert_int_equal(src, INDEX_B3);
        assert_int_equal(resolve_calls, 3);
    }
    bip_peer_disconnect(p_own);
    bip_peer_disconnect(p_b3);
    bip_peer_disconnect(p_c0);
    bip_close(own);
    bip_close(b3);
    bip_close(c0);
    bip_close(a);
}

/* no resolver (the BTL with btl_bip_other_jobs 0): another job's message
 * is dropped, the own job's still arrive */
static void test_no_resolver(void **state)
{
    bip_dev_t *a, *b3, *own;
    bip_peer_t *p_b3, *p_own;
    uint32_t src = 0;
    (void) state;

    if (skip_if_no_ofi()) {
        skip();
    }
    assert_int_equal(open_job_dev(JOB_A, 0, false, &a), 0);
    assert_int_equal(open_job_dev(JOB_B, 3, true, &b3), 0);
    assert_int_equal(open_job_dev(JOB_A, 2, false, &own), 0);
    test_bip_connect_to(b3, a, 0, &p_b3);
    test_bip_connect_to(own, a, 0, &p_own);
    assert_int_equal(send_recv(b3, p_b3, a, 64, 5, false, &src), -EPROTO);
    assert_int_equal(send_recv(own, p_own, a, 64, 6, false, &src), 0);
    assert_int_equal(src, 2);
    bip_peer_disconnect(p_b3);
    bip_peer_disconnect(p_own);
    bip_close(b3);
    bip_close(own);
    bip_close(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_other_job_stamps),
        cmocka_unit_test(test_no_resolver),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
