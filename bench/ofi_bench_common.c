/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * ofi_bench_common.c: the libfabric setup of the libfabric-only benches
 * (ofi_pingpong, ofi_rma_bw); see ofi_bench_common.h.
 */

#include "ofi_bench_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void ofi_bench_check(const char *what, int rc)
{
    if (0 != rc) {
        fprintf(stderr, "%s: %s: %s\n", ofi_bench_name, what, fi_strerror(rc < 0 ? -rc : rc));
        exit(1);
    }
}

double ofi_bench_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

void ofi_bench_cq_fail(struct fid_cq *cq, ssize_t n)
{
    struct fi_cq_err_entry err;

    memset(&err, 0, sizeof(err));
    (void) fi_cq_readerr(cq, &err, 0);
    ofi_bench_check("completion", err.err ? err.err : (int) n);
}

/* a connection event off the EQ (polled: the EQ has no wait object) */
static void ofi_bench_eq_wait(ofi_bench_fab_t *f, uint32_t want, struct fi_eq_cm_entry *entry)
{
    uint32_t event;

    for (;;) {
        ssize_t n = fi_eq_read(f->eq, &event, entry, sizeof(*entry), 0);

        if (n == (ssize_t) sizeof(*entry) && event == want) {
            return;
        }
        if (-FI_EAGAIN != n) {
            ofi_bench_check("connection event", (int) n);
        }
        usleep(100);
    }
}

void ofi_bench_open(ofi_bench_fab_t *f, const ofi_bench_params_t *p)
{
    struct fi_info *hints = fi_allocinfo();
    struct fi_eq_attr eqa = {.size = 16, .wait_obj = FI_WAIT_NONE};
    struct fi_cq_attr cqa = {
        .format = FI_CQ_FORMAT_CONTEXT, .wait_obj = FI_WAIT_NONE, .size = p->cq_size};
    struct fi_av_attr ava = {.type = FI_AV_TABLE};
    struct fi_eq_cm_entry entry;

    if (NULL == hints) {
        exit(1);
    }
    memset(f, 0, sizeof(*f));
    f->msg = FI_EP_MSG == p->type;
    f->listen = f->msg && p->listen;
    hints->ep_attr->type = p->type;
    hints->caps = p->caps;
    hints->mode = p->mode;
    /* no local registration: a provider that needs it is not offered */
    hints->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
    if (p->thread_safe > 0) {
        hints->domain_attr->threading = FI_THREAD_SAFE;
    } else if (p->thread_safe < 0) {
        hints->domain_attr->threading = FI_THREAD_DOMAIN;
    }
    hints->fabric_attr->prov_name = strdup(p->prov);
    if (f->msg) {
        ofi_bench_check("fi_getinfo",
                        fi_getinfo(FI_VERSION(1, 5), p->node, p->service, f->listen ? FI_SOURCE : 0,
                                   hints, &f->info));
    } else if (p->rdm_at_node) {
        /* FI_EP_RDM across hosts: the listener binds to ADDR PORT, the
         * other side finds it there (info->dest_addr) */
        ofi_bench_check("fi_getinfo",
                        fi_getinfo(FI_VERSION(1, 5), p->node, p->service, p->listen ? FI_SOURCE : 0,
                                   hints, &f->info));
    } else {
        ofi_bench_check("fi_getinfo", fi_getinfo(FI_VERSION(1, 5), NULL, NULL, 0, hints, &f->info));
    }
    fi_freeinfo(hints);
    ofi_bench_check("fabric", fi_fabric(f->info->fabric_attr, &f->fabric, NULL));
    if (f->msg) {
        ofi_bench_check("eq", fi_eq_open(f->fabric, &eqa, &f->eq, NULL));
    }
    if (f->listen) {
        char c = 1;

        ofi_bench_check("passive ep", fi_passive_ep(f->fabric, f->info, &f->pep, NULL));
        ofi_bench_check("pep bind", fi_pep_bind(f->pep, &f->eq->fid, 0));
        ofi_bench_check("listen", fi_listen(f->pep));
        if (p->ready_fd >= 0 && 1 != write(p->ready_fd, &c, 1)) {
            exit(1);
        }
        ofi_bench_eq_wait(f, FI_CONNREQ, &entry);
        fi_freeinfo(f->info);
        f->info = entry.info;
    }
    ofi_bench_check("domain", fi_domain(f->fabric, f->info, &f->domain, NULL));
    ofi_bench_check("cq", fi_cq_open(f->domain, &cqa, &f->txcq, NULL));
    if (p->two_cqs) {
        ofi_bench_check("cq", fi_cq_open(f->domain, &cqa, &f->rxcq, NULL));
    } else {
        f->rxcq = f->txcq;
    }
    ofi_bench_check("endpoint", fi_endpoint(f->domain, f->info, &f->ep, NULL));
    if (f->msg) {
        ofi_bench_check("bind eq", fi_ep_bind(f->ep, &f->eq->fid, 0));
    } else {
        ofi_bench_check("av", fi_av_open(f->domain, &ava, &f->av, NULL));
        ofi_bench_check("bind av", fi_ep_bind(f->ep, &f->av->fid, 0));
    }
    if (p->two_cqs) {
        ofi_bench_check("bind cq", fi_ep_bind(f->ep, &f->txcq->fid, FI_TRANSMIT));
        ofi_bench_check("bind cq", fi_ep_bind(f->ep, &f->rxcq->fid, FI_RECV));
    } else {
        ofi_bench_check("bind cq", fi_ep_bind(f->ep, &f->txcq->fid, FI_TRANSMIT | FI_RECV));
    }
    ofi_bench_check("enable", fi_enable(f->ep));
}

void ofi_bench_connect(ofi_bench_fab_t *f)
{
    struct fi_eq_cm_entry entry;

    if (!f->msg) {
        return;
    }
    ofi_bench_check("connect",
                    f->listen ? fi_accept(f->ep, NULL, 0)
                              : fi_connect(f->ep, f->info->dest_addr, NULL, 0));
    ofi_bench_eq_wait(f, FI_CONNECTED, &entry);
}

void ofi_bench_close(ofi_bench_fab_t *f)
{
    if (f->msg) {
        (void) fi_shutdown(f->ep, 0);
    }
    fi_close(&f->ep->fid);
    if (f->rxcq != f->txcq) {
        fi_close(&f->rxcq->fid);
    }
    fi_close(&f->txcq->fid);
    if (NULL != f->av) {
        fi_close(&f->av->fid);
    }
    fi_close(&f->domain->fid);
    if (NULL != f->pep) {
        fi_close(&f->pep->fid);
    }
    if (NULL != f->eq) {
        fi_close(&f->eq->fid);
    }
    fi_close(&f->fabric->fid);
    fi_freeinfo(f->info);
    memset(f, 0, sizeof(*f));
}
