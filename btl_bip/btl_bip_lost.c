/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * btl_bip_lost.c: a peer lost for good (docs/fault-tolerance.md, section
 * 1). The endpoint fails where the loss is seen, under whatever lock the
 * caller holds; the next progress call completes with OPAL_ERR_UNREACH
 * the sends waiting in its credit FIFO, the medium sends waiting for its
 * ACK and the reads waiting for its data, unposts the receives it was to
 * fill, then reports it (tc_ompi_peer_lost: fatal without MPI fault
 * tolerance, that peer's failure alone under ULFM), holding no lock the
 * send path takes. No credit, ACK or data is waited for from it again.
 * Under fault tolerance the runtime's word that a process died
 * (tc_ompi_watch) fails its endpoint and its device peer from the
 * runtime's thread, so that a send waiting for room gives up at once.
 */

#include "opal_config.h"

#include <stdlib.h>

#include "tc_atomic.h"
#include "tc_ompi.h"

#include "btl_bip.h"
#include "btl_bip_endpoint.h"
#include "btl_bip_frag.h"

void mca_btl_bip_endpoint_lost(mca_btl_bip_endpoint_t *ep, const char *why)
{
    /* a connection that never came up was reported by add_procs */
    if (!tc_ompi_lost_mark(&ep->lost, MCA_BTL_BIP_EP_FAILED == ep->state)) {
        return; /* or already lost: once per peer */
    }
    ep->lost_why = why;
    ep->state = MCA_BTL_BIP_EP_FAILED;
    tc_ompi_lost_owe(&ep->lost);
    tc_atomic_store_release(&mca_btl_bip_component.lost_pending, 1);
}

static void mca_btl_bip_lost_release(mca_btl_base_descriptor_t *des)
{
    mca_btl_bip_frag_return((mca_btl_bip_frag_t *) des);
}

/* a send that will never go: the BTL's own (ACK, credit) is returned */
static void mca_btl_bip_lost_frag(mca_btl_bip_endpoint_t *ep, mca_btl_bip_frag_t *frag)
{
    if (frag->internal) {
        mca_btl_bip_frag_return(frag);
        return;
    }
    tc_ompi_lost_fail_des(&ep->module->super, ep, &frag->base, mca_btl_bip_lost_release);
}

/* the receives at this process that wait for the peer, off both lists */
static void mca_btl_bip_lost_rreqs(mca_btl_bip_endpoint_t *ep)
{
    mca_btl_bip_component_t *c = &mca_btl_bip_component;
    mca_btl_bip_rreq_t *rreq, *next;
    opal_list_t gone;

    OBJ_CONSTRUCT(&gone, opal_list_t);
    OPAL_THREAD_LOCK(&c->lock);
    OPAL_LIST_FOREACH_SAFE(rreq, next, &c->posted, mca_btl_bip_rreq_t)
    {
        if (rreq->ep == ep) {
            if (NULL != ep->peer) {
                bip_peer_recv_unpost(ep->peer, rreq->handle);
            }
            opal_list_remove_item(&c->posted, &rreq->super);
            opal_list_append(&gone, &rreq->super);
        }
    }
    OPAL_LIST_FOREACH_SAFE(rreq, next, &c->recv_fifo, mca_btl_bip_rreq_t)
    {
        if (rreq->ep == ep) {
            opal_list_remove_item(&c->recv_fifo, &rreq->super);
            opal_list_append(&gone, &rreq->super);
        }
    }
    OPAL_THREAD_UNLOCK(&c->lock);
    while (NULL != (rreq = (mca_btl_bip_rreq_t *) opal_list_remove_first(&gone))) {
        if (MCA_BTL_BIP_ACK_MEDIUM == rreq->kind) {
            /* a message that never arrives: nothing to deliver */
            free(rreq->buf);
        } else {
            rreq->cbfunc(&ep->module->super, ep, rreq->buf,
                         (struct mca_btl_base_registration_handle_t *) rreq->local_handle,
                         rreq->cbcontext, rreq->cbdata, TC_OMPI_LOST_STATUS);
        }
        OBJ_RELEASE(rreq);
    }
    OBJ_DESTRUCT(&gone);
}

/* complete, release and report one lost endpoint (progress only) */
static void mca_btl_bip_lost_one(mca_btl_bip_endpoint_t *ep)
{
    mca_btl_bip_component_t *c = &mca_btl_bip_component;
    opal_list_t frags;
    opal_list_item_t *item;
    tc_list_item_t *it;

    OBJ_CONSTRUCT(&frags, opal_list_t);
    OPAL_THREAD_LOCK(&ep->lock);
    /* in order: the credit FIFO's were posted after the REQs awaiting ACK */
    opal_list_join(&frags, opal_list_get_end(&frags), &ep->await_ack);
    while (NULL != (it = tc_credits_drain(&ep->cr))) {
        opal_list_append(&frags, &TC_CONTAINER_OF(it, mca_btl_bip_frag_t, link)->base.super.super);
    }
    OPAL_THREAD_UNLOCK(&ep->lock);
    while (NULL != (item = opal_list_remove_first(&frags))) {
        mca_btl_bip_lost_frag(ep, (mca_btl_bip_frag_t *) item);
    }
    OBJ_DESTRUCT(&frags);
    mca_btl_bip_lost_rreqs(ep);
    (void) tc_ompi_peer_lost(&(tc_ompi_lost_t){"bip", "help-mpi-btl-bip.txt", c->output,
                                               &ep->module->super, ep->module->error_cb},
                             ep->proc, "rank", ep->peer_rank,
                             NULL != ep->lost_why ? ep->lost_why : "the peer is gone");
}

int mca_btl_bip_lost_progress(void)
{
    mca_btl_bip_component_t *c = &mca_btl_bip_component;
    int count = 0;

    if (0 == tc_atomic_swap_acquire(&c->lost_pending, 0)) {
        return 0;
    }
    for (uint32_t i = 0; NULL != c->endpoints && i < c->max_eps; ++i) {
        if (tc_ompi_lost_take(&c->endpoints[i].lost)) {
            mca_btl_bip_lost_one(c->endpoints + i);
            ++count;
        }
    }
    return count;
}

/* the runtime's thread: a process of the job died */
static void mca_btl_bip_lost_watch(uint32_t vpid, void *arg)
{
    mca_btl_bip_component_t *c = &mca_btl_bip_component;
    mca_btl_bip_endpoint_t *ep;

    (void) arg;
    if (NULL == c->endpoints || vpid >= c->nprocs) {
        return;
    }
    ep = c->endpoints + vpid;
    if (MCA_BTL_BIP_EP_CONNECTED != ep->state || NULL == ep->proc) {
        return;
    }
    bip_peer_lost(ep->peer);
    mca_btl_bip_endpoint_lost(ep, "the runtime reports the process dead");
}

void mca_btl_bip_lost_watch_start(void)
{
    (void) tc_ompi_watch_start(mca_btl_bip_lost_watch, NULL);
}

void mca_btl_bip_lost_watch_stop(void)
{
    tc_ompi_watch_stop();
}
