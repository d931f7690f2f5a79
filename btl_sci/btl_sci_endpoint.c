/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * btl_sci_endpoint.c: connection setup to one peer (connect and map its
 * segment for us and its doorbell, attach both rings, create the
 * sequence), the active list, deferred sends and peer failure.
 */

#include "opal_config.h"

#include <string.h>

#include "opal/util/show_help.h"

#include "btl_sci.h"
#include "btl_sci_endpoint.h"
#include "btl_sci_frag.h"
#include "tc_atomic.h"

static void mca_btl_sci_endpoint_construct(mca_btl_sci_endpoint_t *ep)
{
    ep->proc = NULL;
    ep->peer_rank = -1;
    ep->peer_pid = 0;
    ep->state = MCA_BTL_SCI_EP_UNUSED;
    ep->lseg = NULL;
    ep->rseg = NULL;
    ep->rdoor = NULL;
    ep->seq = NULL;
    ep->module = NULL;
    ep->sd = NULL;
    ep->dq = NULL;
    ep->rbase = NULL;
    ep->write_through = false;
    ep->pinned = false;
    ep->idle_in = NULL;
    ep->idle_out = NULL;
    ep->peer_doorbell = NULL;
    ep->active = false;
    ep->empty_polls = 0;
    ep->waiting = false;
    ep->lost = 0;
    ep->lost_why = NULL;
    memset(&ep->out, 0, sizeof(ep->out));
    memset(&ep->in, 0, sizeof(ep->in));
    ep->consumed_pushed = 0;
    OBJ_CONSTRUCT(&ep->pending, opal_list_t);
    OBJ_CONSTRUCT(&ep->lock, opal_mutex_t);
}

static void mca_btl_sci_endpoint_destruct(mca_btl_sci_endpoint_t *ep)
{
    mca_btl_sci_endpoint_disconnect(ep);
    OBJ_DESTRUCT(&ep->pending);
    OBJ_DESTRUCT(&ep->lock);
}

OBJ_CLASS_INSTANCE(mca_btl_sci_endpoint_t, opal_list_item_t, mca_btl_sci_endpoint_construct,
                   mca_btl_sci_endpoint_destruct);

void mca_btl_sci_endpoint_activate(mca_btl_sci_endpoint_t *ep)
{
    mca_btl_sci_component_t *c = &mca_btl_sci_component;

    ep->empty_polls = 0;
    if (NULL != ep->idle_out) {
        mca_btl_sci_doorbell_go_active(ep->idle_out);
    }
    if (!ep->active) {
        ep->active = true;
        c->active[c->num_active++] = ep;
    }
}

static void mca_btl_sci_endpoint_deactivate(mca_btl_sci_endpoint_t *ep)
{
    mca_btl_sci_component_t *c = &mca_btl_sci_component;

    if (!ep->active) {
        return;
    }
    for (int i = 0; i < c->num_active; ++i) {
        if (c->active[i] == ep) {
            c->active[i] = c->active[--c->num_active];
            break;
        }
    }
    ep->active = false;
}

static int mca_btl_sci_endpoint_connect_locked(mca_btl_sci_endpoint_t *ep);

int mca_btl_sci_endpoint_connect(mca_btl_sci_endpoint_t *ep)
{
    int rc;

    /* add_procs and progress may race for it in threaded runs */
    OPAL_THREAD_LOCK(&ep->lock);
    rc = mca_btl_sci_endpoint_connect_locked(ep);
    OPAL_THREAD_UNLOCK(&ep->lock);
    return rc;
}

static int mca_btl_sci_endpoint_connect_locked(mca_btl_sci_endpoint_t *ep)
{
    mca_btl_sci_component_t *c = &mca_btl_sci_component;
    sci_remote_segment_t *rseg = NULL, *rdoor = NULL;
    sci_sequence_t *seq = NULL;
    size_t rsize, lsize;
    int connecting = MCA_BTL_SCI_EP_CONNECTING;
    bool ofi;
    char *rbase, *lbase;
    uint8_t *bell;
    sci_error_t err;
    int rc;

    if (MCA_BTL_SCI_EP_CONNECTED == ep->state) {
        return OPAL_SUCCESS;
    }
    if (MCA_BTL_SCI_EP_CONNECTING != ep->state) {
        return OPAL_ERR_UNREACH;
    }

    /* shm: this host's node id and local ranks; ofi: node ids are vpids,
     * and no doorbell (a peer on another host stays polled) */
    ofi = NULL != c->osd && ep->sd == c->osd;
    /* another job's process: the ring it offered us (its directory lists
     * its own job's rings only) */
    err = sci_connect_segment(
        ep->sd, ofi ? (uint32_t) ep->peer_rank : c->node_id,
        ofi && ep->peer_rank >= c->num_procs
            ? SCI_OFFERED_SEGMENT
            : MCA_BTL_SCI_SEGMENT_ID(ep->peer_rank, ofi ? c->my_vpid : c->local_rank),
        &rseg);
    if (SCI_ERR_OK == err && !ofi) {
        err = sci_connect_segment(c->sd, c->node_id,
                                  MCA_BTL_SCI_SEGMENT_ID(ep->peer_rank, MCA_BTL_SCI_DOORBELL_ID),
                                  &rdoor);
    }
    if (SCI_ERR_NO_SUCH_SEGMENT == err) {
        /* the peer has not made it available yet: lazy retry from progress */
        if (NULL != rseg) {
            sci_disconnect_segment(rseg);
        }
        return OPAL_ERR_RESOURCE_BUSY;
    }
    if (SCI_ERR_OK != err) {
        goto fail;
    }

    rsize = sci_remote_segment_size(rseg);
    rbase = sci_map_remote_segment(rseg, 0, rsize);
    lsize = sci_local_segment_size(ep->lseg);
    lbase = sci_local_segment_address(ep->lseg);
    bell = ofi ? &c->no_bell : sci_map_remote_segment(rdoor, 0, sci_remote_segment_size(rdoor));
    if (NULL == rbase || NULL == bell ||
        (!ofi && (size_t) c->local_rank >= sci_remote_segment_size(rdoor)) ||
        rsize <= MCA_BTL_SCI_SEG_RING_OFF) {
        err = SCI_ERR_OUT_OF_RANGE;
        goto fail;
    }

    if (sci_remote_write_through(rseg) &&
        0 !=
            tc_ring_format_zeroed(rbase + MCA_BTL_SCI_SEG_RING_OFF,
                                  rsize - MCA_BTL_SCI_SEG_RING_OFF, ep->module->ring_slots,
                                  ep->module->slot_size)) {
        /* a shadow (ofi) holds no copy of the owner's ring header: the
         * geometry agreed in the modex is written into it (the new shadow
         * is zero: its slots' pages stay untouched until we send) */
        err = SCI_ERR_ILLEGAL_PARAMETER;
        goto fail;
    }
    /* my messages go into the ring of L[peer][me]; the peer returns slots
     * through the Completed counter in my own segment */
    rc = tc_ring_producer_init(&ep->out, rbase + MCA_BTL_SCI_SEG_RING_OFF,
                               rsize - MCA_BTL_SCI_SEG_RING_OFF, ep->module->ring_slots,
                               ep->module->slot_size,
                               (const uint64_t *) (lbase + MCA_BTL_SCI_SEG_CONSUMED_OFF));
    if (0 == rc) {
        rc = tc_ring_consumer_init(
            &ep->in, lbase + MCA_BTL_SCI_SEG_RING_OFF, lsize - MCA_BTL_SCI_SEG_RING_OFF,
            ep->module->ring_slots, ep->module->slot_size,
            (uint64_t *) (rbase + MCA_BTL_SCI_SEG_CONSUMED_OFF),
            &mca_btl_sci_ofi_module == ep->module ? c->ofi_credit_batch : c->credit_batch);
    }
    if (0 != rc) {
        err = SCI_ERR_ILLEGAL_PARAMETER;
        goto fail;
    }
    err = sci_create_map_sequence(rseg, &seq);
    if (SCI_ERR_OK != err || SCI_ERR_OK != (err = sci_start_sequence(seq))) {
        goto fail;
    }

    ep->rseg = rseg;
    ep->rdoor = rdoor;
    ep->seq = seq;
    ep->idle_in = (uint32_t *) (lbase + MCA_BTL_SCI_SEG_IDLE_OFF);
    ep->idle_out = (uint32_t *) (rbase + MCA_BTL_SCI_SEG_IDLE_OFF);
    ep->rbase = rbase;
    ep->write_through = 0 != sci_remote_write_through(rseg);
    ep->peer_doorbell = ofi ? bell : bell + c->local_rank;
    ep->pinned = ofi;
    OPAL_THREAD_LOCK(&c->lock);
    c->connected[c->num_connected++] = ep;
    OPAL_THREAD_UNLOCK(&c->lock);
    /* progress reads the state without a lock and drops a doorbell or an
     * activation request of a peer not connected yet: the state goes
     * first, after everything it vouches for; a peer the runtime's
     * thread failed meanwhile stays failed (its report is owed) */
    if (!tc_atomic_cswap(&ep->state, &connecting, MCA_BTL_SCI_EP_CONNECTED)) {
        (void) OPAL_THREAD_ADD_FETCH32(&c->num_unconnected, -1);
        return OPAL_ERR_UNREACH;
    }
    if (ofi) {
        /* polled from the next progress call on (only progress touches
         * the active list); its idle flag is never written */
        tc_atomic_store_release(&c->need_activate, 1);
    } else {
        /* a new peer is not polled until it rings: tell it to ring, and
         * ring for it once ourselves for what it may have sent already.
         * Only progress touches the active list. */
        mca_btl_sci_doorbell_go_idle(ep->idle_out);
        mca_btl_sci_doorbell_ring(c->doorbell + ep->peer_rank);
    }
    (void) OPAL_THREAD_ADD_FETCH32(&c->num_unconnected, -1);
    opal_output_verbose(20, c->output, "btl:sci: connected to %s %d (%s)",
                        ofi ? "rank" : "local rank", ep->peer_rank, sci_desc_provider(ep->sd));
    return OPAL_SUCCESS;

fail:
    if (NULL != seq) {
        sci_remove_sequence(seq);
    }
    if (NULL != rdoor) {
        sci_disconnect_segment(rdoor);
    }
    if (NULL != rseg) {
        sci_disconnect_segment(rseg);
    }
    ep->state = MCA_BTL_SCI_EP_FAILED;
    (void) OPAL_THREAD_ADD_FETCH32(&c->num_unconnected, -1);
    opal_show_help("help-mpi-btl-sci.txt", "connect failed", true, opal_process_info.nodename,
                   ep->peer_rank, sci_strerror(err));
    return OPAL_ERROR;
}

void mca_btl_sci_endpoint_disconnect(mca_btl_sci_endpoint_t *ep)
{
    mca_btl_sci_component_t *c = &mca_btl_sci_component;
    opal_list_item_t *item;

    if (MCA_BTL_SCI_EP_CONNECTING == ep->state) {
        (void) OPAL_THREAD_ADD_FETCH32(&c->num_unconnected, -1);
    }
    mca_btl_sci_endpoint_deactivate(ep);
    OPAL_THREAD_LOCK(&c->lock);
    if (NULL != c->connected) {
        for (int i = 0; i < c->num_connected; ++i) {
            if (c->connected[i] == ep) {
                c->connected[i] = c->connected[--c->num_connected];
                break;
            }
        }
    }
    OPAL_THREAD_UNLOCK(&c->lock);
    if (ep->waiting) {
        opal_list_remove_item(&c->pending_endpoints, &ep->super);
        ep->waiting = false;
    }
    while (NULL != (item = opal_list_remove_first(&ep->pending))) {
        mca_btl_sci_frag_t *frag = (mca_btl_sci_frag_t *) item;
        if (frag->base.des_flags & MCA_BTL_DES_FLAGS_BTL_OWNERSHIP) {
            mca_btl_sci_frag_return(frag);
        }
    }
    if (NULL != ep->seq) {
        sci_remove_sequence(ep->seq);
        ep->seq = NULL;
    }
    if (NULL != ep->rdoor) {
        sci_disconnect_segment(ep->rdoor);
        ep->rdoor = NULL;
    }
    if (NULL != ep->rseg) {
        sci_disconnect_segment(ep->rseg);
        ep->rseg = NULL;
    }
    ep->idle_in = ep->idle_out = NULL;
    ep->peer_doorbell = NULL;
    ep->rbase = NULL;
    ep->write_through = false;
    ep->pinned = false;
    ep->state = MCA_BTL_SCI_EP_UNUSED;
}

bool mca_btl_sci_endpoint_flush_pending(mca_btl_sci_endpoint_t *ep)
{
    mca_btl_sci_component_t *c = &mca_btl_sci_component;
    mca_btl_sci_frag_t *frag;
    bool empty;

    OPAL_THREAD_LOCK(&ep->lock);
    while (NULL != (frag = (mca_btl_sci_frag_t *) opal_list_get_first(&ep->pending)) &&
           (opal_list_item_t *) frag != opal_list_get_end(&ep->pending)) {
        void *dst = mca_btl_sci_endpoint_reserve(ep);
        bool am, posted;

        if (NULL == dst) {
            break;
        }
        am = MCA_BTL_SCI_KIND_AM == (frag->tagword >> MCA_BTL_SCI_KIND_SHIFT);
        /* off the list first: once posted, another thread's progress may
         * complete and free it */
        (void) opal_list_remove_first(&ep->pending);
        posted = mca_btl_sci_frag_publish(ep, dst, frag);
        if (!am) {
            /* the BTL's own message (an atomic reply): nobody to call */
            mca_btl_sci_frag_return(frag);
            continue;
        }
        /* the callback runs outside the endpoint lock (an in-place one
         * once the device read the payload) */
        if (!posted) {
            tc_ompi_done_list_push(&c->completed_frags, &frag->base.super.super);
        }
    }
    empty = opal_list_is_empty(&ep->pending);
    OPAL_THREAD_UNLOCK(&ep->lock);
    return empty;
}

void mca_btl_sci_endpoint_defer(mca_btl_sci_endpoint_t *ep, struct mca_btl_sci_frag_t *frag)
{
    mca_btl_sci_component_t *c = &mca_btl_sci_component;

    opal_list_append(&ep->pending, &frag->base.super.super);
    OPAL_THREAD_LOCK(&c->lock);
    if (!ep->waiting) {
        ep->waiting = true;
        opal_list_append(&c->pending_endpoints, &ep->super);
    }
    OPAL_THREAD_UNLOCK(&c->lock);
}

bool mca_btl_sci_endpoint_check_peer(mca_btl_sci_endpoint_t *ep, const char *why)
{
    if (MCA_BTL_SCI_EP_CONNECTED != ep->state) {
        /* still connecting (no sequence yet): progress keeps trying; a
         * failed peer was reported already */
        return MCA_BTL_SCI_EP_FAILED != ep->state;
    }
    switch (sci_check_sequence(ep->seq)) {
    case SCI_ERR_OK:
        return true;
    case SCI_ERR_DISCONNECTED:
        /* it removed its segments: a normal finalize, never an error (a
         * slower peer is still in its final fence) */
        ep->state = MCA_BTL_SCI_EP_FAILED;
        opal_output_verbose(20, mca_btl_sci_component.output, "btl:sci: local rank %d left",
                            ep->peer_rank);
        return false;
    default:
        mca_btl_sci_endpoint_lost(ep, why);
        return false;
    }
}
