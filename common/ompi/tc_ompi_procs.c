/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * tc_ompi_procs.c: the add_procs loop of a BTL that reaches only the
 * processes of its own job on this host (btl_sci, btl_bip): which peers it
 * can reach at all, the endpoint the component attaches to each, and the
 * reachable bitmap. The component keeps what differs: how an endpoint is
 * found and connected, and what it says about unreachable peers.
 */
#include "opal_config.h"

#include "opal/class/opal_bitmap.h"
#include "opal/util/proc.h"

#include "tc_ompi.h"

int tc_ompi_add_local_procs(size_t nprocs, struct opal_proc_t **procs,
                            struct mca_btl_base_endpoint_t **peers, struct opal_bitmap_t *reachable,
                            tc_ompi_attach_fn_t attach, void *ctx)
{
    const opal_proc_t *me = opal_proc_local_get();
    int unreachable = 0;

    for (size_t i = 0; i < nprocs; ++i) {
        struct mca_btl_base_endpoint_t *ep;

        peers[i] = NULL;
        if (procs[i] == me) {
            continue;
        }
        if (procs[i]->proc_name.jobid != me->proc_name.jobid ||
            !OPAL_PROC_ON_LOCAL_NODE(procs[i]->proc_flags)) {
            /* the shared-memory providers reach this host's processes only */
            ++unreachable;
            continue;
        }
        ep = attach(procs[i], ctx);
        if (NULL == ep) {
            ++unreachable;
            continue;
        }
        peers[i] = ep;
        if (NULL != reachable) {
            (void) opal_bitmap_set_bit(reachable, (int) i);
        }
    }
    return unreachable;
}
