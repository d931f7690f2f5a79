/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * tc_mpring.h: bounded multi-producer / single-consumer queue of
 * fixed-size slots (BIP's static receive queue, shared by every sender).
 *
 * Vyukov's bounded queue: slot i starts with sequence i. A producer reads
 * the shared enqueue position pos, checks that slot pos % n has sequence
 * pos (free for this lap), claims the position with a compare-and-swap on
 * the enqueue position, writes the payload, then stores sequence pos + 1
 * with release semantics. The consumer waits for sequence pos + 1 in its
 * slot, reads, and frees the slot for the next lap by storing pos + n.
 * Sequence < pos means full. No locks: a producer that dies between claim
 * and publish stalls the queue at that slot (the consumer then sees
 * -EAGAIN forever; the job is dead anyway).
 *
 * Memory layout (formatted in place, typically inside a shared segment):
 *   cache line 0: magic, version, nslots, slot_size
 *   cache line 1: enqueue position (producers, atomic CAS)
 *   cache line 2: dequeue position (written by the consumer, informative)
 *   slots: TC_MPRING_STRIDE(slot_size) bytes each: uint64 seq | uint32 len
 *          | uint32 tag (the sender's id, by convention) | payload
 * The consumer keeps its position and the geometry in private memory and
 * validates every sequence and length it reads.
 */
#ifndef TC_MPRING_H
#define TC_MPRING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tc_common.h"
#include "tc_ring.h"
#include "tc_ring_impl.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TC_MPRING_MAGIC 0x74634d50u /* "tcMP" */
#define TC_MPRING_VERSION 1u

/* Slots are laid out as in tc_ring (seq | len | tag | payload); only the
 * meaning of seq differs. */
typedef tc_ring_slot_hdr_t tc_mpring_slot_hdr_t;

typedef struct tc_mpring_hdr {
    uint32_t magic;
    uint32_t version;
    uint32_t nslots;
    uint32_t slot_size;
    uint8_t pad0_[TC_CACHELINE - 16];
    uint64_t enqueue_pos;
    uint8_t pad1_[TC_CACHELINE - 8];
    uint64_t dequeue_pos;
    uint8_t pad2_[TC_CACHELINE - 8];
} tc_mpring_hdr_t;

#define TC_MPRING_STRIDE(slot_size) TC_RING_STRIDE(slot_size)

/* Bytes needed (0 if nslots is not a power of two >= 2 or slot_size 0). */
size_t tc_mpring_size(uint32_t nslots, uint32_t slot_size);

/* Initialise in place (mem 64-byte aligned). 0 or -EINVAL. */
int tc_mpring_format(void *mem, size_t memlen, uint32_t nslots, uint32_t slot_size);

/* A producer's (or the consumer's) view of a formatted queue. */
typedef struct tc_mpring {
    tc_mpring_hdr_t *hdr;
    uint8_t *slots;
    uint32_t nslots;
    uint32_t slot_size;
    size_t stride;
    uint64_t tail;     /* consumer only: next position to read */
    uint64_t reserved; /* producer: claimed position (valid if has_reserved) */
    bool has_reserved;
    bool sole_sender; /* tc_mpring_set_sole_sender: slots are not handed back */
} tc_mpring_t;

/* Attach to a formatted queue; the header must match the expected
 * geometry. Returns 0, -EINVAL or -EPROTO. Use one tc_mpring_t per
 * producer thread/process and one for the consumer. */
int tc_mpring_attach(tc_mpring_t *q, void *mem, size_t memlen, uint32_t nslots, uint32_t slot_size);

/* Producer, zero-copy: claim a slot (-EAGAIN when full), write up to
 * slot_size bytes into *payload, then publish. One reservation at a time
 * per tc_mpring_t. */
int tc_mpring_reserve(tc_mpring_t *q, void **payload);
static inline int tc_mpring_publish(tc_mpring_t *q, uint32_t len, uint32_t tag);

/* tc_mpring_reserve for a queue with exactly one producer (one process,
 * one thread, for the queue's whole life): the claim is a plain store of
 * the enqueue position, no compare-and-swap (a locked instruction would
 * also wait for the stores before it, e.g. the consumer's release of the
 * slot just read from another queue). Never mix with tc_mpring_reserve
 * on the same queue. -EAGAIN when full, -EPROTO if the slot says another
 * producer claimed it. */
static inline int tc_mpring_reserve_sole(tc_mpring_t *q, void **payload);

/* Fetch the slot the next claim will take in exclusive state (a hint, no
 * effect on correctness): the claim writes the slot, which the consumer
 * read last; a plain read would take the line shared and the write would
 * cost a second transfer. */
static inline void tc_mpring_prefetch_claim(const tc_mpring_t *q);

/* Sole-sender mode, for a queue with one producer whose protocol above never
 * lets it write a slot before the consumer is done with it (credits
 * returned only after the slot's message was consumed, with release
 * order between the two). Set on the producer's view and on the
 * consumer's view before the first message, on both or neither: the
 * consumer then frees a slot without writing it (its release is its
 * position alone) and the producer's tc_mpring_reserve_sole claims
 * without reading the slot, so that per message the slot's line only
 * travels from producer to consumer. Fullness is not detected then: the
 * caller's credits are the only guard. */
void tc_mpring_set_sole_sender(tc_mpring_t *q);

/* Producer, copying. -EAGAIN when full, -EMSGSIZE if len > slot_size. */
int tc_mpring_push(tc_mpring_t *q, const void *data, uint32_t len, uint32_t tag);

/* Consumer (only one): next message in place; 0, -EAGAIN (empty), or
 * -EPROTO (corrupt slot). Valid until tc_mpring_release(). */
static inline int tc_mpring_peek(tc_mpring_t *q, const void **payload, uint32_t *len,
                                 uint32_t *tag);
static inline void tc_mpring_release(tc_mpring_t *q);

/* Consumer, copying; -EMSGSIZE (message stays) if bufsize is too small. */
int tc_mpring_pop(tc_mpring_t *q, void *buf, size_t bufsize, uint32_t *len, uint32_t *tag);

/* inline: the consumer's empty poll is the inner loop of a receiver */
static inline int tc_mpring_peek(tc_mpring_t *q, const void **payload, uint32_t *len, uint32_t *tag)
{
    tc_mpring_slot_hdr_t *s = tc_ring_impl_slot(q->slots, q->stride, q->nslots, q->tail);
    uint64_t seq = tc_atomic_load_acquire(&s->seq);

    if (seq != q->tail + 1) {
        /* Free (seq == tail; sole sender: the last lap's tail + 1 - nslots)
         * or claimed but not yet published: empty. */
        if (seq == q->tail || (q->sole_sender && (int64_t) (seq - q->tail) < 0)) {
            return -EAGAIN;
        }
        return -EPROTO;
    }
    return tc_ring_impl_read_slot(s, q->slot_size, payload, len, tag);
}

/* inline: reserve_sole, publish and release are on every message's path */
static inline tc_mpring_slot_hdr_t *tc_mpring_slot_at(const tc_mpring_t *q, uint64_t pos)
{
    return tc_ring_impl_slot(q->slots, q->stride, q->nslots, pos);
}

static inline void tc_mpring_prefetch_claim(const tc_mpring_t *q)
{
    const void *slot = tc_mpring_slot_at(q, tc_atomic_load_relaxed(&q->hdr->enqueue_pos));

#if defined(__x86_64__) || defined(__i386__)
    __asm__ volatile("prefetchw %0" : : "m"(*(const char *) slot));
#else
    __builtin_prefetch(slot, 1, 3);
#endif
}

static inline int tc_mpring_reserve_sole(tc_mpring_t *q, void **payload)
{
    uint64_t pos;
    tc_mpring_slot_hdr_t *s;
    int64_t diff;

    if (q->has_reserved) {
        return -EINVAL;
    }
    /* only we write the position: no other claim can race with ours */
    pos = tc_atomic_load_relaxed(&q->hdr->enqueue_pos);
    s = tc_mpring_slot_at(q, pos);
    if (!q->sole_sender) {
        diff = (int64_t) (tc_atomic_load_acquire(&s->seq) - pos);
        if (diff < 0) {
            return -EAGAIN;
        }
        if (diff > 0) {
            return -EPROTO;
        }
    }
    /* sole-sender mode: the caller's credits say the slot is free */
    tc_atomic_store_relaxed(&q->hdr->enqueue_pos, pos + 1);
    q->reserved = pos;
    q->has_reserved = true;
    *payload = (uint8_t *) s + sizeof(*s);
    return 0;
}

static inline int tc_mpring_publish(tc_mpring_t *q, uint32_t len, uint32_t tag)
{
    tc_mpring_slot_hdr_t *s;

    if (!q->has_reserved) {
        return -EINVAL;
    }
    if (len > q->slot_size) {
        return -EMSGSIZE;
    }
    s = tc_mpring_slot_at(q, q->reserved);
    s->len = len;
    s->tag = tag;
    tc_atomic_store_release(&s->seq, q->reserved + 1);
    q->has_reserved = false;
    return 0;
}

static inline void tc_mpring_release(tc_mpring_t *q)
{
    tc_mpring_slot_hdr_t *s = tc_mpring_slot_at(q, q->tail);

    /* Free the slot for the producer of the next lap (sole sender: the
     * position alone frees it). */
    if (!q->sole_sender) {
        tc_atomic_store_release(&s->seq, q->tail + q->nslots);
    }
    q->tail++;
    tc_atomic_store_relaxed(&q->hdr->dequeue_pos, q->tail);
}

#ifdef __cplusplus
}
#endif

#endif /* TC_MPRING_H */
