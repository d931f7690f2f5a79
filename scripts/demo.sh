#!/usr/bin/env bash
# demo.sh: run a real MPI program over every transport built in this tree
# (plus Open MPI's own vader and tcp for comparison) and print a small
# latency/bandwidth table. Expects a built tree (scripts/quickstart.sh demo
# does the setup). The SWORDFISH simulator is started by btl_swf itself.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"

built=()
for so in */.libs/mca_btl_*.so; do
    [ -e "$so" ] || continue
    name="$(basename "$so" .so)"
    built+=("${name#mca_btl_}")
done

btls="vader,tcp"
for b in "${built[@]}"; do
    btls="$btls,$b"
    # A component may ship extra configurations (e.g. swf-torus, an external
    # simulator in its timed torus mode).
    for conf in tests/btl.d/"$b"-*.conf; do
        [ -e "$conf" ] || continue
        btls="$btls,$(basename "$conf" .conf)"
    done
done

echo "transports built here: ${built[*]:-none}"
echo "running over: $btls"
echo

out="${DEMO_OUT:-demo-results}"
echo "== 1. a real MPI program (collectives with verified data) over each transport"
tests/mpi/run --btls "$btls" --np 2 --tests collectives
echo
echo "== 2. latency and bandwidth, side by side (results in $out/)"
bench/run --btls "$btls" --quick --out "$out"
