/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * btl_sctp_lost.c: a process of the job died and the user SCTP stack has
 * not said so yet. Until its retransmissions give up (tens of seconds) an
 * association to a dead host looks merely slow, and the runtime ends a job
 * whose host died before that. Under MPI fault tolerance the runtime's
 * event and the end of a TCP connection to the process (tc_ompi_watch)
 * both arrive in another thread: it only flags the process here; the next
 * progress call fails its endpoint (mca_btl_sctp_endpoint_failed: pending
 * fragments completed with OPAL_ERR_UNREACH, the peer reported to the PML
 * as that peer's failure alone), under the component's lock.
 */

#include "opal_config.h"

#include <stdbool.h>
#include <stdlib.h>

#include "opal/util/proc.h"

#include "tc_atomic.h"
#include "tc_ompi.h"

#include "btl_sctp.h"
#include "btl_sctp_endpoint.h"
#include "btl_sctp_lost.h"

/* one flag per process of the job, set by the watcher, taken by progress */
static int32_t *mca_btl_sctp_lost_flags;
static uint32_t mca_btl_sctp_lost_nprocs;
static int32_t mca_btl_sctp_lost_pending;

/* the watcher's thread (the runtime's or the connections'): flags only */
static void mca_btl_sctp_lost_watch(uint32_t vpid, void *arg)
{
    (void) arg;
    if (vpid < mca_btl_sctp_lost_nprocs) {
        tc_atomic_store_release(&mca_btl_sctp_lost_flags[vpid], 1);
        tc_atomic_store_release(&mca_btl_sctp_lost_pending, 1);
    }
}

void mca_btl_sctp_lost_watch_start(void)
{
    uint32_t size = 0;

    bool have;

    if (!tc_ompi_ft_enabled() || OPAL_SUCCESS != tc_ompi_job_size(&size) || 0 == size) {
        return;
    }
    /* the flags exist before the watcher can call (its start orders them) */
    mca_btl_sctp_lock();
    if (NULL == mca_btl_sctp_lost_flags) {
        mca_btl_sctp_lost_flags = calloc(size, sizeof(*mca_btl_sctp_lost_flags));
        mca_btl_sctp_lost_nprocs = NULL != mca_btl_sctp_lost_flags ? size : 0;
    }
    have = NULL != mca_btl_sctp_lost_flags;
    mca_btl_sctp_unlock();
    if (have) {
        /* once: a later call returns at once */
        (void) tc_ompi_watch_start(mca_btl_sctp_lost_watch, NULL);
    }
}

void mca_btl_sctp_lost_watch_stop(void)
{
    /* no call of mca_btl_sctp_lost_watch after this */
    tc_ompi_watch_stop();
    mca_btl_sctp_lock();
    free(mca_btl_sctp_lost_flags);
    mca_btl_sctp_lost_flags = NULL;
    mca_btl_sctp_lost_nprocs = 0;
    mca_btl_sctp_unlock();
}

int mca_btl_sctp_lost_progress(void)
{
    mca_btl_sctp_component_t *c = &mca_btl_sctp_component;
    opal_list_item_t *item;
    int count = 0;

    if (0 == tc_atomic_load_relaxed(&mca_btl_sctp_lost_pending) ||
        0 == tc_atomic_swap_acquire(&mca_btl_sctp_lost_pending, 0) ||
        NULL == mca_btl_sctp_lost_flags) {
        return 0;
    }
    for (item = opal_list_get_first(&c->endpoints); item != opal_list_get_end(&c->endpoints);
         item = opal_list_get_next(item)) {
        mca_btl_sctp_endpoint_t *ep = (mca_btl_sctp_endpoint_t *) item;
        uint32_t vpid;

        if (NULL == ep->proc || ep->proc->proc_name.jobid != OPAL_PROC_MY_NAME.jobid) {
            continue;
        }
        vpid = ep->proc->proc_name.vpid;
        if (vpid < mca_btl_sctp_lost_nprocs &&
            0 != tc_atomic_swap_acquire(&mca_btl_sctp_lost_flags[vpid], 0)) {
            /* reports it (the PML's callback may send to others from
             * inside: the endpoint stays on the list) */
            mca_btl_sctp_endpoint_failed(ep, "the process died (its host's or the runtime's word)");
            ++count;
        }
    }
    return count;
}
