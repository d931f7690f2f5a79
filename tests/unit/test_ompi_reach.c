/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_ompi_reach.c: one BTL module per reach (common/ompi/tc_ompi_reach.c):
 * the reach's parameters (names, defaults, values from the environment,
 * levels and descriptions as ompi_info shows them), the module made from a
 * template with the reach's figures and Open MPI's adjustments, and the
 * add_procs loop in which each module claims only the peers of its reach.
 */
#include "opal_config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tc_unit.h"

#include "opal/class/opal_bitmap.h"
#include "opal/constants.h"
#include "opal/mca/base/mca_base_var.h"
#include "opal/runtime/opal.h"
#include "opal/util/proc.h"
#include "opal/util/show_help.h"

#include "tc_ompi.h"

static mca_base_component_t test_comp = {
    .mca_project_name = "opal",
    .mca_type_name = "btl",
    .mca_component_name = "rtst",
};

static const char *const figure_names[] = {
    "eager_limit",
    "rndv_eager_limit",
    "max_send_size",
    "rdma_pipeline_send_length",
    "rdma_pipeline_frag_size",
    "min_rdma_pipeline_size",
    "latency",
    "bandwidth",
};

static const mca_base_var_t *find_var(const char *name)
{
    const mca_base_var_t *var = NULL;
    int idx = mca_base_var_find("opal", "btl", "rtst", name);

    if (idx < 0 || OPAL_SUCCESS != mca_base_var_get(idx, &var)) {
        fail_msg("btl_rtst_%s is not registered", name);
    }
    return var;
}

/* every figure registered under the reach's name, with the defaults given,
 * a value from the environment where one is set, a description naming
 * the same-host parameter, and Open MPI's levels */
static void test_register(void **state)
{
    tc_ompi_reach_figures_t f = {
        .eager_limit = 32832,
        .rndv_eager_limit = 2112,
        .max_send_size = 65536,
        .rdma_pipeline_send_length = 1024,
        .rdma_pipeline_frag_size = 1 << 20,
        .min_rdma_pipeline_size = 0,
        .latency = 10,
        .bandwidth = 10000,
    };

    (void) state;
    setenv("OMPI_MCA_btl_rtst_net_eager_limit", "40000", 1);
    setenv("OMPI_MCA_btl_rtst_net_bandwidth", "123", 1);
    assert_int_equal(tc_ompi_reach_register(&test_comp, "net", "peers on other hosts", &f),
                     OPAL_SUCCESS);
    assert_int_equal(f.eager_limit, 40000);
    assert_int_equal(f.bandwidth, 123);
    /* the others keep their defaults */
    assert_int_equal(f.rndv_eager_limit, 2112);
    assert_int_equal(f.max_send_size, 65536);
    assert_int_equal(f.rdma_pipeline_send_length, 1024);
    assert_int_equal(f.rdma_pipeline_frag_size, 1 << 20);
    assert_int_equal(f.min_rdma_pipeline_size, 0);
    assert_int_equal(f.latency, 10);

    for (size_t i = 0; i < sizeof(figure_names) / sizeof(figure_names[0]); ++i) {
        char name[64], same_host[64];
        const mca_base_var_t *var;

        snprintf(name, sizeof(name), "net_%s", figure_names[i]);
        snprintf(same_host, sizeof(same_host), "btl_rtst_%s", figure_names[i]);
        var = find_var(name);
        assert_non_null(var->mbv_description);
        assert_non_null(strstr(var->mbv_description, "peers on other hosts"));
        assert_non_null(strstr(var->mbv_description, same_host));
        assert_int_equal(var->mbv_info_lvl,
                         0 == strcmp(figure_names[i], "latency") ||
                                 0 == strcmp(figure_names[i], "bandwidth")
                             ? OPAL_INFO_LVL_5
                             : OPAL_INFO_LVL_4);
        assert_int_equal(var->mbv_scope, MCA_BASE_VAR_SCOPE_READONLY);
    }
    unsetenv("OMPI_MCA_btl_rtst_net_eager_limit");
    unsetenv("OMPI_MCA_btl_rtst_net_bandwidth");
}

/* a reach name that does not fit is refused, nothing half-registered */
static void test_register_long_name(void **state)
{
    char reach[80];
    tc_ompi_reach_figures_t f;

    (void) state;
    memset(&f, 0, sizeof(f));
    memset(reach, 'r', sizeof(reach) - 1);
    reach[sizeof(reach) - 1] = '\0';
    assert_int_equal(tc_ompi_reach_register(&test_comp, reach, "x", &f), OPAL_ERR_BAD_PARAM);
}

static int fake_add_procs(struct mca_btl_base_module_t *btl, size_t nprocs,
                          struct opal_proc_t **procs, struct mca_btl_base_endpoint_t **peers,
                          struct opal_bitmap_t *reachable)
{
    (void) btl;
    (void) nprocs;
    (void) procs;
    (void) peers;
    (void) reachable;
    return OPAL_SUCCESS;
}

static int fake_put(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                    void *local_address, uint64_t remote_address,
                    struct mca_btl_base_registration_handle_t *local_handle,
                    struct mca_btl_base_registration_handle_t *remote_handle, size_t size,
                    int flags, int order, mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext,
                    void *cbdata)
{
    (void) btl;
    (void) endpoint;
    (void) local_address;
    (void) remote_address;
    (void) local_handle;
    (void) remote_handle;
    (void) size;
    (void) flags;
    (void) order;
    (void) cbfunc;
    (void) cbcontext;
    (void) cbdata;
    return OPAL_SUCCESS;
}

/* the module is the template but for the figures; rndv_eager_limit is
 * kept within eager_limit and Open MPI's own adjustments apply */
static void test_module_init(void **state)
{
    mca_btl_base_module_t template, module;
    tc_ompi_reach_figures_t f = {
        .eager_limit = 32832,
        .rndv_eager_limit = 65536,
        .max_send_size = 32832,
        .rdma_pipeline_send_length = 4096,
        .rdma_pipeline_frag_size = 0,
        .min_rdma_pipeline_size = 100,
        .latency = 9,
        .bandwidth = 7000,
    };

    (void) state;
    memset(&template, 0, sizeof(template));
    template.btl_add_procs = fake_add_procs;
    template.btl_put = fake_put;
    template.btl_flags = MCA_BTL_FLAGS_SEND | MCA_BTL_FLAGS_PUT | MCA_BTL_FLAGS_GET;
    template.btl_exclusivity = 1023;
    template.btl_registration_handle_size = 48;
    template.btl_eager_limit = 2112;
    template.btl_max_send_size = 2112;
    template.btl_latency = 1;
    template.btl_bandwidth = 40000;
    template.btl_put_limit = 0;

    memset(&module, 0xa5, sizeof(module));
    tc_ompi_reach_module_init(&module, &template, &f);
    assert_ptr_equal(module.btl_add_procs, fake_add_procs);
    assert_ptr_equal(module.btl_put, fake_put);
    assert_null(module.btl_get);
    assert_int_equal(module.btl_exclusivity, 1023);
    assert_int_equal(module.btl_registration_handle_size, 48);
    assert_int_equal(module.btl_eager_limit, 32832);
    assert_int_equal(module.btl_max_send_size, 32832);
    assert_int_equal(module.btl_rndv_eager_limit, 32832);
    assert_int_equal(module.btl_rdma_pipeline_send_length, 4096);
    assert_int_equal(module.btl_rdma_pipeline_frag_size, 1);
    assert_int_equal(module.btl_min_rdma_pipeline_size, 32832 + 4096);
    assert_int_equal(module.btl_latency, 9);
    assert_int_equal(module.btl_bandwidth, 7000);
    /* Open MPI's checks: no get function, no GET flag; limit 0 = none */
    assert_int_equal(module.btl_flags & MCA_BTL_FLAGS_GET, 0);
    assert_int_equal(module.btl_flags & MCA_BTL_FLAGS_PUT, MCA_BTL_FLAGS_PUT);
    assert_int_equal(module.btl_put_limit, SIZE_MAX);
    /* the template is not changed */
    assert_int_equal(template.btl_eager_limit, 2112);
    assert_int_equal(template.btl_flags & MCA_BTL_FLAGS_GET, MCA_BTL_FLAGS_GET);
}

/* two modules; even vpids reach through A, odd ones through B, vpid 3
 * through none */
typedef struct reach_ctx {
    mca_btl_base_module_t *a, *b;
    struct mca_btl_base_endpoint_t *eps[8];
    int calls;
} reach_ctx_t;

static struct mca_btl_base_endpoint_t *fake_reach(struct opal_proc_t *proc, void *ctx,
                                                  mca_btl_base_module_t **module)
{
    reach_ctx_t *rc = ctx;
    uint32_t vpid = proc->proc_name.vpid;

    ++rc->calls;
    if (3 == vpid || vpid >= 8) {
        return NULL;
    }
    *module = 0 == vpid % 2 ? rc->a : rc->b;
    return rc->eps[vpid];
}

/* the claim of a test component over ctx; endpoints at base + 16 * vpid */
static tc_ompi_reach_claim_t reach_setup(reach_ctx_t *rc, mca_btl_base_module_t *a,
                                         mca_btl_base_module_t *b, uintptr_t base, bool *warned)
{
    tc_ompi_reach_claim_t claim = {.reach = fake_reach,
                                   .ctx = rc,
                                   .help_file = "help-mpi-btl-rtst.txt",
                                   .providers = "shm, net",
                                   .only_requested = false,
                                   .warned = warned};

    memset(rc, 0, sizeof(*rc));
    memset(a, 0, sizeof(*a));
    memset(b, 0, sizeof(*b));
    rc->a = a;
    rc->b = b;
    for (int i = 0; i < 8; ++i) {
        rc->eps[i] = (struct mca_btl_base_endpoint_t *) (base + 16 * (uintptr_t) i);
    }
    return claim;
}

static void test_add_procs(void **state)
{
    opal_proc_t *me = opal_proc_local_get();
    opal_proc_t others[6];
    opal_proc_t *procs[7];
    struct mca_btl_base_endpoint_t *peers[7];
    mca_btl_base_module_t a, b;
    reach_ctx_t rc;
    opal_bitmap_t bits;
    bool warned = false;
    tc_ompi_reach_claim_t claim = reach_setup(&rc, &a, &b, 0x1000, &warned);

    (void) state;
    /* me (vpid 0), vpids 1 2 3 5 6 of the job, and vpid 4 of another job */
    me->proc_name.jobid = 5;
    me->proc_name.vpid = 0;
    memset(others, 0, sizeof(others));
    {
        const uint32_t vpids[6] = {1, 2, 3, 4, 5, 6};
        for (int i = 0; i < 6; ++i) {
            others[i].proc_name.jobid = 4 == vpids[i] ? 6 : 5;
            others[i].proc_name.vpid = vpids[i];
        }
    }
    procs[0] = me;
    for (int i = 0; i < 6; ++i) {
        procs[i + 1] = others + i;
    }

    OBJ_CONSTRUCT(&bits, opal_bitmap_t);
    assert_int_equal(opal_bitmap_init(&bits, 8), OPAL_SUCCESS);
    /* module A: vpids 2 and 6; unreachable by any module: vpid 3 and the
     * other job's process */
    assert_int_equal(tc_ompi_reach_add_procs(&a, &claim, 7, procs, peers, &bits), 2);
    assert_null(peers[0]);
    assert_null(peers[1]);
    assert_ptr_equal(peers[2], rc.eps[2]);
    assert_null(peers[3]);
    assert_null(peers[4]);
    assert_null(peers[5]);
    assert_ptr_equal(peers[6], rc.eps[6]);
    for (int i = 0; i < 7; ++i) {
        assert_int_equal(opal_bitmap_is_set_bit(&bits, i), 2 == i || 6 == i);
    }
    /* never asked about ourselves nor about another job */
    assert_int_equal(rc.calls, 5);

    /* module B: vpids 1 and 5, the same count of unreachable peers */
    opal_bitmap_clear_all_bits(&bits);
    assert_int_equal(tc_ompi_reach_add_procs(&b, &claim, 7, procs, peers, &bits), 2);
    assert_ptr_equal(peers[1], rc.eps[1]);
    assert_ptr_equal(peers[5], rc.eps[5]);
    for (int i = 0; i < 7; ++i) {
        assert_int_equal(opal_bitmap_is_set_bit(&bits, i), 1 == i || 5 == i);
        assert_true((1 == i || 5 == i) == (NULL != peers[i]));
    }
    /* no message unless only this component was asked for */
    assert_false(warned);

    /* reachable may be NULL; a warned component stays quiet */
    warned = true;
    claim.only_requested = true;
    assert_int_equal(tc_ompi_reach_add_procs(&a, &claim, 7, procs, peers, NULL), 2);
    assert_ptr_equal(peers[2], rc.eps[2]);
    assert_true(warned);
    /* nobody unreachable: no message even when asked only for this one */
    warned = false;
    assert_int_equal(tc_ompi_reach_add_procs(&b, &claim, 3, procs, peers, NULL), 0);
    assert_false(warned);
    OBJ_DESTRUCT(&bits);
}

/* the topics opal_show_help was asked for, and the count argument */
static int help_calls, help_other_job, help_count;

static int fake_show_help(const char *file, const char *topic, int want_error_header, ...)
{
    va_list ap;

    (void) file;
    (void) want_error_header;
    ++help_calls;
    va_start(ap, want_error_header);
    (void) va_arg(ap, const char *); /* host */
    help_count = va_arg(ap, int);
    va_end(ap);
    if (0 == strcmp(topic, "other job")) {
        ++help_other_job;
    }
    return OPAL_SUCCESS;
}

/* processes of another job (MPI_Comm_spawn): never claimed, never asked
 * about, one "other job" line that counts them alone; same-job peers no
 * module reaches keep their own message (not run here: it asks the
 * runtime for their host) */
static void test_other_job(void **state)
{
    opal_show_help_fn_t saved = opal_show_help;
    opal_proc_t *me = opal_proc_local_get();
    opal_proc_t others[3];
    opal_proc_t *procs[4];
    struct mca_btl_base_endpoint_t *peers[4];
    mca_btl_base_module_t a, b;
    reach_ctx_t rc;
    opal_bitmap_t bits;
    bool warned = false;
    tc_ompi_reach_claim_t claim = reach_setup(&rc, &a, &b, 0x2000, &warned);

    (void) state;
    claim.only_requested = true;
    rc.b = &a; /* one module claims every peer */
    memset(others, 0, sizeof(others));
    me->proc_name.jobid = 7;
    me->proc_name.vpid = 0;
    /* vpids 0 and 1 of job 8 (the same vpids as ours and a peer's), and
     * vpid 2 of our job */
    others[0].proc_name.jobid = 8;
    others[0].proc_name.vpid = 0;
    others[1].proc_name.jobid = 8;
    others[1].proc_name.vpid = 1;
    others[2].proc_name.jobid = 7;
    others[2].proc_name.vpid = 2;
    procs[0] = me;
    for (int i = 0; i < 3; ++i) {
        procs[i + 1] = others + i;
    }
    OBJ_CONSTRUCT(&bits, opal_bitmap_t);
    assert_int_equal(opal_bitmap_init(&bits, 8), OPAL_SUCCESS);

    opal_show_help = fake_show_help;
    help_calls = help_other_job = help_count = 0;
    assert_int_equal(tc_ompi_reach_add_procs(&a, &claim, 4, procs, peers, &bits), 2);
    assert_null(peers[0]);
    assert_null(peers[1]);
    assert_null(peers[2]);
    assert_ptr_equal(peers[3], rc.eps[2]);
    assert_int_equal(rc.calls, 1);
    assert_int_equal(help_calls, 1);
    assert_int_equal(help_other_job, 1);
    assert_int_equal(help_count, 2);
    assert_true(warned);

    /* not the only BTL asked for: ob1 takes another one, no message */
    warned = false;
    claim.only_requested = false;
    help_calls = 0;
    assert_int_equal(tc_ompi_reach_add_procs(&a, &claim, 4, procs, peers, &bits), 2);
    assert_ptr_equal(peers[3], rc.eps[2]);
    assert_int_equal(help_calls, 0);
    assert_false(warned);

    /* a component that takes other jobs is asked about them: claimed
     * like its own job's peers, no message */
    claim.only_requested = true;
    claim.other_jobs = true;
    rc.calls = help_calls = 0;
    assert_int_equal(tc_ompi_reach_add_procs(&a, &claim, 4, procs, peers, &bits), 0);
    assert_null(peers[0]);
    assert_ptr_equal(peers[1], rc.eps[0]);
    assert_ptr_equal(peers[2], rc.eps[1]);
    assert_ptr_equal(peers[3], rc.eps[2]);
    assert_true(opal_bitmap_is_set_bit(&bits, 1));
    assert_int_equal(rc.calls, 3);
    assert_int_equal(help_calls, 0);
    assert_false(warned);
    /* one it cannot reach (its table is full): the "other job" line
     * counts it alone */
    others[1].proc_name.vpid = 3;
    help_calls = help_other_job = 0;
    assert_int_equal(tc_ompi_reach_add_procs(&a, &claim, 4, procs, peers, &bits), 1);
    assert_ptr_equal(peers[1], rc.eps[0]);
    assert_null(peers[2]);
    assert_int_equal(help_other_job, 1);
    assert_int_equal(help_count, 1);
    assert_true(warned);
    opal_show_help = saved;
    OBJ_DESTRUCT(&bits);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_register),
        cmocka_unit_test(test_register_long_name),
        cmocka_unit_test(test_module_init),
        cmocka_unit_test(test_add_procs),
        cmocka_unit_test(test_other_job),
    };
    return tc_unit_run_opal_group("test_ompi_reach", NULL, tests, sizeof(tests) / sizeof(tests[0]));
}
