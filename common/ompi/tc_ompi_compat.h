/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * tc_ompi_compat.h: every difference between the Open MPI release series
 * this project builds against, in one place. Components include this
 * header (after opal_config.h) and write the TC_OMPI_* spellings below;
 * no component holds a version conditional of its own.
 *
 *   series  BTL interface  OSC    Debian
 *   4.1     3.1.0          3.0.0  12 (4.1.4)
 *   5.0     3.3.0          3.0.0  13 (5.0.7)
 *
 * What differs, and the spelling to use in a component:
 *
 *   header paths     TC_OMPI_PMIX_H, TC_OMPI_MUTEX_H: #include them
 *                    (opal/mca/pmix/pmix.h became pmix-internal.h,
 *                    opal/threads/mutex.h became opal/mca/threads/mutex.h)
 *   visibility       TC_OMPI_MODULE_DECLSPEC on the component struct
 *                    (OPAL_MODULE_DECLSPEC is gone in 5.0: OPAL_DECLSPEC)
 *   receive callback tc_ompi_deliver(reg, btl, ep, tag, segs, nsegs) hands
 *                    a received active message to the callback registered
 *                    for tag (4.1: (btl, tag, des, cbdata); 5.0:
 *                    (btl, const mca_btl_base_receive_descriptor_t *))
 *   modex            TC_OMPI_MODEX_SEND(rc, TC_OMPI_SCOPE_LOCAL|GLOBAL, ...),
 *                    TC_OMPI_MODEX_RECV(rc, ...), tc_ompi_job_size(&n):
 *                    5.0 takes PMIx's scopes, keys and types and returns
 *                    PMIx status codes; rc is an OPAL_* code in both;
 *                    tc_ompi_publish_string / tc_ompi_fetch_string: a
 *                    string one process puts and commits at once and the
 *                    others fetch before the job's modex exchange
 *   AM tag           TC_OMPI_BTL_TAG_SM (MCA_BTL_TAG_VADER in 4.1,
 *                    MCA_BTL_TAG_SM in 5.0; the shared-memory BTL's tag)
 *   BTL flags        TC_OMPI_BTL_FLAGS_PUT_AM, _GET_AM, _ATOMIC_AM_FOP,
 *                    _RDMA_REMOTE_COMPLETION: 5.0's flags, 0 in 4.1 so
 *                    that a component may always OR them in. Set
 *                    RDMA_REMOTE_COMPLETION only where a completed put is
 *                    visible at the target (5.0's osc/rdma uses a BTL
 *                    natively only with it, and emulates RDMA with active
 *                    messages otherwise)
 *   MPI_Info values  tc_ompi_info_get(info, key, buf, len, &flag) copies
 *                    a value out (5.0's opal_info_get returns an
 *                    opal_cstring_t, 4.1's fills a caller's buffer)
 *   OPAL init        tc_ompi_init_util(&argc, &argv) for a program without
 *                    MPI (unit tests): 5.0's opal_init_util leaves the
 *                    datatype engine (convertors) uninitialised
 *   session tmpdir   TC_OMPI_TMPDIR_PARAM: the MCA parameter that moves
 *                    the session directories ("orte_tmpdir_base" in 4.1,
 *                    "prte_tmpdir_base" in 5.0, where mpirun is prte's);
 *                    scripts read it from tests/lib/transports.sh
 *   osc/rdma         TC_OMPI_OSC_RDMA_EMULATES: 1 where osc/rdma serves a
 *                    window whose BTLs lack native RDMA and atomics by
 *                    emulating them with active messages (5.0), 0 where it
 *                    declines such a window (4.1); osc/pt2pt is gone in 5.0
 *   fault tolerance  TC_OMPI_FT_MPI: 1 where the MPI layer has ULFM (5.0
 *                    built with it, as Debian's: ompi_ftmpi_enabled,
 *                    ompi_comm_is_proc_active), 0 in 4.1;
 *                    TC_OMPI_ERR_PROC_FAILED: what an operation on a failed
 *                    peer returns (MPI_ERR_PROC_FAILED, or OMPI_ERR_UNREACH
 *                    without ULFM). A BTL asks tc_ompi_ft_enabled() instead
 *                    (the MCA variable, same on both series)
 *
 * TC_OMPI_SERIES is 41 or 50 for what cannot be spelled the same way (use
 * it here, not in a component). Component directories differ too (5.0:
 * .../openmpi/lib/openmpi40), but configure asks ompi_info for it.
 */
#ifndef TC_OMPI_COMPAT_H
#define TC_OMPI_COMPAT_H

#include "opal_config.h"

#include <stdlib.h>
#include <string.h>

#if OPAL_MAJOR_VERSION == 4 && OPAL_MINOR_VERSION == 1
#define TC_OMPI_SERIES 41
#elif OPAL_MAJOR_VERSION == 5 && OPAL_MINOR_VERSION == 0
#define TC_OMPI_SERIES 50
#else
#error "ompi-transports supports Open MPI 4.1.x and 5.0.x only"
#endif

/* ---- header paths: #include TC_OMPI_PMIX_H ---- */
#if TC_OMPI_SERIES >= 50
#define TC_OMPI_PMIX_H "opal/mca/pmix/pmix-internal.h"
#define TC_OMPI_MUTEX_H "opal/mca/threads/mutex.h"
#else
#define TC_OMPI_PMIX_H "opal/mca/pmix/pmix.h"
#define TC_OMPI_MUTEX_H "opal/threads/mutex.h"
#endif

#include "opal/datatype/opal_datatype.h"
#include "opal/mca/btl/btl.h"
#include "opal/runtime/opal.h"
#if TC_OMPI_SERIES >= 50
#include "opal/mca/accelerator/base/base.h"
#endif
#include "opal/util/info.h"
#include TC_OMPI_PMIX_H

/* ---- visibility of the component structure (what Open MPI dlsym()s) ---- */
#if TC_OMPI_SERIES >= 50
#define TC_OMPI_MODULE_DECLSPEC OPAL_DECLSPEC
#else
#define TC_OMPI_MODULE_DECLSPEC OPAL_MODULE_DECLSPEC
#endif

/* ---- active-message tags and the BTL flags new in 5.0 ---- */
#if TC_OMPI_SERIES >= 50
#define TC_OMPI_BTL_TAG_SM MCA_BTL_TAG_SM
#define TC_OMPI_BTL_FLAGS_PUT_AM MCA_BTL_FLAGS_PUT_AM
#define TC_OMPI_BTL_FLAGS_GET_AM MCA_BTL_FLAGS_GET_AM
#define TC_OMPI_BTL_FLAGS_ATOMIC_AM_FOP MCA_BTL_FLAGS_ATOMIC_AM_FOP
#define TC_OMPI_BTL_FLAGS_RDMA_REMOTE_COMPLETION MCA_BTL_FLAGS_RDMA_REMOTE_COMPLETION
#else
#define TC_OMPI_BTL_TAG_SM MCA_BTL_TAG_VADER
#define TC_OMPI_BTL_FLAGS_PUT_AM 0
#define TC_OMPI_BTL_FLAGS_GET_AM 0
#define TC_OMPI_BTL_FLAGS_ATOMIC_AM_FOP 0
#define TC_OMPI_BTL_FLAGS_RDMA_REMOTE_COMPLETION 0
#endif

/* ---- osc/rdma without a native RDMA BTL: emulation (5.0) or no window (4.1) ---- */
#if TC_OMPI_SERIES >= 50
#define TC_OMPI_OSC_RDMA_EMULATES 1
#else
#define TC_OMPI_OSC_RDMA_EMULATES 0
#endif

/* ---- MPI fault tolerance in the MPI layer (osc components) ---- */
#if TC_OMPI_SERIES >= 50 && defined(OPAL_ENABLE_FT_MPI) && OPAL_ENABLE_FT_MPI
#define TC_OMPI_FT_MPI 1
#define TC_OMPI_ERR_PROC_FAILED MPI_ERR_PROC_FAILED
#else
#define TC_OMPI_FT_MPI 0
#define TC_OMPI_ERR_PROC_FAILED OMPI_ERR_UNREACH
#endif

/* ---- the session directory parameter (its name, for messages and tests) ---- */
#if TC_OMPI_SERIES >= 50
#define TC_OMPI_TMPDIR_PARAM "prte_tmpdir_base"
#else
#define TC_OMPI_TMPDIR_PARAM "orte_tmpdir_base"
#endif

/* ---- receive callback ---- */

/* Hands one received active message (segs, nsegs) with tag to the
 * callback reg registered for it (reg = mca_btl_base_active_message_trigger
 * + tag, its cbfunc checked by the caller). ep may be NULL where the
 * endpoint is not at hand. The segments are only valid during the call. */
static inline void tc_ompi_deliver(const mca_btl_active_message_callback_t *reg,
                                   mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *ep,
                                   mca_btl_base_tag_t tag, mca_btl_base_segment_t *segs,
                                   size_t nsegs)
{
#if TC_OMPI_SERIES >= 50
    mca_btl_base_receive_descriptor_t desc = {
        .endpoint = ep,
        .des_segments = segs,
        .des_segment_count = nsegs,
        .tag = tag,
        .cbdata = reg->cbdata,
    };

    reg->cbfunc(btl, &desc);
#else
    mca_btl_base_descriptor_t desc;

    (void) ep;
    memset(&desc, 0, sizeof(desc));
    desc.des_segments = segs;
    desc.des_segment_count = nsegs;
    reg->cbfunc(btl, tag, &desc, reg->cbdata);
#endif
}

/* ---- modex ---- */

/* Scopes of a modex entry: this node only, or every process of the job. */
#if TC_OMPI_SERIES >= 50
#define TC_OMPI_SCOPE_LOCAL PMIX_LOCAL
#define TC_OMPI_SCOPE_GLOBAL PMIX_GLOBAL
/* PMIx status (5.0) -> OPAL_* code; success is 0 in both */
#define TC_OMPI_MODEX_RC(r) ((r) = (0 == (r)) ? OPAL_SUCCESS : opal_pmix_convert_status(r))
#else
#define TC_OMPI_SCOPE_LOCAL OPAL_PMIX_LOCAL
#define TC_OMPI_SCOPE_GLOBAL OPAL_PMIX_GLOBAL
#define TC_OMPI_MODEX_RC(r) ((void) 0)
#endif

/* Publishes size bytes at data under the component's name (version:
 * &component->btl_version or the like); rc gets an OPAL_* code. */
#define TC_OMPI_MODEX_SEND(rc, scope, version, data, size)         \
    do {                                                           \
        OPAL_MODEX_SEND((rc), (scope), (version), (data), (size)); \
        TC_OMPI_MODEX_RC(rc);                                      \
    } while (0)

/* Reads what the process proc_name published under the component's
 * name into a malloc()ed *datap of *sizep bytes; rc gets an OPAL_* code. */
#define TC_OMPI_MODEX_RECV(rc, version, proc_name, datap, sizep)         \
    do {                                                                 \
        OPAL_MODEX_RECV((rc), (version), (proc_name), (datap), (sizep)); \
        TC_OMPI_MODEX_RC(rc);                                            \
    } while (0)

/* The number of processes in this job; OPAL_SUCCESS or an OPAL_* error. */
static inline int tc_ompi_job_size(uint32_t *size)
{
    opal_process_name_t wildcard;
    uint32_t *ptr = size;
    int rc;

    wildcard.jobid = OPAL_PROC_MY_NAME.jobid;
    wildcard.vpid = OPAL_VPID_WILDCARD;
#if TC_OMPI_SERIES >= 50
    OPAL_MODEX_RECV_VALUE(rc, PMIX_JOB_SIZE, &wildcard, &ptr, PMIX_UINT32);
#else
    OPAL_MODEX_RECV_VALUE(rc, OPAL_PMIX_JOB_SIZE, &wildcard, &ptr, OPAL_UINT32);
#endif
    TC_OMPI_MODEX_RC(rc);
    return rc;
}

/* Publishes a string under key to every process of the job and commits
 * it at once, so that a process can fetch it before the job's modex
 * exchange (tc_ompi_fetch_string). OPAL_SUCCESS or an OPAL_* error. */
static inline int tc_ompi_publish_string(const char *key, const char *value)
{
    int rc;
#if TC_OMPI_SERIES >= 50
    pmix_value_t val;

    PMIX_VALUE_CONSTRUCT(&val);
    val.type = PMIX_STRING;
    val.data.string = (char *) value;
    rc = PMIx_Put(PMIX_GLOBAL, key, &val);
    if (PMIX_SUCCESS == rc) {
        rc = PMIx_Commit();
    }
    TC_OMPI_MODEX_RC(rc);
#else
    opal_value_t kv;

    OBJ_CONSTRUCT(&kv, opal_value_t);
    kv.key = strdup(key);
    kv.type = OPAL_STRING;
    kv.data.string = strdup(value);
    rc = opal_pmix.put(OPAL_PMIX_GLOBAL, &kv);
    OBJ_DESTRUCT(&kv);
    if (OPAL_SUCCESS == rc) {
        rc = opal_pmix.commit();
    }
#endif
    return rc;
}

/* Fetches the string that process vpid of this job published under key
 * (tc_ompi_publish_string), waiting until it did: a malloc()ed *value.
 * OPAL_SUCCESS or an OPAL_* error. */
static inline int tc_ompi_fetch_string(uint32_t vpid, const char *key, char **value)
{
    int rc;
#if TC_OMPI_SERIES >= 50
    pmix_value_t *val = NULL;
    pmix_proc_t proc;

    PMIX_LOAD_PROCID(&proc, opal_process_info.myprocid.nspace, vpid);
    rc = PMIx_Get(&proc, key, NULL, 0, &val);
    if (PMIX_SUCCESS == rc && NULL != val) {
        *value =
            PMIX_STRING == val->type && NULL != val->data.string ? strdup(val->data.string) : NULL;
        PMIX_VALUE_RELEASE(val);
        rc = NULL == *value ? PMIX_ERR_BAD_PARAM : PMIX_SUCCESS;
    }
    TC_OMPI_MODEX_RC(rc);
#else
    opal_process_name_t proc;
    opal_value_t *kv = NULL;

    proc.jobid = OPAL_PROC_MY_NAME.jobid;
    proc.vpid = vpid;
    /* no info: not PMIX_OPTIONAL, so the server fetches it from the
     * publisher's host, waiting for its commit */
    rc = opal_pmix.get(&proc, key, NULL, &kv);
    if (OPAL_SUCCESS == rc && NULL != kv) {
        *value =
            OPAL_STRING == kv->type && NULL != kv->data.string ? strdup(kv->data.string) : NULL;
        OBJ_RELEASE(kv);
        rc = NULL == *value ? OPAL_ERR_BAD_PARAM : OPAL_SUCCESS;
    } else if (OPAL_SUCCESS == rc) {
        rc = OPAL_ERR_NOT_FOUND;
    }
#endif
    return rc;
}

/* Publishes a string under key for the jobs this process starts with
 * MPI_Comm_spawn (tc_ompi_parent_fetch_string reads it there). 5.0: as
 * tc_ompi_publish_string (a spawned job reads its parent's namespace);
 * 4.1: the runtime's name service, under "KEY.JOBID.VPID" (a spawned job
 * cannot read the parent job's keys before it is connected to it). */
static inline int tc_ompi_publish_for_children(const char *key, const char *value)
{
#if TC_OMPI_SERIES >= 50
    return tc_ompi_publish_string(key, value);
#else
    opal_list_t info;
    opal_value_t *kv;
    int rc;

    if (NULL == opal_pmix.publish) {
        return OPAL_ERR_NOT_SUPPORTED;
    }
    OBJ_CONSTRUCT(&info, opal_list_t);
    kv = OBJ_NEW(opal_value_t);
    if (NULL == kv ||
        0 > asprintf(&kv->key, "%s.%lu.%lu", key, (unsigned long) OPAL_PROC_MY_NAME.jobid,
                     (unsigned long) OPAL_PROC_MY_NAME.vpid)) {
        if (NULL != kv) {
            kv->key = NULL;
            OBJ_RELEASE(kv);
        }
        OBJ_DESTRUCT(&info);
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    kv->type = OPAL_STRING;
    kv->data.string = strdup(value);
    opal_list_append(&info, &kv->super);
    rc = NULL == kv->data.string ? OPAL_ERR_OUT_OF_RESOURCE : opal_pmix.publish(&info);
    OPAL_LIST_DESTRUCT(&info);
    return rc;
#endif
}

/* Fetches the string that the process which started this job with
 * MPI_Comm_spawn (its parent: ULFM's respawn too) published under key
 * (tc_ompi_publish_string), waiting at most timeout_s seconds: a
 * malloc()ed *value. OPAL_ERR_NOT_FOUND when this job has no parent or
 * the parent published nothing under key; another OPAL_* error else.
 * Published with tc_ompi_publish_for_children. 5.0: PMIX_PARENT_ID of
 * this process; 4.1: the parent's name at the front of OMPI_PARENT_PORT
 * ("JOBID.VPID:TAG", set by the runtime), looked up in the name service. */
static inline int tc_ompi_parent_fetch_string(const char *key, int timeout_s, char **value)
{
    int rc;
#if TC_OMPI_SERIES >= 50
    pmix_value_t *val = NULL;
    pmix_proc_t me, parent;
    pmix_info_t info;

    PMIX_LOAD_PROCID(&me, opal_process_info.myprocid.nspace, opal_process_info.myprocid.rank);
    rc = PMIx_Get(&me, PMIX_PARENT_ID, NULL, 0, &val);
    if (PMIX_SUCCESS != rc || NULL == val || PMIX_PROC != val->type || NULL == val->data.proc) {
        if (NULL != val) {
            PMIX_VALUE_RELEASE(val);
        }
        return OPAL_ERR_NOT_FOUND;
    }
    PMIX_LOAD_PROCID(&parent, val->data.proc->nspace, val->data.proc->rank);
    PMIX_VALUE_RELEASE(val);
    val = NULL;
    PMIX_INFO_LOAD(&info, PMIX_TIMEOUT, &timeout_s, PMIX_INT);
    rc = PMIx_Get(&parent, key, &info, 1, &val);
    PMIX_INFO_DESTRUCT(&info);
    if (PMIX_SUCCESS == rc && NULL != val) {
        *value =
            PMIX_STRING == val->type && NULL != val->data.string ? strdup(val->data.string) : NULL;
        PMIX_VALUE_RELEASE(val);
        rc = NULL == *value ? PMIX_ERR_BAD_PARAM : PMIX_SUCCESS;
    }
    TC_OMPI_MODEX_RC(rc);
    if (OPAL_SUCCESS != rc && OPAL_ERR_BAD_PARAM != rc) {
        rc = OPAL_ERR_NOT_FOUND;
    }
#else
    const char *port = getenv("OMPI_PARENT_PORT");
    opal_pmix_pdata_t *pd;
    opal_list_t data, info;
    unsigned long jobid, vpid;
    char *end;

    (void) timeout_s; /* published before the spawn: nothing to wait for */
    if (NULL == port || NULL == opal_pmix.lookup) {
        return OPAL_ERR_NOT_FOUND;
    }
    if ('"' == *port) {
        port++;
    }
    jobid = strtoul(port, &end, 10);
    if (end == port || '.' != *end || jobid > UINT32_MAX) {
        return OPAL_ERR_NOT_FOUND;
    }
    port = end + 1;
    vpid = strtoul(port, &end, 10);
    if (end == port || ':' != *end || vpid > UINT32_MAX) {
        return OPAL_ERR_NOT_FOUND;
    }
    OBJ_CONSTRUCT(&data, opal_list_t);
    OBJ_CONSTRUCT(&info, opal_list_t);
    pd = OBJ_NEW(opal_pmix_pdata_t);
    if (NULL == pd || 0 > asprintf(&pd->value.key, "%s.%lu.%lu", key, jobid, vpid)) {
        if (NULL != pd) {
            pd->value.key = NULL;
            OBJ_RELEASE(pd);
        }
        OBJ_DESTRUCT(&info);
        OBJ_DESTRUCT(&data);
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    opal_list_append(&data, &pd->super);
    rc = opal_pmix.lookup(&data, &info);
    if (OPAL_SUCCESS == rc && OPAL_STRING == pd->value.type && NULL != pd->value.data.string) {
        *value = strdup(pd->value.data.string);
        rc = NULL == *value ? OPAL_ERR_OUT_OF_RESOURCE : OPAL_SUCCESS;
    } else {
        rc = OPAL_ERR_NOT_FOUND;
    }
    OPAL_LIST_DESTRUCT(&data);
    OBJ_DESTRUCT(&info);
#endif
    return rc;
}

/* End every process of this job now, with status (a setup failure whose
 * reason was already printed); returns only if the runtime did not. */
static inline void tc_ompi_abort_job(int status)
{
#if TC_OMPI_SERIES >= 50
    (void) PMIx_Abort(status, NULL, NULL, 0);
#else
    if (NULL != opal_pmix.abort) {
        (void) opal_pmix.abort(status, NULL, NULL);
    }
#endif
}

/* ---- MPI_Info ---- */

/* Copies the value of key in info into buf (len bytes, always
 * terminated); *flag says whether the key is there. OPAL_SUCCESS or an
 * OPAL_* error. */
static inline int tc_ompi_info_get(opal_info_t *info, const char *key, char *buf, size_t len,
                                   int *flag)
{
    int rc;

#if TC_OMPI_SERIES >= 50
    opal_cstring_t *value = NULL;

    rc = opal_info_get(info, key, &value, flag);
    if (OPAL_SUCCESS == rc && *flag && NULL != value && len > 0) {
        size_t n = value->length < len - 1 ? value->length : len - 1;

        memcpy(buf, value->string, n);
        buf[n] = '\0';
    }
    if (NULL != value) {
        OBJ_RELEASE(value);
    }
#else
    if (0 == len) {
        return OPAL_ERR_BAD_PARAM;
    }
    rc = opal_info_get(info, key, (int) len - 1, buf, flag);
    buf[len - 1] = '\0';
#endif
    return rc;
}

/* ---- OPAL outside MPI (unit tests) ---- */

/* opal_init_util plus the datatype engine, which 4.1's opal_init_util
 * starts and 5.0's leaves to the full opal_init (with the accelerator
 * framework the convertor needs). */
static inline int tc_ompi_init_util(int *argc, char ***argv)
{
    int rc = opal_init_util(argc, argv);

#if TC_OMPI_SERIES >= 50
    /* the convertor asks the accelerator framework about every buffer */
    if (OPAL_SUCCESS == rc) {
        rc = mca_base_framework_open(&opal_accelerator_base_framework, 0);
    }
    if (OPAL_SUCCESS == rc) {
        rc = opal_accelerator_base_select();
    }
    if (OPAL_SUCCESS == rc) {
        rc = opal_datatype_init();
    }
#endif
    return rc;
}

#endif /* TC_OMPI_COMPAT_H */
