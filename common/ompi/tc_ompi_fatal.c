/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * tc_ompi_fatal.c: the report of the fatal-peer path (tc_ompi.h): a line
 * on the component's stream, one help message per process, and the PML's
 * error callback.
 */

#include "opal_config.h"

#include "opal/util/output.h"
#include "opal/util/proc.h"
#include "opal/util/show_help.h"

#include "tc_atomic.h"
#include "tc_ompi.h"

void tc_ompi_fatal_peer(const tc_ompi_fatal_info_t *info, mca_btl_base_module_t *btl,
                        mca_btl_base_module_error_cb_fn_t error_cb, opal_proc_t *proc,
                        const char *peer_kind, int peer_id, const char *why)
{
    /* one message per process and component (this library is linked into
     * each component apart): the first lost peer is the news */
    static int32_t shown = 0;

    opal_output_verbose(1, info->output, "btl:%s: %s %d: %s", info->btl, peer_kind, peer_id, why);
    if (0 == tc_atomic_swap(&shown, 1)) {
        opal_show_help(info->help_file, "peer lost", true, info->btl, (int) OPAL_PROC_MY_NAME.vpid,
                       opal_process_info.nodename, peer_kind, peer_id, why);
    }
    /* the PML decides (ob1 aborts the job): never hang on a dead peer */
    if (NULL != error_cb) {
        error_cb(btl, MCA_BTL_ERROR_FLAGS_FATAL, proc, (char *) why);
    }
}
