/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * swfsim_report_html.c: the report as one self-contained HTML page
 * (--report-html, swfsim-report): inline CSS and SVG only, no scripts and
 * nothing fetched.  Drawn from the JSON report, so a live run, a
 * workload, a replay and an old JSON file give the same page: summary,
 * model parameters, the torus with each link coloured by utilisation,
 * the busiest links, the latency histogram, link utilisation over
 * simulated time and the per-node figures.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "swfsim.h"
#include "swfsim_json.h"

/* ------------------------------------------------------------------ */
/* helpers                                                             */

static void swfsim_html_esc(FILE *f, const char *s)
{
    for (; NULL != s && '\0' != *s; s++) {
        switch (*s) {
        case '<':
            fputs("&lt;", f);
            break;
        case '>':
            fputs("&gt;", f);
            break;
        case '&':
            fputs("&amp;", f);
            break;
        case '"':
            fputs("&quot;", f);
            break;
        default:
            fputc(*s, f);
            break;
        }
    }
}

/* a time in ns, human scale */
static void swfsim_html_time(char *buf, size_t n, double ns)
{
    if (ns >= 1e9) {
        snprintf(buf, n, "%.3f s", ns / 1e9);
    } else if (ns >= 1e6) {
        snprintf(buf, n, "%.3f ms", ns / 1e6);
    } else if (ns >= 1e3) {
        snprintf(buf, n, "%.3f us", ns / 1e3);
    } else {
        snprintf(buf, n, "%.0f ns", ns);
    }
}

static void swfsim_html_bytes(char *buf, size_t n, double b)
{
    if (b >= 1e9) {
        snprintf(buf, n, "%.2f GB", b / 1e9);
    } else if (b >= 1e6) {
        snprintf(buf, n, "%.2f MB", b / 1e6);
    } else if (b >= 1e3) {
        snprintf(buf, n, "%.2f kB", b / 1e3);
    } else {
        snprintf(buf, n, "%.0f B", b);
    }
}

/* utilisation 0..1 to a colour: blue, pale blue, yellow, orange, red */
static void swfsim_html_colour(char *buf, size_t n, double u)
{
    static const unsigned char stop[5][3] = {{0x2c, 0x7b, 0xb6},
                                             {0xab, 0xd9, 0xe9},
                                             {0xff, 0xff, 0xbf},
                                             {0xfd, 0xae, 0x61},
                                             {0xd7, 0x19, 0x1c}};
    double x;
    int i;

    if (u < 0) {
        u = 0;
    }
    if (u > 1) {
        u = 1;
    }
    x = u * 4;
    i = (int) x;
    if (i >= 4) {
        i = 3;
    }
    x -= i;
    snprintf(buf, n, "#%02x%02x%02x", (unsigned) (stop[i][0] + (stop[i + 1][0] - stop[i][0]) * x),
             (unsigned) (stop[i][1] + (stop[i + 1][1] - stop[i][1]) * x),
             (unsigned) (stop[i][2] + (stop[i + 1][2] - stop[i][2]) * x));
}

static const char *const swfsim_html_series[8] = {"#d7191c", "#2c7bb6", "#1a9641", "#7b3294",
                                                  "#fdae61", "#404040", "#e7298a", "#66a61e"};

/* link name "r12+x" to router and direction; 0 or -1 */
static int swfsim_html_link(const char *name, unsigned *r, int *dir)
{
    char a, b;

    if (3 != sscanf(name, "r%u%c%c", r, &a, &b)) {
        return -1;
    }
    if ('x' == b) {
        *dir = '+' == a ? 0 : 1;
    } else {
        *dir = '+' == a ? 2 : 3;
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* sections                                                            */

static void swfsim_html_row(FILE *f, const char *id, const char *name, const char *val)
{
    fprintf(f, "<tr><th>%s</th><td id=\"%s\">", name, id);
    swfsim_html_esc(f, val);
    fputs("</td></tr>\n", f);
}

static void swfsim_html_summary(FILE *f, const swfsim_json_t *j)
{
    char b[64], v[192];
    const swfsim_json_t *lat = swfsim_json_get(j, "latency_ns");

    fputs("<section id=\"summary\"><h2>Run</h2><table class=\"kv\">\n", f);
    swfsim_html_row(f, "status", "status", swfsim_json_str(j, "status", "?"));
    swfsim_html_row(f, "model", "model", swfsim_json_str(j, "model", "?"));
    snprintf(v, sizeof(v), "%.0f", swfsim_json_num(j, "nodes", 0));
    swfsim_html_row(f, "nodes", "nodes", v);
    swfsim_html_time(b, sizeof(b), swfsim_json_num(j, "sim_end_ns", 0));
    snprintf(v, sizeof(v), "%s (%.0f ns)", b, swfsim_json_num(j, "sim_end_ns", 0));
    swfsim_html_row(f, "sim-end", "simulated end time", v);
    snprintf(v, sizeof(v), "%.0f", swfsim_json_num(j, "messages", 0));
    swfsim_html_row(f, "messages", "messages", v);
    swfsim_html_bytes(b, sizeof(b), swfsim_json_num(j, "bytes", 0));
    snprintf(v, sizeof(v), "%.0f (%s)", swfsim_json_num(j, "bytes", 0), b);
    swfsim_html_row(f, "bytes", "bytes", v);
    snprintf(v, sizeof(v), "%.0f", swfsim_json_num(j, "events", 0));
    swfsim_html_row(f, "events", "events", v);
    snprintf(v, sizeof(v), "%.3f s", swfsim_json_num(j, "wall_run_seconds", 0));
    swfsim_html_row(f, "wall", "wall time of the run", v);
    if (NULL != lat && swfsim_json_num(lat, "count", 0) > 0) {
        char mn[32], p50[32], p99[32], mx[32];
        swfsim_html_time(mn, sizeof(mn), swfsim_json_num(lat, "min", 0));
        swfsim_html_time(p50, sizeof(p50), swfsim_json_num(lat, "p50", 0));
        swfsim_html_time(p99, sizeof(p99), swfsim_json_num(lat, "p99", 0));
        swfsim_html_time(mx, sizeof(mx), swfsim_json_num(lat, "max", 0));
        snprintf(v, sizeof(v), "min %s, p50 %s, p99 %s, max %s", mn, p50, p99, mx);
        swfsim_html_row(f, "latency-summary", "latency", v);
    }
    fputs("</table></section>\n", f);
}

static void swfsim_html_params(FILE *f, const swfsim_json_t *j)
{
    const swfsim_json_t *t = swfsim_json_get(j, "torus");
    char v[96];

    fputs("<section id=\"params\"><h2>Model parameters</h2><table class=\"kv\">\n", f);
    if (NULL == t) {
        fputs("<tr><td>simpel model: no time, no network</td></tr>\n", f);
    } else {
        double cyc = swfsim_json_num(t, "cycle_ps", 0);
        snprintf(v, sizeof(v), "%.0f x %.0f", swfsim_json_num(t, "x", 0),
                 swfsim_json_num(t, "y", 0));
        swfsim_html_row(f, "p-torus", "torus", v);
        snprintf(v, sizeof(v), "%.3f ns", cyc / 1000.0);
        swfsim_html_row(f, "p-cycle", "cycle", v);
        snprintf(v, sizeof(v), "%.1f MB/s", swfsim_json_num(t, "link_bytes_per_s", 0) / 1e6);
        swfsim_html_row(f, "p-link", "link bandwidth", v);
        snprintf(v, sizeof(v), "%.0f cycles (%.1f ns)", swfsim_json_num(t, "router_cycles", 0),
                 swfsim_json_num(t, "router_cycles", 0) * cyc / 1000.0);
        swfsim_html_row(f, "p-router", "router delay", v);
        snprintf(v, sizeof(v), "%.0f B", swfsim_json_num(t, "header_bytes", 0));
        swfsim_html_row(f, "p-header", "header flit", v);
        snprintf(v, sizeof(v), "%.0f cycles", swfsim_json_num(t, "probe_cycles", 0));
        swfsim_html_row(f, "p-probe", "probe cost", v);
    }
    fputs("</table></section>\n", f);
}

/* the torus: routers as squares (fill: the busier of the node's
 * injection and ejection links), each direction of each link a line
 * beside its twin, coloured by utilisation; wrap-around links are stubs
 * at the edge */
static void swfsim_html_torus(FILE *f, const swfsim_json_t *j)
{
    const swfsim_json_t *t = swfsim_json_get(j, "torus");
    const swfsim_json_t *links = swfsim_json_get(j, "link");
    unsigned dx, dy, nodes;
    double *util, *hostu, cell, w, h, m = 24;
    char col[16];

    if (NULL == t || NULL == links || SWFSIM_JSON_ARR != links->type) {
        return;
    }
    dx = (unsigned) swfsim_json_num(t, "x", 0);
    dy = (unsigned) swfsim_json_num(t, "y", 0);
    nodes = (unsigned) swfsim_json_num(j, "nodes", 0);
    if (0 == dx || 0 == dy || (uint64_t) dx * dy > 4ull * 4096) {
        return;
    }
    util = calloc((size_t) dx * dy * 4, sizeof(*util));
    hostu = calloc((size_t) dx * dy, sizeof(*hostu));
    if (NULL == util || NULL == hostu) {
        free(util);
        free(hostu);
        return;
    }
    for (size_t i = 0; i < (size_t) dx * dy * 4; i++) {
        util[i] = -1; /* unused */
    }
    for (size_t i = 0; i < (size_t) dx * dy; i++) {
        hostu[i] = -1;
    }
    for (size_t i = 0; i < links->n; i++) {
        const char *name = swfsim_json_str(&links->kids[i], "link", "");
        double u = swfsim_json_num(&links->kids[i], "utilisation", 0);
        unsigned r, k;
        int dir;
        if (0 == swfsim_html_link(name, &r, &dir) && r < dx * dy) {
            util[r * 4 + dir] = u;
        } else if ((1 == sscanf(name, "inj%u", &k) || 1 == sscanf(name, "ej%u", &k)) &&
                   k < dx * dy && u > hostu[k]) {
            hostu[k] = u;
        }
    }
    cell = 880.0 / (dx > dy ? dx : dy);
    if (cell > 90) {
        cell = 90;
    }
    w = 2 * m + cell * dx;
    h = 2 * m + cell * dy;
    fprintf(f,
            "<section id=\"torus-section\"><h2>Torus: link utilisation</h2>\n"
            "<p>Each router is a square, filled by the busier of its node's injection and "
            "ejection links; each link direction is a line beside its twin (+x above -x, "
            "+y right of -y); wrap-around links end in a stub at the edge. Grey: unused. "
            "Hover a line for its name and figure.</p>\n");
    fprintf(f,
            "<svg id=\"torus\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
            "height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\">\n",
            w, h, w, h);
    fprintf(f, "<rect width=\"%.0f\" height=\"%.0f\" fill=\"#fafafa\"/>\n", w, h);
    for (unsigned y = 0; y < dy; y++) {
        for (unsigned x = 0; x < dx; x++) {
            unsigned r = y * dx + x;
            double cx = m + cell * (x + 0.5), cy = m + cell * (y + 0.5);
            double off = cell * 0.12, lw = cell * 0.11 < 1 ? 1 : cell * 0.11;
            for (int d = 0; d < 4; d++) {
                static const char *const dn[4] = {"+x", "-x", "+y", "-y"};
                double u = util[r * 4 + d], x1 = cx, y1 = cy, x2, y2;
                int wrap;
                switch (d) {
                case 0:
                    wrap = x + 1 == dx;
                    y1 -= off;
                    x2 = wrap ? cx + cell / 2 : cx + cell;
                    y2 = y1;
                    break;
                case 1:
                    wrap = 0 == x;
                    y1 += off;
                    x2 = wrap ? cx - cell / 2 : cx - cell;
                    y2 = y1;
                    break;
                case 2:
                    wrap = y + 1 == dy;
                    x1 += off;
                    y2 = wrap ? cy + cell / 2 : cy + cell;
                    x2 = x1;
                    break;
                default:
                    wrap = 0 == y;
                    x1 -= off;
                    y2 = wrap ? cy - cell / 2 : cy - cell;
                    x2 = x1;
                    break;
                }
                if (u < 0) {
                    snprintf(col, sizeof(col), "#dddddd");
                } else {
                    swfsim_html_colour(col, sizeof(col), u);
                }
                fprintf(f,
                        "<line class=\"link\" data-link=\"r%u%s\" x1=\"%.1f\" y1=\"%.1f\" "
                        "x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"%.1f\">"
                        "<title>r%u%s%s: %.1f %%</title></line>\n",
                        r, dn[d], x1, y1, x2, y2, col, lw, r, dn[d], wrap ? " (wraps)" : "",
                        u < 0 ? 0.0 : 100.0 * u);
            }
        }
    }
    for (unsigned y = 0; y < dy; y++) {
        for (unsigned x = 0; x < dx; x++) {
            unsigned r = y * dx + x;
            double s = cell * 0.34;
            double u = hostu[r];
            if (u < 0) {
                snprintf(col, sizeof(col), r < nodes ? "#ffffff" : "#eeeeee");
            } else {
                swfsim_html_colour(col, sizeof(col), u);
            }
            fprintf(f,
                    "<rect class=\"router\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
                    "height=\"%.1f\" fill=\"%s\" stroke=\"#555\" stroke-width=\"0.6\">"
                    "<title>router %u (%u,%u)%s: host links %.1f %%</title></rect>\n",
                    m + cell * (x + 0.5) - s / 2, m + cell * (y + 0.5) - s / 2, s, s, col, r, x, y,
                    r < nodes ? "" : ", no node", u < 0 ? 0.0 : 100.0 * u);
            if (cell >= 40) {
                fprintf(f,
                        "<text x=\"%.1f\" y=\"%.1f\" font-size=\"%.0f\" "
                        "text-anchor=\"middle\">%u</text>\n",
                        m + cell * (x + 0.5), m + cell * (y + 0.5) + cell * 0.05, cell * 0.14, r);
            }
        }
    }
    fputs("</svg>\n", f);
    /* legend */
    fputs("<svg id=\"legend\" xmlns=\"http://www.w3.org/2000/svg\" width=\"400\" height=\"46\">\n",
          f);
    for (int i = 0; i < 50; i++) {
        swfsim_html_colour(col, sizeof(col), i / 49.0);
        fprintf(f, "<rect x=\"%d\" y=\"4\" width=\"6\" height=\"16\" fill=\"%s\"/>\n", 10 + i * 6,
                col);
    }
    fputs("<text x=\"10\" y=\"36\" font-size=\"12\">0 %</text>"
          "<text x=\"160\" y=\"36\" font-size=\"12\" text-anchor=\"middle\">50 %</text>"
          "<text x=\"310\" y=\"36\" font-size=\"12\" text-anchor=\"end\">100 % busy</text>\n"
          "<rect x=\"320\" y=\"4\" width=\"16\" height=\"16\" fill=\"#dddddd\"/>"
          "<text x=\"338\" y=\"16\" font-size=\"10\">unused</text>\n</svg>\n",
          f);
    fputs("</section>\n", f);
    free(util);
    free(hostu);
}

/* indices of the n busiest links, busiest first: router-to-router
 * links (net) or injection and ejection links */
static size_t swfsim_html_busiest(const swfsim_json_t *links, size_t *idx, size_t n, int net)
{
    size_t k = 0;

    while (k < n) {
        size_t best = SIZE_MAX;
        for (size_t i = 0; i < links->n; i++) {
            int taken = 0;
            for (size_t q = 0; q < k; q++) {
                taken |= idx[q] == i;
            }
            taken |= net != ('r' == swfsim_json_str(&links->kids[i], "link", "?")[0]);
            if (!taken &&
                (SIZE_MAX == best ||
                 swfsim_json_num(&links->kids[i], "busy_ns", 0) >
                     swfsim_json_num(&links->kids[best], "busy_ns", 0))) {
                best = i;
            }
        }
        if (SIZE_MAX == best) {
            break;
        }
        idx[k++] = best;
    }
    return k;
}

static void swfsim_html_link_table(FILE *f, const swfsim_json_t *links, int net);

static void swfsim_html_links(FILE *f, const swfsim_json_t *j)
{
    const swfsim_json_t *links = swfsim_json_get(j, "link");

    if (NULL == links || SWFSIM_JSON_ARR != links->type || 0 == links->n) {
        return;
    }
    fprintf(f,
            "<section><h2>Busiest links</h2><p>%zu links carried traffic. Router links "
            "are named r&lt;router&gt;&lt;direction&gt;, a node's links to its router "
            "inj&lt;node&gt; and ej&lt;node&gt;.</p>\n<div class=\"cols\">\n",
            links->n);
    for (int net = 1; net >= 0; net--) {
        swfsim_html_link_table(f, links, net);
    }
    fputs("</div></section>\n", f);
}

static void swfsim_html_link_table(FILE *f, const swfsim_json_t *links, int net)
{
    size_t idx[10], k = swfsim_html_busiest(links, idx, 10, net);

    fprintf(f,
            "<table id=\"%s\" class=\"grid\"><tr><th>%s</th><th>utilisation</th>"
            "<th>packets</th><th>bytes</th><th>busy</th></tr>\n",
            net ? "busiest" : "busiest-host", net ? "router link" : "node link");
    for (size_t q = 0; q < k; q++) {
        const swfsim_json_t *l = &links->kids[idx[q]];
        char col[16], busy[32];
        double u = swfsim_json_num(l, "utilisation", 0);
        swfsim_html_colour(col, sizeof(col), u);
        swfsim_html_time(busy, sizeof(busy), swfsim_json_num(l, "busy_ns", 0));
        fprintf(f, "<tr><td class=\"name\"><span class=\"sw\" style=\"background:%s\"></span>",
                col);
        swfsim_html_esc(f, swfsim_json_str(l, "link", "?"));
        fprintf(f,
                "</td><td class=\"util\">%.1f %%</td><td>%.0f</td><td>%.0f</td><td>%s</td>"
                "</tr>\n",
                100.0 * u, swfsim_json_num(l, "packets", 0), swfsim_json_num(l, "bytes", 0), busy);
    }
    fputs("</table>\n", f);
}

static void swfsim_html_latency(FILE *f, const swfsim_json_t *j)
{
    const swfsim_json_t *hist = swfsim_json_get(j, "latency_hist_ns");
    double maxc = 0, bw, W = 900, H = 260, L = 60, B = 72;

    fputs("<section><h2>Latency (send to arrival)</h2>\n", f);
    if (NULL == hist || SWFSIM_JSON_ARR != hist->type || 0 == hist->n) {
        fputs("<p id=\"latency-none\">No latencies (simpel model or no messages).</p>"
              "</section>\n",
              f);
        return;
    }
    for (size_t i = 0; i < hist->n; i++) {
        double c = swfsim_json_num(&hist->kids[i], "count", 0);
        maxc = c > maxc ? c : maxc;
    }
    bw = (W - L - 10) / (double) hist->n;
    fprintf(f,
            "<svg id=\"latency\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
            "height=\"%.0f\">\n",
            W, H + B);
    fprintf(f, "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"#000\"/>\n", L, H,
            W - 10, H);
    fprintf(f,
            "<text x=\"4\" y=\"14\" font-size=\"11\">%.0f</text>"
            "<text x=\"4\" y=\"%.0f\" font-size=\"11\">0</text>\n",
            maxc, H);
    fprintf(f,
            "<text x=\"%.0f\" y=\"%.0f\" font-size=\"12\" text-anchor=\"middle\">"
            "latency, upper bound of the power-of-two bucket</text>\n",
            (W + L) / 2, H + B - 4);
    for (size_t i = 0; i < hist->n; i++) {
        const swfsim_json_t *b = &hist->kids[i];
        double c = swfsim_json_num(b, "count", 0), bh = maxc > 0 ? (H - 20) * c / maxc : 0;
        char le[32];
        swfsim_html_time(le, sizeof(le), swfsim_json_num(b, "le", 0));
        fprintf(f,
                "<rect class=\"bar\" data-count=\"%.0f\" x=\"%.1f\" y=\"%.1f\" "
                "width=\"%.1f\" height=\"%.1f\" fill=\"#2c7bb6\"><title>&lt;= %s: %.0f "
                "messages</title></rect>\n",
                c, L + i * bw + 1, H - bh, bw - 2, bh, le, c);
        fprintf(f,
                "<text x=\"%.1f\" y=\"%.0f\" font-size=\"10\" text-anchor=\"end\" "
                "transform=\"rotate(-35 %.1f %.0f)\">%s</text>\n",
                L + (i + 0.5) * bw, H + 14, L + (i + 0.5) * bw, H + 14, le);
    }
    fputs("</svg></section>\n", f);
}

static void swfsim_html_timeline(FILE *f, const swfsim_json_t *j)
{
    const swfsim_json_t *tl = swfsim_json_get(j, "link_timeline");
    const swfsim_json_t *links = swfsim_json_get(tl, "links");
    double bns = swfsim_json_num(tl, "bucket_ns", 0), end = swfsim_json_num(j, "sim_end_ns", 0);
    double W = 900, H = 240, L = 50, T = 10, span;
    char lab[32];

    if (NULL == links || SWFSIM_JSON_ARR != links->type || 0 == links->n || bns <= 0) {
        return;
    }
    span = end > 0 ? end : bns;
    fputs("<section><h2>Utilisation over simulated time (busiest links)</h2>\n", f);
    fprintf(f,
            "<svg id=\"timeline\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
            "height=\"%.0f\">\n",
            W + 150, H + 50);
    fprintf(f,
            "<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" fill=\"none\" "
            "stroke=\"#999\"/>\n",
            L, T, W - L, H);
    for (int g = 0; g <= 4; g++) {
        double y = T + H - H * g / 4.0;
        fprintf(f,
                "<text x=\"%.0f\" y=\"%.0f\" font-size=\"11\" text-anchor=\"end\">%d %%"
                "</text><line x1=\"%.0f\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\" stroke=\"#eee\"/>\n",
                L - 4, y + 4, g * 25, L, y, W, y);
    }
    swfsim_html_time(lab, sizeof(lab), span);
    fprintf(f,
            "<text x=\"%.0f\" y=\"%.0f\" font-size=\"11\">0</text>"
            "<text x=\"%.0f\" y=\"%.0f\" font-size=\"11\" text-anchor=\"end\">%s</text>\n"
            "<text x=\"%.0f\" y=\"%.0f\" font-size=\"12\" text-anchor=\"middle\">simulated time"
            "</text>\n",
            L, T + H + 14, W, T + H + 14, lab, (L + W) / 2, T + H + 30);
    for (size_t q = 0; q < links->n && q < 8; q++) {
        const swfsim_json_t *l = &links->kids[q];
        const swfsim_json_t *busy = swfsim_json_get(l, "busy_ns");
        if (NULL == busy || SWFSIM_JSON_ARR != busy->type) {
            continue;
        }
        fprintf(f,
                "<polyline class=\"series\" data-link=\"%s\" fill=\"none\" stroke=\"%s\" "
                "stroke-width=\"1.8\" points=\"",
                swfsim_json_str(l, "link", "?"), swfsim_html_series[q]);
        for (size_t i = 0; i < busy->n; i++) {
            double t0 = bns * i, t1 = bns * (i + 1) < span ? bns * (i + 1) : span;
            double u = t1 > t0 ? busy->kids[i].num / (t1 - t0) : 0;
            u = u > 1 ? 1 : u;
            /* one step per bucket */
            fprintf(f, "%.1f,%.1f %.1f,%.1f ", L + (W - L) * t0 / span, T + H - H * u,
                    L + (W - L) * t1 / span, T + H - H * u);
        }
        fputs("\"/>\n", f);
        fprintf(f,
                "<rect x=\"%.0f\" y=\"%.0f\" width=\"12\" height=\"12\" fill=\"%s\"/>"
                "<text x=\"%.0f\" y=\"%.0f\" font-size=\"12\">",
                W + 10, T + q * 18.0, swfsim_html_series[q], W + 26, T + q * 18.0 + 10);
        swfsim_html_esc(f, swfsim_json_str(l, "link", "?"));
        fputs("</text>\n", f);
    }
    fputs("</svg>\n", f);
    swfsim_html_time(lab, sizeof(lab), bns);
    fprintf(f, "<p>Busy fraction per interval of %s.</p></section>\n", lab);
}

static void swfsim_html_nodes(FILE *f, const swfsim_json_t *j)
{
    const swfsim_json_t *nodes = swfsim_json_get(j, "node");

    if (NULL == nodes || SWFSIM_JSON_ARR != nodes->type) {
        return;
    }
    fprintf(f,
            "<section><h2>Nodes</h2><p>Wait: simulated time a node spent blocked "
            "for a message or a barrier.</p><div class=\"scroll\">\n"
            "<table id=\"nodes\" class=\"grid\"><tr><th>rank</th><th>state</th><th>clock</th>"
            "<th>sent</th><th>bytes sent</th><th>received</th><th>bytes received</th>"
            "<th>wait</th></tr>\n");
    for (size_t i = 0; i < nodes->n; i++) {
        const swfsim_json_t *n = &nodes->kids[i];
        char clk[32], wait[32];
        swfsim_html_time(clk, sizeof(clk), swfsim_json_num(n, "clock_ns", 0));
        swfsim_html_time(wait, sizeof(wait), swfsim_json_num(n, "wait_ns", 0));
        fprintf(f, "<tr class=\"node\"><td>%.0f</td><td>", swfsim_json_num(n, "rank", 0));
        swfsim_html_esc(f, swfsim_json_str(n, "state", "?"));
        fprintf(f,
                "</td><td>%s</td><td>%.0f</td><td>%.0f</td><td>%.0f</td><td>%.0f</td>"
                "<td>%s</td></tr>\n",
                clk, swfsim_json_num(n, "msgs_sent", 0), swfsim_json_num(n, "bytes_sent", 0),
                swfsim_json_num(n, "msgs_recv", 0), swfsim_json_num(n, "bytes_recv", 0), wait);
    }
    fputs("</table></div></section>\n", f);
}

int swfsim_html_from_json(const char *json, size_t len, FILE *out, const char *src_name)
{
    char err[128];
    swfsim_json_t *j = swfsim_json_parse(json, len, err, sizeof(err));

    if (NULL == j) {
        fprintf(stderr, "swfsim: %s: not a JSON report: %s\n", src_name, err);
        return -1;
    }
    if (SWFSIM_JSON_OBJ != j->type || 0 != strcmp(swfsim_json_str(j, "program", ""), "swfsim")) {
        fprintf(stderr, "swfsim: %s: not a swfsim report (no \"program\": \"swfsim\")\n", src_name);
        swfsim_json_free(j);
        return -1;
    }
    fputs(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
        "<title>swfsim report</title>\n<style>\n"
        "body{font-family:sans-serif;margin:16px 24px;color:#222;max-width:1100px}\n"
        "h1{font-size:22px;margin:0 0 8px}h2{font-size:17px;margin:22px 0 6px;"
        "border-bottom:1px solid #ccc}\n"
        "table.kv th{text-align:left;padding:1px 14px 1px 0;font-weight:normal;color:#555}\n"
        "table.grid{border-collapse:collapse;font-size:13px}\n"
        "table.grid td,table.grid th{border:1px solid #ddd;padding:2px 8px;text-align:right}\n"
        "table.grid td.name{text-align:left}\n"
        ".sw{display:inline-block;width:10px;height:10px;margin-right:6px;border:1px solid #888}\n"
        ".scroll{max-height:360px;overflow:auto;display:inline-block}\n"
        ".cols{display:flex;gap:32px;flex-wrap:wrap}\n"
        "p{font-size:13px;color:#444;margin:4px 0}\n"
        "</style></head><body>\n<h1>swfsim report</h1>\n",
        out);
    fputs("<div class=\"cols\">\n", out);
    swfsim_html_summary(out, j);
    swfsim_html_params(out, j);
    fputs("</div>\n", out);
    swfsim_html_torus(out, j);
    swfsim_html_links(out, j);
    swfsim_html_latency(out, j);
    swfsim_html_timeline(out, j);
    swfsim_html_nodes(out, j);
    fputs("<p id=\"source\">From ", out);
    swfsim_html_esc(out, src_name);
    fprintf(out, ", swfsim %s.</p>\n</body></html>\n", swfsim_json_str(j, "version", "?"));
    swfsim_json_free(j);
    return ferror(out) ? -1 : 0;
}

int swfsim_report_html_write(swfsim_t *sim)
{
    char *buf = NULL, tmp[1100];
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len), *f;
    const char *path = sim->cfg.report_html;
    int rc;

    if (NULL == mem) {
        swfsim_warn("out of memory for the HTML report");
        return -1;
    }
    rc = swfsim_report_json(sim, mem);
    if (0 != fclose(mem) || 0 != rc) {
        free(buf);
        swfsim_warn("cannot build the HTML report");
        return -1;
    }
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    f = fopen(tmp, "w");
    if (NULL == f) {
        swfsim_warn("cannot write %s: %s", tmp, strerror(errno));
        free(buf);
        return -1;
    }
    rc = swfsim_html_from_json(buf, len, f,
                               '\0' != sim->cfg.report_file[0] ? sim->cfg.report_file : "this run");
    free(buf);
    if (0 != fclose(f) || 0 != rc || 0 != rename(tmp, path)) {
        swfsim_warn("cannot write the HTML report %s", path);
        unlink(tmp);
        return -1;
    }
    return 0;
}
