/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * tc_ring.h: single-producer / single-consumer ring of fixed-size slots
 * for remote-write queues (btl_sci's per-peer message ring).
 *
 * Memory layout (tc_ring_format() writes it into any memory, typically a
 * shared segment; both sides then attach in place):
 *
 *   tc_ring_hdr_t   magic, version, nslots, slot_size      (cache line 0)
 *   slot[0..nslots) each TC_RING_STRIDE(slot_size) bytes, 64-byte aligned:
 *                   uint64 seq | uint32 len | uint32 tag | payload
 *
 * The producer writes payload, len and tag, then stores seq = pos + 1 with
 * release semantics, so a consumer that sees the sequence (acquire) sees
 * the whole message. The consumer never writes the slot array: it returns
 * slots by storing its position (count of consumed messages) into a 64-bit
 * counter that may live anywhere the producer can read, typically in the
 * producer's own segment, written remotely by the consumer (CHEMPI's
 * Completed flag). The consumer publishes the counter every `batch`
 * releases and whenever it finds the ring empty, so a waiting producer
 * always gets its slots back.
 *
 * Head and tail never share a cache line: the producer's head is private
 * (the consumer follows the per-slot sequences), and the only shared
 * position is the consumer's counter, which the caller puts on a cache
 * line of its own, away from the slots (btl_sci: line 0 of the sender's
 * segment).
 *
 * Both sides keep their own position and the geometry they were given in
 * private memory; everything read from shared memory (header, len) is
 * validated before use. A slot whose sequence is neither the expected one
 * nor a stale one from the previous lap is reported as -EPROTO.
 */
#ifndef TC_RING_H
#define TC_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tc_common.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TC_RING_MAGIC 0x74635249u /* "tcRI" */
#define TC_RING_VERSION 1u

/* Per-slot header in front of the payload. */
typedef struct tc_ring_slot_hdr {
    uint64_t seq;
    uint32_t len;
    uint32_t tag;
} tc_ring_slot_hdr_t;

/* Shared header; the slot array starts at the next cache line. */
typedef struct tc_ring_hdr {
    uint32_t magic;
    uint32_t version;
    uint32_t nslots;
    uint32_t slot_size;
    uint8_t pad_[TC_CACHELINE - 16];
} tc_ring_hdr_t;

/* Bytes one slot occupies: header + payload rounded up to a cache line. */
#define TC_RING_STRIDE(slot_size) \
    TC_ALIGN_UP((size_t) sizeof(tc_ring_slot_hdr_t) + (size_t) (slot_size), (size_t) TC_CACHELINE)

/* Bytes needed for a ring of nslots (a power of two >= 2) slots carrying
 * up to slot_size payload bytes each. 0 if the geometry is invalid. */
size_t tc_ring_size(uint32_t nslots, uint32_t slot_size);

/* Initialise a ring in place in mem (64-byte aligned, memlen bytes).
 * Returns 0 or -EINVAL (bad geometry, memory too small or misaligned). */
int tc_ring_format(void *mem, size_t memlen, uint32_t nslots, uint32_t slot_size);

/* The same for memory known to be all zero (a new anonymous mapping or a
 * new file): a zero slot header is a formatted one, so only the ring
 * header is written and the pages of the slots stay untouched (no memory
 * behind them) until messages fill them. */
int tc_ring_format_zeroed(void *mem, size_t memlen, uint32_t nslots, uint32_t slot_size);

typedef struct tc_ring_producer {
    uint8_t *slots;
    uint32_t nslots;
    uint32_t slot_size;
    size_t stride;
    uint64_t head;            /* next position to write */
    const uint64_t *consumed; /* consumer's position, read atomically */
    uint64_t consumed_cache;  /* last value read */
    bool reserved;            /* a slot is reserved, not yet published */
} tc_ring_producer_t;

typedef struct tc_ring_consumer {
    uint8_t *slots;
    uint32_t nslots;
    uint32_t slot_size;
    size_t stride;
    uint64_t tail;      /* next position to read */
    uint64_t *consumed; /* where the position is published */
    uint64_t published; /* last value published */
    uint32_t batch;     /* publish every `batch` releases */
} tc_ring_consumer_t;

/* Attach the producer side to a formatted ring. nslots and slot_size are
 * what the producer expects (agreed out of band); the header must match.
 * `consumed` points to the counter the consumer publishes into (8-byte
 * aligned). Both sides start at position 0; the consumer zeroes the
 * counter in tc_ring_consumer_init, and a value that goes backwards or
 * beyond what was produced is ignored.
 * Returns 0 or -EPROTO (header mismatch) / -EINVAL. */
int tc_ring_producer_init(tc_ring_producer_t *p, void *mem, size_t memlen, uint32_t nslots,
                          uint32_t slot_size, const uint64_t *consumed);

/* Attach the consumer side. The consumer sets *consumed to its start
 * position (0). batch: 1 publishes every release; larger batches save
 * remote writes (clamped to nslots/2). */
int tc_ring_consumer_init(tc_ring_consumer_t *c, void *mem, size_t memlen, uint32_t nslots,
                          uint32_t slot_size, uint64_t *consumed, uint32_t batch);

/* Producer, zero-copy: reserve the next slot and get its payload area
 * (slot_size bytes). Returns 0, or -EAGAIN when the ring is full. */
int tc_ring_reserve(tc_ring_producer_t *p, void **payload);

/* Publish the reserved slot with len (<= slot_size) bytes and a tag. */
int tc_ring_publish(tc_ring_producer_t *p, uint32_t len, uint32_t tag);

/* Producer, copying: reserve + memcpy + publish. -EAGAIN when full,
 * -EMSGSIZE when len > slot_size. */
int tc_ring_push(tc_ring_producer_t *p, const void *data, uint32_t len, uint32_t tag);

/* Slots the producer can fill without waiting (reads the counter). */
uint32_t tc_ring_free_slots(tc_ring_producer_t *p);

/* Consumer, zero-copy: look at the next message without consuming it.
 * Returns 0 (payload, len, tag set; payload valid until release), -EAGAIN
 * (empty), or -EPROTO (corrupt slot: bad sequence or len > slot_size). */
int tc_ring_peek(tc_ring_consumer_t *c, const void **payload, uint32_t *len, uint32_t *tag);

/* Consume the message returned by peek; may publish the position. */
void tc_ring_release(tc_ring_consumer_t *c);

/* Consumer, copying: peek + memcpy + release. -EMSGSIZE (message left in
 * the ring) if bufsize is too small for it. */
int tc_ring_pop(tc_ring_consumer_t *c, void *buf, size_t bufsize, uint32_t *len, uint32_t *tag);

/* Publish the consumer position now (e.g. before going idle). */
void tc_ring_consumer_flush(tc_ring_consumer_t *c);

#ifdef __cplusplus
}
#endif

#endif /* TC_RING_H */
