/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_sctp_sock.c: unit tests of btl/sctp's socket layer.
 *
 * Two sockets of the user stack in one process (two SCTP ports, one
 * usrsctp instance, each with its own UDP sockets on loopback), driven
 * alternately: lazy association setup, patterned messages both ways,
 * streams, and head-of-line blocking (a small message on stream 0 passes
 * megabytes of bulk data queued on another stream), and a send to an
 * association that ended before its event was read, and an association
 * started by a process the receiver has not met yet. The kernel stack's
 * tests skip with a message when the kernel has no SCTP.
 */
#include "tc_config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_pattern.h"

#include "btl_sctp_sock.h"

#define BULK_LEN (128 * 1024)
#define SMALL_LEN 40

typedef struct pair {
    btl_sctp_sock_t *a, *b;
    btl_sctp_peer_t *a_to_b, *b_to_a;
    int cookie_a, cookie_b; /* addresses are the cookies */
} pair_t;

/* Settings of the user stack's UDP batching for open_pair (-1: default). */
static int pair_mtu = -1, pair_batch = -1, pair_gro = -1, pair_dgram = -1, pair_segment = -1;
/* 0: open_pair leaves b without a peer for a (a process b has not met) */
static int pair_b_knows_a = 1;

static int open_pair(pair_t *pr, int stack, int prio, int port_base)
{
    btl_sctp_sock_config_t cfg;
    btl_sctp_sock_addr_t lo = {htonl(INADDR_LOOPBACK), 0, 8, 0};
    btl_sctp_sock_addr_t addr_a[BTL_SCTP_SOCK_MAX_ADDRS], addr_b[BTL_SCTP_SOCK_MAX_ADDRS];
    char why[256] = "";
    int na, nb, rc;

    memset(pr, 0, sizeof(*pr));
    btl_sctp_sock_config_default(&cfg, stack);
    cfg.prio_streams = prio;
    cfg.sctp_port = port_base;
    cfg.max_msg = BULK_LEN + 64;
    if (pair_mtu >= 0) {
        cfg.mtu = pair_mtu;
    }
    if (pair_batch >= 0) {
        cfg.send_batch = pair_batch;
    }
    if (pair_gro >= 0) {
        cfg.gro = pair_gro;
    }
    if (pair_dgram >= 0) {
        cfg.dgram = pair_dgram;
    }
    if (pair_segment >= 0) {
        cfg.segment = pair_segment;
    }
    rc = btl_sctp_sock_open(&pr->a, &cfg, &lo, 1, why, sizeof(why));
    if (0 != rc) {
        print_message("open a: %s\n", why);
        return rc;
    }
    cfg.sctp_port = port_base + 1;
    rc = btl_sctp_sock_open(&pr->b, &cfg, &lo, 1, why, sizeof(why));
    if (0 != rc) {
        print_message("open b: %s\n", why);
        return rc;
    }
    na = btl_sctp_sock_local_addrs(pr->a, addr_a, BTL_SCTP_SOCK_MAX_ADDRS);
    nb = btl_sctp_sock_local_addrs(pr->b, addr_b, BTL_SCTP_SOCK_MAX_ADDRS);
    assert_int_equal(na, 1);
    assert_int_equal(nb, 1);
    assert_int_not_equal(addr_a[0].port, 0);
    assert_int_equal(
        0, btl_sctp_sock_peer_add(pr->a, addr_b, nb, port_base + 1, &pr->cookie_b, &pr->a_to_b));
    if (pair_b_knows_a) {
        assert_int_equal(
            0, btl_sctp_sock_peer_add(pr->b, addr_a, na, port_base, &pr->cookie_a, &pr->b_to_a));
    }
    return 0;
}

static void close_pair(pair_t *pr)
{
    btl_sctp_sock_close(pr->a);
    btl_sctp_sock_close(pr->b);
}

/* Drive both sockets until one data message arrives at `to`. */
static int pump_recv(pair_t *pr, btl_sctp_sock_t *to, btl_sctp_sock_msg_t *msg)
{
    for (long i = 0; i < 20000000; ++i) {
        int rc = btl_sctp_sock_recv(to, msg);
        if (rc < 0) {
            return rc;
        }
        if (1 == rc && BTL_SCTP_SOCK_DATA == msg->kind) {
            return 1;
        }
        if (0 == rc) {
            btl_sctp_sock_progress(pr->a);
            btl_sctp_sock_progress(pr->b);
        }
    }
    return 0;
}

static void test_user_pingpong(void **state)
{
    pair_t pr;
    unsigned char buf[SMALL_LEN + 4096];
    btl_sctp_sock_msg_t msg;
    (void) state;

    assert_int_equal(0, open_pair(&pr, BTL_SCTP_STACK_USER, 1, 5901));
    for (unsigned round = 0; round < 50; ++round) {
        size_t len = 1 + (round * 97) % sizeof(buf);
        uint16_t sid = (uint16_t) (round % 8);
        test_pattern_fill(buf, len, round);
        assert_int_equal(0, btl_sctp_sock_send(pr.a, pr.a_to_b, sid, buf, len));
        assert_int_equal(1, pump_recv(&pr, pr.b, &msg));
        assert_ptr_equal(msg.cookie, &pr.cookie_a);
        assert_int_equal(msg.stream, sid);
        assert_int_equal(msg.len, len);
        assert_true(test_pattern_check(msg.data, len, round));
        test_pattern_fill(buf, len, round + 1000);
        assert_int_equal(0, btl_sctp_sock_send(pr.b, pr.b_to_a, sid, buf, len));
        assert_int_equal(1, pump_recv(&pr, pr.a, &msg));
        assert_ptr_equal(msg.cookie, &pr.cookie_b);
        assert_int_equal(msg.len, len);
        assert_true(test_pattern_check(msg.data, len, round + 1000));
    }
    {
        int alive = 0;
        assert_int_equal(1, btl_sctp_sock_paths(pr.a, pr.a_to_b, &alive));
    }
    close_pair(&pr);
}

/* A known association is named by its id when sending. One that ended
 * (the peer aborted) before its event was read must not make the next
 * send fail: the id is forgotten and the address starts a new
 * association. The event is still delivered. */
static void test_user_send_after_abort(void **state)
{
    pair_t pr;
    unsigned char buf[SMALL_LEN];
    btl_sctp_sock_msg_t msg;
    int lost = 0;
    (void) state;

    assert_int_equal(0, open_pair(&pr, BTL_SCTP_STACK_USER, 1, 5911));
    for (unsigned round = 0; round < 3; ++round) {
        test_pattern_fill(buf, sizeof(buf), round);
        assert_int_equal(0, btl_sctp_sock_send(pr.a, pr.a_to_b, 0, buf, sizeof(buf)));
        assert_int_equal(1, pump_recv(&pr, pr.b, &msg));
        assert_true(test_pattern_check(msg.data, sizeof(buf), round));
    }
    btl_sctp_sock_close(pr.b); /* abortive: an ABORT to a */
    for (int i = 0; i < 100; ++i) {
        btl_sctp_sock_progress(pr.a); /* takes the ABORT in, no event read */
    }
    test_pattern_fill(buf, sizeof(buf), 7);
    assert_int_equal(0, btl_sctp_sock_send(pr.a, pr.a_to_b, 0, buf, sizeof(buf)));
    for (int i = 0; i < 1000 && !lost; ++i) {
        int rc = btl_sctp_sock_recv(pr.a, &msg);
        assert_true(rc >= 0);
        if (1 == rc) {
            lost = BTL_SCTP_SOCK_LOST == msg.kind || BTL_SCTP_SOCK_CLOSED == msg.kind;
        } else {
            btl_sctp_sock_progress(pr.a);
        }
    }
    assert_true(lost);
    btl_sctp_sock_close(pr.a);
}

/* Queue as much bulk data on stream 1 as the socket takes, then one small
 * message on stream 0; return how many bulk bytes arrived before it. */
static size_t bulk_before_small(int prio, uint16_t bulk_sid, int port_base, size_t *queued)
{
    pair_t pr;
    btl_sctp_sock_msg_t msg;
    unsigned char *bulk = malloc(BULK_LEN);
    unsigned char small[SMALL_LEN];
    size_t before = 0, got_bulk = 0;
    int nbulk = 0, small_seen = 0;

    assert_non_null(bulk);
    assert_int_equal(0, open_pair(&pr, BTL_SCTP_STACK_USER, prio, port_base));
    /* set the association up first so that the whole test is steady state */
    test_pattern_fill(small, SMALL_LEN, 1);
    assert_int_equal(0, btl_sctp_sock_send(pr.a, pr.a_to_b, 0, small, SMALL_LEN));
    assert_int_equal(1, pump_recv(&pr, pr.b, &msg));

    for (nbulk = 0; nbulk < 24; ++nbulk) {
        test_pattern_fill(bulk, BULK_LEN, 100 + (unsigned) nbulk);
        if (0 != btl_sctp_sock_send(pr.a, pr.a_to_b, bulk_sid, bulk, BULK_LEN)) {
            break;
        }
    }
    assert_true(nbulk >= 8);
    test_pattern_fill(small, SMALL_LEN, 7);
    assert_int_equal(0, btl_sctp_sock_send(pr.a, pr.a_to_b, 0, small, SMALL_LEN));
    *queued = (size_t) nbulk * BULK_LEN;

    while (got_bulk < (size_t) nbulk || !small_seen) {
        assert_int_equal(1, pump_recv(&pr, pr.b, &msg));
        if (SMALL_LEN == msg.len) {
            assert_int_equal(msg.stream, 0);
            assert_true(test_pattern_check(msg.data, SMALL_LEN, 7));
            small_seen = 1;
            before = got_bulk * BULK_LEN;
        } else {
            assert_int_equal(msg.stream, bulk_sid);
            assert_int_equal(msg.len, BULK_LEN);
            /* a stream keeps its order */
            assert_true(test_pattern_check(msg.data, BULK_LEN, 100 + (unsigned) got_bulk));
            ++got_bulk;
        }
    }
    close_pair(&pr);
    free(bulk);
    return before;
}

static void test_user_head_of_line(void **state)
{
    size_t queued = 0, q_rr = 0, q_one = 0, before_prio, before_rr, before_one;
    (void) state;

    before_prio = bulk_before_small(1, 1, 5911, &queued);
    print_message("head-of-line: bulk on stream 1, stream 0 first: %zu of %zu bulk bytes "
                  "arrived before the small message\n",
                  before_prio, queued);
    before_rr = bulk_before_small(0, 1, 5921, &q_rr);
    print_message("head-of-line: bulk on stream 1, round-robin streams: %zu of %zu\n", before_rr,
                  q_rr);
    before_one = bulk_before_small(1, 0, 5931, &q_one);
    print_message("head-of-line: everything on stream 0 (old btl/sctp): %zu of %zu\n", before_one,
                  q_one);
    /* at most what was already on the wire when the small one was queued */
    assert_true(before_prio <= BULK_LEN);
    assert_true(before_rr <= 2 * BULK_LEN);
    /* one stream is one ordered queue: the small message waits for all */
    assert_int_equal(before_one, q_one);
}

/* A record larger than the receiver's buffer (a peer with a larger
 * btl_sctp_max_send_size, or a hostile one) arrives in pieces: it must be
 * refused whole, never handed up in parts as further messages, and the
 * next message must arrive intact. */
#define OVERSIZE_LEN (200 * 1024)
#define OVERSIZE_RECV_MAX (16 * 1024)

static void oversize_send(pair_t *pr, const unsigned char *buf, size_t len)
{
    struct iovec iov = {(void *) buf, len};
    size_t done = 0;

    for (long i = 0; i < 20000000; ++i) {
        int rc = btl_sctp_sock_sendv(pr->a, pr->a_to_b, 0, &iov, 1, &done);
        if (0 == rc) {
            return;
        }
        assert_int_equal(-EAGAIN, rc);
        btl_sctp_sock_progress(pr->a);
        btl_sctp_sock_progress(pr->b);
    }
    fail_msg("the socket never took the message");
}

static void test_user_oversize_record(void **state)
{
    btl_sctp_sock_config_t cfg;
    btl_sctp_sock_addr_t lo = {htonl(INADDR_LOOPBACK), 0, 8, 0};
    btl_sctp_sock_addr_t addr_a[BTL_SCTP_SOCK_MAX_ADDRS], addr_b[BTL_SCTP_SOCK_MAX_ADDRS];
    unsigned char *big = malloc(OVERSIZE_LEN);
    unsigned char small[SMALL_LEN];
    btl_sctp_sock_msg_t msg;
    char why[256] = "";
    pair_t pr;
    int good = 0, refused = 0;
    (void) state;

    assert_non_null(big);
    memset(&pr, 0, sizeof(pr));
    btl_sctp_sock_config_default(&cfg, BTL_SCTP_STACK_USER);
    cfg.sctp_port = 5931;
    cfg.max_msg = OVERSIZE_LEN + 64;
    assert_int_equal(0, btl_sctp_sock_open(&pr.a, &cfg, &lo, 1, why, sizeof(why)));
    cfg.sctp_port = 5932;
    cfg.max_msg = OVERSIZE_RECV_MAX;
    assert_int_equal(0, btl_sctp_sock_open(&pr.b, &cfg, &lo, 1, why, sizeof(why)));
    assert_int_equal(1, btl_sctp_sock_local_addrs(pr.a, addr_a, BTL_SCTP_SOCK_MAX_ADDRS));
    assert_int_equal(1, btl_sctp_sock_local_addrs(pr.b, addr_b, BTL_SCTP_SOCK_MAX_ADDRS));
    assert_int_equal(0, btl_sctp_sock_peer_add(pr.a, addr_b, 1, 5932, &pr.cookie_b, &pr.a_to_b));
    assert_int_equal(0, btl_sctp_sock_peer_add(pr.b, addr_a, 1, 5931, &pr.cookie_a, &pr.b_to_a));

    for (unsigned round = 0; round < 3; ++round) {
        test_pattern_fill(big, OVERSIZE_LEN, 100 + round);
        oversize_send(&pr, big, OVERSIZE_LEN);
        test_pattern_fill(small, SMALL_LEN, 200 + round);
        oversize_send(&pr, small, SMALL_LEN);
    }
    for (long i = 0; i < 20000000 && good < 3; ++i) {
        int rc = btl_sctp_sock_recv(pr.b, &msg);
        if (rc < 0) {
            assert_int_equal(-EMSGSIZE, rc);
            ++refused;
            continue;
        }
        if (0 == rc) {
            btl_sctp_sock_progress(pr.a);
            btl_sctp_sock_progress(pr.b);
            continue;
        }
        if (BTL_SCTP_SOCK_DATA != msg.kind) {
            continue;
        }
        /* only the small messages may come up, whole and in order */
        assert_int_equal(msg.len, SMALL_LEN);
        assert_true(test_pattern_check(msg.data, SMALL_LEN, 200 + (unsigned) good));
        ++good;
    }
    assert_int_equal(good, 3);
    assert_true(refused >= 3);
    close_pair(&pr);
    free(big);
}

/* Five counters of the user stack's statistics line, read with `fmt` from
 * where the text `from` starts. */
static void stats_counts(unsigned long long c[5], const char *from, const char *fmt)
{
    char line[1024];
    const char *at;
    memset(c, 0, 5 * sizeof(c[0]));
    assert_int_equal(0, btl_sctp_sock_user_stats(line, sizeof(line)));
    at = strstr(line, from);
    assert_non_null(at);
    assert_int_equal(5, sscanf(at, fmt, &c[0], &c[1], &c[2], &c[3], &c[4]));
}

/* The UDP counters: datagrams out, send calls, datagrams in, buffers in,
 * coalesced buffers. */
static void udp_counts(unsigned long long c[5])
{
    stats_counts(c, "UDP: datagrams out",
                 "UDP: datagrams out %llu in %llu send calls (%*u messages, %*u "
                 "GSO messages resent singly), datagrams in %llu from %llu buffers "
                 "(%llu coalesced)");
}

/* 16 bulk messages of decreasing length from a to b, spread over the
 * first `streams` streams, each received intact (patterns from `seed`) */
static void send_bulk_series(pair_t *pr, unsigned char *bulk, unsigned seed, unsigned streams)
{
    btl_sctp_sock_msg_t msg;

    for (unsigned m = 0; m < 16; ++m) {
        size_t len = BULK_LEN - m * 1031;
        test_pattern_fill(bulk, len, seed + m);
        assert_int_equal(0, btl_sctp_sock_send(pr->a, pr->a_to_b, 1 + m % streams, bulk, len));
        assert_int_equal(1, pump_recv(pr, pr->b, &msg));
        assert_int_equal(msg.len, len);
        assert_true(test_pattern_check(msg.data, len, seed + m));
    }
}

/* Packets of 1400 bytes over loopback, so that a bulk message is many
 * datagrams: each way of sending (one sendto each, sendmmsg, GSO) with
 * and without GRO delivers every message intact and in order, and the
 * batched ways need fewer send calls than datagrams. */
static void test_user_batching(void **state)
{
    unsigned char *bulk = malloc(BULK_LEN);
    (void) state;

    assert_non_null(bulk);
    pair_mtu = 1400;
    for (int batch = BTL_SCTP_SEND_SINGLE; batch <= BTL_SCTP_SEND_GSO; ++batch) {
        for (int gro = 0; gro <= 1; ++gro) {
            pair_t pr;
            unsigned long long c0[5], c1[5];
            int port = 5941 + 2 * (batch * 2 + gro);

            pair_batch = batch;
            pair_gro = gro;
            assert_int_equal(0, open_pair(&pr, BTL_SCTP_STACK_USER, 1, port));
            udp_counts(c0);
            send_bulk_series(&pr, bulk, 300, 1);
            udp_counts(c1);
            print_message("send %s, gro %d: %llu datagrams out in %llu calls, %llu in from %llu "
                          "buffers (%llu coalesced)\n",
                          batch == BTL_SCTP_SEND_GSO        ? "gso"
                              : batch == BTL_SCTP_SEND_MMSG ? "mmsg"
                                                            : "single",
                          gro, c1[0] - c0[0], c1[1] - c0[1], c1[2] - c0[2], c1[3] - c0[3],
                          c1[4] - c0[4]);
            assert_true(c1[0] - c0[0] >= 16 * (BULK_LEN / 1400) / 2);
            if (BTL_SCTP_SEND_SINGLE == batch) {
                assert_int_equal(c1[1] - c0[1], c1[0] - c0[0]);
            } else {
                assert_true(c1[1] - c0[1] < c1[0] - c0[0]);
            }
            if (!gro) {
                assert_int_equal(c1[4] - c0[4], 0);
                assert_int_equal(c1[2] - c0[2], c1[3] - c0[3]);
            }
            close_pair(&pr);
        }
    }
    pair_mtu = pair_batch = pair_gro = -1;
    free(bulk);
}

/* The segment counters of the stack's statistics line: packets sent as
 * segments, too large to cut, put together in place, gathered, dropped. */
static void seg_counts(unsigned long long c[5])
{
    stats_counts(c, "segmented packets out",
                 "segmented packets out %llu (%llu too large), in %llu whole and "
                 "%llu gathered, %llu segments dropped");
}

/* Datagrams of 1400 bytes over loopback and SCTP packets of up to 64 KB:
 * each packet leaves as segments (a GSO message, a sendmmsg, or a sendto
 * each) and is put back together, in place from a GRO buffer or gathered
 * from single datagrams; every message arrives intact and in order, no
 * packet is lost or cut wrongly, and without segmenting (the same
 * datagrams, SCTP packets of 1384 bytes) no segment is sent at all. */
static void test_user_segments(void **state)
{
    unsigned char *bulk = malloc(BULK_LEN);
    (void) state;

    assert_non_null(bulk);
    pair_dgram = 1400;
    for (int seg = 0; seg <= 1; ++seg) {
        for (int batch = BTL_SCTP_SEND_SINGLE; batch <= BTL_SCTP_SEND_GSO; ++batch) {
            for (int gro = 0; gro <= 1; ++gro) {
                pair_t pr;
                unsigned long long c0[5], c1[5];
                int port = 5961 + 2 * (seg * 6 + batch * 2 + gro);

                pair_segment = seg;
                pair_batch = batch;
                pair_gro = gro;
                assert_int_equal(0, open_pair(&pr, BTL_SCTP_STACK_USER, 1, port));
                seg_counts(c0);
                send_bulk_series(&pr, bulk, 500, 3);
                seg_counts(c1);
                print_message("segment %d, send %d, gro %d: %llu packets cut, %llu whole, %llu "
                              "gathered, %llu dropped\n",
                              seg, batch, gro, c1[0] - c0[0], c1[2] - c0[2], c1[3] - c0[3],
                              c1[4] - c0[4]);
                assert_int_equal(c1[1] - c0[1], 0);
                assert_int_equal(c1[4] - c0[4], 0);
                if (!seg) {
                    assert_int_equal(c1[0] - c0[0], 0);
                } else {
                    /* 16 messages of about 2 MiB in all: at least 32 packets */
                    assert_true(c1[0] - c0[0] >= 16 * BULK_LEN / 65536);
                    assert_int_equal(c1[0] - c0[0], (c1[2] - c0[2]) + (c1[3] - c0[3]));
                    if (!gro) {
                        assert_int_equal(c1[2] - c0[2], 0);
                    }
                }
                close_pair(&pr);
            }
        }
    }
    pair_dgram = pair_segment = pair_batch = pair_gro = -1;
    free(bulk);
}

/* A process that starts an association before the receiver has met it
 * (a process of another job on Open MPI 5.0): its packets are dropped and
 * counted as strangers; once the receiver adds it as a peer, the resent
 * INIT is taken in and the message arrives, from that peer. */
static void test_user_stranger(void **state)
{
    pair_t pr;
    unsigned char buf[SMALL_LEN];
    btl_sctp_sock_msg_t msg;
    btl_sctp_sock_addr_t addr_a[BTL_SCTP_SOCK_MAX_ADDRS];
    int na;
    (void) state;

    pair_b_knows_a = 0;
    assert_int_equal(0, open_pair(&pr, BTL_SCTP_STACK_USER, 1, 6011));
    pair_b_knows_a = 1;
    test_pattern_fill(buf, sizeof(buf), 35);
    assert_int_equal(0, btl_sctp_sock_send(pr.a, pr.a_to_b, 0, buf, sizeof(buf)));
    for (long i = 0; i < 20000000 && 0 == pr.b->strangers; ++i) {
        btl_sctp_sock_progress(pr.a);
        btl_sctp_sock_progress(pr.b);
    }
    assert_true(pr.b->strangers > 0);
    assert_int_equal(0, pr.a->strangers);
    assert_int_equal(0, btl_sctp_sock_recv(pr.b, &msg)); /* nothing taken in */

    na = btl_sctp_sock_local_addrs(pr.a, addr_a, BTL_SCTP_SOCK_MAX_ADDRS);
    assert_int_equal(0, btl_sctp_sock_peer_add(pr.b, addr_a, na, 6011, &pr.cookie_a, &pr.b_to_a));
    assert_int_equal(1, pump_recv(&pr, pr.b, &msg));
    assert_ptr_equal(msg.cookie, &pr.cookie_a);
    assert_int_equal(msg.len, sizeof(buf));
    assert_true(test_pattern_check(msg.data, sizeof(buf), 35));
    /* and back */
    test_pattern_fill(buf, sizeof(buf), 36);
    assert_int_equal(0, btl_sctp_sock_send(pr.b, pr.b_to_a, 0, buf, sizeof(buf)));
    assert_int_equal(1, pump_recv(&pr, pr.a, &msg));
    assert_ptr_equal(msg.cookie, &pr.cookie_b);
    assert_true(test_pattern_check(msg.data, sizeof(buf), 36));
    close_pair(&pr);
}

static void test_kernel_stack(void **state)
{
    char why[256] = "";
    (void) state;
    if (0 != btl_sctp_sock_probe(BTL_SCTP_STACK_KERNEL, why, sizeof(why))) {
        print_message("SKIP kernel stack: %s\n", why);
        skip();
    }
    {
        pair_t pr;
        btl_sctp_sock_msg_t msg;
        unsigned char buf[1000];
        assert_int_equal(0, open_pair(&pr, BTL_SCTP_STACK_KERNEL, 1, 0));
        for (unsigned round = 0; round < 20; ++round) {
            test_pattern_fill(buf, sizeof(buf), round);
            assert_int_equal(
                0, btl_sctp_sock_send(pr.a, pr.a_to_b, (uint16_t) (round % 4), buf, sizeof(buf)));
            assert_int_equal(1, pump_recv(&pr, pr.b, &msg));
            assert_ptr_equal(msg.cookie, &pr.cookie_a);
            assert_int_equal(msg.len, sizeof(buf));
            assert_true(test_pattern_check(msg.data, sizeof(buf), round));
        }
        close_pair(&pr);
    }
}

static void test_bad_config(void **state)
{
    btl_sctp_sock_config_t cfg;
    btl_sctp_sock_t *s = NULL;
    btl_sctp_sock_addr_t lo = {htonl(INADDR_LOOPBACK), 0, 8, 0};
    char why[256] = "";
    (void) state;

    btl_sctp_sock_config_default(&cfg, BTL_SCTP_STACK_USER);
    cfg.num_streams = 0;
    assert_int_equal(-EINVAL, btl_sctp_sock_open(&s, &cfg, &lo, 1, why, sizeof(why)));
    assert_null(s);
    btl_sctp_sock_config_default(&cfg, BTL_SCTP_STACK_USER);
    assert_int_equal(-EINVAL, btl_sctp_sock_open(&s, &cfg, &lo, 0, why, sizeof(why)));
    cfg.stack = 99;
    assert_int_equal(-ENOSYS, btl_sctp_sock_open(&s, &cfg, &lo, 1, why, sizeof(why)));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_config),
        cmocka_unit_test(test_user_pingpong),
        cmocka_unit_test(test_user_head_of_line),
        cmocka_unit_test(test_user_oversize_record),
        cmocka_unit_test(test_user_batching),
        cmocka_unit_test(test_user_segments),
        cmocka_unit_test(test_user_send_after_abort),
        cmocka_unit_test(test_user_stranger),
        cmocka_unit_test(test_kernel_stack),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
