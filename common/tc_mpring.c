/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * tc_mpring.c: bounded multi-producer / single-consumer queue after
 * Vyukov (see tc_mpring.h for the layout and the protocol).
 */
#include <string.h>

#include "tc_mpring.h"
#include "tc_atomic.h"
#include "tc_ring_impl.h"

size_t tc_mpring_size(uint32_t nslots, uint32_t slot_size)
{
    if (!tc_ring_impl_geometry_ok(nslots, slot_size)) {
        return 0;
    }
    return sizeof(tc_mpring_hdr_t) + (size_t) nslots * TC_MPRING_STRIDE(slot_size);
}

static inline tc_mpring_slot_hdr_t *tc_mpring_slot(const tc_mpring_t *q, uint64_t pos)
{
    return tc_ring_impl_slot(q->slots, q->stride, q->nslots, pos);
}

int tc_mpring_format(void *mem, size_t memlen, uint32_t nslots, uint32_t slot_size)
{
    size_t need = tc_mpring_size(nslots, slot_size);
    size_t stride = TC_MPRING_STRIDE(slot_size);
    tc_mpring_hdr_t *hdr = mem;
    uint8_t *slots;

    if (!tc_ring_impl_mem_ok(mem, memlen, need)) {
        return -EINVAL;
    }
    slots = (uint8_t *) mem + sizeof(tc_mpring_hdr_t);
    for (uint32_t i = 0; i < nslots; i++) {
        tc_mpring_slot_hdr_t *s = tc_ring_impl_slot(slots, stride, nslots, i);
        /* Slot i is free for position i. */
        tc_atomic_store_relaxed(&s->seq, (uint64_t) i);
        s->len = 0;
        s->tag = 0;
    }
    tc_atomic_store_relaxed(&hdr->enqueue_pos, 0);
    tc_atomic_store_relaxed(&hdr->dequeue_pos, 0);
    hdr->nslots = nslots;
    hdr->slot_size = slot_size;
    hdr->version = TC_MPRING_VERSION;
    tc_atomic_store_release(&hdr->magic, TC_MPRING_MAGIC);
    return 0;
}

int tc_mpring_attach(tc_mpring_t *q, void *mem, size_t memlen, uint32_t nslots, uint32_t slot_size)
{
    tc_mpring_hdr_t *hdr = mem;
    size_t need = tc_mpring_size(nslots, slot_size);

    if (!tc_ring_impl_mem_ok(mem, memlen, need)) {
        return -EINVAL;
    }
    if (TC_MPRING_MAGIC != tc_atomic_load_acquire(&hdr->magic) ||
        TC_MPRING_VERSION != hdr->version || nslots != hdr->nslots || slot_size != hdr->slot_size) {
        return -EPROTO;
    }
    q->hdr = hdr;
    q->slots = (uint8_t *) mem + sizeof(tc_mpring_hdr_t);
    q->nslots = nslots;
    q->slot_size = slot_size;
    q->stride = TC_MPRING_STRIDE(slot_size);
    q->tail = tc_atomic_load_acquire(&hdr->dequeue_pos);
    q->reserved = 0;
    q->has_reserved = false;
    q->sole_sender = false;
    return 0;
}

void tc_mpring_set_sole_sender(tc_mpring_t *q)
{
    q->sole_sender = true;
}

int tc_mpring_reserve(tc_mpring_t *q, void **payload)
{
    uint64_t pos;

    if (q->has_reserved) {
        return -EINVAL;
    }
    pos = tc_atomic_load_relaxed(&q->hdr->enqueue_pos);
    for (;;) {
        tc_mpring_slot_hdr_t *s = tc_mpring_slot(q, pos);
        uint64_t seq = tc_atomic_load_acquire(&s->seq);
        int64_t diff = (int64_t) (seq - pos);

        if (0 == diff) {
            /* Free for this lap: claim the position. On failure pos holds
             * the current value and we look again. */
            if (tc_atomic_cswap_weak_relaxed(&q->hdr->enqueue_pos, &pos, pos + 1)) {
                q->reserved = pos;
                q->has_reserved = true;
                *payload = (uint8_t *) s + sizeof(*s);
                return 0;
            }
        } else if (diff < 0) {
            /* The slot still holds the message of the previous lap. */
            return -EAGAIN;
        } else {
            /* Another producer claimed pos meanwhile. */
            pos = tc_atomic_load_relaxed(&q->hdr->enqueue_pos);
        }
    }
}

int tc_mpring_push(tc_mpring_t *q, const void *data, uint32_t len, uint32_t tag)
{
    void *payload;
    int rc;

    if (len > q->slot_size) {
        return -EMSGSIZE;
    }
    rc = tc_mpring_reserve(q, &payload);
    if (0 != rc) {
        return rc;
    }
    if (len > 0) {
        memcpy(payload, data, len);
    }
    return tc_mpring_publish(q, len, tag);
}

int tc_mpring_pop(tc_mpring_t *q, void *buf, size_t bufsize, uint32_t *len, uint32_t *tag)
{
    const void *payload;
    uint32_t l;
    int rc = tc_mpring_peek(q, &payload, &l, tag);

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
    tc_mpring_release(q);
    return 0;
}
