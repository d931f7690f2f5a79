/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * btl_swf_component.c: the btl_swf component: MCA parameters, init
 * (private simulator or external server, connection, rank handshake,
 * modex), close, and the fatal-error path for a lost simulator.
 */

#include "opal_config.h"

#include <arpa/inet.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opal/mca/base/mca_base_var.h"
#include "opal/mca/btl/base/base.h"
#include "tc_ompi_compat.h"
#include "opal/runtime/opal.h"
#include "opal/util/output.h"
#include "opal/util/proc.h"
#include "opal/util/show_help.h"

#include "tc_ompi.h"

#include "btl_swf.h"
#include "btl_swf_frag.h"
#include "btl_swf_hdr.h"

#ifndef SWFSIM_INSTALLED_PATH
#define SWFSIM_INSTALLED_PATH "swfsim"
#endif

#define SWF_HELP_FILE "help-mpi-btl-swf.txt"

static int mca_btl_swf_component_register(void);
static int mca_btl_swf_component_open(void);
static int mca_btl_swf_component_close(void);
/* The simulation's identity: FNV-1a over its job token, or over its
 * address when it has none. Two processes with the same identity are
 * nodes of one simulation. */
static uint64_t swf_sim_id(const tc_sockmodel_conn_t *conn, const char *host, int port)
{
    uint64_t h = 0xcbf29ce484222325ull;
    char addr[300];
    const unsigned char *p;
    size_t n, i;

    if (conn->have_token) {
        p = conn->token;
        n = sizeof(conn->token);
    } else {
        snprintf(addr, sizeof(addr), "%s:%d", host, port);
        p = (const unsigned char *) addr;
        n = strlen(addr);
    }
    for (i = 0; i < n; i++) {
        h = (h ^ p[i]) * 0x100000001b3ull;
    }
    return h;
}

static mca_btl_base_module_t **
mca_btl_swf_component_init(int *num_btls, bool enable_progress_threads, bool enable_mpi_threads);

mca_btl_swf_component_t mca_btl_swf_component = {
    .super =
        {
            .btl_version =
                {
                    MCA_BTL_DEFAULT_VERSION("swf"),
                    .mca_open_component = mca_btl_swf_component_open,
                    .mca_close_component = mca_btl_swf_component_close,
                    .mca_register_component_params = mca_btl_swf_component_register,
                },
            .btl_data =
                {
                    .param_field = MCA_BASE_METADATA_PARAM_NONE,
                },
            .btl_init = mca_btl_swf_component_init,
            .btl_progress = mca_btl_swf_component_progress,
        },
};

/* ---- parameters ----------------------------------------------------- */

static void swf_reg_string(const char *name, const char *desc, mca_base_var_info_lvl_t lvl,
                           char **storage, const char *def)
{
    (void) tc_ompi_param_string(&mca_btl_swf_component.super.btl_version, name, desc, lvl, storage,
                                def);
}

static void swf_reg_int(const char *name, const char *desc, mca_base_var_info_lvl_t lvl,
                        int *storage, int def)
{
    (void) tc_ompi_param_int(&mca_btl_swf_component.super.btl_version, name, desc, lvl, storage,
                             def);
}

static void swf_reg_double(const char *name, const char *desc, mca_base_var_info_lvl_t lvl,
                           double *storage, double def)
{
    (void) tc_ompi_param_double(&mca_btl_swf_component.super.btl_version, name, desc, lvl, storage,
                                def);
}

static int mca_btl_swf_component_register(void)
{
    mca_btl_swf_component_t *c = &mca_btl_swf_component;
    mca_btl_swf_module_t *m = &mca_btl_swf_module;

    swf_reg_string(
        "server",
        "Address HOST:PORT (or unix:PATH) of a running SockModel simulator (swfsim) "
        "that every process of the job connects to. Empty (default): the job starts a private "
        "simulator on this host and ends it at finalize",
        OPAL_INFO_LVL_3, &c->server, NULL);
    swf_reg_string("model",
                   "Model of the private simulator: simpel (no simulated time, messages go "
                   "straight to the destination) or torus (the timed ATOLL-like 2D torus)",
                   OPAL_INFO_LVL_3, &c->model, "simpel");
    swf_reg_string(
        "simulator",
        "The swfsim executable started as the private simulator (a path, or a "
        "name looked up in PATH); empty: look in the configured bindir (" SWFSIM_INSTALLED_PATH
        "), next to this component's file (build tree), "
        "then PATH",
        OPAL_INFO_LVL_4, &c->simulator, "");
    swf_reg_string("token_file",
                   "File holding the job token of an external simulator started with "
                   "swfsim --token-file (one line of 64 hex digits); empty: no token. The "
                   "private simulator always gets a fresh token from the launching process",
                   OPAL_INFO_LVL_4, &c->token_file, NULL);
    swf_reg_string("if_include",
                   "When a job spans hosts, its private simulator listens on TCP on rank 0's "
                   "first IPv4 address of an interface named here (comma-separated interface "
                   "names or a.b.c.d/n blocks); empty (default): the first IPv4 address of any "
                   "interface that is up and not loopback",
                   OPAL_INFO_LVL_4, &c->if_include, NULL);
    swf_reg_string("simulator_config",
                   "Configuration file passed to the private simulator with --config "
                   "(torus dimensions, bandwidth, cycle, router delay); empty: its defaults",
                   OPAL_INFO_LVL_4, &c->simulator_config, NULL);
    swf_reg_string("simulator_report",
                   "JSON report file the private simulator writes at its end (--report); "
                   "empty: no report and no summary",
                   OPAL_INFO_LVL_4, &c->simulator_report, NULL);
    swf_reg_string("private_transport",
                   "How the private simulator and the processes talk: unix (a Unix-domain "
                   "socket in the job session directory; TCP loopback when that path is too "
                   "long) or tcp (loopback TCP). unix measured about a third lower latency for "
                   "small messages (docs/btl_swf.md)",
                   OPAL_INFO_LVL_4, &c->private_transport, "unix");
    swf_reg_int("probe_count",
                "Number of consecutive idle progress calls that PROBE the simulator before "
                "progress switches to WAITING_START with a timeout. -1 (default): 3 in torus "
                "mode (the SWORDFISH report's strategy: probes advance simulated time), 0 in "
                "simpel mode (no time to advance; WAITING_START answers at once when a "
                "message is queued and saves the simulator the extra round trips)",
                OPAL_INFO_LVL_5, &c->probe_count, -1);
    swf_reg_int("wait_step_ms",
                "WAITING_START timeout added per idle wait in milliseconds (the wait grows "
                "with every wait that ends without a message)",
                OPAL_INFO_LVL_5, &c->wait_step_ms, 1);
    swf_reg_int("wait_max_ms", "Upper bound of one WAITING_START timeout in milliseconds",
                OPAL_INFO_LVL_5, &c->wait_max_ms, 100);
    swf_reg_double("cycle_ns",
                   "Length of one simulated cycle in nanoseconds, used to convert CPU time "
                   "between commands into consumetime (keep it equal to the simulator's cycle)",
                   OPAL_INFO_LVL_5, &c->cycle_ns, 4.0);
    swf_reg_double("consume_scale",
                   "Factor applied to the CPU time between two commands before it is reported "
                   "as consumetime (0 disables consumetime; 0.5 models a CPU twice as fast)",
                   OPAL_INFO_LVL_5, &c->consume_scale, 1.0);
    swf_reg_int("connect_timeout",
                "Seconds to wait for the private simulator's port file, for the connection "
                "and for the simulator to start the run (all nodes connected)",
                OPAL_INFO_LVL_5, &c->connect_timeout, 120);
    swf_reg_int("reply_timeout",
                "Seconds one read or write on the simulator connection may block before the "
                "simulator is declared hung and the job ends (0: no bound; a dead simulator "
                "is always detected at once)",
                OPAL_INFO_LVL_5, &c->reply_timeout, 600);
    swf_reg_int("spin_us",
                "Microseconds to busy-poll the simulator connection for a reply before "
                "sleeping in the kernel (a sleep and wake-up costs more than a round trip "
                "through the simulator); 0 always sleeps",
                OPAL_INFO_LVL_5, &c->spin_us, 200);
    swf_reg_int("poll_sleep_us",
                "Microseconds an idle progress call sleeps on the simulator connection "
                "(woken at once by the answer) instead of yielding the core, while the host "
                "is contended (see btl_swf_poll_sleeps); 0 never sleeps",
                OPAL_INFO_LVL_5, &c->poll_sleep_us, 50);
    swf_reg_int("poll_sleeps",
                "Idle progress calls that sleep up to btl_swf_poll_sleep_us instead of "
                "yielding after a yield that kept the thread off the core for a time slice "
                "(another thread ran: a yielding thread queues behind every busy thread, "
                "such as a spinning thread of the same application, while a sleeping one is "
                "woken by the simulator's answer); only in MPI_THREAD_MULTIPLE jobs; 0: always "
                "yield, -1: always sleep (any job)",
                OPAL_INFO_LVL_5, &c->poll_sleeps, 256);
    swf_reg_int("simulator_spin_us",
                "Microseconds the private simulator polls its sockets (yielding the core) "
                "before it sleeps when idle (swfsim --spin-us): saves a wake-up per message "
                "at the cost of CPU time; 0 sleeps at once",
                OPAL_INFO_LVL_5, &c->simulator_spin_us, 100);
    swf_reg_int("verbose",
                "Verbosity of btl_swf's diagnostic output (0: none, 5: setup, "
                "10: per message; 0 follows btl_base_verbose)",
                OPAL_INFO_LVL_9, &c->verbose, 0);

    /* defaults for the generic BTL parameters: a simulated network that
     * carries whole messages, send/receive only */
    m->super.btl_exclusivity = MCA_BTL_EXCLUSIVITY_DEFAULT;
    m->super.btl_eager_limit = 32 * 1024;
    m->super.btl_rndv_eager_limit = 32 * 1024;
    /* whole messages up to 1 MiB: fewer simulator round trips per byte,
     * yet a torus packet does not hold its links for ages */
    m->super.btl_max_send_size = 1024 * 1024;
    m->super.btl_rdma_pipeline_send_length = 1024 * 1024;
    m->super.btl_rdma_pipeline_frag_size = 1024 * 1024;
    m->super.btl_min_rdma_pipeline_size = 0;
    m->super.btl_flags = MCA_BTL_FLAGS_SEND;
    m->super.btl_latency = 100;
    m->super.btl_bandwidth = 250; /* ATOLL's link: 250 MB/s */
    return mca_btl_base_param_register(&c->super.btl_version, &m->super);
}

/* ---- help ----------------------------------------------------------- */

void mca_btl_swf_show_help(const char *topic, ...)
{
    va_list ap;

    va_start(ap, topic);
    (void) opal_show_vhelp(SWF_HELP_FILE, topic, true, ap);
    va_end(ap);
}

static int mca_btl_swf_component_open(void)
{
    mca_btl_swf_component_t *c = &mca_btl_swf_component;

    c->output = tc_ompi_output_open(c->verbose);
    c->module = NULL;
    c->sim_pid = 0;
    c->sim_path = NULL;
    c->token_path = NULL;
    c->port_file = NULL;
    c->sock_file = NULL;
    c->port_file_owner = false;
    c->frags_ready = false;
    /* the help text is ours, not Open MPI's: tell show_help where it is */
#ifdef MCA_BTL_SWF_HELP_DIR
    (void) opal_show_help_add_dir(MCA_BTL_SWF_HELP_DIR);
#endif
#ifdef MCA_BTL_SWF_SRCDIR
    (void) opal_show_help_add_dir(MCA_BTL_SWF_SRCDIR);
#endif
    return OPAL_SUCCESS;
}

static int mca_btl_swf_component_close(void)
{
    mca_btl_swf_component_t *c = &mca_btl_swf_component;

    /* normally done by finalize; this covers a failed init */
    mca_btl_swf_launch_stop();
    tc_ompi_output_close(&c->output);
    return OPAL_SUCCESS;
}

/* ---- init ----------------------------------------------------------- */

/* True when the btl selection names swf (the user asked for it). A
 * private simulator is started only then: an installed component must not
 * start simulators for jobs that never wanted one. */
static bool swf_explicitly_requested(void)
{
    return tc_ompi_btl_selection("swf").named;
}

/* Setup failed after swf was asked for by name. Returning no module
 * would leave ob1 without any BTL when swf is the only one named, and
 * Open MPI 4.1 then crashes in add_procs; a job that asked for the
 * simulator must not run without it either. The reason was printed
 * (once, by the process that saw it): end the whole job now. */
static void swf_setup_abort(bool requested)
{
    if (requested) {
        tc_ompi_abort_job(1);
        /* the runtime is ending the job; do not run on towards a crash */
        _exit(1);
    }
}

static mca_btl_base_module_t **
mca_btl_swf_component_init(int *num_btls, bool enable_progress_threads, bool enable_mpi_threads)
{
    mca_btl_swf_component_t *c = &mca_btl_swf_component;
    mca_btl_swf_module_t *m = &mca_btl_swf_module;
    mca_btl_base_module_t **btls;
    char host[256], *sim_host = NULL;
    uint32_t my_rank = OPAL_PROC_MY_NAME.vpid, job_size = 0;
    mca_btl_swf_modex_t modex;
    int port = 0, rc;
    bool requested = swf_explicitly_requested();
    bool private_sim = (NULL == c->server || '\0' == c->server[0]);
    bool multi_host, joined = false;
    unsigned char cluster_token[SOCKMODEL_TOKEN_BYTES];

    (void) enable_progress_threads;
    /* the adaptive sleeping of idle polls is for MPI_THREAD_MULTIPLE jobs,
     * whose spinning threads starve a yielding progress thread; a
     * single-threaded job keeps the plain yield (lower latency on a quiet
     * host); -1 (always sleep) applies to both */
    if (!enable_mpi_threads && c->poll_sleeps > 0) {
        c->poll_sleeps = 0;
    }
    *num_btls = 0;

    if (private_sim && !requested) {
        opal_output_verbose(5, c->output,
                            "btl:swf: not selected (no btl_swf_server and btl does not name swf)");
        return NULL;
    }
    if (OPAL_SUCCESS != tc_ompi_job_size(&job_size) || 0 == job_size) {
        opal_output_verbose(1, c->output, "btl:swf: job size unknown, disqualifying");
        return NULL;
    }
    if (job_size > SOCKMODEL_MAX_NODES) {
        mca_btl_swf_show_help("too many nodes", opal_process_info.nodename, (int) job_size,
                              (int) SOCKMODEL_MAX_NODES);
        return NULL;
    }

    multi_host = (uint32_t) opal_process_info.num_local_peers + 1 != job_size;
    /* a job started by MPI_Comm_spawn joins its parent's simulation when
     * that one takes joining nodes, so that the two jobs reach each other */
    rc = mca_btl_swf_launch_parent(&sim_host, &port, cluster_token);
    if (OPAL_SUCCESS == rc) {
        joined = true;
        snprintf(host, sizeof(host), "%s", sim_host);
        free(sim_host);
        sim_host = NULL;
    } else if (OPAL_ERR_NOT_FOUND != rc) {
        swf_setup_abort(requested);
        return NULL;
    } else if (private_sim && multi_host) {
        /* the job spans hosts: rank 0's simulator on TCP, reached by all */
        rc = mca_btl_swf_launch_cluster(job_size, &sim_host, &port, cluster_token);
        if (OPAL_SUCCESS != rc) {
            mca_btl_swf_launch_stop();
            swf_setup_abort(requested);
            return NULL;
        }
        snprintf(host, sizeof(host), "%s", sim_host);
        free(sim_host);
    } else if (private_sim) {
        /* one host: a Unix socket in the session directory */
        if (0 == opal_process_info.my_local_rank) {
            if (OPAL_SUCCESS != mca_btl_swf_launch_start(job_size, NULL)) {
                swf_setup_abort(requested);
                return NULL;
            }
        }
        if (OPAL_SUCCESS != mca_btl_swf_launch_wait_port(&sim_host, &port)) {
            mca_btl_swf_launch_stop();
            swf_setup_abort(requested);
            return NULL;
        }
        snprintf(host, sizeof(host), "%s", sim_host);
        free(sim_host);
    } else if (0 != tc_sockmodel_address_parse(c->server, host, sizeof(host), &port)) {
        mca_btl_swf_show_help("bad server address", opal_process_info.nodename, c->server);
        return NULL;
    }

    OBJ_CONSTRUCT(&m->lock, opal_mutex_t);
    tc_sockmodel_conn_init(&m->conn, c->cycle_ns, c->consume_scale,
                           c->reply_timeout > 0 ? c->reply_timeout * 1000 : 0);
    m->conn.spin_us = c->spin_us > 0 ? c->spin_us : 0;
    if (joined || (private_sim && multi_host)) {
        memcpy(m->conn.token, cluster_token, sizeof(m->conn.token));
        m->conn.have_token = 1;
    } else {
        const char *tf = private_sim ? mca_btl_swf_launch_token_file() : c->token_file;

        if (NULL != tf && '\0' != tf[0]) {
            if (OPAL_SUCCESS != mca_btl_swf_token_read(tf, m->conn.token)) {
                mca_btl_swf_show_help("bad token file", opal_process_info.nodename, tf);
                OBJ_DESTRUCT(&m->lock);
                mca_btl_swf_launch_stop();
                swf_setup_abort(requested);
                return NULL;
            }
            m->conn.have_token = 1;
        }
    }
    /* a unix:PATH host has no port */
    opal_output_verbose(5, c->output, "btl:swf: rank %u connecting to %s%s%.0d", my_rank, host,
                        port > 0 ? ":" : "", port);
    rc = tc_sockmodel_conn_connect(&m->conn, host, port, joined ? SOCKMODEL_RANK_JOIN : my_rank,
                                   c->connect_timeout * 1000);
    if (0 == rc) {
        /* the simulator answers the hello once every node is there */
        mca_btl_swf_launch_started();
        rc = tc_sockmodel_conn_size(&m->conn);
    }
    if (0 == rc && (m->conn.features & SOCKMODEL_FEATURE_WATCH)) {
        /* a node that dies is announced by the simulator: fatal without
         * fault tolerance, that peer's loss alone under ULFM */
        rc = tc_sockmodel_conn_watch(&m->conn, MCA_BTL_SWF_TAG_NODE_DOWN);
    }
    if (0 != rc) {
        mca_btl_swf_show_help("connect failed", opal_process_info.nodename, (int) my_rank, host,
                              port, m->conn.error);
        tc_sockmodel_conn_close(&m->conn);
        OBJ_DESTRUCT(&m->lock);
        mca_btl_swf_launch_stop();
        swf_setup_abort(requested);
        return NULL;
    }
    if (!joined && m->conn.nodes < job_size) {
        char why[160];

        snprintf(why, sizeof(why), "the simulator has %u nodes, the job has %u processes",
                 m->conn.nodes, job_size);
        mca_btl_swf_show_help("connect failed", opal_process_info.nodename, (int) my_rank, host,
                              port, why);
        tc_sockmodel_conn_close(&m->conn);
        OBJ_DESTRUCT(&m->lock);
        mca_btl_swf_launch_stop();
        return NULL;
    }
    if (SOCKMODEL_MODEL_SIMPEL == m->conn.model) {
        /* simpel keeps no time: skip the CPU clock reads on every command */
        m->conn.scale = 0.0;
    }
    if (c->probe_count < 0) {
        c->probe_count = SOCKMODEL_MODEL_SIMPEL == m->conn.model ? 0 : 3;
    }
    m->connected = true;
    m->failed = false;
    m->in_progress = false;
    m->num_nodes = m->conn.nodes;
    m->job_size = job_size;
    m->joined = joined;
    /* the job's private simulator serves the job and the jobs it spawns
     * (they hold its fresh token); an external one may serve nodes of
     * other programs, whose messages are dropped */
    m->any_node = joined || (private_sim && 0 != (m->conn.features & SOCKMODEL_FEATURE_JOIN));
    m->sim_id = swf_sim_id(&m->conn, host, port);
    if (m->any_node) {
        /* nodes join after SIZE answered: the client library's bound on
         * source and destination nodes becomes the largest node number,
         * the simulator checks the real one (a SEND beyond it drops us) */
        m->conn.nodes = MCA_BTL_SWF_MAX_NODE;
    }
    m->dropped_foreign = 0;
    m->dropped_dead = 0;
    m->idle_probes = 0;
    m->sleep_credit = 0;
    m->wait_ms = c->wait_step_ms > 0 ? c->wait_step_ms : 1;

    /* the simulator carries whole messages up to its limit */
    if (m->super.btl_max_send_size > m->conn.max_msg) {
        m->super.btl_max_send_size = m->conn.max_msg;
    }
    if (m->super.btl_eager_limit > m->super.btl_max_send_size) {
        m->super.btl_eager_limit = m->super.btl_max_send_size;
    }
    if (m->super.btl_rndv_eager_limit > m->super.btl_eager_limit) {
        m->super.btl_rndv_eager_limit = m->super.btl_eager_limit;
    }
    /* send/receive only: no RDMA, whatever the user set */
    m->super.btl_flags &= ~(MCA_BTL_FLAGS_RDMA | MCA_BTL_FLAGS_ATOMIC_OPS |
                            MCA_BTL_FLAGS_ATOMIC_FOPS | MCA_BTL_FLAGS_SEND_INPLACE);
    m->super.btl_flags |= MCA_BTL_FLAGS_SEND;
    (void) mca_btl_base_param_verify(&m->super);

    m->rx_buf_size = m->super.btl_max_send_size > 0 ? m->super.btl_max_send_size : 1;
    m->rx_buf = malloc(m->rx_buf_size);
    m->endpoints = calloc(m->num_nodes, sizeof(*m->endpoints));
    btls = malloc(sizeof(*btls));
    if (NULL == m->rx_buf || NULL == m->endpoints || NULL == btls ||
        OPAL_SUCCESS != mca_btl_swf_frag_lists_init(m)) {
        free(btls);
        goto fail;
    }

    modex.node_be = htonl(m->conn.rank);
    modex.sim_hi_be = htonl((uint32_t) (m->sim_id >> 32));
    modex.sim_lo_be = htonl((uint32_t) m->sim_id);
    TC_OMPI_MODEX_SEND(rc, TC_OMPI_SCOPE_GLOBAL, &c->super.btl_version, &modex, sizeof(modex));
    if (OPAL_SUCCESS != rc) {
        free(btls);
        goto fail;
    }
    /* every process, since any of them may be the one that spawns (a
     * survivor under ULFM), and a joined one too, for a grandchild; a
     * private simulator that takes no joining nodes (torus) says so, so
     * that a spawned job starts its own without waiting for the key */
    if ((private_sim || joined) &&
        OPAL_SUCCESS !=
            mca_btl_swf_launch_publish_join(m->any_node && m->conn.have_token ? host : NULL, port,
                                            m->conn.token)) {
        opal_output_verbose(1, c->output,
                            "btl:swf: cannot publish the simulator's address for spawned jobs");
    }

    opal_output_verbose(5, c->output,
                        "btl:swf: rank %u is node %u of %u (model %s, largest message %u, "
                        "eager %zu, max send %zu)",
                        my_rank, m->conn.rank, m->num_nodes,
                        SOCKMODEL_MODEL_TORUS == m->conn.model ? "torus" : "simpel",
                        m->conn.max_msg, m->super.btl_eager_limit, m->super.btl_max_send_size);
    c->module = m;
    btls[0] = &m->super;
    *num_btls = 1;
    return btls;

fail:
    mca_btl_swf_frag_lists_fini();
    free(m->rx_buf);
    m->rx_buf = NULL;
    free(m->endpoints);
    m->endpoints = NULL;
    (void) tc_sockmodel_conn_finish(&m->conn);
    m->connected = false;
    OBJ_DESTRUCT(&m->lock);
    mca_btl_swf_launch_stop();
    return NULL;
}

/* ---- fatal errors --------------------------------------------------- */

void mca_btl_swf_fatal(mca_btl_swf_module_t *m, const char *what)
{
    if (m->failed) {
        return;
    }
    m->failed = true;
    mca_btl_swf_show_help("connection lost", opal_process_info.nodename,
                          (int) OPAL_PROC_MY_NAME.vpid, what, m->conn.error);
    tc_sockmodel_conn_close(&m->conn);
    if (NULL != m->error_cb) {
        /* ob1 aborts the job: no process waits for a simulator that is gone */
        m->error_cb(&m->super, MCA_BTL_ERROR_FLAGS_FATAL, NULL,
                    "btl_swf lost its connection to the simulator");
    }
}
