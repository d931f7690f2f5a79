/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * tc_ompi_watch.c: word that a process of this job died, from the runtime
 * and from the connections of tc_peerwatch (tc_ompi_lost.h).
 *
 * Under Open MPI 5.0's fault tolerance PRRTE tells every process through a
 * PMIx event, which ULFM moves to the MPI thread and acts on from
 * opal_progress; a BTL that waits inside a call for a dead peer (a
 * provider's send queue full for ever) never gets there. Our handler runs
 * in PMIx's own thread, ahead of ULFM's, so that the BTL can mark the peer
 * and break such waits at once; then the event goes on to ULFM's handler.
 *
 * When a whole host dies PRRTE sends no such event: it ends the job about
 * 0.4 s after losing that host's daemon. A BTL whose provider hides a
 * peer's death would learn nothing in time, so each process also keeps a
 * TCP connection to every process on another host (tc_peerwatch): its end
 * without a goodbye is that process's death, handed to the same function
 * from the watcher's thread. The text published with each process's
 * address carries its listener's secret: only the job's processes can
 * read it, and a connection counts only once it has shown it. Off with <component>_ft_peerwatch false.
 * Nothing without fault tolerance or on Open MPI 4.1.
 */

#include "opal_config.h"

#include "tc_ompi.h"
#include "tc_peerwatch.h"

static bool tc_ompi_peerwatch_on = true;

int tc_ompi_watch_register(const mca_base_component_t *comp)
{
    return tc_ompi_param_bool(
        comp, "ft_peerwatch",
        "Under MPI fault tolerance (mpirun --with-ft ulfm, Open MPI 5.0): learn that a process "
        "on another host died from the end of a TCP connection to it (each process listens on "
        "one TCP port, counting only connections that show its secret from the job's modex, "
        "and keeps one thread and two descriptors per process on another host; nothing on "
        "the data path). Needed when a whole host dies: the runtime then ends the "
        "job without telling the survivors first. false: the runtime's word alone. No effect "
        "without fault tolerance",
        OPAL_INFO_LVL_6, &tc_ompi_peerwatch_on, true);
}

#if TC_OMPI_SERIES >= 50

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <pmix.h>

#include "opal/util/proc.h"

/* each component links its own copy of this file: one watcher each */
static pthread_mutex_t tc_ompi_watch_lock = PTHREAD_MUTEX_INITIALIZER;
static void (*tc_ompi_watch_fn)(uint32_t vpid, void *arg);
static void *tc_ompi_watch_arg;
static size_t tc_ompi_watch_id;
static bool tc_ompi_watching;
static tc_peerwatch_t *tc_ompi_peerwatch;
static char tc_ompi_peerwatch_key[96];

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

void tc_ompi_watch_publish(const mca_base_component_t *comp)
{
    char addr[TC_PEERWATCH_ADDR_MAX];

    pthread_mutex_lock(&tc_ompi_watch_lock);
    if (NULL == tc_ompi_peerwatch && tc_ompi_peerwatch_on && tc_ompi_ft_enabled()) {
        (void) snprintf(tc_ompi_peerwatch_key, sizeof(tc_ompi_peerwatch_key),
                        "ompi-transports.peerwatch.%s", comp->mca_component_name);
        /* before the job's modex exchange, which carries it to everyone */
        if (0 == tc_peerwatch_open(&tc_ompi_peerwatch, addr, sizeof(addr)) &&
            OPAL_SUCCESS != tc_ompi_publish_string(tc_ompi_peerwatch_key, addr)) {
            tc_peerwatch_close(tc_ompi_peerwatch);
            tc_ompi_peerwatch = NULL;
        }
    }
    pthread_mutex_unlock(&tc_ompi_watch_lock);
}

/* the watcher's thread: what process vpid published (already here after
 * the modex exchange; a bounded wait otherwise) */
static int tc_ompi_watch_lookup(uint32_t vpid, char **text, void *arg)
{
    pmix_value_t *val = NULL;
    pmix_info_t info;
    pmix_proc_t proc;
    int timeout = 10;
    pmix_status_t rc;

    (void) arg;
    *text = NULL;
    PMIX_LOAD_PROCID(&proc, opal_process_info.myprocid.nspace, vpid);
    PMIX_INFO_LOAD(&info, PMIX_TIMEOUT, &timeout, PMIX_INT);
    rc = PMIx_Get(&proc, tc_ompi_peerwatch_key, &info, 1, &val);
    PMIX_INFO_DESTRUCT(&info);
    if (PMIX_SUCCESS == rc && NULL != val && PMIX_STRING == val->type && NULL != val->data.string) {
        *text = strndup(val->data.string, TC_PEERWATCH_ADDR_MAX);
    }
    if (NULL != val) {
        PMIX_VALUE_RELEASE(val);
    }
    return NULL == *text ? -1 : 0;
}

static void tc_ompi_watch_dead(uint32_t vpid, void *arg)
{
    (void) arg;
    tc_ompi_watch_fn(vpid, tc_ompi_watch_arg);
}

/* every process of the job on another host; false when there is none to
 * watch or not descriptors enough for two each */
static bool tc_ompi_watch_remote(uint32_t **ids, size_t *n)
{
    opal_process_name_t name = OPAL_PROC_MY_NAME;
    struct rlimit lim;
    uint32_t size = 0;

    *ids = NULL;
    *n = 0;
    if (OPAL_SUCCESS != tc_ompi_job_size(&size) || size < 2) {
        return false;
    }
    *ids = malloc(size * sizeof(**ids));
    if (NULL == *ids) {
        return false;
    }
    for (uint32_t v = 0; v < size; ++v) {
        opal_proc_t *proc;

        if (v == OPAL_PROC_MY_NAME.vpid) {
            continue;
        }
        name.vpid = v;
        proc = opal_proc_for_name(name);
        if (NULL == proc || !OPAL_PROC_ON_LOCAL_NODE(proc->proc_flags)) {
            (*ids)[(*n)++] = v;
        }
    }
    if (0 == *n ||
        (0 == getrlimit(RLIMIT_NOFILE, &lim) && RLIM_INFINITY != lim.rlim_cur &&
         2 * (rlim_t) *n + 256 > lim.rlim_cur)) {
        free(*ids);
        *ids = NULL;
        return false;
    }
    return true;
}

bool tc_ompi_watch_start(void (*fn)(uint32_t vpid, void *arg), void *arg)
{
    pmix_status_t codes[3] = {PMIX_ERR_PROC_TERM_WO_SYNC, PMIX_ERR_PROC_ABORTED_BY_SIG,
                              PMIX_ERR_PROC_ABORTED};
    pmix_info_t info[2];
    pmix_status_t rc;
    uint32_t *ids;
    size_t n;

    pthread_mutex_lock(&tc_ompi_watch_lock);
    if (tc_ompi_watching || NULL == fn || !tc_ompi_ft_enabled()) {
        pthread_mutex_unlock(&tc_ompi_watch_lock);
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
        pthread_mutex_unlock(&tc_ompi_watch_lock);
        return false;
    }
    tc_ompi_watch_id = (size_t) rc;
    tc_ompi_watching = true;
    if (NULL != tc_ompi_peerwatch) {
        if (!tc_ompi_watch_remote(&ids, &n) ||
            0 !=
                tc_peerwatch_start(tc_ompi_peerwatch, ids, n, tc_ompi_watch_lookup,
                                   tc_ompi_watch_dead, NULL, 2000)) {
            /* the runtime's word alone */
            tc_peerwatch_close(tc_ompi_peerwatch);
            tc_ompi_peerwatch = NULL;
        }
        free(ids);
    }
    pthread_mutex_unlock(&tc_ompi_watch_lock);
    return true;
}

void tc_ompi_watch_stop(void)
{
    pthread_mutex_lock(&tc_ompi_watch_lock);
    /* joins the watcher's thread: no call of fn after this */
    tc_peerwatch_close(tc_ompi_peerwatch);
    tc_ompi_peerwatch = NULL;
    if (tc_ompi_watching) {
        (void) PMIx_Deregister_event_handler(tc_ompi_watch_id, NULL, NULL);
        tc_ompi_watching = false;
        tc_ompi_watch_fn = NULL;
    }
    pthread_mutex_unlock(&tc_ompi_watch_lock);
}

#else /* Open MPI 4.1: no fault tolerance */

void tc_ompi_watch_publish(const mca_base_component_t *comp)
{
    (void) comp;
}

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
