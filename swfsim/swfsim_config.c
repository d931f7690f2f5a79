/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * swfsim_config.c: the simulator's settings: defaults, the command line
 * and the "key = value" configuration file (--config).  Command-line
 * options override the file whatever their order.
 */

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "swfsim.h"
#include "tc_config.h"

void swfsim_config_defaults(swfsim_config_t *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->model = SOCKMODEL_MODEL_SIMPEL;
    snprintf(cfg->listen_host, sizeof(cfg->listen_host), "127.0.0.1");
    cfg->listen_port = 0;
    cfg->max_msg = SOCKMODEL_MAX_MSG_DEFAULT;
    cfg->cycle_ps = 4000;        /* 4 ns, ATOLL's cycle */
    cfg->link_bw = 250000000ull; /* 250 MB/s */
    cfg->router_cycles = 16;
    cfg->header_bytes = 8;
    cfg->probe_cycles = 100;     /* the report's probe cost */
    cfg->mem_limit = 2ull << 30; /* 2 GiB of messages in flight */
    cfg->spin_us = 0;            /* sleep in epoll at once */
    cfg->max_joined = SWFSIM_MAX_JOINED_DEFAULT;
}

void swfsim_usage(FILE *out)
{
    fprintf(
        out,
        "usage: swfsim --nodes N [options]\n"
        "  SockModel network simulator (see docs/swfsim.md, docs/sockmodel.md)\n"
        "  -n, --nodes N          number of simulated nodes (1..%u), required\n"
        "  -m, --model M          simpel (no time, default) or torus\n"
        "  -l, --listen HOST:PORT listen address (default 127.0.0.1:0, 0 = any free port),\n"
        "                         or unix:PATH for a Unix-domain socket (mode 0600)\n"
        "  -p, --port-file FILE   write HOST:PORT (or unix:PATH) there once listening\n"
        "  -r, --report FILE      write the JSON report there at the end\n"
        "  -c, --config FILE      key = value settings (torus_x, torus_y, cycle_ns,\n"
        "                         link_mbps, router_cycles, header_bytes, probe_cycles,\n"
        "                         model, nodes, max_msg, mem_limit, listen, spin_us,\n"
        "                         max_joined)\n"
        "      --max-msg BYTES    largest message (default %u, at most %u)\n"
        "      --torus XxY        torus dimensions (default: smallest near-square)\n"
        "      --connect-timeout S  give up if the N nodes are not there after S seconds\n"
        "      --mem-limit BYTES  most message bytes held at once (default 2G); a SEND\n"
        "                         beyond it drops its sender\n"
        "      --max-joined N     nodes that may join the running simulation (a spawned\n"
        "                         job; simpel model only), beyond --nodes (default %u,\n"
        "                         at most %u; 0: none)\n"
        "      --spin-us US       when idle, poll the sockets this long (yielding the\n"
        "                         core) before sleeping: lower latency, more CPU (default 0)\n"
        "      --parent-pid PID   end when process PID (the parent) ends; exit at once\n"
        "                         if the parent is not PID any more (it already died)\n"
        "      --all-cpus         run on every CPU, whatever binding was inherited\n"
        "      --token-file FILE  accept only clients whose hello carries the job token\n"
        "                         in FILE (one line of 64 hex digits)\n"
        "      --workload SPEC    run virtual nodes instead of clients: halo2d, alltoall\n"
        "                         or allreduce, e.g. halo2d,size=64K,iters=100[,compute=CYC];\n"
        "                         --nodes defaults to the torus size\n"
        "      --record FILE      write a trace of the live run (operations, compute time)\n"
        "      --replay FILE      run a trace without clients; options override its parameters\n"
        "      --report-html FILE write the report as one self-contained HTML page\n"
        "  -q, --quiet            no progress messages, no summary on stdout\n"
        "  -h, --help             this text\n"
        "  -V, --version          version\n",
        SOCKMODEL_MAX_NODES, SOCKMODEL_MAX_MSG_DEFAULT, SOCKMODEL_MAX_MSG_LIMIT,
        SWFSIM_MAX_JOINED_DEFAULT, SOCKMODEL_MAX_NODES);
}

static int swfsim_parse_u64(const char *s, uint64_t *v)
{
    char *end;
    unsigned long long x;

    while (isspace((unsigned char) *s)) {
        s++;
    }
    if ('-' == *s || '\0' == *s) {
        return -1;
    }
    errno = 0;
    x = strtoull(s, &end, 0);
    if (0 != errno || end == s) {
        return -1;
    }
    /* allow k/K, m/M, g/G suffixes (powers of two) for sizes */
    switch (*end) {
    case 'k':
    case 'K':
        x <<= 10;
        end++;
        break;
    case 'm':
    case 'M':
        x <<= 20;
        end++;
        break;
    case 'g':
    case 'G':
        x <<= 30;
        end++;
        break;
    default:
        break;
    }
    while (isspace((unsigned char) *end)) {
        end++;
    }
    if ('\0' != *end) {
        return -1;
    }
    *v = x;
    return 0;
}

static int swfsim_parse_u32(const char *s, uint32_t *v, uint32_t lo, uint32_t hi)
{
    uint64_t x;

    if (0 != swfsim_parse_u64(s, &x) || x < lo || x > hi) {
        return -1;
    }
    *v = (uint32_t) x;
    return 0;
}

static int swfsim_parse_listen(swfsim_config_t *cfg, const char *s)
{
    const char *colon = strrchr(s, ':');
    uint32_t port;
    size_t hl;

    if (0 == strncmp(s, "unix:", 5)) {
        /* a Unix-domain stream socket: the path must fit sun_path */
        if ('\0' == s[5]) {
            return -1;
        }
        if (strlen(s + 5) >= sizeof(cfg->listen_unix)) {
            fprintf(stderr, "swfsim: the socket path %s is longer than %zu bytes\n", s + 5,
                    sizeof(cfg->listen_unix) - 1);
            return -1;
        }
        snprintf(cfg->listen_unix, sizeof(cfg->listen_unix), "%s", s + 5);
        return 0;
    }
    if (NULL == colon) {
        return -1;
    }
    hl = (size_t) (colon - s);
    if ('[' == s[0] && hl >= 2 && ']' == s[hl - 1]) { /* [::1]:port */
        s++;
        hl -= 2;
    }
    if (0 == hl || hl >= sizeof(cfg->listen_host) ||
        0 != swfsim_parse_u32(colon + 1, &port, 0, 65535)) {
        return -1;
    }
    memcpy(cfg->listen_host, s, hl);
    cfg->listen_host[hl] = '\0';
    cfg->listen_port = (uint16_t) port;
    cfg->listen_unix[0] = '\0';
    return 0;
}

static int swfsim_parse_dims(swfsim_config_t *cfg, const char *s)
{
    unsigned x, y;
    char c;

    if (2 != sscanf(s, "%ux%u%c", &x, &y, &c) || 0 == x || 0 == y ||
        (uint64_t) x * y > 4ull * SOCKMODEL_MAX_NODES) {
        return -1;
    }
    cfg->torus_x = x;
    cfg->torus_y = y;
    return 0;
}

int swfsim_config_set(swfsim_config_t *cfg, const char *key, const char *value)
{
    uint64_t v;

    if (0 == strcmp(key, "model")) {
        if (0 == strcmp(value, "simpel")) {
            cfg->model = SOCKMODEL_MODEL_SIMPEL;
        } else if (0 == strcmp(value, "torus")) {
            cfg->model = SOCKMODEL_MODEL_TORUS;
        } else {
            return -1;
        }
        return 0;
    }
    if (0 == strcmp(key, "nodes")) {
        return swfsim_parse_u32(value, &cfg->nodes, 1, SOCKMODEL_MAX_NODES);
    }
    if (0 == strcmp(key, "listen")) {
        return swfsim_parse_listen(cfg, value);
    }
    if (0 == strcmp(key, "max_msg")) {
        return swfsim_parse_u32(value, &cfg->max_msg, 0, SOCKMODEL_MAX_MSG_LIMIT);
    }
    if (0 == strcmp(key, "mem_limit")) {
        if (0 != swfsim_parse_u64(value, &v) || v < (1u << 20)) {
            return -1;
        }
        cfg->mem_limit = v;
        return 0;
    }
    if (0 == strcmp(key, "max_joined")) {
        return swfsim_parse_u32(value, &cfg->max_joined, 0, SOCKMODEL_MAX_NODES);
    }
    if (0 == strcmp(key, "spin_us")) {
        return swfsim_parse_u32(value, &cfg->spin_us, 0, 1000000);
    }
    if (0 == strcmp(key, "torus")) {
        return swfsim_parse_dims(cfg, value);
    }
    if (0 == strcmp(key, "torus_x")) {
        return swfsim_parse_u32(value, &cfg->torus_x, 1, 4 * SOCKMODEL_MAX_NODES);
    }
    if (0 == strcmp(key, "torus_y")) {
        return swfsim_parse_u32(value, &cfg->torus_y, 1, 4 * SOCKMODEL_MAX_NODES);
    }
    if (0 == strcmp(key, "cycle_ps")) {
        if (0 != swfsim_parse_u64(value, &v) || 0 == v || v > 1000000000ull) {
            return -1;
        }
        cfg->cycle_ps = v;
        return 0;
    }
    if (0 == strcmp(key, "cycle_ns")) {
        char *end;
        double d = strtod(value, &end);
        if (end == value || '\0' != *end || !(d > 0.0) || d > 1e6) {
            return -1;
        }
        cfg->cycle_ps = (uint64_t) (d * 1000.0 + 0.5);
        return cfg->cycle_ps ? 0 : -1;
    }
    if (0 == strcmp(key, "link_mbps")) { /* MB/s, 10^6 bytes */
        if (0 != swfsim_parse_u64(value, &v) || 0 == v || v > 1000000ull) {
            return -1;
        }
        cfg->link_bw = v * 1000000ull;
        return 0;
    }
    if (0 == strcmp(key, "link_bps")) { /* bytes per second */
        if (0 != swfsim_parse_u64(value, &v) || 0 == v) {
            return -1;
        }
        cfg->link_bw = v;
        return 0;
    }
    if (0 == strcmp(key, "router_cycles")) {
        return swfsim_parse_u32(value, &cfg->router_cycles, 0, 1000000);
    }
    if (0 == strcmp(key, "header_bytes")) {
        return swfsim_parse_u32(value, &cfg->header_bytes, 0, 65536);
    }
    if (0 == strcmp(key, "probe_cycles")) {
        return swfsim_parse_u32(value, &cfg->probe_cycles, 0, 1000000000);
    }
    return -1;
}

int swfsim_config_load(swfsim_config_t *cfg, const char *path)
{
    char line[1024];
    unsigned lineno = 0;
    FILE *f = fopen(path, "r");

    if (NULL == f) {
        fprintf(stderr, "swfsim: cannot open %s: %s\n", path, strerror(errno));
        return -1;
    }
    while (NULL != fgets(line, sizeof(line), f)) {
        char *p = line, *eq, *key, *val, *e;
        lineno++;
        if (NULL != (e = strchr(p, '#'))) {
            *e = '\0';
        }
        while (isspace((unsigned char) *p)) {
            p++;
        }
        if ('\0' == *p) {
            continue;
        }
        eq = strchr(p, '=');
        if (NULL == eq) {
            fprintf(stderr, "swfsim: %s:%u: expected key = value\n", path, lineno);
            fclose(f);
            return -1;
        }
        *eq = '\0';
        key = p;
        val = eq + 1;
        for (e = eq - 1; e >= key && isspace((unsigned char) *e); e--) {
            *e = '\0';
        }
        while (isspace((unsigned char) *val)) {
            val++;
        }
        for (e = val + strlen(val) - 1; e >= val && isspace((unsigned char) *e); e--) {
            *e = '\0';
        }
        if (0 != swfsim_config_set(cfg, key, val)) {
            fprintf(stderr, "swfsim: %s:%u: bad setting '%s = %s'\n", path, lineno, key, val);
            fclose(f);
            return -1;
        }
    }
    fclose(f);
    return 0;
}

enum {
    SWFSIM_OPT_MAXMSG = 256,
    SWFSIM_OPT_TORUS,
    SWFSIM_OPT_CTIMEOUT,
    SWFSIM_OPT_MEMLIMIT,
    SWFSIM_OPT_SPIN,
    SWFSIM_OPT_JOINED,
    SWFSIM_OPT_PARENT,
    SWFSIM_OPT_ALLCPUS,
    SWFSIM_OPT_TOKEN,
    SWFSIM_OPT_WORKLOAD,
    SWFSIM_OPT_REPLAY,
    SWFSIM_OPT_RECORD,
    SWFSIM_OPT_HTML
};

/* Read the job token from the first line of path; 0 or -1 (printed). */
static int swfsim_token_load(swfsim_config_t *cfg, const char *path)
{
    char line[2 * SOCKMODEL_TOKEN_BYTES + 8];
    FILE *f = fopen(path, "r");
    int ok;

    if (NULL == f) {
        swfsim_warn("cannot open the token file %s: %s", path, strerror(errno));
        return -1;
    }
    ok = NULL != fgets(line, sizeof(line), f) && 0 == tc_sockmodel_token_parse(line, cfg->token);
    fclose(f);
    if (!ok) {
        swfsim_warn("the token file %s does not hold one line of %u hex digits", path,
                    2u * SOCKMODEL_TOKEN_BYTES);
        return -1;
    }
    cfg->have_token = 1;
    return 0;
}

/* copy a file name option; nonzero if it does not fit */
static int swfsim_opt_path(char *dst, size_t n, const char *src)
{
    if (strlen(src) >= n || '\0' == src[0]) {
        return 1;
    }
    snprintf(dst, n, "%s", src);
    return 0;
}

static int swfsim_config_parse_args(swfsim_config_t *cfg, int argc, char **argv);

int swfsim_config_parse(swfsim_config_t *cfg, int argc, char **argv)
{
    swfsim_config_defaults(cfg);
    return swfsim_config_parse_args(cfg, argc, argv);
}

int swfsim_config_parse_over(swfsim_config_t *cfg, int argc, char **argv)
{
    return swfsim_config_parse_args(cfg, argc, argv);
}

static int swfsim_config_parse_args(swfsim_config_t *cfg, int argc, char **argv)
{
    static const struct option opts[] = {
        {"nodes", required_argument, NULL, 'n'},
        {"model", required_argument, NULL, 'm'},
        {"listen", required_argument, NULL, 'l'},
        {"port-file", required_argument, NULL, 'p'},
        {"report", required_argument, NULL, 'r'},
        {"config", required_argument, NULL, 'c'},
        {"max-msg", required_argument, NULL, SWFSIM_OPT_MAXMSG},
        {"torus", required_argument, NULL, SWFSIM_OPT_TORUS},
        {"connect-timeout", required_argument, NULL, SWFSIM_OPT_CTIMEOUT},
        {"mem-limit", required_argument, NULL, SWFSIM_OPT_MEMLIMIT},
        {"spin-us", required_argument, NULL, SWFSIM_OPT_SPIN},
        {"max-joined", required_argument, NULL, SWFSIM_OPT_JOINED},
        {"parent-pid", required_argument, NULL, SWFSIM_OPT_PARENT},
        {"all-cpus", no_argument, NULL, SWFSIM_OPT_ALLCPUS},
        {"token-file", required_argument, NULL, SWFSIM_OPT_TOKEN},
        {"workload", required_argument, NULL, SWFSIM_OPT_WORKLOAD},
        {"replay", required_argument, NULL, SWFSIM_OPT_REPLAY},
        {"record", required_argument, NULL, SWFSIM_OPT_RECORD},
        {"report-html", required_argument, NULL, SWFSIM_OPT_HTML},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0}};
    const char *shortopts = "n:m:l:p:r:c:qhV";
    int c, pass;

    /* pass 0: only --config, --help, --version; pass 1: the rest */
    for (pass = 0; pass < 2; pass++) {
        optind = 0; /* full re-initialisation in glibc */
        opterr = pass;
        while (-1 != (c = getopt_long(argc, argv, shortopts, opts, NULL))) {
            int bad = 0;
            if (0 == pass) {
                if ('c' == c && 0 != swfsim_config_load(cfg, optarg)) {
                    return -1;
                }
                if ('h' == c) {
                    swfsim_usage(stdout);
                    return 1;
                }
                if ('V' == c) {
                    printf("swfsim (%s) %s, SockModel protocol %d\n", PACKAGE_NAME, PACKAGE_VERSION,
                           SOCKMODEL_PROTOCOL_VERSION);
                    return 1;
                }
                continue;
            }
            switch (c) {
            case 'n':
                bad = swfsim_config_set(cfg, "nodes", optarg);
                break;
            case 'm':
                bad = swfsim_config_set(cfg, "model", optarg);
                break;
            case 'l':
                bad = swfsim_config_set(cfg, "listen", optarg);
                break;
            case 'p':
                bad = strlen(optarg) >= sizeof(cfg->port_file);
                if (!bad) {
                    snprintf(cfg->port_file, sizeof(cfg->port_file), "%s", optarg);
                }
                break;
            case 'r':
                bad = strlen(optarg) >= sizeof(cfg->report_file);
                if (!bad) {
                    snprintf(cfg->report_file, sizeof(cfg->report_file), "%s", optarg);
                }
                break;
            case 'c':
                break;
            case SWFSIM_OPT_MAXMSG:
                bad = swfsim_config_set(cfg, "max_msg", optarg);
                break;
            case SWFSIM_OPT_TORUS:
                bad = swfsim_config_set(cfg, "torus", optarg);
                break;
            case SWFSIM_OPT_MEMLIMIT:
                bad = swfsim_config_set(cfg, "mem_limit", optarg);
                break;
            case SWFSIM_OPT_SPIN:
                bad = swfsim_config_set(cfg, "spin_us", optarg);
                break;
            case SWFSIM_OPT_JOINED:
                bad = swfsim_config_set(cfg, "max_joined", optarg);
                break;
            case SWFSIM_OPT_WORKLOAD:
                bad = swfsim_opt_path(cfg->workload, sizeof(cfg->workload), optarg);
                break;
            case SWFSIM_OPT_REPLAY:
                bad = swfsim_opt_path(cfg->replay_file, sizeof(cfg->replay_file), optarg);
                break;
            case SWFSIM_OPT_RECORD:
                bad = swfsim_opt_path(cfg->record_file, sizeof(cfg->record_file), optarg);
                break;
            case SWFSIM_OPT_HTML:
                bad = swfsim_opt_path(cfg->report_html, sizeof(cfg->report_html), optarg);
                break;
            case SWFSIM_OPT_CTIMEOUT:
                bad = swfsim_parse_u32(optarg, &cfg->connect_timeout_s, 0, 86400);
                break;
            case SWFSIM_OPT_PARENT: {
                uint32_t pid = 0;

                bad = swfsim_parse_u32(optarg, &pid, 1, 0x7fffffff);
                cfg->parent_pid = (int) pid;
                break;
            }
            case SWFSIM_OPT_ALLCPUS:
                cfg->all_cpus = 1;
                break;
            case SWFSIM_OPT_TOKEN:
                if (0 != swfsim_token_load(cfg, optarg)) {
                    return -1;
                }
                break;
            case 'q':
                cfg->quiet = 1;
                break;
            default:
                swfsim_usage(stderr);
                return -1;
            }
            if (bad) {
                fprintf(stderr, "swfsim: bad value '%s' for an option (see --help)\n", optarg);
                return -1;
            }
        }
    }
    if (optind < argc) {
        fprintf(stderr, "swfsim: unexpected argument '%s'\n", argv[optind]);
        return -1;
    }
    if (0 == cfg->nodes && '\0' != cfg->workload[0] && cfg->torus_x && cfg->torus_y &&
        (uint64_t) cfg->torus_x * cfg->torus_y <= SOCKMODEL_MAX_NODES) {
        /* a workload fills its torus */
        cfg->nodes = cfg->torus_x * cfg->torus_y;
    }
    if (0 == cfg->nodes && '\0' != cfg->replay_file[0]) {
        return 0; /* the trace says how many */
    }
    if (0 == cfg->nodes) {
        fprintf(stderr, "swfsim: --nodes N is required (see --help)\n");
        return -1;
    }
    if (cfg->torus_x || cfg->torus_y) {
        if (0 == cfg->torus_x || 0 == cfg->torus_y ||
            (uint64_t) cfg->torus_x * cfg->torus_y < cfg->nodes) {
            fprintf(stderr, "swfsim: a %ux%u torus cannot hold %u nodes\n", cfg->torus_x,
                    cfg->torus_y, cfg->nodes);
            return -1;
        }
    }
    return 0;
}
