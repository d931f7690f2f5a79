/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * btl_swf_module.c: the btl_swf module: its function table, peers
 * (add_procs/del_procs, one endpoint per simulated node, self included),
 * the error callback, dump and finalize (FINISH, then reap the private
 * simulator).
 */

#include "opal_config.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "opal/class/opal_bitmap.h"
#include "tc_ompi_compat.h"
#include "opal/util/output.h"
#include "opal/util/proc.h"
#include "opal/util/show_help.h"

#include "tc_ompi.h"

#include "btl_swf.h"
#include "btl_swf_hdr.h"
#include "btl_swf_frag.h"

static void mca_btl_swf_endpoint_construct(mca_btl_swf_endpoint_t *ep)
{
    ep->module = NULL;
    ep->proc = NULL;
    ep->node = 0;
    ep->failed = false;
}

OBJ_CLASS_INSTANCE(mca_btl_swf_endpoint_t, opal_object_t, mca_btl_swf_endpoint_construct, NULL);

mca_btl_swf_module_t mca_btl_swf_module = {
    .super =
        {
            .btl_component = &mca_btl_swf_component.super,
            .btl_add_procs = mca_btl_swf_add_procs,
            .btl_del_procs = mca_btl_swf_del_procs,
            .btl_finalize = mca_btl_swf_finalize,
            .btl_alloc = mca_btl_swf_alloc,
            .btl_free = mca_btl_swf_free,
            .btl_prepare_src = mca_btl_swf_prepare_src,
            .btl_send = mca_btl_swf_send,
            .btl_sendi = mca_btl_swf_sendi,
            .btl_dump = mca_btl_swf_dump,
            .btl_register_error = mca_btl_swf_register_error,
        },
};

/* The simulated node of proc, from its modex entry (our own directly);
 * OPAL_ERR_UNREACH when it is a node of another simulation. */
static int swf_proc_node(opal_proc_t *proc, uint32_t *node)
{
    const mca_btl_swf_modex_t *e;
    uint64_t sim;
    mca_btl_swf_component_t *c = &mca_btl_swf_component;
    uint32_t *data = NULL;
    size_t size = 0;
    int rc;

    if (proc == opal_proc_local_get()) {
        *node = c->module->conn.rank;
        return OPAL_SUCCESS;
    }
    TC_OMPI_MODEX_RECV(rc, &c->super.btl_version, &proc->proc_name, (void **) &data, &size);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    if (NULL == data || sizeof(mca_btl_swf_modex_t) != size) {
        free(data);
        return OPAL_ERR_BAD_PARAM;
    }
    e = (const mca_btl_swf_modex_t *) data;
    *node = ntohl(e->node_be);
    sim = ((uint64_t) ntohl(e->sim_hi_be) << 32) | ntohl(e->sim_lo_be);
    free(data);
    return sim == c->module->sim_id ? OPAL_SUCCESS : OPAL_ERR_UNREACH;
}

/* Room for node in m->endpoints (a node that joined after our start):
 * OPAL_SUCCESS or OPAL_ERR_OUT_OF_RESOURCE. Under m->lock: the progress
 * thread reads the table. */
static int swf_endpoints_grow(mca_btl_swf_module_t *m, uint32_t node)
{
    mca_btl_swf_endpoint_t **t;
    uint32_t n;

    if (node < m->num_nodes) {
        return OPAL_SUCCESS;
    }
    n = node + 1 > 2 * m->num_nodes ? node + 1 : 2 * m->num_nodes;
    if (n > MCA_BTL_SWF_MAX_NODE) {
        n = MCA_BTL_SWF_MAX_NODE;
    }
    t = realloc(m->endpoints, (size_t) n * sizeof(*t));
    if (NULL == t) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    memset(t + m->num_nodes, 0, (size_t) (n - m->num_nodes) * sizeof(*t));
    m->endpoints = t;
    m->num_nodes = n;
    return OPAL_SUCCESS;
}

int mca_btl_swf_add_procs(struct mca_btl_base_module_t *btl, size_t nprocs,
                          struct opal_proc_t **procs, struct mca_btl_base_endpoint_t **peers,
                          struct opal_bitmap_t *reachable)
{
    mca_btl_swf_module_t *m = (mca_btl_swf_module_t *) btl;
    mca_btl_swf_component_t *c = &mca_btl_swf_component;
    size_t i;
    int other_job = 0, rc;

    if (m->failed) {
        return OPAL_ERROR;
    }
    for (i = 0; i < nprocs; i++) {
        opal_proc_t *proc = procs[i];
        mca_btl_swf_endpoint_t *ep;
        uint32_t node;

        bool mine = proc->proc_name.jobid == OPAL_PROC_MY_NAME.jobid;

        /* another job's processes have nodes in our simulation only when
         * one job joined the other's (MPI_Comm_spawn); else their nodes
         * are of another simulation */
        if (!mine && !m->any_node) {
            ++other_job;
            continue;
        }
        rc = swf_proc_node(proc, &node);
        if (OPAL_ERR_UNREACH == rc) {
            opal_output_verbose(5, c->output, "btl:swf: %s is a node of another simulation",
                                OPAL_NAME_PRINT(proc->proc_name));
            other_job += !mine;
            continue;
        }
        if (OPAL_SUCCESS != rc) {
            opal_output_verbose(5, c->output, "btl:swf: no modex entry for %s, not reachable",
                                OPAL_NAME_PRINT(proc->proc_name));
            other_job += !mine;
            continue;
        }
        if (node >= MCA_BTL_SWF_MAX_NODE || (!m->any_node && node >= m->num_nodes)) {
            opal_output_verbose(1, c->output, "btl:swf: %s claims node %u of %u, not reachable",
                                OPAL_NAME_PRINT(proc->proc_name), node, m->num_nodes);
            continue;
        }
        OPAL_THREAD_LOCK(&m->lock);
        rc = swf_endpoints_grow(m, node);
        if (OPAL_SUCCESS != rc) {
            OPAL_THREAD_UNLOCK(&m->lock);
            return rc;
        }
        ep = m->endpoints[node];
        if (NULL == ep) {
            ep = OBJ_NEW(mca_btl_swf_endpoint_t);
            if (NULL == ep) {
                OPAL_THREAD_UNLOCK(&m->lock);
                return OPAL_ERR_OUT_OF_RESOURCE;
            }
            ep->module = m;
            ep->proc = proc;
            ep->node = node;
            m->endpoints[node] = ep;
        }
        OPAL_THREAD_UNLOCK(&m->lock);
        peers[i] = ep;
        if (NULL != reachable) {
            opal_bitmap_set_bit(reachable, (int) i);
        }
        opal_output_verbose(10, c->output, "btl:swf: %s is node %u",
                            OPAL_NAME_PRINT(proc->proc_name), node);
    }
    /* fatal only when swf was asked to carry everything; else ob1 takes
     * another BTL for them */
    if (other_job > 0 && !c->warned_other_job && tc_ompi_btl_selection("swf").only) {
        c->warned_other_job = true;
        opal_show_help("help-mpi-btl-swf.txt", "other job", true, opal_process_info.nodename,
                       other_job);
    }
    return OPAL_SUCCESS;
}

void mca_btl_swf_peer_down(mca_btl_swf_module_t *m, uint32_t node)
{
    mca_btl_swf_component_t *c = &mca_btl_swf_component;
    mca_btl_swf_endpoint_t *ep = node < m->num_nodes ? m->endpoints[node] : NULL;
    opal_proc_t *proc;

    if (NULL == ep || ep->failed || node == m->conn.rank) {
        /* a node this process never talked to (its proc is not ours), one
         * reported already, or ourselves: nothing to tell */
        opal_output_verbose(5, c->output, "btl:swf: node %u died (no endpoint to fail)", node);
        return;
    }
    /* sends complete when written, so nothing is pending to this node:
     * failing the endpoint is all there is to release */
    ep->failed = true;
    proc = ep->proc;
    /* the PML's callback may send to other nodes (under ULFM it spreads
     * the news): it must have the connection */
    OPAL_THREAD_UNLOCK(&m->lock);
    (void) tc_ompi_peer_lost(
        &(tc_ompi_lost_t){"swf", "help-mpi-btl-swf.txt", c->output, &m->super, m->error_cb}, proc,
        "node", (int) node, "the simulator reports that this node died");
    OPAL_THREAD_LOCK(&m->lock);
}

int mca_btl_swf_del_procs(struct mca_btl_base_module_t *btl, size_t nprocs,
                          struct opal_proc_t **procs, struct mca_btl_base_endpoint_t **peers)
{
    /* endpoints live until finalize: a node stays in the simulation */
    (void) btl;
    (void) nprocs;
    (void) procs;
    (void) peers;
    return OPAL_SUCCESS;
}

int mca_btl_swf_register_error(struct mca_btl_base_module_t *btl,
                               mca_btl_base_module_error_cb_fn_t cbfunc)
{
    ((mca_btl_swf_module_t *) btl)->error_cb = cbfunc;
    return OPAL_SUCCESS;
}

void mca_btl_swf_dump(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                      int verbose)
{
    mca_btl_swf_module_t *m = (mca_btl_swf_module_t *) btl;

    (void) verbose;
    if (NULL != endpoint) {
        opal_output(0, "btl:swf: endpoint %s is node %u",
                    OPAL_NAME_PRINT(endpoint->proc->proc_name), endpoint->node);
    }
    opal_output(0,
                "btl:swf: node %u of %u%s: sent %llu frags (%llu bytes), received %llu "
                "(%llu bytes), %llu waits (%llu expired), %llu commands, %llu cycles reported, "
                "clock %llu ns",
                m->conn.rank, m->num_nodes, m->failed ? " (connection lost)" : "",
                (unsigned long long) m->frags_sent, (unsigned long long) m->bytes_sent,
                (unsigned long long) m->frags_recv, (unsigned long long) m->bytes_recv,
                (unsigned long long) m->waits, (unsigned long long) m->wait_timeouts,
                (unsigned long long) m->conn.commands, (unsigned long long) m->conn.cycles_reported,
                (unsigned long long) m->conn.clock_ns);
    /* per request: how many, and the wall time blocked for their replies */
    {
        char line[512];
        size_t off = 0;
        uint32_t r;

        line[0] = '\0';
        for (r = SOCKMODEL_REQUEST_MIN; r <= SOCKMODEL_REQUEST_MAX && off < sizeof(line); r++) {
            if (0 == m->conn.req_count[r]) {
                continue;
            }
            off += (size_t) snprintf(
                line + off, sizeof(line) - off, " %s %llu (%.1f ms)", tc_sockmodel_request_name(r),
                (unsigned long long) m->conn.req_count[r], (double) m->conn.reply_wait_ns[r] / 1e6);
        }
        opal_output(0,
                    "btl:swf: node %u requests (count, wall time blocked on replies):%s; "
                    "%llu polls found no answer yet (%llu slept on the socket), %llu waits "
                    "stopped to send; %llu messages from nodes outside the job dropped, %llu "
                    "from failed nodes",
                    m->conn.rank, line, (unsigned long long) m->conn.polls_empty,
                    (unsigned long long) m->poll_sleeps, (unsigned long long) m->conn.stops,
                    (unsigned long long) m->dropped_foreign, (unsigned long long) m->dropped_dead);
    }
}

int mca_btl_swf_finalize(struct mca_btl_base_module_t *btl)
{
    mca_btl_swf_module_t *m = (mca_btl_swf_module_t *) btl;
    mca_btl_swf_component_t *c = &mca_btl_swf_component;
    uint32_t i;
    int rc;

    if (m->connected && !m->failed) {
        mca_btl_swf_progress_settle(m);
        if (c->verbose >= 5) {
            mca_btl_swf_dump(btl, NULL, 0);
        }
        rc = m->failed ? 0 : tc_sockmodel_conn_finish(&m->conn);
        if (0 != rc) {
            opal_output_verbose(1, c->output, "btl:swf: FINISH failed: %s", m->conn.error);
        }
    } else {
        tc_sockmodel_conn_close(&m->conn);
    }
    m->connected = false;
    if (NULL != m->endpoints) {
        for (i = 0; i < m->num_nodes; i++) {
            if (NULL != m->endpoints[i]) {
                OBJ_RELEASE(m->endpoints[i]);
            }
        }
        free(m->endpoints);
        m->endpoints = NULL;
    }
    free(m->rx_buf);
    m->rx_buf = NULL;
    mca_btl_swf_frag_lists_fini();
    OBJ_DESTRUCT(&m->lock);
    /* the launcher reaps its simulator, which exits after the last FINISH */
    mca_btl_swf_launch_stop();
    c->module = NULL;
    return OPAL_SUCCESS;
}
