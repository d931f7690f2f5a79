/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * ofi_rma_bw.c: libfabric RMA alone, under btl_sci's ofi provider.  Two
 * processes (fork), one endpoint each; the initiator moves TOTAL bytes
 * (4 MiB) with fi_readmsg or fi_writemsg in pieces of PIECE bytes, DEPTH
 * in flight, 20 times, and prints the median rate and the time per
 * operation; the target only reads its CQ (the tcp provider moves RMA
 * data at the target only then), yielding after each empty read unless
 * told to spin.  Addresses and keys travel over a pipe; RMA addresses are
 * offsets into the region (what tcp;ofi_rxm of libfabric 1.17 takes,
 * docs/btl_sci.md section 7).
 *
 * Usage: ofi_rma_bw [-p PROV] [-r] [-d] [-s] [-S] [-P PIECE] [-D DEPTH]
 *                   [-T TOTAL] [-a ADDR] [-n NETNS1 -N NETNS2]
 *   -p  "tcp;ofi_rxm" (FI_EP_RDM, default) or "tcp" (FI_EP_MSG, connected
 *       through ADDR, default 127.0.0.1, port 47811)
 *   -r  reads (default: writes)      -d  writes with FI_DELIVERY_COMPLETE
 *   -s  the initiator spins on its CQ (default: yields after an empty read)
 *   -S  the target spins (default: yields)
 *   -n/-N  network namespaces (/proc/PID/ns/net) of initiator and target,
 *       e.g. two fake hosts of scripts/cluster.sh
 * Prints "ofi_rma_bw,PROV,read|write,PIECE,DEPTH,median_MBps,us_per_op".
 * The libfabric setup is ofi_bench_common.c's, shared with ofi_pingpong.
 */

#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rdma/fi_rma.h>

#include "ofi_bench_common.h"

#define ORB_REPS 20
#define ORB_MAXDEPTH 64

/* what each side tells the other over the pipe */
typedef struct {
    uint8_t addr[128];
    size_t addrlen;
    uint64_t key;
} orb_card_t;

const char *ofi_bench_name = "ofi_rma_bw";

static void orb_setns(const char *path)
{
    int fd;

    if (NULL == path) {
        return;
    }
    fd = open(path, O_RDONLY);
    if (fd < 0 || 0 != setns(fd, CLONE_NEWNET)) {
        perror("ofi_rma_bw: setns");
        exit(1);
    }
    close(fd);
}

/* one endpoint of PROV: FI_EP_RDM, or FI_EP_MSG (prov "tcp") connected
 * through ADDR, the target listening (it tells the initiator over
 * ready_fd once it listens) */
static void orb_open(ofi_bench_fab_t *f, const char *prov, int target, const char *addr,
                     int ready_fd)
{
    ofi_bench_params_t p = {.prov = prov,
                            .type = 0 == strcmp(prov, "tcp") ? FI_EP_MSG : FI_EP_RDM,
                            .caps = FI_MSG | FI_RMA,
                            .mode = FI_CONTEXT | FI_CONTEXT2,
                            .thread_safe = 1,
                            .node = addr,
                            .service = "47811",
                            .listen = target,
                            .ready_fd = target ? ready_fd : -1,
                            .cq_size = 1024,
                            .two_cqs = 0};
    char c;

    if (FI_EP_MSG == p.type && !target) {
        /* the target listens first */
        if (1 != read(ready_fd, &c, 1)) {
            exit(1);
        }
    }
    ofi_bench_open(f, &p);
    ofi_bench_connect(f);
}

/* the operations' contexts: the provider may keep state in one until
 * its completion (FI_CONTEXT), so a context is reused only after that */
static struct fi_context2 orb_ctx[ORB_MAXDEPTH];
static int orb_busy[ORB_MAXDEPTH];

/* completions off the CQ; 0 when none came */
static int orb_poll(ofi_bench_fab_t *f, int *pending)
{
    struct fi_cq_entry e[16];
    ssize_t n = fi_cq_read(f->txcq, e, 16);

    if (n > 0) {
        for (ssize_t i = 0; i < n; ++i) {
            struct fi_context2 *c = e[i].op_context;

            if (c >= orb_ctx && c < orb_ctx + ORB_MAXDEPTH) {
                orb_busy[c - orb_ctx] = 0;
            }
        }
        *pending -= (int) n;
        return (int) n;
    }
    if (-FI_EAGAIN != n) {
        ofi_bench_cq_fail(f->txcq, n);
    }
    return 0;
}

static int orb_cmp(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;

    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    const char *prov = "tcp;ofi_rxm", *addr = "127.0.0.1", *ns[2] = {NULL, NULL};
    size_t total = (size_t) 4 << 20, piece = (size_t) 4 << 20;
    int reads = 0, dc = 0, spin_i = 0, spin_t = 0, depth = 1, opt, target;
    int p2c[2], c2p[2], rfd, wfd;
    double rate[ORB_REPS];
    orb_card_t me, peer;
    fi_addr_t pa = 0;
    struct fid_mr *mr;
    ofi_bench_fab_t f;
    uint8_t *buf;
    pid_t pid;

    while ((opt = getopt(argc, argv, "p:rdsSP:D:T:a:n:N:")) != -1) {
        switch (opt) {
        case 'p':
            prov = optarg;
            break;
        case 'r':
            reads = 1;
            break;
        case 'd':
            dc = 1;
            break;
        case 's':
            spin_i = 1;
            break;
        case 'S':
            spin_t = 1;
            break;
        case 'P':
            piece = (size_t) strtoul(optarg, NULL, 0);
            break;
        case 'D':
            depth = atoi(optarg);
            break;
        case 'T':
            total = (size_t) strtoul(optarg, NULL, 0);
            break;
        case 'a':
            addr = optarg;
            break;
        case 'n':
            ns[0] = optarg;
            break;
        case 'N':
            ns[1] = optarg;
            break;
        default:
            fprintf(stderr, "usage: see the header of bench/ofi_rma_bw.c\n");
            return 2;
        }
    }
    if (0 == piece || 0 == total || depth < 1 || depth > ORB_MAXDEPTH) {
        fprintf(stderr, "ofi_rma_bw: PIECE and TOTAL > 0, 1 <= DEPTH <= %d\n", ORB_MAXDEPTH);
        return 2;
    }
    if (0 != pipe(p2c) || 0 != pipe(c2p)) {
        return 1;
    }
    pid = fork();
    if (pid < 0) {
        return 1;
    }
    target = 0 == pid;
    orb_setns(ns[target]);
    rfd = target ? p2c[0] : c2p[0];
    wfd = target ? c2p[1] : p2c[1];
    orb_open(&f, prov, target, addr, target ? wfd : rfd);
    if (0 != posix_memalign((void **) &buf, 4096, total)) {
        return 1;
    }
    memset(buf, target ? 0x5a : 0x11, total);
    ofi_bench_check("mr",
                    fi_mr_reg(f.domain, buf, total,
                              FI_REMOTE_READ | FI_REMOTE_WRITE | FI_READ | FI_WRITE, 0, 0, 0, &mr,
                              NULL));
    memset(&me, 0, sizeof(me));
    me.addrlen = sizeof(me.addr);
    if (NULL != f.av) {
        ofi_bench_check("getname", fi_getname(&f.ep->fid, me.addr, &me.addrlen));
    }
    me.key = fi_mr_key(mr);
    if (sizeof(me) != write(wfd, &me, sizeof(me)) ||
        sizeof(peer) != read(rfd, &peer, sizeof(peer))) {
        return 1;
    }
    if (NULL != f.av && 1 != fi_av_insert(f.av, peer.addr, 1, &pa, 0, NULL)) {
        ofi_bench_check("av insert", -FI_EINVAL);
    }
    if (target) {
        char c;

        /* until the initiator writes a byte or its end closes */
        (void) fcntl(rfd, F_SETFL, O_NONBLOCK);
        for (;;) {
            int dummy = 0;

            (void) orb_poll(&f, &dummy);
            if (read(rfd, &c, 1) >= 0) {
                break;
            }
            if (!spin_t) {
                sched_yield();
            }
        }
        return 0;
    }
    for (int r = 0; r < ORB_REPS; ++r) {
        double t0 = ofi_bench_now();
        size_t off = 0;
        int pending = 0;

        while (off < total || pending > 0) {
            while (off < total && pending < depth) {
                size_t n = total - off < piece ? total - off : piece;
                int slot = 0;
                struct iovec iov = {.iov_base = buf + off, .iov_len = n};
                struct fi_rma_iov riov = {.addr = off, .len = n, .key = peer.key};
                struct fi_msg_rma m = {.msg_iov = &iov,
                                       .iov_count = 1,
                                       .addr = pa,
                                       .rma_iov = &riov,
                                       .rma_iov_count = 1,
                                       .context = NULL};
                ssize_t rc;

                while (orb_busy[slot]) {
                    ++slot; /* pending < depth <= ORB_MAXDEPTH: one is free */
                }
                m.context = &orb_ctx[slot];
                rc = reads ? fi_readmsg(f.ep, &m, FI_COMPLETION)
                           : fi_writemsg(f.ep, &m, FI_COMPLETION | (dc ? FI_DELIVERY_COMPLETE : 0));
                if (-FI_EAGAIN == rc) {
                    (void) orb_poll(&f, &pending);
                    continue;
                }
                ofi_bench_check("post", (int) rc);
                orb_busy[slot] = 1;
                off += n;
                ++pending;
            }
            if (pending > 0 && 0 == orb_poll(&f, &pending) && !spin_i) {
                sched_yield();
            }
        }
        rate[r] = (double) total / (ofi_bench_now() - t0) / 1e6;
    }
    qsort(rate, ORB_REPS, sizeof(rate[0]), orb_cmp);
    printf("ofi_rma_bw,%s,%s,%zu,%d,%.1f,%.1f\n", prov, reads ? "read" : "write", piece, depth,
           rate[ORB_REPS / 2], (double) piece / rate[ORB_REPS / 2]);
    {
        char c = 1;

        if (1 != write(wfd, &c, 1)) {
            return 1;
        }
    }
    (void) waitpid(pid, NULL, 0);
    return 0;
}
