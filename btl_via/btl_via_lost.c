/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * btl_via_lost.c: the report of a peer lost for good
 * (docs/fault-tolerance.md, section 1). By then its endpoint is FAILED
 * (sends, puts and gets to it return OPAL_ERR_UNREACH), the sends queued
 * for credit were failed (mca_btl_via_endpoint_fail_locked) and the
 * broken VI flushes every posted descriptor with an error, which
 * progress completes with OPAL_ERR_UNREACH. The report is
 * tc_ompi_peer_lost: fatal without MPI fault tolerance, that peer's
 * failure alone under ULFM; once per peer, however many of its
 * operations saw the loss. Called with no endpoint lock held.
 */

#include "opal_config.h"

#include "tc_atomic.h"
#include "tc_ompi.h"

#include "btl_via.h"
#include "btl_via_endpoint.h"

void mca_btl_via_endpoint_lost(mca_btl_via_endpoint_t *ep, const char *why)
{
    if (!tc_ompi_lost_mark(&ep->lost, false)) {
        return;
    }
    /* whoever saw the loss first may not have failed the endpoint */
    OPAL_THREAD_LOCK(&ep->lock);
    if (MCA_BTL_VIA_EP_FAILED != ep->state) {
        ep->state = MCA_BTL_VIA_EP_FAILED;
        mca_btl_via_endpoint_fail_locked(ep);
    }
    OPAL_THREAD_UNLOCK(&ep->lock);
    (void) tc_ompi_peer_lost(&(tc_ompi_lost_t){"via", "help-mpi-btl-via.txt",
                                               mca_btl_via_component.output, MCA_BTL_VIA_EP_BTL(ep),
                                               ep->dev->module->error_cb},
                             ep->proc, "vpid", (int) ep->vpid, why);
}

void mca_btl_via_endpoint_failed_op(mca_btl_via_endpoint_t *ep)
{
    vipl_vi_error_t why = VIPL_VIERR_NONE;

    if (0 != tc_atomic_load_acquire(&ep->lost) || NULL == ep->vi) {
        return;
    }
    (void) vipl_query_vi(ep->vi, NULL, &why);
    if (VIPL_VIERR_DISCONNECTED == why) {
        return; /* the peer finalized: its VI's end is no loss */
    }
    mca_btl_via_endpoint_lost(ep,
                              VIPL_VIERR_PEER_GONE == why ? "the peer process is gone"
                                                          : "a transfer to the peer failed");
}
