/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * swfsim_workload.c: the built-in workloads of virtual nodes (a 2D halo
 * exchange, all-to-all, a ring allreduce), computed operation by
 * operation so that no program is held in memory, and the program run
 * for --workload and --replay.
 */

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "swfsim_workload.h"
#include "swfsim_trace.h"

const char *swfsim_workload_name(int kind)
{
    switch (kind) {
    case SWFSIM_WL_HALO2D:
        return "halo2d";
    case SWFSIM_WL_ALLTOALL:
        return "alltoall";
    case SWFSIM_WL_RING:
        return "allreduce";
    default:
        return "?";
    }
}

static int swfsim_wl_num(const char *s, uint32_t *v, uint64_t max)
{
    char *end;
    unsigned long long x = strtoull(s, &end, 10);

    if (end == s || '-' == *s) {
        return -1;
    }
    switch (*end) {
    case 'k':
    case 'K':
        x <<= 10;
        end++;
        break;
    case 'm':
    case 'M':
        x <<= 20;
        end++;
        break;
    default:
        break;
    }
    if ('\0' != *end || x > max) {
        return -1;
    }
    *v = (uint32_t) x;
    return 0;
}

int swfsim_workload_parse(swfsim_workload_t *w, const char *spec)
{
    char buf[256], *save = NULL, *tok;
    int first = 1;

    memset(w, 0, sizeof(*w));
    w->size = 1024;
    w->iters = 1;
    if (strlen(spec) >= sizeof(buf)) {
        fprintf(stderr, "swfsim: workload description too long\n");
        return -1;
    }
    snprintf(buf, sizeof(buf), "%s", spec);
    for (tok = strtok_r(buf, ",", &save); NULL != tok; tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        int bad = 0;
        if (first) {
            first = 0;
            if (0 == strcmp(tok, "halo2d") || 0 == strcmp(tok, "halo")) {
                w->kind = SWFSIM_WL_HALO2D;
            } else if (0 == strcmp(tok, "alltoall")) {
                w->kind = SWFSIM_WL_ALLTOALL;
            } else if (0 == strcmp(tok, "allreduce") || 0 == strcmp(tok, "ring")) {
                w->kind = SWFSIM_WL_RING;
            } else {
                fprintf(stderr, "swfsim: unknown workload '%s' (halo2d, alltoall, allreduce)\n",
                        tok);
                return -1;
            }
            continue;
        }
        if (NULL == eq) {
            bad = 1;
        } else {
            *eq++ = '\0';
            if (0 == strcmp(tok, "size")) {
                bad = swfsim_wl_num(eq, &w->size, SOCKMODEL_MAX_MSG_LIMIT);
            } else if (0 == strcmp(tok, "iters")) {
                bad = swfsim_wl_num(eq, &w->iters, 100000000u) || 0 == w->iters;
            } else if (0 == strcmp(tok, "compute")) {
                bad = swfsim_wl_num(eq, &w->compute_cycles, UINT32_MAX);
            } else {
                bad = 1;
            }
        }
        if (bad) {
            fprintf(stderr,
                    "swfsim: bad workload setting '%s' (size=BYTES[K|M], iters=N, "
                    "compute=CYCLES)\n",
                    tok);
            return -1;
        }
    }
    if (first) {
        fprintf(stderr, "swfsim: empty workload\n");
        return -1;
    }
    return 0;
}

/* halo2d: per iteration a SEND to each of the four torus neighbours
 * (+x, -x, +y, -y, tagged with the direction), then the four RECVs */
static int swfsim_wl_halo(const swfsim_workload_t *w, uint32_t r, uint64_t idx, swfsim_vop_t *op)
{
    static const uint32_t opposite[4] = {1, 0, 3, 2};
    uint64_t it = idx / 8;
    uint32_t j = (uint32_t) (idx % 8), dir, x = r % w->dx, y = r / w->dx, nx = x, ny = y;

    if (it >= w->iters) {
        return 1;
    }
    dir = j < 4 ? j : opposite[j - 4];
    switch (dir) {
    case 0:
        nx = (x + 1) % w->dx;
        break;
    case 1:
        nx = (x + w->dx - 1) % w->dx;
        break;
    case 2:
        ny = (y + 1) % w->dy;
        break;
    default:
        ny = (y + w->dy - 1) % w->dy;
        break;
    }
    op->compute_ps = 0 == j ? w->compute_ps : 0;
    op->peer = ny * w->dx + nx;
    op->len = w->size;
    /* the message from the neighbour in direction d was sent in the
     * opposite direction: its tag is that direction */
    op->tag = j < 4 ? j : j - 4;
    op->kind = j < 4 ? SWFSIM_VOP_SEND : SWFSIM_VOP_RECV;
    return 0;
}

/* alltoall: per iteration SENDs to r+1, r+2, ... then RECVs from r-1, r-2, ... */
static int swfsim_wl_alltoall(const swfsim_workload_t *w, uint32_t r, uint64_t idx,
                              swfsim_vop_t *op)
{
    uint32_t N = w->nodes, per = 2 * (N - 1), j, k;

    if (N < 2 || idx / per >= w->iters) {
        return 1;
    }
    j = (uint32_t) (idx % per);
    op->compute_ps = 0 == j ? w->compute_ps : 0;
    op->tag = 0;
    op->len = w->size;
    if (j < N - 1) {
        op->kind = SWFSIM_VOP_SEND;
        op->peer = (r + 1 + j) % N;
    } else {
        k = j - (N - 1);
        op->kind = SWFSIM_VOP_RECV;
        op->peer = (r + N - 1 - k % N) % N;
    }
    return 0;
}

/* ring allreduce: 2(N-1) steps (reduce-scatter, then allgather), each a
 * SEND of one chunk (size/N) to r+1 and a RECV from r-1 */
static int swfsim_wl_ring(const swfsim_workload_t *w, uint32_t r, uint64_t idx, swfsim_vop_t *op)
{
    uint32_t N = w->nodes, per = 4 * (N - 1), j;

    if (N < 2 || idx / per >= w->iters) {
        return 1;
    }
    j = (uint32_t) (idx % per);
    op->compute_ps = 0 == j ? w->compute_ps : 0;
    op->tag = 0;
    op->len = w->chunk;
    if (0 == j % 2) {
        op->kind = SWFSIM_VOP_SEND;
        op->peer = (r + 1) % N;
    } else {
        op->kind = SWFSIM_VOP_RECV;
        op->peer = (r + N - 1) % N;
    }
    return 0;
}

static int swfsim_wl_next(void *ctx, uint32_t r, uint64_t idx, swfsim_vop_t *op)
{
    const swfsim_workload_t *w = ctx;

    switch (w->kind) {
    case SWFSIM_WL_HALO2D:
        return swfsim_wl_halo(w, r, idx, op);
    case SWFSIM_WL_ALLTOALL:
        return swfsim_wl_alltoall(w, r, idx, op);
    case SWFSIM_WL_RING:
        return swfsim_wl_ring(w, r, idx, op);
    default:
        return 1;
    }
}

int swfsim_workload_prog(swfsim_workload_t *w, const swfsim_config_t *cfg, swfsim_vprog_t *prog)
{
    w->nodes = cfg->nodes;
    if (cfg->torus_x && cfg->torus_y) {
        w->dx = cfg->torus_x;
        w->dy = cfg->torus_y;
    } else {
        swfsim_torus_dims(cfg->nodes, &w->dx, &w->dy);
    }
    if (SWFSIM_WL_HALO2D == w->kind && (uint64_t) w->dx * w->dy != w->nodes) {
        fprintf(stderr, "swfsim: halo2d needs one node per router: %u nodes on a %ux%u torus\n",
                w->nodes, w->dx, w->dy);
        return -1;
    }
    w->chunk = (w->size + w->nodes - 1) / w->nodes;
    if (0 == w->chunk) {
        w->chunk = 1;
    }
    w->compute_ps = (uint64_t) w->compute_cycles * cfg->cycle_ps;
    prog->next = swfsim_wl_next;
    prog->ctx = w;
    return 0;
}

int swfsim_virtual_main(swfsim_config_t *cfg, int argc, char **argv)
{
    swfsim_workload_t w;
    swfsim_vprog_array_t arr;
    swfsim_vprog_t prog;
    swfsim_t sim;
    uint64_t rec_end_ns = 0;
    int replay = '\0' != cfg->replay_file[0], rc;

    memset(&arr, 0, sizeof(arr));
    if (replay && '\0' != cfg->workload[0]) {
        fprintf(stderr, "swfsim: --workload and --replay exclude each other\n");
        return 1;
    }
    if (replay) {
        swfsim_config_t tcfg = *cfg;
        /* the recorded parameters, then the command line over them */
        if (0 != swfsim_trace_load(cfg->replay_file, &tcfg, &arr, &rec_end_ns)) {
            return 1;
        }
        if (0 != swfsim_config_parse_over(&tcfg, argc, argv)) {
            swfsim_vprog_array_fini(&arr);
            return 1;
        }
        if (tcfg.nodes != arr.nodes) {
            fprintf(stderr, "swfsim: the trace has %u nodes; --nodes cannot change that\n",
                    arr.nodes);
            swfsim_vprog_array_fini(&arr);
            return 1;
        }
        if ((uint64_t) tcfg.torus_x * tcfg.torus_y < tcfg.nodes) {
            uint32_t x, y;
            swfsim_torus_dims(tcfg.nodes, &x, &y);
            tcfg.torus_x = x;
            tcfg.torus_y = y;
        }
        *cfg = tcfg;
        swfsim_vprog_array_prog(&arr, &prog);
    } else {
        if (0 != swfsim_workload_parse(&w, cfg->workload) ||
            0 != swfsim_workload_prog(&w, cfg, &prog)) {
            return 1;
        }
    }
    if (0 != swfsim_init(&sim, cfg)) {
        swfsim_warn("cannot set up the simulation (out of memory or bad torus)");
        swfsim_vprog_array_fini(&arr);
        return 1;
    }
    if (!cfg->quiet) {
        if (replay) {
            printf("swfsim: replaying %s: %u nodes, recorded end time %llu ns\n", cfg->replay_file,
                   cfg->nodes, (unsigned long long) rec_end_ns);
        } else {
            printf("swfsim: workload %s, %u virtual nodes, %u bytes, %u iterations\n",
                   swfsim_workload_name(w.kind), cfg->nodes, w.size, w.iters);
        }
    }
    if ('\0' != cfg->record_file[0] && 0 != swfsim_trace_open(&sim, cfg->record_file)) {
        swfsim_fini(&sim);
        swfsim_vprog_array_fini(&arr);
        return 1;
    }
    rc = swfsim_vrun(&sim, &prog);
    if (0 != swfsim_trace_close(&sim) && 0 == rc) {
        rc = 1;
    }
    if (0 != swfsim_report_write(&sim) && 0 == rc) {
        rc = 1;
    }
    if ('\0' != cfg->report_html[0] && 0 != swfsim_report_html_write(&sim) && 0 == rc) {
        rc = 1;
    }
    if (!cfg->quiet && replay) {
        uint64_t end = 0;
        for (uint32_t r = 0; r < cfg->nodes; r++) {
            if (sim.nodes[r]->clock > end) {
                end = sim.nodes[r]->clock;
            }
        }
        printf("swfsim: replay end time %llu ns (recorded %llu ns)\n",
               (unsigned long long) (end / SWFSIM_PS_PER_NS), (unsigned long long) rec_end_ns);
    }
    swfsim_fini(&sim);
    swfsim_vprog_array_fini(&arr);
    return rc;
}
