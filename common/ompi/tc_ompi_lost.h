/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * tc_ompi_lost.h: a peer that is gone, as every BTL of this project
 * reports it (tc_ompi_lost.c): fatal without MPI fault tolerance, a
 * failure of that peer alone under ULFM (Open MPI 5.0, mpirun --with-ft
 * ulfm), and the pending descriptors and RDMA operations to it completed
 * with OPAL_ERR_UNREACH. The contract these follow is docs/fault-tolerance.md.
 * Included by tc_ompi.h.
 */
#ifndef TC_OMPI_LOST_H
#define TC_OMPI_LOST_H

#include "opal_config.h"

#include <stdbool.h>

#include "opal/class/opal_list.h"
#include "opal/mca/btl/btl.h"
#include "opal/util/proc.h"

#include "tc_atomic.h"

BEGIN_C_DECLS

/* Whether this process runs with MPI fault tolerance: the MCA variable
 * mpi_ft_enable, which mpirun --with-ft ulfm sets (Open MPI 5.0 built
 * with ULFM); false where it does not exist (4.1, a program without the
 * MPI layer). Looked up at each call (a lookup by name: keep the answer
 * where a hot path needs it); call it from btl_init or later, once the
 * MPI layer has registered its parameters. */
bool tc_ompi_ft_enabled(void);

/* Whether the MPI layer counts proc as failed (ULFM: the runtime or a
 * BTL reported it). A BTL that hands ob1 its peers' fragments in the
 * order they were sent (a stream, a queue that outlives the sender)
 * drops what still arrives from such a peer: ob1 completed and freed the
 * receives that waited for it, and a late rendezvous fragment would be
 * unpacked into a freed request. false without ULFM (4.1) and for NULL. */
bool tc_ompi_proc_failed(opal_proc_t *proc);

/* What the report of a lost peer says and to whom (the same fields as
 * tc_ompi_fatal_info_t; kept apart so that this file stands alone). */
typedef struct tc_ompi_lost_t {
    const char *btl;       /* component name */
    const char *help_file; /* its help file, with the topic "peer lost" */
    int output;            /* its diagnostic stream */
    mca_btl_base_module_t *module;
    mca_btl_base_module_error_cb_fn_t error_cb; /* the PML's, or NULL */
} tc_ompi_lost_t;

/* Report a peer that is gone for good: a process that died, a host that
 * is unreachable. The caller first marks its endpoint failed (once per
 * peer: this function keeps no state per peer), completes or releases
 * what was pending to it (tc_ompi_lost_fail_des, tc_ompi_lost_fail_rdma)
 * and holds no lock that its own send path takes: the PML's callback may
 * send to other peers through this BTL before it returns.
 *
 * Under fault tolerance (tc_ompi_ft_enabled and proc not NULL): a line on
 * the component's stream (btl_base_verbose 1); one line on the job's
 * output per peer too when btl_base_warn_peer_error is set (the ft-mpi
 * parameter set that --with-ft loads clears it); then the PML's callback
 * with MCA_BTL_ERROR_FLAGS_NONFATAL: ob1 marks proc failed and the job
 * goes on.
 *
 * Otherwise (no fault tolerance, or proc NULL: a loss that is not one
 * peer's, such as a dead simulator): tc_ompi_fatal_peer (the help topic
 * "peer lost" once per process, the callback with
 * MCA_BTL_ERROR_FLAGS_FATAL: ob1 ends the job).
 *
 * A peer that leaves by MPI_Finalize is no loss: never report it here
 * (under ULFM the report makes every survivor treat it as failed).
 * Returns the flags the callback was given (for tests and the caller's
 * own log). */
int32_t tc_ompi_peer_lost(const tc_ompi_lost_t *who, opal_proc_t *proc, const char *peer_kind,
                          int peer_id, const char *why);

/* Complete a send descriptor that will never reach its peer, as Open
 * MPI's btl/tcp does with the fragments queued to a failed endpoint:
 * des_cbfunc (when set) with OPAL_ERR_UNREACH, then release (when the
 * BTL owns the descriptor, MCA_BTL_DES_FLAGS_BTL_OWNERSHIP). Only for a
 * descriptor the BTL accepted (btl_send returned 0): one it refused is
 * the caller's. ep is the endpoint given to btl_send. */
void tc_ompi_lost_fail_des(mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *ep,
                           mca_btl_base_descriptor_t *des,
                           void (*release)(mca_btl_base_descriptor_t *des));

/* The same for every descriptor on list (removed in order; each item is a
 * descriptor's list item, des->super.super). The list's lock, if it has
 * one, is the caller's: take the items out under it, then call this on
 * a list of your own. Returns the number completed. */
int tc_ompi_lost_fail_list(mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *ep,
                           opal_list_t *list, void (*release)(mca_btl_base_descriptor_t *des));

/* An endpoint's loss as a field of the endpoint records it (an int32_t,
 * atomic: 0 none, 3 being marked, 1 lost and its report owed, 2
 * reported), so that the endpoint is failed where the loss is seen and
 * reported from progress.
 * tc_ompi_lost_mark: true for the one call that marks it lost; never for
 * an endpoint that failed before without a loss (failed: a peer that
 * left in order, a connection whose failure was reported). The caller then
 * records why, fails the endpoint, and only then calls tc_ompi_lost_owe
 * and tells its progress that a report is owed: progress, woken by
 * another peer's loss meanwhile, takes no endpoint still being marked (it
 * would clear the endpoint's queues while senders still saw it
 * connected). A component that reports at once leaves it marked.
 * tc_ompi_lost_take, from progress: true once for an endpoint whose
 * report is owed, which the caller then makes. */
static inline bool tc_ompi_lost_mark(int32_t *lost, bool failed)
{
    int32_t none = 0;

    if (failed && 0 == tc_atomic_load_acquire(lost)) {
        return false;
    }
    return tc_atomic_cswap(lost, &none, 3);
}

static inline void tc_ompi_lost_owe(int32_t *lost)
{
    tc_atomic_store_release(lost, 1);
}

static inline bool tc_ompi_lost_take(int32_t *lost)
{
    int32_t owed = 1;

    return tc_atomic_cswap(lost, &owed, 2);
}

/* The runtime's word on a process of this job that died (Open MPI 5.0
 * under fault tolerance: the PMIx events ULFM itself acts on;
 * tc_ompi_watch.c). fn(vpid, arg) runs in the runtime's thread, before
 * ULFM sees the event: it may only mark state (atomics) for the
 * component's progress and break the component's waits on that peer.
 * Call from add_procs (after ULFM registered its handler). Returns true
 * when watching: false on 4.1, without fault tolerance, or when PMIx
 * refuses. One watcher per component; tc_ompi_watch_stop before the
 * state fn touches goes (finalize). */
bool tc_ompi_watch_start(void (*fn)(uint32_t vpid, void *arg), void *arg);
void tc_ompi_watch_stop(void);

/* The other source of that word: the end of a TCP connection to each
 * process on another host (tc_peerwatch.h), for the death of a whole
 * host, of which the runtime says nothing before it ends the job. Its
 * switch, <component>_ft_peerwatch (default true), is registered by
 * tc_ompi_watch_register from the component's register function;
 * tc_ompi_watch_publish, from btl_init (before the job's modex exchange),
 * opens the listening socket and publishes its address under fault
 * tolerance; tc_ompi_watch_start connects and watches (fn is called from
 * the watcher's thread as from the runtime's); tc_ompi_watch_stop says
 * goodbye and closes it all, even when start never ran. */
int tc_ompi_watch_register(const mca_base_component_t *comp);
void tc_ompi_watch_publish(const mca_base_component_t *comp);

/* The status a send, put, get or atomic to a peer known to be lost
 * returns at once (the caller keeps its descriptor; ob1 completes the
 * request with MPI_ERR_PROC_FAILED under ULFM). Never OUT_OF_RESOURCE:
 * ob1 would queue the request and try again for ever. */
#define TC_OMPI_LOST_STATUS OPAL_ERR_UNREACH

END_C_DECLS

#endif /* TC_OMPI_LOST_H */
