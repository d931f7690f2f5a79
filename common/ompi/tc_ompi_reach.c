/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * tc_ompi_reach.c: one BTL module per reach.  A component whose peers are
 * of two kinds (this host: a shared-memory provider; other hosts: a
 * network provider) hands ob1 one module per kind, each with the limits
 * and figures that suit its path: the parameters of the second reach
 * (btl_<component>_<reach>_<figure>), the module made from the component's
 * template with those figures, and the add_procs loop in which each module
 * claims the peers of its own reach only (docs/common_ompi.md, "One BTL module
 * per reach").
 */
#include "opal_config.h"

#include <stdio.h>
#include <stdlib.h>

#include "opal/class/opal_bitmap.h"
#include "opal/constants.h"
#include "opal/mca/base/mca_base_var.h"
#include "opal/mca/btl/base/base.h"
#include "opal/util/proc.h"
#include "opal/util/show_help.h"

#include "tc_ompi.h"

/* one figure: its name (as Open MPI's standard parameter), what it means,
 * its level, where it lives in the figures and whether it is a size_t */
typedef struct tc_ompi_reach_param {
    const char *name;
    const char *desc;
    int level;
    size_t offset;
    bool is_size;
} tc_ompi_reach_param_t;

#define TC_OMPI_REACH_SIZE(field, desc, level)                              \
    {                                                                       \
#field, desc, level, offsetof(tc_ompi_reach_figures_t, field), true \
    }
#define TC_OMPI_REACH_UINT(field, desc, level)                               \
    {                                                                        \
#field, desc, level, offsetof(tc_ompi_reach_figures_t, field), false \
    }

static const tc_ompi_reach_param_t tc_ompi_reach_params[] = {
    TC_OMPI_REACH_SIZE(eager_limit, "Largest message (bytes, with ob1's header) sent eagerly",
                       OPAL_INFO_LVL_4),
    TC_OMPI_REACH_SIZE(rndv_eager_limit,
                       "Bytes (with ob1's header) of the first fragment of a rendezvous "
                       "(at most eager_limit)",
                       OPAL_INFO_LVL_4),
    TC_OMPI_REACH_SIZE(max_send_size,
                       "Largest fragment (bytes) of a message sent in pieces by send/receive",
                       OPAL_INFO_LVL_4),
    TC_OMPI_REACH_SIZE(rdma_pipeline_send_length,
                       "Bytes of a large message sent by send/receive before the RDMA "
                       "pipeline takes over (with the PUT flag)",
                       OPAL_INFO_LVL_4),
    TC_OMPI_REACH_SIZE(rdma_pipeline_frag_size,
                       "Largest RDMA fragment (bytes) of the pipeline protocol (with the PUT flag)",
                       OPAL_INFO_LVL_4),
    TC_OMPI_REACH_SIZE(min_rdma_pipeline_size,
                       "Smallest message (bytes) for the RDMA pipeline protocol instead of "
                       "an RDMA get (raised to at least eager_limit + rdma_pipeline_send_length)",
                       OPAL_INFO_LVL_4),
    TC_OMPI_REACH_UINT(latency, "Latency (microseconds) ob1 ranks the module by", OPAL_INFO_LVL_5),
    TC_OMPI_REACH_UINT(bandwidth, "Bandwidth (Mbps) ob1 weighs the module by", OPAL_INFO_LVL_5),
};

tc_ompi_reach_figures_t tc_ompi_reach_figures(const mca_btl_base_module_t *module)
{
    tc_ompi_reach_figures_t f;

    f.eager_limit = module->btl_eager_limit;
    f.rndv_eager_limit = module->btl_rndv_eager_limit;
    f.max_send_size = module->btl_max_send_size;
    f.rdma_pipeline_send_length = module->btl_rdma_pipeline_send_length;
    f.rdma_pipeline_frag_size = module->btl_rdma_pipeline_frag_size;
    f.min_rdma_pipeline_size = module->btl_min_rdma_pipeline_size;
    f.latency = module->btl_latency;
    f.bandwidth = module->btl_bandwidth;
    return f;
}

int tc_ompi_reach_register(const mca_base_component_t *comp, const char *reach, const char *peers,
                           tc_ompi_reach_figures_t *figures)
{
    for (size_t i = 0; i < sizeof(tc_ompi_reach_params) / sizeof(tc_ompi_reach_params[0]); ++i) {
        const tc_ompi_reach_param_t *p = tc_ompi_reach_params + i;
        char name[64], desc[512];
        int rc;

        if ((size_t) snprintf(name, sizeof(name), "%s_%s", reach, p->name) >= sizeof(name)) {
            return OPAL_ERR_BAD_PARAM;
        }
        /* Open MPI copies both strings when it registers the variable */
        (void) snprintf(desc, sizeof(desc),
                        "%s, for the module that reaches %s (btl_%s_%s is the same figure "
                        "for the module that reaches this host's processes)",
                        p->desc, peers, comp->mca_component_name, p->name);
        rc = mca_base_component_var_register(
            comp, name, desc,
            p->is_size ? MCA_BASE_VAR_TYPE_SIZE_T : MCA_BASE_VAR_TYPE_UNSIGNED_INT, NULL, 0, 0,
            (mca_base_var_info_lvl_t) p->level, MCA_BASE_VAR_SCOPE_READONLY,
            (char *) figures + p->offset);
        if (rc < 0) {
            return rc;
        }
    }
    return OPAL_SUCCESS;
}

void tc_ompi_reach_module_init(mca_btl_base_module_t *module, const mca_btl_base_module_t *template,
                               const tc_ompi_reach_figures_t *figures)
{
    *module = *template;
    module->btl_eager_limit = figures->eager_limit;
    module->btl_rndv_eager_limit = figures->rndv_eager_limit;
    module->btl_max_send_size = figures->max_send_size;
    module->btl_rdma_pipeline_send_length = figures->rdma_pipeline_send_length;
    module->btl_rdma_pipeline_frag_size = figures->rdma_pipeline_frag_size;
    module->btl_min_rdma_pipeline_size = figures->min_rdma_pipeline_size;
    module->btl_latency = (uint32_t) figures->latency;
    module->btl_bandwidth = (uint32_t) figures->bandwidth;
    /* ob1 reads at most eager_limit bytes as the first fragment */
    if (module->btl_rndv_eager_limit > module->btl_eager_limit) {
        module->btl_rndv_eager_limit = module->btl_eager_limit;
    }
    if (0 == module->btl_rdma_pipeline_frag_size) {
        module->btl_rdma_pipeline_frag_size = 1;
    }
    /* the adjustments Open MPI makes to the standard parameters */
    (void) mca_btl_base_param_verify(module);
}

/* a stand-in endpoint: a process of another job, left out of the list of
 * same-job peers no module reaches */
#define TC_OMPI_REACH_OTHER_JOB ((struct mca_btl_base_endpoint_t *) &tc_ompi_reach_other_mark)
static char tc_ompi_reach_other_mark;

int tc_ompi_reach_add_procs(mca_btl_base_module_t *module, const tc_ompi_reach_claim_t *claim,
                            size_t nprocs, struct opal_proc_t **procs,
                            struct mca_btl_base_endpoint_t **peers, struct opal_bitmap_t *reachable)
{
    const opal_proc_t *me = opal_proc_local_get();
    const bool report = NULL != claim->help_file && claim->only_requested &&
        (NULL == claim->warned || !*claim->warned);
    /* for the report: non-NULL where some module of the component reaches
     * the peer (tc_ompi_unreachable_text lists the NULL ones) */
    struct mca_btl_base_endpoint_t **any =
        report ? calloc(nprocs ? nprocs : 1, sizeof(*any)) : NULL;
    int unreachable = 0, other_job = 0;

    for (size_t i = 0; i < nprocs; ++i) {
        mca_btl_base_module_t *owner = NULL;
        struct mca_btl_base_endpoint_t *ep = NULL;

        peers[i] = NULL;
        if (procs[i] == me) {
            continue;
        }
        if (procs[i]->proc_name.jobid != me->proc_name.jobid) {
            /* a component whose endpoint tables, modex records and
             * segment names are its own job's is not asked
             * (docs/fault-tolerance.md, "Processes of another job") */
            ep = claim->other_jobs ? claim->reach(procs[i], claim->ctx, &owner) : NULL;
            if (NULL == ep) {
                ++unreachable;
                ++other_job;
                if (NULL != any) {
                    any[i] = TC_OMPI_REACH_OTHER_JOB;
                }
                continue;
            }
        } else {
            ep = claim->reach(procs[i], claim->ctx, &owner);
        }
        if (NULL == ep) {
            ++unreachable;
            continue;
        }
        if (NULL != any) {
            any[i] = ep;
        }
        if (owner != module) {
            /* another module of the component claims it */
            continue;
        }
        peers[i] = ep;
        if (NULL != reachable) {
            (void) opal_bitmap_set_bit(reachable, (int) i);
        }
    }

    if (unreachable > 0 && NULL != any) {
        char who[512], btls[256];

        if (NULL != claim->warned) {
            *claim->warned = true;
        }
        tc_ompi_unreachable_text(nprocs, procs, any, who, sizeof(who), btls, sizeof(btls));
        if (other_job > 0) {
            /* one line: ob1 takes another BTL for them when there is one */
            opal_show_help(claim->help_file, "other job", true, opal_process_info.nodename,
                           other_job, btls);
        }
        if (unreachable > other_job) {
            opal_show_help(claim->help_file, "peer unreachable", true, opal_process_info.nodename,
                           unreachable - other_job,
                           NULL != claim->providers ? claim->providers : "", who, btls);
        }
    }
    free(any);
    return unreachable;
}
