/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * swfsim_main.c: the swfsim program: parse the options, listen, run the
 * event loop until every node has finished, write the report.
 */

#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "swfsim.h"
#include "swfsim_trace.h"
#include "swfsim_workload.h"

/* A simulator started by a process of a job must not outlive it: the
 * death signal covers a parent that dies later, the parent check one
 * that died before the signal was set (then this process was re-parented
 * already). 0, or -1 when the parent is gone. */
static int swfsim_bind_to_parent(int parent)
{
    if (0 != prctl(PR_SET_PDEATHSIG, SIGTERM)) {
        swfsim_warn("cannot set the death signal");
    }
    if (getppid() != (pid_t) parent) {
        swfsim_warn("the process that started the simulator (pid %d) is gone; exiting", parent);
        return -1;
    }
    return 0;
}

/* Every CPU of the host: the launcher's core binding is not ours. */
static void swfsim_all_cpus(void)
{
    long ncpu = sysconf(_SC_NPROCESSORS_CONF);
    cpu_set_t set;

    CPU_ZERO(&set);
    for (long i = 0; i < ncpu && i < CPU_SETSIZE; i++) {
        CPU_SET((int) i, &set);
    }
    (void) sched_setaffinity(0, sizeof(set), &set);
}

int swfsim_main(int argc, char **argv)
{
    swfsim_config_t cfg;
    swfsim_t sim;
    int rc = swfsim_config_parse(&cfg, argc, argv);

    if (0 != rc) {
        return rc > 0 ? 0 : 1;
    }
    if (cfg.parent_pid > 0 && 0 != swfsim_bind_to_parent(cfg.parent_pid)) {
        return 1;
    }
    if (cfg.all_cpus) {
        swfsim_all_cpus();
    }
    if ('\0' != cfg.workload[0] || '\0' != cfg.replay_file[0]) {
        return swfsim_virtual_main(&cfg, argc, argv);
    }
    if (0 != swfsim_init(&sim, &cfg)) {
        swfsim_warn("cannot set up the simulation (out of memory or bad torus)");
        return 1;
    }
    if ('\0' != cfg.record_file[0] && 0 != swfsim_trace_open(&sim, cfg.record_file)) {
        swfsim_fini(&sim);
        return 1;
    }
    if (0 != swfsim_net_open(&sim)) {
        swfsim_trace_close(&sim);
        swfsim_fini(&sim);
        return 1;
    }
    rc = swfsim_net_run(&sim);
    if (0 != swfsim_trace_close(&sim) && 0 == rc) {
        rc = 1;
    }
    if (0 != swfsim_report_write(&sim) && 0 == rc) {
        rc = 1;
    }
    if ('\0' != cfg.report_html[0] && 0 != swfsim_report_html_write(&sim) && 0 == rc) {
        rc = 1;
    }
    swfsim_fini(&sim);
    if (0 != sim.held_bytes) {
        /* every message must have been freed exactly once */
        swfsim_warn("internal error: %llu message bytes unaccounted for",
                    (unsigned long long) sim.held_bytes);
        rc = 70;
    }
    return rc;
}
