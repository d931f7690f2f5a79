/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * osc_hybrid_ft.c: a window whose peer died, under MPI fault tolerance
 * (Open MPI 5.0, mpirun --with-ft ulfm). The PML completes a request to a
 * failed process only inside MPI_Wait and its kin, which osc/hybrid never
 * calls on its internal requests (it polls them), so every progress call
 * looks for requests whose peer has failed and cancels them (ob1 grants
 * that for a dead peer): the operation completes with
 * MPI_ERR_PROC_FAILED instead of waiting for ever. As a target, the
 * locks a dead origin held or asked for are released, and what it still
 * sends is dropped. The synchronisation calls stop waiting for an
 * answer from a failed target (osc_hybrid_sync.c). A cancelled send that
 * the PML has not finished with yet (its transport may still hold it)
 * is kept until it has, then freed: freeing it earlier would make a
 * later error of that send fatal.
 *
 * Without fault tolerance a failure ends the job, and all of this is
 * idle: mca_osc_hybrid_ft_failed is false.
 */

#include "ompi_config.h"

#include <stdlib.h>

#include "opal/util/output.h"
#include "ompi/group/group.h"
#include "ompi/proc/proc.h"
#include "ompi/mca/osc/base/base.h"
#include "ompi/mca/pml/base/pml_base_request.h"

#include "osc_hybrid.h"

#if TC_OMPI_FT_MPI
#include "ompi/runtime/params.h"
#endif

bool mca_osc_hybrid_ft_failed(const mca_osc_hybrid_module_t *m, int rank)
{
#if TC_OMPI_FT_MPI
    ompi_proc_t *proc;

    if (!ompi_ftmpi_enabled || rank < 0 || rank >= m->size) {
        return false;
    }
    /* the process itself, not the group's placeholder: a peer this process
     * never talked to is a placeholder in the groups (lazy add_procs),
     * which ompi_comm_is_proc_active takes for alive, while the failure
     * report marks the process object */
    proc = ompi_group_get_proc_ptr(m->comm->c_local_group, rank, true);
    return NULL != proc && !ompi_proc_is_active(proc);
#else
    (void) m;
    (void) rank;
    return false;
#endif
}

bool mca_osc_hybrid_ft_any_failed(const mca_osc_hybrid_module_t *m, const int *ranks, int n)
{
    if (0 == m->ft_dead) {
        return false;
    }
    for (int i = 0; i < n; ++i) {
        if (mca_osc_hybrid_ft_failed(m, NULL != ranks ? ranks[i] : i)) {
            return true;
        }
    }
    return false;
}

/* The processes of the job known to have failed: a number that grows
 * with every failure (0 without fault tolerance). */
static int mca_osc_hybrid_ft_epoch(void)
{
#if TC_OMPI_FT_MPI
    int n = 0;

    if (!ompi_ftmpi_enabled) {
        return 0;
    }
    OPAL_THREAD_LOCK(&ompi_group_afp_mutex);
    if (NULL != ompi_group_all_failed_procs) {
        n = ompi_group_size(ompi_group_all_failed_procs);
    }
    OPAL_THREAD_UNLOCK(&ompi_group_afp_mutex);
    return n;
#else
    return 0;
#endif
}

/* As a target: the locks dead origin src held here are free again, its
 * queued requests gone; whoever waits may be granted now. */
static void mca_osc_hybrid_ft_release_locks(mca_osc_hybrid_module_t *m, int src)
{
    mca_osc_hybrid_lockq_t **pp = &m->lkq_head, *prev = NULL;
    bool queued = false;

    while (NULL != *pp) {
        mca_osc_hybrid_lockq_t *q = *pp;

        if (q->src != src) {
            prev = q;
            pp = &q->next;
            continue;
        }
        *pp = q->next;
        if (m->lkq_tail == q) {
            m->lkq_tail = prev;
        }
        free(q);
        queued = true;
    }
    if (!queued && 0 != m->lk_state[src]) {
        /* granted: give it back */
        if (m->lk_excl == src) {
            m->lk_excl = -1;
        } else if (m->lk_shared > 0) {
            m->lk_shared--;
        }
    }
    m->lk_state[src] = 0;
    mca_osc_hybrid_lock_grant(m);
}

void mca_osc_hybrid_ft_sweep(mca_osc_hybrid_module_t *m)
{
    int epoch = mca_osc_hybrid_ft_epoch();
    mca_osc_hybrid_pend_t *p;

    if (epoch != m->ft_epoch) {
        /* new failures somewhere in the job: which of ours are they? */
        m->ft_epoch = epoch;
        for (int r = 0; r < m->size; ++r) {
            if (!m->ft_gone[r] && mca_osc_hybrid_ft_failed(m, r)) {
                opal_output_verbose(10, ompi_osc_base_framework.framework_output,
                                    "osc/hybrid: rank %d of a window of %d failed", r, m->size);
                m->ft_gone[r] = true;
                m->ft_dead++;
                mca_osc_hybrid_ft_release_locks(m, r);
            }
        }
    }
    if (0 == m->ft_dead) {
        return;
    }
    /* requests with a dead peer, including those started since */
    for (p = m->pend; NULL != p; p = p->next) {
        int peer;

        if (p->lost || REQUEST_COMPLETE(p->req) || OMPI_REQUEST_PML != p->req->req_type) {
            continue;
        }
        peer = ((mca_pml_base_request_t *) p->req)->req_peer;
        if (peer >= 0 && peer < m->size && m->ft_gone[peer]) {
            p->lost = true;
            (void) ompi_request_cancel(p->req);
        }
    }
    /* cancelled sends the PML has finished with since */
    {
        mca_osc_hybrid_pend_t **pp = &m->ft_parked;

        while (NULL != *pp) {
            p = *pp;
            if (((mca_pml_base_request_t *) p->req)->req_pml_complete) {
                *pp = p->next;
                ompi_request_free(&p->req);
                free(p->freebuf);
                free(p);
            } else {
                pp = &p->next;
            }
        }
    }
}

bool mca_osc_hybrid_ft_park(mca_osc_hybrid_module_t *m, mca_osc_hybrid_pend_t *p)
{
    if (!p->lost || OMPI_REQUEST_PML != p->req->req_type ||
        ((mca_pml_base_request_t *) p->req)->req_pml_complete) {
        return false;
    }
    if (p->recycle) {
        /* a gathering buffer goes back to the pool only once free */
        p->recycle = false;
    }
    p->next = m->ft_parked;
    m->ft_parked = p;
    return true;
}

bool mca_osc_hybrid_ft_skip(const mca_osc_hybrid_module_t *m, int src)
{
    return 0 != m->ft_dead && src >= 0 && src < m->size && m->ft_gone[src];
}

void mca_osc_hybrid_ft_release(mca_osc_hybrid_module_t *m)
{
    /* sends to a dead peer that its transport never finished: the PML
     * may still touch them, so they are left to the end of the process */
    while (NULL != m->ft_parked) {
        mca_osc_hybrid_pend_t *p = m->ft_parked;

        m->ft_parked = p->next;
        if (((mca_pml_base_request_t *) p->req)->req_pml_complete) {
            ompi_request_free(&p->req);
            free(p->freebuf);
        }
        free(p);
    }
    free(m->ft_gone);
    m->ft_gone = NULL;
}
