#!/usr/bin/env bash
# tests/swfsim/torus_report.sh: one MPI job (tests/mpi's collectives, 4
# ranks) over btl_swf on the simulated torus (the job's private
# simulator, btl_swf_model torus), with the simulator's JSON report and
# its HTML page (swfsim-report).
#
# Usage: tests/swfsim/torus_report.sh [--np N] [--out DIR]
#
# Writes DIR/torus.json and DIR/torus.html (DIR defaults to
# demo-results) and prints the page's path. Exit status 0 on success.

# Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause
set -u

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../lib/transports.sh
. "$here/../lib/transports.sh"

np=4 out=demo-results
while [ $# -gt 0 ]; do
    case "$1" in
        --np) np="${2:?--np needs N}"; shift 2 ;;
        --out) out="${2:?--out needs a directory}"; shift 2 ;;
        -h|--help) sed -n '2,/^$/s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"; exit 0 ;;
        *) echo "torus_report: unknown argument '$1'" >&2; exit 2 ;;
    esac
done

trap 'tr_cleanup' EXIT
trap 'exit 130' INT TERM
tr_init "$here"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
prog="$TR_BUILDDIR/tests/mpi/t_collectives"
if [ ! -x "$prog" ]; then
    make -s -C "$TR_BUILDDIR/tests/mpi" mpi-progs >/dev/null || tr_die "cannot build tests/mpi"
fi
[ -x "$TR_BUILDDIR/swfsim/swfsim-report" ] || tr_die "swfsim-report is not built"
tr_load_btl swf-torus
BTL_MCA_ARGS+=(--mca btl_swf_simulator_report "$out/torus.json")
tr_mpirun_args "$np"
rm -f "$out/torus.json" "$out/torus.html"
if ! timeout 300 "${TR_MPIRUN[@]}" "$prog" >"$out/torus.log" 2>&1; then
    tail -n 20 "$out/torus.log" >&2
    tr_die "the torus job failed (log: $out/torus.log)"
fi
[ -s "$out/torus.json" ] || tr_die "the simulator wrote no report"
"$TR_BUILDDIR/swfsim/swfsim-report" "$out/torus.json" -o "$out/torus.html" ||
    tr_die "swfsim-report failed"
echo "torus report: $out/torus.html"
