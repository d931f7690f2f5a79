/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * swfsim_json.c: a recursive-descent JSON reader (swfsim_json.h).
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "swfsim_json.h"

#define SWFSIM_JSON_DEPTH 32

typedef struct swfsim_jp {
    const char *p, *end;
    char *err;
    size_t errlen;
    int failed;
} swfsim_jp_t;

static void swfsim_jp_fail(swfsim_jp_t *jp, const char *what, const char *start)
{
    if (!jp->failed) {
        snprintf(jp->err, jp->errlen, "%s at offset %ld", what, (long) (jp->p - start));
        jp->failed = 1;
    }
}

static void swfsim_jp_ws(swfsim_jp_t *jp)
{
    while (jp->p < jp->end &&
           (' ' == *jp->p || '\n' == *jp->p || '\r' == *jp->p || '\t' == *jp->p)) {
        jp->p++;
    }
}

static char *swfsim_jp_string(swfsim_jp_t *jp, const char *start)
{
    const char *s = ++jp->p;
    char *out, *o;

    /* the decoded string is never longer than the encoded one */
    while (jp->p < jp->end && '"' != *jp->p) {
        if ('\\' == *jp->p) {
            jp->p++;
        }
        jp->p++;
    }
    if (jp->p >= jp->end) {
        swfsim_jp_fail(jp, "unterminated string", start);
        return NULL;
    }
    out = o = malloc((size_t) (jp->p - s) + 1);
    if (NULL == out) {
        swfsim_jp_fail(jp, "out of memory", start);
        return NULL;
    }
    while (s < jp->p) {
        if ('\\' != *s) {
            *o++ = *s++;
            continue;
        }
        s++;
        switch (*s) {
        case 'n':
            *o++ = '\n';
            s++;
            break;
        case 't':
            *o++ = '\t';
            s++;
            break;
        case 'r':
            *o++ = '\r';
            s++;
            break;
        case 'b':
            *o++ = '\b';
            s++;
            break;
        case 'f':
            *o++ = '\f';
            s++;
            break;
        case 'u': {
            unsigned v = 0;
            int k;
            s++;
            for (k = 0; k < 4 && s < jp->p; k++, s++) {
                char c = *s;
                v = v * 16 +
                    (unsigned) (c >= '0' && c <= '9'       ? c - '0'
                                    : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                    : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                                           : 0);
            }
            /* our reports escape only control characters; others become '?' */
            *o++ = v < 0x80 ? (char) v : '?';
            break;
        }
        default:
            *o++ = *s++;
            break;
        }
    }
    *o = '\0';
    jp->p++;
    return out;
}

static int swfsim_jp_value(swfsim_jp_t *jp, swfsim_json_t *v, int depth, const char *start);

static int swfsim_jp_list(swfsim_jp_t *jp, swfsim_json_t *v, int depth, const char *start,
                          char close, int obj)
{
    size_t cap = 0;

    jp->p++;
    for (;;) {
        swfsim_json_t *k;
        char *key = NULL;
        swfsim_jp_ws(jp);
        if (jp->p < jp->end && close == *jp->p && 0 == v->n) {
            jp->p++;
            return 0;
        }
        if (obj) {
            if (jp->p >= jp->end || '"' != *jp->p) {
                swfsim_jp_fail(jp, "expected a key", start);
                return -1;
            }
            if (NULL == (key = swfsim_jp_string(jp, start))) {
                return -1;
            }
            swfsim_jp_ws(jp);
            if (jp->p >= jp->end || ':' != *jp->p) {
                free(key);
                swfsim_jp_fail(jp, "expected ':'", start);
                return -1;
            }
            jp->p++;
        }
        if (v->n == cap) {
            swfsim_json_t *nk;
            cap = cap ? cap * 2 : 8;
            nk = realloc(v->kids, cap * sizeof(*nk));
            if (NULL == nk) {
                free(key);
                swfsim_jp_fail(jp, "out of memory", start);
                return -1;
            }
            v->kids = nk;
        }
        k = &v->kids[v->n++];
        memset(k, 0, sizeof(*k));
        k->key = key;
        if (0 != swfsim_jp_value(jp, k, depth + 1, start)) {
            return -1;
        }
        swfsim_jp_ws(jp);
        if (jp->p < jp->end && ',' == *jp->p) {
            jp->p++;
            continue;
        }
        if (jp->p < jp->end && close == *jp->p) {
            jp->p++;
            return 0;
        }
        swfsim_jp_fail(jp, obj ? "expected ',' or '}'" : "expected ',' or ']'", start);
        return -1;
    }
}

static int swfsim_jp_value(swfsim_jp_t *jp, swfsim_json_t *v, int depth, const char *start)
{
    if (depth > SWFSIM_JSON_DEPTH) {
        swfsim_jp_fail(jp, "nested too deeply", start);
        return -1;
    }
    swfsim_jp_ws(jp);
    if (jp->p >= jp->end) {
        swfsim_jp_fail(jp, "unexpected end", start);
        return -1;
    }
    switch (*jp->p) {
    case '{':
        v->type = SWFSIM_JSON_OBJ;
        return swfsim_jp_list(jp, v, depth, start, '}', 1);
    case '[':
        v->type = SWFSIM_JSON_ARR;
        return swfsim_jp_list(jp, v, depth, start, ']', 0);
    case '"':
        v->type = SWFSIM_JSON_STR;
        v->str = swfsim_jp_string(jp, start);
        return NULL == v->str ? -1 : 0;
    default:
        break;
    }
    if ((size_t) (jp->end - jp->p) >= 4 && 0 == strncmp(jp->p, "true", 4)) {
        v->type = SWFSIM_JSON_BOOL;
        v->num = 1;
        jp->p += 4;
        return 0;
    }
    if ((size_t) (jp->end - jp->p) >= 5 && 0 == strncmp(jp->p, "false", 5)) {
        v->type = SWFSIM_JSON_BOOL;
        jp->p += 5;
        return 0;
    }
    if ((size_t) (jp->end - jp->p) >= 4 && 0 == strncmp(jp->p, "null", 4)) {
        v->type = SWFSIM_JSON_NULL;
        jp->p += 4;
        return 0;
    }
    {
        char buf[64], *e;
        size_t k = 0;
        while (jp->p + k < jp->end && k < sizeof(buf) - 1 &&
               NULL != strchr("0123456789+-.eE", jp->p[k])) {
            buf[k] = jp->p[k];
            k++;
        }
        buf[k] = '\0';
        v->num = strtod(buf, &e);
        if (0 == k || *e != '\0') {
            swfsim_jp_fail(jp, "bad value", start);
            return -1;
        }
        v->type = SWFSIM_JSON_NUM;
        jp->p += k;
        return 0;
    }
}

static void swfsim_json_clear(swfsim_json_t *j)
{
    for (size_t i = 0; i < j->n; i++) {
        swfsim_json_clear(&j->kids[i]);
    }
    free(j->kids);
    free(j->str);
    free(j->key);
}

void swfsim_json_free(swfsim_json_t *j)
{
    if (NULL != j) {
        swfsim_json_clear(j);
        free(j);
    }
}

swfsim_json_t *swfsim_json_parse(const char *text, size_t len, char *err, size_t errlen)
{
    swfsim_jp_t jp = {text, text + len, err, errlen, 0};
    swfsim_json_t *root = calloc(1, sizeof(*root));

    if (NULL == root) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    if (0 != swfsim_jp_value(&jp, root, 0, text)) {
        swfsim_json_free(root);
        return NULL;
    }
    swfsim_jp_ws(&jp);
    if (jp.p != jp.end) {
        swfsim_jp_fail(&jp, "trailing characters", text);
        swfsim_json_free(root);
        return NULL;
    }
    return root;
}

const swfsim_json_t *swfsim_json_get(const swfsim_json_t *j, const char *key)
{
    if (NULL == j || SWFSIM_JSON_OBJ != j->type) {
        return NULL;
    }
    for (size_t i = 0; i < j->n; i++) {
        if (0 == strcmp(j->kids[i].key, key)) {
            return &j->kids[i];
        }
    }
    return NULL;
}

double swfsim_json_num(const swfsim_json_t *j, const char *key, double dflt)
{
    const swfsim_json_t *v = swfsim_json_get(j, key);
    return NULL != v && SWFSIM_JSON_NUM == v->type ? v->num : dflt;
}

const char *swfsim_json_str(const swfsim_json_t *j, const char *key, const char *dflt)
{
    const swfsim_json_t *v = swfsim_json_get(j, key);
    return NULL != v && SWFSIM_JSON_STR == v->type ? v->str : dflt;
}
