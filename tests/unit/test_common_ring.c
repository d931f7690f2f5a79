/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_common_ring.c: unit tests of the rings. SPSC (tc_ring): geometry
 * checks, wrap-around with patterned payloads, full ring, batched return
 * of the consumer position, a ring formatted in zero memory that touches
 * only its header page, corrupt slots, and a producer in a forked
 * process writing through a shm segment while the consumer position lives
 * in a second segment (the sender's, as in btl_sci). MPSC (tc_mpring):
 * full queue and wrap-around, corrupt slots, two producer threads, and two
 * producer processes.
 */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "tc_mpring.h"
#include "tc_ring.h"
#include "tc_shm.h"

static char dir[PATH_MAX];

static int setup(void **state)
{
    const char *tmp = getenv("TMPDIR");
    (void) state;
    snprintf(dir, sizeof(dir), "%s/tc_ring_test.XXXXXX", NULL != tmp ? tmp : "/tmp");
    return NULL == mkdtemp(dir) ? -1 : 0;
}

static int teardown(void **state)
{
    (void) state;
    return rmdir(dir);
}

/* Payload of message i: its length and bytes derived from i. */
static uint32_t pattern_len(uint64_t i, uint32_t max)
{
    return (uint32_t) ((i * 7919u) % (max + 1));
}

static void pattern_fill(uint8_t *buf, uint64_t i, uint32_t len)
{
    for (uint32_t k = 0; k < len; k++) {
        buf[k] = (uint8_t) (i * 31u + k * 7u + 1u);
    }
}

static int pattern_check(const uint8_t *buf, uint64_t i, uint32_t len)
{
    for (uint32_t k = 0; k < len; k++) {
        if (buf[k] != (uint8_t) (i * 31u + k * 7u + 1u)) {
            return -1;
        }
    }
    return 0;
}

static void *aligned(size_t len)
{
    void *p = NULL;
    assert_int_equal(posix_memalign(&p, TC_CACHELINE, len), 0);
    memset(p, 0xee, len);
    return p;
}

static void test_ring_geometry(void **state)
{
    size_t sz = tc_ring_size(8, 100);
    uint8_t *mem = aligned(sz + TC_CACHELINE);
    uint64_t counter = 0;
    tc_ring_producer_t p;
    tc_ring_consumer_t c;
    (void) state;

    assert_int_equal(TC_RING_STRIDE(100), 128);
    assert_int_equal(sz, sizeof(tc_ring_hdr_t) + 8 * 128);
    assert_int_equal(tc_ring_size(6, 100), 0);
    assert_int_equal(tc_ring_size(1, 100), 0);
    assert_int_equal(tc_ring_size(8, 0), 0);
    assert_int_equal(tc_ring_format(mem, sz - 1, 8, 100), -EINVAL);
    assert_int_equal(tc_ring_format(mem + 8, sz, 8, 100), -EINVAL);
    /* Not formatted yet. */
    assert_int_equal(tc_ring_consumer_init(&c, mem, sz, 8, 100, &counter, 1), -EPROTO);
    assert_int_equal(tc_ring_format(mem, sz, 8, 100), 0);
    /* Each side checks the geometry it expects. */
    assert_int_equal(tc_ring_producer_init(&p, mem, sz, 8, 64, &counter), -EPROTO);
    assert_int_equal(tc_ring_producer_init(&p, mem, sz, 4, 100, &counter), -EPROTO);
    assert_int_equal(tc_ring_producer_init(&p, mem, sz, 8, 100, NULL), -EINVAL);
    assert_int_equal(tc_ring_producer_init(&p, mem, sz, 8, 100, &counter), 0);
    assert_int_equal(tc_ring_consumer_init(&c, mem, sz, 8, 100, &counter, 1), 0);
    free(mem);
}

static void make_ring(uint8_t **mem, size_t *sz, uint32_t nslots, uint32_t slot_size,
                      uint64_t *counter, uint32_t batch, tc_ring_producer_t *p,
                      tc_ring_consumer_t *c)
{
    *sz = tc_ring_size(nslots, slot_size);
    *mem = aligned(*sz);
    assert_int_equal(tc_ring_format(*mem, *sz, nslots, slot_size), 0);
    assert_int_equal(tc_ring_consumer_init(c, *mem, *sz, nslots, slot_size, counter, batch), 0);
    assert_int_equal(tc_ring_producer_init(p, *mem, *sz, nslots, slot_size, counter), 0);
}

/* pages of [mem, mem + len) that have memory behind them (mincore) */
static size_t resident_pages(void *mem, size_t len)
{
    size_t page = (size_t) sysconf(_SC_PAGESIZE), n = (len + page - 1) / page, count = 0;
    unsigned char *vec = calloc(n, 1);

    assert_non_null(vec);
    assert_int_equal(mincore(mem, len, vec), 0);
    for (size_t i = 0; i < n; i++) {
        count += vec[i] & 1;
    }
    free(vec);
    return count;
}

/* A ring formatted in a new anonymous mapping: tc_ring_format_zeroed
 * writes its header page only (tc_ring_format one page per slot), and the
 * ring works through two laps of every slot. */
static void test_ring_format_zeroed(void **state)
{
    const uint32_t nslots = 64, slot = 32832;
    size_t sz = tc_ring_size(nslots, slot);
    uint64_t counter = 0;
    tc_ring_producer_t p;
    tc_ring_consumer_t c;
    uint8_t *mem, *full;
    (void) state;

    mem = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    full = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(MAP_FAILED != mem && MAP_FAILED != full);
    assert_int_equal(tc_ring_format_zeroed(mem, sz - 1, nslots, slot), -EINVAL);
    assert_int_equal(tc_ring_format_zeroed(mem, sz, nslots, slot), 0);
    assert_int_equal(resident_pages(mem, sz), 1);
    assert_int_equal(tc_ring_format(full, sz, nslots, slot), 0);
    assert_true(resident_pages(full, sz) >= nslots);

    assert_int_equal(tc_ring_consumer_init(&c, mem, sz, nslots, slot, &counter, 1), 0);
    assert_int_equal(tc_ring_producer_init(&p, mem, sz, nslots, slot, &counter), 0);
    {
        const void *src;
        uint32_t len, tag;

        /* zero slots read as an empty ring, not as corrupt ones */
        assert_int_equal(tc_ring_peek(&c, &src, &len, &tag), -EAGAIN);
    }
    for (uint32_t i = 0; i < 2 * nslots; i++) {
        uint32_t word = 0xa5000000u | i, got = 0, len = 0, tag = 0;
        const void *src;
        void *dst;

        assert_int_equal(tc_ring_reserve(&p, &dst), 0);
        memcpy(dst, &word, sizeof(word));
        assert_int_equal(tc_ring_publish(&p, sizeof(word), i), 0);
        assert_int_equal(tc_ring_peek(&c, &src, &len, &tag), 0);
        assert_int_equal(len, sizeof(word));
        assert_int_equal(tag, i);
        memcpy(&got, src, sizeof(got));
        assert_int_equal(got, word);
        tc_ring_release(&c);
    }
    munmap(mem, sz);
    munmap(full, sz);
}

/* Many laps around a small ring, every length from 0 to slot_size. */
static void test_ring_wraparound(void **state)
{
    const uint32_t nslots = 4, slot = 200;
    uint8_t *mem, buf[256], out[256];
    size_t sz;
    uint64_t counter;
    tc_ring_producer_t p;
    tc_ring_consumer_t c;
    uint64_t sent = 0, recvd = 0;
    (void) state;

    make_ring(&mem, &sz, nslots, slot, &counter, 1, &p, &c);
    while (recvd < 1000) {
        /* Push a random-ish number of messages, then drain some. */
        for (int k = 0; k < (int) (sent % 5); k++) {
            uint32_t len = pattern_len(sent, slot);
            pattern_fill(buf, sent, len);
            if (0 != tc_ring_push(&p, buf, len, (uint32_t) sent)) {
                break;
            }
            sent++;
        }
        if (sent == recvd) {
            uint32_t len = pattern_len(sent, slot);
            pattern_fill(buf, sent, len);
            assert_int_equal(tc_ring_push(&p, buf, len, (uint32_t) sent), 0);
            sent++;
        }
        for (int k = 0; k < (int) (recvd % 3) + 1 && recvd < sent; k++) {
            uint32_t len, tag;
            assert_int_equal(tc_ring_pop(&c, out, sizeof(out), &len, &tag), 0);
            assert_int_equal(tag, (uint32_t) recvd);
            assert_int_equal(len, pattern_len(recvd, slot));
            assert_int_equal(pattern_check(out, recvd, len), 0);
            recvd++;
        }
    }
    assert_true(c.tail > 100 * nslots);
    free(mem);
}

static void test_ring_full(void **state)
{
    const uint32_t nslots = 8, slot = 32;
    uint8_t *mem, data[64] = {0};
    size_t sz;
    uint64_t counter;
    tc_ring_producer_t p;
    tc_ring_consumer_t c;
    uint32_t len, tag;
    void *payload;
    (void) state;

    make_ring(&mem, &sz, nslots, slot, &counter, 1, &p, &c);
    assert_int_equal(tc_ring_free_slots(&p), nslots);
    assert_int_equal(tc_ring_push(&p, data, slot + 1, 0), -EMSGSIZE);
    for (uint32_t i = 0; i < nslots; i++) {
        assert_int_equal(tc_ring_push(&p, data, 4, i), 0);
    }
    assert_int_equal(tc_ring_free_slots(&p), 0);
    assert_int_equal(tc_ring_push(&p, data, 4, 99), -EAGAIN);
    assert_int_equal(tc_ring_reserve(&p, &payload), -EAGAIN);
    assert_int_equal(tc_ring_pop(&c, data, sizeof(data), &len, &tag), 0);
    assert_int_equal(tag, 0);
    /* One slot came back: exactly one more fits. */
    assert_int_equal(tc_ring_push(&p, data, 4, 8), 0);
    assert_int_equal(tc_ring_push(&p, data, 4, 9), -EAGAIN);
    for (uint32_t i = 1; i <= nslots; i++) {
        assert_int_equal(tc_ring_pop(&c, data, sizeof(data), &len, &tag), 0);
        assert_int_equal(tag, i);
    }
    assert_int_equal(tc_ring_pop(&c, data, sizeof(data), &len, &tag), -EAGAIN);
    assert_int_equal(tc_ring_free_slots(&p), nslots);
    /* Zero-copy path and the one-reservation rule. */
    assert_int_equal(tc_ring_reserve(&p, &payload), 0);
    assert_int_equal(tc_ring_reserve(&p, &payload), -EINVAL);
    memcpy(payload, "zc", 3);
    assert_int_equal(tc_ring_publish(&p, slot + 1, 5), -EMSGSIZE);
    assert_int_equal(tc_ring_publish(&p, 3, 5), 0);
    assert_int_equal(tc_ring_publish(&p, 3, 5), -EINVAL);
    {
        const void *pl;
        assert_int_equal(tc_ring_peek(&c, &pl, &len, &tag), 0);
        assert_string_equal((const char *) pl, "zc");
        /* Too small a buffer leaves the message in place. */
        assert_int_equal(tc_ring_pop(&c, data, 2, &len, &tag), -EMSGSIZE);
        assert_int_equal(tc_ring_pop(&c, data, 3, &len, &tag), 0);
        assert_int_equal(tag, 5);
    }
    free(mem);
}

/* The consumer returns slots in batches, and always when it runs dry. */
static void test_ring_batched_return(void **state)
{
    const uint32_t nslots = 8;
    uint8_t *mem, data[16] = {0};
    size_t sz;
    uint64_t counter;
    tc_ring_producer_t p;
    tc_ring_consumer_t c;
    uint32_t len, tag;
    (void) state;

    make_ring(&mem, &sz, nslots, 16, &counter, 4, &p, &c);
    for (uint32_t i = 0; i < nslots; i++) {
        assert_int_equal(tc_ring_push(&p, data, 1, i), 0);
    }
    for (int i = 0; i < 3; i++) {
        assert_int_equal(tc_ring_pop(&c, data, sizeof(data), &len, &tag), 0);
    }
    /* Not published yet: the producer still sees a full ring. */
    assert_int_equal(counter, 0);
    assert_int_equal(tc_ring_free_slots(&p), 0);
    assert_int_equal(tc_ring_pop(&c, data, sizeof(data), &len, &tag), 0);
    assert_int_equal(counter, 4);
    assert_int_equal(tc_ring_free_slots(&p), 4);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(tc_ring_pop(&c, data, sizeof(data), &len, &tag), 0);
    }
    assert_int_equal(counter, 4);
    /* A peek that finds the ring empty publishes what it owes. */
    assert_int_equal(tc_ring_pop(&c, data, sizeof(data), &len, &tag), 0);
    assert_int_equal(tc_ring_pop(&c, data, sizeof(data), &len, &tag), -EAGAIN);
    assert_int_equal(counter, 8);
    assert_int_equal(tc_ring_free_slots(&p), nslots);
    /* A counter written by a confused peer (backwards or beyond what was
     * produced) is ignored. */
    counter = 100;
    assert_int_equal(tc_ring_free_slots(&p), nslots);
    counter = 3;
    assert_int_equal(tc_ring_free_slots(&p), nslots);
    free(mem);
}

static void test_ring_corrupt(void **state)
{
    const uint32_t nslots = 4, slot = 16;
    uint8_t *mem, data[16] = {0};
    size_t sz;
    uint64_t counter;
    tc_ring_producer_t p;
    tc_ring_consumer_t c;
    uint32_t len, tag;
    tc_ring_slot_hdr_t *s;
    (void) state;

    make_ring(&mem, &sz, nslots, slot, &counter, 1, &p, &c);
    s = (tc_ring_slot_hdr_t *) (mem + sizeof(tc_ring_hdr_t));
    assert_int_equal(tc_ring_push(&p, data, 4, 1), 0);
    /* Length beyond the slot. */
    s->len = slot + 1;
    assert_int_equal(tc_ring_pop(&c, data, sizeof(data), &len, &tag), -EPROTO);
    s->len = 0xffffffffu;
    assert_int_equal(tc_ring_pop(&c, data, sizeof(data), &len, &tag), -EPROTO);
    s->len = 4;
    assert_int_equal(tc_ring_pop(&c, data, sizeof(data), &len, &tag), 0);
    /* A sequence number from nowhere. */
    s = (tc_ring_slot_hdr_t *) (mem + sizeof(tc_ring_hdr_t) + TC_RING_STRIDE(slot));
    s->seq = 12345;
    assert_int_equal(tc_ring_pop(&c, data, sizeof(data), &len, &tag), -EPROTO);
    free(mem);
}

/* Producer in a child process; the ring in the receiver's segment, the
 * consumer's position in the sender's segment. */
static void test_ring_across_fork(void **state)
{
    const uint32_t nslots = 16, slot = 120;
    const uint64_t count = 20000;
    size_t rsz = tc_ring_size(nslots, slot);
    tc_shm_seg_t rseg, sseg;
    tc_ring_consumer_t c;
    uint8_t out[128];
    pid_t pid;
    int status;
    (void) state;

    assert_int_equal(tc_shm_create(&rseg, dir, "recv_seg", rsz), 0);
    assert_int_equal(tc_shm_create(&sseg, dir, "send_seg", 4096), 0);
    assert_int_equal(tc_ring_format(rseg.base, rseg.size, nslots, slot), 0);
    assert_int_equal(
        tc_ring_consumer_init(&c, rseg.base, rseg.size, nslots, slot, (uint64_t *) sseg.base, 4),
        0);
    pid = fork();
    assert_true(pid >= 0);
    if (0 == pid) {
        /* The sender: maps both segments by name, as a peer would. */
        tc_shm_seg_t r, s;
        tc_ring_producer_t p;
        uint8_t buf[128];
        int rc = 0;
        if (0 != tc_shm_attach(&r, dir, "recv_seg", rsz) ||
            0 != tc_shm_attach(&s, dir, "send_seg", 4096) ||
            0 != tc_ring_producer_init(&p, r.base, r.size, nslots, slot, (uint64_t *) s.base)) {
            _exit(2);
        }
        for (uint64_t i = 0; i < count && 0 == rc; i++) {
            uint32_t len = pattern_len(i, slot);
            pattern_fill(buf, i, len);
            while (-EAGAIN == (rc = tc_ring_push(&p, buf, len, (uint32_t) i))) {
                sched_yield();
            }
        }
        tc_shm_detach(&r);
        tc_shm_detach(&s);
        _exit(0 == rc ? 0 : 3);
    }
    for (uint64_t i = 0; i < count; i++) {
        uint32_t len, tag;
        int rc;
        while (-EAGAIN == (rc = tc_ring_pop(&c, out, sizeof(out), &len, &tag))) {
            sched_yield();
        }
        assert_int_equal(rc, 0);
        assert_int_equal(tag, (uint32_t) i);
        assert_int_equal(len, pattern_len(i, slot));
        assert_int_equal(pattern_check(out, i, len), 0);
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    tc_ring_consumer_flush(&c);
    assert_int_equal(*(uint64_t *) sseg.base, count);
    tc_shm_unlink(&rseg);
    tc_shm_unlink(&sseg);
    tc_shm_detach(&rseg);
    tc_shm_detach(&sseg);
}

/* ---- MPSC ---- */

static void test_mpring_full_and_wrap(void **state)
{
    const uint32_t nslots = 4, slot = 40;
    size_t sz = tc_mpring_size(nslots, slot);
    uint8_t *mem = aligned(sz);
    tc_mpring_t prod, cons;
    uint8_t buf[64];
    uint32_t len, tag;
    uint64_t sent = 0, recvd = 0;
    (void) state;

    assert_int_equal(tc_mpring_size(3, slot), 0);
    assert_int_equal(tc_mpring_attach(&cons, mem, sz, nslots, slot), -EPROTO);
    assert_int_equal(tc_mpring_format(mem, sz, nslots, slot), 0);
    assert_int_equal(tc_mpring_attach(&cons, mem, sz, nslots, 8), -EPROTO);
    assert_int_equal(tc_mpring_attach(&cons, mem, sz - 1, nslots, slot), -EINVAL);
    assert_int_equal(tc_mpring_attach(&cons, mem, sz, nslots, slot), 0);
    assert_int_equal(tc_mpring_attach(&prod, mem, sz, nslots, slot), 0);
    assert_int_equal(tc_mpring_pop(&cons, buf, sizeof(buf), &len, &tag), -EAGAIN);
    assert_int_equal(tc_mpring_push(&prod, buf, slot + 1, 0), -EMSGSIZE);
    for (int lap = 0; lap < 50; lap++) {
        for (;;) {
            uint32_t l = pattern_len(sent, slot);
            pattern_fill(buf, sent, l);
            if (0 != tc_mpring_push(&prod, buf, l, (uint32_t) sent)) {
                break;
            }
            sent++;
        }
        /* Full after exactly nslots outstanding messages. */
        assert_int_equal(sent - recvd, nslots);
        for (int k = 0; k < 1 + lap % (int) nslots; k++) {
            assert_int_equal(tc_mpring_pop(&cons, buf, sizeof(buf), &len, &tag), 0);
            assert_int_equal(tag, (uint32_t) recvd);
            assert_int_equal(len, pattern_len(recvd, slot));
            assert_int_equal(pattern_check(buf, recvd, len), 0);
            recvd++;
        }
    }
    /* A claimed but unpublished slot holds the consumer back. */
    while (recvd < sent) {
        assert_int_equal(tc_mpring_pop(&cons, buf, sizeof(buf), &len, &tag), 0);
        recvd++;
    }
    {
        void *payload;
        tc_mpring_t prod2;
        assert_int_equal(tc_mpring_attach(&prod2, mem, sz, nslots, slot), 0);
        assert_int_equal(tc_mpring_reserve(&prod, &payload), 0);
        assert_int_equal(tc_mpring_reserve(&prod, &payload), -EINVAL);
        assert_int_equal(tc_mpring_push(&prod2, "b", 2, 2), 0);
        assert_int_equal(tc_mpring_pop(&cons, buf, sizeof(buf), &len, &tag), -EAGAIN);
        memcpy(payload, "a", 2);
        assert_int_equal(tc_mpring_publish(&prod, 2, 1), 0);
        assert_int_equal(tc_mpring_pop(&cons, buf, sizeof(buf), &len, &tag), 0);
        assert_int_equal(tag, 1);
        assert_int_equal(tc_mpring_pop(&cons, buf, 1, &len, &tag), -EMSGSIZE);
        assert_int_equal(tc_mpring_pop(&cons, buf, sizeof(buf), &len, &tag), 0);
        assert_int_equal(tag, 2);
    }
    /* Corrupt slot contents. */
    {
        tc_mpring_slot_hdr_t *s;
        assert_int_equal(tc_mpring_push(&prod, buf, 1, 3), 0);
        s = (tc_mpring_slot_hdr_t *) (mem + sizeof(tc_mpring_hdr_t) +
                                      (cons.tail & (nslots - 1)) * TC_MPRING_STRIDE(slot));
        s->len = slot + 100;
        assert_int_equal(tc_mpring_pop(&cons, buf, sizeof(buf), &len, &tag), -EPROTO);
        s->len = 1;
        s->seq += 1000;
        assert_int_equal(tc_mpring_pop(&cons, buf, sizeof(buf), &len, &tag), -EPROTO);
    }
    free(mem);
}

/* a formatted queue in mem with a producer and a consumer attached */
static void mpring_pair(uint8_t *mem, size_t sz, uint32_t nslots, uint32_t slot, tc_mpring_t *prod,
                        tc_mpring_t *cons)
{
    assert_int_equal(tc_mpring_format(mem, sz, nslots, slot), 0);
    assert_int_equal(tc_mpring_attach(cons, mem, sz, nslots, slot), 0);
    assert_int_equal(tc_mpring_attach(prod, mem, sz, nslots, slot), 0);
}

/* The sole-sender claim: same queue semantics (full, wrap, order) with
 * a plain store of the enqueue position; a slot claimed behind its back
 * is reported. */
static void test_mpring_sole_sender_claim(void **state)
{
    const uint32_t nslots = 4, slot = 40;
    size_t sz = tc_mpring_size(nslots, slot);
    uint8_t *mem = aligned(sz);
    tc_mpring_t prod, cons;
    uint8_t buf[64];
    uint32_t len, tag;
    uint64_t sent = 0, recvd = 0;
    void *payload;
    (void) state;

    mpring_pair(mem, sz, nslots, slot, &prod, &cons);
    for (int lap = 0; lap < 50; lap++) {
        for (;;) {
            uint32_t l = pattern_len(sent, slot);
            if (0 != tc_mpring_reserve_sole(&prod, &payload)) {
                break;
            }
            assert_int_equal(tc_mpring_reserve_sole(&prod, &payload), -EINVAL);
            pattern_fill(payload, sent, l);
            assert_int_equal(tc_mpring_publish(&prod, l, (uint32_t) sent), 0);
            sent++;
        }
        assert_int_equal(sent - recvd, nslots);
        assert_int_equal(tc_mpring_reserve_sole(&prod, &payload), -EAGAIN);
        for (int k = 0; k < 1 + lap % (int) nslots; k++) {
            assert_int_equal(tc_mpring_pop(&cons, buf, sizeof(buf), &len, &tag), 0);
            assert_int_equal(tag, (uint32_t) recvd);
            assert_int_equal(len, pattern_len(recvd, slot));
            assert_int_equal(pattern_check(buf, recvd, len), 0);
            recvd++;
        }
    }
    while (recvd < sent) {
        assert_int_equal(tc_mpring_pop(&cons, buf, sizeof(buf), &len, &tag), 0);
        recvd++;
    }
    /* a second producer's claim (not allowed with the sole claim) shows as
     * a slot ahead of the position: -EPROTO, nothing claimed */
    {
        tc_mpring_t prod2;
        assert_int_equal(tc_mpring_attach(&prod2, mem, sz, nslots, slot), 0);
        assert_int_equal(tc_mpring_push(&prod2, "b", 2, 2), 0);
        ((tc_mpring_hdr_t *) mem)->enqueue_pos = sent; /* as if we had not seen it */
        assert_int_equal(tc_mpring_reserve_sole(&prod, &payload), -EPROTO);
        assert_false(prod.has_reserved);
    }
    free(mem);
}

/* Sole-sender mode: the consumer does not write slots back, the producer
 * does not read them; a producer that keeps at most nslots unconsumed
 * (its credits) moves every message intact, and the consumer sees an old
 * lap's slot as empty. */
static void test_mpring_sole_sender_mode(void **state)
{
    const uint32_t nslots = 4, slot = 40;
    size_t sz = tc_mpring_size(nslots, slot);
    uint8_t *mem = aligned(sz);
    tc_mpring_t prod, cons;
    uint8_t buf[64];
    uint32_t len, tag;
    uint64_t sent = 0, recvd = 0;
    void *payload = NULL;
    (void) state;

    mpring_pair(mem, sz, nslots, slot, &prod, &cons);
    tc_mpring_set_sole_sender(&cons);
    tc_mpring_set_sole_sender(&prod);
    for (int lap = 0; lap < 50; lap++) {
        while (sent - recvd < nslots) {
            uint32_t l = pattern_len(sent, slot);
            assert_int_equal(tc_mpring_reserve_sole(&prod, &payload), 0);
            pattern_fill(payload, sent, l);
            assert_int_equal(tc_mpring_publish(&prod, l, (uint32_t) sent), 0);
            sent++;
        }
        for (int k = 0; k < 1 + lap % (int) nslots; k++) {
            assert_int_equal(tc_mpring_pop(&cons, buf, sizeof(buf), &len, &tag), 0);
            assert_int_equal(tag, (uint32_t) recvd);
            assert_int_equal(len, pattern_len(recvd, slot));
            assert_int_equal(pattern_check(buf, recvd, len), 0);
            recvd++;
        }
    }
    while (recvd < sent) {
        assert_int_equal(tc_mpring_pop(&cons, buf, sizeof(buf), &len, &tag), 0);
        assert_int_equal(tag, (uint32_t) recvd);
        recvd++;
    }
    /* every slot holds an old lap's message: empty, not corrupt */
    assert_int_equal(tc_mpring_pop(&cons, buf, sizeof(buf), &len, &tag), -EAGAIN);
    /* a sequence ahead of the consumer is still refused */
    {
        tc_mpring_slot_hdr_t *s =
            (tc_mpring_slot_hdr_t *) (mem + sizeof(tc_mpring_hdr_t) +
                                      (cons.tail & (nslots - 1)) * TC_MPRING_STRIDE(slot));
        s->seq = cons.tail + 1 + nslots;
        assert_int_equal(tc_mpring_pop(&cons, buf, sizeof(buf), &len, &tag), -EPROTO);
    }
    free(mem);
}

#define MP_PER_PRODUCER 20000u
#define MP_SLOT 48u

typedef struct mp_arg {
    void *mem;
    size_t sz;
    uint32_t nslots;
    uint32_t id;
} mp_arg_t;

/* Message k of producer id: tag = id, payload = k then a pattern. */
static int mp_produce(void *mem, size_t sz, uint32_t nslots, uint32_t id)
{
    tc_mpring_t q;
    uint8_t buf[MP_SLOT];

    if (0 != tc_mpring_attach(&q, mem, sz, nslots, MP_SLOT)) {
        return -1;
    }
    for (uint32_t k = 0; k < MP_PER_PRODUCER; k++) {
        uint32_t len = 4 + pattern_len(k, MP_SLOT - 4);
        int rc;
        memcpy(buf, &k, 4);
        pattern_fill(buf + 4, k + id * 1000003u, len - 4);
        while (-EAGAIN == (rc = tc_mpring_push(&q, buf, len, id))) {
            sched_yield();
        }
        if (0 != rc) {
            return -1;
        }
    }
    return 0;
}

static void *mp_thread(void *arg)
{
    mp_arg_t *a = arg;
    return (void *) (intptr_t) mp_produce(a->mem, a->sz, a->nslots, a->id);
}

/* Consume everything from nprod producers: per-producer order kept,
 * nothing lost, nothing duplicated, payload intact. */
static void mp_consume(void *mem, size_t sz, uint32_t nslots, uint32_t nprod)
{
    tc_mpring_t q;
    uint32_t next[4] = {0};
    uint8_t buf[MP_SLOT];
    uint64_t total = 0;

    assert_int_equal(tc_mpring_attach(&q, mem, sz, nslots, MP_SLOT), 0);
    while (total < (uint64_t) nprod * MP_PER_PRODUCER) {
        uint32_t len, id, k;
        int rc = tc_mpring_pop(&q, buf, sizeof(buf), &len, &id);
        if (-EAGAIN == rc) {
            sched_yield();
            continue;
        }
        assert_int_equal(rc, 0);
        assert_true(id < nprod);
        assert_true(len >= 4);
        memcpy(&k, buf, 4);
        assert_int_equal(k, next[id]);
        assert_int_equal(len, 4 + pattern_len(k, MP_SLOT - 4));
        assert_int_equal(pattern_check(buf + 4, k + id * 1000003u, len - 4), 0);
        next[id]++;
        total++;
    }
    for (uint32_t i = 0; i < nprod; i++) {
        assert_int_equal(next[i], MP_PER_PRODUCER);
    }
    assert_int_equal(tc_mpring_pop(&q, buf, sizeof(buf), &(uint32_t){0}, NULL), -EAGAIN);
}

static void test_mpring_two_threads(void **state)
{
    const uint32_t nslots = 16;
    size_t sz = tc_mpring_size(nslots, MP_SLOT);
    uint8_t *mem = aligned(sz);
    pthread_t th[2];
    mp_arg_t args[2];
    (void) state;

    assert_int_equal(tc_mpring_format(mem, sz, nslots, MP_SLOT), 0);
    for (uint32_t i = 0; i < 2; i++) {
        args[i] = (mp_arg_t){.mem = mem, .sz = sz, .nslots = nslots, .id = i};
        assert_int_equal(pthread_create(&th[i], NULL, mp_thread, &args[i]), 0);
    }
    mp_consume(mem, sz, nslots, 2);
    for (int i = 0; i < 2; i++) {
        void *ret;
        assert_int_equal(pthread_join(th[i], &ret), 0);
        assert_int_equal((intptr_t) ret, 0);
    }
    free(mem);
}

static void test_mpring_two_processes(void **state)
{
    const uint32_t nslots = 16;
    size_t sz = tc_mpring_size(nslots, MP_SLOT);
    tc_shm_seg_t seg;
    pid_t pids[2];
    (void) state;

    assert_int_equal(tc_shm_create(&seg, dir, "mpq", sz), 0);
    assert_int_equal(tc_mpring_format(seg.base, seg.size, nslots, MP_SLOT), 0);
    for (uint32_t i = 0; i < 2; i++) {
        pids[i] = fork();
        assert_true(pids[i] >= 0);
        if (0 == pids[i]) {
            tc_shm_seg_t s;
            int rc = tc_shm_attach(&s, dir, "mpq", sz);
            if (0 == rc) {
                rc = mp_produce(s.base, s.size, nslots, i);
                tc_shm_detach(&s);
            }
            _exit(0 == rc ? 0 : 1);
        }
    }
    mp_consume(seg.base, seg.size, nslots, 2);
    for (int i = 0; i < 2; i++) {
        int status;
        assert_int_equal(waitpid(pids[i], &status, 0), pids[i]);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
    }
    tc_shm_unlink(&seg);
    tc_shm_detach(&seg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ring_geometry),
        cmocka_unit_test(test_ring_wraparound),
        cmocka_unit_test(test_ring_full),
        cmocka_unit_test(test_ring_format_zeroed),
        cmocka_unit_test(test_ring_batched_return),
        cmocka_unit_test(test_ring_corrupt),
        cmocka_unit_test(test_ring_across_fork),
        cmocka_unit_test(test_mpring_full_and_wrap),
        cmocka_unit_test(test_mpring_sole_sender_claim),
        cmocka_unit_test(test_mpring_sole_sender_mode),
        cmocka_unit_test(test_mpring_two_threads),
        cmocka_unit_test(test_mpring_two_processes),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
