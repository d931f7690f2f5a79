/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * tc_ring.c: single-producer / single-consumer slot ring with per-slot
 * sequence numbers and a remotely published consumer position (see
 * tc_ring.h for the layout and the protocol).
 */
#include <string.h>

#include "tc_ring.h"
#include "tc_atomic.h"
#include "tc_ring_impl.h"

size_t tc_ring_size(uint32_t nslots, uint32_t slot_size)
{
    if (!tc_ring_impl_geometry_ok(nslots, slot_size)) {
        return 0;
    }
    return sizeof(tc_ring_hdr_t) + (size_t) nslots * TC_RING_STRIDE(slot_size);
}

static int tc_ring_format_common(void *mem, size_t memlen, uint32_t nslots, uint32_t slot_size,
                                 bool zeroed)
{
    size_t need = tc_ring_size(nslots, slot_size);
    tc_ring_hdr_t *hdr = mem;
    uint8_t *slots;
    size_t stride;

    if (!tc_ring_impl_mem_ok(mem, memlen, need)) {
        return -EINVAL;
    }
    stride = TC_RING_STRIDE(slot_size);
    slots = (uint8_t *) mem + sizeof(tc_ring_hdr_t);
    for (uint32_t i = 0; i < nslots && !zeroed; i++) {
        tc_ring_slot_hdr_t *s = tc_ring_impl_slot(slots, stride, nslots, i);
        tc_atomic_store_relaxed(&s->seq, 0);
        s->len = 0;
        s->tag = 0;
    }
    hdr->nslots = nslots;
    hdr->slot_size = slot_size;
    hdr->version = TC_RING_VERSION;
    /* Magic last: an attacher that sees it sees a formatted ring. */
    tc_atomic_store_release(&hdr->magic, TC_RING_MAGIC);
    return 0;
}

int tc_ring_format(void *mem, size_t memlen, uint32_t nslots, uint32_t slot_size)
{
    return tc_ring_format_common(mem, memlen, nslots, slot_size, false);
}

int tc_ring_format_zeroed(void *mem, size_t memlen, uint32_t nslots, uint32_t slot_size)
{
    return tc_ring_format_common(mem, memlen, nslots, slot_size, true);
}

/* Check a formatted ring against the geometry this side expects. */
static int tc_ring_check(void *mem, size_t memlen, uint32_t nslots, uint32_t slot_size)
{
    const tc_ring_hdr_t *hdr = mem;
    size_t need = tc_ring_size(nslots, slot_size);

    if (!tc_ring_impl_mem_ok(mem, memlen, need)) {
        return -EINVAL;
    }
    if (TC_RING_MAGIC != tc_atomic_load_acquire(&hdr->magic) || TC_RING_VERSION != hdr->version ||
        nslots != hdr->nslots || slot_size != hdr->slot_size) {
        return -EPROTO;
    }
    return 0;
}

int tc_ring_producer_init(tc_ring_producer_t *p, void *mem, size_t memlen, uint32_t nslots,
                          uint32_t slot_size, const uint64_t *consumed)
{
    int rc = tc_ring_check(mem, memlen, nslots, slot_size);

    if (0 != rc) {
        return rc;
    }
    if (NULL == consumed || 0 != ((uintptr_t) consumed & 7)) {
        return -EINVAL;
    }
    p->slots = (uint8_t *) mem + sizeof(tc_ring_hdr_t);
    p->nslots = nslots;
    p->slot_size = slot_size;
    p->stride = TC_RING_STRIDE(slot_size);
    p->consumed = consumed;
    /* Both sides start at position 0 (the consumer zeroes the counter). */
    p->consumed_cache = 0;
    p->head = 0;
    p->reserved = false;
    return 0;
}

int tc_ring_consumer_init(tc_ring_consumer_t *c, void *mem, size_t memlen, uint32_t nslots,
                          uint32_t slot_size, uint64_t *consumed, uint32_t batch)
{
    int rc = tc_ring_check(mem, memlen, nslots, slot_size);

    if (0 != rc) {
        return rc;
    }
    if (NULL == consumed || 0 != ((uintptr_t) consumed & 7)) {
        return -EINVAL;
    }
    c->slots = (uint8_t *) mem + sizeof(tc_ring_hdr_t);
    c->nslots = nslots;
    c->slot_size = slot_size;
    c->stride = TC_RING_STRIDE(slot_size);
    c->tail = 0;
    c->consumed = consumed;
    c->published = 0;
    /* A batch of half the ring still leaves the producer room to work. */
    if (0 == batch) {
        batch = 1;
    }
    if (batch > nslots / 2) {
        batch = nslots / 2 > 0 ? nslots / 2 : 1;
    }
    c->batch = batch;
    tc_atomic_store_release(consumed, 0);
    return 0;
}

uint32_t tc_ring_free_slots(tc_ring_producer_t *p)
{
    uint64_t consumed = tc_atomic_load_acquire(p->consumed);

    /* The counter is written by the peer: a value behind our cache or
     * ahead of what we produced is ignored rather than trusted. */
    if (consumed >= p->consumed_cache && consumed <= p->head) {
        p->consumed_cache = consumed;
    }
    return p->nslots - (uint32_t) (p->head - p->consumed_cache);
}

int tc_ring_reserve(tc_ring_producer_t *p, void **payload)
{
    tc_ring_slot_hdr_t *s;

    if (p->reserved) {
        return -EINVAL;
    }
    /* Only read the peer's counter when our cached view says full. */
    if (p->head - p->consumed_cache >= p->nslots && 0 == tc_ring_free_slots(p)) {
        return -EAGAIN;
    }
    s = tc_ring_impl_slot(p->slots, p->stride, p->nslots, p->head);
    *payload = (uint8_t *) s + sizeof(*s);
    p->reserved = true;
    return 0;
}

int tc_ring_publish(tc_ring_producer_t *p, uint32_t len, uint32_t tag)
{
    tc_ring_slot_hdr_t *s;

    if (!p->reserved) {
        return -EINVAL;
    }
    if (len > p->slot_size) {
        return -EMSGSIZE;
    }
    s = tc_ring_impl_slot(p->slots, p->stride, p->nslots, p->head);
    s->len = len;
    s->tag = tag;
    /* Sequence last, with release: the payload is visible before it. */
    tc_atomic_store_release(&s->seq, p->head + 1);
    p->head++;
    p->reserved = false;
    return 0;
}

int tc_ring_push(tc_ring_producer_t *p, const void *data, uint32_t len, uint32_t tag)
{
    void *payload;
    int rc;

    if (len > p->slot_size) {
        return -EMSGSIZE;
    }
    rc = tc_ring_reserve(p, &payload);
    if (0 != rc) {
        return rc;
    }
    if (len > 0) {
        memcpy(payload, data, len);
    }
    return tc_ring_publish(p, len, tag);
}

void tc_ring_consumer_flush(tc_ring_consumer_t *c)
{
    if (c->published != c->tail) {
        tc_atomic_store_release(c->consumed, c->tail);
        c->published = c->tail;
    }
}

int tc_ring_peek(tc_ring_consumer_t *c, const void **payload, uint32_t *len, uint32_t *tag)
{
    tc_ring_slot_hdr_t *s = tc_ring_impl_slot(c->slots, c->stride, c->nslots, c->tail);
    uint64_t seq = tc_atomic_load_acquire(&s->seq);

    if (seq != c->tail + 1) {
        /* Empty: the slot still holds the previous lap (or nothing yet).
         * Hand back what we consumed so a waiting producer can go on. */
        if (seq == 0 || seq + c->nslots == c->tail + 1) {
            tc_ring_consumer_flush(c);
            return -EAGAIN;
        }
        return -EPROTO;
    }
    return tc_ring_impl_read_slot(s, c->slot_size, payload, len, tag);
}

void tc_ring_release(tc_ring_consumer_t *c)
{
    c->tail++;
    if (c->tail - c->published >= c->batch) {
        tc_ring_consumer_flush(c);
    }
}

int tc_ring_pop(tc_ring_consumer_t *c, void *buf, size_t bufsize, uint32_t *len, uint32_t *tag)
{
    const void *payload;
    uint32_t l;
    int rc = tc_ring_peek(c, &payload, &l, tag);

    if (0 != rc) {
        return rc;
    }
    if (l > bufsize) {
        return -EMSGSIZE;
    }
    if (l > 0) {
        memcpy(buf, payload, l);
    }
    *len = l;
    tc_ring_release(c);
    return 0;
}
