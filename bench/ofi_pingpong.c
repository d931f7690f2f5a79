/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * ofi_pingpong.c: the floor under btl_via's ofi provider: a ping-pong of
 * SIZE bytes between two processes over one connected libfabric endpoint
 * (FI_EP_MSG) of a provider (tcp by default), nothing above it: one send
 * (inject when it fits) and one receive per message, completions read by
 * polling fi_cq_read.  It measures what bench/pingpong measures: half the
 * round trip, averaged over a batch after a warm-up, the fastest of 5
 * batches.
 *
 * -y makes an empty poll call sched_yield(), as Open MPI's ranks do with
 * mpi_yield_when_idle (scripts/cluster.sh sets it: the fake hosts share
 * this machine's cores).  Without it, two processes that spin on a
 * loaded 2-core machine wait for each other's time slices, which is what
 * libfabric's own fi_pingpong shows here (docs/btl_via.md, section 9).
 *
 * Usage: ofi_pingpong [-p PROV] [-S SIZE] [-I ITERS] [-y] -l ADDR PORT   (server)
 *        ofi_pingpong [-p PROV] [-S SIZE] [-I ITERS] [-y] ADDR PORT      (client)
 * The client prints "ofi_pingpong,PROV,SIZE,latency_us" and each batch's
 * latency on stderr; the data is checked on every message.
 */

#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

#define OPP_BATCHES 5
#define OPP_MAX 65536

static int opp_yield;

static void opp_die(const char *what, int rc)
{
    fprintf(stderr, "ofi_pingpong: %s: %s\n", what, fi_strerror(rc < 0 ? -rc : rc));
    exit(1);
}

static double opp_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

/* one completion off cq (spin, or yield when -y) */
static void opp_wait(struct fid_cq *cq)
{
    struct fi_cq_entry e;

    for (;;) {
        ssize_t n = fi_cq_read(cq, &e, 1);

        if (1 == n) {
            return;
        }
        if (-FI_EAGAIN != n) {
            struct fi_cq_err_entry err;

            memset(&err, 0, sizeof(err));
            (void) fi_cq_readerr(cq, &err, 0);
            opp_die("completion", err.err ? err.err : (int) n);
        }
        if (opp_yield) {
            sched_yield();
        }
    }
}

/* a connection event off eq */
static void opp_eq_wait(struct fid_eq *eq, uint32_t want, struct fi_eq_cm_entry *entry)
{
    uint32_t event;

    for (;;) {
        ssize_t n = fi_eq_read(eq, &event, entry, sizeof(*entry), 0);

        if (n == (ssize_t) sizeof(*entry) && event == want) {
            return;
        }
        if (-FI_EAGAIN != n) {
            opp_die("connection event", (int) n);
        }
        usleep(100);
    }
}

int main(int argc, char **argv)
{
    const char *prov = "tcp";
    size_t size = 8;
    int iters = 10000, server = 0, opt;
    struct fi_info *hints, *info = NULL;
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_eq *eq;
    struct fid_pep *pep = NULL;
    struct fid_ep *ep;
    struct fid_cq *txcq, *rxcq;
    struct fi_eq_attr eqa = {.size = 16, .wait_obj = FI_WAIT_NONE};
    struct fi_cq_attr cqa = {.format = FI_CQ_FORMAT_CONTEXT, .wait_obj = FI_WAIT_NONE, .size = 64};
    struct fi_eq_cm_entry entry;
    uint8_t *sbuf, *rbuf;
    double best = 0.0;
    int rc;

    while ((opt = getopt(argc, argv, "p:S:I:yl")) != -1) {
        switch (opt) {
        case 'p':
            prov = optarg;
            break;
        case 'S':
            size = (size_t) strtoul(optarg, NULL, 0);
            break;
        case 'I':
            iters = atoi(optarg);
            break;
        case 'y':
            opp_yield = 1;
            break;
        case 'l':
            server = 1;
            break;
        default:
            fprintf(stderr,
                    "usage: ofi_pingpong [-p PROV] [-S SIZE] [-I ITERS] [-y] [-l] ADDR "
                    "PORT\n");
            return 2;
        }
    }
    if (argc - optind != 2 || size > OPP_MAX || iters < OPP_BATCHES) {
        fprintf(stderr, "ofi_pingpong: ADDR PORT needed, SIZE <= %d, ITERS >= %d\n", OPP_MAX,
                OPP_BATCHES);
        return 2;
    }
    hints = fi_allocinfo();
    if (NULL == hints) {
        return 1;
    }
    hints->ep_attr->type = FI_EP_MSG;
    hints->caps = FI_MSG;
    hints->mode = 0;
    /* no local registration: a provider that needs it is not offered */
    hints->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
    hints->fabric_attr->prov_name = strdup(prov);
    rc = fi_getinfo(FI_VERSION(1, 5), argv[optind], argv[optind + 1], server ? FI_SOURCE : 0, hints,
                    &info);
    if (0 != rc) {
        opp_die("fi_getinfo", rc);
    }
    if ((rc = fi_fabric(info->fabric_attr, &fabric, NULL)) ||
        (rc = fi_eq_open(fabric, &eqa, &eq, NULL))) {
        opp_die("fabric", rc);
    }
    if (server) {
        if ((rc = fi_passive_ep(fabric, info, &pep, NULL)) ||
            (rc = fi_pep_bind(pep, &eq->fid, 0)) || (rc = fi_listen(pep))) {
            opp_die("listen", rc);
        }
        opp_eq_wait(eq, FI_CONNREQ, &entry);
        fi_freeinfo(info);
        info = entry.info;
    }
    if ((rc = fi_domain(fabric, info, &domain, NULL)) ||
        (rc = fi_cq_open(domain, &cqa, &txcq, NULL)) ||
        (rc = fi_cq_open(domain, &cqa, &rxcq, NULL)) ||
        (rc = fi_endpoint(domain, info, &ep, NULL)) || (rc = fi_ep_bind(ep, &eq->fid, 0)) ||
        (rc = fi_ep_bind(ep, &txcq->fid, FI_TRANSMIT)) ||
        (rc = fi_ep_bind(ep, &rxcq->fid, FI_RECV)) || (rc = fi_enable(ep))) {
        opp_die("endpoint", rc);
    }
    if (info->domain_attr->mr_mode & FI_MR_LOCAL) {
        fprintf(stderr, "ofi_pingpong: provider %s needs local registration (not done here)\n",
                prov);
        return 1;
    }
    sbuf = calloc(1, OPP_MAX);
    rbuf = calloc(1, OPP_MAX);
    if (NULL == sbuf || NULL == rbuf) {
        return 1;
    }
    /* one receive always posted before the peer can send */
    if ((rc = (int) fi_recv(ep, rbuf, OPP_MAX, NULL, 0, NULL))) {
        opp_die("fi_recv", rc);
    }
    if (server) {
        if ((rc = fi_accept(ep, NULL, 0))) {
            opp_die("fi_accept", rc);
        }
    } else if ((rc = fi_connect(ep, info->dest_addr, NULL, 0))) {
        opp_die("fi_connect", rc);
    }
    opp_eq_wait(eq, FI_CONNECTED, &entry);

    for (int b = 0; b < OPP_BATCHES + 1; ++b) {
        int n = 0 == b ? iters / 10 + 2 : iters / OPP_BATCHES; /* batch 0: warm-up */
        double t0 = opp_now(), us;

        for (int i = 0; i < n; ++i) {
            uint8_t tag = (uint8_t) (b * 31 + i);

            if (!server) {
                memset(sbuf, tag, size);
                while (-FI_EAGAIN ==
                       (rc = size <= info->tx_attr->inject_size
                            ? (int) fi_inject(ep, sbuf, size, 0)
                            : (int) fi_send(ep, sbuf, size, NULL, 0, NULL))) {
                    (void) fi_cq_read(txcq, NULL, 0);
                }
                if (rc) {
                    opp_die("send", rc);
                }
                if (size > info->tx_attr->inject_size) {
                    opp_wait(txcq);
                }
            }
            opp_wait(rxcq);
            if (size > 0 && (rbuf[0] != tag || rbuf[size - 1] != tag)) {
                fprintf(stderr, "ofi_pingpong: data mismatch in batch %d message %d\n", b, i);
                return 1;
            }
            if ((rc = (int) fi_recv(ep, rbuf, OPP_MAX, NULL, 0, NULL))) {
                opp_die("fi_recv", rc);
            }
            if (server) {
                memcpy(sbuf, rbuf, size);
                while (-FI_EAGAIN ==
                       (rc = size <= info->tx_attr->inject_size
                            ? (int) fi_inject(ep, sbuf, size, 0)
                            : (int) fi_send(ep, sbuf, size, NULL, 0, NULL))) {
                    (void) fi_cq_read(txcq, NULL, 0);
                }
                if (rc) {
                    opp_die("send", rc);
                }
                if (size > info->tx_attr->inject_size) {
                    opp_wait(txcq);
                }
            }
        }
        us = (opp_now() - t0) * 1e6 / (2.0 * n);
        if (b > 0 && !server) {
            fprintf(stderr, "batch %d: %.2f us\n", b, us);
            if (0.0 == best || us < best) {
                best = us;
            }
        }
    }
    if (!server) {
        printf("ofi_pingpong,%s,%zu,%.3f\n", prov, size, best);
    }
    (void) fi_shutdown(ep, 0);
    fi_close(&ep->fid);
    fi_close(&rxcq->fid);
    fi_close(&txcq->fid);
    fi_close(&domain->fid);
    if (NULL != pep) {
        fi_close(&pep->fid);
    }
    fi_close(&eq->fid);
    fi_close(&fabric->fid);
    fi_freeinfo(info);
    fi_freeinfo(hints);
    free(sbuf);
    free(rbuf);
    return 0;
}
