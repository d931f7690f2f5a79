/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * btl_swf.h: component, module and endpoint structures of the SWORDFISH
 * BTL, which carries ob1's fragments as SockModel messages through a
 * network simulator (swfsim), and the functions shared between its files.
 */
#ifndef MCA_BTL_SWF_H
#define MCA_BTL_SWF_H

#include "opal_config.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "opal/class/opal_free_list.h"
#include "opal/class/opal_object.h"
#include "opal/mca/btl/btl.h"
#include "opal/mca/btl/base/base.h"
#include "tc_ompi_compat.h"
#include TC_OMPI_MUTEX_H
#include "opal/util/proc.h"

#include "tc_sockmodel_client.h"

BEGIN_C_DECLS

struct mca_btl_swf_module_t;

/* One peer: the simulated node that carries its traffic. */
struct mca_btl_base_endpoint_t {
    opal_object_t super;
    struct mca_btl_swf_module_t *module;
    opal_proc_t *proc;
    uint32_t node;
    /* the simulator said the node died: sends to it fail at once
     * (written and read under the module's lock) */
    bool failed;
};
typedef struct mca_btl_base_endpoint_t mca_btl_base_endpoint_t;
typedef mca_btl_base_endpoint_t mca_btl_swf_endpoint_t;
OBJ_CLASS_DECLARATION(mca_btl_swf_endpoint_t);

typedef struct mca_btl_swf_module_t {
    mca_btl_base_module_t super;
    tc_sockmodel_conn_t conn;
    /* one command exchange at a time on the connection (MPI threads) */
    opal_mutex_t lock;
    bool connected;
    /* set once the connection failed: every later call fails fast */
    bool failed;
    /* guards against re-entering progress from a receive callback */
    bool in_progress;
    /* probe/wait strategy state */
    unsigned idle_probes;
    int wait_ms;
    /* idle polls that still sleep on the socket instead of yielding: set
     * to btl_swf_poll_sleeps by a yield that kept this thread off the
     * core for longer than SWF_YIELD_SLOW_NS (written after the lock was
     * dropped, hence atomic) */
    int32_t sleep_credit; /* __atomic builtins: same on 4.1 and 5.0 */
    /* endpoints indexed by simulated node number (num_nodes of them,
     * grown when a process of another job joins; under the lock) */
    mca_btl_swf_endpoint_t **endpoints;
    uint32_t num_nodes;
    /* nodes 0 .. job_size-1 are the job's processes (node = rank); the
     * simulator may serve more, whose messages are dropped and counted,
     * unless it is the job's private one and takes joining nodes, or we
     * joined it (any_node: every node then holds the job's fresh token:
     * a process of this job or of one it spawned) */
    uint32_t job_size;
    bool any_node;
    /* this process joined its parent job's simulation */
    bool joined;
    /* the simulation's identity (the modex's sim_hi/sim_lo) */
    uint64_t sim_id;
    uint64_t dropped_foreign;
    /* messages from nodes that had failed (ULFM), dropped */
    uint64_t dropped_dead;
    /* one receive buffer, large enough for the biggest fragment */
    unsigned char *rx_buf;
    size_t rx_buf_size;
    mca_btl_base_module_error_cb_fn_t error_cb;
    /* statistics for the verbose output at finalize */
    uint64_t frags_sent, frags_recv, bytes_sent, bytes_recv;
    uint64_t waits, wait_timeouts, poll_sleeps;
} mca_btl_swf_module_t;

typedef struct mca_btl_swf_component_t {
    mca_btl_base_component_3_0_0_t super;

    /* MCA parameters */
    char *server;            /* HOST:PORT of a running simulator, or NULL */
    char *model;             /* model of the private simulator */
    char *simulator;         /* swfsim executable for the private simulator */
    char *simulator_config;  /* --config file for the private simulator */
    char *simulator_report;  /* --report file for the private simulator */
    char *private_transport; /* unix or tcp: how the private simulator listens */
    char *token_file;        /* job token of an external simulator, or NULL */
    char *if_include;        /* interfaces/CIDRs for a simulator serving several hosts */
    int probe_count;         /* probes before a progress call waits */
    int wait_step_ms;        /* wait grows by this much per idle wait */
    int wait_max_ms;         /* upper bound of one wait */
    double cycle_ns;         /* simulated cycle length */
    double consume_scale;    /* CPU time to simulated time factor */
    int connect_timeout;     /* seconds to wait for the simulator */
    int reply_timeout;       /* seconds one blocking read/write may take */
    int spin_us;             /* busy-poll for a reply before sleeping */
    int poll_sleep_us;       /* an empty poll sleeps this long on the socket */
    int poll_sleeps;         /* ... this many times after a slow yield */
    int simulator_spin_us;   /* --spin-us of the private simulator */
    int verbose;

    /* state */
    int output; /* opal_output stream for verbose messages */
    mca_btl_swf_module_t *module;
    opal_free_list_t eager_frags;
    opal_free_list_t max_frags;
    bool frags_ready;

    /* the private simulator, when this process started it */
    pid_t sim_pid;
    char *sim_path;   /* the executable found (mca_btl_swf_launch_find) */
    char *token_path; /* the private simulator's token file */
    char *port_file;
    char *sock_file; /* its Unix socket (the simulator removes it) */
    bool port_file_owner;
    bool warned_other_job; /* the "other job" line was shown */
} mca_btl_swf_component_t;

TC_OMPI_MODULE_DECLSPEC extern mca_btl_swf_component_t mca_btl_swf_component;
extern mca_btl_swf_module_t mca_btl_swf_module;

/* btl_swf_module.c */
int mca_btl_swf_add_procs(struct mca_btl_base_module_t *btl, size_t nprocs,
                          struct opal_proc_t **procs, struct mca_btl_base_endpoint_t **peers,
                          struct opal_bitmap_t *reachable);
int mca_btl_swf_del_procs(struct mca_btl_base_module_t *btl, size_t nprocs,
                          struct opal_proc_t **procs, struct mca_btl_base_endpoint_t **peers);
int mca_btl_swf_finalize(struct mca_btl_base_module_t *btl);
int mca_btl_swf_register_error(struct mca_btl_base_module_t *btl,
                               mca_btl_base_module_error_cb_fn_t cbfunc);
void mca_btl_swf_dump(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                      int verbose);

/* btl_swf_send.c */
mca_btl_base_descriptor_t *mca_btl_swf_alloc(struct mca_btl_base_module_t *btl,
                                             struct mca_btl_base_endpoint_t *endpoint,
                                             uint8_t order, size_t size, uint32_t flags);
int mca_btl_swf_free(struct mca_btl_base_module_t *btl, mca_btl_base_descriptor_t *des);
mca_btl_base_descriptor_t *mca_btl_swf_prepare_src(struct mca_btl_base_module_t *btl,
                                                   struct mca_btl_base_endpoint_t *endpoint,
                                                   struct opal_convertor_t *convertor,
                                                   uint8_t order, size_t reserve, size_t *size,
                                                   uint32_t flags);
int mca_btl_swf_send(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                     struct mca_btl_base_descriptor_t *descriptor, mca_btl_base_tag_t tag);
int mca_btl_swf_sendi(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                      struct opal_convertor_t *convertor, void *header, size_t header_size,
                      size_t payload_size, uint8_t order, uint32_t flags, mca_btl_base_tag_t tag,
                      mca_btl_base_descriptor_t **descriptor);

/* btl_swf_recv.c */
int mca_btl_swf_component_progress(void);
void mca_btl_swf_progress_settle(mca_btl_swf_module_t *m);

/* btl_swf_launch.c: the private simulator */
/* listen: the simulator's --listen; NULL: the host-local default */
int mca_btl_swf_launch_start(uint32_t nodes, const char *listen);
/* a job on several hosts: the simulator of rank 0, reached over TCP */
int mca_btl_swf_launch_cluster(uint32_t nodes, char **address, int *port, unsigned char *token);
char *mca_btl_swf_launch_find(char *tried, size_t len);
const char *mca_btl_swf_launch_token_file(void);
int mca_btl_swf_token_read(const char *path, unsigned char *token);
int mca_btl_swf_launch_wait_port(char **host, int *port);
/* a job started by MPI_Comm_spawn: the simulator of its parent job when
 * that one takes joining nodes (OPAL_SUCCESS, *address malloc()ed);
 * OPAL_ERR_NOT_FOUND: no parent, or it offers none (start our own) */
int mca_btl_swf_launch_parent(char **address, int *port, unsigned char *token);
/* tell the jobs this one spawns where its simulator is (joinable), or,
 * with host NULL, that they start their own */
int mca_btl_swf_launch_publish_join(const char *host, int port, const unsigned char *token);
void mca_btl_swf_launch_stop(void);

/* btl_swf_module.c: the simulator's notice that node died (called from
 * delivery with m->lock held; it is released around the report) */
void mca_btl_swf_peer_down(mca_btl_swf_module_t *m, uint32_t node);

/* btl_swf_launch.c: every node is connected: the port file and the token
 * file have served their purpose (removed now, so that no file outlives
 * a launcher that dies) */
void mca_btl_swf_launch_started(void);

/* btl_swf_component.c: a broken connection ends the job with a clear error
 * (called with m->lock held) */
void mca_btl_swf_fatal(mca_btl_swf_module_t *module, const char *what);
void mca_btl_swf_show_help(const char *topic, ...);

END_C_DECLS

#endif /* MCA_BTL_SWF_H */
