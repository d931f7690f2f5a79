/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * osc_hybrid_agg.c: the origin's per-target gathering of requests. Small
 * requests and notices to one target are written one after another into
 * one buffer and leave as one message: when the next does not fit, when a
 * synchronisation call needs them out (it adds its own notice first, so a
 * put and the flush after it are one message), or at the next progress
 * call. One message per round instead of one per request is what makes a
 * put + flush cost one round trip, like a one-frame protocol.
 *
 * Every record is a header, its segments and its payload, padded to 16
 * bytes (docs/osc_hybrid.md, "Wire format"). Called with m->lock held.
 */

#include "ompi_config.h"

#include <stdlib.h>
#include <string.h>

#include "ompi/mca/pml/pml.h"

#include "osc_hybrid.h"

/* Sends what is gathered for target t; op (may be NULL) completes only
 * when the message has left. */
int mca_osc_hybrid_agg_send(mca_osc_hybrid_module_t *m, int t, mca_osc_hybrid_op_t *op)
{
    ompi_request_t *req;
    char *buf = m->agg_buf[t];
    uint32_t len = m->agg_len[t];
    int rc, i;

    if (NULL == buf) {
        return OMPI_SUCCESS;
    }
    m->agg_buf[t] = NULL;
    m->agg_len[t] = 0;
    /* from the end: agg_send_all takes the last entry */
    for (i = m->agg_ndirty - 1; i >= 0; --i) {
        if (m->agg_dirty[i] == t) {
            m->agg_dirty[i] = m->agg_dirty[--m->agg_ndirty];
            break;
        }
    }
    if (0 == len) {
        free(buf);
        return OMPI_SUCCESS;
    }
    if (OPAL_UNLIKELY(mca_osc_hybrid_ft_failed(m, t))) {
        /* never a message to a failed process (osc_hybrid_ft.c) */
        free(buf);
        return TC_OMPI_ERR_PROC_FAILED;
    }
    rc = MCA_PML_CALL(isend(buf, len, MPI_BYTE, t, MCA_OSC_HYBRID_TAG_AM,
                            MCA_PML_BASE_SEND_STANDARD, m->comm, &req));
    if (OMPI_SUCCESS != rc) {
        free(buf);
        return rc;
    }
    rc = mca_osc_hybrid_track(m, req, buf, op, MCA_OSC_HYBRID_PEND_ORIGIN);
    if (OMPI_SUCCESS == rc) {
        m->pend->recycle = (m->agg_cap[t] == (uint32_t) mca_osc_hybrid_component.aggregate_max);
    }
    return rc;
}

/* A sent buffer of the standard size comes back for the next message. */
void mca_osc_hybrid_agg_recycle(mca_osc_hybrid_module_t *m, char *buf)
{
    if (m->agg_nspare < (int) (sizeof(m->agg_spare) / sizeof(m->agg_spare[0]))) {
        m->agg_spare[m->agg_nspare++] = buf;
    } else {
        free(buf);
    }
}

void mca_osc_hybrid_agg_release(mca_osc_hybrid_module_t *m)
{
    int i;

    if (NULL != m->agg_buf) {
        for (i = 0; i < m->size; ++i) {
            free(m->agg_buf[i]);
        }
    }
    while (m->agg_nspare > 0) {
        free(m->agg_spare[--m->agg_nspare]);
    }
    free(m->agg_buf);
    free(m->agg_len);
    free(m->agg_cap);
    free(m->agg_dirty);
}

int mca_osc_hybrid_agg_send_all(mca_osc_hybrid_module_t *m)
{
    int rc = OMPI_SUCCESS;

    while (m->agg_ndirty > 0) {
        int r = mca_osc_hybrid_agg_send(m, m->agg_dirty[m->agg_ndirty - 1], NULL);
        if (OMPI_SUCCESS != r && OMPI_SUCCESS == rc) {
            rc = r;
        }
    }
    return rc;
}

/* Room for a record of len bytes (a multiple of 16) at the end of target
 * t's buffer; what is gathered is sent first when the record does not fit
 * behind it. NULL when out of memory. */
char *mca_osc_hybrid_agg_reserve(mca_osc_hybrid_module_t *m, int t, size_t len)
{
    size_t cap = (size_t) mca_osc_hybrid_component.aggregate_max;
    char *rec;

    if (NULL != m->agg_buf[t] && m->agg_len[t] + len > m->agg_cap[t]) {
        if (OMPI_SUCCESS != mca_osc_hybrid_agg_send(m, t, NULL)) {
            return NULL;
        }
    }
    if (NULL == m->agg_buf[t]) {
        if (cap < len) {
            cap = len;
        }
        if (cap == (size_t) mca_osc_hybrid_component.aggregate_max && m->agg_nspare > 0) {
            m->agg_buf[t] = m->agg_spare[--m->agg_nspare];
        } else if (0 != posix_memalign((void **) &m->agg_buf[t], 16, cap)) {
            m->agg_buf[t] = NULL;
            return NULL;
        }
        m->agg_cap[t] = (uint32_t) cap;
        m->agg_len[t] = 0;
        m->agg_dirty[m->agg_ndirty++] = t;
    }
    rec = m->agg_buf[t] + m->agg_len[t];
    m->agg_len[t] += (uint32_t) len;
    /* the padding goes on the wire: no stale heap bytes in it */
    memset(rec + len - 16, 0, 16);
    return rec;
}

/* A notice of this process's access or exposure epoch (LOCK, UNLOCK,
 * FLUSH, POST, COMPLETE): appended behind the requests gathered for dst,
 * and all of it sent now. */
int mca_osc_hybrid_agg_ctl(mca_osc_hybrid_module_t *m, int dst, int type, int arg)
{
    mca_osc_hybrid_hdr_t *h =
        (mca_osc_hybrid_hdr_t *) mca_osc_hybrid_agg_reserve(m, dst, sizeof(mca_osc_hybrid_hdr_t));

    if (NULL == h) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    memset(h, 0, sizeof(*h));
    h->type = (uint8_t) type;
    h->arg = arg;
    return mca_osc_hybrid_agg_send(m, dst, NULL);
}
