/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * osc_hybrid_rdma.c: the RDMA path of osc/hybrid. When one BTL with
 * btl_put and btl_get reaches every other rank of a create or allocate
 * window (sci; via once it is there), each rank registers its window with
 * that BTL at creation and publishes address and registration handle; a
 * put or get between contiguous buffers then moves with the BTL's RDMA,
 * without the target's CPU. Completion is counted atomically, because the
 * BTL may call back inside btl_put itself or from any thread's progress;
 * the synchronisation calls wait for it like for every other op. All
 * other operations (and everything when no such BTL exists) take the
 * active-message path.
 *
 * A get is complete when its callback ran: the data is here, so it was
 * read. A put's callback may mean only that the origin buffer is free
 * again, so puts go by RDMA only where the BTL says a completed put is
 * visible at the target (MCA_BTL_FLAGS_RDMA_REMOTE_COMPLETION, 5.0), or
 * where btl_flush makes it so before a synchronisation answers for it;
 * elsewhere puts take the active-message path (see mca_osc_hybrid_rput_mode).
 */

#include "ompi_config.h"

#include <stdlib.h>
#include <string.h>

#include "opal/sys/atomic.h"
#include "tc_atomic.h"
#include "opal/mca/btl/btl.h"
#include "ompi/mca/bml/bml.h"
#include "ompi/mca/bml/base/base.h"
#include "ompi/proc/proc.h"

#include "osc_hybrid.h"

static void mca_osc_hybrid_bounce_release(mca_osc_hybrid_module_t *m);

/* The bounce buffer: only for BTLs that register memory (a BTL without
 * registration moves user buffers as they are). Failing to set it up
 * just leaves every transfer on the registering path. */
static void mca_osc_hybrid_bounce_setup(mca_osc_hybrid_module_t *m)
{
    size_t slot = (size_t) mca_osc_hybrid_component.rdma_bounce;
    mca_btl_base_module_t *btl = m->rbtl;

    if (0 == slot || NULL == btl->btl_register_mem) {
        return;
    }
    m->bslot = calloc(MCA_OSC_HYBRID_BOUNCE_SLOTS, sizeof(*m->bslot));
    if (NULL == m->bslot ||
        0 != posix_memalign((void **) &m->bounce, 64, slot * MCA_OSC_HYBRID_BOUNCE_SLOTS)) {
        m->bounce = NULL;
        goto off;
    }
    m->bounce_reg =
        btl->btl_register_mem(btl, MCA_BTL_ENDPOINT_ANY, m->bounce,
                              slot * MCA_OSC_HYBRID_BOUNCE_SLOTS, MCA_BTL_REG_FLAG_LOCAL_WRITE);
    if (NULL != m->bounce_reg) {
        return;
    }
off:
    mca_osc_hybrid_bounce_release(m);
}

static void mca_osc_hybrid_bounce_release(mca_osc_hybrid_module_t *m)
{
    if (NULL != m->bounce_reg && NULL != m->rbtl && NULL != m->rbtl->btl_deregister_mem) {
        m->rbtl->btl_deregister_mem(m->rbtl, m->bounce_reg);
    }
    m->bounce_reg = NULL;
    free(m->bounce);
    free(m->bslot);
    m->bounce = NULL;
    m->bslot = NULL;
}

/* A free slot, taken; -1 when all are in flight. */
static int mca_osc_hybrid_bounce_take(mca_osc_hybrid_module_t *m)
{
    int i;

    for (i = 0; i < MCA_OSC_HYBRID_BOUNCE_SLOTS; ++i) {
        int32_t expect = 0;
        if (0 == tc_atomic_load_relaxed(&m->bslot[i].busy) &&
            tc_atomic_cswap(&m->bslot[i].busy, &expect, 1)) {
            return i;
        }
    }
    return -1;
}

static void mca_osc_hybrid_bounce_done(mca_btl_base_module_t *btl,
                                       struct mca_btl_base_endpoint_t *endpoint,
                                       void *local_address,
                                       mca_btl_base_registration_handle_t *local_handle,
                                       void *context, void *cbdata, int status)
{
    mca_osc_hybrid_module_t *m = context;
    mca_osc_hybrid_bounce_t *b = cbdata;

    (void) btl;
    (void) endpoint;
    (void) local_handle;
    if (OPAL_SUCCESS != status) {
        /* a BTL fails the transfers to a lost peer with OPAL_ERR_UNREACH */
        tc_atomic_store_release(&m->rdma_error,
                                OPAL_ERR_UNREACH == status ? TC_OMPI_ERR_PROC_FAILED : OMPI_ERROR);
    } else if (NULL != b->dst) {
        memcpy(b->dst, local_address, b->len);
    }
    tc_atomic_store_release(&b->busy, 0);
    opal_atomic_wmb();
    (void) opal_atomic_add_fetch_32(&m->rdma_pending, -1);
}

/* How an RDMA put of btl becomes visible at its target. 5.0 BTLs say so
 * with MCA_BTL_FLAGS_RDMA_REMOTE_COMPLETION (sci; via with its emulated
 * NIC). 4.1's interface has no such flag: there the components whose put
 * is a copy done by the CPU before the callback are named (sci's
 * remote-write segments; vader's single-copy mechanisms, cma and xpmem,
 * and knem used synchronously). A BTL with btl_flush is flushed. */
static int mca_osc_hybrid_rput_mode(const mca_btl_base_module_t *btl)
{
#if TC_OMPI_SERIES >= 50
    if (btl->btl_flags & MCA_BTL_FLAGS_RDMA_REMOTE_COMPLETION) {
        return MCA_OSC_HYBRID_RPUT_COMPLETE;
    }
#else
    const char *name = btl->btl_component->btl_version.mca_component_name;
    if (0 == strcmp(name, "sci") || 0 == strcmp(name, "vader")) {
        return MCA_OSC_HYBRID_RPUT_COMPLETE;
    }
#endif
    if ((btl->btl_flags & MCA_BTL_FLAGS_RDMA_FLUSH) && NULL != btl->btl_flush) {
        return MCA_OSC_HYBRID_RPUT_FLUSH;
    }
    return MCA_OSC_HYBRID_RPUT_NONE;
}

void mca_osc_hybrid_rdma_flush(mca_osc_hybrid_module_t *m)
{
    int32_t one = 1;

    if (MCA_OSC_HYBRID_RPUT_FLUSH != m->rput || NULL == m->rbtl ||
        !tc_atomic_cswap(&m->rdma_unflushed, &one, 0)) {
        return;
    }
    if (OPAL_SUCCESS != m->rbtl->btl_flush(m->rbtl, NULL)) {
        tc_atomic_store_release(&m->rdma_error, OMPI_ERROR);
    }
}

/* The BTL that carries RDMA to peer, or NULL. */
static mca_bml_base_btl_t *mca_osc_hybrid_rdma_btl(mca_osc_hybrid_module_t *m, int peer)
{
    ompi_proc_t *proc = ompi_comm_peer_lookup(m->comm, peer);
    mca_bml_base_endpoint_t *ep;

    if (NULL == proc) {
        return NULL;
    }
    ep = mca_bml_base_get_endpoint(proc);
    if (NULL == ep || 0 == mca_bml_base_btl_array_get_size(&ep->btl_rdma)) {
        return NULL;
    }
    return mca_bml_base_btl_array_get_index(&ep->btl_rdma, 0);
}

int mca_osc_hybrid_rdma_setup(mca_osc_hybrid_module_t *m)
{
    mca_btl_base_module_t *btl = NULL;
    int n = m->size, i, ok = 1, all_ok = 0, rc;
    size_t hsize = 0;
    uint64_t mine;
    char *hbuf = NULL;

    if (!mca_osc_hybrid_component.rdma || MPI_WIN_FLAVOR_DYNAMIC == m->flavor) {
        ok = 0;
    }
    m->rep = calloc(n, sizeof(*m->rep));
    if (NULL == m->rep) {
        ok = 0;
    }
    for (i = 0; ok && i < n; ++i) {
        mca_bml_base_btl_t *b;
        if (i == m->rank) {
            continue;
        }
        b = mca_osc_hybrid_rdma_btl(m, i);
        if (NULL == b || NULL == b->btl->btl_put || NULL == b->btl->btl_get ||
            (NULL != btl && b->btl != btl) ||
            (b->btl->btl_flags & (MCA_BTL_FLAGS_PUT | MCA_BTL_FLAGS_GET)) !=
                (MCA_BTL_FLAGS_PUT | MCA_BTL_FLAGS_GET)) {
            ok = 0;
            break;
        }
        btl = b->btl;
        m->rep[i] = b->btl_endpoint;
    }
    if (NULL == btl) {
        ok = 0;
    }
    if (ok && NULL != btl->btl_register_mem && m->win_size > 0) {
        m->wreg = btl->btl_register_mem(btl, MCA_BTL_ENDPOINT_ANY, m->base, m->win_size,
                                        MCA_BTL_REG_FLAG_ACCESS_ANY);
        if (NULL == m->wreg) {
            ok = 0;
        }
    }
    /* every rank must agree, and the handle size must be the same */
    if (ok && NULL != btl->btl_register_mem) {
        hsize = btl->btl_registration_handle_size;
    }
    rc = m->comm->c_coll->coll_allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, m->comm,
                                         m->comm->c_coll->coll_allreduce_module);
    if (OMPI_SUCCESS != rc || !all_ok) {
        goto off;
    }
    {
        uint64_t hs = hsize, hmax = 0;
        rc = m->comm->c_coll->coll_allreduce(&hs, &hmax, 1, MPI_UINT64_T, MPI_MAX, m->comm,
                                             m->comm->c_coll->coll_allreduce_module);
        if (OMPI_SUCCESS != rc || hmax != hs) {
            goto off;
        }
    }
    m->rbase = calloc(n, sizeof(uint64_t));
    m->rhandles = calloc(n, hsize + 1);
    hbuf = calloc(1, hsize + 1);
    if (NULL == m->rbase || NULL == m->rhandles || NULL == hbuf) {
        goto off; /* cannot happen quietly for one rank only: see below */
    }
    if (NULL != m->wreg) {
        memcpy(hbuf, m->wreg, hsize);
    }
    mine = (uint64_t) (uintptr_t) m->base;
    rc = m->comm->c_coll->coll_allgather(&mine, 1, MPI_UINT64_T, m->rbase, 1, MPI_UINT64_T, m->comm,
                                         m->comm->c_coll->coll_allgather_module);
    if (OMPI_SUCCESS == rc && hsize > 0) {
        rc = m->comm->c_coll->coll_allgather(hbuf, hsize, MPI_BYTE, m->rhandles, hsize, MPI_BYTE,
                                             m->comm, m->comm->c_coll->coll_allgather_module);
    }
    free(hbuf);
    if (OMPI_SUCCESS != rc) {
        return rc;
    }
    m->rbtl = btl;
    m->hsize = hsize;
    m->rput = mca_osc_hybrid_rput_mode(btl);
    mca_osc_hybrid_bounce_setup(m);
    return OMPI_SUCCESS;

off:
    free(hbuf);
    mca_osc_hybrid_rdma_release(m);
    return OMPI_SUCCESS;
}

void mca_osc_hybrid_rdma_release(mca_osc_hybrid_module_t *m)
{
    mca_osc_hybrid_bounce_release(m);
    if (NULL != m->wreg && NULL != m->rbtl && NULL != m->rbtl->btl_deregister_mem) {
        m->rbtl->btl_deregister_mem(m->rbtl, m->wreg);
    } else if (NULL != m->wreg) {
        /* registered, but RDMA was turned off collectively: find the BTL again */
        int i;
        for (i = 0; i < m->size; ++i) {
            mca_bml_base_btl_t *b;
            if (i == m->rank) {
                continue;
            }
            b = mca_osc_hybrid_rdma_btl(m, i);
            if (NULL != b && NULL != b->btl->btl_deregister_mem) {
                b->btl->btl_deregister_mem(b->btl, m->wreg);
            }
            break;
        }
    }
    m->wreg = NULL;
    m->rbtl = NULL;
    free(m->rep);
    free(m->rbase);
    free(m->rhandles);
    m->rep = NULL;
    m->rbase = NULL;
    m->rhandles = NULL;
}

static void mca_osc_hybrid_rdma_done(mca_btl_base_module_t *btl,
                                     struct mca_btl_base_endpoint_t *endpoint, void *local_address,
                                     mca_btl_base_registration_handle_t *local_handle,
                                     void *context, void *cbdata, int status)
{
    mca_osc_hybrid_module_t *m = context;

    (void) endpoint;
    (void) local_address;
    (void) cbdata;
    if (NULL != local_handle && NULL != btl->btl_deregister_mem) {
        btl->btl_deregister_mem(btl, local_handle);
    }
    if (OPAL_SUCCESS != status) {
        /* a BTL fails the transfers to a lost peer with OPAL_ERR_UNREACH */
        tc_atomic_store_release(&m->rdma_error,
                                OPAL_ERR_UNREACH == status ? TC_OMPI_ERR_PROC_FAILED : OMPI_ERROR);
    }
    opal_atomic_wmb();
    (void) opal_atomic_add_fetch_32(&m->rdma_pending, -1);
}

/* Tries one contiguous put or get with the BTL's RDMA. Returns
 * OMPI_SUCCESS when the transfer was started, OMPI_ERR_NOT_AVAILABLE when
 * the caller must use active messages. The caller has checked the epoch
 * and the range. */
int mca_osc_hybrid_rdma_try(mca_osc_hybrid_module_t *m, bool is_put, void *oaddr, int ocount,
                            ompi_datatype_t *odt, int target, ptrdiff_t tdisp, int tcount,
                            ompi_datatype_t *tdt)
{
    mca_btl_base_module_t *btl = m->rbtl;
    mca_btl_base_registration_handle_t *lh = NULL, *rh = NULL;
    mca_btl_base_rdma_completion_fn_t done = mca_osc_hybrid_rdma_done;
    mca_osc_hybrid_bounce_t *bslot = NULL;
    ptrdiff_t olb, oext, tlb, text;
    size_t size = (size_t) tdt->super.size * (size_t) tcount;
    char *laddr;
    uint64_t raddr;
    int rc;

    if (NULL == btl || target == m->rank || (is_put && MCA_OSC_HYBRID_RPUT_NONE == m->rput) ||
        size < (size_t) mca_osc_hybrid_component.rdma_min ||
        size != (size_t) odt->super.size * (size_t) ocount ||
        !ompi_datatype_is_contiguous_memory_layout(odt, ocount) ||
        !ompi_datatype_is_contiguous_memory_layout(tdt, tcount) ||
        size > (is_put ? btl->btl_put_limit : btl->btl_get_limit)) {
        return OMPI_ERR_NOT_AVAILABLE;
    }
    ompi_datatype_get_true_extent(odt, &olb, &oext);
    ompi_datatype_get_true_extent(tdt, &tlb, &text);
    laddr = (char *) oaddr + olb;
    raddr = m->rbase[target] + (uint64_t) (tdisp * m->peer_disp_unit[target]) + (uint64_t) tlb;
    if (m->hsize > 0) {
        rh = (mca_btl_base_registration_handle_t *) (m->rhandles + (size_t) target * m->hsize);
    }
    /* the origin side: a bounce slot, or the user buffer registered now */
    if (NULL != m->bounce && size <= (size_t) mca_osc_hybrid_component.rdma_bounce) {
        int i = mca_osc_hybrid_bounce_take(m);
        if (i >= 0) {
            bslot = &m->bslot[i];
            bslot->len = size;
            bslot->dst = is_put ? NULL : laddr;
            laddr = m->bounce + (size_t) i * (size_t) mca_osc_hybrid_component.rdma_bounce;
            if (is_put) {
                memcpy(laddr, (char *) oaddr + olb, size);
            }
            lh = m->bounce_reg;
            done = mca_osc_hybrid_bounce_done;
        }
    }
    if (NULL == bslot && NULL != btl->btl_register_mem) {
        lh = btl->btl_register_mem(btl, m->rep[target], laddr, size,
                                   is_put ? 0 : MCA_BTL_REG_FLAG_LOCAL_WRITE);
        if (NULL == lh) {
            return OMPI_ERR_NOT_AVAILABLE;
        }
    }
    (void) opal_atomic_add_fetch_32(&m->rdma_pending, 1);
    if (is_put && MCA_OSC_HYBRID_RPUT_FLUSH == m->rput) {
        tc_atomic_store_release(&m->rdma_unflushed, 1);
    }
    if (is_put) {
        rc = btl->btl_put(btl, m->rep[target], laddr, raddr, lh, rh, size, 0, MCA_BTL_NO_ORDER,
                          done, m, bslot);
    } else {
        rc = btl->btl_get(btl, m->rep[target], laddr, raddr, lh, rh, size, 0, MCA_BTL_NO_ORDER,
                          done, m, bslot);
    }
    if (1 == rc) {
        /* completed in place without a callback */
        done(btl, m->rep[target], laddr, lh, m, bslot, OPAL_SUCCESS);
        rc = OMPI_SUCCESS;
    }
    if (OPAL_SUCCESS != rc) {
        (void) opal_atomic_add_fetch_32(&m->rdma_pending, -1);
        if (NULL != bslot) {
            tc_atomic_store_release(&bslot->busy, 0);
        } else if (NULL != lh && NULL != btl->btl_deregister_mem) {
            btl->btl_deregister_mem(btl, lh);
        }
        return OMPI_ERR_NOT_AVAILABLE;
    }
    return OMPI_SUCCESS;
}
