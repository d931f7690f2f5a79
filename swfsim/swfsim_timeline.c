/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * swfsim_timeline.c: how busy each torus link was over simulated time, in
 * SWFSIM_TL_BUCKETS equal buckets per link.  The bucket width starts at
 * one microsecond and doubles (neighbouring buckets merged) whenever a
 * reservation ends beyond the last bucket, so the whole run always fits
 * and the memory per link stays fixed.  The HTML report draws the busiest
 * links' rows.
 */

#include <stdlib.h>
#include <string.h>

#include "swfsim.h"

#define SWFSIM_TL_WIDTH0 (1000ull * SWFSIM_PS_PER_NS) /* 1 us */

int swfsim_timeline_init(swfsim_torus_t *t)
{
    t->tl_width = SWFSIM_TL_WIDTH0;
    t->tl = calloc((size_t) t->nlinks * SWFSIM_TL_BUCKETS, sizeof(*t->tl));
    return NULL == t->tl ? -1 : 0;
}

/* double the bucket width: bucket i takes old buckets 2i and 2i+1 */
static void swfsim_timeline_widen(swfsim_torus_t *t)
{
    for (uint32_t l = 0; l < t->nlinks; l++) {
        uint64_t *b = t->tl + (size_t) l * SWFSIM_TL_BUCKETS;
        for (uint32_t i = 0; i < SWFSIM_TL_BUCKETS / 2; i++) {
            b[i] = b[2 * i] + b[2 * i + 1];
        }
        memset(b + SWFSIM_TL_BUCKETS / 2, 0, SWFSIM_TL_BUCKETS / 2 * sizeof(*b));
    }
    t->tl_width *= 2;
}

void swfsim_timeline_add(swfsim_torus_t *t, uint32_t link, uint64_t t0, uint64_t len)
{
    uint64_t end = t0 + len, *b;

    if (NULL == t->tl || link >= t->nlinks || 0 == len) {
        return;
    }
    while (end > t->tl_width * SWFSIM_TL_BUCKETS) {
        swfsim_timeline_widen(t);
    }
    b = t->tl + (size_t) link * SWFSIM_TL_BUCKETS;
    /* split [t0, end) over the buckets it touches */
    while (t0 < end) {
        uint64_t i = t0 / t->tl_width;
        uint64_t bend = (i + 1) * t->tl_width;
        uint64_t piece = (end < bend ? end : bend) - t0;
        b[i] += piece;
        t0 += piece;
    }
}

/* "link_timeline" in the JSON report: the eight busiest links' busy time
 * per bucket over the run */
void swfsim_timeline_json(const swfsim_torus_t *t, FILE *f, uint64_t end_ps)
{
    uint32_t pick[8], npick = 0;
    uint64_t nb;

    if (NULL == t->tl || 0 == end_ps) {
        return;
    }
    nb = (end_ps + t->tl_width - 1) / t->tl_width;
    if (nb > SWFSIM_TL_BUCKETS) {
        nb = SWFSIM_TL_BUCKETS;
    }
    /* the busiest first; ties in link order */
    while (npick < 8) {
        uint32_t best = UINT32_MAX;
        for (uint32_t i = 0; i < t->nlinks; i++) {
            int taken = 0;
            for (uint32_t j = 0; j < npick; j++) {
                taken |= pick[j] == i;
            }
            if (!taken && t->links[i].busy_ps > 0 &&
                (UINT32_MAX == best || t->links[i].busy_ps > t->links[best].busy_ps)) {
                best = i;
            }
        }
        if (UINT32_MAX == best) {
            break;
        }
        pick[npick++] = best;
    }
    fprintf(f, ",\n  \"link_timeline\": { \"bucket_ns\": %llu, \"buckets\": %llu, \"links\": [",
            (unsigned long long) (t->tl_width / SWFSIM_PS_PER_NS), (unsigned long long) nb);
    for (uint32_t j = 0; j < npick; j++) {
        char name[32];
        const uint64_t *b = t->tl + (size_t) pick[j] * SWFSIM_TL_BUCKETS;
        swfsim_torus_link_name(t, pick[j], name, sizeof(name));
        fprintf(f, "%s\n    { \"link\": \"%s\", \"busy_ns\": [", j ? "," : "", name);
        for (uint64_t i = 0; i < nb; i++) {
            fprintf(f, "%s%llu", i ? ", " : "", (unsigned long long) (b[i] / SWFSIM_PS_PER_NS));
        }
        fprintf(f, "] }");
    }
    fprintf(f, "\n  ] }");
}
