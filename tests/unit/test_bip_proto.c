/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_bip_proto.c: btl_bip's control protocol over the real device,
 * without MPI: two forked processes, N = 2 credits and a 2-slot static
 * receive queue (N x 1 peer), each sending the other a stream of SHORT
 * messages and medium messages by the three-way protocol (REQ, ACK with a
 * receive posted under a limit of ONE posted receive, data by a large
 * send), with the rules btl_bip follows: a slot is freed before its
 * credits are applied, sends without credit wait in the per-peer FIFO,
 * a credit-only message goes when B = N-1, receives beyond the posted
 * limit wait in a receive FIFO. Checked: the queue never refuses a message
 * the credits allowed (no overflow), every message arrives once, SHORT
 * ones in order and medium ones in order, with its pattern; forced credit-only messages and both FIFOs are used;
 * once both streams are done, the peers go quiet (no credit-only
 * ping-pong).
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
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "bip_device.h"
#include "btl_bip_hdr.h"
#include "tc_credits.h"

#define NMSG 2000
#define SHORT_MAX 200
#define MEDIUM_MAX 5000
#define SLOT 256

static char test_dir[256];
static char test_key[64];

typedef struct out_msg {
    tc_list_item_t link;
    int type;    /* SHORT, REQ or ACK */
    uint32_t id; /* message number (SHORT, REQ) */
    uint32_t size;
    mca_btl_bip_ack_t ack;
} out_msg_t;

typedef struct side {
    bip_dev_t *dev;
    bip_peer_t *peer;
    tc_credits_t cr;
    out_msg_t *pool; /* sends: NMSG messages + ACKs */
    int npool;
    /* three-way: my REQs waiting for an ACK, oldest first */
    uint32_t await[NMSG];
    int await_head, await_tail;
    /* receive side */
    uint32_t received;
    uint32_t last_short, last_medium;
    unsigned char got[NMSG];
    unsigned char *rbuf; /* the one posted medium receive's buffer */
    uint32_t posted_handle;
    uint32_t posted_id, posted_size;
    int posted;
    uint32_t rfifo_id[NMSG], rfifo_size[NMSG];
    int rfifo_head, rfifo_tail;
    /* counters */
    long deferred, recv_deferred, credit_only, overflow, errors;
    size_t fifo_hwm;
} side_t;

static unsigned char pat(uint32_t who, uint32_t id, size_t i)
{
    return (unsigned char) (who * 59u + id * 31u + i * 7u + 3u);
}

static uint32_t msg_size(uint32_t id)
{
    /* every third message is medium */
    return 0 == id % 3 ? SHORT_MAX + 1 + (id * 977u) % (MEDIUM_MAX - SHORT_MAX) : id % SHORT_MAX;
}

static int setup(void **state)
{
    (void) state;
    snprintf(test_dir, sizeof(test_dir), "/tmp/test_bip_proto.XXXXXX");
    if (NULL == mkdtemp(test_dir)) {
        return -1;
    }
    snprintf(test_key, sizeof(test_key), "p%d", (int) getpid());
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

/* write one control message into the peer's queue */
static void post(side_t *s, uint32_t me, const out_msg_t *m, int type, uint32_t credits)
{
    unsigned char *dst;
    mca_btl_bip_hdr_t hdr = {.type = (uint8_t) type, .tag = 1, .credits = (uint16_t) credits};
    uint32_t len = sizeof(hdr);

    if (0 != bip_ssend_reserve(s->peer, (void **) &dst)) {
        /* the credits said there was room */
        s->overflow++;
        return;
    }
    if (MCA_BTL_BIP_SHORT == type) {
        hdr.len = m->size + 4;
        memcpy(dst + sizeof(hdr), &m->id, 4);
        for (uint32_t i = 0; i < m->size; ++i) {
            dst[sizeof(hdr) + 4 + i] = pat(me, m->id, i);
        }
        len += hdr.len;
    } else if (MCA_BTL_BIP_REQ == type) {
        mca_btl_bip_req_t req = {.seq = m->id, .size = m->size};
        memcpy(dst + sizeof(hdr), &req, sizeof(req));
        len += sizeof(req);
        s->await[s->await_tail++] = m->id;
    } else if (MCA_BTL_BIP_ACK == type) {
        memcpy(dst + sizeof(hdr), &m->ack, sizeof(m->ack));
        len += sizeof(m->ack);
    }
    memcpy(dst, &hdr, sizeof(hdr));
    (void) bip_ssend_publish(s->peer, len);
}

static void send_ctl(side_t *s, uint32_t me, out_msg_t *m)
{
    uint32_t pb;

    if (0 == tc_credits_try_send(&s->cr, &pb)) {
        post(s, me, m, m->type, pb);
    } else {
        tc_credits_defer(&s->cr, &m->link);
        s->deferred++;
        if (tc_credits_queued(&s->cr) > s->fifo_hwm) {
            s->fifo_hwm = tc_credits_queued(&s->cr);
        }
    }
}

static void flush(side_t *s, uint32_t me)
{
    tc_list_item_t *it;
    uint32_t pb;

    while (NULL != (it = tc_credits_next_ready(&s->cr, &pb))) {
        out_msg_t *m = TC_CONTAINER_OF(it, out_msg_t, link);
        post(s, me, m, m->type, pb);
    }
    if (tc_credits_need_credit_only(&s->cr) && 0 == tc_credits_take_credit_only(&s->cr, &pb)) {
        post(s, me, NULL, MCA_BTL_BIP_CREDIT, pb);
        s->credit_only++;
    }
}

static out_msg_t *new_msg(side_t *s)
{
    return &s->pool[s->npool++];
}

/* post a medium receive (limit: one) and ACK it, or queue it */
static void post_or_defer(side_t *s, uint32_t me, uint32_t id, uint32_t size, int from_fifo)
{
    out_msg_t *ack;

    if (s->posted || (!from_fifo && s->rfifo_head != s->rfifo_tail)) {
        s->rfifo_id[s->rfifo_tail] = id;
        s->rfifo_size[s->rfifo_tail++] = size;
        s->recv_deferred++;
        return;
    }
    if (0 != bip_post_recv(s->dev, s->rbuf, size, &s->posted_handle)) {
        s->errors++;
        return;
    }
    s->posted = 1;
    s->posted_id = id;
    s->posted_size = size;
    ack = new_msg(s);
    ack->type = MCA_BTL_BIP_ACK;
    memset(&ack->ack, 0, sizeof(ack->ack));
    ack->ack.kind = MCA_BTL_BIP_ACK_MEDIUM;
    ack->ack.seq = id;
    ack->ack.size = size;
    ack->ack.handle = s->posted_handle;
    send_ctl(s, me, ack);
}

/* SHORT messages arrive in order, and medium ones in order; a medium one
 * completes after SHORT messages sent behind it (ob1 reorders by its own
 * sequence numbers) */
static void deliver(side_t *s, uint32_t peer_id, uint32_t id, const unsigned char *data,
                    uint32_t size)
{
    uint32_t *last = size > SHORT_MAX ? &s->last_medium : &s->last_short;

    if (id >= NMSG || s->got[id] || size != msg_size(id) || (*last != UINT32_MAX && id <= *last)) {
        s->errors++;
        return;
    }
    s->got[id] = 1;
    *last = id;
    for (uint32_t i = 0; i < size; ++i) {
        if (data[i] != pat(peer_id, id, i)) {
            s->errors++;
            break;
        }
    }
    s->received++;
}

/* one progress pass; returns messages handled */
static int progress(side_t *s, uint32_t me, uint32_t peer_id, unsigned char *sendbuf)
{
    const unsigned char *msg;
    uint32_t len, src;
    mca_btl_bip_hdr_t hdr;
    int n = 0;

    while (0 == bip_srecv_peek(s->dev, (const void **) &msg, &len, &src)) {
        unsigned char body[MEDIUM_MAX > SLOT ? SLOT : MEDIUM_MAX];

        ++n;
        if (src != peer_id || len < sizeof(hdr) || len > SLOT) {
            s->errors++;
            bip_srecv_release(s->dev);
            continue;
        }
        memcpy(&hdr, msg, sizeof(hdr));
        memcpy(body, msg + sizeof(hdr), len - sizeof(hdr));
        /* the slot first, then its credits */
        bip_srecv_release(s->dev);
        if (MCA_BTL_BIP_CREDIT == hdr.type) {
            if (0 != tc_credits_received_credit_only(&s->cr, hdr.credits)) {
                s->errors++;
            }
            flush(s, me);
            continue;
        }
        if (0 != tc_credits_received(&s->cr, hdr.credits)) {
            s->errors++;
        }
        flush(s, me);
        if (MCA_BTL_BIP_SHORT == hdr.type) {
            uint32_t id;
            memcpy(&id, body, 4);
            deliver(s, peer_id, id, body + 4, hdr.len - 4);
        } else if (MCA_BTL_BIP_REQ == hdr.type) {
            mca_btl_bip_req_t req;
            memcpy(&req, body, sizeof(req));
            post_or_defer(s, me, (uint32_t) req.seq, (uint32_t) req.size, 0);
        } else if (MCA_BTL_BIP_ACK == hdr.type) {
            mca_btl_bip_ack_t ack;
            struct iovec iov;
            uint32_t id;

            memcpy(&ack, body, sizeof(ack));
            id = s->await[s->await_head++];
            if (ack.seq != id || ack.size != msg_size(id)) {
                s->errors++;
                continue;
            }
            for (uint32_t i = 0; i < ack.size; ++i) {
                sendbuf[i] = pat(me, id, i);
            }
            iov.iov_base = sendbuf;
            iov.iov_len = ack.size;
            if (0 != bip_send_large(s->peer, ack.handle, 0, &iov, 1, ack.size)) {
                s->errors++;
            }
        } else {
            s->errors++;
        }
    }
    /* the posted receive: complete? then the FIFO's next */
    if (s->posted && bip_recv_test(s->dev, s->posted_handle) == (long) s->posted_size) {
        bip_recv_unpost(s->dev, s->posted_handle);
        s->posted = 0;
        deliver(s, peer_id, s->posted_id, s->rbuf, s->posted_size);
        ++n;
        if (s->rfifo_head != s->rfifo_tail) {
            uint32_t id = s->rfifo_id[s->rfifo_head], size = s->rfifo_size[s->rfifo_head];
            s->rfifo_head++;
            post_or_defer(s, me, id, size, 1);
        }
    }
    return n;
}

/* one side of the exchange; returns an exit code (0: all good) */
static int run_side(uint32_t me)
{
    const uint32_t peer_id = 1 - me;
    bip_dev_params_t p = {.dir = test_dir,
                          .job_key = test_key,
                          .rank = me,
                          .expected_peers = 1,
                          .nslots = 2,
                          .slot_size = SLOT,
                          .max_posted = 1,
                          .frag_size = 1000};
    side_t *s = calloc(1, sizeof(*s));
    unsigned char *sendbuf = malloc(MEDIUM_MAX);
    uint32_t next_send = 0;
    long idle = 0, quiet_credit_only;
    int rc;

    if (NULL == s || NULL == sendbuf) {
        return 10;
    }
    /* a lost message or a dead peer must fail the test, not hang it */
    alarm(600);
    s->pool = calloc(3 * NMSG, sizeof(*s->pool));
    /* zeroed: valgrind does not see bytes written by CMA */
    s->rbuf = calloc(1, MEDIUM_MAX);
    s->last_short = s->last_medium = UINT32_MAX;
    if (NULL == s->pool || NULL == s->rbuf || 0 != bip_open(&p, &s->dev) ||
        0 != tc_credits_init(&s->cr, 2)) {
        return 11;
    }
    while (-ENOENT == (rc = bip_peer_connect(s->dev, peer_id, &s->peer))) {
        usleep(1000);
    }
    if (0 != rc) {
        return 12;
    }
    /* send everything (bursts of 7), keep progressing until all arrived */
    while (next_send < NMSG || s->received < NMSG) {
        for (int k = 0; k < 7 && next_send < NMSG; ++k, ++next_send) {
            out_msg_t *m = new_msg(s);
            m->id = next_send;
            m->size = msg_size(next_send);
            m->type = m->size > SHORT_MAX ? MCA_BTL_BIP_REQ : MCA_BTL_BIP_SHORT;
            send_ctl(s, me, m);
        }
        (void) progress(s, me, peer_id, sendbuf);
        if (s->errors || s->overflow) {
            break;
        }
    }
    /* done here (the peer may still be finishing): 200000 more polls may
     * bring the last few credit returns, while a credit-only ping-pong
     * would bring one per round trip, thousands */
    quiet_credit_only = s->credit_only;
    for (idle = 0; idle < 200000; ++idle) {
        (void) progress(s, me, peer_id, sendbuf);
    }
    printf("side %u: deferred %ld, FIFO high-water %zu, credit-only %ld (+%ld when idle), "
           "receives deferred %ld, errors %ld, overflow %ld\n",
           me, s->deferred, s->fifo_hwm, s->credit_only, s->credit_only - quiet_credit_only,
           s->recv_deferred, s->errors, s->overflow);
    fflush(stdout);
    if (s->errors || s->overflow) {
        return 20;
    }
    if (s->received != NMSG || tc_credits_queued(&s->cr) != 0) {
        return 21;
    }
    if (s->credit_only - quiet_credit_only > 16) {
        return 22;
    }
    if (0 == s->deferred || 0 == s->credit_only || 0 == s->recv_deferred || s->fifo_hwm < 2) {
        /* the point of N = 2: FIFOs and credit-only messages all the time */
        return 23;
    }
    bip_peer_disconnect(s->peer);
    bip_close(s->dev);
    free(s->pool);
    free(s->rbuf);
    free(s);
    free(sendbuf);
    return 0;
}

static void test_two_processes_n2(void **state)
{
    pid_t kid;
    int st, rc;
    (void) state;

    kid = fork();
    assert_true(kid >= 0);
    if (0 == kid) {
        _exit(run_side(1));
    }
    rc = run_side(0);
    assert_int_equal(waitpid(kid, &st, 0), kid);
    assert_int_equal(rc, 0);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_two_processes_n2, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
