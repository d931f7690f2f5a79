/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * tc_ompi_lost.c: the report of a lost peer under MPI fault tolerance or
 * without it, and the completion of what was pending to it
 * (tc_ompi_lost.h).
 */

#include "opal_config.h"

#include "opal/mca/base/mca_base_var.h"
#include "opal/util/output.h"
#include "opal/util/proc.h"

#include "tc_ompi.h"

#if TC_OMPI_FT_MPI
#include "ompi/proc/proc.h"
#endif

/* The value of a boolean MCA variable, or def when it is not registered. */
static bool tc_ompi_lost_var_bool(const char *project, const char *framework, const char *component,
                                  const char *name, bool def)
{
    const bool *value = NULL;
    int idx = mca_base_var_find(project, framework, component, name);

    if (idx < 0 || OPAL_SUCCESS != mca_base_var_get_value(idx, &value, NULL, NULL) ||
        NULL == value) {
        return def;
    }
    return *value;
}

bool tc_ompi_ft_enabled(void)
{
    return tc_ompi_lost_var_bool("ompi", "mpi", "ft", "enable", false);
}

bool tc_ompi_proc_failed(opal_proc_t *proc)
{
#if TC_OMPI_FT_MPI
    /* the BTLs' procs are the MPI layer's ompi_proc_t (never its
     * sentinels, which have the low bit set); proc_active is true unless
     * ULFM marked the process failed */
    if (NULL == proc || 0 != ((uintptr_t) proc & 1)) {
        return false;
    }
    return !((ompi_proc_t *) proc)->proc_active;
#else
    (void) proc;
    return false;
#endif
}

int32_t tc_ompi_peer_lost(const tc_ompi_lost_t *who, opal_proc_t *proc, const char *peer_kind,
                          int peer_id, const char *why)
{
    if (NULL == proc || !tc_ompi_ft_enabled()) {
        tc_ompi_fatal_peer(&(tc_ompi_fatal_info_t){who->btl, who->help_file, who->output},
                           who->module, who->error_cb, proc, peer_kind, peer_id, why);
        return MCA_BTL_ERROR_FLAGS_FATAL;
    }
    opal_output_verbose(1, who->output, "btl:%s: %s %d (%s) lost: %s; the job goes on", who->btl,
                        peer_kind, peer_id, OPAL_NAME_PRINT(proc->proc_name), why);
    /* 5.0's btl/tcp shows its lost peers under this switch too; the
     * ft-mpi parameter set clears it, since failures are expected */
    if (tc_ompi_lost_var_bool("opal", "btl", "base", "warn_peer_error", false)) {
        opal_output(0, "btl:%s: process %d on %s lost %s %d: %s; the job goes on (fault tolerance)",
                    who->btl, (int) OPAL_PROC_MY_NAME.vpid, opal_process_info.nodename, peer_kind,
                    peer_id, why);
    }
    if (NULL != who->error_cb) {
        who->error_cb(who->module, MCA_BTL_ERROR_FLAGS_NONFATAL, proc, (char *) why);
    }
    return MCA_BTL_ERROR_FLAGS_NONFATAL;
}

void tc_ompi_lost_fail_des(mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *ep,
                           mca_btl_base_descriptor_t *des,
                           void (*release)(mca_btl_base_descriptor_t *des))
{
    /* read before the callback: the owner may reuse the descriptor there */
    bool owned = 0 != (des->des_flags & MCA_BTL_DES_FLAGS_BTL_OWNERSHIP);

    if (NULL != des->des_cbfunc) {
        des->des_cbfunc(btl, ep, des, TC_OMPI_LOST_STATUS);
    }
    if (owned && NULL != release) {
        release(des);
    }
}

int tc_ompi_lost_fail_list(mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *ep,
                           opal_list_t *list, void (*release)(mca_btl_base_descriptor_t *des))
{
    opal_list_item_t *item;
    int n = 0;

    while (NULL != (item = opal_list_remove_first(list))) {
        tc_ompi_lost_fail_des(btl, ep, (mca_btl_base_descriptor_t *) item, release);
        n++;
    }
    return n;
}
