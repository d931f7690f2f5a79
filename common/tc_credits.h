/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * tc_credits.h: credit-based flow control for control messages, the
 * algorithm of MPI-BIP (section 3.5) with its per-peer software FIFO of
 * sends waiting for credit (section 3.4). Pure logic, no I/O: the BTL
 * calls these functions around its own sends and receives.
 *
 * Per peer j, process i keeps
 *   C = C(i->j): control messages i may still send to j (starts at N),
 *   B = B(i<-j): messages received from j whose slots i has not yet
 *                returned.
 * Sending a control message decrements C, puts B in the message header
 * ("piggy-backed credits") and resets B. Receiving a control message adds
 * its header credits to C and increments B. When B reaches N-1 a
 * credit-only control message must be sent. The last credit is reserved
 * for that message: an ordinary send needs C >= 2; hence N >= 2.
 * Ordinary sends that find C <= 1 (or an earlier send still waiting) go
 * to the FIFO and leave it in order.
 *
 * The reserved credit and credit-only messages: a credit-only message
 * travels in the reserved slot. It does not take C and, at the receiver,
 * does not count in B (tc_credits_received_credit_only). Were it counted,
 * every credit-only message would owe one credit back, and with N = 2 that
 * single owed credit is already N-1: the two sides would exchange
 * credit-only messages forever. At most one credit-only message per
 * direction is ever unread, so the reserved slot suffices: it is sent
 * when B = N-1, which leaves the peer with C = 1 and nothing in flight;
 * the peer can send nothing ordinary (so B stays 0 here) until it has read
 * the credit-only message. The receiver must free the queue slot of a
 * message before it applies the message's credits.
 *
 * Early return (tc_credits_want_return): a credit-only message may also
 * go as soon as B >= N/2 (N >= 4), so that a one-way stream to a peer a
 * network round trip away does not stop for that round trip every N-1
 * messages. The reserved slot still suffices over a channel that
 * delivers in order: when it goes with B = b >= N/2, the peer can send
 * at most N-b-1 < N/2 more ordinary messages before it has read it (the
 * credits it reads first were sent before it), so B cannot reach N/2
 * again while it is unread.
 *
 * Typical BTL use:
 *   send:    if (0 == tc_credits_try_send(cr, &hdr->credits)) post(frag);
 *            else tc_credits_defer(cr, &frag->link);
 *   receive: free the queue slot, then
 *            tc_credits_received(cr, hdr->credits);   (ordinary), or
 *            tc_credits_received_credit_only(cr, hdr->credits);
 *            while ((it = tc_credits_next_ready(cr, &c))) post(it, c);
 *            if (tc_credits_need_credit_only(cr) &&
 *                0 == tc_credits_take_credit_only(cr, &c)) post_credit_msg(c);
 * Not thread safe: one peer's account is used under the endpoint's lock.
 */
#ifndef TC_CREDITS_H
#define TC_CREDITS_H

#include <stdbool.h>
#include <stdint.h>

#include "tc_common.h"
#include "tc_list.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tc_credits_stats {
    uint64_t sent;                 /* ordinary control messages sent */
    uint64_t credit_only_sent;     /* forced credit-only messages sent */
    uint64_t received;             /* ordinary control messages received */
    uint64_t credit_only_received; /* credit-only messages received */
    uint64_t deferred;             /* sends that had to wait in the FIFO */
} tc_credits_stats_t;

typedef struct tc_credits {
    uint32_t n;     /* N: slots the peer reserves for us, >= 2 */
    uint32_t c;     /* C(me -> peer) */
    uint32_t b;     /* B(me <- peer) */
    tc_list_t fifo; /* sends waiting for credit, oldest first */
    tc_credits_stats_t stats;
} tc_credits_t;

/* Start an account with N credits (C = N, B = 0, empty FIFO).
 * Returns 0, or -EINVAL if n < 2. */
int tc_credits_init(tc_credits_t *cr, uint32_t n);

/* Ordinary control message. If the FIFO is empty and C >= 2: consume one
 * credit, store the credits to piggy-back (B) in *piggyback, reset B and
 * return 0. Otherwise return -EAGAIN and change nothing: the caller queues
 * the send with tc_credits_defer(). */
static inline int tc_credits_try_send(tc_credits_t *cr, uint32_t *piggyback);

/* Queue a send that could not go (FIFO order is preserved). */
void tc_credits_defer(tc_credits_t *cr, tc_list_item_t *item);

/* Next queued send that may go now: if the FIFO is not empty and C >= 2,
 * pop its head, consume a credit, store B in *piggyback, reset B, and
 * return the item. Otherwise NULL. Call in a loop after credits arrived. */
tc_list_item_t *tc_credits_next_ready(tc_credits_t *cr, uint32_t *piggyback);

/* Undo a send accounted by try_send/next_ready/take_credit_only that the
 * device refused after all: give the credit back and restore B. If item
 * is not NULL it goes back to the head of the FIFO. */
void tc_credits_cancel(tc_credits_t *cr, tc_list_item_t *item, uint32_t piggyback);

/* An ordinary control message arrived carrying `credits` in its header:
 * C += credits, B += 1. Returns 0, or -EPROTO (nothing changed) if the
 * peer returned more credits than it can owe us (C would exceed N) or
 * sent more ordinary messages than we granted it (B would exceed N-1). */
static inline int tc_credits_received(tc_credits_t *cr, uint32_t credits);

/* The credits an ordinary control message carries, applied before the
 * message itself is consumed: C += credits. They name slots the peer has
 * already freed, so a receiver that must leave the message in its slot
 * for now (a sender looking for credit) may use them at once; the message
 * is accounted later, when its slot is free, with
 * tc_credits_received(cr, 0). Returns 0, or -EPROTO (nothing changed) if
 * C would exceed N. */
static inline int tc_credits_returned(tc_credits_t *cr, uint32_t credits);

/* A credit-only message arrived: C += credits; B does not change (the
 * message used the reserved slot, nothing is owed for it). 0 or -EPROTO. */
int tc_credits_received_credit_only(tc_credits_t *cr, uint32_t credits);

/* True when a credit-only message must be sent now: B >= N-1. */
static inline bool tc_credits_need_credit_only(const tc_credits_t *cr);

/* Account for a credit-only message: needs B >= 1; stores B in *piggyback
 * and resets B (C is not touched: the message goes in the reserved slot).
 * Returns 0 or -EAGAIN. */
int tc_credits_take_credit_only(tc_credits_t *cr, uint32_t *piggyback);

/* Undo a credit-only message the device refused: restore B. */
void tc_credits_cancel_credit_only(tc_credits_t *cr, uint32_t piggyback);

/* Account for one outgoing control message: consume a credit and hand the
 * owed credits to the header. */
static inline void tc_credits_consume(tc_credits_t *cr, uint32_t *piggyback)
{
    cr->c--;
    *piggyback = cr->b;
    cr->b = 0;
}

/* try_send, received and need_credit_only run once per message on both
 * sides: inline, so that the per-message account costs no calls */
static inline int tc_credits_try_send(tc_credits_t *cr, uint32_t *piggyback)
{
    /* Earlier sends waiting in the FIFO go first: MPI order per peer. */
    if (!tc_list_is_empty(&cr->fifo) || cr->c < 2) {
        return -EAGAIN;
    }
    tc_credits_consume(cr, piggyback);
    cr->stats.sent++;
    return 0;
}

static inline int tc_credits_received(tc_credits_t *cr, uint32_t credits)
{
    /* C(i->j) + B(j->i) <= N: a peer can never return more than we spent,
     * and never send more than N-1 ordinary messages without our credits
     * (it keeps the last one for a credit-only message). */
    if (credits > cr->n - cr->c || cr->b >= cr->n - 1) {
        return -EPROTO;
    }
    cr->c += credits;
    cr->b += 1;
    cr->stats.received++;
    return 0;
}

static inline int tc_credits_returned(tc_credits_t *cr, uint32_t credits)
{
    if (credits > cr->n - cr->c) {
        return -EPROTO;
    }
    cr->c += credits;
    return 0;
}

static inline bool tc_credits_need_credit_only(const tc_credits_t *cr)
{
    return cr->b >= 1 && cr->b >= cr->n - 1;
}

/* True when a credit-only message may go early: B >= N/2 with N >= 4
 * (see the top of the file; only over a channel that delivers in order). */
static inline bool tc_credits_want_return(const tc_credits_t *cr)
{
    return cr->n >= 4 && cr->b >= 1 && 2 * cr->b >= cr->n;
}

static inline uint32_t tc_credits_available(const tc_credits_t *cr)
{
    return cr->c;
}

static inline uint32_t tc_credits_owed(const tc_credits_t *cr)
{
    return cr->b;
}

static inline size_t tc_credits_queued(const tc_credits_t *cr)
{
    return tc_list_size(&cr->fifo);
}

/* Release the account. Items still in the FIFO are not touched: the
 * caller drains them first (tc_credits_drain) if it owns memory there. */
void tc_credits_fini(tc_credits_t *cr);

/* Pop any queued send regardless of credit (teardown, del_procs). */
tc_list_item_t *tc_credits_drain(tc_credits_t *cr);

#ifdef __cplusplus
}
#endif

#endif /* TC_CREDITS_H */
