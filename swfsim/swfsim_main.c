/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * swfsim_main.c: the swfsim program: parse the options, listen, run the
 * event loop until every node has finished, write the report.
 */

#include <stdlib.h>

#include "swfsim.h"
#include "swfsim_trace.h"
#include "swfsim_workload.h"

int swfsim_main(int argc, char **argv)
{
    swfsim_config_t cfg;
    swfsim_t sim;
    int rc = swfsim_config_parse(&cfg, argc, argv);

    if (0 != rc) {
        return rc > 0 ? 0 : 1;
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
