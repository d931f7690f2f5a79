/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_swfsim_html.c: the HTML report and the JSON reader under it.  A
 * small workload's report becomes a page that holds every section with
 * the run's numbers, refers to nothing outside itself (no script, no
 * link, no image source) and escapes text; broken JSON is refused.
 * tests/swfsim/html.sh renders such a page in headless Chromium.
 */

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "swfsim.h"
#include "swfsim_json.h"
#include "swfsim_workload.h"

static char *run_json(const char *spec, uint32_t x, uint32_t y, size_t *len)
{
    swfsim_config_t cfg;
    swfsim_workload_t w;
    swfsim_vprog_t p;
    swfsim_t sim;
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);

    swfsim_config_defaults(&cfg);
    cfg.model = SOCKMODEL_MODEL_TORUS;
    cfg.nodes = x * y;
    cfg.torus_x = x;
    cfg.torus_y = y;
    assert_int_equal(swfsim_workload_parse(&w, spec), 0);
    assert_int_equal(swfsim_workload_prog(&w, &cfg, &p), 0);
    assert_int_equal(swfsim_init(&sim, &cfg), 0);
    assert_int_equal(swfsim_vrun(&sim, &p), 0);
    assert_int_equal(swfsim_report_json(&sim, f), 0);
    fclose(f);
    swfsim_fini(&sim);
    return buf;
}

static char *to_html(const char *json, size_t len, int *rc)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);

    *rc = swfsim_html_from_json(json, len, f, "run <1>.json");
    fclose(f);
    return buf;
}

static size_t count(const char *hay, const char *needle)
{
    size_t k = 0;
    for (const char *p = hay; NULL != (p = strstr(p, needle)); p++) {
        k++;
    }
    return k;
}

static void test_page(void **state)
{
    size_t len;
    char *json = run_json("halo2d,size=2K,iters=5", 4, 4, &len), *html, want[128], err[64];
    swfsim_json_t *j = swfsim_json_parse(json, len, err, sizeof(err));
    int rc;

    (void) state;
    assert_non_null(j);
    html = to_html(json, len, &rc);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(html, "<!DOCTYPE html>"));
    assert_non_null(strstr(html, "</html>"));
    /* every section */
    for (const char *const *id =
             (const char *const[]){"id=\"summary\"", "id=\"params\"", "<svg id=\"torus\"",
                                   "<svg id=\"legend\"", "id=\"busiest\"", "<svg id=\"latency\"",
                                   "<svg id=\"timeline\"", "id=\"nodes\"", NULL};
         NULL != *id; id++) {
        if (NULL == strstr(html, *id)) {
            fail_msg("page lacks %s", *id);
        }
    }
    /* the numbers of the run */
    snprintf(want, sizeof(want), "(%.0f ns)", swfsim_json_num(j, "sim_end_ns", -1));
    assert_non_null(strstr(html, want));
    snprintf(want, sizeof(want), "<td id=\"messages\">%.0f</td>",
             swfsim_json_num(j, "messages", -1));
    assert_non_null(strstr(html, want));
    assert_non_null(strstr(html, "<td id=\"messages\">320</td>")); /* 16 x 4 x 5 */
    assert_non_null(strstr(html, "<td id=\"p-torus\">4 x 4</td>"));
    assert_non_null(strstr(html, "<td id=\"p-link\">250.0 MB/s</td>"));
    /* four link directions per router, one square per router, one row per node */
    assert_int_equal(count(html, "<line class=\"link\""), 64);
    assert_int_equal(count(html, "<rect class=\"router\""), 16);
    assert_int_equal(count(html, "<tr class=\"node\">"), 16);
    assert_true(count(html, "<polyline class=\"series\"") >= 1);
    assert_true(count(html, "<rect class=\"bar\"") >= 1);
    /* self-contained: nothing fetched, nothing run */
    assert_null(strstr(html, "<script"));
    assert_null(strstr(html, "src="));
    assert_null(strstr(html, "href"));
    assert_null(strstr(html, "@import"));
    assert_null(strstr(html, "url("));
    assert_int_equal(count(html, "http"), count(html, "xmlns=\"http://www.w3.org/2000/svg\""));
    /* the source name is escaped */
    assert_non_null(strstr(html, "From run &lt;1&gt;.json"));
    swfsim_json_free(j);
    free(html);
    free(json);
}

/* the simpel model has no torus: the page says so and still renders */
static void test_simpel_page(void **state)
{
    const char *json = "{ \"program\": \"swfsim\", \"version\": \"x\", \"model\": \"simpel\", "
                       "\"nodes\": 2, \"status\": \"ok\", \"sim_end_ns\": 0, \"messages\": 3, "
                       "\"latency_hist_ns\": [], \"node\": [ { \"rank\": 0, \"state\": "
                       "\"<b>\" } ], \"link\": [] }";
    int rc;
    char *html = to_html(json, strlen(json), &rc);

    (void) state;
    assert_int_equal(rc, 0);
    assert_non_null(strstr(html, "simpel model: no time"));
    assert_non_null(strstr(html, "id=\"latency-none\""));
    assert_null(strstr(html, "<svg id=\"torus\""));
    assert_non_null(strstr(html, "&lt;b&gt;"));
    assert_null(strstr(html, "<b>"));
    free(html);
}

static void test_json_reader(void **state)
{
    static const char *const bad[] = {"",
                                      "{",
                                      "[1,",
                                      "{\"a\" 1}",
                                      "{\"a\":}",
                                      "[1 2]",
                                      "\"abc",
                                      "{\"a\":1}x",
                                      "nul",
                                      "[-]",
                                      "{1:2}",
                                      "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]"
                                      "]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]"};
    char err[128];
    swfsim_json_t *j;
    int rc;
    char *html;

    (void) state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        j = swfsim_json_parse(bad[i], strlen(bad[i]), err, sizeof(err));
        if (NULL != j) {
            fail_msg("accepted '%s'", bad[i]);
        }
    }
    {
        const char *ok = "{\"a\": [1, 2.5e3, true, false, null, \"x\\\"y\\u0041\"], \"b\": {}}";
        j = swfsim_json_parse(ok, strlen(ok), err, sizeof(err));
    }
    assert_non_null(j);
    assert_int_equal(swfsim_json_get(j, "a")->n, 6);
    assert_true(2500.0 == swfsim_json_get(j, "a")->kids[1].num);
    assert_string_equal(swfsim_json_get(j, "a")->kids[5].str, "x\"yA");
    assert_null(swfsim_json_get(j, "c"));
    assert_true(7 == swfsim_json_num(j, "c", 7));
    swfsim_json_free(j);
    /* JSON, but not ours */
    html = to_html("{\"program\": \"other\"}", 20, &rc);
    assert_int_equal(rc, -1);
    free(html);
    html = to_html("[1, 2]", 6, &rc);
    assert_int_equal(rc, -1);
    free(html);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_page),
        cmocka_unit_test(test_simpel_page),
        cmocka_unit_test(test_json_reader),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
