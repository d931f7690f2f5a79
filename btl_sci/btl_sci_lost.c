/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * btl_sci_lost.c: a peer lost for good (docs/fault-tolerance.md, section
 * 1). The endpoint fails where the loss is seen, under whatever lock the
 * caller holds; the next progress call completes what was deferred to it
 * and the atomics waiting for its reply with OPAL_ERR_UNREACH, then
 * reports it (tc_ompi_peer_lost: fatal without MPI fault tolerance, that
 * peer's failure alone under ULFM), holding no lock the send path takes.
 * Its segments stay mapped, inert, until del_procs or finalize. Under
 * fault tolerance the runtime's word that a process died (tc_ompi_watch)
 * fails its endpoints and its ofi node from the runtime's thread, so that
 * a write waiting for room towards it gives up instead of spinning.
 */

#include "opal_config.h"

#include "tc_atomic.h"
#include "tc_ompi.h"

#include "btl_sci.h"
#include "btl_sci_endpoint.h"
#include "btl_sci_frag.h"

void mca_btl_sci_endpoint_lost(mca_btl_sci_endpoint_t *ep, const char *why)
{
    /* a peer that left in order (FAILED without a loss) is no loss */
    if (!tc_ompi_lost_mark(&ep->lost, MCA_BTL_SCI_EP_FAILED == ep->state)) {
        return; /* or already lost: once per peer */
    }
    ep->lost_why = why;
    /* progress drops it from the active list; sends see it at once */
    ep->state = MCA_BTL_SCI_EP_FAILED;
    tc_ompi_lost_owe(&ep->lost);
    tc_atomic_store_release(&mca_btl_sci_component.lost_pending, 1);
}

static void mca_btl_sci_lost_release(mca_btl_base_descriptor_t *des)
{
    mca_btl_sci_frag_return((mca_btl_sci_frag_t *) des);
}

/* complete, release and report one lost endpoint (progress only) */
static void mca_btl_sci_lost_one(mca_btl_sci_endpoint_t *ep)
{
    mca_btl_sci_component_t *c = &mca_btl_sci_component;
    opal_list_t frags;
    opal_list_item_t *item;

    OBJ_CONSTRUCT(&frags, opal_list_t);
    OPAL_THREAD_LOCK(&ep->lock);
    opal_list_join(&frags, opal_list_get_end(&frags), &ep->pending);
    OPAL_THREAD_UNLOCK(&ep->lock);
    OPAL_THREAD_LOCK(&c->lock);
    if (ep->waiting) {
        opal_list_remove_item(&c->pending_endpoints, &ep->super);
        ep->waiting = false;
    }
    OPAL_THREAD_UNLOCK(&c->lock);
    /* the BTL's own messages (atomic replies) have nobody to call */
    while (NULL != (item = opal_list_remove_first(&frags))) {
        mca_btl_sci_frag_t *frag = (mca_btl_sci_frag_t *) item;

        if (MCA_BTL_SCI_KIND_AM != (frag->tagword >> MCA_BTL_SCI_KIND_SHIFT)) {
            mca_btl_sci_frag_return(frag);
            continue;
        }
        tc_ompi_lost_fail_des(&frag->module->super, ep, &frag->base, mca_btl_sci_lost_release);
    }
    OBJ_DESTRUCT(&frags);
    (void) mca_btl_sci_atomic_fail_peer(ep, TC_OMPI_LOST_STATUS);
    (void) tc_ompi_peer_lost(&(tc_ompi_lost_t){"sci", "help-mpi-btl-sci.txt", c->output,
                                               &ep->module->super, ep->module->error_cb},
                             ep->proc, ep->sd == c->osd ? "rank" : "local rank", ep->peer_rank,
                             NULL != ep->lost_why ? ep->lost_why : "the peer is gone");
}

int mca_btl_sci_lost_progress(void)
{
    mca_btl_sci_component_t *c = &mca_btl_sci_component;
    int count = 0;

    if (0 == tc_atomic_swap_acquire(&c->lost_pending, 0)) {
        return 0;
    }
    for (int pass = 0; pass < 2; ++pass) {
        mca_btl_sci_endpoint_t *eps = 0 == pass ? c->endpoints : c->oeps;
        int n = 0 == pass ? c->num_local : c->num_oeps;

        for (int i = 0; NULL != eps && i < n; ++i) {
            if (tc_ompi_lost_take(&eps[i].lost)) {
                mca_btl_sci_lost_one(eps + i);
                ++count;
            }
        }
    }
    return count;
}

/* the runtime's thread: a process of the job died */
static void mca_btl_sci_lost_watch(uint32_t vpid, void *arg)
{
    static const char why[] = "the runtime reports the process dead";
    mca_btl_sci_component_t *c = &mca_btl_sci_component;

    (void) arg;
    if (!c->running) {
        return;
    }
    if (NULL != c->oeps && vpid < (uint32_t) c->num_procs) {
        /* across hosts node ids are vpids */
        sci_node_lost(c->osd, vpid);
        if (MCA_BTL_SCI_EP_UNUSED != c->oeps[vpid].state && NULL != c->oeps[vpid].proc) {
            mca_btl_sci_endpoint_lost(c->oeps + vpid, why);
        }
    }
    for (int i = 0; NULL != c->endpoints && i < c->num_local; ++i) {
        mca_btl_sci_endpoint_t *ep = c->endpoints + i;

        if (MCA_BTL_SCI_EP_UNUSED != ep->state && NULL != ep->proc &&
            ep->proc->proc_name.vpid == vpid) {
            mca_btl_sci_endpoint_lost(ep, why);
        }
    }
}

void mca_btl_sci_lost_watch_start(void)
{
    (void) tc_ompi_watch_start(mca_btl_sci_lost_watch, NULL);
}

void mca_btl_sci_lost_watch_stop(void)
{
    tc_ompi_watch_stop();
}
