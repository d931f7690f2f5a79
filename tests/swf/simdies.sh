#!/usr/bin/env bash
# tests/swf/simdies.sh: the simulator dies under a running MPI job over
# btl_swf; the job must end on its own with a non-zero status and the
# swf BTL's clear error, and leave no process behind.
#
# Usage: tests/swf/simdies.sh [--timeout S]
#
# Two cases, each a 2-rank endless ping-pong (swf_endless.c, compiled here
# with mpicc):
#   private   the job's own simulator (started by local rank 0) is killed
#   external  a simulator started by this script (btl_swf_server) is killed
# The build tree is this script's tree or $TRANSPORTS_BUILDDIR. Prints
# PASS/FAIL per case and "N passed, N failed"; exit status 0 when all pass.

# Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause
set -u

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../lib/transports.sh
. "$here/../lib/transports.sh"
# shellcheck source=swf_lib.sh
. "$here/swf_lib.sh"

timeout_s=120
while [ $# -gt 0 ]; do
    case "$1" in
        --timeout) timeout_s="${2:?--timeout needs seconds}"; shift 2 ;;
        --timeout=*) timeout_s="${1#*=}"; shift ;;
        -h|--help) sed -n '2,/^$/s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"; exit 0 ;;
        *) echo "simdies: unknown argument '$1'" >&2; exit 2 ;;
    esac
done

trap 'tr_cleanup' EXIT
trap 'exit 130' INT TERM
tr_init "$here"

swf_require_built
prog="$TR_TMPDIR/swf_endless"
mpicc -O2 -o "$prog" "$here/swf_endless.c" || tr_die "cannot compile swf_endless.c"

passed=0
failed=0

# wait_for FILE PATTERN SECONDS: poll until PATTERN appears in FILE.
wait_for() {
    local file="$1" pattern="$2" limit="$3" i=0

    while [ "$i" -lt $((limit * 10)) ]; do
        grep -q "$pattern" "$file" 2>/dev/null && return 0
        sleep 0.1
        i=$((i + 1))
    done
    return 1
}

# run_case NAME SIMPID_SOURCE MCA...: start the job, kill the simulator once
# traffic flows, check how the job ends.
run_case() {
    local name="$1" ext_pid="$2" log rc pid0 simpid verdict reason jobpid
    shift 2

    log="$TR_TMPDIR/$name.log"
    tr_mpirun_args 2
    timeout -k 10 "$timeout_s" "${TR_MPIRUN[@]}" "$@" "$prog" </dev/null >"$log" 2>&1 &
    jobpid=$!
    verdict=FAIL
    if ! wait_for "$log" "^ENDLESS running rank=0" "$timeout_s"; then
        reason="the job never started (see below)"
        kill -TERM "$jobpid" 2>/dev/null
    else
        if [ -n "$ext_pid" ]; then
            simpid="$ext_pid"
        else
            pid0="$(sed -n 's/^ENDLESS running rank=0 pid=\([0-9]*\).*/\1/p' "$log" | head -n 1)"
            simpid="$(pgrep -P "$pid0" -x swfsim | head -n 1)"
        fi
        if [ -z "$simpid" ]; then
            reason="no simulator process found"
            kill -TERM "$jobpid" 2>/dev/null
        else
            kill -KILL "$simpid"
        fi
    fi
    wait "$jobpid"
    rc=$?
    if [ -z "${reason:-}" ]; then
        if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
            reason="the job hung after the simulator died (timeout)"
        elif [ "$rc" = 0 ]; then
            reason="mpirun exited 0 although the simulator died"
        elif ! grep -q "lost its SockModel simulator" "$log"; then
            reason="exit $rc without the swf BTL's error message"
        elif pgrep -f -x "$prog( .*)?" >/dev/null 2>&1; then
            reason="ranks left behind"
            pkill -KILL -f -x "$prog( .*)?"
        else
            verdict=PASS
            reason="job ended with exit $rc and the swf error"
        fi
    fi
    printf '%s  simdies %-9s %s\n' "$verdict" "$name" "$reason"
    if [ "$verdict" = PASS ]; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        tail -n 30 "$log" | sed 's/^/    | /'
    fi
    reason=""
}

BTL_SELECT=swf
BTL_MCA_ARGS=()

# 1. the private simulator of the job
run_case private "" --mca btl_swf_simulator "$swfsim"

# 2. an external simulator
portfile="$TR_TMPDIR/ext.port"
"$swfsim" --nodes 2 --listen 127.0.0.1:0 --port-file "$portfile" --quiet \
    >"$TR_TMPDIR/ext-sim.log" 2>&1 &
simpid=$!
if ! wait_for "$portfile" ":" 30; then
    echo "FAIL  simdies external  the simulator did not write its port file"
    sed 's/^/    | /' "$TR_TMPDIR/ext-sim.log"
    kill -KILL "$simpid" 2>/dev/null
    failed=$((failed + 1))
else
    port="$(sed -n '1s/.*:\([0-9]*\).*/\1/p' "$portfile")"
    [ -z "$port" ] && port="$(head -n 1 "$portfile")"
    run_case external "$simpid" --mca btl_swf_server "127.0.0.1:$port"
    wait "$simpid" 2>/dev/null
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
