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
 * latency on stderr; the data is checked on every message. The
 * libfabric setup is ofi_bench_common.c's, shared with ofi_rma_bw.
 */

#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ofi_bench_common.h"

#define OPP_BATCHES 5
#define OPP_MAX 65536

static int opp_yield;

const char *ofi_bench_name = "ofi_pingpong";

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
            ofi_bench_cq_fail(cq, n);
        }
        if (opp_yield) {
            sched_yield();
        }
    }
}

/* one message of size bytes from buf, the buffer free again on return
 * (inject when it fits, else a send and its completion) */
static void opp_send(ofi_bench_fab_t *f, const uint8_t *buf, size_t size)
{
    size_t inject = f->info->tx_attr->inject_size;
    int rc;

    while (-FI_EAGAIN ==
           (rc = size <= inject ? (int) fi_inject(f->ep, buf, size, 0)
                                : (int) fi_send(f->ep, buf, size, NULL, 0, NULL))) {
        (void) fi_cq_read(f->txcq, NULL, 0);
    }
    ofi_bench_check("send", rc);
    if (size > inject) {
        opp_wait(f->txcq);
    }
}

int main(int argc, char **argv)
{
    const char *prov = "tcp";
    size_t size = 8;
    int iters = 10000, server = 0, opt;
    ofi_bench_params_t p = {
        .type = FI_EP_MSG, .caps = FI_MSG, .mode = 0, .ready_fd = -1, .cq_size = 64, .two_cqs = 1};
    ofi_bench_fab_t f;
    uint8_t *sbuf, *rbuf;
    double best = 0.0;

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
    p.prov = prov;
    p.node = argv[optind];
    p.service = argv[optind + 1];
    p.listen = server;
    ofi_bench_open(&f, &p);
    if (f.info->domain_attr->mr_mode & FI_MR_LOCAL) {
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
    ofi_bench_check("fi_recv", (int) fi_recv(f.ep, rbuf, OPP_MAX, NULL, 0, NULL));
    ofi_bench_connect(&f);

    for (int b = 0; b < OPP_BATCHES + 1; ++b) {
        int n = 0 == b ? iters / 10 + 2 : iters / OPP_BATCHES; /* batch 0: warm-up */
        double t0 = ofi_bench_now(), us;

        for (int i = 0; i < n; ++i) {
            uint8_t tag = (uint8_t) (b * 31 + i);

            if (!server) {
                memset(sbuf, tag, size);
                opp_send(&f, sbuf, size);
            }
            opp_wait(f.rxcq);
            if (size > 0 && (rbuf[0] != tag || rbuf[size - 1] != tag)) {
                fprintf(stderr, "ofi_pingpong: data mismatch in batch %d message %d\n", b, i);
                return 1;
            }
            ofi_bench_check("fi_recv", (int) fi_recv(f.ep, rbuf, OPP_MAX, NULL, 0, NULL));
            if (server) {
                memcpy(sbuf, rbuf, size);
                opp_send(&f, sbuf, size);
            }
        }
        us = (ofi_bench_now() - t0) * 1e6 / (2.0 * n);
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
    ofi_bench_close(&f);
    free(sbuf);
    free(rbuf);
    return 0;
}
