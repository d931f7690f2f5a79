/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * btl_sctp_keeper.c: the user stack's keeper thread.
 *
 * usrsctp runs without threads and moves packets only while Open MPI
 * drives btl_progress. A rank that computes, or spins on shared memory,
 * without calling MPI therefore answers nothing: its peers' data goes
 * unacknowledged, the data it handed to the stack before the pause waits
 * for a SACK it never reads, and after max_retrans retransmissions its
 * peers abort the association. The kernel stack has none of this: the
 * kernel acknowledges and retransmits on its own.
 *
 * The keeper does for the user stack what the kernel does for the kernel
 * stack, and only while the process does not: every btl_sctp_keeper_ms it
 * wakes, and when no progress call took the stack since its last look, it
 * takes the component's lock (trylock: an active thread is never made to
 * wait) and runs the packet layer once: UDP in, usrsctp's timers, path
 * probes. Messages that arrive stay in the stack's socket buffer (its
 * window closes when that fills); the keeper never calls into Open MPI,
 * and the next progress call hands them up.
 */
#include "opal_config.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "btl_sctp.h"
#include "tc_atomic.h"

static void *mca_btl_sctp_keeper_main(void *arg)
{
    mca_btl_sctp_component_t *c = (mca_btl_sctp_component_t *) arg;
    struct timespec nap = {
        .tv_sec = c->keeper_ms / 1000,
        .tv_nsec = (long) (c->keeper_ms % 1000) * 1000000L,
    };
    uint64_t seen = tc_atomic_load_relaxed(&c->drives);

    while (!tc_atomic_load_acquire(&c->keeper_stop)) {
        uint64_t now;

        (void) nanosleep(&nap, NULL);
        now = tc_atomic_load_relaxed(&c->drives);
        if (now != seen) {
            seen = now; /* a thread drove the stack meanwhile */
            continue;
        }
        if (0 != opal_mutex_trylock(&c->lock)) {
            continue; /* someone is in the BTL right now */
        }
        if (NULL != c->sock && !c->finalizing) {
            if (btl_sctp_sock_progress(c->sock) > 0) {
                /* packets came in: the next progress call must read the
                 * socket even if no new packet arrives by then */
                c->keeper_input = 1;
            }
            ++c->keeper_runs;
        }
        opal_mutex_unlock(&c->lock);
    }
    return NULL;
}

int mca_btl_sctp_keeper_start(mca_btl_sctp_component_t *c)
{
    int rc;

    if (c->keeper_ms <= 0 || BTL_SCTP_STACK_USER != c->stack) {
        return OPAL_SUCCESS;
    }
    tc_atomic_store_relaxed(&c->keeper_stop, 0);
    /* from here on the lock is taken whatever the thread level: the keeper
     * and the application's thread share the stack */
    c->locking = true;
    rc = pthread_create(&c->keeper, NULL, mca_btl_sctp_keeper_main, c);
    if (0 != rc) {
        c->locking = c->use_threads;
        opal_output_verbose(1, c->output, "btl:sctp: no keeper thread: %s", strerror(rc));
        return OPAL_SUCCESS; /* the BTL works without it, as before */
    }
    c->keeper_on = true;
    return OPAL_SUCCESS;
}

void mca_btl_sctp_keeper_stop(mca_btl_sctp_component_t *c)
{
    if (!c->keeper_on) {
        return;
    }
    tc_atomic_store_release(&c->keeper_stop, 1);
    (void) pthread_join(c->keeper, NULL);
    c->keeper_on = false;
    opal_output_verbose(10, c->output, "btl:sctp: the keeper drove the stack %lu time(s)",
                        (unsigned long) c->keeper_runs);
}
