/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_bip_device.c: unit tests of btl_bip's device layer (bip_device.h,
 * provider shm) without MPI: several forked senders into one static
 * receive queue (order per sender, data patterns, wrap-around, full
 * queue), the queue-full report, the posted-receive limit and stale
 * handles, large sends by fragments into a posted receive from another
 * process with bounds checks, and the queue file's mode and removal.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "bip_device.h"

static char test_dir[256];
static char test_key[64];

static int setup(void **state)
{
    (void) state;
    snprintf(test_dir, sizeof(test_dir), "/tmp/test_bip_device.XXXXXX");
    if (NULL == mkdtemp(test_dir)) {
        return -1;
    }
    snprintf(test_key, sizeof(test_key), "k%d", (int) getpid());
    return 0;
}

/* every test must leave the directory empty: a file left behind fails
 * the test, and is removed so that a failed run leaves nothing in /tmp */
static int teardown(void **state)
{
    DIR *d = opendir(test_dir);
    struct dirent *e;
    int left = 0;

    (void) state;
    while (NULL != d && NULL != (e = readdir(d))) {
        char path[512];

        if ('.' == e->d_name[0]) {
            continue;
        }
        snprintf(path, sizeof(path), "%s/%s", test_dir, e->d_name);
        (void) unlink(path);
        ++left;
    }
    if (NULL != d) {
        closedir(d);
    }
    return 0 == rmdir(test_dir) && 0 == left ? 0 : -1;
}

static bip_dev_params_t params(uint32_t rank, uint32_t expected, uint32_t nslots,
                               uint32_t slot_size, uint32_t max_posted, size_t frag)
{
    bip_dev_params_t p = {.dir = test_dir,
                          .job_key = test_key,
                          .rank = rank,
                          .expected_peers = expected,
                          .nslots = nslots,
                          .slot_size = slot_size,
                          .max_posted = max_posted,
                          .frag_size = frag};
    return p;
}

static unsigned char pattern(uint32_t sender, uint32_t seq, size_t i)
{
    return (unsigned char) (sender * 131u + seq * 7u + i * 13u + 1u);
}

#define NSENDERS 3
#define PER_SENDER 500

/* three forked senders into one 8-slot queue: every message arrives once,
 * in order per sender, with its pattern; the queue wraps many times and
 * senders find it full */
static void test_forked_senders(void **state)
{
    bip_dev_params_t p = params(0, NSENDERS, 8, 128, 4, 4096);
    bip_dev_t *dev;
    pid_t kids[NSENDERS];
    uint32_t next[NSENDERS + 1] = {0};
    int total = 0;
    (void) state;

    assert_int_equal(bip_open(&p, &dev), 0);
    for (int s = 1; s <= NSENDERS; ++s) {
        kids[s - 1] = fork();
        assert_true(kids[s - 1] >= 0);
        if (0 == kids[s - 1]) {
            bip_dev_params_t cp = params((uint32_t) s, 0, 8, 128, 4, 4096);
            bip_dev_t *cdev;
            bip_peer_t *peer;
            long full = 0;

            if (0 != bip_open(&cp, &cdev) || 0 != bip_peer_connect(cdev, 0, &peer)) {
                _exit(2);
            }
            for (uint32_t seq = 0; seq < PER_SENDER; ++seq) {
                unsigned char *buf;
                uint32_t len = 8 + seq % 120;
                int rc;

                while (-EAGAIN == (rc = bip_ssend_reserve(peer, (void **) &buf))) {
                    ++full;
                }
                if (0 != rc) {
                    _exit(3);
                }
                memcpy(buf, &seq, 4);
                for (uint32_t i = 4; i < len; ++i) {
                    buf[i] = pattern((uint32_t) s, seq, i);
                }
                if (0 != bip_ssend_publish(peer, len)) {
                    _exit(4);
                }
            }
            bip_peer_disconnect(peer);
            bip_close(cdev);
            _exit(full > 0 ? 0 : 5);
        }
    }
    while (total < NSENDERS * PER_SENDER) {
        const unsigned char *msg;
        uint32_t len, src, seq;
        int rc = bip_srecv_peek(dev, (const void **) &msg, &len, &src);

        if (-EAGAIN == rc) {
            continue;
        }
        assert_int_equal(rc, 0);
        assert_true(src >= 1 && src <= NSENDERS);
        memcpy(&seq, msg, 4);
        assert_int_equal(seq, next[src]);
        assert_int_equal(len, 8 + seq % 120);
        for (uint32_t i = 4; i < len; ++i) {
            assert_int_equal(msg[i], pattern(src, seq, i));
        }
        next[src]++;
        bip_srecv_release(dev);
        ++total;
    }
    for (int s = 0; s < NSENDERS; ++s) {
        int st;
        assert_int_equal(waitpid(kids[s], &st, 0), kids[s]);
        assert_true(WIFEXITED(st));
        /* 5 would mean a sender never found the queue full */
        assert_int_equal(WEXITSTATUS(st), 0);
    }
    /* all connected: the file can go */
    assert_int_equal(bip_unlink_when_connected(dev), 1);
    bip_close(dev);
}

/* the queue reports full honestly, and frees up as the owner reads */
static void test_queue_full_and_wrap(void **state)
{
    bip_dev_params_t p0 = params(0, 1, 4, 64, 2, 4096), p1 = params(1, 1, 4, 64, 2, 4096);
    bip_dev_t *d0, *d1;
    bip_peer_t *to0;
    void *buf;
    char path[512];
    struct stat st;
    (void) state;

    assert_int_equal(bip_open(&p0, &d0), 0);
    assert_int_equal(bip_open(&p1, &d1), 0);
    /* the file: ours only, mode 0600 */
    snprintf(path, sizeof(path), "%s/bip.%s.0", test_dir, test_key);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    assert_int_equal(bip_unlink_when_connected(d0), 0);
    assert_int_equal(bip_peer_connect(d1, 0, &to0), 0);
    /* connected: the owner removes it */
    assert_int_equal(bip_unlink_when_connected(d0), 1);
    assert_int_equal(stat(path, &st), -1);
    /* a peer that does not exist (yet) */
    {
        bip_peer_t *none;
        assert_int_equal(bip_peer_connect(d0, 7, &none), -ENOENT);
    }

    for (uint32_t round = 0; round < 10; ++round) {
        for (uint32_t k = 0; k < 4; ++k) {
            assert_int_equal(bip_ssend_reserve(to0, &buf), 0);
            memset(buf, (int) (round * 4 + k), 64);
            assert_int_equal(bip_ssend_publish(to0, 64), 0);
        }
        assert_int_equal(bip_ssend_reserve(to0, &buf), -EAGAIN);
        for (uint32_t k = 0; k < 4; ++k) {
            const unsigned char *m;
            uint32_t len, src;
            assert_int_equal(bip_srecv_peek(d0, (const void **) &m, &len, &src), 0);
            assert_int_equal(len, 64);
            assert_int_equal(src, 1);
            assert_int_equal(m[0], round * 4 + k);
            assert_int_equal(m[63], round * 4 + k);
            bip_srecv_release(d0);
        }
        {
            const void *m;
            uint32_t len, src;
            assert_int_equal(bip_srecv_peek(d0, &m, &len, &src), -EAGAIN);
        }
    }
    bip_peer_disconnect(to0);
    bip_close(d1);
    bip_close(d0);
}

/* max_posted receives at a time; a stale handle is refused */
static void test_posted_limit(void **state)
{
    bip_dev_params_t p0 = params(0, 1, 4, 64, 3, 4096), p1 = params(1, 1, 4, 64, 3, 4096);
    bip_dev_t *d0, *d1;
    bip_peer_t *to0;
    uint32_t h[4], old;
    /* zeroed: valgrind does not see bytes written by CMA */
    char bufs[4][100] = {{0}};
    char src[100];
    struct iovec iov = {.iov_base = src, .iov_len = sizeof(src)};
    (void) state;

    memset(src, 'x', sizeof(src));
    assert_int_equal(bip_open(&p0, &d0), 0);
    assert_int_equal(bip_open(&p1, &d1), 0);
    assert_int_equal(bip_peer_connect(d1, 0, &to0), 0);
    for (int i = 0; i < 3; ++i) {
        assert_int_equal(bip_post_recv(d0, bufs[i], sizeof(bufs[i]), &h[i]), 0);
    }
    assert_int_equal(bip_post_recv(d0, bufs[3], sizeof(bufs[3]), &h[3]), -EAGAIN);
    old = h[1];
    bip_recv_unpost(d0, h[1]);
    assert_int_equal(bip_recv_test(d0, old), -EINVAL);
    assert_int_equal(bip_post_recv(d0, bufs[3], sizeof(bufs[3]), &h[3]), 0);
    assert_int_not_equal(h[3], old);
    /* a send to the withdrawn receive is refused, nothing written */
    assert_int_equal(bip_send_large(to0, old, 0, &iov, 1, sizeof(src)), -EINVAL);
    assert_int_equal(bip_send_large(to0, 0, 0, &iov, 1, sizeof(src)), -EINVAL);
    assert_int_equal(bip_send_large(to0, 0xffffffffu, 0, &iov, 1, sizeof(src)), -EINVAL);
    assert_int_equal(bip_recv_test(d0, h[3]), 0);
    /* outside the published receive */
    assert_int_equal(bip_send_large(to0, h[3], 1, &iov, 1, sizeof(src)), -ERANGE);
    assert_int_equal(bip_send_large(to0, h[3], (size_t) -1, &iov, 1, 1), -ERANGE);
    assert_int_equal(bip_recv_test(d0, h[3]), 0);
    /* inside it */
    assert_int_equal(bip_send_large(to0, h[3], 0, &iov, 1, sizeof(src)), 0);
    assert_int_equal(bip_recv_test(d0, h[3]), (long) sizeof(src));
    assert_memory_equal(bufs[3], src, sizeof(src));
    for (int i = 0; i < 4; ++i) {
        if (1 != i) {
            bip_recv_unpost(d0, h[i]);
        }
    }
    bip_peer_disconnect(to0);
    bip_close(d1);
    bip_close(d0);
}

/* a forked sender writes 1 MiB + 3 bytes from two pieces into our posted
 * receive in 10000-byte fragments; the receiver sees it grow */
static void test_large_from_other_process(void **state)
{
    const size_t len = (1u << 20) + 3;
    bip_dev_params_t p0 = params(0, 1, 4, 64, 2, 10000);
    bip_dev_t *d0;
    unsigned char *buf = calloc(1, len);
    uint32_t h;
    int pipefd[2], st;
    long got, seen_partial = 0;
    pid_t kid;
    (void) state;

    assert_non_null(buf);
    assert_int_equal(bip_probe_large(NULL), 0);
    assert_int_equal(bip_open(&p0, &d0), 0);
    assert_int_equal(bip_post_recv(d0, buf, len, &h), 0);
    assert_int_equal(pipe(pipefd), 0);
    kid = fork();
    assert_true(kid >= 0);
    if (0 == kid) {
        bip_dev_params_t p1 = params(1, 0, 4, 64, 2, 10000);
        bip_dev_t *d1;
        bip_peer_t *to0;
        unsigned char *src = malloc(len);
        struct iovec iov[2];

        if (NULL == src || 0 != bip_open(&p1, &d1) || 0 != bip_peer_connect(d1, 0, &to0)) {
            _exit(2);
        }
        for (size_t i = 0; i < len; ++i) {
            src[i] = pattern(9, 9, i);
        }
        iov[0].iov_base = src;
        iov[0].iov_len = 12345;
        iov[1].iov_base = src + 12345;
        iov[1].iov_len = len - 12345;
        if (0 != bip_send_large(to0, h, 0, iov, 2, len)) {
            _exit(3);
        }
        bip_peer_disconnect(to0);
        bip_close(d1);
        _exit(0);
    }
    close(pipefd[0]);
    close(pipefd[1]);
    while ((got = bip_recv_test(d0, h)) < (long) len) {
        assert_true(got >= 0);
        if (got > 0) {
            seen_partial = 1;
        }
    }
    (void) seen_partial;
    assert_int_equal(waitpid(kid, &st, 0), kid);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
    for (size_t i = 0; i < len; ++i) {
        if (buf[i] != pattern(9, 9, i)) {
            fail_msg("byte %zu differs", i);
        }
    }
    bip_recv_unpost(d0, h);
    bip_close(d0);
    free(buf);
}

/* the receiver-driven read: the whole range arrives in fragments, with
 * its pattern; a range outside the peer's memory fails (-EFAULT) */
static void test_read_large(void **state)
{
    const size_t len = 3 * 4096 + 5;
    bip_dev_params_t p0 = params(0, 1, 4, 64, 2, 4096), p1 = params(1, 1, 4, 64, 2, 4096);
    long page = sysconf(_SC_PAGESIZE);
    bip_dev_t *d0, *d1;
    bip_peer_t *to0;
    unsigned char *src = malloc(len), *dst = calloc(1, len);
    unsigned char *two;
    (void) state;

    assert_non_null(src);
    assert_non_null(dst);
    for (size_t i = 0; i < len; ++i) {
        src[i] = pattern(4, 2, i);
    }
    assert_int_equal(bip_open(&p0, &d0), 0);
    assert_int_equal(bip_open(&p1, &d1), 0);
    assert_int_equal(bip_peer_connect(d1, 0, &to0), 0);
    assert_int_equal(bip_read_large(to0, dst, (uint64_t) (uintptr_t) src, len), 0);
    assert_memory_equal(dst, src, len);
    assert_int_equal(bip_read_large(to0, dst, 0, 0), 0);
    /* a source that ends in an unmapped page, a null destination, a
     * range that wraps */
    two = mmap(NULL, 2 * (size_t) page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(MAP_FAILED != two);
    memset(two, 7, (size_t) page);
    assert_int_equal(munmap(two + page, (size_t) page), 0);
    assert_int_equal(bip_read_large(to0, dst, (uint64_t) (uintptr_t) (two + page - 100), 200),
                     -EFAULT);
    assert_int_equal(bip_read_large(to0, NULL, (uint64_t) (uintptr_t) src, 10), -EFAULT);
    assert_int_equal(bip_read_large(to0, dst, UINT64_MAX - 5, 10), -EFAULT);
    assert_int_equal(munmap(two, (size_t) page), 0);
    bip_peer_disconnect(to0);
    bip_close(d1);
    bip_close(d0);
    free(src);
    free(dst);
}

/* bad geometry is refused at open and at connect */
static void test_bad_params(void **state)
{
    bip_dev_params_t p = params(0, 1, 3, 64, 2, 4096);
    bip_dev_t *d0, *d1;
    bip_peer_t *peer;
    (void) state;

    assert_int_equal(bip_open(&p, &d0), -EINVAL); /* not a power of two */
    p = params(0, 1, 4, 64, 0, 4096);
    assert_int_equal(bip_open(&p, &d0), -EINVAL); /* no posted receive */
    p = params(0, 1, 4, 64, 2, 0);
    assert_int_equal(bip_open(&p, &d0), -EINVAL); /* no fragment size */
    p = params(0, 1, 4, 64, 2, 4096);
    assert_int_equal(bip_open(&p, &d0), 0);
    p = params(1, 1, 8, 64, 2, 4096);
    assert_int_equal(bip_open(&p, &d1), 0);
    assert_int_equal(bip_peer_connect(d1, 0, &peer), -EPROTO); /* 8 vs 4 slots */
    assert_int_equal(bip_peer_connect(d1, 1, &peer), -EINVAL); /* itself */
    bip_close(d1);
    bip_close(d0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_forked_senders, setup, teardown),
        cmocka_unit_test_setup_teardown(test_queue_full_and_wrap, setup, teardown),
        cmocka_unit_test_setup_teardown(test_posted_limit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_large_from_other_process, setup, teardown),
        cmocka_unit_test_setup_teardown(test_read_large, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_params, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
