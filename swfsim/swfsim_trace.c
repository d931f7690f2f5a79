/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * swfsim_trace.c: writing a trace of a live run and reading it back as a
 * program of virtual nodes.  Little-endian LEB128 varints throughout, so
 * a small message costs a handful of bytes (docs/swfsim.md, "Traces").
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "swfsim_trace.h"

typedef struct swfsim_trace {
    FILE *f;
    char path[1024];
    uint64_t *pending; /* per node: compute ps since its last record */
    uint32_t nodes;
    uint64_t records;
} swfsim_trace_t;

static void swfsim_tr_put(FILE *f, uint64_t v)
{
    do {
        unsigned char b = v & 0x7f;
        v >>= 7;
        if (v) {
            b |= 0x80;
        }
        putc(b, f);
    } while (v);
}

int swfsim_trace_open(swfsim_t *sim, const char *path)
{
    swfsim_trace_t *t = calloc(1, sizeof(*t));
    const swfsim_config_t *c = &sim->cfg;
    uint32_t x = sim->torus.dx, y = sim->torus.dy;

    if (NULL == t || NULL == (t->pending = calloc(c->nodes, sizeof(*t->pending)))) {
        free(t);
        swfsim_warn("out of memory for the trace");
        return -1;
    }
    t->nodes = c->nodes;
    snprintf(t->path, sizeof(t->path), "%s", path);
    t->f = fopen(path, "wb");
    if (NULL == t->f) {
        swfsim_warn("cannot write the trace %s: %s", path, strerror(errno));
        free(t->pending);
        free(t);
        return -1;
    }
    setvbuf(t->f, NULL, _IOFBF, 1 << 20);
    if (0 == x) {
        swfsim_torus_dims(c->nodes, &x, &y);
    }
    fwrite(SWFSIM_TRACE_MAGIC, 1, 8, t->f);
    swfsim_tr_put(t->f, SWFSIM_TRACE_VERSION);
    swfsim_tr_put(t->f, c->nodes);
    swfsim_tr_put(t->f, (uint64_t) c->model);
    swfsim_tr_put(t->f, x);
    swfsim_tr_put(t->f, y);
    swfsim_tr_put(t->f, c->cycle_ps);
    swfsim_tr_put(t->f, c->link_bw);
    swfsim_tr_put(t->f, c->router_cycles);
    swfsim_tr_put(t->f, c->header_bytes);
    swfsim_tr_put(t->f, c->probe_cycles);
    sim->trace = t;
    return 0;
}

void swfsim_trace_cmd(swfsim_t *sim, const swfsim_node_t *n, const tc_sockmodel_cmd_t *c)
{
    swfsim_trace_t *t = sim->trace;
    uint64_t cyc = c->consumetime;

    if (NULL == t || n->rank >= t->nodes) {
        return;
    }
    if (SOCKMODEL_CONSUMETIME == c->request) {
        cyc += c->param[0];
    }
    t->pending[n->rank] += cyc * sim->cfg.cycle_ps;
    if (SOCKMODEL_FINISH == c->request && 0 != t->pending[n->rank]) {
        putc(SWFSIM_TR_COMPUTE, t->f);
        swfsim_tr_put(t->f, n->rank);
        swfsim_tr_put(t->f, t->pending[n->rank]);
        t->pending[n->rank] = 0;
        t->records++;
    }
}

void swfsim_trace_poll(swfsim_t *sim, const swfsim_node_t *n, uint64_t ps)
{
    swfsim_trace_t *t = sim->trace;

    if (NULL != t && n->rank < t->nodes) {
        t->pending[n->rank] += ps;
    }
}

static void swfsim_trace_head(swfsim_trace_t *t, unsigned op, uint32_t rank)
{
    putc((int) op, t->f);
    swfsim_tr_put(t->f, rank);
    swfsim_tr_put(t->f, t->pending[rank]);
    t->pending[rank] = 0;
    t->records++;
}

void swfsim_trace_send(swfsim_t *sim, const swfsim_node_t *n, const swfsim_msg_t *m)
{
    swfsim_trace_t *t = sim->trace;

    if (NULL == t || n->rank >= t->nodes) {
        return;
    }
    swfsim_trace_head(t, SWFSIM_TR_SEND, n->rank);
    swfsim_tr_put(t->f, m->dst);
    swfsim_tr_put(t->f, m->tag);
    swfsim_tr_put(t->f, m->len);
}

void swfsim_trace_recv(swfsim_t *sim, const swfsim_node_t *n, const swfsim_msg_t *m)
{
    swfsim_trace_t *t = sim->trace;

    if (NULL == t || n->rank >= t->nodes) {
        return;
    }
    swfsim_trace_head(t, SWFSIM_TR_RECV, n->rank);
    swfsim_tr_put(t->f, m->src);
    swfsim_tr_put(t->f, m->tag);
}

void swfsim_trace_barrier(swfsim_t *sim, const swfsim_node_t *n)
{
    swfsim_trace_t *t = sim->trace;

    if (NULL == t || n->rank >= t->nodes) {
        return;
    }
    swfsim_trace_head(t, SWFSIM_TR_BARRIER, n->rank);
}

int swfsim_trace_close(swfsim_t *sim)
{
    swfsim_trace_t *t = sim->trace;
    uint64_t end = sim->now;
    int rc = 0;

    if (NULL == t) {
        return 0;
    }
    for (uint32_t r = 0; sim->started && r < sim->nnodes; r++) {
        if (NULL != sim->nodes[r] && sim->nodes[r]->clock > end) {
            end = sim->nodes[r]->clock;
        }
    }
    putc(SWFSIM_TR_END, t->f);
    swfsim_tr_put(t->f, end / SWFSIM_PS_PER_NS);
    swfsim_tr_put(t->f, sim->msgs_total);
    swfsim_tr_put(t->f, t->records);
    if (ferror(t->f) || 0 != fclose(t->f)) {
        swfsim_warn("cannot write the trace %s", t->path);
        rc = -1;
    }
    free(t->pending);
    free(t);
    sim->trace = NULL;
    return rc;
}

/* ------------------------------------------------------------------ */
/* reading                                                             */

typedef struct swfsim_tr_reader {
    const unsigned char *p, *end;
    int bad;
} swfsim_tr_reader_t;

static uint64_t swfsim_tr_get(swfsim_tr_reader_t *r)
{
    uint64_t v = 0;

    for (unsigned shift = 0; shift < 64; shift += 7) {
        unsigned char b;
        if (r->p >= r->end) {
            r->bad = 1;
            return 0;
        }
        b = *r->p++;
        v |= (uint64_t) (b & 0x7f) << shift;
        if (0 == (b & 0x80)) {
            return v;
        }
    }
    r->bad = 1; /* more than ten bytes: not ours */
    return 0;
}

static int swfsim_tr_fail(const char *path, const char *why, size_t off)
{
    fprintf(stderr, "swfsim: %s: not a valid trace: %s (at byte %zu)\n", path, why, off);
    return -1;
}

int swfsim_trace_load(const char *path, swfsim_config_t *cfg, swfsim_vprog_array_t *prog,
                      uint64_t *end_ns)
{
    FILE *f = fopen(path, "rb");
    unsigned char *buf = NULL;
    size_t len = 0, cap = 0, got;
    swfsim_tr_reader_t rd;
    uint64_t v[10];
    int ended = 0, rc = -1;

    if (NULL == f) {
        fprintf(stderr, "swfsim: cannot open the trace %s: %s\n", path, strerror(errno));
        return -1;
    }
    do {
        if (len == cap) {
            unsigned char *nb;
            cap = cap ? cap * 2 : 1 << 16;
            nb = realloc(buf, cap);
            if (NULL == nb) {
                free(buf);
                fclose(f);
                fprintf(stderr, "swfsim: out of memory reading %s\n", path);
                return -1;
            }
            buf = nb;
        }
        got = fread(buf + len, 1, cap - len, f);
        len += got;
    } while (got > 0);
    fclose(f);
    memset(prog, 0, sizeof(*prog));
    rd.p = buf;
    rd.end = buf + len;
    rd.bad = 0;
    if (len < 8 || 0 != memcmp(buf, SWFSIM_TRACE_MAGIC, 8)) {
        swfsim_tr_fail(path, "no SWFTRACE magic", 0);
        goto out;
    }
    rd.p += 8;
    for (int i = 0; i < 10; i++) {
        v[i] = swfsim_tr_get(&rd);
    }
    if (rd.bad || SWFSIM_TRACE_VERSION != v[0]) {
        swfsim_tr_fail(path, "bad header or version", 8);
        goto out;
    }
    if (0 == v[1] || v[1] > SOCKMODEL_MAX_NODES || v[2] > SOCKMODEL_MODEL_TORUS || 0 == v[3] ||
        0 == v[4] || v[3] * v[4] < v[1] || v[3] * v[4] > 4ull * SOCKMODEL_MAX_NODES || 0 == v[5] ||
        v[5] > 1000000000ull || 0 == v[6] || v[7] > 1000000 || v[8] > 65536 ||
        v[9] > 1000000000ull) {
        swfsim_tr_fail(path, "parameters out of range", 8);
        goto out;
    }
    cfg->nodes = (uint32_t) v[1];
    cfg->model = (int) v[2];
    cfg->torus_x = (uint32_t) v[3];
    cfg->torus_y = (uint32_t) v[4];
    cfg->cycle_ps = v[5];
    cfg->link_bw = v[6];
    cfg->router_cycles = (uint32_t) v[7];
    cfg->header_bytes = (uint32_t) v[8];
    cfg->probe_cycles = (uint32_t) v[9];
    if (0 != swfsim_vprog_array_init(prog, cfg->nodes)) {
        fprintf(stderr, "swfsim: out of memory reading %s\n", path);
        goto out;
    }
    while (rd.p < rd.end && !ended) {
        size_t off = (size_t) (rd.p - buf);
        unsigned op = *rd.p++;
        swfsim_vop_t o;
        uint64_t node;

        memset(&o, 0, sizeof(o));
        if (SWFSIM_TR_END == op) {
            *end_ns = swfsim_tr_get(&rd);
            (void) swfsim_tr_get(&rd);
            (void) swfsim_tr_get(&rd);
            ended = 1;
            break;
        }
        node = swfsim_tr_get(&rd);
        o.compute_ps = swfsim_tr_get(&rd);
        switch (op) {
        case SWFSIM_TR_SEND:
            o.kind = SWFSIM_VOP_SEND;
            v[0] = swfsim_tr_get(&rd);
            v[1] = swfsim_tr_get(&rd);
            v[2] = swfsim_tr_get(&rd);
            if (v[0] >= cfg->nodes || v[1] > UINT32_MAX || v[2] > SOCKMODEL_MAX_MSG_LIMIT) {
                swfsim_tr_fail(path, "SEND out of range", off);
                goto out;
            }
            o.peer = (uint32_t) v[0];
            o.tag = (uint32_t) v[1];
            o.len = (uint32_t) v[2];
            break;
        case SWFSIM_TR_RECV:
            o.kind = SWFSIM_VOP_RECV;
            v[0] = swfsim_tr_get(&rd);
            v[1] = swfsim_tr_get(&rd);
            if (v[0] >= cfg->nodes || v[1] > UINT32_MAX) {
                swfsim_tr_fail(path, "RECV out of range", off);
                goto out;
            }
            o.peer = (uint32_t) v[0];
            o.tag = (uint32_t) v[1];
            break;
        case SWFSIM_TR_BARRIER:
            o.kind = SWFSIM_VOP_BARRIER;
            break;
        case SWFSIM_TR_COMPUTE:
            o.kind = SWFSIM_VOP_COMPUTE;
            break;
        default:
            swfsim_tr_fail(path, "unknown record", off);
            goto out;
        }
        if (rd.bad || node >= cfg->nodes) {
            swfsim_tr_fail(path, "truncated record or node out of range", off);
            goto out;
        }
        if (0 != swfsim_vprog_array_add(prog, (uint32_t) node, &o)) {
            fprintf(stderr, "swfsim: out of memory reading %s\n", path);
            goto out;
        }
    }
    if (!ended || rd.bad) {
        swfsim_tr_fail(path, "no end record (was the recording run cut short?)",
                       (size_t) (rd.p - buf));
        goto out;
    }
    rc = 0;
out:
    if (0 != rc) {
        swfsim_vprog_array_fini(prog);
    }
    free(buf);
    return rc;
}
