/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_swfsim_config.c: the simulator's options and config file (values,
 * precedence, rejection of bad input), --listen unix:PATH, the port file
 * (complete line, mode 0600) and the latency histogram's percentiles.
 */

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "swfsim.h"

static int parse(swfsim_config_t *cfg, const char *const *args)
{
    char *argv[32];
    int argc = 0;

    argv[argc++] = (char *) "swfsim";
    for (; NULL != *args; args++) {
        argv[argc++] = (char *) *args;
    }
    argv[argc] = NULL;
    return swfsim_config_parse(cfg, argc, argv);
}

static void test_defaults_and_options(void **state)
{
    swfsim_config_t cfg;
    const char *a1[] = {"--nodes", "4", NULL};
    const char *a2[] = {"-n",          "6",
                        "--model",     "torus",
                        "--listen",    "0.0.0.0:5555",
                        "--max-msg",   "1M",
                        "--torus",     "3x2",
                        "--port-file", "/x/p",
                        "--report",    "/x/r.json",
                        "--quiet",     "--connect-timeout",
                        "30",          NULL};

    (void) state;
    assert_int_equal(parse(&cfg, a1), 0);
    assert_int_equal(cfg.nodes, 4);
    assert_int_equal(cfg.model, SOCKMODEL_MODEL_SIMPEL);
    assert_string_equal(cfg.listen_host, "127.0.0.1");
    assert_int_equal(cfg.listen_port, 0);
    assert_int_equal(cfg.max_msg, SOCKMODEL_MAX_MSG_DEFAULT);
    assert_int_equal(cfg.cycle_ps, 4000);
    assert_true(cfg.link_bw == 250000000ull);
    assert_int_equal(cfg.probe_cycles, 100);

    assert_int_equal(parse(&cfg, a2), 0);
    assert_int_equal(cfg.nodes, 6);
    assert_int_equal(cfg.model, SOCKMODEL_MODEL_TORUS);
    assert_string_equal(cfg.listen_host, "0.0.0.0");
    assert_int_equal(cfg.listen_port, 5555);
    assert_int_equal(cfg.max_msg, 1 << 20);
    assert_int_equal(cfg.torus_x, 3);
    assert_int_equal(cfg.torus_y, 2);
    assert_string_equal(cfg.port_file, "/x/p");
    assert_string_equal(cfg.report_file, "/x/r.json");
    assert_int_equal(cfg.quiet, 1);
    assert_int_equal(cfg.connect_timeout_s, 30);
}

static void test_rejects(void **state)
{
    static const char *const bad[][8] = {
        {NULL}, /* no --nodes */
        {"--nodes", "0", NULL},
        {"--nodes", "4097", NULL},
        {"--nodes", "-1", NULL},
        {"--nodes", "4x", NULL},
        {"--nodes", "4", "--model", "mesh", NULL},
        {"--nodes", "4", "--listen", "localhost", NULL},
        {"--nodes", "4", "--listen", "1.2.3.4:70000", NULL},
        {"--nodes", "4", "--max-msg", "2G", NULL},
        {"--nodes", "5", "--torus", "2x2", NULL}, /* too small */
        {"--nodes", "4", "--torus", "0x4", NULL},
        {"--nodes", "4", "--bogus", NULL},
        {"--nodes", "4", "extra", NULL},
        {"--nodes", "4", "--config", "/nonexistent/swfsim.conf", NULL},
    };
    swfsim_config_t cfg;

    (void) state;
    for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(parse(&cfg, bad[i]), -1);
    }
}

static void test_config_file(void **state)
{
    char path[] = "/tmp/swfsim-conf.XXXXXX";
    int fd = mkstemp(path);
    FILE *f;
    swfsim_config_t cfg;

    (void) state;
    assert_true(fd >= 0);
    f = fdopen(fd, "w");
    assert_non_null(f);
    fprintf(f,
            "# a torus like ATOLL\n"
            "model = torus\n"
            "nodes=8\n"
            "  torus_x = 4   # comment\n"
            "torus_y = 2\n"
            "cycle_ns = 2.5\n"
            "link_mbps = 500\n"
            "router_cycles = 10\n"
            "header_bytes = 16\n"
            "probe_cycles = 50\n"
            "\n");
    fclose(f);
    {
        const char *args[] = {"--config", path, NULL};
        assert_int_equal(parse(&cfg, args), 0);
        assert_int_equal(cfg.model, SOCKMODEL_MODEL_TORUS);
        assert_int_equal(cfg.nodes, 8);
        assert_int_equal(cfg.torus_x, 4);
        assert_int_equal(cfg.torus_y, 2);
        assert_int_equal(cfg.cycle_ps, 2500);
        assert_true(cfg.link_bw == 500000000ull);
        assert_int_equal(cfg.router_cycles, 10);
        assert_int_equal(cfg.header_bytes, 16);
        assert_int_equal(cfg.probe_cycles, 50);
    }
    {
        /* the command line wins, wherever --config stands */
        const char *args[] = {"--model", "simpel", "--config", path, "--nodes", "3", NULL};
        assert_int_equal(parse(&cfg, args), 0);
        assert_int_equal(cfg.model, SOCKMODEL_MODEL_SIMPEL);
        assert_int_equal(cfg.nodes, 3);
        assert_int_equal(cfg.router_cycles, 10);
    }
    f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "model = torus\nno equals sign here\n");
    fclose(f);
    {
        const char *args[] = {"--config", path, "--nodes", "2", NULL};
        assert_int_equal(parse(&cfg, args), -1);
    }
    f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "link_mbps = 0\n");
    fclose(f);
    {
        const char *args[] = {"--config", path, "--nodes", "2", NULL};
        assert_int_equal(parse(&cfg, args), -1);
    }
    unlink(path);
}

static void test_port_file(void **state)
{
    char dir[] = "/tmp/swfsim-pf.XXXXXX";
    char path[64], line[64];
    struct stat st;
    FILE *f;

    (void) state;
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/port", dir);
    assert_int_equal(swfsim_write_port_file(path, "127.0.0.1", 40123), 0);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    f = fopen(path, "r");
    assert_non_null(f);
    assert_non_null(fgets(line, sizeof(line), f));
    fclose(f);
    assert_string_equal(line, "127.0.0.1:40123\n");
    /* only the final file is left behind */
    assert_int_equal(unlink(path), 0);
    assert_int_equal(rmdir(dir), 0);
}

/* --listen unix:PATH: kept whole, a path longer than sun_path refused,
 * a later HOST:PORT switches back to TCP; its port file says unix:PATH */
static void test_listen_unix(void **state)
{
    char longpath[160], longarg[170], dir[] = "/tmp/swfsim-pu.XXXXXX", path[64], line[64];
    const char *a1[] = {"--nodes", "2", "--listen", "unix:/x/swf.sock", NULL};
    const char *a2[] = {"--nodes",  "2",           "--listen", "unix:/x/swf.sock",
                        "--listen", "127.0.0.1:0", NULL};
    const char *bad1[] = {"--nodes", "2", "--listen", "unix:", NULL};
    const char *bad2[] = {"--nodes", "2", "--listen", longarg, NULL};
    swfsim_config_t cfg;
    FILE *f;

    (void) state;
    assert_int_equal(parse(&cfg, a1), 0);
    assert_string_equal(cfg.listen_unix, "/x/swf.sock");
    assert_int_equal(parse(&cfg, a2), 0);
    assert_string_equal(cfg.listen_unix, "");
    assert_string_equal(cfg.listen_host, "127.0.0.1");
    assert_int_equal(parse(&cfg, bad1), -1);
    memset(longpath, 'a', sizeof(longpath) - 1);
    longpath[0] = '/';
    longpath[sizeof(cfg.listen_unix)] = '\0'; /* one byte too many */
    snprintf(longarg, sizeof(longarg), "unix:%s", longpath);
    assert_int_equal(parse(&cfg, bad2), -1);
    longpath[sizeof(cfg.listen_unix) - 1] = '\0'; /* just fits */
    snprintf(longarg, sizeof(longarg), "unix:%s", longpath);
    assert_int_equal(parse(&cfg, bad2), 0);

    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/port", dir);
    assert_int_equal(swfsim_write_port_file_unix(path, "/x/swf.sock"), 0);
    f = fopen(path, "r");
    assert_non_null(f);
    assert_non_null(fgets(line, sizeof(line), f));
    fclose(f);
    assert_string_equal(line, "unix:/x/swf.sock\n");
    assert_int_equal(unlink(path), 0);
    assert_int_equal(rmdir(dir), 0);
}

static void test_histogram(void **state)
{
    swfsim_hist_t *h = calloc(1, sizeof(*h));

    (void) state;
    assert_non_null(h);
    assert_int_equal(swfsim_hist_pct(h, 50), 0);
    for (uint64_t v = 1; v <= 1000; v++) {
        swfsim_hist_add(h, v);
    }
    assert_int_equal(h->count, 1000);
    assert_int_equal(h->min, 1);
    assert_int_equal(h->max, 1000);
    /* within one bucket (12.5 %) above the true value */
    assert_in_range(swfsim_hist_pct(h, 50), 500, 563);
    assert_in_range(swfsim_hist_pct(h, 99), 990, 1000);
    assert_int_equal(swfsim_hist_pct(h, 100), 1000);
    assert_in_range(swfsim_hist_pct(h, 0.1), 1, 1);
    swfsim_hist_add(h, UINT64_MAX / 2);
    assert_true(swfsim_hist_pct(h, 100) == UINT64_MAX / 2);
    free(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults_and_options), cmocka_unit_test(test_rejects),
        cmocka_unit_test(test_config_file),          cmocka_unit_test(test_port_file),
        cmocka_unit_test(test_listen_unix),          cmocka_unit_test(test_histogram),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
