/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * osc_hybrid_comm.c: the origin side of osc/hybrid's communication calls
 * (put, get, accumulate, get_accumulate, fetch_and_op, compare_and_swap
 * and the request-based variants). Each call flattens the target datatype
 * into segments, splits them into requests that fit one posted receive at
 * the target, packs the origin data, and posts the reply receives before
 * the requests leave.
 */

#include "ompi_config.h"

#include <stdlib.h>
#include <string.h>

#include "opal/datatype/opal_convertor.h"
#include "ompi/mca/pml/pml.h"

#include "osc_hybrid.h"

#define MCA_OSC_HYBRID_BIG MCA_OSC_HYBRID_STREAM_MAX

typedef struct {
    uint32_t first; /* index into the split segment array */
    uint32_t nseg;
    uint64_t stream_off;
    uint64_t stream_len;
} mca_osc_hybrid_chunk_t;

/* Is an access epoch to target open at this process? */
static bool mca_osc_hybrid_access_ok(mca_osc_hybrid_module_t *m, int target, bool passive_only)
{
    if (m->lock_all || 0 != m->lock_type[target]) {
        return true;
    }
    if (passive_only) {
        return false;
    }
    return m->start_member[target] || m->fence_active;
}

/* Flattens (count, dt) into segments relative to the target address. */
static int mca_osc_hybrid_flatten(ompi_datatype_t *dt, int count, mca_osc_hybrid_seg_t **out,
                                  uint32_t *nout)
{
    const uintptr_t bias = (uintptr_t) 1 << 44;
    opal_convertor_t conv;
    mca_osc_hybrid_seg_t *segs = NULL;
    uint32_t n = 0, max = 0;
    int done = 0;

    OBJ_CONSTRUCT(&conv, opal_convertor_t);
    opal_convertor_copy_and_prepare_for_send(ompi_mpi_local_convertor, &dt->super, count,
                                             (void *) bias, 0, &conv);
    while (!done) {
        struct iovec iov[64];
        uint32_t cnt = 64, i;
        size_t size = 0;
        done = opal_convertor_raw(&conv, iov, &cnt, &size);
        for (i = 0; i < cnt; ++i) {
            int64_t off = (int64_t) ((uintptr_t) iov[i].iov_base - bias);
            if (0 == iov[i].iov_len) {
                continue;
            }
            /* merge with the previous piece when contiguous */
            if (n > 0 && segs[n - 1].off + (int64_t) segs[n - 1].len == off) {
                segs[n - 1].len += iov[i].iov_len;
                continue;
            }
            if (n == max) {
                uint32_t nmax = max ? 2 * max : 16;
                void *p = realloc(segs, nmax * sizeof(*segs));
                if (NULL == p) {
                    free(segs);
                    OBJ_DESTRUCT(&conv);
                    return OMPI_ERR_OUT_OF_RESOURCE;
                }
                segs = p;
                max = nmax;
            }
            segs[n].off = off;
            segs[n].len = iov[i].iov_len;
            n++;
        }
        if (0 == cnt && !done) {
            break;
        }
    }
    OBJ_DESTRUCT(&conv);
    *out = segs;
    *nout = n;
    return OMPI_SUCCESS;
}

/* Splits segments into chunks of at most maxstream bytes (a multiple of
 * gran) and maxseg segments each; segments are cut where a chunk ends. */
static int mca_osc_hybrid_split(const mca_osc_hybrid_seg_t *segs, uint32_t nseg, uint64_t maxstream,
                                uint32_t maxseg, uint64_t gran, mca_osc_hybrid_seg_t **osegs,
                                mca_osc_hybrid_chunk_t **ochunks, uint32_t *onchunks)
{
    mca_osc_hybrid_seg_t *out = NULL;
    mca_osc_hybrid_chunk_t *ch = NULL;
    uint32_t nout = 0, maxout = 0, nch = 0, maxch = 0, i = 0;
    uint64_t soff = 0, pos = 0;

    maxstream -= maxstream % gran;
    if (0 == maxstream) {
        maxstream = gran;
    }
    while (i < nseg) {
        mca_osc_hybrid_chunk_t c = {.first = nout, .nseg = 0, .stream_off = pos, .stream_len = 0};
        while (i < nseg && c.nseg < maxseg && c.stream_len < maxstream) {
            uint64_t take = segs[i].len - soff;
            if (take > maxstream - c.stream_len) {
                take = maxstream - c.stream_len;
            }
            if (nout == maxout) {
                uint32_t nmax = maxout ? 2 * maxout : 16;
                void *p = realloc(out, nmax * sizeof(*out));
                if (NULL == p) {
                    goto oom;
                }
                out = p;
                maxout = nmax;
            }
            out[nout].off = segs[i].off + (int64_t) soff;
            out[nout].len = take;
            nout++;
            c.nseg++;
            c.stream_len += take;
            soff += take;
            if (soff == segs[i].len) {
                i++;
                soff = 0;
            }
        }
        /* a chunk cut by the segment limit must still end on an element:
         * give back the pieces beyond the last element boundary */
        if (0 != c.stream_len % gran) {
            uint64_t extra = c.stream_len % gran;
            while (extra > 0) {
                uint64_t back = out[nout - 1].len <= extra ? out[nout - 1].len : extra;
                uint64_t r = back;
                if (back == out[nout - 1].len) {
                    nout--;
                    c.nseg--;
                } else {
                    out[nout - 1].len -= back;
                }
                c.stream_len -= back;
                extra -= back;
                while (r > 0) {
                    uint64_t d;
                    if (0 == soff) {
                        i--;
                        soff = segs[i].len;
                    }
                    d = r < soff ? r : soff;
                    soff -= d;
                    r -= d;
                }
            }
            if (0 == c.nseg) {
                goto oom; /* an element has more pieces than a request holds */
            }
        }
        if (nch == maxch) {
            uint32_t nmax = maxch ? 2 * maxch : 4;
            void *p = realloc(ch, nmax * sizeof(*ch));
            if (NULL == p) {
                goto oom;
            }
            ch = p;
            maxch = nmax;
        }
        ch[nch++] = c;
        pos += c.stream_len;
    }
    *osegs = out;
    *ochunks = ch;
    *onchunks = nch;
    return OMPI_SUCCESS;
oom:
    free(out);
    free(ch);
    return OMPI_ERR_NOT_SUPPORTED;
}

static int mca_osc_hybrid_req_free(ompi_request_t **req)
{
    OMPI_REQUEST_FINI(*req);
    OBJ_RELEASE(*req);
    *req = MPI_REQUEST_NULL;
    return OMPI_SUCCESS;
}

static int mca_osc_hybrid_req_cancel(ompi_request_t *req, int flag)
{
    (void) req;
    (void) flag;
    return OMPI_SUCCESS;
}

static ompi_request_t *mca_osc_hybrid_req_new(ompi_win_t *win)
{
    ompi_request_t *r = OBJ_NEW(ompi_request_t);

    if (NULL == r) {
        return NULL;
    }
    OMPI_REQUEST_INIT(r, false);
    r->req_type = OMPI_REQUEST_WIN;
    r->req_state = OMPI_REQUEST_ACTIVE;
    r->req_free = mca_osc_hybrid_req_free;
    r->req_cancel = mca_osc_hybrid_req_cancel;
    r->req_mpi_object.win = win;
    r->req_status.MPI_SOURCE = MPI_ANY_SOURCE;
    r->req_status.MPI_TAG = MPI_ANY_TAG;
    r->req_status.MPI_ERROR = MPI_SUCCESS;
    r->req_status._ucount = 0;
    r->req_status._cancelled = 0;
    return r;
}

static uint64_t mca_osc_hybrid_dt_size(ompi_datatype_t *dt, int count)
{
    return (uint64_t) dt->super.size * (uint64_t) (count < 0 ? 0 : count);
}

/* The one path of every data-moving call. origin: data to send (put,
 * acc, gacc unless MPI_NO_OP); result: where the reply goes (get, gacc);
 * for compare-and-swap, compare is the second payload element. */
static int mca_osc_hybrid_issue(ompi_win_t *win, int type, const void *oaddr, int ocount,
                                ompi_datatype_t *odt, const void *compare, void *raddr, int rcount,
                                ompi_datatype_t *rdt, int target, ptrdiff_t tdisp, int tcount,
                                ompi_datatype_t *tdt, ompi_op_t *op, ompi_request_t **ureq)
{
    mca_osc_hybrid_module_t *m = MCA_OSC_HYBRID_MOD(win);
    mca_osc_hybrid_component_t *c = &mca_osc_hybrid_component;
    ompi_datatype_t *elem = NULL;
    mca_osc_hybrid_seg_t *segs = NULL, *ssegs = NULL, one_seg;
    mca_osc_hybrid_chunk_t *chunks = NULL;
    uint32_t nseg = 0, nchunks = 0, k;
    uint64_t tsize, gran = 1, maxstream, hdrspace;
    uint32_t maxseg;
    bool inline_data, has_payload, has_reply, data_follows;
    mca_osc_hybrid_op_t *hop = NULL;
    opal_convertor_t oconv;
    bool oconv_ready = false;
    const char *ocontig = NULL; /* origin data when contiguous */
    int rc = OMPI_SUCCESS;

    if (NULL != ureq) {
        *ureq = NULL;
    }
    if (target < 0 || target >= m->size) {
        return OMPI_ERR_BAD_PARAM;
    }
    tsize = mca_osc_hybrid_dt_size(tdt, tcount);
    has_payload = (MCA_OSC_HYBRID_HDR_PUT == type || MCA_OSC_HYBRID_HDR_ACC == type ||
                   MCA_OSC_HYBRID_HDR_CAS == type ||
                   (MCA_OSC_HYBRID_HDR_GACC == type && &ompi_mpi_op_no_op.op != op));
    has_reply = (MCA_OSC_HYBRID_HDR_GET == type || MCA_OSC_HYBRID_HDR_GACC == type ||
                 MCA_OSC_HYBRID_HDR_CAS == type);
    if (has_payload && MCA_OSC_HYBRID_HDR_CAS != type &&
        mca_osc_hybrid_dt_size(odt, ocount) != tsize) {
        return OMPI_ERR_TYPE_MISMATCH;
    }
    if (has_reply && mca_osc_hybrid_dt_size(rdt, rcount) != tsize) {
        return OMPI_ERR_TYPE_MISMATCH;
    }
    if (MCA_OSC_HYBRID_HDR_ACC == type || MCA_OSC_HYBRID_HDR_GACC == type ||
        MCA_OSC_HYBRID_HDR_CAS == type) {
        elem = ompi_datatype_is_predefined(tdt)
            ? tdt
            : ompi_datatype_get_single_predefined_type_from_args(tdt);
        if (NULL == elem) {
            return OMPI_ERR_NOT_SUPPORTED;
        }
        gran = elem->super.size;
        if (NULL != op && &ompi_mpi_op_replace.op != op && &ompi_mpi_op_no_op.op != op) {
            if (!ompi_op_is_intrinsic(op)) {
                return MPI_ERR_OP;
            }
            if (-1 == ompi_op_ddt_map[elem->id] ||
                NULL == op->o_func.intrinsic.fns[ompi_op_ddt_map[elem->id]]) {
                return MPI_ERR_OP;
            }
        }
    }

    OPAL_THREAD_LOCK(&m->lock);
    m->in_progress++;
    if (!mca_osc_hybrid_access_ok(m, target, NULL != ureq)) {
        rc = OMPI_ERR_RMA_SYNC;
        goto out;
    }
    if (OPAL_UNLIKELY(mca_osc_hybrid_ft_failed(m, target))) {
        /* no message to a failed process (Open MPI 5.0.7's ob1 may have
         * dropped its last BTL to it, and then faults on a send) */
        rc = TC_OMPI_ERR_PROC_FAILED;
        goto out;
    }

    if (NULL != ureq) {
        *ureq = mca_osc_hybrid_req_new(win);
        if (NULL == *ureq) {
            rc = OMPI_ERR_OUT_OF_RESOURCE;
            goto out;
        }
    }
    if (0 == tsize) {
        if (NULL != ureq) {
            ompi_request_complete(*ureq, true);
        }
        goto out;
    }

    if (ompi_datatype_is_contiguous_memory_layout(tdt, tcount)) {
        /* one piece: no convertor walk */
        ptrdiff_t tlb, text;
        ompi_datatype_get_true_extent(tdt, &tlb, &text);
        segs = &one_seg;
        segs[0].off = (int64_t) tlb;
        segs[0].len = tsize;
        nseg = 1;
    } else {
        rc = mca_osc_hybrid_flatten(tdt, tcount, &segs, &nseg);
    }
    if (OMPI_SUCCESS != rc) {
        goto out;
    }
    /* range check at the origin when the target's window is known */
    if (NULL != m->peer_size) {
        int64_t start;
        if (__builtin_mul_overflow((int64_t) tdisp, (int64_t) m->peer_disp_unit[target], &start)) {
            rc = OMPI_ERR_RMA_RANGE;
            goto out;
        }
        for (k = 0; k < nseg; ++k) {
            int64_t lo;
            if (__builtin_add_overflow(start, segs[k].off, &lo) || lo < 0 ||
                (uint64_t) lo > m->peer_size[target] ||
                segs[k].len > m->peer_size[target] - (uint64_t) lo) {
                rc = OMPI_ERR_RMA_RANGE;
                goto out;
            }
        }
    }

    /* contiguous put/get by the BTL's RDMA where the window has it */
    if (NULL != m->rbtl && NULL == ureq &&
        (MCA_OSC_HYBRID_HDR_PUT == type || MCA_OSC_HYBRID_HDR_GET == type)) {
        bool is_put = (MCA_OSC_HYBRID_HDR_PUT == type);
        if (OMPI_SUCCESS ==
            mca_osc_hybrid_rdma_try(m, is_put, is_put ? (void *) oaddr : raddr,
                                    is_put ? ocount : rcount, is_put ? odt : rdt, target, tdisp,
                                    tcount, tdt)) {
            goto out;
        }
    }

    hdrspace = (uint64_t) c->slot_size - sizeof(mca_osc_hybrid_hdr_t);
    if (MCA_OSC_HYBRID_HDR_PUT == type) {
        inline_data = (tsize <= (uint64_t) c->inline_max);
        maxstream =
            inline_data ? (uint64_t) (c->inline_max > 0 ? c->inline_max : 1) : MCA_OSC_HYBRID_BIG;
    } else if (MCA_OSC_HYBRID_HDR_GET == type) {
        inline_data = false;
        maxstream = MCA_OSC_HYBRID_BIG;
    } else if (MCA_OSC_HYBRID_HDR_CAS == type) {
        inline_data = true;
        maxstream = gran;
    } else {
        inline_data = has_payload;
        maxstream = hdrspace / 2;
    }
    data_follows = (MCA_OSC_HYBRID_HDR_PUT == type && !inline_data);
    maxseg = (uint32_t) ((hdrspace - (inline_data ? maxstream : 0)) / sizeof(mca_osc_hybrid_seg_t));
    if (MCA_OSC_HYBRID_HDR_CAS == type && (1 != nseg || segs[0].len != gran || gran > 16)) {
        rc = OMPI_ERR_TYPE_MISMATCH;
        goto out;
    }
    rc = mca_osc_hybrid_split(segs, nseg, maxstream, maxseg, gran, &ssegs, &chunks, &nchunks);
    if (OMPI_SUCCESS != rc) {
        goto out;
    }

    hop = calloc(1, sizeof(*hop));
    if (NULL == hop) {
        rc = OMPI_ERR_OUT_OF_RESOURCE;
        goto out;
    }
    hop->refs = 1; /* ours, until every chunk is on its way */
    if (NULL != ureq) {
        OBJ_RETAIN(*ureq);
        hop->ureq = *ureq;
    }
    if (has_reply && nchunks > 1) {
        hop->tmp = malloc(tsize);
        if (NULL == hop->tmp) {
            rc = OMPI_ERR_OUT_OF_RESOURCE;
            goto out;
        }
        hop->tmp_len = tsize;
        hop->res_addr = raddr;
        hop->res_count = rcount;
        hop->res_dt = rdt;
        OBJ_RETAIN(rdt);
    }
    if (has_payload && MCA_OSC_HYBRID_HDR_CAS != type &&
        ompi_datatype_is_contiguous_memory_layout(odt, ocount)) {
        /* packed = the bytes in place: copy, no convertor */
        ptrdiff_t olb, oext;
        ompi_datatype_get_true_extent(odt, &olb, &oext);
        ocontig = (const char *) oaddr + olb;
    } else if (has_payload && MCA_OSC_HYBRID_HDR_CAS != type && !(data_follows && 1 == nchunks)) {
        OBJ_CONSTRUCT(&oconv, opal_convertor_t);
        opal_convertor_copy_and_prepare_for_send(ompi_mpi_local_convertor, &odt->super, ocount,
                                                 oaddr, 0, &oconv);
        oconv_ready = true;
    }

    for (k = 0; k < nchunks && OMPI_SUCCESS == rc; ++k) {
        mca_osc_hybrid_chunk_t *ch = &chunks[k];
        uint64_t payload =
            inline_data ? (MCA_OSC_HYBRID_HDR_CAS == type ? 2 * gran : ch->stream_len) : 0;
        size_t reclen = mca_osc_hybrid_record_len(ch->nseg, payload);
        char *msg = mca_osc_hybrid_agg_reserve(m, target, reclen);
        mca_osc_hybrid_hdr_t *h = (mca_osc_hybrid_hdr_t *) msg;
        char *pl;
        ompi_request_t *req;
        int tag = 0;

        if (NULL == msg) {
            rc = OMPI_ERR_OUT_OF_RESOURCE;
            break;
        }
        memset(h, 0, sizeof(*h));
        h->type = (uint8_t) type;
        h->flags = data_follows ? MCA_OSC_HYBRID_FLAG_DATA_FOLLOWS : 0;
        h->op = (NULL != op) ? MPI_Op_c2f(op) : 0;
        h->dt = (NULL != elem) ? MPI_Type_c2f(elem) : 0;
        h->nseg = ch->nseg;
        h->stream_len = ch->stream_len;
        h->payload_len = payload;
        h->disp = (int64_t) tdisp;
        memcpy(msg + sizeof(*h), ssegs + ch->first, ch->nseg * sizeof(mca_osc_hybrid_seg_t));
        pl = msg + sizeof(*h) + ch->nseg * sizeof(mca_osc_hybrid_seg_t);
        if (MCA_OSC_HYBRID_HDR_CAS == type) {
            memcpy(pl, oaddr, gran);
            memcpy(pl + gran, compare, gran);
        } else if (inline_data && payload > 0 && NULL != ocontig) {
            memcpy(pl, ocontig + ch->stream_off, payload);
        } else if (inline_data && payload > 0) {
            struct iovec iov = {.iov_base = pl, .iov_len = payload};
            uint32_t cnt = 1;
            size_t max = payload;
            opal_convertor_pack(&oconv, &iov, &cnt, &max);
        }

        if (has_reply) {
            tag = MCA_OSC_HYBRID_TAG_REPLY + (int) (m->next_reply++ % MCA_OSC_HYBRID_TAG_SPAN);
            if (1 == nchunks) {
                rc = MCA_PML_CALL(irecv(raddr, rcount, rdt, target, tag, m->comm, &req));
            } else {
                rc = MCA_PML_CALL(irecv(hop->tmp + ch->stream_off, ch->stream_len, MPI_BYTE, target,
                                        tag, m->comm, &req));
            }
            if (OMPI_SUCCESS != rc) {
                m->agg_len[target] -= (uint32_t) reclen; /* take the record back */
                break;
            }
            mca_osc_hybrid_track(m, req, NULL, hop, MCA_OSC_HYBRID_PEND_ORIGIN);
        } else {
            m->unacked[target]++;
            if (data_follows) {
                tag = MCA_OSC_HYBRID_TAG_DATA + (int) (m->next_data++ % MCA_OSC_HYBRID_TAG_SPAN);
            }
        }
        h->reply_tag = tag;
        m->ops_sent[target]++;

        /* a request-based op without a reply completes when its message has
         * left; a put with separate data goes at once (its data cannot
         * leave before the target has the header) */
        if ((NULL != ureq && !has_reply) || data_follows || 0 == c->aggregate_max) {
            rc = mca_osc_hybrid_agg_send(m, target, (NULL != ureq && !has_reply) ? hop : NULL);
            if (OMPI_SUCCESS != rc) {
                break;
            }
        }

        if (data_follows) {
            void *buf = NULL;
            if (1 == nchunks) {
                rc = MCA_PML_CALL(isend(oaddr, ocount, odt, target, tag, MCA_PML_BASE_SEND_STANDARD,
                                        m->comm, &req));
            } else {
                struct iovec iov;
                uint32_t cnt = 1;
                size_t max = ch->stream_len;
                buf = malloc(ch->stream_len);
                if (NULL == buf) {
                    rc = OMPI_ERR_OUT_OF_RESOURCE;
                    break;
                }
                iov.iov_base = buf;
                iov.iov_len = ch->stream_len;
                if (NULL != ocontig) {
                    memcpy(buf, ocontig + ch->stream_off, ch->stream_len);
                } else {
                    opal_convertor_pack(&oconv, &iov, &cnt, &max);
                }
                rc = MCA_PML_CALL(isend(buf, ch->stream_len, MPI_BYTE, target, tag,
                                        MCA_PML_BASE_SEND_STANDARD, m->comm, &req));
            }
            if (OMPI_SUCCESS != rc) {
                free(buf);
                break;
            }
            mca_osc_hybrid_track(m, req, buf, hop, MCA_OSC_HYBRID_PEND_ORIGIN);
        }
    }

out:
    if (oconv_ready) {
        OBJ_DESTRUCT(&oconv);
    }
    if (NULL != hop) {
        mca_osc_hybrid_op_release(m, hop);
    } else if (OMPI_SUCCESS != rc && NULL != ureq && NULL != *ureq) {
        OBJ_RELEASE(*ureq);
        *ureq = NULL;
    }
    m->in_progress--;
    OPAL_THREAD_UNLOCK(&m->lock);
    if (segs != &one_seg) {
        free(segs);
    }
    free(ssegs);
    free(chunks);
    return rc;
}

int mca_osc_hybrid_put(const void *origin_addr, int origin_count, ompi_datatype_t *origin_dt,
                       int target, ptrdiff_t target_disp, int target_count,
                       ompi_datatype_t *target_dt, ompi_win_t *win)
{
    return mca_osc_hybrid_issue(win, MCA_OSC_HYBRID_HDR_PUT, origin_addr, origin_count, origin_dt,
                                NULL, NULL, 0, NULL, target, target_disp, target_count, target_dt,
                                NULL, NULL);
}

int mca_osc_hybrid_get(void *origin_addr, int origin_count, ompi_datatype_t *origin_dt, int target,
                       ptrdiff_t target_disp, int target_count, ompi_datatype_t *target_dt,
                       ompi_win_t *win)
{
    return mca_osc_hybrid_issue(win, MCA_OSC_HYBRID_HDR_GET, NULL, 0, NULL, NULL, origin_addr,
                                origin_count, origin_dt, target, target_disp, target_count,
                                target_dt, NULL, NULL);
}

int mca_osc_hybrid_accumulate(const void *origin_addr, int origin_count, ompi_datatype_t *origin_dt,
                              int target, ptrdiff_t target_disp, int target_count,
                              ompi_datatype_t *target_dt, ompi_op_t *op, ompi_win_t *win)
{
    return mca_osc_hybrid_issue(win, MCA_OSC_HYBRID_HDR_ACC, origin_addr, origin_count, origin_dt,
                                NULL, NULL, 0, NULL, target, target_disp, target_count, target_dt,
                                op, NULL);
}

int mca_osc_hybrid_get_accumulate(const void *origin_addr, int origin_count,
                                  ompi_datatype_t *origin_dt, void *result_addr, int result_count,
                                  ompi_datatype_t *result_dt, int target, ptrdiff_t target_disp,
                                  int target_count, ompi_datatype_t *target_dt, ompi_op_t *op,
                                  ompi_win_t *win)
{
    return mca_osc_hybrid_issue(win, MCA_OSC_HYBRID_HDR_GACC, origin_addr, origin_count, origin_dt,
                                NULL, result_addr, result_count, result_dt, target, target_disp,
                                target_count, target_dt, op, NULL);
}

int mca_osc_hybrid_fetch_and_op(const void *origin_addr, void *result_addr, ompi_datatype_t *dt,
                                int target, ptrdiff_t target_disp, ompi_op_t *op, ompi_win_t *win)
{
    return mca_osc_hybrid_issue(win, MCA_OSC_HYBRID_HDR_GACC, origin_addr, 1, dt, NULL, result_addr,
                                1, dt, target, target_disp, 1, dt, op, NULL);
}

int mca_osc_hybrid_compare_and_swap(const void *origin_addr, const void *compare_addr,
                                    void *result_addr, ompi_datatype_t *dt, int target,
                                    ptrdiff_t target_disp, ompi_win_t *win)
{
    return mca_osc_hybrid_issue(win, MCA_OSC_HYBRID_HDR_CAS, origin_addr, 1, dt, compare_addr,
                                result_addr, 1, dt, target, target_disp, 1, dt, NULL, NULL);
}

int mca_osc_hybrid_rput(const void *origin_addr, int origin_count, ompi_datatype_t *origin_dt,
                        int target, ptrdiff_t target_disp, int target_count,
                        ompi_datatype_t *target_dt, ompi_win_t *win, ompi_request_t **req)
{
    return mca_osc_hybrid_issue(win, MCA_OSC_HYBRID_HDR_PUT, origin_addr, origin_count, origin_dt,
                                NULL, NULL, 0, NULL, target, target_disp, target_count, target_dt,
                                NULL, req);
}

int mca_osc_hybrid_rget(void *origin_addr, int origin_count, ompi_datatype_t *origin_dt, int target,
                        ptrdiff_t target_disp, int target_count, ompi_datatype_t *target_dt,
                        ompi_win_t *win, ompi_request_t **req)
{
    return mca_osc_hybrid_issue(win, MCA_OSC_HYBRID_HDR_GET, NULL, 0, NULL, NULL, origin_addr,
                                origin_count, origin_dt, target, target_disp, target_count,
                                target_dt, NULL, req);
}

int mca_osc_hybrid_raccumulate(const void *origin_addr, int origin_count,
                               ompi_datatype_t *origin_dt, int target, ptrdiff_t target_disp,
                               int target_count, ompi_datatype_t *target_dt, ompi_op_t *op,
                               ompi_win_t *win, ompi_request_t **req)
{
    return mca_osc_hybrid_issue(win, MCA_OSC_HYBRID_HDR_ACC, origin_addr, origin_count, origin_dt,
                                NULL, NULL, 0, NULL, target, target_disp, target_count, target_dt,
                                op, req);
}

int mca_osc_hybrid_rget_accumulate(const void *origin_addr, int origin_count,
                                   ompi_datatype_t *origin_dt, void *result_addr, int result_count,
                                   ompi_datatype_t *result_dt, int target, ptrdiff_t target_disp,
                                   int target_count, ompi_datatype_t *target_dt, ompi_op_t *op,
                                   ompi_win_t *win, ompi_request_t **req)
{
    return mca_osc_hybrid_issue(win, MCA_OSC_HYBRID_HDR_GACC, origin_addr, origin_count, origin_dt,
                                NULL, result_addr, result_count, result_dt, target, target_disp,
                                target_count, target_dt, op, req);
}
