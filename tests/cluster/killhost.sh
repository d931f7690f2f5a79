#!/usr/bin/env bash
# tests/cluster/killhost.sh: a host whose ranks all die ends the job.
#
# Across the fake hosts of scripts/cluster.sh (2 hosts, ranks by node), a
# ring of t_killpeer (TRANSPORTS_KILLPEER_EXTERNAL=1: nobody kills himself)
# runs over the transport; once traffic flows, every rank on the last host
# is SIGKILLed. Pass: the job ends within 60 s of the kill with a non-zero
# exit, and afterwards no host holds anything in its /dev/shm or in its
# Open MPI session directory.
#
# Usage: tests/cluster/killhost.sh [--btl tcp|sctp|...] [--hosts N] [--np NP]
# Uses the cluster $TC_CLUSTER (default tc) when it is up, else brings one
# up and takes it down at exit. Needs root; skips (exit 77) otherwise.

# Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../lib/transports.sh
. "$here/../lib/transports.sh"

btl=tcp
hosts=2
np=""
while [ $# -gt 0 ]; do
    case "$1" in
        --btl) btl="$2"; shift 2 ;;
        --hosts) hosts="$2"; shift 2 ;;
        --np) np="$2"; shift 2 ;;
        *) echo "usage: $0 [--btl NAME] [--hosts N] [--np NP]" >&2; exit 2 ;;
    esac
done
[ -n "$np" ] || np=$((2 * hosts))
[ "$(id -u)" -eq 0 ] || { echo "SKIP killhost: needs root (network namespaces)"; exit 77; }

job=""
on_exit() {
    [ -n "$job" ] && kill "$job" 2>/dev/null && wait "$job" 2>/dev/null
    tr_cluster_release
    tr_cleanup
}
trap on_exit EXIT
trap 'exit 130' INT TERM

tr_init "$here/../mpi"
tr_cluster_init "$hosts" || tr_die "cannot bring up the cluster"
cl=(bash "$TR_CLUSTER_SH")
state="/run/tc-cluster/${TC_CLUSTER:-tc}"
prog="$TR_BUILDDIR/tests/mpi/t_killpeer"
[ -x "$prog" ] || make -s -C "$TR_BUILDDIR/tests/mpi" t_killpeer >/dev/null ||
    tr_die "cannot build t_killpeer"
tr_load_btl "$btl"
btl_setup > "$BTL_TMPDIR/setup.log" 2>&1 || { cat "$BTL_TMPDIR/setup.log"; tr_die "btl_setup of $btl failed"; }
tr_mpirun_args "$np"
out="$TR_TMPDIR/out"
victim="h$hosts"

# leftovers: every file in a host's /dev/shm or session directory
leftovers() {
    local i
    for ((i = 1; i <= hosts; i++)); do
        "${cl[@]}" exec "h$i" find /dev/shm "$state/tmp" -mindepth 1 2>/dev/null | sed "s/^/h$i: /"
    done
}
before="$(leftovers)"
[ -z "$before" ] || echo "killhost: the hosts hold files before the job (not counted):"$'\n'"$before"

TRANSPORTS_KILLPEER_EXTERNAL=1 timeout -k 10 300 "${TR_MPIRUN[@]}" -x TRANSPORTS_KILLPEER_EXTERNAL "$prog" \
    </dev/null >"$out" 2>&1 &
job=$!
for _ in $(seq 1 1200); do
    grep -q 'KILLTEST armed' "$out" && break
    kill -0 "$job" 2>/dev/null || break
    sleep 0.1
done
if ! grep -q 'KILLTEST armed' "$out"; then
    wait "$job"
    job=""
    cat "$out"
    echo "FAIL killhost $btl: traffic never started"
    exit 1
fi
ranks=""
# by the program's name: a host's mount namespace is its own copy, so the
# path /proc shows for its processes may not be the one seen from here
# (inside the Debian 13 root it is not)
for p in $("${cl[@]}" pids "$victim"); do
    exe="$(readlink "/proc/$p/exe" 2>/dev/null)"
    [ "${exe##*/}" = "${prog##*/}" ] && ranks="$ranks $p"
done
if [ -z "$ranks" ]; then
    echo "FAIL killhost $btl: no rank found on $victim"
    exit 1
fi
t0=$SECONDS
# shellcheck disable=SC2086
kill -9 $ranks
echo "killhost: killed every rank on $victim:$ranks"
rc=0
wait "$job" || rc=$?
job=""
elapsed=$((SECONDS - t0))
btl_teardown >/dev/null 2>&1
tail -n 15 "$out" | sed 's/^/    | /'
after="$(leftovers)"
fail=""
[ "$rc" -ne 0 ] || fail="$fail; mpirun exited 0 although ranks were killed"
[ "$rc" -ne 124 ] || fail="$fail; the job hung (timeout)"
[ "$elapsed" -le 60 ] || fail="$fail; the job took $elapsed s to end (limit 60 s)"
if [ -n "$after" ] && [ "$after" != "$before" ]; then
    fail="$fail; left behind:"$'\n'"$after"
fi
if [ -n "$fail" ]; then
    echo "FAIL killhost $btl: ${fail#; }"
    exit 1
fi
echo "PASS killhost $btl: job ended $elapsed s after the kill with exit $rc, nothing left in /dev/shm or the session directories"
exit 0
