#!/usr/bin/env bash
# plot.sh: draws latency and bandwidth against message size (log-log, one
# line per transport) from results.csv, as PNG and SVG, for bench/run.
# Usage: plot.sh DIR BTL...
# Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause
set -eu

dir="$1"
shift
csv="$dir/results.csv"
[ -f "$csv" ] || { echo "plot.sh: $csv not found" >&2; exit 1; }

# One plot clause per transport; the size-0 row has no place on a log axis.
clauses() {
    local column="$1" sep="" b
    shift
    for b in "$@"; do
        printf '%s"%s" using (strcol(1) eq "%s" && $2 > 0 ? $2 : 1/0):%s with linespoints title "%s"' \
            "$sep" "$csv" "$b" "$column" "$b"
        sep=", "
    done
}

host="$(uname -n)"
when="$(date '+%Y-%m-%d %H:%M')"
for term in png svg; do
    if [ "$term" = png ]; then
        setterm='set terminal pngcairo size 1000,650 font "DejaVu Sans,11"'
        gnuplot -e 'set terminal pngcairo' >/dev/null 2>&1 ||
            setterm='set terminal png size 1000,650'
    else
        setterm='set terminal svg size 1000,650 dynamic font "DejaVu Sans,11"'
    fi
    gnuplot <<GP
$setterm
set datafile separator ","
set key top left box opaque
set grid xtics ytics mxtics mytics lc rgb "#dddddd"
set logscale xy 2
set xtics 4
set format x "%.0b%B"
set xlabel "message size (bytes)"
set style data linespoints
set pointsize 0.8

set output "$dir/latency.$term"
set title "Ping-pong latency (half round trip), $host, $when"
set logscale y 10
set format y "%g"
set ylabel "latency (us), lower is better"
plot $(clauses 3 "$@")

set output "$dir/bandwidth.$term"
set title "Streaming bandwidth (window of 64), $host, $when"
set key top left
set ylabel "bandwidth (MB/s), higher is better"
plot $(clauses 4 "$@")
GP
done
