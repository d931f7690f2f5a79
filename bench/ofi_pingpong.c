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
 * -W WINDOW streams instead, as bench/pingpong's bandwidth does: the
 * client sends WINDOW messages of SIZE bytes (each from its own buffer,
 * all posted before any completion is awaited), the server, which keeps
 * WINDOW receives posted, answers the whole window with one 4-byte
 * message; ITERS windows after a warm-up, each timed alone, the fastest
 * reported in MB/s (10^6 bytes), as bench/pingpong does.
 *
 * The provider setup of our components: -T asks an FI_THREAD_SAFE domain
 * (all three ask it; -D an FI_THREAD_DOMAIN one, without the provider's
 * locks), -R a reliable-datagram endpoint (FI_EP_RDM, as
 * btl_sci and btl_bip use; the server binds to ADDR PORT, the client
 * sends it its address first) instead of a connected one (FI_EP_MSG, as
 * btl_via uses). CQs are polled (FI_WAIT_NONE) in both modes.
 *
 * Usage: ofi_pingpong [-p PROV] [-S SIZE] [-I ITERS] [-W WINDOW] [-yTDR] -l ADDR PORT (server)
 *        ofi_pingpong [-p PROV] [-S SIZE] [-I ITERS] [-W WINDOW] [-yTDR] ADDR PORT    (client)
 * The client prints "ofi_pingpong,PROV,SIZE,latency_us" (with -W
 * "ofi_stream,PROV,EPTYPE,SIZE,WINDOW,MBps") and each batch's result on
 * stderr; the data is checked on every message. The libfabric setup is
 * ofi_bench_common.c's, shared with ofi_rma_bw.
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
#define OPP_WINDOW_MAX 256
#define OPP_ACK 4

static int opp_yield;
static fi_addr_t opp_peer; /* FI_EP_RDM: the other side; unused for FI_EP_MSG */

const char *ofi_bench_name = "ofi_pingpong";

/* one completion off cq (spin, or yield when -y) */
static void *opp_wait(struct fid_cq *cq)
{
    struct fi_cq_entry e;

    for (;;) {
        ssize_t n = fi_cq_read(cq, &e, 1);

        if (1 == n) {
            return e.op_context;
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
           (rc = size <= inject ? (int) fi_inject(f->ep, buf, size, opp_peer)
                                : (int) fi_send(f->ep, buf, size, NULL, opp_peer, NULL))) {
        (void) fi_cq_read(f->txcq, NULL, 0);
    }
    ofi_bench_check("send", rc);
    if (size > inject) {
        opp_wait(f->txcq);
    }
}

/* the ping-pong: half the round trip, the fastest of OPP_BATCHES
 * batches (one receive is posted on entry) */
static int opp_latency(ofi_bench_fab_t *f, int server, uint8_t *sbuf, uint8_t *rbuf, size_t size,
                       int iters, double *best)
{
    for (int b = 0; b < OPP_BATCHES + 1; ++b) {
        int n = 0 == b ? iters / 10 + 2 : iters / OPP_BATCHES; /* batch 0: warm-up */
        double t0 = ofi_bench_now(), us;

        for (int i = 0; i < n; ++i) {
            uint8_t tag = (uint8_t) (b * 31 + i);

            if (!server) {
                memset(sbuf, tag, size);
                opp_send(f, sbuf, size);
            }
            (void) opp_wait(f->rxcq);
            if (size > 0 && (rbuf[0] != tag || rbuf[size - 1] != tag)) {
                fprintf(stderr, "ofi_pingpong: data mismatch in batch %d message %d\n", b, i);
                return 1;
            }
            ofi_bench_check("fi_recv",
                            (int) fi_recv(f->ep, rbuf, OPP_MAX, NULL, FI_ADDR_UNSPEC, NULL));
            if (server) {
                memcpy(sbuf, rbuf, size);
                opp_send(f, sbuf, size);
            }
        }
        us = (ofi_bench_now() - t0) * 1e6 / (2.0 * n);
        if (b > 0 && !server) {
            fprintf(stderr, "batch %d: %.2f us\n", b, us);
            if (0.0 == *best || us < *best) {
                *best = us;
            }
        }
    }
    return 0;
}

/* the byte message w of window l carries (never 0: a receive buffer
 * starts zeroed) */
static uint8_t opp_tag(int l, int w)
{
    return (uint8_t) (1 + (l * 7 + w) % 255);
}

/* the client's side of a window: post every send, then await their
 * completions and the server's acknowledgement (one receive of it is
 * posted on entry and again on return); the window's seconds, or < 0 when
 * the server saw bad data */
static double opp_stream_client(ofi_bench_fab_t *f, uint8_t *sbufs, uint8_t *ack, size_t size,
                                int window, int l)
{
    double t0;
    int done = 0;
    uint32_t got;
    struct fi_cq_entry e[16];

    for (int w = 0; w < window; ++w) {
        memset(sbufs + (size_t) w * OPP_MAX, opp_tag(l, w), size);
    }
    t0 = ofi_bench_now();
    for (int w = 0; w < window; ++w) {
        ssize_t rc;

        while (-FI_EAGAIN ==
               (rc = fi_send(f->ep, sbufs + (size_t) w * OPP_MAX, size, NULL, opp_peer, NULL))) {
            ssize_t n = fi_cq_read(f->txcq, e, 16);

            if (n > 0) {
                done += (int) n;
            } else if (-FI_EAGAIN != n) {
                ofi_bench_cq_fail(f->txcq, n);
            }
        }
        ofi_bench_check("send", (int) rc);
    }
    while (done < window) {
        ssize_t n = fi_cq_read(f->txcq, e, 16);

        if (n > 0) {
            done += (int) n;
        } else if (-FI_EAGAIN != n) {
            ofi_bench_cq_fail(f->txcq, n);
        } else if (opp_yield) {
            sched_yield();
        }
    }
    (void) opp_wait(f->rxcq);
    t0 = ofi_bench_now() - t0;
    memcpy(&got, ack, sizeof(got));
    ofi_bench_check("fi_recv", (int) fi_recv(f->ep, ack, OPP_ACK, NULL, FI_ADDR_UNSPEC, NULL));
    return got == (uint32_t) l ? t0 : -1.0;
}

/* the server's side of a window: WINDOW messages into the posted slots
 * (each reposted at once), checked, then the acknowledgement (the window's
 * number, or UINT32_MAX after bad data); 0 or 1 (bad data) */
static int opp_stream_server(ofi_bench_fab_t *f, uint8_t *ack, size_t size, int window, int l)
{
    uint32_t word = (uint32_t) l;

    for (int w = 0; w < window; ++w) {
        uint8_t *slot = opp_wait(f->rxcq), tag = opp_tag(l, w);

        if (size > 0 && (slot[0] != tag || slot[size / 2] != tag || slot[size - 1] != tag)) {
            fprintf(stderr, "ofi_pingpong: data mismatch in window %d message %d\n", l, w);
            word = UINT32_MAX;
        }
        ofi_bench_check("fi_recv", (int) fi_recv(f->ep, slot, OPP_MAX, NULL, FI_ADDR_UNSPEC, slot));
    }
    memcpy(ack, &word, sizeof(word));
    opp_send(f, ack, OPP_ACK);
    return UINT32_MAX == word;
}

/* the stream: 2 warm-up windows, then iters windows each timed alone;
 * *best: the fastest window's MB/s */
static int opp_stream(ofi_bench_fab_t *f, int server, uint8_t *sbufs, uint8_t *ack, size_t size,
                      int window, int iters, double *best)
{
    for (int l = 0; l < iters + 2; ++l) {
        double t;

        if (server) {
            if (0 != opp_stream_server(f, ack, size, window, l)) {
                return 1;
            }
            continue;
        }
        t = opp_stream_client(f, sbufs, ack, size, window, l);
        if (t < 0.0) {
            fprintf(stderr, "ofi_pingpong: the server saw bad data in window %d\n", l);
            return 1;
        }
        if (l >= 2 && (0.0 == *best || (double) size * window / t / 1e6 > *best)) {
            *best = (double) size * window / t / 1e6;
        }
    }
    return 0;
}

/* FI_EP_RDM: the client sends its address, the server answers once it
 * knows it; the receive each posted first takes the message */
static void opp_rdm_meet(ofi_bench_fab_t *f, int server, uint8_t *hs, uint8_t *rbuf)
{
    char name[256];
    size_t len = sizeof(name);

    if (server) {
        (void) opp_wait(f->rxcq);
        ofi_bench_check("av insert",
                        1 == fi_av_insert(f->av, hs, 1, &opp_peer, 0, NULL) ? 0 : -FI_EINVAL);
        opp_send(f, hs, OPP_ACK);
        return;
    }
    ofi_bench_check(
        "av insert",
        1 == fi_av_insert(f->av, f->info->dest_addr, 1, &opp_peer, 0, NULL) ? 0 : -FI_EINVAL);
    ofi_bench_check("getname", fi_getname(&f->ep->fid, name, &len));
    opp_send(f, (const uint8_t *) name, len);
    (void) opp_wait(f->rxcq);
    ofi_bench_check("fi_recv", (int) fi_recv(f->ep, rbuf, OPP_MAX, NULL, FI_ADDR_UNSPEC, NULL));
}

int main(int argc, char **argv)
{
    const char *prov = "tcp";
    size_t size = 8;
    int iters = 10000, server = 0, window = 0, opt, rc;
    ofi_bench_params_t p = {
        .type = FI_EP_MSG, .caps = FI_MSG, .mode = 0, .ready_fd = -1, .cq_size = 64, .two_cqs = 1};
    ofi_bench_fab_t f;
    uint8_t *sbuf, *rbuf, hs[256];
    double best = 0.0;

    while ((opt = getopt(argc, argv, "p:S:I:W:yTDRl")) != -1) {
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
        case 'W':
            window = atoi(optarg);
            break;
        case 'y':
            opp_yield = 1;
            break;
        case 'T':
            p.thread_safe = 1;
            break;
        case 'D':
            p.thread_safe = -1;
            break;
        case 'R':
            p.type = FI_EP_RDM;
            p.rdm_at_node = 1;
            break;
        case 'l':
            server = 1;
            break;
        default:
            fprintf(stderr,
                    "usage: ofi_pingpong [-p PROV] [-S SIZE] [-I ITERS] [-W WINDOW] [-yTDR] [-l] "
                    "ADDR PORT\n");
            return 2;
        }
    }
    if (argc - optind != 2 || size > OPP_MAX || iters < OPP_BATCHES || window < 0 ||
        window > OPP_WINDOW_MAX || (window > 0 && size < OPP_ACK)) {
        fprintf(stderr,
                "ofi_pingpong: ADDR PORT needed, SIZE <= %d (>= %d with -W), ITERS >= %d, "
                "WINDOW <= %d\n",
                OPP_MAX, OPP_ACK, OPP_BATCHES, OPP_WINDOW_MAX);
        return 2;
    }
    p.prov = prov;
    p.node = argv[optind];
    p.service = argv[optind + 1];
    p.listen = server;
    p.cq_size = (size_t) (2 * window + 64);
    ofi_bench_open(&f, &p);
    if (f.info->domain_attr->mr_mode & FI_MR_LOCAL) {
        fprintf(stderr, "ofi_pingpong: provider %s needs local registration (not done here)\n",
                prov);
        return 1;
    }
    /* the receive buffers of a window lie 64 bytes apart beyond their
     * size, as btl_via's do (docs/btl_via.md, section 9: 4K aliasing) */
    sbuf = calloc((size_t) (window > 0 ? window : 1), OPP_MAX + 64);
    rbuf = calloc((size_t) (window > 0 ? window : 1), OPP_MAX + 64);
    if (NULL == sbuf || NULL == rbuf) {
        return 1;
    }
    /* every receive posted before the peer can send: the address first */
    if (FI_EP_RDM == p.type) {
        ofi_bench_check("fi_recv", (int) fi_recv(f.ep, hs, sizeof(hs), NULL, FI_ADDR_UNSPEC, NULL));
    }
    if (window > 0 && server) {
        for (int w = 0; w < window; ++w) {
            uint8_t *slot = rbuf + (size_t) w * (OPP_MAX + 64);

            ofi_bench_check("fi_recv",
                            (int) fi_recv(f.ep, slot, OPP_MAX, NULL, FI_ADDR_UNSPEC, slot));
        }
    } else {
        ofi_bench_check("fi_recv", (int) fi_recv(f.ep, rbuf, OPP_MAX, NULL, FI_ADDR_UNSPEC, NULL));
    }
    ofi_bench_connect(&f);
    if (FI_EP_RDM == p.type) {
        opp_rdm_meet(&f, server, hs, rbuf);
    }
    if (window > 0) {
        rc = opp_stream(&f, server, sbuf, server ? hs : rbuf, size, window, iters, &best);
        if (0 == rc && !server) {
            printf("ofi_stream,%s,%s,%zu,%d,%.1f\n", prov, FI_EP_RDM == p.type ? "rdm" : "msg",
                   size, window, best);
        }
    } else {
        rc = opp_latency(&f, server, sbuf, rbuf, size, iters, &best);
        if (0 == rc && !server) {
            printf("ofi_pingpong,%s,%zu,%.3f\n", prov, size, best);
        }
    }
    ofi_bench_close(&f);
    free(sbuf);
    free(rbuf);
    return rc;
}
