/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * swfsim_workload.h: virtual nodes.  A virtual node runs a program of
 * operations (send, receive, barrier, each after some compute time)
 * inside the simulator, without a socket: the built-in workloads
 * (--workload) and recorded traces (--replay) are such programs.  The
 * same torus model, statistics and reports as a live run.
 */

#ifndef SWFSIM_WORKLOAD_H
#define SWFSIM_WORKLOAD_H

#include <stdint.h>

#include "swfsim.h"

enum swfsim_vop_kind {
    SWFSIM_VOP_SEND = 1, /* peer, tag, len: a non-blocking SEND */
    SWFSIM_VOP_RECV,     /* peer, tag: blocking receive of the oldest match */
    SWFSIM_VOP_BARRIER,  /* every node: leave at the latest entry */
    SWFSIM_VOP_COMPUTE   /* only the compute time */
};

#define SWFSIM_VTAG_ANY UINT32_MAX

typedef struct swfsim_vop {
    uint64_t compute_ps; /* the node computes this long before the op */
    uint32_t kind, peer, tag, len;
} swfsim_vop_t;

/* A program: next() fills op number idx of node r and returns 0, or
 * returns 1 once node r has no more operations. */
typedef struct swfsim_vprog {
    int (*next)(void *ctx, uint32_t r, uint64_t idx, swfsim_vop_t *op);
    void *ctx;
} swfsim_vprog_t;

/* Run prog on sim's cfg.nodes virtual nodes (sim from swfsim_init, no
 * sockets).  Fills sim's statistics as a live run does; returns the exit
 * code (0, or 2 for a deadlock, 1 out of memory). */
int swfsim_vrun(swfsim_t *sim, const swfsim_vprog_t *prog);

/* programs held as one array of operations per node */
typedef struct swfsim_vprog_array {
    uint32_t nodes;
    uint64_t *count; /* operations of node r */
    uint64_t *cap;
    swfsim_vop_t **ops;
} swfsim_vprog_array_t;

int swfsim_vprog_array_init(swfsim_vprog_array_t *a, uint32_t nodes);
void swfsim_vprog_array_fini(swfsim_vprog_array_t *a);
int swfsim_vprog_array_add(swfsim_vprog_array_t *a, uint32_t r, const swfsim_vop_t *op);
void swfsim_vprog_array_prog(swfsim_vprog_array_t *a, swfsim_vprog_t *prog);

/* built-in workloads (swfsim_workload.c) */
enum swfsim_wl_kind { SWFSIM_WL_HALO2D = 1, SWFSIM_WL_ALLTOALL, SWFSIM_WL_RING };

typedef struct swfsim_workload {
    int kind;
    uint32_t size; /* bytes per message (ring: the whole vector) */
    uint32_t iters;
    uint32_t compute_cycles; /* before every iteration */
    /* set by swfsim_workload_prog */
    uint32_t nodes, dx, dy, chunk;
    uint64_t compute_ps;
} swfsim_workload_t;

/* "halo2d,size=64K,iters=100[,compute=CYCLES]"; 0 or -1 (message printed) */
int swfsim_workload_parse(swfsim_workload_t *w, const char *spec);
/* bind w to cfg's nodes and torus; 0 or -1 (message printed) */
int swfsim_workload_prog(swfsim_workload_t *w, const swfsim_config_t *cfg, swfsim_vprog_t *prog);
const char *swfsim_workload_name(int kind);

/* the program for --workload / --replay: run, report; the exit code */
int swfsim_virtual_main(swfsim_config_t *cfg, int argc, char **argv);

#endif /* SWFSIM_WORKLOAD_H */
