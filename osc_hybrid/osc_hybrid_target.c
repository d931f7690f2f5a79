/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * osc_hybrid_target.c: the target side of osc/hybrid: checks and applies
 * each arrived active message to the window (put, get, accumulate,
 * get_accumulate, compare_and_swap), keeps the passive-target lock, answers
 * flushes and counts PSCW notices. Also the bookkeeping of internal
 * requests shared with the origin side. Everything here runs with the
 * module's lock held.
 */

#include "ompi_config.h"

#include <stdlib.h>
#include <string.h>

#include "opal/datatype/opal_convertor.h"
#include "opal/runtime/opal_progress.h"
#include "opal/util/show_help.h"
#include "ompi/mca/pml/pml.h"
#include "ompi/runtime/mpiruntime.h"

#include "osc_hybrid.h"

int mca_osc_hybrid_track(mca_osc_hybrid_module_t *m, ompi_request_t *req, void *freebuf,
                         mca_osc_hybrid_op_t *op, int kind)
{
    mca_osc_hybrid_pend_t *p = calloc(1, sizeof(*p));

    if (NULL == p) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    p->req = req;
    p->freebuf = freebuf;
    p->op = op;
    p->kind = kind;
    if (NULL != op) {
        op->refs++;
    }
    if (MCA_OSC_HYBRID_PEND_ORIGIN == kind) {
        m->origin_pending++;
    } else if (MCA_OSC_HYBRID_PEND_TDATA == kind) {
        m->tdata_pending++;
    }
    p->next = m->pend;
    m->pend = p;
    return OMPI_SUCCESS;
}

void mca_osc_hybrid_op_release(mca_osc_hybrid_module_t *m, mca_osc_hybrid_op_t *op)
{
    (void) m;
    if (--op->refs > 0) {
        return;
    }
    if (NULL != op->tmp && NULL != op->res_dt && MPI_SUCCESS == op->err) {
        /* the result came in pieces: unpack the whole packed stream once */
        opal_convertor_t conv;
        struct iovec iov = {.iov_base = op->tmp, .iov_len = op->tmp_len};
        uint32_t iov_count = 1;
        size_t max_data = op->tmp_len;

        OBJ_CONSTRUCT(&conv, opal_convertor_t);
        opal_convertor_copy_and_prepare_for_recv(ompi_mpi_local_convertor, &op->res_dt->super,
                                                 op->res_count, op->res_addr, 0, &conv);
        opal_convertor_unpack(&conv, &iov, &iov_count, &max_data);
        OBJ_DESTRUCT(&conv);
    }
    if (NULL != op->res_dt) {
        OBJ_RELEASE(op->res_dt);
    }
    free(op->tmp);
    if (NULL != op->ureq) {
        op->ureq->req_status.MPI_ERROR = op->err;
        ompi_request_complete(op->ureq, true);
    }
    free(op);
}

void mca_osc_hybrid_complete_pend(mca_osc_hybrid_module_t *m, mca_osc_hybrid_pend_t *p)
{
    /* cancelled because its peer failed: the operation failed */
    int err = p->lost ? TC_OMPI_ERR_PROC_FAILED : p->req->req_status.MPI_ERROR;

    if (MPI_SUCCESS != err && 0 == m->error) {
        m->error = err;
    }
    if (MPI_SUCCESS != err && NULL != p->op && MPI_SUCCESS == p->op->err) {
        p->op->err = err;
    }
    switch (p->kind) {
    case MCA_OSC_HYBRID_PEND_ORIGIN:
        m->origin_pending--;
        break;
    case MCA_OSC_HYBRID_PEND_WSEND:
        m->wsend_pending--;
        m->wsend_out[p->peer]--;
        break;
    case MCA_OSC_HYBRID_PEND_TDATA:
        if (NULL != p->segs && NULL != p->dest && MPI_SUCCESS == err) {
            size_t pos = 0;
            uint32_t i;
            for (i = 0; i < p->nseg; ++i) {
                memcpy(p->dest + p->segs[i].off, (char *) p->freebuf + pos, p->segs[i].len);
                pos += p->segs[i].len;
            }
        }
        free(p->segs);
        m->tdata_pending--;
        m->ops_done++;
        break;
    default:
        break;
    }
    if (NULL != p->op) {
        mca_osc_hybrid_op_release(m, p->op);
        p->op = NULL;
    }
    if (mca_osc_hybrid_ft_park(m, p)) {
        return; /* request and buffer freed once the PML is done with them */
    }
    ompi_request_free(&p->req);
    if (p->recycle) {
        mca_osc_hybrid_agg_recycle(m, p->freebuf);
    } else {
        free(p->freebuf);
    }
    free(p);
}

void mca_osc_hybrid_complete_finished(mca_osc_hybrid_module_t *m, int kind)
{
    mca_osc_hybrid_pend_t **pp = &m->pend;

    while (NULL != *pp) {
        mca_osc_hybrid_pend_t *p = *pp;
        if ((kind < 0 || p->kind == kind) && REQUEST_COMPLETE(p->req)) {
            *pp = p->next;
            mca_osc_hybrid_complete_pend(m, p);
        } else {
            pp = &p->next;
        }
    }
}

static int mca_osc_hybrid_isend(mca_osc_hybrid_module_t *m, const void *buf, size_t len, int dst,
                                int tag, void *freebuf)
{
    ompi_request_t *req;
    int rc;

    if (OPAL_UNLIKELY(mca_osc_hybrid_ft_failed(m, dst))) {
        free(freebuf); /* no reply to a failed origin (osc_hybrid_ft.c) */
        return TC_OMPI_ERR_PROC_FAILED;
    }
    rc = MCA_PML_CALL(
        isend(buf, len, MPI_BYTE, dst, tag, MCA_PML_BASE_SEND_STANDARD, m->comm, &req));
    if (OMPI_SUCCESS != rc) {
        free(freebuf);
        return rc;
    }
    return mca_osc_hybrid_track(m, req, freebuf, NULL, MCA_OSC_HYBRID_PEND_TSEND);
}

/* A reply sent straight from window memory: above the PML's eager limit
 * the PML reads it only during the rendezvous, after this returns, so the
 * send is tracked until it completes, and the notices that end the
 * origin's epoch wait for it (mca_osc_hybrid_notice). A send the PML
 * finished at once (copied, eager) holds nothing back. */
static int mca_osc_hybrid_isend_window(mca_osc_hybrid_module_t *m, const void *buf, size_t len,
                                       int dst, int tag)
{
    ompi_request_t *req;
    int rc;

    if (OPAL_UNLIKELY(mca_osc_hybrid_ft_failed(m, dst))) {
        return TC_OMPI_ERR_PROC_FAILED;
    }
    rc = MCA_PML_CALL(
        isend(buf, len, MPI_BYTE, dst, tag, MCA_PML_BASE_SEND_STANDARD, m->comm, &req));
    if (OMPI_SUCCESS != rc) {
        return rc;
    }
    if (REQUEST_COMPLETE(req)) {
        return mca_osc_hybrid_track(m, req, NULL, NULL, MCA_OSC_HYBRID_PEND_TSEND);
    }
    rc = mca_osc_hybrid_track(m, req, NULL, NULL, MCA_OSC_HYBRID_PEND_WSEND);
    if (OMPI_SUCCESS != rc) {
        /* nowhere to keep it: the window must not change before it is read */
        ompi_request_wait(&req, MPI_STATUS_IGNORE);
        return rc;
    }
    m->pend->peer = dst;
    m->pend->seq = ++m->wsend_seq;
    m->wsend_pending++;
    m->wsend_out[dst]++;
    return OMPI_SUCCESS;
}

/* An answer of this process as a target (acknowledgements, errors). What
 * it gathered for dst as an origin leaves first: one order per peer. */
int mca_osc_hybrid_send_ctl(mca_osc_hybrid_module_t *m, int dst, int type, int arg)
{
    mca_osc_hybrid_hdr_t *h;

    (void) mca_osc_hybrid_agg_send(m, dst, NULL);
    h = calloc(1, sizeof(*h));
    if (NULL == h) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    h->type = (uint8_t) type;
    h->arg = arg;
    return mca_osc_hybrid_isend(m, h, sizeof(*h), dst, MCA_OSC_HYBRID_TAG_AM, h);
}

/* Where the segments land in this window; NULL if any byte of them lies
 * outside the window (or outside the attached memory). The offsets of
 * the segments are relative to the address returned, which itself may lie
 * outside the window. */
static char *mca_osc_hybrid_resolve(mca_osc_hybrid_module_t *m, int64_t disp,
                                    const mca_osc_hybrid_seg_t *segs, uint32_t nseg)
{
    mca_osc_hybrid_wire_win_t w = {
        .dynamic = (MPI_WIN_FLAVOR_DYNAMIC == m->flavor),
        .base = (uintptr_t) m->base,
        .size = (uint64_t) m->win_size,
        .disp_unit = m->disp_unit,
        .regions = m->regions,
        .nregions = m->nregions,
    };
    uintptr_t origin;

    if (MCA_OSC_HYBRID_WIRE_OK != mca_osc_hybrid_check_range(&w, disp, segs, nseg, &origin)) {
        return NULL;
    }
    return (char *) origin;
}

/* The target datatype's element as pieces (offset, length) within it. */
typedef struct {
    int n;
    struct {
        ptrdiff_t off;
        size_t len;
    } p[8];
} mca_osc_hybrid_layout_t;

static int mca_osc_hybrid_layout(ompi_datatype_t *dt, mca_osc_hybrid_layout_t *lay)
{
    opal_convertor_t conv;
    struct iovec iov[8];
    uint32_t cnt = 8;
    size_t size = 0;
    const uintptr_t bias = (uintptr_t) 1 << 40;
    uint32_t i;
    int done;

    OBJ_CONSTRUCT(&conv, opal_convertor_t);
    opal_convertor_copy_and_prepare_for_send(ompi_mpi_local_convertor, &dt->super, 1, (void *) bias,
                                             0, &conv);
    done = opal_convertor_raw(&conv, iov, &cnt, &size);
    OBJ_DESTRUCT(&conv);
    if (!done) {
        return OMPI_ERROR;
    }
    lay->n = (int) cnt;
    for (i = 0; i < cnt; ++i) {
        lay->p[i].off = (ptrdiff_t) ((uintptr_t) iov[i].iov_base - bias);
        lay->p[i].len = iov[i].iov_len;
    }
    return OMPI_SUCCESS;
}

/* Applies op element by element; the old values go to fetch (packed) when
 * it is not NULL. src is the packed origin data (NULL for MPI_NO_OP). */
static int mca_osc_hybrid_apply(ompi_op_t *op, ompi_datatype_t *dt, char *dest,
                                const mca_osc_hybrid_seg_t *segs, uint32_t nseg, const char *src,
                                char *fetch)
{
    size_t es = dt->super.size;
    ptrdiff_t lb, ext;
    size_t pos = 0;
    uint32_t i;

    ompi_datatype_get_extent(dt, &lb, &ext);
    if ((size_t) ext == es && 0 == lb) {
        for (i = 0; i < nseg; ++i) {
            char *addr = dest + segs[i].off;
            size_t len = segs[i].len;
            if (0 != len % es) {
                return OMPI_ERR_BAD_PARAM;
            }
            if (NULL != fetch) {
                memcpy(fetch + pos, addr, len);
            }
            if (&ompi_mpi_op_replace.op == op) {
                memmove(addr, src + pos, len);
            } else if (&ompi_mpi_op_no_op.op != op && len > 0) {
                ompi_op_reduce(op, (void *) (src + pos), addr, len / es, dt);
            }
            pos += len;
        }
        return OMPI_SUCCESS;
    }

    /* pair types with holes (MPI_DOUBLE_INT, ...): element by element,
     * through a scratch element in the type's own layout */
    {
        mca_osc_hybrid_layout_t lay;
        char scratch[64] __attribute__((aligned(16)));
        uint32_t si = 0;
        size_t soff = 0;
        int k;

        if (OMPI_SUCCESS != mca_osc_hybrid_layout(dt, &lay) || (size_t) ext > sizeof(scratch)) {
            return OMPI_ERR_NOT_SUPPORTED;
        }
        for (;;) {
            char *piece[8];
            char *ebase = NULL;
            while (si < nseg && soff == segs[si].len) {
                si++;
                soff = 0;
            }
            if (si == nseg) {
                break;
            }
            for (k = 0; k < lay.n; ++k) {
                while (si < nseg && soff == segs[si].len) {
                    si++;
                    soff = 0;
                }
                if (si == nseg || segs[si].len - soff < lay.p[k].len) {
                    return OMPI_ERR_BAD_PARAM;
                }
                piece[k] = dest + segs[si].off + soff;
                soff += lay.p[k].len;
                if (0 == k) {
                    ebase = piece[0] - lay.p[0].off;
                }
                if (piece[k] != ebase + lay.p[k].off) {
                    return OMPI_ERR_BAD_PARAM;
                }
            }
            for (k = 0; k < lay.n; ++k) {
                if (NULL != fetch) {
                    memcpy(fetch + pos, piece[k], lay.p[k].len);
                }
                if (NULL != src) {
                    memcpy(scratch + lay.p[k].off - lb, src + pos, lay.p[k].len);
                }
                pos += lay.p[k].len;
            }
            if (&ompi_mpi_op_replace.op == op) {
                for (k = 0; k < lay.n; ++k) {
                    memcpy(piece[k], scratch + lay.p[k].off - lb, lay.p[k].len);
                }
            } else if (&ompi_mpi_op_no_op.op != op) {
                ompi_op_reduce(op, scratch - lb, ebase, 1, dt);
            }
        }
        return OMPI_SUCCESS;
    }
}

/* Grants what the queue allows: exclusive requests in order, each once
 * nothing is held and it is first; a shared request whenever no
 * exclusive lock is held, also past an exclusive request that waits.
 * Strict FIFO let lock_all from several origins and an exclusive lock
 * at one target wait for each other in a cycle (origin A holds the
 * shared lock at X and waits at Y, where an exclusive request waits for
 * origin B, whose shared request at X waits behind X's exclusive one). */
void mca_osc_hybrid_lock_grant(mca_osc_hybrid_module_t *m)
{
    mca_osc_hybrid_lockq_t **pp = &m->lkq_head, *prev = NULL;

    while (NULL != *pp && -1 == m->lk_excl) {
        mca_osc_hybrid_lockq_t *q = *pp;

        if (MPI_LOCK_EXCLUSIVE == q->type && (0 != m->lk_shared || q != m->lkq_head)) {
            /* waits; shared requests behind it may still go */
            prev = q;
            pp = &q->next;
            continue;
        }
        if (MPI_LOCK_EXCLUSIVE == q->type) {
            m->lk_excl = q->src;
        } else {
            m->lk_shared++;
        }
        *pp = q->next;
        if (m->lkq_tail == q) {
            m->lkq_tail = prev;
        }
        mca_osc_hybrid_send_ctl(m, q->src, MCA_OSC_HYBRID_HDR_LOCK_ACK, 0);
        free(q);
    }
}

/* Carries out a notice that ends (part of) src's epoch here. */
static void mca_osc_hybrid_notice_apply(mca_osc_hybrid_module_t *m, int src, int type)
{
    switch (type) {
    case MCA_OSC_HYBRID_HDR_UNLOCK:
        if (m->lk_excl == src) {
            m->lk_excl = -1;
        } else if (m->lk_shared > 0) {
            m->lk_shared--;
        }
        mca_osc_hybrid_send_ctl(m, src, MCA_OSC_HYBRID_HDR_UNLOCK_ACK, 0);
        mca_osc_hybrid_lock_grant(m);
        break;
    case MCA_OSC_HYBRID_HDR_FLUSH:
        mca_osc_hybrid_send_ctl(m, src, MCA_OSC_HYBRID_HDR_FLUSH_ACK, 0);
        break;
    case MCA_OSC_HYBRID_HDR_COMPLETE:
        m->completes_recv++;
        break;
    default:
        break;
    }
}

/* True when no reply to src started at or before sequence number upto is
 * still being read from the window. */
static bool mca_osc_hybrid_replies_done(const mca_osc_hybrid_module_t *m, int src, uint64_t upto)
{
    const mca_osc_hybrid_pend_t *p;

    if (0 == m->wsend_out[src]) {
        return true;
    }
    for (p = m->pend; NULL != p; p = p->next) {
        if (MCA_OSC_HYBRID_PEND_WSEND == p->kind && src == p->peer && p->seq <= upto) {
            return false;
        }
    }
    return true;
}

/* UNLOCK, FLUSH and COMPLETE answer for every request src sent before
 * them, replies included: while a reply to src is still read from the
 * window (or an earlier notice of src is held), the notice is held, and
 * with it the acknowledgement, the hand-over of the lock and the count
 * that MPI_Win_wait/test wait for. Requests of src that come after it go
 * on meanwhile (no origin sends one that depends on the answer before it
 * has the answer). */
static void mca_osc_hybrid_notice(mca_osc_hybrid_module_t *m, int src, int type)
{
    mca_osc_hybrid_held_t *hd, *q;
    bool src_held = false;

    for (q = m->held_head; NULL != q && !src_held; q = q->next) {
        src_held = (q->src == src);
    }
    if (!src_held && 0 == m->wsend_out[src]) {
        mca_osc_hybrid_notice_apply(m, src, type);
        return;
    }
    hd = malloc(sizeof(*hd));
    if (NULL == hd) {
        /* no memory to hold it: wait for the replies here instead */
        while (!mca_osc_hybrid_replies_done(m, src, m->wsend_seq)) {
            opal_progress();
            mca_osc_hybrid_complete_finished(m, MCA_OSC_HYBRID_PEND_WSEND);
        }
        mca_osc_hybrid_release_held(m);
        mca_osc_hybrid_notice_apply(m, src, type);
        return;
    }
    hd->next = NULL;
    hd->src = src;
    hd->type = type;
    hd->upto = m->wsend_seq;
    if (NULL == m->held_tail) {
        m->held_head = hd;
    } else {
        m->held_tail->next = hd;
    }
    m->held_tail = hd;
}

/* Carries out the held notices whose replies have been read, in the order
 * they arrived (a later notice of one origin is never ready before an
 * earlier one: it waits for a superset of the replies). */
void mca_osc_hybrid_release_held(mca_osc_hybrid_module_t *m)
{
    mca_osc_hybrid_held_t **pp = &m->held_head, *prev = NULL;

    while (NULL != *pp) {
        mca_osc_hybrid_held_t *hd = *pp;
        if (mca_osc_hybrid_replies_done(m, hd->src, hd->upto)) {
            *pp = hd->next;
            if (m->held_tail == hd) {
                m->held_tail = prev;
            }
            mca_osc_hybrid_notice_apply(m, hd->src, hd->type);
            free(hd);
        } else {
            prev = hd;
            pp = &hd->next;
        }
    }
}

void mca_osc_hybrid_free_held(mca_osc_hybrid_module_t *m)
{
    while (NULL != m->held_head) {
        mca_osc_hybrid_held_t *hd = m->held_head;
        m->held_head = hd->next;
        free(hd);
    }
    m->held_tail = NULL;
}

static void mca_osc_hybrid_fail(mca_osc_hybrid_module_t *m, int src, int code, const char *why)
{
    opal_output_verbose(10, 0, "osc/hybrid: rank %d refused a request of rank %d: %s", m->rank, src,
                        why);
    mca_osc_hybrid_send_ctl(m, src, MCA_OSC_HYBRID_HDR_ERROR, code);
}

/* The predefined datatype of a Fortran handle from the wire; NULL for
 * anything else and for the types without data (MPI_LB, MPI_UB). */
static ompi_datatype_t *mca_osc_hybrid_dt_of(int32_t f)
{
    MPI_Datatype d = MPI_Type_f2c(f);
    if (NULL == d || MPI_DATATYPE_NULL == d || !ompi_datatype_is_predefined(d) ||
        0 == d->super.size) {
        return NULL;
    }
    return d;
}

static ompi_op_t *mca_osc_hybrid_op_of(int32_t f)
{
    MPI_Op o = MPI_Op_f2c(f);
    if (NULL == o || MPI_OP_NULL == o || !ompi_op_is_intrinsic(o)) {
        return NULL;
    }
    return o;
}

/* Whether op can be applied to elements of dt here: MPI_REPLACE and
 * MPI_NO_OP to any, the others where Open MPI has a reduction function. */
static bool mca_osc_hybrid_op_on(ompi_op_t *op, ompi_datatype_t *dt)
{
    int map;

    if (&ompi_mpi_op_replace.op == op || &ompi_mpi_op_no_op.op == op) {
        return true;
    }
    if (dt->id < 0 || dt->id >= OMPI_DATATYPE_MAX_PREDEFINED) {
        return false;
    }
    map = ompi_op_ddt_map[dt->id];
    return -1 != map && NULL != op->o_func.intrinsic.fns[map];
}

/* Whether the segments hold whole elements of dt, in its layout, so that
 * mca_osc_hybrid_apply applies all of them or none (offsets only: the
 * layout check does not depend on where the segments lie). */
static int mca_osc_hybrid_check_elements(ompi_datatype_t *dt, const mca_osc_hybrid_seg_t *segs,
                                         uint32_t nseg)
{
    size_t es = dt->super.size;
    ptrdiff_t lb, ext;
    mca_osc_hybrid_layout_t lay;
    uint32_t si = 0;
    uint64_t soff = 0;
    uint32_t i;
    int k;

    ompi_datatype_get_extent(dt, &lb, &ext);
    if ((size_t) ext == es && 0 == lb) {
        for (i = 0; i < nseg; ++i) {
            if (0 != segs[i].len % es) {
                return MCA_OSC_HYBRID_WIRE_ELEMENT;
            }
        }
        return MCA_OSC_HYBRID_WIRE_OK;
    }
    /* a type with holes goes through a scratch element of 64 bytes */
    if (ext <= 0 || ext > 64 || OMPI_SUCCESS != mca_osc_hybrid_layout(dt, &lay)) {
        return MCA_OSC_HYBRID_WIRE_DATATYPE;
    }
    for (;;) {
        int64_t ebase = 0;
        while (si < nseg && soff == segs[si].len) {
            si++;
            soff = 0;
        }
        if (si == nseg) {
            return MCA_OSC_HYBRID_WIRE_OK;
        }
        for (k = 0; k < lay.n; ++k) {
            int64_t at;
            while (si < nseg && soff == segs[si].len) {
                si++;
                soff = 0;
            }
            if (si == nseg || segs[si].len - soff < lay.p[k].len) {
                return MCA_OSC_HYBRID_WIRE_ELEMENT;
            }
            /* offsets were range-checked: no overflow */
            at = segs[si].off + (int64_t) soff;
            soff += lay.p[k].len;
            if (0 == k) {
                ebase = at - lay.p[0].off;
            }
            if (at != ebase + lay.p[k].off) {
                return MCA_OSC_HYBRID_WIRE_ELEMENT;
            }
        }
    }
}

/* The checks of a framed data request that need Open MPI: datatype, op,
 * elements. The range is checked where the request is applied. */
static int mca_osc_hybrid_check_request(mca_osc_hybrid_module_t *m, const mca_osc_hybrid_rec_t *rec)
{
    const mca_osc_hybrid_hdr_t *h = &rec->hdr;
    ompi_datatype_t *dt;
    ompi_op_t *op = NULL;

    if (MCA_OSC_HYBRID_HDR_PUT == h->type || MCA_OSC_HYBRID_HDR_GET == h->type) {
        return (0 != h->dt || 0 != h->op) ? MCA_OSC_HYBRID_WIRE_FLAGS : MCA_OSC_HYBRID_WIRE_OK;
    }
    /* the offsets must be in range before the element walk adds to them */
    if (NULL == mca_osc_hybrid_resolve(m, h->disp, rec->segs, h->nseg)) {
        return MCA_OSC_HYBRID_WIRE_RANGE;
    }
    dt = mca_osc_hybrid_dt_of(h->dt);
    if (NULL == dt) {
        return MCA_OSC_HYBRID_WIRE_DATATYPE;
    }
    if (MCA_OSC_HYBRID_HDR_CAS == h->type) {
        if (0 != h->op) {
            return MCA_OSC_HYBRID_WIRE_FLAGS;
        }
        /* one element, compared bytewise and answered from 16 bytes */
        if (dt->super.size > 16 || h->stream_len != dt->super.size) {
            return MCA_OSC_HYBRID_WIRE_CAS;
        }
        return MCA_OSC_HYBRID_WIRE_OK;
    }
    op = mca_osc_hybrid_op_of(h->op);
    if (NULL == op || !mca_osc_hybrid_op_on(op, dt)) {
        return MCA_OSC_HYBRID_WIRE_OP;
    }
    /* only MPI_NO_OP reads no origin data */
    if (MCA_OSC_HYBRID_HDR_GACC == h->type && 0 == h->payload_len && &ompi_mpi_op_no_op.op != op) {
        return MCA_OSC_HYBRID_WIRE_PAYLOAD_LEN;
    }
    return mca_osc_hybrid_check_elements(dt, rec->segs, h->nseg);
}

/* A request refused for what it holds: the origin hears of it (ERROR, and
 * an empty reply where it waits for one; separate put data are still
 * received, else the origin's send would never end), the target counts it
 * like an applied one. The first malformed request of a window is shown
 * to the user; a range error is the application's (MPI_ERR_RMA_RANGE at
 * the origin). */
static void mca_osc_hybrid_refuse(mca_osc_hybrid_module_t *m, int src,
                                  const mca_osc_hybrid_rec_t *rec, int err)
{
    const mca_osc_hybrid_hdr_t *h = &rec->hdr;
    const char *why = mca_osc_hybrid_wire_strerror(err);
    int code = OMPI_ERR_BAD_PARAM;

    /* (Open MPI maps OMPI_ERR_BAD_PARAM to MPI_ERR_ARG; it has no internal
     * code for MPI_ERR_TYPE or MPI_ERR_OP) */
    if (MCA_OSC_HYBRID_WIRE_RANGE == err) {
        code = OMPI_ERR_RMA_RANGE;
    } else if (!m->wire_reported) {
        m->wire_reported = true;
        opal_show_help("help-mpi-osc-hybrid.txt", "malformed request", true, m->rank, src, why,
                       (int) h->type);
    }
    mca_osc_hybrid_fail(m, src, code, why);
    switch (h->type) {
    case MCA_OSC_HYBRID_HDR_GET:
    case MCA_OSC_HYBRID_HDR_GACC:
    case MCA_OSC_HYBRID_HDR_CAS:
        mca_osc_hybrid_isend(m, NULL, 0, src, h->reply_tag, NULL);
        break;
    case MCA_OSC_HYBRID_HDR_PUT:
        if (h->flags & MCA_OSC_HYBRID_FLAG_DATA_FOLLOWS) {
            /* stream_len is at most MCA_OSC_HYBRID_STREAM_MAX (else fatal) */
            ompi_request_t *req;
            char *sink = malloc(h->stream_len ? h->stream_len : 1);
            int rc = OMPI_ERR_OUT_OF_RESOURCE;
            if (NULL != sink) {
                rc = MCA_PML_CALL(
                    irecv(sink, h->stream_len, MPI_BYTE, src, h->reply_tag, m->comm, &req));
            }
            if (OMPI_SUCCESS == rc) {
                if (OMPI_SUCCESS ==
                    mca_osc_hybrid_track(m, req, sink, NULL, MCA_OSC_HYBRID_PEND_TDATA)) {
                    return; /* counted when the data are in (and dropped) */
                }
                sink = NULL; /* the receive goes on into it */
            }
            free(sink);
        }
        break;
    default:
        break;
    }
    m->ops_done++;
}

/* Handles one data-moving request (put, get, acc, gacc, cas). */
static void mca_osc_hybrid_handle_op(mca_osc_hybrid_module_t *m, int src,
                                     const mca_osc_hybrid_hdr_t *h,
                                     const mca_osc_hybrid_seg_t *segs, const char *payload)
{
    char *dest = mca_osc_hybrid_resolve(m, h->disp, segs, h->nseg);
    ompi_datatype_t *dt = NULL;
    ompi_op_t *op = NULL;
    char *reply = NULL;
    uint32_t i;
    int rc;

    if (MCA_OSC_HYBRID_HDR_ACC == h->type || MCA_OSC_HYBRID_HDR_GACC == h->type ||
        MCA_OSC_HYBRID_HDR_CAS == h->type) {
        dt = mca_osc_hybrid_dt_of(h->dt);
        if (MCA_OSC_HYBRID_HDR_CAS != h->type) {
            op = mca_osc_hybrid_op_of(h->op);
        }
        if (NULL == dt || (MCA_OSC_HYBRID_HDR_CAS != h->type && NULL == op)) {
            dest = NULL;
        }
    }

    switch (h->type) {
    case MCA_OSC_HYBRID_HDR_PUT:
        if (h->flags & MCA_OSC_HYBRID_FLAG_DATA_FOLLOWS) {
            ompi_request_t *req;
            char *tmp = NULL;
            char *into;
            mca_osc_hybrid_seg_t *copy = NULL;
            if (NULL == dest) {
                mca_osc_hybrid_fail(m, src, OMPI_ERR_RMA_RANGE, "put outside the window");
            }
            if (NULL != dest && 1 == h->nseg) {
                into = dest + segs[0].off;
            } else {
                tmp = malloc(h->stream_len ? h->stream_len : 1);
                copy = (NULL != dest) ? malloc(h->nseg * sizeof(*copy)) : NULL;
                if (NULL == tmp || (NULL != dest && NULL == copy)) {
                    free(tmp);
                    free(copy);
                    mca_osc_hybrid_fail(m, src, OMPI_ERR_OUT_OF_RESOURCE, "no memory");
                    m->ops_done++;
                    return;
                }
                if (NULL != copy) {
                    memcpy(copy, segs, h->nseg * sizeof(*copy));
                }
                into = tmp;
            }
            rc = MCA_PML_CALL(
                irecv(into, h->stream_len, MPI_BYTE, src, h->reply_tag, m->comm, &req));
            if (OMPI_SUCCESS != rc) {
                free(tmp);
                free(copy);
                mca_osc_hybrid_fail(m, src, rc, "cannot receive the put data");
                m->ops_done++;
                return;
            }
            if (OMPI_SUCCESS !=
                mca_osc_hybrid_track(m, req, tmp, NULL, MCA_OSC_HYBRID_PEND_TDATA)) {
                /* m->pend is not this receive (which goes on into tmp, kept) */
                free(copy);
                mca_osc_hybrid_fail(m, src, OMPI_ERR_OUT_OF_RESOURCE, "no memory");
                m->ops_done++;
                return;
            }
            m->pend->segs = copy;
            m->pend->nseg = h->nseg;
            m->pend->dest = dest;
            return; /* counted when the data is in */
        }
        if (NULL == dest) {
            mca_osc_hybrid_fail(m, src, OMPI_ERR_RMA_RANGE, "put outside the window");
        } else {
            size_t pos = 0;
            for (i = 0; i < h->nseg; ++i) {
                memcpy(dest + segs[i].off, payload + pos, segs[i].len);
                pos += segs[i].len;
            }
        }
        break;

    case MCA_OSC_HYBRID_HDR_GET:
        if (NULL == dest) {
            mca_osc_hybrid_fail(m, src, OMPI_ERR_RMA_RANGE, "get outside the window");
            mca_osc_hybrid_isend(m, NULL, 0, src, h->reply_tag, NULL);
        } else if (1 == h->nseg) {
            /* straight from the window: the PML reads it (with the BTL's
             * RDMA for large messages), maybe after this returns */
            mca_osc_hybrid_isend_window(m, dest + segs[0].off, segs[0].len, src, h->reply_tag);
        } else {
            size_t pos = 0;
            reply = malloc(h->stream_len ? h->stream_len : 1);
            if (NULL == reply) {
                mca_osc_hybrid_fail(m, src, OMPI_ERR_OUT_OF_RESOURCE, "no memory");
                mca_osc_hybrid_isend(m, NULL, 0, src, h->reply_tag, NULL);
                break;
            }
            for (i = 0; i < h->nseg; ++i) {
                memcpy(reply + pos, dest + segs[i].off, segs[i].len);
                pos += segs[i].len;
            }
            mca_osc_hybrid_isend(m, reply, h->stream_len, src, h->reply_tag, reply);
        }
        break;

    case MCA_OSC_HYBRID_HDR_ACC:
    case MCA_OSC_HYBRID_HDR_GACC:
        if (MCA_OSC_HYBRID_HDR_GACC == h->type) {
            reply = malloc(h->stream_len ? h->stream_len : 1);
        }
        if (NULL == dest || (MCA_OSC_HYBRID_HDR_GACC == h->type && NULL == reply)) {
            mca_osc_hybrid_fail(m, src,
                                NULL == dest ? OMPI_ERR_RMA_RANGE : OMPI_ERR_OUT_OF_RESOURCE,
                                "accumulate outside the window or of an unknown type/op");
        } else {
            rc = mca_osc_hybrid_apply(op, dt, dest, segs, h->nseg, h->payload_len ? payload : NULL,
                                      reply);
            if (OMPI_SUCCESS != rc) {
                mca_osc_hybrid_fail(m, src, OMPI_ERR_TYPE_MISMATCH, "accumulate layout");
            }
        }
        if (MCA_OSC_HYBRID_HDR_GACC == h->type) {
            mca_osc_hybrid_isend(m, reply, NULL == dest || NULL == reply ? 0 : h->stream_len, src,
                                 h->reply_tag, reply);
        }
        break;

    case MCA_OSC_HYBRID_HDR_CAS:
        reply = malloc(16);
        if (NULL == dest || NULL == reply || 1 != h->nseg || dt->super.size > 16 ||
            segs[0].len != dt->super.size || h->payload_len != 2 * dt->super.size) {
            mca_osc_hybrid_fail(m, src, NULL == dest ? OMPI_ERR_RMA_RANGE : OMPI_ERR_BAD_PARAM,
                                "compare-and-swap outside the window or malformed");
            mca_osc_hybrid_isend(m, reply, 0, src, h->reply_tag, reply);
        } else {
            size_t es = dt->super.size;
            char *addr = dest + segs[0].off;
            memcpy(reply, addr, es);
            if (0 == memcmp(addr, payload + es, es)) {
                memcpy(addr, payload, es);
            }
            mca_osc_hybrid_isend(m, reply, es, src, h->reply_tag, reply);
        }
        break;
    }
    m->ops_done++;
}

/* A record the target cannot go on from: handle_am returns 0. */
static size_t mca_osc_hybrid_stop(mca_osc_hybrid_module_t *m, int err)
{
    m->wire_fault = err;
    return 0;
}

/* UNLOCK: src must hold a lock here (granted, not queued). */
static bool mca_osc_hybrid_unlock_ok(mca_osc_hybrid_module_t *m, int src)
{
    mca_osc_hybrid_lockq_t *q;

    if (0 == m->lk_state[src]) {
        return false;
    }
    for (q = m->lkq_head; NULL != q; q = q->next) {
        if (q->src == src) {
            return false;
        }
    }
    if ((MPI_LOCK_EXCLUSIVE == m->lk_state[src]) ? (m->lk_excl != src) : (m->lk_shared <= 0)) {
        return false;
    }
    m->lk_state[src] = 0;
    return true;
}

size_t mca_osc_hybrid_handle_am(mca_osc_hybrid_module_t *m, int src, char *msg, size_t len)
{
    mca_osc_hybrid_rec_t rec;
    const mca_osc_hybrid_hdr_t *h = &rec.hdr;
    int err;

    if (src < 0 || src >= m->size) {
        return mca_osc_hybrid_stop(m, MCA_OSC_HYBRID_WIRE_SENDER);
    }
    err = mca_osc_hybrid_check_record(msg, len, &rec);
    if (mca_osc_hybrid_wire_fatal(err)) {
        return mca_osc_hybrid_stop(m, err);
    }
    if (OPAL_UNLIKELY(mca_osc_hybrid_ft_skip(m, src))) {
        /* from an origin known to have failed: its locks here are
         * released already, what it still sent is not applied */
        return rec.len;
    }
    /* notices: well-formed here (their only errors are fatal) */
    switch (h->type) {
    case MCA_OSC_HYBRID_HDR_LOCK: {
        mca_osc_hybrid_lockq_t *q;
        if (0 != m->lk_state[src]) {
            return mca_osc_hybrid_stop(m, MCA_OSC_HYBRID_WIRE_RELOCK);
        }
        q = malloc(sizeof(*q));
        if (NULL == q) {
            /* the origin would wait for its grant forever */
            return mca_osc_hybrid_stop(m, MCA_OSC_HYBRID_WIRE_NOMEM);
        }
        m->lk_state[src] = h->arg;
        q->next = NULL;
        q->src = src;
        q->type = h->arg;
        if (NULL == m->lkq_tail) {
            m->lkq_head = q;
        } else {
            m->lkq_tail->next = q;
        }
        m->lkq_tail = q;
        mca_osc_hybrid_lock_grant(m);
        return rec.len;
    }
    case MCA_OSC_HYBRID_HDR_UNLOCK:
        if (!mca_osc_hybrid_unlock_ok(m, src)) {
            return mca_osc_hybrid_stop(m, MCA_OSC_HYBRID_WIRE_NOT_LOCKED);
        }
        /* released (and acknowledged) once the replies read from the window
         * for this origin are out: mca_osc_hybrid_notice */
        mca_osc_hybrid_notice(m, src, MCA_OSC_HYBRID_HDR_UNLOCK);
        return rec.len;
    case MCA_OSC_HYBRID_HDR_FLUSH:
        mca_osc_hybrid_notice(m, src, MCA_OSC_HYBRID_HDR_FLUSH);
        return rec.len;
    /* acknowledgements answer requests of this process: one each */
    case MCA_OSC_HYBRID_HDR_LOCK_ACK:
        if (m->lock_ack[src] >= m->lock_req[src]) {
            return mca_osc_hybrid_stop(m, MCA_OSC_HYBRID_WIRE_UNASKED);
        }
        m->lock_ack[src]++;
        return rec.len;
    case MCA_OSC_HYBRID_HDR_UNLOCK_ACK:
        if (m->unlock_ack[src] >= m->unlock_req[src]) {
            return mca_osc_hybrid_stop(m, MCA_OSC_HYBRID_WIRE_UNASKED);
        }
        m->unlock_ack[src]++;
        return rec.len;
    case MCA_OSC_HYBRID_HDR_FLUSH_ACK:
        if (m->flush_ack[src] >= m->flush_req[src]) {
            return mca_osc_hybrid_stop(m, MCA_OSC_HYBRID_WIRE_UNASKED);
        }
        m->flush_ack[src]++;
        return rec.len;
    case MCA_OSC_HYBRID_HDR_POST:
        m->posts_recv[src]++;
        return rec.len;
    case MCA_OSC_HYBRID_HDR_COMPLETE:
        mca_osc_hybrid_notice(m, src, MCA_OSC_HYBRID_HDR_COMPLETE);
        return rec.len;
    case MCA_OSC_HYBRID_HDR_ERROR:
        if (0 == m->error) {
            m->error = h->arg < 0 ? h->arg : OMPI_ERROR;
        }
        return rec.len;
    default:
        break;
    }

    /* data-moving requests: framed, answerable; refused if anything in
     * them is wrong, applied otherwise */
    if (MCA_OSC_HYBRID_WIRE_OK == err) {
        err = mca_osc_hybrid_check_request(m, &rec);
    }
    if (MCA_OSC_HYBRID_WIRE_OK != err) {
        mca_osc_hybrid_refuse(m, src, &rec, err);
        return rec.len;
    }
    mca_osc_hybrid_handle_op(m, src, h, rec.segs, rec.payload);
    return rec.len;
}

/* Ends the job: a message from src could not be read further at byte off
 * of len (its records are lost, and with them possibly a LOCK or FLUSH
 * that src waits for). */
void mca_osc_hybrid_wire_abort(mca_osc_hybrid_module_t *m, int src, const char *why, size_t off,
                               size_t len)
{
    opal_show_help("help-mpi-osc-hybrid.txt", "malformed message", true, m->rank, src, why, off,
                   len);
    ompi_mpi_abort(m->comm, MPI_ERR_INTERN);
}
