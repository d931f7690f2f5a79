/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * swfsim_report.c: the simulator's statistics: the latency histogram, the
 * JSON report (--report) and the readable summary printed at the end.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "swfsim.h"
#include "tc_config.h"

/* log-linear buckets: exact below 8, then 8 per power of two */
static unsigned swfsim_hist_index(uint64_t v)
{
    unsigned e;

    if (v < 8) {
        return (unsigned) v;
    }
    e = 63u - (unsigned) __builtin_clzll(v);
    return (e - 2) * 8 + (unsigned) ((v >> (e - 3)) & 7);
}

static uint64_t swfsim_hist_upper(unsigned i)
{
    unsigned e, sub;

    if (i < 8) {
        return i;
    }
    e = i / 8 + 2;
    sub = i % 8;
    return ((uint64_t) (8 + sub) << (e - 3)) + ((uint64_t) 1 << (e - 3)) - 1;
}

void swfsim_hist_add(swfsim_hist_t *h, uint64_t v)
{
    if (0 == h->count || v < h->min) {
        h->min = v;
    }
    if (v > h->max) {
        h->max = v;
    }
    h->count++;
    h->sum += v;
    h->bucket[swfsim_hist_index(v)]++;
}

uint64_t swfsim_hist_pct(const swfsim_hist_t *h, double pct)
{
    uint64_t want, seen = 0;

    if (0 == h->count) {
        return 0;
    }
    want = (uint64_t) ((double) h->count * pct / 100.0 + 0.999999);
    if (want < 1) {
        want = 1;
    }
    for (unsigned i = 0; i < SWFSIM_HIST_BUCKETS; i++) {
        seen += h->bucket[i];
        if (seen >= want) {
            uint64_t u = swfsim_hist_upper(i);
            return u > h->max ? h->max : (u < h->min ? h->min : u);
        }
    }
    return h->max;
}

static const char *swfsim_state_name(int s)
{
    switch (s) {
    case SWFSIM_N_FINISHED:
        return "finished";
    case SWFSIM_N_DEAD:
        return "dropped";
    case SWFSIM_N_RUNNING:
        return "running";
    case SWFSIM_N_BLOCKED_RECV:
        return "blocked-recv";
    case SWFSIM_N_BLOCKED_BARRIER:
        return "blocked-barrier";
    case SWFSIM_N_WAITING:
        return "waiting";
    default:
        return "absent";
    }
}

static void swfsim_json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; '\0' != *s; s++) {
        unsigned char c = (unsigned char) *s;
        if ('"' == c || '\\' == c) {
            fprintf(f, "\\%c", c);
        } else if (c < 0x20) {
            fprintf(f, "\\u%04x", c);
        } else {
            fputc(c, f);
        }
    }
    fputc('"', f);
}

static uint64_t swfsim_end_ps(const swfsim_t *sim)
{
    uint64_t end = sim->now;

    if (NULL == sim->nodes || !sim->started) {
        return 0;
    }
    for (uint32_t r = 0; r < sim->nnodes; r++) {
        if (NULL != sim->nodes[r] && sim->nodes[r]->clock > end) {
            end = sim->nodes[r]->clock;
        }
    }
    return end;
}

static const char *swfsim_status(const swfsim_t *sim)
{
    if (sim->deadlock) {
        return "deadlock";
    }
    if (!sim->started) {
        return "not-started";
    }
    if (sim->exit_code > 128) {
        return "signal";
    }
    if (sim->dropped > 0 && 3 == sim->exit_code) {
        return "node-dropped";
    }
    return sim->done ? "ok" : "incomplete";
}

int swfsim_report_json(swfsim_t *sim, FILE *f)
{
    const swfsim_hist_t *h = &sim->latency;
    int torus = SOCKMODEL_MODEL_TORUS == sim->cfg.model;
    uint64_t end = swfsim_end_ps(sim);
    double wall = sim->wall_end - sim->wall_start;
    double run = sim->started ? sim->wall_end - sim->wall_run_start : 0.0;
    int first = 1;

    fprintf(f, "{\n  \"program\": \"swfsim\",\n  \"version\": \"%s\",\n", PACKAGE_VERSION);
    fprintf(f, "  \"protocol\": %d,\n", SOCKMODEL_PROTOCOL_VERSION);
    fprintf(f, "  \"model\": \"%s\",\n  \"nodes\": %u,\n  \"joined\": %u,\n",
            torus ? "torus" : "simpel", sim->cfg.nodes, sim->joined);
    fprintf(f, "  \"status\": \"%s\",\n  \"exit_code\": %d,\n", swfsim_status(sim), sim->exit_code);
    if (torus) {
        fprintf(f,
                "  \"torus\": { \"x\": %u, \"y\": %u, \"cycle_ps\": %llu, "
                "\"link_bytes_per_s\": %llu, \"router_cycles\": %u, \"header_bytes\": %u, "
                "\"probe_cycles\": %u },\n",
                sim->torus.dx, sim->torus.dy, (unsigned long long) sim->cfg.cycle_ps,
                (unsigned long long) sim->cfg.link_bw, sim->cfg.router_cycles,
                sim->cfg.header_bytes, sim->cfg.probe_cycles);
    }
    fprintf(f, "  \"sim_end_ns\": %llu,\n", (unsigned long long) (end / SWFSIM_PS_PER_NS));
    fprintf(f, "  \"wall_seconds\": %.6f,\n  \"wall_run_seconds\": %.6f,\n", wall, run);
    fprintf(f, "  \"messages\": %llu,\n  \"bytes\": %llu,\n", (unsigned long long) sim->msgs_total,
            (unsigned long long) sim->bytes_total);
    fprintf(f, "  \"messages_per_wall_second\": %.1f,\n",
            run > 0 ? (double) sim->msgs_total / run : 0.0);
    fprintf(f,
            "  \"discarded\": %llu,\n  \"refused_clients\": %llu,\n"
            "  \"dropped_clients\": %llu,\n  \"events\": %llu,\n",
            (unsigned long long) sim->discarded_total, (unsigned long long) sim->refused,
            (unsigned long long) sim->dropped, (unsigned long long) sim->events);
    fprintf(f,
            "  \"latency_ns\": { \"count\": %llu, \"min\": %llu, \"mean\": %.1f, "
            "\"p50\": %llu, \"p90\": %llu, \"p99\": %llu, \"max\": %llu },\n",
            (unsigned long long) h->count, (unsigned long long) (h->count ? h->min : 0),
            h->count ? (double) h->sum / (double) h->count : 0.0,
            (unsigned long long) swfsim_hist_pct(h, 50),
            (unsigned long long) swfsim_hist_pct(h, 90),
            (unsigned long long) swfsim_hist_pct(h, 99), (unsigned long long) h->max);
    /* the distribution by powers of two: count of latencies <= le */
    fprintf(f, "  \"latency_hist_ns\": [");
    {
        int firsth = 1;
        for (unsigned e = 0; e < 64; e++) {
            uint64_t cnt = 0;
            for (unsigned i = 0; i < SWFSIM_HIST_BUCKETS; i++) {
                uint64_t u = swfsim_hist_upper(i);
                unsigned ue = u ? 63u - (unsigned) __builtin_clzll(u) : 0;
                if (ue == e) {
                    cnt += h->bucket[i];
                }
            }
            if (cnt) {
                fprintf(f, "%s{ \"le\": %llu, \"count\": %llu }", firsth ? "" : ", ",
                        (unsigned long long) (e < 63 ? (2ull << e) - 1 : UINT64_MAX),
                        (unsigned long long) cnt);
                firsth = 0;
            }
        }
    }
    fprintf(f, "],\n");
    fprintf(f, "  \"node\": [");
    for (uint32_t r = 0; sim->started && r < sim->nnodes; r++) {
        const swfsim_node_t *n = sim->nodes[r];
        fprintf(f,
                "%s\n    { \"rank\": %u, \"state\": \"%s\", \"clock_ns\": %llu, "
                "\"msgs_sent\": %llu, \"bytes_sent\": %llu, \"msgs_recv\": %llu, "
                "\"bytes_recv\": %llu, \"discarded\": %llu, \"waits_found\": %llu, "
                "\"waits_expired\": %llu, \"waits_stopped\": %llu, \"wait_wall_ms\": %.3f, "
                "\"out_peak\": %zu, \"wait_ns\": %llu",
                r ? "," : "", r, swfsim_state_name(n->state),
                (unsigned long long) (n->clock / SWFSIM_PS_PER_NS),
                (unsigned long long) n->msgs_sent, (unsigned long long) n->bytes_sent,
                (unsigned long long) n->msgs_recv, (unsigned long long) n->bytes_recv,
                (unsigned long long) n->discarded, (unsigned long long) n->waits_found,
                (unsigned long long) n->waits_expired, (unsigned long long) n->waits_stopped,
                (double) n->wait_wall_us / 1000.0, n->out_peak,
                (unsigned long long) (n->wait_ps / SWFSIM_PS_PER_NS));
        if (SWFSIM_N_DEAD == n->state) {
            fprintf(f, ", \"drop_reason\": ");
            swfsim_json_str(f, n->why);
        }
        fprintf(f, " }");
    }
    fprintf(f, "\n  ],\n  \"link\": [");
    for (uint32_t i = 0; torus && i < sim->torus.nlinks; i++) {
        const swfsim_link_t *l = &sim->torus.links[i];
        char name[32];
        if (0 == l->packets) {
            continue;
        }
        swfsim_torus_link_name(&sim->torus, i, name, sizeof(name));
        fprintf(f,
                "%s\n    { \"link\": \"%s\", \"packets\": %llu, \"bytes\": %llu, "
                "\"busy_ns\": %llu, \"utilisation\": %.4f }",
                first ? "" : ",", name, (unsigned long long) l->packets,
                (unsigned long long) l->bytes, (unsigned long long) (l->busy_ps / SWFSIM_PS_PER_NS),
                end ? (double) l->busy_ps / (double) end : 0.0);
        first = 0;
    }
    fprintf(f, "\n  ]");
    if (torus) {
        swfsim_timeline_json(&sim->torus, f, end);
    }
    fprintf(f, "\n}\n");
    return ferror(f) ? -1 : 0;
}

void swfsim_report_summary(swfsim_t *sim, FILE *f)
{
    const swfsim_hist_t *h = &sim->latency;
    int torus = SOCKMODEL_MODEL_TORUS == sim->cfg.model;
    double run = sim->started ? sim->wall_end - sim->wall_run_start : 0.0;
    uint64_t end = swfsim_end_ps(sim);

    fprintf(f, "swfsim: %s model, %u nodes (%u joined), status %s\n", torus ? "torus" : "simpel",
            sim->nnodes, sim->joined, swfsim_status(sim));
    if (torus) {
        fprintf(f, "  torus %ux%u, link %.1f MB/s, cycle %.3f ns, router %u cycles, header %u B\n",
                sim->torus.dx, sim->torus.dy, (double) sim->cfg.link_bw / 1e6,
                (double) sim->cfg.cycle_ps / 1000.0, sim->cfg.router_cycles, sim->cfg.header_bytes);
        fprintf(f, "  simulated end time %.3f us (%llu ns)\n", (double) end / 1e6,
                (unsigned long long) (end / SWFSIM_PS_PER_NS));
    }
    fprintf(f, "  %llu messages, %llu bytes in %.3f s of wall time (%.0f messages/s)\n",
            (unsigned long long) sim->msgs_total, (unsigned long long) sim->bytes_total, run,
            run > 0 ? (double) sim->msgs_total / run : 0.0);
    for (uint32_t r = 0; sim->started && r < sim->nnodes; r++) {
        const swfsim_node_t *n = sim->nodes[r];

        if (n->waits_found + n->waits_expired + n->waits_stopped > 0) {
            fprintf(f,
                    "  node %u: waits ended by a message %llu, expired %llu, stopped %llu; "
                    "%.1f ms of wall time parked in waits\n",
                    r, (unsigned long long) n->waits_found, (unsigned long long) n->waits_expired,
                    (unsigned long long) n->waits_stopped, (double) n->wait_wall_us / 1000.0);
        }
    }
    if (sim->discarded_total || sim->refused || sim->dropped) {
        fprintf(f, "  %llu messages discarded, %llu clients refused, %llu dropped\n",
                (unsigned long long) sim->discarded_total, (unsigned long long) sim->refused,
                (unsigned long long) sim->dropped);
    }
    if (torus && h->count) {
        fprintf(f, "  latency ns: min %llu  p50 %llu  p90 %llu  p99 %llu  max %llu  mean %.1f\n",
                (unsigned long long) h->min, (unsigned long long) swfsim_hist_pct(h, 50),
                (unsigned long long) swfsim_hist_pct(h, 90),
                (unsigned long long) swfsim_hist_pct(h, 99), (unsigned long long) h->max,
                (double) h->sum / (double) h->count);
    }
    if (!sim->started) {
        return;
    }
    fprintf(f, "  %-5s %-15s %14s %10s %12s %10s %12s\n", "node", "state", "clock_ns", "sent",
            "bytes", "recv", "bytes");
    for (uint32_t r = 0; r < sim->nnodes; r++) {
        const swfsim_node_t *n = sim->nodes[r];
        fprintf(f, "  %-5u %-15s %14llu %10llu %12llu %10llu %12llu\n", r,
                swfsim_state_name(n->state), (unsigned long long) (n->clock / SWFSIM_PS_PER_NS),
                (unsigned long long) n->msgs_sent, (unsigned long long) n->bytes_sent,
                (unsigned long long) n->msgs_recv, (unsigned long long) n->bytes_recv);
    }
    if (torus) {
        /* the busiest links, at most eight */
        uint32_t shown = 0;
        uint64_t last = UINT64_MAX;
        fprintf(f, "  busiest links:\n");
        while (shown < 8) {
            uint64_t best = 0;
            uint32_t bi = UINT32_MAX;
            for (uint32_t i = 0; i < sim->torus.nlinks; i++) {
                uint64_t b = sim->torus.links[i].busy_ps;
                if (b > best && b < last) {
                    best = b;
                    bi = i;
                }
            }
            if (UINT32_MAX == bi) {
                break;
            }
            for (uint32_t i = 0; i < sim->torus.nlinks && shown < 8; i++) {
                const swfsim_link_t *l = &sim->torus.links[i];
                char name[32];
                if (l->busy_ps != best) {
                    continue;
                }
                swfsim_torus_link_name(&sim->torus, i, name, sizeof(name));
                fprintf(f, "    %-8s %8llu packets %12llu bytes  busy %12llu ns (%5.1f%%)\n", name,
                        (unsigned long long) l->packets, (unsigned long long) l->bytes,
                        (unsigned long long) (l->busy_ps / SWFSIM_PS_PER_NS),
                        end ? 100.0 * (double) l->busy_ps / (double) end : 0.0);
                shown++;
            }
            last = best;
        }
    }
}

int swfsim_report_write(swfsim_t *sim)
{
    FILE *f;
    char tmp[1100];

    if (!sim->cfg.quiet) {
        swfsim_report_summary(sim, stdout);
        fflush(stdout);
    }
    if ('\0' == sim->cfg.report_file[0]) {
        return 0;
    }
    snprintf(tmp, sizeof(tmp), "%s.tmp", sim->cfg.report_file);
    f = fopen(tmp, "w");
    if (NULL == f) {
        swfsim_warn("cannot write %s: %s", tmp, strerror(errno));
        return -1;
    }
    if (0 != swfsim_report_json(sim, f) || 0 != fclose(f) ||
        0 != rename(tmp, sim->cfg.report_file)) {
        swfsim_warn("cannot write the report %s", sim->cfg.report_file);
        unlink(tmp);
        return -1;
    }
    return 0;
}
