/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * btl_sctp_others.c: endpoints for processes of other jobs (MPI_Comm_spawn,
 * MPI_Comm_connect/accept, a ULFM respawn) that reach us before the PML
 * handed them to us.
 *
 * The user stack takes a datagram only from an address some endpoint
 * owns. Open MPI 5.0's connect/accept hands the new processes to the PML
 * with a count of 0 (ompi/dpm/dpm.c), so a BTL meets them only when this
 * side first sends to one of them: until then the other side's INIT is
 * dropped here, its association gives up and the peer is reported dead.
 * So when datagrams from unknown senders came in, the processes of other
 * jobs that Open MPI knows (its process list: those met through
 * connect/accept) and we have no endpoint for get one from their modex
 * records; the sender's next resend is then taken in. A stranger only
 * makes us read records Open MPI already holds: the source address must
 * still be one of a known process's published addresses.
 */

#include "opal_config.h"

#include <stdlib.h>
#include <time.h>

#include "opal/class/opal_object.h"
#include "opal/util/output.h"
#include "opal/util/proc.h"

#include "tc_ompi.h"

#include "btl_sctp.h"
#include "btl_sctp_endpoint.h"

/* Open MPI's list of every process it knows (libmpi; each one retained).
 * Weak: a program that loads the component without libmpi has none. An
 * ompi_proc_t starts with its opal_proc_t. */
extern opal_proc_t **ompi_proc_all(size_t *size) __attribute__((weak));

/* a burst of strangers (one INIT resent, many packets of an association
 * that ended) looks at the process list at most this often */
#define MCA_BTL_SCTP_OTHERS_EVERY_MS 50

/* monotonic: a step of the wall clock must not stop or rush the look */
static uint64_t mca_btl_sctp_others_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t) ts.tv_sec * 1000u + (uint64_t) ts.tv_nsec / 1000000u;
}

/* Under the component's lock, from progress. */
int mca_btl_sctp_others_learn(void)
{
    mca_btl_sctp_component_t *c = &mca_btl_sctp_component;
    opal_process_name_t me = OPAL_PROC_MY_NAME;
    opal_proc_t **procs;
    size_t n = 0;
    uint64_t now;
    int added = 0;

    if (NULL == c->sock || c->finalizing || c->sock->strangers == c->strangers_seen ||
        NULL == ompi_proc_all) {
        return 0;
    }
    now = mca_btl_sctp_others_now_ms();
    if (now - c->others_ms < MCA_BTL_SCTP_OTHERS_EVERY_MS) {
        return 0;
    }
    c->others_ms = now;
    c->strangers_seen = c->sock->strangers;
    procs = ompi_proc_all(&n);
    if (NULL == procs) {
        return 0;
    }
    for (size_t i = 0; i < n; ++i) {
        opal_proc_t *proc = procs[i];
        /* the job's own processes got theirs at the first add_procs */
        if (proc->proc_name.jobid != me.jobid &&
            NULL == mca_btl_sctp_endpoint_of(&proc->proc_name) &&
            NULL != mca_btl_sctp_endpoint_create(proc)) {
            opal_output_verbose(10, c->output, "btl:sctp: endpoint for %s of another job",
                                OPAL_NAME_PRINT(proc->proc_name));
            ++added;
        }
    }
    for (size_t i = 0; i < n; ++i) {
        OBJ_RELEASE(procs[i]);
    }
    free(procs);
    return added;
}
