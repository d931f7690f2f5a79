/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * swfsim_trace.h: traces of live runs (--record) and their replay
 * (--replay).  A trace holds, per node, the operations the simulator
 * accepted (SEND with destination, tag and size; the message each RECV*
 * took; barriers) and the compute time the node declared before each
 * (consumetime).  The format is in docs/swfsim.md.
 */

#ifndef SWFSIM_TRACE_H
#define SWFSIM_TRACE_H

#include <stdint.h>

#include "swfsim.h"
#include "swfsim_workload.h"

#define SWFSIM_TRACE_MAGIC "SWFTRACE"
#define SWFSIM_TRACE_VERSION 1u

enum swfsim_trace_op {
    SWFSIM_TR_SEND = 1,    /* node, compute, dst, tag, len */
    SWFSIM_TR_RECV = 2,    /* node, compute, src, tag */
    SWFSIM_TR_BARRIER = 3, /* node, compute */
    SWFSIM_TR_COMPUTE = 4, /* node, compute: the rest before FINISH */
    SWFSIM_TR_END = 0x7f   /* sim_end_ns, messages, events: the last record */
};

/* writer, called by the engine's hooks */
int swfsim_trace_open(swfsim_t *sim, const char *path);
/* a command was decoded: count its consumetime (and CONSUMETIME's) */
void swfsim_trace_cmd(swfsim_t *sim, const swfsim_node_t *n, const tc_sockmodel_cmd_t *c);
/* a probe's cost: time the node spent polling, replayed as compute */
void swfsim_trace_poll(swfsim_t *sim, const swfsim_node_t *n, uint64_t ps);
void swfsim_trace_send(swfsim_t *sim, const swfsim_node_t *n, const swfsim_msg_t *m);
void swfsim_trace_recv(swfsim_t *sim, const swfsim_node_t *n, const swfsim_msg_t *m);
void swfsim_trace_barrier(swfsim_t *sim, const swfsim_node_t *n);
/* write the end record and close; returns 0 or -1 (message printed) */
int swfsim_trace_close(swfsim_t *sim);

/* reader: the recorded parameters go into cfg (nodes, model, torus),
 * the operations into prog; *end_ns gets the recorded end time */
int swfsim_trace_load(const char *path, swfsim_config_t *cfg, swfsim_vprog_array_t *prog,
                      uint64_t *end_ns);

#endif /* SWFSIM_TRACE_H */
