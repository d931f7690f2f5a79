/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_sci_ring.c: unit tests of btl_sci's ring protocol without MPI, two
 * processes via fork.  Each process creates the segment its peer writes
 * into (layout of btl_sci_hdr.h: Completed counter, idle flag, ring) and
 * connects to the peer's, exactly as the BTL does; messages go by remote
 * stores into the peer's ring, slots come back through the Completed
 * counter written into the sender's segment.  Covered: pattern-checked
 * messages of every length 0..slot size with many wrap-arounds, a full
 * ring (the sender must stop at exactly N messages and resume after the
 * receiver consumes), and peer death (the survivor drains what arrived,
 * then its sequence reports the transfer error instead of hanging).
 */

#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sci_device.h"
#include "btl_sci_hdr.h"
#include "tc_ring.h"

#define NSLOTS 8
#define SLOT 256

typedef struct side {
    sci_desc_t *sd;
    sci_local_segment_t *lseg;
    sci_remote_segment_t *rseg;
    sci_sequence_t *seq;
    tc_ring_producer_t out;
    tc_ring_consumer_t in;
} side_t;

static char dir[64];

static size_t seg_bytes(void)
{
    return MCA_BTL_SCI_SEG_RING_OFF + tc_ring_size(NSLOTS, SLOT);
}

/* me creates L[me][peer] with a formatted ring */
static void side_create(side_t *s, int me, int peer)
{
    sci_open_params_t p = {.segment_dir = dir, .job_key = "ring"};
    char *base;

    assert_int_equal(SCI_ERR_OK, sci_open(&p, &s->sd));
    assert_int_equal(
        SCI_ERR_OK,
        sci_create_segment(s->sd, MCA_BTL_SCI_SEGMENT_ID(me, peer), seg_bytes(), &s->lseg));
    base = sci_local_segment_address(s->lseg);
    assert_int_equal(0,
                     tc_ring_format(base + MCA_BTL_SCI_SEG_RING_OFF,
                                    sci_local_segment_size(s->lseg) - MCA_BTL_SCI_SEG_RING_OFF,
                                    NSLOTS, SLOT));
    assert_int_equal(SCI_ERR_OK, sci_prepare_segment(s->lseg));
    assert_int_equal(SCI_ERR_OK, sci_set_segment_available(s->lseg, 1));
}

/* connect to L[peer][me] (retrying while the peer is not there yet) and
 * attach both rings */
static int side_connect(side_t *s, int me, int peer)
{
    char *rbase, *lbase;
    size_t rsize, lsize;
    sci_error_t err;

    for (int i = 0; i < 100000; ++i) {
        err = sci_connect_segment(s->sd, sci_local_node_id(s->sd), MCA_BTL_SCI_SEGMENT_ID(peer, me),
                                  &s->rseg);
        if (SCI_ERR_NO_SUCH_SEGMENT != err) {
            break;
        }
        usleep(1000);
    }
    if (SCI_ERR_OK != err) {
        return -1;
    }
    rsize = sci_remote_segment_size(s->rseg);
    rbase = sci_map_remote_segment(s->rseg, 0, rsize);
    lsize = sci_local_segment_size(s->lseg);
    lbase = sci_local_segment_address(s->lseg);
    if (0 !=
            tc_ring_producer_init(&s->out, rbase + MCA_BTL_SCI_SEG_RING_OFF,
                                  rsize - MCA_BTL_SCI_SEG_RING_OFF, NSLOTS, SLOT,
                                  (const uint64_t *) (lbase + MCA_BTL_SCI_SEG_CONSUMED_OFF)) ||
        0 !=
            tc_ring_consumer_init(&s->in, lbase + MCA_BTL_SCI_SEG_RING_OFF,
                                  lsize - MCA_BTL_SCI_SEG_RING_OFF, NSLOTS, SLOT,
                                  (uint64_t *) (rbase + MCA_BTL_SCI_SEG_CONSUMED_OFF), 2)) {
        return -1;
    }
    if (SCI_ERR_OK != sci_create_map_sequence(s->rseg, &s->seq)) {
        return -1;
    }
    return 0;
}

static void side_close(side_t *s)
{
    if (s->seq) {
        sci_remove_sequence(s->seq);
    }
    if (s->rseg) {
        sci_disconnect_segment(s->rseg);
    }
    if (s->lseg) {
        sci_remove_segment(s->lseg);
    }
    sci_close(s->sd);
    memset(s, 0, sizeof(*s));
}

static unsigned char pat(uint32_t msg, uint32_t i)
{
    return (unsigned char) (msg * 7u + i * 13u + (i >> 8));
}

/* send one message, waiting for a free slot; -1 if the peer died */
static int send_msg(side_t *s, uint32_t msg, uint32_t len)
{
    unsigned char *dst;

    while (0 != tc_ring_reserve(&s->out, (void **) &dst)) {
        if (SCI_ERR_OK != sci_check_sequence(s->seq)) {
            return -1;
        }
    }
    for (uint32_t i = 0; i < len; ++i) {
        dst[i] = pat(msg, i);
    }
    return tc_ring_publish(&s->out, len, msg);
}

static int setup_dir(void **state)
{
    (void) state;
    strcpy(dir, "/tmp/test_sci_ring.XXXXXX");
    assert_non_null(mkdtemp(dir));
    return 0;
}

static int teardown_dir(void **state)
{
    (void) state;
    /* every segment name is gone: nothing left behind */
    assert_int_equal(0, rmdir(dir));
    return 0;
}

/* child: sender of `count` messages of every length, then waits for the
 * parent's go to exit (so its segment outlives the parent's reads) */
static void child_sender(int count, int go_fd)
{
    side_t s = {0};
    char c;

    side_create(&s, 1, 0);
    if (0 != side_connect(&s, 1, 0)) {
        _exit(2);
    }
    for (int m = 0; m < count; ++m) {
        if (0 != send_msg(&s, (uint32_t) m, (uint32_t) (m % (SLOT + 1)))) {
            _exit(3);
        }
    }
    if (go_fd >= 0 && 1 != read(go_fd, &c, 1)) {
        _exit(4);
    }
    side_close(&s);
    _exit(0);
}

static void test_wraparound_patterns(void **state)
{
    const int count = NSLOTS * 100 + 3;
    side_t s = {0};
    int go[2], status;
    pid_t pid;

    (void) state;
    assert_int_equal(0, pipe(go));
    side_create(&s, 0, 1);
    pid = fork();
    assert_true(pid >= 0);
    if (0 == pid) {
        close(go[1]);
        child_sender(count, go[0]);
    }
    close(go[0]);
    assert_int_equal(0, side_connect(&s, 0, 1));
    for (int m = 0; m < count; ++m) {
        const unsigned char *p;
        uint32_t len, tag;
        int rc;

        while (-EAGAIN == (rc = tc_ring_peek(&s.in, (const void **) &p, &len, &tag))) {
        }
        assert_int_equal(0, rc);
        assert_int_equal((uint32_t) m, tag);
        assert_int_equal((uint32_t) (m % (SLOT + 1)), len);
        for (uint32_t i = 0; i < len; ++i) {
            if (p[i] != pat((uint32_t) m, i)) {
                fail_msg("message %d byte %u", m, i);
            }
        }
        tc_ring_release(&s.in);
    }
    assert_int_equal(1, write(go[1], "g", 1));
    assert_int_equal(pid, waitpid(pid, &status, 0));
    assert_true(WIFEXITED(status));
    assert_int_equal(0, WEXITSTATUS(status));
    close(go[1]);
    side_close(&s);
}

/* the sender fills the ring: exactly NSLOTS messages go, the next waits;
 * one consumed slot (Completed published) lets exactly one more go */
static void test_full_ring(void **state)
{
    side_t s = {0};
    int to_child[2], to_parent[2], status;
    pid_t pid;
    char c;

    (void) state;
    assert_int_equal(0, pipe(to_child));
    assert_int_equal(0, pipe(to_parent));
    side_create(&s, 0, 1);
    pid = fork();
    assert_true(pid >= 0);
    if (0 == pid) {
        side_t cs = {0};
        void *dst;
        int sent = 0;

        side_create(&cs, 1, 0);
        if (0 != side_connect(&cs, 1, 0)) {
            _exit(2);
        }
        while (0 == tc_ring_reserve(&cs.out, &dst)) {
            memset(dst, sent, 16);
            tc_ring_publish(&cs.out, 16, (uint32_t) sent);
            ++sent;
        }
        if (NSLOTS != sent || 0 != tc_ring_free_slots(&cs.out)) {
            _exit(3);
        }
        (void) write(to_parent[1], "f", 1);
        if (1 != read(to_child[0], &c, 1)) {
            _exit(4);
        }
        /* the receiver consumed one and flushed: one more, not two */
        if (1 != tc_ring_free_slots(&cs.out) || 0 != tc_ring_reserve(&cs.out, &dst)) {
            _exit(5);
        }
        tc_ring_publish(&cs.out, 0, (uint32_t) sent);
        if (0 == tc_ring_reserve(&cs.out, &dst)) {
            _exit(6);
        }
        (void) write(to_parent[1], "m", 1);
        if (1 != read(to_child[0], &c, 1)) {
            _exit(7);
        }
        side_close(&cs);
        _exit(0);
    }
    assert_int_equal(0, side_connect(&s, 0, 1));
    assert_int_equal(1, read(to_parent[0], &c, 1));
    {
        const void *p;
        uint32_t len, tag;
        assert_int_equal(0, tc_ring_peek(&s.in, &p, &len, &tag));
        assert_int_equal(0u, tag);
        tc_ring_release(&s.in);
        tc_ring_consumer_flush(&s.in);
    }
    assert_int_equal(1, write(to_child[1], "c", 1));
    assert_int_equal(1, read(to_parent[0], &c, 1));
    /* all NSLOTS messages are there, in order, the extra one last */
    for (uint32_t m = 1; m <= NSLOTS; ++m) {
        const void *p;
        uint32_t len, tag;
        assert_int_equal(0, tc_ring_peek(&s.in, &p, &len, &tag));
        assert_int_equal(m, tag);
        tc_ring_release(&s.in);
    }
    {
        const void *p;
        uint32_t len, tag;
        assert_int_equal(-EAGAIN, tc_ring_peek(&s.in, &p, &len, &tag));
    }
    assert_int_equal(1, write(to_child[1], "x", 1));
    assert_int_equal(pid, waitpid(pid, &status, 0));
    assert_true(WIFEXITED(status));
    assert_int_equal(0, WEXITSTATUS(status));
    close(to_child[0]);
    close(to_child[1]);
    close(to_parent[0]);
    close(to_parent[1]);
    side_close(&s);
}

/* the peer sends some messages and is killed: what arrived is intact, the
 * ring is then empty, and both the sequence and a sender blocked on the
 * full ring of the dead peer report the error */
static void test_peer_death(void **state)
{
    side_t s = {0};
    int to_parent[2], status;
    pid_t pid;
    char c;

    (void) state;
    assert_int_equal(0, pipe(to_parent));
    side_create(&s, 0, 1);
    pid = fork();
    assert_true(pid >= 0);
    if (0 == pid) {
        side_t cs = {0};

        side_create(&cs, 1, 0);
        if (0 != side_connect(&cs, 1, 0)) {
            _exit(2);
        }
        for (uint32_t m = 0; m < 5; ++m) {
            send_msg(&cs, m, 100);
        }
        (void) write(to_parent[1], "s", 1);
        for (;;) {
            pause();
        }
    }
    assert_int_equal(0, side_connect(&s, 0, 1));
    assert_int_equal(1, read(to_parent[0], &c, 1));
    kill(pid, SIGKILL);
    assert_int_equal(pid, waitpid(pid, &status, 0));
    assert_true(WIFSIGNALED(status));

    for (uint32_t m = 0; m < 5; ++m) {
        const unsigned char *p;
        uint32_t len, tag;
        assert_int_equal(0, tc_ring_peek(&s.in, (const void **) &p, &len, &tag));
        assert_int_equal(m, tag);
        assert_int_equal(100u, len);
        assert_int_equal(pat(m, 99), p[99]);
        tc_ring_release(&s.in);
    }
    {
        const void *p;
        uint32_t len, tag;
        assert_int_equal(-EAGAIN, tc_ring_peek(&s.in, &p, &len, &tag));
    }
    assert_int_equal(SCI_ERR_TRANSFER_FAILED, sci_check_sequence(s.seq));
    /* nobody consumes our messages any more: the sender gives up with an
     * error once the ring is full, it does not hang */
    {
        int rc = 0;
        for (int m = 0; m < NSLOTS + 1 && 0 == rc; ++m) {
            rc = send_msg(&s, (uint32_t) m, 8);
        }
        assert_int_equal(-1, rc);
    }
    close(to_parent[0]);
    close(to_parent[1]);
    side_close(&s);
}

/* a corrupt sequence word in a slot is reported, never delivered */
static void test_corrupt_slot(void **state)
{
    side_t a = {0}, b = {0};
    const void *p;
    uint32_t len, tag;
    unsigned char *ring;

    (void) state;
    side_create(&a, 0, 1);
    side_create(&b, 1, 0);
    assert_int_equal(0, side_connect(&a, 0, 1));
    assert_int_equal(0, side_connect(&b, 1, 0));
    assert_int_equal(0, send_msg(&b, 1, 10));
    assert_int_equal(0, tc_ring_peek(&a.in, &p, &len, &tag));
    tc_ring_release(&a.in);
    /* a peer writes garbage into the next slot's sequence and a huge len */
    ring = (unsigned char *) sci_local_segment_address(a.lseg) + MCA_BTL_SCI_SEG_RING_OFF;
    {
        tc_ring_slot_hdr_t *slot =
            (tc_ring_slot_hdr_t *) (ring + sizeof(tc_ring_hdr_t) + TC_RING_STRIDE(SLOT));
        slot->len = 1u << 30;
        slot->seq = 2;
        assert_int_equal(-EPROTO, tc_ring_peek(&a.in, &p, &len, &tag));
        slot->seq = 12345;
        assert_int_equal(-EPROTO, tc_ring_peek(&a.in, &p, &len, &tag));
    }
    side_close(&a);
    side_close(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_wraparound_patterns),
        cmocka_unit_test(test_full_ring),
        cmocka_unit_test(test_peer_death),
        cmocka_unit_test(test_corrupt_slot),
    };

    return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}
