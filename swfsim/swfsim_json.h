/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * swfsim_json.h: a small JSON reader for swfsim's own reports (the HTML
 * report and swfsim-report read them back).  Parses the whole text into
 * a tree; depth, sizes and numbers are bounded.
 */

#ifndef SWFSIM_JSON_H
#define SWFSIM_JSON_H

#include <stddef.h>

enum swfsim_json_type {
    SWFSIM_JSON_NULL = 0,
    SWFSIM_JSON_BOOL,
    SWFSIM_JSON_NUM,
    SWFSIM_JSON_STR,
    SWFSIM_JSON_ARR,
    SWFSIM_JSON_OBJ
};

typedef struct swfsim_json {
    int type;
    double num; /* NUM, BOOL */
    char *str;  /* STR; the key for members of an object */
    char *key;
    struct swfsim_json *kids; /* ARR, OBJ: n children */
    size_t n;
} swfsim_json_t;

/* parse len bytes; NULL on error with a message in err */
swfsim_json_t *swfsim_json_parse(const char *text, size_t len, char *err, size_t errlen);
void swfsim_json_free(swfsim_json_t *j);
/* member of an object (NULL if absent or j is not an object) */
const swfsim_json_t *swfsim_json_get(const swfsim_json_t *j, const char *key);
/* number member, or dflt */
double swfsim_json_num(const swfsim_json_t *j, const char *key, double dflt);
/* string member, or dflt */
const char *swfsim_json_str(const swfsim_json_t *j, const char *key, const char *dflt);

#endif /* SWFSIM_JSON_H */
