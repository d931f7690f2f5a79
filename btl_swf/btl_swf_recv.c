/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * btl_swf_recv.c: progress and delivery. The simulator's time only moves
 * when nodes talk to it, so progress must ask: it PROBEs a few times and
 * then parks in WAITING_START with a timeout that grows with every idle
 * wait (the SWORDFISH report's strategy). A queued message is fetched
 * with RECV into one reusable buffer and handed to the active-message
 * callback of its tag; a simulator that offers it hands the message over
 * with the WAITING_START answer instead (SOCKMODEL_FEATURE_WAIT_RECV).
 * Polls never block the caller: their answers are read when they are
 * there (docs/btl_swf.md, "Where the wall time went").
 */

#include "opal_config.h"

#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "opal/util/output.h"

#include "tc_ompi.h"

#include "btl_swf.h"
#include "tc_atomic.h"
#include "btl_swf_hdr.h"

/* Hand the message in rx_buf (info) to the callback of its tag.
 * 1 when delivered, 0 when dropped. */
static int swf_dispatch(mca_btl_swf_module_t *m, const tc_sockmodel_msg_info_t *info)
{
    mca_btl_swf_component_t *c = &mca_btl_swf_component;
    const mca_btl_active_message_callback_t *reg;
    mca_btl_base_segment_t seg;
    mca_btl_swf_endpoint_t *ep;
    uint8_t am_tag;

    if (OPAL_UNLIKELY(info->src >= m->job_size && !m->any_node)) {
        /* a node of the simulator that is no process of this job: its
         * bytes must never reach ob1, whatever tag they carry */
        m->dropped_foreign++;
        opal_output_verbose(1, c->output,
                            "btl:swf: dropped a %u-byte message from node %u, which is not one "
                            "of the job's %u processes",
                            info->len, info->src, m->job_size);
        return 0;
    }
    if (OPAL_UNLIKELY(MCA_BTL_SWF_TAG_NODE_DOWN == info->tag && 0 == info->len)) {
        mca_btl_swf_peer_down(m, info->src);
        return 0;
    }
    ep = info->src < m->num_nodes ? m->endpoints[info->src] : NULL;
    if (OPAL_UNLIKELY(NULL != ep && (ep->failed || tc_ompi_proc_failed(ep->proc)))) {
        /* the simulator hands over what a dead node sent before its
         * notice; ULFM may have failed that node's receives already (the
         * runtime told it first), so none of it may reach ob1 */
        m->dropped_dead++;
        opal_output_verbose(5, c->output,
                            "btl:swf: dropped a %u-byte message from node %u, which failed",
                            info->len, info->src);
        return 0;
    }
    if (!mca_btl_swf_tag_decode(info->tag, &am_tag)) {
        opal_output_verbose(
            1, c->output, "btl:swf: dropped a %u-byte message from node %u with foreign tag 0x%08x",
            info->len, info->src, info->tag);
        return 0;
    }
    reg = mca_btl_base_active_message_trigger + am_tag;
    if (OPAL_UNLIKELY(NULL == reg->cbfunc)) {
        opal_output_verbose(
            1, c->output, "btl:swf: dropped a %u-byte message from node %u for unregistered tag %u",
            info->len, info->src, (unsigned) am_tag);
        return 0;
    }
    m->frags_recv++;
    m->bytes_recv += info->len;
    opal_output_verbose(10, c->output, "btl:swf: %u bytes from node %u, tag %u", info->len,
                        info->src, (unsigned) am_tag);

    seg.seg_addr.pval = m->rx_buf;
    seg.seg_len = info->len;
    /* the callback may send: let it have the connection */
    OPAL_THREAD_UNLOCK(&m->lock);
    tc_ompi_deliver(reg, &m->super, NULL, am_tag, &seg, 1);
    OPAL_THREAD_LOCK(&m->lock);
    return 1;
}

/* RECV the message announced by info and hand it to its callback; a
 * PROBE rides along and tells (*more, *announced) whether another message
 * is queued. 1 when delivered, 0 when dropped, -1 after a fatal error. */
static int swf_deliver(mca_btl_swf_module_t *m, tc_sockmodel_msg_info_t *announced, int *more)
{
    tc_sockmodel_msg_info_t info;

    if (announced->len > m->rx_buf_size) {
        /* a peer can never produce this: the stream is not ours */
        snprintf(m->conn.error, sizeof(m->conn.error),
                 "a queued message of %u bytes from node %u exceeds the largest fragment (%zu)",
                 announced->len, announced->src, m->rx_buf_size);
        mca_btl_swf_fatal(m, "receiving a message");
        return -1;
    }
    *more = 0;
    if (tc_sockmodel_conn_recv(&m->conn, m->rx_buf, m->rx_buf_size, &info, announced, more) < 0) {
        mca_btl_swf_fatal(m, "receiving a message");
        return -1;
    }
    return swf_dispatch(m, &info);
}

/* Start the next poll without waiting for its answer: a PROBE for the
 * first btl_swf_probe_count idle calls (each moves the node's simulated
 * clock by the probe cost, as in the report's strategy), then a
 * WAITING_START of m->wait_ms (with the message in the answer when the
 * simulator offers it). */
static int swf_poll_start(mca_btl_swf_module_t *m)
{
    mca_btl_swf_component_t *c = &mca_btl_swf_component;
    int wait_max = c->wait_max_ms > 0 ? c->wait_max_ms : 1;
    uint32_t flags = 0;

    if (m->idle_probes < (unsigned) c->probe_count) {
        return tc_sockmodel_conn_probe_start(&m->conn);
    }
    if (m->wait_ms > wait_max) {
        m->wait_ms = wait_max;
    }
#ifdef SOCKMODEL_FEATURE_WAIT_RECV
    if (m->conn.features & SOCKMODEL_FEATURE_WAIT_RECV) {
        flags = SOCKMODEL_WAIT_RECV;
    }
#endif
    m->waits++;
    return tc_sockmodel_conn_wait_start(&m->conn, (uint32_t) m->wait_ms * 1000u, flags);
}

/* The answer to a poll has come (rc from tc_sockmodel_conn_poll): deliver what it
 * brought. The count of delivered messages, or -1 after a fatal error. */
static int swf_poll_done(mca_btl_swf_module_t *m, int rc, uint32_t status,
                         tc_sockmodel_msg_info_t *info)
{
    mca_btl_swf_component_t *c = &mca_btl_swf_component;
    int count = 0, more = 1, i;

    switch (rc) {
    case TC_SOCKMODEL_POLL_NONE:
        if (SOCKMODEL_ST_NONE == status) {
            m->idle_probes++;
        } else if (SOCKMODEL_ST_EXPIRED == status) {
            m->wait_timeouts++;
            /* idle again: wait longer next time, up to the bound */
            m->wait_ms += c->wait_step_ms > 0 ? c->wait_step_ms : 1;
        }
        return 0;
    case TC_SOCKMODEL_POLL_MSG:
        /* the message came with the wait's answer */
        m->idle_probes = 0;
        m->wait_ms = c->wait_step_ms > 0 ? c->wait_step_ms : 1;
        return swf_dispatch(m, info);
    case TC_SOCKMODEL_POLL_FOUND:
        m->idle_probes = 0;
        m->wait_ms = c->wait_step_ms > 0 ? c->wait_step_ms : 1;
        /* drain what is queued, one round trip per message, but return to
         * the caller now and then */
        for (i = 0; more && i < 64 && !m->failed; i++) {
            rc = swf_deliver(m, info, &more);
            if (rc < 0) {
                return -1;
            }
            count += rc;
        }
        return count;
    default:
        mca_btl_swf_fatal(m, "polling for messages (PROBE/WAITING_START)");
        return -1;
    }
}

/* A yield normally returns at once; one that took longer than a time
 * slice means another thread ran meanwhile (a spinning thread of the
 * application, another job): the next btl_swf_poll_sleeps idle polls
 * sleep on the socket instead, to be woken by the simulator's answer. */
#define SWF_YIELD_SLOW_NS 250000

static void swf_yield(mca_btl_swf_module_t *m)
{
    mca_btl_swf_component_t *c = &mca_btl_swf_component;
    struct timespec t0, t1;
    int64_t ns;

    if (c->poll_sleep_us <= 0 || c->poll_sleeps <= 0) {
        sched_yield();
        return;
    }
    clock_gettime(CLOCK_MONOTONIC, &t0);
    sched_yield();
    clock_gettime(CLOCK_MONOTONIC, &t1);
    ns = (int64_t) (t1.tv_sec - t0.tv_sec) * 1000000000 + (t1.tv_nsec - t0.tv_nsec);
    if (ns > SWF_YIELD_SLOW_NS) {
        tc_atomic_store_relaxed(&m->sleep_credit, c->poll_sleeps);
    }
}

/* Progress never blocks while nothing of this node is at the simulator:
 * the PROBE or WAITING_START that asks for messages is written and its
 * answer read by a later call once it has arrived (one non-blocking
 * peek per call meanwhile). Open MPI calls progress in tight loops and
 * other progress callbacks (the communicator-id machinery, the PML's
 * requests) must run in between; a send ends a pending wait first
 * (tc_sockmodel_conn_send).
 *
 * One thread at a time exchanges commands (m->lock; a thread that finds
 * it taken returns at once: the holder delivers for everyone). An empty
 * poll gives the core away without the lock: it yields, or, while the
 * host is contended (swf_yield), sleeps on the socket for up to
 * btl_swf_poll_sleep_us (docs/btl_swf.md, "Progress and threads"). */
int mca_btl_swf_component_progress(void)
{
    mca_btl_swf_component_t *c = &mca_btl_swf_component;
    mca_btl_swf_module_t *m = c->module;
    tc_sockmodel_msg_info_t info;
    uint32_t status;
    bool idle = false;
    int rc, count = 0, sleep_fd = -1;

    if (NULL == m || !m->connected) {
        return 0;
    }
    if (0 != OPAL_THREAD_TRYLOCK(&m->lock)) {
        return 0; /* another thread is progressing */
    }
    if (m->in_progress || m->failed) {
        OPAL_THREAD_UNLOCK(&m->lock);
        return 0;
    }
    /* a callback may send, but must not re-enter a command exchange */
    m->in_progress = true;

    if (0 == m->conn.pending) {
        if (swf_poll_start(m) < 0) {
            mca_btl_swf_fatal(m, "polling for messages (PROBE/WAITING_START)");
            goto out;
        }
    }
    rc = tc_sockmodel_conn_poll(&m->conn, m->rx_buf, m->rx_buf_size, &info, 0, &status);
    idle = (TC_SOCKMODEL_POLL_NOTYET == rc);
    if (idle) {
        if (c->poll_sleep_us > 0 &&
            (c->poll_sleeps < 0 ||
             (c->poll_sleeps > 0 && tc_atomic_load_relaxed(&m->sleep_credit) > 0))) {
            sleep_fd = m->conn.fd;
            m->poll_sleeps++;
            if (c->poll_sleeps > 0) {
                (void) tc_atomic_fetch_sub_relaxed(&m->sleep_credit, 1);
            }
        }
    } else {
        count = swf_poll_done(m, rc, status, &info);
        if (count < 0) {
            count = 0;
        }
    }
out:
    m->in_progress = false;
    OPAL_THREAD_UNLOCK(&m->lock);
    if (idle) {
        /* the simulator needs a core to answer: ranks and simulator are
         * more processes than cores on the hosts we measure. Sleeping on
         * the socket lets the kernel run us again as soon as the answer
         * is there, where a yield leaves this thread runnable but queued
         * behind every busy thread (a spinning sibling of the
         * application's, another job) for a whole time slice; but a
         * sleep and wake-up costs more than a yield on an idle host, so
         * sleeping waits for a yield that proved slow (swf_yield). The
         * lock is free meanwhile, for this process's other threads. */
        if (sleep_fd >= 0) {
            (void) tc_sockmodel_fd_sleep(sleep_fd, (unsigned) c->poll_sleep_us);
        } else {
            swf_yield(m);
        }
    }
    return count;
}

/* Finalize: end a pending poll and deliver what it brought. */
void mca_btl_swf_progress_settle(mca_btl_swf_module_t *m)
{
    tc_sockmodel_msg_info_t info;
    int rc;

    OPAL_THREAD_LOCK(&m->lock);
    if (0 == m->conn.pending || m->failed) {
        OPAL_THREAD_UNLOCK(&m->lock);
        return;
    }
    rc = tc_sockmodel_conn_settle(&m->conn, m->rx_buf, m->rx_buf_size, &info);
    if (rc < 0) {
        mca_btl_swf_fatal(m, "ending the last poll");
        OPAL_THREAD_UNLOCK(&m->lock);
        return;
    }
    m->in_progress = true;
    (void) swf_poll_done(m, rc, SOCKMODEL_ST_OK, &info);
    m->in_progress = false;
    OPAL_THREAD_UNLOCK(&m->lock);
}
