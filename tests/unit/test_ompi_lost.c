/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_ompi_lost.c: the report of a lost peer and the completion of what
 * was pending to it (common/ompi/tc_ompi_lost.c). Without the MCA
 * variable mpi_ft_enable (Open MPI 4.1, or a program without the MPI
 * layer, as here at first) a loss is fatal; once the variable exists and
 * is true, the PML's callback gets MCA_BTL_ERROR_FLAGS_NONFATAL and the
 * peer, except for a loss without a peer (proc NULL), which stays
 * fatal. Pending descriptors complete once each with OPAL_ERR_UNREACH
 * and are released only when the BTL owns them. tc_ompi_proc_failed
 * follows the MPI layer's mark of a failed process (ULFM), and is false
 * for NULL, a sentinel and everything in 4.1.
 */
#include "opal_config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "opal/constants.h"
#include "opal/mca/base/mca_base_var.h"
#include "opal/util/proc.h"
#include "opal/util/show_help.h"

#include "tc_ompi.h"
#include "test_ft.h"

#if TC_OMPI_FT_MPI
#include "ompi/proc/proc.h"
#endif

/* ---- the PML's error callback, recorded ---------------------------------- */

static int cb_calls;
static int32_t cb_flags;
static opal_proc_t *cb_proc;
static char cb_info[128];
static mca_btl_base_module_t *cb_btl;

static void lost_error_cb(struct mca_btl_base_module_t *btl, int32_t flags, opal_proc_t *errproc,
                          char *btlinfo)
{
    cb_calls++;
    cb_flags = flags;
    cb_proc = errproc;
    cb_btl = btl;
    snprintf(cb_info, sizeof(cb_info), "%s", NULL != btlinfo ? btlinfo : "(null)");
}

static void cb_reset(void)
{
    cb_calls = 0;
    cb_flags = -1;
    cb_proc = NULL;
    cb_btl = NULL;
    cb_info[0] = '\0';
}

static mca_btl_base_module_t lost_module;

static tc_ompi_lost_t lost_who(void)
{
    return (tc_ompi_lost_t){"test", "help-test-lost.txt", -1, &lost_module, lost_error_cb};
}

/* ---- mpi_ft_enable, as the MPI layer registers it ------------------------ */

/* ---- reports ------------------------------------------------------------- */

/* a loss without fault tolerance: fatal, the callback told so with the peer */
static void lost_expect_fatal(int id, const char *why)
{
    tc_ompi_lost_t who = lost_who();
    opal_proc_t proc;

    OBJ_CONSTRUCT(&proc, opal_proc_t);
    assert_false(tc_ompi_ft_enabled());
    cb_reset();
    assert_int_equal(tc_ompi_peer_lost(&who, &proc, "rank", id, why), MCA_BTL_ERROR_FLAGS_FATAL);
    assert_int_equal(cb_calls, 1);
    assert_int_equal(cb_flags, MCA_BTL_ERROR_FLAGS_FATAL);
    assert_ptr_equal(cb_proc, &proc);
    assert_ptr_equal(cb_btl, &lost_module);
    assert_string_equal(cb_info, why);
    OBJ_DESTRUCT(&proc);
}

static void test_lost_without_ft_is_fatal(void **state)
{
    (void) state;
    test_ft_unset();
    lost_expect_fatal(3, "died");
}

static void test_lost_ft_off_is_fatal(void **state)
{
    (void) state;
    /* registered but false: mpirun without --with-ft */
    test_ft_set(false);
    lost_expect_fatal(1, "reset");
    test_ft_unset();
}

static void test_lost_under_ft_is_the_peers(void **state)
{
    tc_ompi_lost_t who = lost_who();
    opal_proc_t a, b;

    (void) state;
    test_ft_set(true);
    assert_true(tc_ompi_ft_enabled());
    OBJ_CONSTRUCT(&a, opal_proc_t);
    OBJ_CONSTRUCT(&b, opal_proc_t);
    a.proc_name.vpid = 2;
    b.proc_name.vpid = 5;
    cb_reset();
    assert_int_equal(tc_ompi_peer_lost(&who, &a, "rank", 2, "connection reset"),
                     MCA_BTL_ERROR_FLAGS_NONFATAL);
    assert_int_equal(cb_calls, 1);
    assert_int_equal(cb_flags, MCA_BTL_ERROR_FLAGS_NONFATAL);
    assert_ptr_equal(cb_proc, &a);
    assert_string_equal(cb_info, "connection reset");
    /* every peer is its own report: the function keeps no state */
    assert_int_equal(tc_ompi_peer_lost(&who, &b, "rank", 5, "gone"), MCA_BTL_ERROR_FLAGS_NONFATAL);
    assert_int_equal(cb_calls, 2);
    assert_ptr_equal(cb_proc, &b);
    /* a loss that is no peer's (a simulator, a device) ends the job */
    assert_int_equal(tc_ompi_peer_lost(&who, NULL, "simulator", 0, "lost"),
                     MCA_BTL_ERROR_FLAGS_FATAL);
    assert_int_equal(cb_calls, 3);
    assert_int_equal(cb_flags, MCA_BTL_ERROR_FLAGS_FATAL);
    assert_null(cb_proc);
    /* no callback registered: nothing to call, no crash */
    who.error_cb = NULL;
    assert_int_equal(tc_ompi_peer_lost(&who, &a, "rank", 2, "again"), MCA_BTL_ERROR_FLAGS_NONFATAL);
    assert_int_equal(cb_calls, 3);
    OBJ_DESTRUCT(&a);
    OBJ_DESTRUCT(&b);
    test_ft_unset();
    assert_false(tc_ompi_ft_enabled());
}

/* ---- pending descriptors ------------------------------------------------- */

#define LOST_NDES 4

typedef struct lost_des {
    mca_btl_base_descriptor_t des;
    int completed; /* callbacks seen */
    int status;
    int released;
    int order; /* the n-th completion */
} lost_des_t;

static int completions;

static void lost_des_cb(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *ep,
                        struct mca_btl_base_descriptor_t *des, int status)
{
    lost_des_t *d = (lost_des_t *) des;

    assert_ptr_equal(btl, &lost_module);
    assert_ptr_equal(ep, (struct mca_btl_base_endpoint_t *) &lost_module);
    d->completed++;
    d->status = status;
    d->order = completions++;
    /* released only after its callback */
    assert_int_equal(d->released, 0);
}

static void lost_des_release(mca_btl_base_descriptor_t *des)
{
    lost_des_t *d = (lost_des_t *) des;

    assert_true(d->completed <= 1);
    d->released++;
}

static void lost_des_init(lost_des_t *d, uint32_t flags, bool callback)
{
    memset(d, 0, sizeof(*d));
    OBJ_CONSTRUCT(&d->des.super, opal_free_list_item_t);
    d->des.des_flags = flags;
    d->des.des_cbfunc = callback ? lost_des_cb : NULL;
    d->status = 12345;
}

/* a process the MPI layer marked failed is failed; one it did not, NULL
 * and a sentinel (low bit set) are not; 4.1 knows no failed processes */
static void test_proc_failed(void **state)
{
    (void) state;
    assert_false(tc_ompi_proc_failed(NULL));
    assert_false(tc_ompi_proc_failed((opal_proc_t *) (uintptr_t) 0x1235));
#if TC_OMPI_FT_MPI
    {
        ompi_proc_t p;

        memset(&p, 0, sizeof(p));
        p.proc_active = true;
        assert_false(tc_ompi_proc_failed(&p.super));
        p.proc_active = false;
        assert_true(tc_ompi_proc_failed(&p.super));
    }
#else
    {
        opal_proc_t p;

        memset(&p, 0, sizeof(p));
        assert_false(tc_ompi_proc_failed(&p));
    }
#endif
}

/* the loss word: marked once; progress takes it only once owed */
static void test_lost_word(void **state)
{
    int32_t lost = 0;

    (void) state;
    /* a peer that left in order (failed, no loss) is no loss */
    assert_false(tc_ompi_lost_mark(&lost, true));
    assert_int_equal(lost, 0);
    assert_true(tc_ompi_lost_mark(&lost, false));
    /* being marked: a second loss, and progress, leave it alone */
    assert_false(tc_ompi_lost_mark(&lost, false));
    assert_false(tc_ompi_lost_take(&lost));
    tc_ompi_lost_owe(&lost);
    assert_true(tc_ompi_lost_take(&lost));
    assert_false(tc_ompi_lost_take(&lost));
    assert_false(tc_ompi_lost_mark(&lost, true));
    assert_false(tc_ompi_lost_mark(&lost, false));
    assert_int_equal(lost, 2);
}

static void test_fail_des(void **state)
{
    struct mca_btl_base_endpoint_t *ep = (struct mca_btl_base_endpoint_t *) &lost_module;
    lost_des_t owned, kept, silent;

    (void) state;
    completions = 0;
    lost_des_init(&owned, MCA_BTL_DES_FLAGS_BTL_OWNERSHIP, true);
    lost_des_init(&kept, 0, true);
    lost_des_init(&silent, MCA_BTL_DES_FLAGS_BTL_OWNERSHIP, false);
    tc_ompi_lost_fail_des(&lost_module, ep, &owned.des, lost_des_release);
    tc_ompi_lost_fail_des(&lost_module, ep, &kept.des, lost_des_release);
    tc_ompi_lost_fail_des(&lost_module, ep, &silent.des, lost_des_release);
    assert_int_equal(owned.completed, 1);
    assert_int_equal(owned.status, OPAL_ERR_UNREACH);
    assert_int_equal(owned.released, 1);
    /* the upper layer owns it: its callback, no release */
    assert_int_equal(kept.completed, 1);
    assert_int_equal(kept.status, OPAL_ERR_UNREACH);
    assert_int_equal(kept.released, 0);
    /* no callback: released all the same */
    assert_int_equal(silent.completed, 0);
    assert_int_equal(silent.released, 1);
    /* a release function is optional */
    lost_des_init(&owned, MCA_BTL_DES_FLAGS_BTL_OWNERSHIP, true);
    tc_ompi_lost_fail_des(&lost_module, ep, &owned.des, NULL);
    assert_int_equal(owned.completed, 1);
    assert_int_equal(owned.released, 0);
    OBJ_DESTRUCT(&owned.des.super);
    OBJ_DESTRUCT(&kept.des.super);
    OBJ_DESTRUCT(&silent.des.super);
}

static void test_fail_list(void **state)
{
    struct mca_btl_base_endpoint_t *ep = (struct mca_btl_base_endpoint_t *) &lost_module;
    lost_des_t d[LOST_NDES];
    opal_list_t list;

    (void) state;
    completions = 0;
    OBJ_CONSTRUCT(&list, opal_list_t);
    assert_int_equal(tc_ompi_lost_fail_list(&lost_module, ep, &list, lost_des_release), 0);
    for (int i = 0; i < LOST_NDES; i++) {
        lost_des_init(&d[i], i % 2 ? MCA_BTL_DES_FLAGS_BTL_OWNERSHIP : 0, true);
        opal_list_append(&list, &d[i].des.super.super);
    }
    assert_int_equal(tc_ompi_lost_fail_list(&lost_module, ep, &list, lost_des_release), LOST_NDES);
    assert_true(opal_list_is_empty(&list));
    for (int i = 0; i < LOST_NDES; i++) {
        assert_int_equal(d[i].completed, 1);
        assert_int_equal(d[i].status, OPAL_ERR_UNREACH);
        assert_int_equal(d[i].order, i);
        assert_int_equal(d[i].released, i % 2);
        OBJ_DESTRUCT(&d[i].des.super);
    }
    OBJ_DESTRUCT(&list);
    assert_int_equal(TC_OMPI_LOST_STATUS, OPAL_ERR_UNREACH);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lost_without_ft_is_fatal),
        cmocka_unit_test(test_lost_ft_off_is_fatal),
        cmocka_unit_test(test_lost_under_ft_is_the_peers),
        cmocka_unit_test(test_proc_failed),
        cmocka_unit_test(test_lost_word),
        cmocka_unit_test(test_fail_des),
        cmocka_unit_test(test_fail_list),
    };
    /* the text of tc_ompi_fatal_peer's help topic is in LOST_HELP_DIR */
    return test_ft_run_group("test_ompi_lost", LOST_HELP_DIR, tests,
                             sizeof(tests) / sizeof(tests[0]));
}
