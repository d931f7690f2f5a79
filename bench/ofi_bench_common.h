/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * ofi_bench_common.h: the libfabric setup the libfabric-only benches
 * (ofi_pingpong, ofi_rma_bw) share: fi_getinfo, fabric, domain, CQs,
 * endpoint (with an EQ and a listener for FI_EP_MSG, an AV for
 * FI_EP_RDM), enable, the connection, and the report of a failure.
 * Every failure prints "NAME: what: reason" on stderr and exits 1.
 */
#ifndef OFI_BENCH_COMMON_H
#define OFI_BENCH_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

/* the bench's name in its error messages: each bench defines it */
extern const char *ofi_bench_name;

/* what a bench asks of ofi_bench_open */
typedef struct ofi_bench_params {
    const char *prov;     /* fabric_attr->prov_name */
    enum fi_ep_type type; /* FI_EP_MSG (connected) or FI_EP_RDM */
    uint64_t caps, mode;
    int thread_safe;  /* 1: an FI_THREAD_SAFE domain, -1: FI_THREAD_DOMAIN */
    const char *node; /* FI_EP_MSG: the listener's address and port */
    const char *service;
    int listen;      /* the passive side */
    int rdm_at_node; /* FI_EP_RDM: the listener binds to node and service,
                      * the other side gets them as info->dest_addr */
    int ready_fd;    /* >= 0: the listener writes one byte there once it listens */
    size_t cq_size;
    int two_cqs; /* a transmit and a receive CQ, else one for both */
} ofi_bench_params_t;

/* what ofi_bench_open opened */
typedef struct ofi_bench_fab {
    struct fi_info *info; /* the listener's: the one of the connection request */
    struct fid_fabric *fabric;
    struct fid_eq *eq;   /* FI_EP_MSG */
    struct fid_pep *pep; /* FI_EP_MSG, listener */
    struct fid_domain *domain;
    struct fid_cq *txcq, *rxcq; /* the same CQ without two_cqs */
    struct fid_av *av;          /* FI_EP_RDM */
    struct fid_ep *ep;
    int msg, listen; /* FI_EP_MSG, its passive side */
} ofi_bench_fab_t;

/* rc != 0: the report of what failed, and exit(1) */
void ofi_bench_check(const char *what, int rc);

/* a monotonic clock in seconds */
double ofi_bench_now(void);

/* fi_cq_read returned n, neither a completion nor -FI_EAGAIN: report the
 * CQ's error entry and exit(1) */
void ofi_bench_cq_fail(struct fid_cq *cq, ssize_t n);

/* everything up to an enabled endpoint; a FI_EP_MSG listener waits for
 * its connection request first. Not yet connected: a bench may post
 * receives before ofi_bench_connect. */
void ofi_bench_open(ofi_bench_fab_t *f, const ofi_bench_params_t *p);

/* FI_EP_MSG: accept (listener) or connect, then wait for FI_CONNECTED;
 * nothing for FI_EP_RDM */
void ofi_bench_connect(ofi_bench_fab_t *f);

/* shut down (FI_EP_MSG) and close what ofi_bench_open opened */
void ofi_bench_close(ofi_bench_fab_t *f);

#endif /* OFI_BENCH_COMMON_H */
