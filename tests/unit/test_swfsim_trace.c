/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_swfsim_trace.c: --record and --replay.  Four real clients (forked
 * processes over TCP) run a torus job with compute time between their
 * operations, some sends contending for links, while the simulator
 * records; the trace replayed on the recorded parameters must end at the
 * recorded simulated end time (tolerance: 0.1 %, docs/swfsim.md; in
 * practice equal), with the same message count.  Replayed on a link of
 * half the bandwidth it must take longer.  Damaged traces are refused.
 */

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "test_swfsim_harness.h"
#include "swfsim_json.h"
#include "swfsim_trace.h"
#include "swfsim_workload.h"

#define NODES 4
#define ITERS 40

/* one client: send to r+1 (size varies) and r+2, receive from r-1 and
 * r-2 with blocking RECVFROM, compute between */
static int client(const char *hostport, uint32_t r)
{
    tc_sockmodel_client_t c;
    const char *why;
    static unsigned char buf[8192];
    tc_sockmodel_reply_t rep;

    if (0 != tc_sockmodel_client_connect(&c, hostport, r, NULL, &why)) {
        return 10;
    }
    memset(buf, (int) r, sizeof(buf));
    for (uint32_t it = 0; it < ITERS; it++) {
        uint32_t len1 = 500 + 97 * ((r + it) % 7), len2 = 3000 + 11 * r;
        if (0 !=
                tc_sockmodel_client_cmd(&c, SOCKMODEL_SEND, (r + 1) % NODES, it, len1,
                                        50 + 13 * r + it % 5, buf) ||
            0 != tc_sockmodel_client_cmd(&c, SOCKMODEL_SEND, (r + 2) % NODES, it, len2, 7, buf)) {
            return 11;
        }
        if (0 !=
                tc_sockmodel_client_cmd(&c, SOCKMODEL_RECVFROM, (r + NODES - 1) % NODES, 0, 0, 3,
                                        NULL) ||
            0 != tc_sockmodel_client_reply(&c, &rep, buf, sizeof(buf)) || rep.arg[1] != it) {
            return 12;
        }
        if (0 != tc_sockmodel_client_cmd(&c, SOCKMODEL_RECVFROM, (r + 2) % NODES, 0, 0, 0, NULL) ||
            0 != tc_sockmodel_client_reply(&c, &rep, buf, sizeof(buf)) || rep.arg[1] != it) {
            return 13;
        }
        if (0 == it % 10 &&
            0 != tc_sockmodel_client_cmd(&c, SOCKMODEL_CONSUMETIME, 1000 + r, 0, 0, 0, NULL)) {
            return 14;
        }
    }
    return 0 == tc_sockmodel_client_finish(&c) ? 0 : 15;
}

static uint64_t replay_end(const char *trace, uint64_t link_bw, uint64_t *rec_end, uint64_t *msgs)
{
    swfsim_config_t cfg;
    swfsim_vprog_array_t arr;
    swfsim_vprog_t p;
    swfsim_t sim;
    uint64_t end = 0;

    swfsim_config_defaults(&cfg);
    assert_int_equal(swfsim_trace_load(trace, &cfg, &arr, rec_end), 0);
    assert_int_equal(cfg.nodes, NODES);
    assert_int_equal(cfg.model, SOCKMODEL_MODEL_TORUS);
    if (link_bw) {
        cfg.link_bw = link_bw;
    }
    cfg.quiet = 1;
    assert_int_equal(swfsim_init(&sim, &cfg), 0);
    swfsim_vprog_array_prog(&arr, &p);
    assert_int_equal(swfsim_vrun(&sim, &p), 0);
    for (uint32_t r = 0; r < NODES; r++) {
        end = sim.nodes[r]->clock > end ? sim.nodes[r]->clock : end;
    }
    *msgs = sim.msgs_total;
    swfsim_fini(&sim);
    swfsim_vprog_array_fini(&arr);
    return end / SWFSIM_PS_PER_NS;
}

static void test_record_replay(void **state)
{
    sim_run_t s;
    char trace[160], err[128];
    pid_t kids[NODES];
    char *rep;
    swfsim_json_t *j;
    uint64_t live_end, rec_end = 0, end, slow, msgs;
    struct stat st;

    (void) state;
    sim_start(&s, NODES, "--model", "torus", "--record", "trace.tmp", NULL);
    snprintf(trace, sizeof(trace), "trace.tmp");
    for (uint32_t r = 0; r < NODES; r++) {
        kids[r] = fork();
        assert_true(kids[r] >= 0);
        if (0 == kids[r]) {
            alarm(60);
            _exit(client(s.hostport, r));
        }
    }
    for (uint32_t r = 0; r < NODES; r++) {
        int st2;
        assert_int_equal(waitpid(kids[r], &st2, 0), kids[r]);
        assert_true(WIFEXITED(st2));
        assert_int_equal(WEXITSTATUS(st2), 0);
    }
    assert_int_equal(sim_wait(&s), 0);
    rep = sim_report(&s);
    j = swfsim_json_parse(rep, strlen(rep), err, sizeof(err));
    assert_non_null(j);
    live_end = (uint64_t) swfsim_json_num(j, "sim_end_ns", 0);
    assert_true(swfsim_json_num(j, "messages", 0) == NODES * ITERS * 2);
    swfsim_json_free(j);
    free(rep);
    assert_int_equal(stat(trace, &st), 0);
    /* compact: a handful of bytes per operation */
    print_message("trace: %lld bytes for %d operations\n", (long long) st.st_size,
                  NODES * ITERS * 4);
    assert_true(st.st_size < NODES * ITERS * 4 * 12);

    end = replay_end(trace, 0, &rec_end, &msgs);
    print_message("live end %llu ns, recorded %llu ns, replay %llu ns\n",
                  (unsigned long long) live_end, (unsigned long long) rec_end,
                  (unsigned long long) end);
    assert_int_equal(rec_end, live_end);
    assert_int_equal(msgs, NODES * ITERS * 2);
    assert_true(end * 1000 >= live_end * 999 && end * 1000 <= live_end * 1001);
    /* half the link bandwidth: slower */
    slow = replay_end(trace, 125000000ull, &rec_end, &msgs);
    print_message("replay at 125 MB/s: %llu ns\n", (unsigned long long) slow);
    assert_true(slow > end);
    unlink(trace);
    sim_cleanup(&s);
}

static void write_file(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(p, 1, n, f), n);
    fclose(f);
}

/* damaged traces: every one refused with a message, no crash */
static void test_bad_traces(void **state)
{
    static const unsigned char hdr[] = {'S', 'W', 'F',  'T',  'R',  'A',  'C',  'E',  1,  4, 1,
                                        2,   2,   0xa0, 0x1f, 0x80, 0xe5, 0x9a, 0x77, 16, 8, 100};
    unsigned char buf[128];
    swfsim_config_t cfg;
    swfsim_vprog_array_t arr;
    uint64_t end;
    size_t n = sizeof(hdr);
    const char *path = "bad-trace.tmp";

    (void) state;
    memcpy(buf, hdr, n);
    /* a good one: SEND 0 -> 1, RECV at 1, end */
    buf[n++] = SWFSIM_TR_SEND;
    buf[n++] = 0;
    buf[n++] = 0;
    buf[n++] = 1;
    buf[n++] = 0;
    buf[n++] = 10;
    buf[n++] = SWFSIM_TR_RECV;
    buf[n++] = 1;
    buf[n++] = 0;
    buf[n++] = 0;
    buf[n++] = 0;
    buf[n++] = SWFSIM_TR_END;
    buf[n++] = 5;
    buf[n++] = 1;
    buf[n++] = 2;
    swfsim_config_defaults(&cfg);
    write_file(path, buf, n);
    assert_int_equal(swfsim_trace_load(path, &cfg, &arr, &end), 0);
    assert_int_equal(arr.count[0], 1);
    assert_int_equal(arr.count[1], 1);
    assert_int_equal(end, 5);
    swfsim_vprog_array_fini(&arr);
    /* every truncation is refused */
    for (size_t k = 0; k < n; k++) {
        write_file(path, buf, k);
        assert_int_equal(swfsim_trace_load(path, &cfg, &arr, &end), -1);
    }
    /* a destination beyond the nodes */
    buf[sizeof(hdr) + 3] = 9;
    write_file(path, buf, n);
    assert_int_equal(swfsim_trace_load(path, &cfg, &arr, &end), -1);
    buf[sizeof(hdr) + 3] = 1;
    /* a node beyond the nodes */
    buf[sizeof(hdr) + 1] = 4;
    write_file(path, buf, n);
    assert_int_equal(swfsim_trace_load(path, &cfg, &arr, &end), -1);
    buf[sizeof(hdr) + 1] = 0;
    /* an unknown record */
    buf[sizeof(hdr)] = 9;
    write_file(path, buf, n);
    assert_int_equal(swfsim_trace_load(path, &cfg, &arr, &end), -1);
    buf[sizeof(hdr)] = SWFSIM_TR_SEND;
    /* a varint that never ends */
    memset(buf + sizeof(hdr) + 2, 0xff, 12);
    write_file(path, buf, sizeof(hdr) + 14);
    assert_int_equal(swfsim_trace_load(path, &cfg, &arr, &end), -1);
    /* nodes = 0, wrong magic */
    memcpy(buf, hdr, sizeof(hdr));
    buf[9] = 0;
    write_file(path, buf, sizeof(hdr));
    assert_int_equal(swfsim_trace_load(path, &cfg, &arr, &end), -1);
    buf[0] = 'X';
    write_file(path, buf, sizeof(hdr));
    assert_int_equal(swfsim_trace_load(path, &cfg, &arr, &end), -1);
    assert_int_equal(swfsim_trace_load("/nonexistent/trace", &cfg, &arr, &end), -1);
    unlink(path);
}

/* a recorded workload replays to the same end time and event count */
static void test_workload_replay(void **state)
{
    static const char *const specs[] = {"halo2d,size=4K,iters=20,compute=300",
                                        "alltoall,size=3000,iters=2", "allreduce,size=64K"};
    (void) state;
    for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
        swfsim_config_t cfg;
        swfsim_workload_t w;
        swfsim_vprog_t p;
        swfsim_vprog_array_t arr;
        swfsim_t sim;
        uint64_t end_w = 0, end_r = 0, rec_end = 0, ev_w;

        swfsim_config_defaults(&cfg);
        cfg.model = SOCKMODEL_MODEL_TORUS;
        cfg.nodes = 16;
        cfg.torus_x = cfg.torus_y = 4;
        assert_int_equal(swfsim_workload_parse(&w, specs[i]), 0);
        assert_int_equal(swfsim_workload_prog(&w, &cfg, &p), 0);
        assert_int_equal(swfsim_init(&sim, &cfg), 0);
        assert_int_equal(swfsim_trace_open(&sim, "wl-trace.tmp"), 0);
        assert_int_equal(swfsim_vrun(&sim, &p), 0);
        assert_int_equal(swfsim_trace_close(&sim), 0);
        for (uint32_t r = 0; r < 16; r++) {
            end_w = sim.nodes[r]->clock > end_w ? sim.nodes[r]->clock : end_w;
        }
        ev_w = sim.events;
        swfsim_fini(&sim);

        swfsim_config_defaults(&cfg);
        assert_int_equal(swfsim_trace_load("wl-trace.tmp", &cfg, &arr, &rec_end), 0);
        assert_int_equal(rec_end, end_w / SWFSIM_PS_PER_NS);
        assert_int_equal(swfsim_init(&sim, &cfg), 0);
        swfsim_vprog_array_prog(&arr, &p);
        assert_int_equal(swfsim_vrun(&sim, &p), 0);
        for (uint32_t r = 0; r < 16; r++) {
            end_r = sim.nodes[r]->clock > end_r ? sim.nodes[r]->clock : end_r;
        }
        assert_int_equal(end_r, end_w);
        assert_int_equal(sim.events, ev_w);
        swfsim_fini(&sim);
        swfsim_vprog_array_fini(&arr);
        unlink("wl-trace.tmp");
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_record_replay),
        cmocka_unit_test(test_workload_replay),
        cmocka_unit_test(test_bad_traces),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
