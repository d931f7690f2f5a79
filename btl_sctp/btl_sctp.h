/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * btl_sctp.h: the btl/sctp component and module.
 *
 * One module per process, over one one-to-many SCTP socket (kernel or
 * user stack, see btl_sctp_sock.h) bound to every allowed interface.
 */
#ifndef MCA_BTL_SCTP_H
#define MCA_BTL_SCTP_H

#include "opal_config.h"

#include <pthread.h>
#include <stdint.h>

#include "opal/class/opal_free_list.h"
#include "opal/class/opal_list.h"
#include "opal/mca/btl/btl.h"
#include "opal/mca/btl/base/base.h"
#include "tc_ompi_compat.h"
#include TC_OMPI_MUTEX_H

#include "btl_sctp_sock.h"

BEGIN_C_DECLS

/* Payload of the fragments small messages take (the eager free list),
 * whatever the eager limit: memory per queued small message stays 64 KiB. */
#define MCA_BTL_SCTP_SMALL_FRAG (64 * 1024)

typedef struct mca_btl_sctp_component_t {
    mca_btl_base_component_3_0_0_t super;

    /* parameters */
    int stack_param; /* auto, kernel, user */
    char *if_include;
    char *if_exclude;
    int num_streams;
    int sndbuf;
    int rcvbuf;
    bool nodelay;
    int mtu;
    bool crc32c;
    bool user_pool;
    int sack_freq;
    int send_batch; /* user stack: BTL_SCTP_SEND_* */
    bool gro;       /* user stack: UDP_GRO */
    bool segment;   /* user stack: 64 KB SCTP packets cut into datagrams */
    int probe_ms;
    int path_timeout_ms;
    int rto_min_ms;
    int rto_max_ms;
    int rto_initial_ms;
    int max_retrans;
    int path_max_retrans;
    int pf_retrans;
    int hb_ms;
    bool cmt;
    int sctp_port;
    bool prio_streams;
    int inplace_min;
    int free_list_num;
    int free_list_max;
    int free_list_inc;
    int max_queued; /* fragments queued per endpoint, at most */
    int keeper_ms;  /* user stack: keeper thread interval (0: none) */
    int verbose;

    /* state */
    int output; /* opal_output stream */
    int stack;  /* the stack in use */
    btl_sctp_sock_t *sock;
    opal_free_list_t eager_frags; /* payloads up to eager_frag_size */
    opal_free_list_t max_frags;   /* payloads up to max_frag_size */
    size_t eager_frag_size;
    size_t max_frag_size;
    opal_list_t endpoints;
    opal_list_t pending_eps; /* endpoints with queued fragments */
    int finalizing;
    int explicit_request; /* sctp named in the btl list */
    int job_added;        /* every process of the job has its endpoint */
    int own_progress;     /* progress registered by the component itself */
    /* processes of other jobs (btl_sctp_others.c): the socket's stranger
     * count last looked at, and when */
    unsigned int strangers_seen;
    uint64_t others_ms;

    /* MPI_THREAD_MULTIPLE: one lock over the socket layer (usrsctp's glue
     * is single-threaded), the endpoint lists and their queues. Recursive:
     * callbacks into the PML run under it and may send again. Taken only
     * when Open MPI enabled threads (use_threads). */
    bool use_threads;
    opal_recursive_mutex_t lock;

    /* The user stack's keeper thread (btl_sctp_keeper.c). While it runs
     * the lock is taken whatever the thread level (locking). drives counts
     * progress calls that took the stack; keeper_input says the keeper
     * read packets that no progress call has looked at yet. */
    bool locking;
    bool keeper_on;
    pthread_t keeper;
    int32_t keeper_stop;
    uint64_t drives;
    int keeper_input;
    uint64_t keeper_runs;
} mca_btl_sctp_component_t;

TC_OMPI_MODULE_DECLSPEC extern mca_btl_sctp_component_t mca_btl_sctp_component;

static inline void mca_btl_sctp_lock(void)
{
    if (mca_btl_sctp_component.locking) {
        opal_mutex_lock(&mca_btl_sctp_component.lock);
    }
}

static inline void mca_btl_sctp_unlock(void)
{
    if (mca_btl_sctp_component.locking) {
        opal_mutex_unlock(&mca_btl_sctp_component.lock);
    }
}

typedef struct mca_btl_sctp_module_t {
    mca_btl_base_module_t super;
    mca_btl_base_module_error_cb_fn_t error_cb;
} mca_btl_sctp_module_t;

extern mca_btl_sctp_module_t mca_btl_sctp_module;

int mca_btl_sctp_component_progress(void);

/* the user stack's keeper thread: started at init when the user stack is
 * in use and btl_sctp_keeper_ms > 0, stopped before finalize */
int mca_btl_sctp_keeper_start(mca_btl_sctp_component_t *c);
void mca_btl_sctp_keeper_stop(mca_btl_sctp_component_t *c);

int mca_btl_sctp_add_procs(struct mca_btl_base_module_t *btl, size_t nprocs,
                           struct opal_proc_t **procs, struct mca_btl_base_endpoint_t **peers,
                           opal_bitmap_t *reachable);
int mca_btl_sctp_del_procs(struct mca_btl_base_module_t *btl, size_t nprocs,
                           struct opal_proc_t **procs, struct mca_btl_base_endpoint_t **peers);
int mca_btl_sctp_finalize(struct mca_btl_base_module_t *btl);
mca_btl_base_descriptor_t *mca_btl_sctp_alloc(struct mca_btl_base_module_t *btl,
                                              struct mca_btl_base_endpoint_t *endpoint,
                                              uint8_t order, size_t size, uint32_t flags);
int mca_btl_sctp_free(struct mca_btl_base_module_t *btl, mca_btl_base_descriptor_t *des);
mca_btl_base_descriptor_t *mca_btl_sctp_prepare_src(struct mca_btl_base_module_t *btl,
                                                    struct mca_btl_base_endpoint_t *endpoint,
                                                    struct opal_convertor_t *convertor,
                                                    uint8_t order, size_t reserve, size_t *size,
                                                    uint32_t flags);
int mca_btl_sctp_send(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                      struct mca_btl_base_descriptor_t *descriptor, mca_btl_base_tag_t tag);
int mca_btl_sctp_sendi(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                       struct opal_convertor_t *convertor, void *header, size_t header_size,
                       size_t payload_size, uint8_t order, uint32_t flags, mca_btl_base_tag_t tag,
                       mca_btl_base_descriptor_t **descriptor);
int mca_btl_sctp_register_error(struct mca_btl_base_module_t *btl,
                                mca_btl_base_module_error_cb_fn_t cbfunc);
void mca_btl_sctp_dump(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                       int verbose);

/* receive path, called from progress */
void mca_btl_sctp_recv_msg(const btl_sctp_sock_msg_t *msg);
struct mca_btl_base_endpoint_t *mca_btl_sctp_endpoint_create(opal_proc_t *proc);
struct mca_btl_base_endpoint_t *mca_btl_sctp_endpoint_of(const opal_process_name_t *name);
int mca_btl_sctp_others_learn(void);

END_C_DECLS

#endif /* MCA_BTL_SCTP_H */
