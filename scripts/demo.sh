#!/usr/bin/env bash
# demo.sh: run a real MPI program over every transport built in this tree
# (plus Open MPI's own vader and tcp for comparison) and print a small
# latency/bandwidth table. Expects a built tree (scripts/quickstart.sh demo
# does the setup). The SWORDFISH simulator is started by btl_swf itself.
# Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"

# Both runners default to vader, tcp, every BTL built in this tree and the
# extra configurations those components ship (tests/btl.d/NAME-*.conf, e.g.
# swf-torus); each prints the list it uses.
out="${DEMO_OUT:-demo-results}"
echo "== 1. a real MPI program (collectives with verified data) over each transport"
tests/mpi/run --np 2 --tests collectives
echo
echo "== 2. MPI one-sided communication (every op and sync mode, verified) over each"
echo "      transport; Open MPI picks the osc component (osc_hybrid where osc/rdma cannot)"
tests/mpi/run --np 2 --tests rma_ops
echo
echo "== 3. latency and bandwidth, side by side (results in $out/)"
bench/run --quick --out "$out"
echo
echo "== 4. the collectives on a simulated 2x2 torus (btl_swf), as an HTML report"
tests/swfsim/torus_report.sh --out "$out"
