/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * tc_ompi_watch.c: the runtime's word on a process of this job that died
 * (tc_ompi_lost.h). Under Open MPI 5.0's fault tolerance PRRTE tells every
 * process through a PMIx event, which ULFM moves to the MPI thread and
 * acts on from opal_progress; a BTL that waits inside a call for a dead
 * peer (a provider's send queue full for ever) never gets there. This
 * handler runs in PMIx's own thread, ahead of ULFM's, so that the BTL can
 * mark the peer and break such waits at once; then the event goes on to
 * ULFM's handler. Nothing without fault tolerance or on Open MPI 4.1.
 */

#include "opal_config.h"

#include "tc_ompi.h"

#if TC_OMPI_SERIES >= 50

#include <string.h>

#include <pmix.h>

#include "opal/util/proc.h"

static void (*tc_ompi_watch_fn)(uint32_t vpid, void *arg);
static void *tc_ompi_watch_arg;
static size_t tc_ompi_watch_id;
static bool tc_ompi_watching;

static void tc_ompi_watch_event(size_t id, pmix_status_t status, const pmix_proc_t *source,
                                pmix_info_t info[], size_t ninfo, pmix_info_t *results,
                                size_t nresults, pmix_event_notification_cbfunc_fn_t cbfunc,
                                void *cbdata)
{
    (void) id;
    (void) status;
    (void) source;
    (void) results;
    (void) nresults;
    /* the processes the event is about, as ULFM reads them: PMIX_PROC
     * values; only those of this job */
    for (size_t i = 0; i < ninfo && NULL != tc_ompi_watch_fn; ++i) {
        const pmix_proc_t *p = info[i].value.data.proc;

        if (PMIX_PROC != info[i].value.type || NULL == p || PMIX_RANK_WILDCARD == p->rank ||
            PMIX_RANK_VALID < p->rank ||
            0 != strncmp(p->nspace, opal_process_info.myprocid.nspace, PMIX_MAX_NSLEN)) {
            continue;
        }
        tc_ompi_watch_fn((uint32_t) p->rank, tc_ompi_watch_arg);
    }
    /* never the end of the chain: ULFM's handler comes next */
    if (NULL != cbfunc) {
        cbfunc(PMIX_SUCCESS, NULL, 0, NULL, NULL, cbdata);
    }
}

bool tc_ompi_watch_start(void (*fn)(uint32_t vpid, void *arg), void *arg)
{
    pmix_status_t codes[3] = {PMIX_ERR_PROC_TERM_WO_SYNC, PMIX_ERR_PROC_ABORTED_BY_SIG,
                              PMIX_ERR_PROC_ABORTED};
    pmix_info_t info[2];
    pmix_status_t rc;

    if (tc_ompi_watching || NULL == fn || !tc_ompi_ft_enabled()) {
        return tc_ompi_watching;
    }
    tc_ompi_watch_fn = fn;
    tc_ompi_watch_arg = arg;
    /* prepended after ULFM registered its own (prepended too): ours runs
     * first */
    PMIX_INFO_LOAD(&info[0], PMIX_EVENT_HDLR_PREPEND, NULL, PMIX_BOOL);
    PMIX_INFO_LOAD(&info[1], PMIX_EVENT_HDLR_NAME, "ompi-transports-watch", PMIX_STRING);
    /* without a callback the registration blocks and returns the id */
    rc = PMIx_Register_event_handler(codes, 3, info, 2, tc_ompi_watch_event, NULL, NULL);
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_DESTRUCT(&info[1]);
    if (rc < 0) {
        tc_ompi_watch_fn = NULL;
        return false;
    }
    tc_ompi_watch_id = (size_t) rc;
    tc_ompi_watching = true;
    return true;
}

void tc_ompi_watch_stop(void)
{
    if (!tc_ompi_watching) {
        return;
    }
    (void) PMIx_Deregister_event_handler(tc_ompi_watch_id, NULL, NULL);
    tc_ompi_watching = false;
    tc_ompi_watch_fn = NULL;
}

#else /* Open MPI 4.1: no fault tolerance */

bool tc_ompi_watch_start(void (*fn)(uint32_t vpid, void *arg), void *arg)
{
    (void) fn;
    (void) arg;
    return false;
}

void tc_ompi_watch_stop(void)
{
}

#endif
