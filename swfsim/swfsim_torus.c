/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * swfsim_torus.c: the timed network model: an ATOLL-like 2D torus with
 * one node per router, dimension-order routing (x first, the shorter way
 * round), wormhole switching and link contention.  Pure arithmetic on
 * link reservations; docs/swfsim.md derives the formulas.
 */

#include <stdlib.h>
#include <string.h>
#include <math.h>

#include "swfsim.h"

void swfsim_torus_dims(uint32_t n, uint32_t *x, uint32_t *y)
{
    uint32_t dx = 1;

    if (0 == n) {
        n = 1;
    }
    while ((uint64_t) dx * dx < n) {
        dx++;
    }
    *x = dx;
    *y = (n + dx - 1) / dx;
}

uint64_t swfsim_torus_ser(const swfsim_torus_t *t, uint64_t bytes)
{
    /* ceil(bytes * 1e12 / bw) without overflow for any 32-bit length */
    unsigned __int128 num = (unsigned __int128) bytes * 1000000000000ull;
    return (uint64_t) ((num + t->link_bw - 1) / t->link_bw);
}

int swfsim_torus_init(swfsim_torus_t *t, const swfsim_config_t *cfg)
{
    memset(t, 0, sizeof(*t));
    t->nodes = cfg->nodes;
    if (cfg->torus_x && cfg->torus_y) {
        t->dx = cfg->torus_x;
        t->dy = cfg->torus_y;
    } else {
        swfsim_torus_dims(cfg->nodes, &t->dx, &t->dy);
    }
    if ((uint64_t) t->dx * t->dy < cfg->nodes || 0 == cfg->link_bw) {
        return -1;
    }
    t->link_bw = cfg->link_bw;
    t->header_bytes = cfg->header_bytes;
    t->t_hdr = swfsim_torus_ser(t, cfg->header_bytes);
    t->t_router = (uint64_t) cfg->router_cycles * cfg->cycle_ps;
    t->nlinks = 4 * t->dx * t->dy + 2 * t->nodes;
    t->links = calloc(t->nlinks, sizeof(*t->links));
    if (NULL == t->links || 0 != swfsim_timeline_init(t)) {
        swfsim_torus_fini(t);
        return -1;
    }
    return 0;
}

void swfsim_torus_fini(swfsim_torus_t *t)
{
    free(t->links);
    t->links = NULL;
    free(t->tl);
    t->tl = NULL;
}

/* Steps and direction along one ring of size n from a to b: the shorter
 * way, the positive direction on a tie. */
static void swfsim_torus_ring(uint32_t a, uint32_t b, uint32_t n, uint32_t *steps, int *positive)
{
    uint32_t fwd = (b + n - a) % n;
    uint32_t back = (n - fwd) % n;

    if (fwd <= back) {
        *steps = fwd;
        *positive = 1;
    } else {
        *steps = back;
        *positive = 0;
    }
}

uint32_t swfsim_torus_route(const swfsim_torus_t *t, uint32_t src, uint32_t dst, uint32_t *path,
                            uint32_t max)
{
    uint32_t x = src % t->dx, y = src / t->dx;
    uint32_t tx = dst % t->dx, ty = dst / t->dx;
    uint32_t steps, k = 0, i;
    int pos;

    if (max < 2) {
        return 0;
    }
    path[k++] = 4 * t->dx * t->dy + src;
    swfsim_torus_ring(x, tx, t->dx, &steps, &pos);
    for (i = 0; i < steps && k < max - 1; i++) {
        uint32_t r = y * t->dx + x;
        path[k++] = r * 4 + (pos ? SWFSIM_DIR_XP : SWFSIM_DIR_XM);
        x = pos ? (x + 1) % t->dx : (x + t->dx - 1) % t->dx;
    }
    swfsim_torus_ring(y, ty, t->dy, &steps, &pos);
    for (i = 0; i < steps && k < max - 1; i++) {
        uint32_t r = y * t->dx + x;
        path[k++] = r * 4 + (pos ? SWFSIM_DIR_YP : SWFSIM_DIR_YM);
        y = pos ? (y + 1) % t->dy : (y + t->dy - 1) % t->dy;
    }
    path[k++] = 4 * t->dx * t->dy + t->nodes + dst;
    return k;
}

uint64_t swfsim_torus_transfer(swfsim_torus_t *t, uint32_t src, uint32_t dst, uint32_t len,
                               uint64_t t_inj, uint64_t *start)
{
    uint32_t path[SWFSIM_MAX_PATH];
    uint32_t k, nk = swfsim_torus_route(t, src, dst, path, SWFSIM_MAX_PATH);
    uint64_t hop = t->t_hdr + t->t_router;               /* head: link + router */
    uint64_t hold = t->t_hdr + swfsim_torus_ser(t, len); /* per link */
    uint64_t s = t_inj;

    /* The head reaches link k at s + k*hop; it may go only if that link
     * is free by then, so the packet waits at the source until every link
     * of its path is free when the head gets there (no blocking inside
     * the network). */
    for (k = 0; k < nk; k++) {
        uint64_t off = (uint64_t) k * hop;
        uint64_t fa = t->links[path[k]].free_at;
        if (fa > off && fa - off > s) {
            s = fa - off;
        }
    }
    /* Link k is held from the head's arrival to the tail's departure. */
    for (k = 0; k < nk; k++) {
        swfsim_link_t *l = &t->links[path[k]];
        l->free_at = s + (uint64_t) k * hop + hold;
        l->busy_ps += hold;
        swfsim_timeline_add(t, path[k], s + (uint64_t) k * hop, hold);
        l->bytes += (uint64_t) len + t->header_bytes;
        l->packets++;
    }
    if (NULL != start) {
        *start = s;
    }
    return s + (uint64_t) (nk - 1) * hop + hold;
}

void swfsim_torus_link_name(const swfsim_torus_t *t, uint32_t i, char *buf, size_t n)
{
    static const char *const dirs[] = {"+x", "-x", "+y", "-y"};
    uint32_t nr = 4 * t->dx * t->dy;

    if (i < nr) {
        snprintf(buf, n, "r%u%s", i / 4, dirs[i % 4]);
    } else if (i < nr + t->nodes) {
        snprintf(buf, n, "inj%u", i - nr);
    } else {
        snprintf(buf, n, "ej%u", i - nr - t->nodes);
    }
}
