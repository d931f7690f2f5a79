/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * swfsim-report.c: turn a swfsim JSON report into the self-contained HTML
 * page of --report-html:  swfsim-report run.json [-o run.html]
 * (without -o: run.json's name with .html, "-" for stdout).
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "swfsim.h"

static void swfsim_report_usage(FILE *f)
{
    fprintf(f,
            "usage: swfsim-report REPORT.json [-o OUT.html]\n"
            "  writes the HTML page of a swfsim JSON report (default: REPORT.html;\n"
            "  -o - for stdout)\n");
}

int main(int argc, char **argv)
{
    const char *in = NULL, *out = NULL;
    char outbuf[1100], tmp[1200];
    char *buf = NULL;
    size_t len = 0, cap = 0, got;
    FILE *f;
    int rc;

    for (int i = 1; i < argc; i++) {
        if (0 == strcmp(argv[i], "-o") && i + 1 < argc) {
            out = argv[++i];
        } else if (0 == strcmp(argv[i], "-h") || 0 == strcmp(argv[i], "--help")) {
            swfsim_report_usage(stdout);
            return 0;
        } else if (NULL == in && '-' != argv[i][0]) {
            in = argv[i];
        } else {
            swfsim_report_usage(stderr);
            return 1;
        }
    }
    if (NULL == in) {
        swfsim_report_usage(stderr);
        return 1;
    }
    if (NULL == out) {
        const char *dot = strrchr(in, '.');
        size_t stem = NULL != dot && 0 == strcmp(dot, ".json") ? (size_t) (dot - in) : strlen(in);
        if (stem + 6 > sizeof(outbuf)) {
            fprintf(stderr, "swfsim-report: file name too long\n");
            return 1;
        }
        snprintf(outbuf, sizeof(outbuf), "%.*s.html", (int) stem, in);
        out = outbuf;
    }
    f = fopen(in, "r");
    if (NULL == f) {
        fprintf(stderr, "swfsim-report: cannot open %s: %s\n", in, strerror(errno));
        return 1;
    }
    do {
        if (len == cap) {
            char *nb;
            cap = cap ? cap * 2 : 1 << 16;
            if (cap > (1u << 30) || NULL == (nb = realloc(buf, cap))) {
                fprintf(stderr, "swfsim-report: %s is too large\n", in);
                free(buf);
                fclose(f);
                return 1;
            }
            buf = nb;
        }
        got = fread(buf + len, 1, cap - len, f);
        len += got;
    } while (got > 0);
    fclose(f);
    if (0 == strcmp(out, "-")) {
        rc = swfsim_html_from_json(buf, len, stdout, in);
        free(buf);
        return 0 == rc && 0 == fflush(stdout) ? 0 : 1;
    }
    snprintf(tmp, sizeof(tmp), "%s.tmp", out);
    f = fopen(tmp, "w");
    if (NULL == f) {
        fprintf(stderr, "swfsim-report: cannot write %s: %s\n", tmp, strerror(errno));
        free(buf);
        return 1;
    }
    rc = swfsim_html_from_json(buf, len, f, in);
    free(buf);
    if (0 != fclose(f) || 0 != rc || 0 != rename(tmp, out)) {
        unlink(tmp);
        fprintf(stderr, "swfsim-report: cannot write %s\n", out);
        return 1;
    }
    return 0;
}
