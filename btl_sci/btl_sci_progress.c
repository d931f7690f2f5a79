/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * btl_sci_progress.c: the component's progress loop: the active peers'
 * rings polled (one load each when nothing arrived), messages handed to
 * their callbacks in place, the doorbell that puts an idle peer back on
 * the active list, and the rare path (connections in progress, sweeps of
 * idle peers, peer liveness, deferred sends, owed callbacks).
 */

#include "opal_config.h"

#include <string.h>

#include "tc_ompi_compat.h"
#include "opal/runtime/opal_params.h"

#include "tc_atomic.h"
#include "tc_ompi.h"

#include "btl_sci.h"
#include "btl_sci_endpoint.h"
#include "btl_sci_frag.h"

static inline void mca_btl_sci_deliver(mca_btl_sci_endpoint_t *ep, const void *payload,
                                       uint32_t len, uint32_t tagword)
{
    uint32_t kind = tagword >> MCA_BTL_SCI_KIND_SHIFT;

    if (OPAL_LIKELY(MCA_BTL_SCI_KIND_AM == kind)) {
        mca_btl_base_tag_t tag = (mca_btl_base_tag_t) (tagword & MCA_BTL_SCI_TAG_MASK);
        const mca_btl_active_message_callback_t *reg = mca_btl_base_active_message_trigger + tag;
        mca_btl_base_segment_t segment;

        if (OPAL_UNLIKELY(NULL == reg->cbfunc)) {
            BTL_ERROR(("btl:sci: message with unregistered tag %u from local rank %d dropped",
                       (unsigned) tag, ep->peer_rank));
            return;
        }
        /* the fragment is handed over in place: zero copy out of the slot */
        segment.seg_addr.pval = (void *) payload;
        segment.seg_len = len;
        /* the module of the peer's reach: ob1 looks it up (an RGET's
         * receiver finds its RDMA module by it) */
        tc_ompi_deliver(reg, &ep->module->super, ep, tag, &segment, 1);
    } else if (MCA_BTL_SCI_KIND_ATOMIC_REQ == kind) {
        mca_btl_sci_atomic_handle_req(ep, payload, len);
    } else if (MCA_BTL_SCI_KIND_ATOMIC_RSP == kind) {
        mca_btl_sci_atomic_handle_rsp(ep, payload, len);
    } else {
        BTL_ERROR(("btl:sci: unknown message kind %u from local rank %d dropped", (unsigned) kind,
                   ep->peer_rank));
    }
}

/* take up to poll_batch messages from one peer's ring */
static inline int mca_btl_sci_poll_ring(mca_btl_sci_endpoint_t *ep)
{
    const unsigned int batch = mca_btl_sci_component.poll_batch;
    unsigned int count;

    for (count = 0; count < batch; ++count) {
        const void *payload;
        uint32_t len, tagword;
        int rc = tc_ring_peek(&ep->in, &payload, &len, &tagword);

        if (OPAL_LIKELY(-EAGAIN == rc)) {
            break;
        }
        if (OPAL_UNLIKELY(0 != rc)) {
            mca_btl_sci_endpoint_lost(ep, "corrupt ring slot (bad sequence or length)");
            return (int) count;
        }
        mca_btl_sci_deliver(ep, payload, len, tagword);
        tc_ring_release(&ep->in);
    }
    if (count > 0) {
        if (OPAL_LIKELY(!ep->write_through)) {
            /* hand the slots back now (one store per call, not per
             * message): a sender refilling the ring must not find it full */
            tc_ring_consumer_flush(&ep->in);
        } else {
            mca_btl_sci_endpoint_flush_consumed(ep);
        }
    }
    return (int) count;
}

/* a peer rang: put it back on the active list */
static void mca_btl_sci_check_doorbell(void)
{
    mca_btl_sci_component_t *c = &mca_btl_sci_component;
    uint8_t *bell = c->doorbell;

    for (int base = 0; base < c->num_local; base += 8) {
        if (OPAL_LIKELY(!mca_btl_sci_doorbell_any(bell + base))) {
            continue;
        }
        for (int i = base; i < base + 8 && i < c->num_local; ++i) {
            if (mca_btl_sci_doorbell_take(bell + i)) {
                opal_output_verbose(90, c->output, "btl:sci: doorbell from local rank %d", i);
                if (MCA_BTL_SCI_EP_CONNECTED == tc_atomic_load_acquire(&c->endpoints[i].state)) {
                    mca_btl_sci_endpoint_activate(c->endpoints + i);
                }
            }
        }
    }
}

/* a send the done list held: its callback now */
static void mca_btl_sci_complete_done(opal_list_item_t *item)
{
    mca_btl_sci_frag_complete((mca_btl_sci_frag_t *) item, OPAL_SUCCESS);
}

/* the rare path: connections in progress, sweeps of idle peers, peer
 * liveness, deferred sends, owed callbacks */
static int mca_btl_sci_progress_slow(void)
{
    mca_btl_sci_component_t *c = &mca_btl_sci_component;
    int count = 0;

    if (c->other_jobs_on) {
        /* a process of another job may have made us a ring first */
        mca_btl_sci_take_offers();
    }
    if (OPAL_UNLIKELY(c->num_unconnected > 0)) {
        for (int i = 0; i < c->num_local; ++i) {
            if (MCA_BTL_SCI_EP_CONNECTING == c->endpoints[i].state) {
                (void) mca_btl_sci_endpoint_connect(c->endpoints + i);
            }
        }
        for (int i = 0; NULL != c->oeps && i < c->num_oeps; ++i) {
            if (MCA_BTL_SCI_EP_CONNECTING == c->oeps[i].state) {
                (void) mca_btl_sci_endpoint_connect(c->oeps + i);
            }
        }
    }
    if (OPAL_UNLIKELY(0 != tc_atomic_load_acquire(&c->need_activate))) {
        /* ofi peers that connected: polled from now on, no doorbell */
        tc_atomic_store_relaxed(&c->need_activate, 0);
        for (int i = 0; NULL != c->oeps && i < c->num_oeps; ++i) {
            if (MCA_BTL_SCI_EP_CONNECTED == tc_atomic_load_acquire(&c->oeps[i].state) &&
                !c->oeps[i].active) {
                mca_btl_sci_endpoint_activate(c->oeps + i);
            }
        }
    }

    if (0 == (c->progress_calls & (c->sweep_interval - 1))) {
        bool check_alive = 0 == (c->progress_calls & ((c->sweep_interval << 6) - 1));
        int n;

        /* a snapshot: no lock is held while callbacks run */
        OPAL_THREAD_LOCK(&c->lock);
        n = c->num_connected;
        memcpy(c->sweep, c->connected, (size_t) n * sizeof(*c->sweep));
        OPAL_THREAD_UNLOCK(&c->lock);

        for (int i = 0; i < n; ++i) {
            mca_btl_sci_endpoint_t *ep = c->sweep[i];

            if (MCA_BTL_SCI_EP_CONNECTED != ep->state) {
                continue;
            }
            if (!ep->active) {
                int got = mca_btl_sci_poll_ring(ep);
                if (got > 0) {
                    count += got;
                    mca_btl_sci_endpoint_activate(ep);
                }
            }
            if (check_alive) {
                (void) mca_btl_sci_endpoint_check_peer(ep, "the peer process is gone");
            }
        }
    }

    if (!opal_list_is_empty(&c->pending_endpoints)) {
        opal_list_t work;
        mca_btl_sci_endpoint_t *ep;

        /* take the list, so no lock is held while an endpoint is flushed */
        OBJ_CONSTRUCT(&work, opal_list_t);
        OPAL_THREAD_LOCK(&c->lock);
        opal_list_join(&work, opal_list_get_end(&work), &c->pending_endpoints);
        OPAL_THREAD_UNLOCK(&c->lock);
        while (NULL != (ep = (mca_btl_sci_endpoint_t *) opal_list_remove_first(&work))) {
            bool done = mca_btl_sci_endpoint_flush_pending(ep);

            if (!done) {
                /* stuck on a full ring (or still connecting): is the
                 * reader still alive? */
                (void) mca_btl_sci_endpoint_check_peer(ep,
                                                       "the peer stopped reading (process gone)");
            }
            OPAL_THREAD_LOCK(&c->lock);
            if ((done && opal_list_is_empty(&ep->pending)) || MCA_BTL_SCI_EP_FAILED == ep->state) {
                ep->waiting = false;
            } else {
                opal_list_append(&c->pending_endpoints, &ep->super);
            }
            OPAL_THREAD_UNLOCK(&c->lock);
        }
        OBJ_DESTRUCT(&work);
    }

    if (!tc_ompi_done_list_empty(&c->completed_frags)) {
        count += tc_ompi_done_list_drain(&c->completed_frags, mca_btl_sci_complete_done);
    }
    return count + mca_btl_sci_lost_progress();
}

int mca_btl_sci_component_progress(void)
{
    /* one thread at a time; the others skip (acquire to take, release to
     * drop: the next holder sees all this one read and wrote) */
    static tc_guard_t guard;
    mca_btl_sci_component_t *c = &mca_btl_sci_component;
    int count = 0;

    if (OPAL_UNLIKELY(!c->running)) {
        /* not initialised, or finalized already */
        return 0;
    }
    if (opal_using_threads() && !tc_guard_try_enter(&guard)) {
        return 0;
    }
    if (NULL != c->osd &&
        (0 != tc_atomic_load_relaxed(&c->ofi_poll_always) ||
         0 != tc_atomic_load_relaxed(&c->dma_posted) ||
         0 == (c->progress_calls & (c->sweep_interval - 1)))) {
        /* the fabric: other nodes' writes land in our segments only now
         * (a job on one host opens it for other jobs only: polled now and
         * then, as each poll is a system call, until a peer uses it) */
        count += sci_progress(c->osd);
        if (tc_atomic_load_relaxed(&c->dma_posted) > 0) {
            count += mca_btl_sci_dma_reap();
        }
    }

    /* the active peers: one load each when nothing arrived */
    for (int i = 0; i < c->num_active; ++i) {
        mca_btl_sci_endpoint_t *ep = c->active[i];
        int n = mca_btl_sci_poll_ring(ep);

        if (OPAL_UNLIKELY(MCA_BTL_SCI_EP_CONNECTED != ep->state)) {
            /* failed: off the list; slot i holds another peer now */
            ep->active = false;
            c->active[i] = c->active[--c->num_active];
            --i;
            continue;
        }
        if (OPAL_LIKELY(n > 0)) {
            ep->empty_polls = 0;
            count += n;
        } else if (OPAL_UNLIKELY(++ep->empty_polls > c->idle_polls && !ep->pinned)) {
            /* tell the peer to ring, then look once more: the sender
             * fences between its publish and its look at the flag, we
             * between the flag and this poll, so one of the two sees
             * the other (btl_sci_doorbell.h) */
            mca_btl_sci_doorbell_go_idle(ep->idle_out);
            n = mca_btl_sci_poll_ring(ep);
            if (n > 0) {
                mca_btl_sci_doorbell_go_active(ep->idle_out);
                ep->empty_polls = 0;
                count += n;
            } else {
                ep->active = false;
                c->active[i] = c->active[--c->num_active];
                --i;
            }
        }
    }

    /* the doorbell: one load per 8 peers */
    if (NULL != c->doorbell &&
        (OPAL_UNLIKELY(mca_btl_sci_doorbell_any(c->doorbell)) || c->num_local > 8)) {
        mca_btl_sci_check_doorbell();
    }

    ++c->progress_calls;
    if (OPAL_UNLIKELY(0 == (c->progress_calls & (c->sweep_interval - 1)) ||
                      c->num_unconnected > 0 || 0 != c->need_activate ||
                      !opal_list_is_empty(&c->pending_endpoints) ||
                      0 != tc_atomic_load_relaxed(&c->lost_pending) ||
                      !tc_ompi_done_list_empty(&c->completed_frags))) {
        count += mca_btl_sci_progress_slow();
    }

    if (opal_using_threads()) {
        tc_guard_leave(&guard);
    }
    return count;
}
