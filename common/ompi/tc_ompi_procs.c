/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * tc_ompi_procs.c: the add_procs loop of a BTL that reaches only the
 * processes of its own job on this host (btl_sci, btl_bip): which peers it
 * can reach at all, the endpoint the component attaches to each, and the
 * reachable bitmap. The component keeps what differs: how an endpoint is
 * found and connected, and what it says about unreachable peers; the
 * text of that message (which peers, which components could reach them)
 * is built here for every host-local BTL (btl_via too).
 */
#include "opal_config.h"

#include <stdio.h>
#include <string.h>

#include "opal/class/opal_bitmap.h"
#include "opal/class/opal_list.h"
#include "opal/mca/base/mca_base_component_repository.h"
#include "opal/mca/btl/base/base.h"
#include "opal/util/proc.h"
#include "opal/util/show_help.h"

#include "tc_ompi.h"
#include "tc_ompi_compat.h"

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

/* Append text to buf (size len, used *off), never past its end. */
static void tc_ompi_procs_append(char *buf, size_t len, size_t *off, const char *text)
{
    size_t n;

    if (*off >= len) {
        return;
    }
    n = strlen(text);
    if (n > len - 1 - *off) {
        n = len - 1 - *off;
    }
    memcpy(buf + *off, text, n);
    *off += n;
    buf[*off] = '\0';
}

/* BTL components whose transport stays on one host */
static int tc_ompi_procs_host_only(const char *name)
{
    static const char *const host_only[] = {"self", "vader", "sm", "smcuda", "sci", "bip", "via"};

    for (size_t i = 0; i < sizeof(host_only) / sizeof(host_only[0]); ++i) {
        if (0 == strcmp(name, host_only[i])) {
            return 1;
        }
    }
    return 0;
}

void tc_ompi_unreachable_text(size_t nprocs, struct opal_proc_t **procs,
                              struct mca_btl_base_endpoint_t **peers, char *who, size_t wholen,
                              char *btls, size_t btlslen)
{
    const opal_proc_t *me = opal_proc_local_get();
    size_t off = 0, shown = 0, more = 0;
    char item[96];

    if (0 == wholen || 0 == btlslen) {
        return;
    }
    who[0] = '\0';
    btls[0] = '\0';
    for (size_t i = 0; i < nprocs; ++i) {
        const char *host;

        if (procs[i] == me || NULL != peers[i]) {
            continue;
        }
        if (shown == 8) {
            ++more;
            continue;
        }
        host = opal_get_proc_hostname(procs[i]);
        snprintf(item, sizeof(item), "%srank %u on %s", 0 == shown ? "" : ", ",
                 (unsigned) procs[i]->proc_name.vpid, NULL != host ? host : "?");
        tc_ompi_procs_append(who, wholen, &off, item);
        ++shown;
    }
    if (more > 0) {
        snprintf(item, sizeof(item), " and %zu more", more);
        tc_ompi_procs_append(who, wholen, &off, item);
    }

    tc_ompi_remote_btls(btls, btlslen);
}

void tc_ompi_remote_btls(char *btls, size_t btlslen)
{
    opal_list_t *found = NULL;
    size_t off = 0;

    if (0 == btlslen) {
        return;
    }
    btls[0] = '\0';
    if (OPAL_SUCCESS ==
            mca_base_component_repository_get_components(&opal_btl_base_framework, &found) &&
        NULL != found) {
        mca_base_component_repository_item_t *ri;

        OPAL_LIST_FOREACH(ri, found, mca_base_component_repository_item_t)
        {
            if (tc_ompi_procs_host_only(ri->ri_name)) {
                continue;
            }
            if (0 != off) {
                tc_ompi_procs_append(btls, btlslen, &off, ", ");
            }
            tc_ompi_procs_append(btls, btlslen, &off, ri->ri_name);
        }
    }
    if (0 == off) {
        tc_ompi_procs_append(btls, btlslen, &off, "none found");
    }
}

void tc_ompi_alone_on_host(const char *help_file, const char *btl, const char *provider,
                           bool only_requested)
{
    uint32_t size = 0;
    char btls[256];

    if (!only_requested || OPAL_SUCCESS != tc_ompi_job_size(&size) || size < 2) {
        return;
    }
    tc_ompi_remote_btls(btls, sizeof(btls));
    opal_show_help(help_file, "alone on host", true, btl, (int) OPAL_PROC_MY_NAME.vpid,
                   opal_process_info.nodename, provider, (int) size - 1, btls);
}
