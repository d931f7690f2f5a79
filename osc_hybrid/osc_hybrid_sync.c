/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * osc_hybrid_sync.c: osc/hybrid's synchronisation calls: fence, post /
 * start / complete / wait / test, lock / unlock (shared and exclusive),
 * lock_all / unlock_all, the flush family and sync. Completion at a target
 * rests on one rule: a target applies the requests of one origin in the
 * order they were sent, so a notice (FLUSH, UNLOCK, COMPLETE) is answered
 * only after every request the origin sent before it.
 */

#include "ompi_config.h"

#include <stdlib.h>

#include "opal/runtime/opal_progress.h"
#include "opal/sys/atomic.h"
#include "ompi/group/group.h"
#include "ompi/mca/pml/pml.h"

#include "tc_atomic.h"
#include "osc_hybrid.h"

#define MCA_OSC_HYBRID_NOCHECK 0x100 /* lock taken with MPI_MODE_NOCHECK */

/* Spins the progress engine until cond (evaluated under the module lock)
 * holds. The window's own requests are looked at before each round of the
 * progress engine: a send that completed inside the PML call needs no
 * further poll of the network. */
#define MCA_OSC_HYBRID_WAIT_UNTIL(m, cond)     \
    do {                                       \
        for (;;) {                             \
            bool ok_;                          \
            OPAL_THREAD_LOCK(&(m)->lock);      \
            mca_osc_hybrid_progress_module(m); \
            ok_ = (cond);                      \
            OPAL_THREAD_UNLOCK(&(m)->lock);    \
            if (ok_) {                         \
                break;                         \
            }                                  \
            opal_progress();                   \
        }                                      \
    } while (0)

/* The same, giving up once lost (also evaluated under the module lock)
 * holds while cond does not: rc is then TC_OMPI_ERR_PROC_FAILED. Used
 * where the answer comes from a peer, which may have failed (MPI fault
 * tolerance; lost is false without it, osc_hybrid_ft.c). */
#define MCA_OSC_HYBRID_WAIT_OR_LOST(m, cond, lost, rc) \
    do {                                               \
        for (;;) {                                     \
            bool ok_, lost_;                           \
            OPAL_THREAD_LOCK(&(m)->lock);              \
            mca_osc_hybrid_progress_module(m);         \
            ok_ = (cond);                              \
            lost_ = !ok_ && (lost);                    \
            OPAL_THREAD_UNLOCK(&(m)->lock);            \
            if (ok_) {                                 \
                break;                                 \
            }                                          \
            if (lost_) {                               \
                (rc) = TC_OMPI_ERR_PROC_FAILED;        \
                break;                                 \
            }                                          \
            opal_progress();                           \
        }                                              \
    } while (0)

/* Takes the first error a target reported since the last call. */
static int mca_osc_hybrid_take_error(mca_osc_hybrid_module_t *m)
{
    int err, rdma_err;

    OPAL_THREAD_LOCK(&m->lock);
    err = m->error;
    m->error = 0;
    /* RDMA callbacks set it from any thread without the lock: taken and
     * cleared in one step, so none lands between a read and a clear */
    rdma_err = tc_atomic_swap(&m->rdma_error, 0);
    if (0 == err) {
        err = rdma_err;
    }
    OPAL_THREAD_UNLOCK(&m->lock);
    return err;
}

static int mca_osc_hybrid_ctl(mca_osc_hybrid_module_t *m, int dst, int type, int arg,
                              uint64_t *counter, uint64_t *ticket)
{
    int rc;

    OPAL_THREAD_LOCK(&m->lock);
    m->in_progress++;
    if (NULL != counter) {
        *ticket = ++counter[dst];
    }
    rc = mca_osc_hybrid_agg_ctl(m, dst, type, arg);
    m->in_progress--;
    OPAL_THREAD_UNLOCK(&m->lock);
    return rc;
}

int mca_osc_hybrid_drain_origin(mca_osc_hybrid_module_t *m)
{
    OPAL_THREAD_LOCK(&m->lock);
    (void) mca_osc_hybrid_agg_send_all(m);
    OPAL_THREAD_UNLOCK(&m->lock);
    MCA_OSC_HYBRID_WAIT_UNTIL(m, 0 == m->origin_pending && 0 == m->rdma_pending);
    mca_osc_hybrid_rdma_flush(m);
    opal_atomic_rmb();
    return OMPI_SUCCESS;
}

/* RDMA transfers complete before a notice that ends an epoch at the
 * target (UNLOCK, COMPLETE): the target cannot see them otherwise. Active
 * messages need no wait, the notice travels behind them. */
static void mca_osc_hybrid_drain_rdma(mca_osc_hybrid_module_t *m)
{
    MCA_OSC_HYBRID_WAIT_UNTIL(m, 0 == m->rdma_pending);
    mca_osc_hybrid_rdma_flush(m);
    opal_atomic_rmb();
}

/* Ranks of group in the window's communicator (caller frees). */
static int *mca_osc_hybrid_ranks(mca_osc_hybrid_module_t *m, ompi_group_t *group, int *n)
{
    int size = ompi_group_size(group);
    int *in = calloc(size + 1, sizeof(int));
    int *out = malloc((size + 1) * sizeof(int));
    int i;

    if (NULL == in || NULL == out) {
        free(in);
        free(out);
        return NULL;
    }
    for (i = 0; i < size; ++i) {
        in[i] = i;
    }
    if (OMPI_SUCCESS != ompi_group_translate_ranks(group, size, in, m->win->w_group, out)) {
        free(in);
        free(out);
        return NULL;
    }
    free(in);
    for (i = 0; i < size; ++i) {
        if (out[i] < 0 || out[i] >= m->size) {
            free(out);
            return NULL;
        }
    }
    *n = size;
    return out;
}

int mca_osc_hybrid_fence(int assert, ompi_win_t *win)
{
    mca_osc_hybrid_module_t *m = MCA_OSC_HYBRID_MOD(win);
    uint64_t *sent, expected = 0;
    int rc, err;

    OPAL_THREAD_LOCK(&m->lock);
    if (m->lock_all || m->nlocks > 0 || NULL != m->start_group || NULL != m->post_group) {
        OPAL_THREAD_UNLOCK(&m->lock);
        return OMPI_ERR_RMA_SYNC;
    }
    OPAL_THREAD_UNLOCK(&m->lock);

    mca_osc_hybrid_drain_origin(m);
    sent = malloc(m->size * sizeof(uint64_t));
    if (NULL == sent) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    OPAL_THREAD_LOCK(&m->lock);
    memcpy(sent, m->ops_sent, m->size * sizeof(uint64_t));
    OPAL_THREAD_UNLOCK(&m->lock);
    /* every process learns how many requests were ever sent to it */
    rc = m->comm->c_coll->coll_reduce_scatter_block(
        sent, &expected, 1, MPI_UINT64_T, MPI_SUM, m->comm,
        m->comm->c_coll->coll_reduce_scatter_block_module);
    free(sent);
    if (OMPI_SUCCESS != rc) {
        return rc;
    }
    /* applied, and every reply read out of the window (the collectives
     * around already order that; the window is the application's again
     * when this returns, with MPI_MODE_NOSUCCEED too) */
    rc = OMPI_SUCCESS;
    MCA_OSC_HYBRID_WAIT_OR_LOST(m, m->ops_done >= expected && 0 == m->wsend_pending,
                                0 != m->ft_dead, rc);
    if (OMPI_SUCCESS != rc) {
        return rc;
    }
    /* nobody starts the next epoch before everybody has applied this one
     * (a request of the next epoch could overtake one of this epoch from a
     * third process) */
    if (0 == (assert &MPI_MODE_NOSUCCEED)) {
        rc = m->comm->c_coll->coll_barrier(m->comm, m->comm->c_coll->coll_barrier_module);
        if (OMPI_SUCCESS != rc) {
            return rc;
        }
    }
    OPAL_THREAD_LOCK(&m->lock);
    m->fence_active = (0 == (assert &MPI_MODE_NOSUCCEED));
    OPAL_THREAD_UNLOCK(&m->lock);
    err = mca_osc_hybrid_take_error(m);
    return err;
}

int mca_osc_hybrid_post(ompi_group_t *group, int assert, ompi_win_t *win)
{
    mca_osc_hybrid_module_t *m = MCA_OSC_HYBRID_MOD(win);
    int *ranks, n = 0, i;

    OPAL_THREAD_LOCK(&m->lock);
    if (NULL != m->post_group) {
        OPAL_THREAD_UNLOCK(&m->lock);
        return OMPI_ERR_RMA_SYNC;
    }
    OPAL_THREAD_UNLOCK(&m->lock);
    ranks = mca_osc_hybrid_ranks(m, group, &n);
    if (NULL == ranks) {
        return OMPI_ERR_BAD_PARAM;
    }
    OPAL_THREAD_LOCK(&m->lock);
    OBJ_RETAIN(group);
    m->post_group = group;
    m->post_size = n;
    OPAL_THREAD_UNLOCK(&m->lock);
    if (0 == (assert &MPI_MODE_NOCHECK)) {
        for (i = 0; i < n; ++i) {
            mca_osc_hybrid_ctl(m, ranks[i], MCA_OSC_HYBRID_HDR_POST, 0, NULL, NULL);
        }
    }
    free(ranks);
    return OMPI_SUCCESS;
}

int mca_osc_hybrid_start(ompi_group_t *group, int assert, ompi_win_t *win)
{
    mca_osc_hybrid_module_t *m = MCA_OSC_HYBRID_MOD(win);
    int *ranks, n = 0, i;

    OPAL_THREAD_LOCK(&m->lock);
    if (NULL != m->start_group) {
        OPAL_THREAD_UNLOCK(&m->lock);
        return OMPI_ERR_RMA_SYNC;
    }
    OPAL_THREAD_UNLOCK(&m->lock);
    ranks = mca_osc_hybrid_ranks(m, group, &n);
    if (NULL == ranks) {
        return OMPI_ERR_BAD_PARAM;
    }
    if (0 == (assert &MPI_MODE_NOCHECK)) {
        /* every target of the group must have posted */
        for (i = 0; i < n; ++i) {
            int r = ranks[i], rc = OMPI_SUCCESS;
            MCA_OSC_HYBRID_WAIT_OR_LOST(m, m->posts_recv[r] > 0, mca_osc_hybrid_ft_failed(m, r),
                                        rc);
            if (OMPI_SUCCESS != rc) {
                free(ranks);
                return rc;
            }
            OPAL_THREAD_LOCK(&m->lock);
            m->posts_recv[r]--;
            OPAL_THREAD_UNLOCK(&m->lock);
        }
    }
    OPAL_THREAD_LOCK(&m->lock);
    OBJ_RETAIN(group);
    m->start_group = group;
    for (i = 0; i < n; ++i) {
        m->start_member[ranks[i]] = true;
    }
    OPAL_THREAD_UNLOCK(&m->lock);
    free(ranks);
    return OMPI_SUCCESS;
}

int mca_osc_hybrid_complete(ompi_win_t *win)
{
    mca_osc_hybrid_module_t *m = MCA_OSC_HYBRID_MOD(win);
    ompi_group_t *group;
    int *ranks, n = 0, i, rc;
    bool lost;

    OPAL_THREAD_LOCK(&m->lock);
    group = m->start_group;
    OPAL_THREAD_UNLOCK(&m->lock);
    if (NULL == group) {
        return OMPI_ERR_RMA_SYNC;
    }
    ranks = mca_osc_hybrid_ranks(m, group, &n);
    if (NULL == ranks) {
        return OMPI_ERR_BAD_PARAM;
    }
    mca_osc_hybrid_drain_rdma(m);
    for (i = 0; i < n; ++i) {
        mca_osc_hybrid_ctl(m, ranks[i], MCA_OSC_HYBRID_HDR_COMPLETE, 0, NULL, NULL);
    }
    mca_osc_hybrid_drain_origin(m);
    OPAL_THREAD_LOCK(&m->lock);
    for (i = 0; i < n; ++i) {
        m->start_member[ranks[i]] = false;
    }
    m->start_group = NULL;
    lost = mca_osc_hybrid_ft_any_failed(m, ranks, n);
    OPAL_THREAD_UNLOCK(&m->lock);
    OBJ_RELEASE(group);
    free(ranks);
    rc = mca_osc_hybrid_take_error(m);
    return lost ? TC_OMPI_ERR_PROC_FAILED : rc;
}

int mca_osc_hybrid_wait(ompi_win_t *win)
{
    mca_osc_hybrid_module_t *m = MCA_OSC_HYBRID_MOD(win);
    ompi_group_t *group;
    int *ranks, n = 0, rc = OMPI_SUCCESS;

    OPAL_THREAD_LOCK(&m->lock);
    group = m->post_group;
    OPAL_THREAD_UNLOCK(&m->lock);
    if (NULL == group) {
        return OMPI_ERR_RMA_SYNC;
    }
    ranks = mca_osc_hybrid_ranks(m, group, &n);
    if (NULL == ranks) {
        return OMPI_ERR_BAD_PARAM;
    }
    /* a member of the group that failed never completes */
    MCA_OSC_HYBRID_WAIT_OR_LOST(m, m->completes_recv >= m->post_size,
                                mca_osc_hybrid_ft_any_failed(m, ranks, n), rc);
    free(ranks);
    OPAL_THREAD_LOCK(&m->lock);
    m->completes_recv -= m->completes_recv < m->post_size ? m->completes_recv : m->post_size;
    m->post_group = NULL;
    m->post_size = 0;
    OPAL_THREAD_UNLOCK(&m->lock);
    OBJ_RELEASE(group);
    if (OMPI_SUCCESS != rc) {
        (void) mca_osc_hybrid_take_error(m);
        return rc;
    }
    return mca_osc_hybrid_take_error(m);
}

int mca_osc_hybrid_test(ompi_win_t *win, int *flag)
{
    mca_osc_hybrid_module_t *m = MCA_OSC_HYBRID_MOD(win);
    ompi_group_t *group = NULL;
    bool lost = false;
    int rc;

    *flag = 0;
    opal_progress();
    OPAL_THREAD_LOCK(&m->lock);
    if (NULL == m->post_group) {
        OPAL_THREAD_UNLOCK(&m->lock);
        return OMPI_ERR_RMA_SYNC;
    }
    if (m->completes_recv < m->post_size && 0 != m->ft_dead) {
        /* a member of the group that failed never completes */
        int *ranks, n = 0;

        ranks = mca_osc_hybrid_ranks(m, m->post_group, &n);
        lost = NULL != ranks && mca_osc_hybrid_ft_any_failed(m, ranks, n);
        free(ranks);
    }
    if (m->completes_recv >= m->post_size || lost) {
        m->completes_recv -= m->completes_recv < m->post_size ? m->completes_recv : m->post_size;
        group = m->post_group;
        m->post_group = NULL;
        m->post_size = 0;
        *flag = 1;
    }
    OPAL_THREAD_UNLOCK(&m->lock);
    if (NULL != group) {
        OBJ_RELEASE(group);
        rc = mca_osc_hybrid_take_error(m);
        return lost ? TC_OMPI_ERR_PROC_FAILED : rc;
    }
    return OMPI_SUCCESS;
}

int mca_osc_hybrid_lock(int lock_type, int target, int assert, ompi_win_t *win)
{
    mca_osc_hybrid_module_t *m = MCA_OSC_HYBRID_MOD(win);
    uint64_t ticket = 0;
    int rc;

    if (target < 0 || target >= m->size) {
        return OMPI_ERR_BAD_PARAM;
    }
    OPAL_THREAD_LOCK(&m->lock);
    if (m->lock_all || 0 != m->lock_type[target] || m->fence_active || NULL != m->start_group) {
        /* an active fence epoch is left by the next fence; MPI forbids
         * mixing it with passive target synchronisation */
        if (m->fence_active && !m->lock_all && 0 == m->lock_type[target] &&
            NULL == m->start_group) {
            m->fence_active = false; /* fence epoch without ops: closed */
        } else {
            OPAL_THREAD_UNLOCK(&m->lock);
            return OMPI_ERR_RMA_SYNC;
        }
    }
    m->lock_type[target] = lock_type | ((assert &MPI_MODE_NOCHECK) ? MCA_OSC_HYBRID_NOCHECK : 0);
    m->nlocks++;
    OPAL_THREAD_UNLOCK(&m->lock);
    if (assert & MPI_MODE_NOCHECK) {
        return OMPI_SUCCESS;
    }
    rc = mca_osc_hybrid_ctl(m, target, MCA_OSC_HYBRID_HDR_LOCK, lock_type, m->lock_req, &ticket);
    if (OMPI_SUCCESS != rc) {
        return rc;
    }
    MCA_OSC_HYBRID_WAIT_OR_LOST(m, m->lock_ack[target] >= ticket,
                                mca_osc_hybrid_ft_failed(m, target), rc);
    if (OMPI_SUCCESS != rc) {
        /* the target failed: no lock, no epoch */
        OPAL_THREAD_LOCK(&m->lock);
        m->lock_type[target] = 0;
        m->nlocks--;
        OPAL_THREAD_UNLOCK(&m->lock);
    }
    return rc;
}

/* Ends the access to target: UNLOCK (or FLUSH for a NOCHECK lock), and
 * waits for the answer, which comes after everything sent before it. */
static int mca_osc_hybrid_release_target(mca_osc_hybrid_module_t *m, int target, int type,
                                         uint64_t *ticket)
{
    if (type & MCA_OSC_HYBRID_NOCHECK) {
        return mca_osc_hybrid_ctl(m, target, MCA_OSC_HYBRID_HDR_FLUSH, 0, m->flush_req, ticket);
    }
    return mca_osc_hybrid_ctl(m, target, MCA_OSC_HYBRID_HDR_UNLOCK, 0, m->unlock_req, ticket);
}

static bool mca_osc_hybrid_released(mca_osc_hybrid_module_t *m, int target, int type,
                                    uint64_t ticket)
{
    if (type & MCA_OSC_HYBRID_NOCHECK) {
        return m->flush_ack[target] >= ticket;
    }
    return m->unlock_ack[target] >= ticket;
}

int mca_osc_hybrid_unlock(int target, ompi_win_t *win)
{
    mca_osc_hybrid_module_t *m = MCA_OSC_HYBRID_MOD(win);
    uint64_t ticket = 0;
    int type, rc;

    if (target < 0 || target >= m->size) {
        return OMPI_ERR_BAD_PARAM;
    }
    OPAL_THREAD_LOCK(&m->lock);
    type = m->lock_type[target];
    OPAL_THREAD_UNLOCK(&m->lock);
    if (0 == type) {
        return OMPI_ERR_RMA_SYNC;
    }
    mca_osc_hybrid_drain_rdma(m);
    rc = mca_osc_hybrid_release_target(m, target, type, &ticket);
    if (OMPI_SUCCESS != rc) {
        return rc;
    }
    mca_osc_hybrid_drain_origin(m);
    MCA_OSC_HYBRID_WAIT_OR_LOST(m, mca_osc_hybrid_released(m, target, type, ticket),
                                mca_osc_hybrid_ft_failed(m, target), rc);
    OPAL_THREAD_LOCK(&m->lock);
    m->lock_type[target] = 0;
    m->nlocks--;
    OPAL_THREAD_UNLOCK(&m->lock);
    if (OMPI_SUCCESS != rc) {
        (void) mca_osc_hybrid_take_error(m);
        return rc;
    }
    return mca_osc_hybrid_take_error(m);
}

int mca_osc_hybrid_lock_all(int assert, ompi_win_t *win)
{
    mca_osc_hybrid_module_t *m = MCA_OSC_HYBRID_MOD(win);
    uint64_t *tickets;
    int i, rc = OMPI_SUCCESS, lost = OMPI_SUCCESS; /* a target failed: its lock is not held */

    OPAL_THREAD_LOCK(&m->lock);
    if (m->lock_all || m->nlocks > 0 || NULL != m->start_group) {
        OPAL_THREAD_UNLOCK(&m->lock);
        return OMPI_ERR_RMA_SYNC;
    }
    m->fence_active = false;
    m->lock_all = true;
    for (i = 0; i < m->size; ++i) {
        m->lock_type[i] =
            MPI_LOCK_SHARED | ((assert &MPI_MODE_NOCHECK) ? MCA_OSC_HYBRID_NOCHECK : 0);
    }
    OPAL_THREAD_UNLOCK(&m->lock);
    if (assert & MPI_MODE_NOCHECK) {
        return OMPI_SUCCESS;
    }
    tickets = calloc(m->size, sizeof(uint64_t));
    if (NULL == tickets) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    for (i = 0; i < m->size && OMPI_SUCCESS == rc; ++i) {
        rc = mca_osc_hybrid_ctl(m, i, MCA_OSC_HYBRID_HDR_LOCK, MPI_LOCK_SHARED, m->lock_req,
                                &tickets[i]);
    }
    for (i = 0; i < m->size && OMPI_SUCCESS == rc; ++i) {
        MCA_OSC_HYBRID_WAIT_OR_LOST(m, m->lock_ack[i] >= tickets[i], mca_osc_hybrid_ft_failed(m, i),
                                    lost);
    }
    free(tickets);
    return OMPI_SUCCESS != rc ? rc : lost;
}

int mca_osc_hybrid_unlock_all(ompi_win_t *win)
{
    mca_osc_hybrid_module_t *m = MCA_OSC_HYBRID_MOD(win);
    uint64_t *tickets;
    int i, type, rc = OMPI_SUCCESS, lost = OMPI_SUCCESS;

    OPAL_THREAD_LOCK(&m->lock);
    if (!m->lock_all) {
        OPAL_THREAD_UNLOCK(&m->lock);
        return OMPI_ERR_RMA_SYNC;
    }
    type = m->lock_type[0];
    OPAL_THREAD_UNLOCK(&m->lock);
    tickets = calloc(m->size, sizeof(uint64_t));
    if (NULL == tickets) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    mca_osc_hybrid_drain_rdma(m);
    for (i = 0; i < m->size && OMPI_SUCCESS == rc; ++i) {
        rc = mca_osc_hybrid_release_target(m, i, type, &tickets[i]);
    }
    mca_osc_hybrid_drain_origin(m);
    for (i = 0; i < m->size && OMPI_SUCCESS == rc; ++i) {
        MCA_OSC_HYBRID_WAIT_OR_LOST(m, mca_osc_hybrid_released(m, i, type, tickets[i]),
                                    mca_osc_hybrid_ft_failed(m, i), lost);
    }
    free(tickets);
    OPAL_THREAD_LOCK(&m->lock);
    for (i = 0; i < m->size; ++i) {
        m->lock_type[i] = 0;
    }
    m->lock_all = false;
    OPAL_THREAD_UNLOCK(&m->lock);
    if (OMPI_SUCCESS != rc) {
        return rc;
    }
    rc = mca_osc_hybrid_take_error(m);
    return OMPI_SUCCESS != lost ? lost : rc;
}

int mca_osc_hybrid_sync(ompi_win_t *win)
{
    (void) win;
    /* unified memory model: public and private copies are one */
    opal_atomic_mb();
    opal_progress();
    return OMPI_SUCCESS;
}

static bool mca_osc_hybrid_passive(mca_osc_hybrid_module_t *m, int target)
{
    bool ok;

    OPAL_THREAD_LOCK(&m->lock);
    ok = m->lock_all || 0 != m->lock_type[target];
    OPAL_THREAD_UNLOCK(&m->lock);
    return ok;
}

/* Asks target to acknowledge everything sent to it, unless no request
 * went to it since the last FLUSH that only a FLUSH acknowledges (a get,
 * get_accumulate or compare-and-swap is complete at the target when its
 * reply is in; RDMA transfers once drained): then only the last flush
 * already asked for must be answered. The FLUSH goes out behind the
 * requests gathered for the target, in the same message. */
static int mca_osc_hybrid_flush_target(mca_osc_hybrid_module_t *m, int target, uint64_t *ticket)
{
    int rc = OMPI_SUCCESS;

    OPAL_THREAD_LOCK(&m->lock);
    m->in_progress++;
    if (m->unacked[target] == m->flushed_at[target]) {
        /* a flush of another thread may still be on its way */
        *ticket = m->flush_req[target];
    } else {
        m->flushed_at[target] = m->unacked[target];
        *ticket = ++m->flush_req[target];
        rc = mca_osc_hybrid_agg_ctl(m, target, MCA_OSC_HYBRID_HDR_FLUSH, 0);
    }
    m->in_progress--;
    OPAL_THREAD_UNLOCK(&m->lock);
    return rc;
}

int mca_osc_hybrid_flush(int target, ompi_win_t *win)
{
    mca_osc_hybrid_module_t *m = MCA_OSC_HYBRID_MOD(win);
    uint64_t ticket = 0;
    int rc;

    if (target < 0 || target >= m->size) {
        return OMPI_ERR_BAD_PARAM;
    }
    if (!mca_osc_hybrid_passive(m, target)) {
        return OMPI_ERR_RMA_SYNC;
    }
    rc = mca_osc_hybrid_flush_target(m, target, &ticket);
    if (OMPI_SUCCESS != rc) {
        return rc;
    }
    OPAL_THREAD_LOCK(&m->lock);
    (void) mca_osc_hybrid_agg_send_all(m);
    OPAL_THREAD_UNLOCK(&m->lock);
    /* one wait for the answer and for local completion (the requests to a
     * failed target are cancelled, and complete) */
    MCA_OSC_HYBRID_WAIT_OR_LOST(
        m, m->flush_ack[target] >= ticket && 0 == m->origin_pending && 0 == m->rdma_pending,
        mca_osc_hybrid_ft_failed(m, target) && 0 == m->origin_pending && 0 == m->rdma_pending, rc);
    mca_osc_hybrid_rdma_flush(m);
    opal_atomic_rmb();
    if (OMPI_SUCCESS != rc) {
        (void) mca_osc_hybrid_take_error(m);
        return rc;
    }
    return mca_osc_hybrid_take_error(m);
}

int mca_osc_hybrid_flush_all(ompi_win_t *win)
{
    mca_osc_hybrid_module_t *m = MCA_OSC_HYBRID_MOD(win);
    uint64_t *tickets;
    int i, rc = OMPI_SUCCESS, lost = OMPI_SUCCESS;
    bool any = false;

    OPAL_THREAD_LOCK(&m->lock);
    any = m->lock_all || m->nlocks > 0;
    OPAL_THREAD_UNLOCK(&m->lock);
    if (!any) {
        return OMPI_ERR_RMA_SYNC;
    }
    tickets = calloc(m->size, sizeof(uint64_t));
    if (NULL == tickets) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    for (i = 0; i < m->size && OMPI_SUCCESS == rc; ++i) {
        if (mca_osc_hybrid_passive(m, i)) {
            rc = mca_osc_hybrid_flush_target(m, i, &tickets[i]);
        }
    }
    mca_osc_hybrid_drain_origin(m);
    for (i = 0; i < m->size && OMPI_SUCCESS == rc; ++i) {
        MCA_OSC_HYBRID_WAIT_OR_LOST(m, m->flush_ack[i] >= tickets[i],
                                    mca_osc_hybrid_ft_failed(m, i), lost);
    }
    free(tickets);
    if (OMPI_SUCCESS != rc) {
        return rc;
    }
    rc = mca_osc_hybrid_take_error(m);
    return OMPI_SUCCESS != lost ? lost : rc;
}

int mca_osc_hybrid_flush_local(int target, ompi_win_t *win)
{
    mca_osc_hybrid_module_t *m = MCA_OSC_HYBRID_MOD(win);

    if (target < 0 || target >= m->size) {
        return OMPI_ERR_BAD_PARAM;
    }
    if (!mca_osc_hybrid_passive(m, target)) {
        return OMPI_ERR_RMA_SYNC;
    }
    /* local completion: sends done, replies in */
    mca_osc_hybrid_drain_origin(m);
    return OMPI_SUCCESS;
}

int mca_osc_hybrid_flush_local_all(ompi_win_t *win)
{
    mca_osc_hybrid_module_t *m = MCA_OSC_HYBRID_MOD(win);
    bool any;

    OPAL_THREAD_LOCK(&m->lock);
    any = m->lock_all || m->nlocks > 0;
    OPAL_THREAD_UNLOCK(&m->lock);
    if (!any) {
        return OMPI_ERR_RMA_SYNC;
    }
    mca_osc_hybrid_drain_origin(m);
    return OMPI_SUCCESS;
}
