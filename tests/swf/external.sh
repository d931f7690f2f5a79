#!/usr/bin/env bash
# tests/swf/external.sh: btl_swf against an external simulator: one
# `swfsim --model MODEL` started here for each job, the job pointed at it
# with btl_swf_server. Runs the MPI test programs, Debian's NetPIPE
# (NPopenmpi) and a timed all-to-all, and checks that every simulator run
# ended cleanly (status 0, status "ok" in its JSON report).
#
# Usage: tests/swf/external.sh [--model torus|simpel] [--np N] [--tests LIST]
#                              [--netpipe-max BYTES] [--no-netpipe]
#                              [--alltoall BYTES,ROUNDS] [--timeout S]
#                              [--keep DIR]
#
#   --model     simulator model (default torus)
#   --np        ranks for the MPI tests and the all-to-all (default 4)
#   --tests     MPI test programs of tests/mpi (default: all but killpeer)
#   --netpipe-max  largest NetPIPE message (default 1048576, or
#               $SWF_NETPIPE_MAX); NetPIPE runs with 2 ranks over both models
#   --alltoall  all-to-all size per pair and rounds (default 1024,200)
#   --keep DIR  keep the logs and the simulators' JSON reports there
# Also runs swf_threads.c (4 threads per rank, MPI_THREAD_MULTIPLE, 2 ranks).
# Prints PASS/FAIL lines, the NetPIPE latency and bandwidth, the all-to-all's
# wall time per simulated second, then "N passed, N failed".

# Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause
set -u

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../lib/transports.sh
. "$here/../lib/transports.sh"
# shellcheck source=swf_lib.sh
. "$here/swf_lib.sh"

model=torus
np=4
tests="pingpong order fanin manyreq probe datatypes collectives"
netpipe_max="${SWF_NETPIPE_MAX:-1048576}"
netpipe=1
alltoall="1024,200"
timeout_s=600
keep=""

while [ $# -gt 0 ]; do
    case "$1" in
        --model) model="${2:?}"; shift 2 ;;
        --np) np="${2:?}"; shift 2 ;;
        --tests) tests="$(echo "${2:?}" | tr ',' ' ')"; shift 2 ;;
        --netpipe-max) netpipe_max="${2:?}"; shift 2 ;;
        --no-netpipe) netpipe=0; shift ;;
        --alltoall) alltoall="${2:?}"; shift 2 ;;
        --timeout) timeout_s="${2:?}"; shift 2 ;;
        --keep) keep="${2:?}"; shift 2 ;;
        -h|--help) sed -n '2,/^$/s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"; exit 0 ;;
        *) echo "external: unknown argument '$1'" >&2; exit 2 ;;
    esac
done

trap 'stop_sim; tr_cleanup' EXIT
trap 'exit 130' INT TERM
tr_init "$here"

swf_require_built
out="$TR_TMPDIR/out"
if [ -n "$keep" ]; then
    mkdir -p "$keep" || tr_die "cannot create $keep"
    out="$(cd "$keep" && pwd)"
fi
mkdir -p "$out"
# the MPI test programs live in the build tree; build them if needed
for t in $tests; do
    if [ ! -x "$TR_BUILDDIR/tests/mpi/t_$t" ]; then
        make -s -C "$TR_BUILDDIR/tests/mpi" mpi-progs >"$TR_TMPDIR/build.log" 2>&1 ||
            { cat "$TR_TMPDIR/build.log"; tr_die "building the MPI test programs failed"; }
        break
    fi
done
a2a="$TR_TMPDIR/swf_alltoall"
mpicc -O2 -o "$a2a" "$here/swf_alltoall.c" || tr_die "cannot compile swf_alltoall.c"
thr="$TR_TMPDIR/swf_threads"
mpicc -O2 -o "$thr" "$here/swf_threads.c" -lpthread || tr_die "cannot compile swf_threads.c"
intruder="$TR_TMPDIR/swf_intruder"
cc -O2 -I"$TR_SRCDIR/common" -o "$intruder" "$here/swf_intruder.c" \
    "$TR_SRCDIR"/common/tc_sockmodel_*.c || tr_die "cannot compile swf_intruder.c"

BTL_SELECT=swf
BTL_MCA_ARGS=()
passed=0
failed=0
sim_pid=""
sim_port=""

stop_sim() {
    if [ -n "$sim_pid" ]; then
        kill -TERM "$sim_pid" 2>/dev/null
        wait "$sim_pid" 2>/dev/null
        sim_pid=""
    fi
}

# start_sim NAME NODES MODEL [SIM_NODES]: an external simulator for one
# job (with SIM_NODES > NODES, nodes beyond the job's are left to others).
start_sim() {
    local name="$1" nodes="${4:-$2}" m="$3" portfile="$TR_TMPDIR/$1.port" i

    rm -f "$portfile"
    "$swfsim" --nodes "$nodes" --model "$m" --listen 127.0.0.1:0 --port-file "$portfile" \
        --report "$out/$name.json" >"$out/$name.sim.log" 2>&1 &
    sim_pid=$!
    for i in $(seq 1 300); do
        [ -s "$portfile" ] && break
        sleep 0.1
    done
    sim_port="$(sed -n '1s/.*:\([0-9][0-9]*\).*/\1/p' "$portfile" 2>/dev/null)"
    [ -n "$sim_port" ]
}

# finish_sim NAME: the simulator must end by itself with status 0; on
# failure the reason is left in $sim_why. Call it in this shell, never in
# $(...): a subshell cannot `wait` for the simulator (not its child), and
# bash then reports -1 whenever the simulator was still exiting at the fork.
sim_why=""
finish_sim() {
    local name="$1" rc i

    for i in $(seq 1 300); do
        kill -0 "$sim_pid" 2>/dev/null || break
        sleep 0.1
    done
    sim_why=""
    if kill -0 "$sim_pid" 2>/dev/null; then
        stop_sim
        sim_why="simulator did not exit after the job"
        return 1
    fi
    wait "$sim_pid"
    rc=$?
    sim_pid=""
    if [ "$rc" -ne 0 ]; then
        sim_why="simulator exit status $rc"
        return 1
    fi
    grep -q '"status": "ok"' "$out/$name.json" || { sim_why="report status not ok"; return 1; }
    return 0
}

# json_num FILE KEY: a top-level number from a report.
json_num() {
    sed -n "s/^  \"$2\": \([0-9.]*\),*$/\1/p" "$1" | head -n 1
}

verdict() {
    local v="$1" what="$2" why="$3" log="$4"

    printf '%s  %-34s %s\n' "$v" "$what" "$why"
    if [ "$v" = PASS ]; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        [ -f "$log" ] && tail -n 20 "$log" | sed 's/^/    | /'
    fi
}

# run_job NAME NODES MODEL PASSPATTERN PROG ARGS...: one job on its own simulator.
run_job() {
    local name="$1" nodes="$2" m="$3" pat="$4" log rc
    shift 4

    log="$out/$name.log"
    if ! start_sim "$name" "$nodes" "$m"; then
        verdict FAIL "$name" "the simulator did not start" "$out/$name.sim.log"
        stop_sim
        return 1
    fi
    tr_mpirun_args "$nodes"
    timeout -k 10 "$timeout_s" "${TR_MPIRUN[@]}" --mca btl_swf_server "127.0.0.1:$sim_port" \
        "$@" </dev/null >"$log" 2>&1
    rc=$?
    if ! finish_sim "$name"; then
        verdict FAIL "$name" "$sim_why" "$out/$name.sim.log"
        return 1
    fi
    if [ "$rc" -ne 0 ]; then
        verdict FAIL "$name" "exit $rc" "$log"
        return 1
    fi
    if ! grep -q "$pat" "$log"; then
        verdict FAIL "$name" "no result line" "$log"
        return 1
    fi
    verdict PASS "$name" "simulated $(json_num "$out/$name.json" sim_end_ns) ns in $(json_num "$out/$name.json" wall_run_seconds) s" "$log"
    return 0
}

echo "external $model simulator, np=$np; logs and reports: ${keep:-(temporary)}"
for t in $tests; do
    run_job "$model-np$np-$t" "$np" "$model" "^PASS $t:" "$TR_BUILDDIR/tests/mpi/t_$t"
done

# a node of the simulator that is not a process of the job sends messages
# with btl_swf's marker and ob1's tags: every rank drops and counts them
name="simpel-np2-foreign"
if start_sim "$name" 2 simpel 3; then
    "$intruder" "127.0.0.1:$sim_port" 2 2 25 >"$out/$name.intruder.log" 2>&1 &
    intruder_pid=$!
    tr_mpirun_args 2
    timeout -k 10 "$timeout_s" "${TR_MPIRUN[@]}" --mca btl_swf_server "127.0.0.1:$sim_port" \
        --mca btl_swf_verbose 5 "$TR_BUILDDIR/tests/mpi/t_pingpong" </dev/null \
        >"$out/$name.log" 2>&1
    rc=$?
    wait "$intruder_pid"
    irc=$?
    finish_sim "$name" || rc=99
    dropped="$(sed -n 's/.*; \([0-9][0-9]*\) messages from nodes outside the job dropped.*/\1/p' \
        "$out/$name.log" | awk '{ s += $1 } END { print s + 0 }')"
    if [ "$rc" -ne 0 ] || [ "$irc" -ne 0 ] || ! grep -q "^PASS pingpong:" "$out/$name.log"; then
        verdict FAIL "$name" "exit $rc, intruder $irc $sim_why" "$out/$name.log"
    elif [ "$dropped" -ne 50 ]; then
        verdict FAIL "$name" "dropped $dropped of the intruder's 50 messages" "$out/$name.log"
    else
        verdict PASS "$name" "the job's data intact, all 50 foreign messages dropped" ""
    fi
else
    verdict FAIL "$name" "the simulator did not start" "$out/$name.sim.log"
    stop_sim
fi

# several threads share one connection (MPI_THREAD_MULTIPLE)
run_job "$model-np2-threads" 2 "$model" "^PASS threads:" "$thr"

# NetPIPE, as the SWORDFISH report ran it, over both models
if [ "$netpipe" -eq 1 ]; then
    if ! command -v NPopenmpi >/dev/null 2>&1; then
        verdict FAIL "netpipe" "NPopenmpi not installed (package netpipe-openmpi)" ""
    else
        for m in simpel torus; do
            name="netpipe-$m"
            if run_job "$name" 2 "$m" "bytes" NPopenmpi -u "$netpipe_max" -o "$out/$name.np"; then
                awk -v m="$m" '$2 > bw {bw = $2} $1 == 8 {l8 = $3 * 1e6}
                    END {printf "    netpipe %s: 8 B one-way %.1f us, peak %.1f Mbps\n", m, l8, bw}' \
                    "$out/$name.np"
            fi
        done
    fi
fi

# the torus timing note: wall time per simulated second of an all-to-all
bytes="${alltoall%,*}"
rounds="${alltoall#*,}"
name="alltoall-$model-np$np"
if run_job "$name" "$np" "$model" "^PASS alltoall:" "$a2a" "$bytes" "$rounds"; then
    awk -v w="$(json_num "$out/$name.json" wall_run_seconds)" \
        -v s="$(json_num "$out/$name.json" sim_end_ns)" -v b="$bytes" -v r="$rounds" -v n="$np" \
        'BEGIN { if (s > 0) printf "    all-to-all np=%d %d B x %d rounds: %.6f simulated s in %.3f wall s: one simulated second takes %.1f wall seconds\n", n, b, r, s / 1e9, w, w / (s / 1e9) }'
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
