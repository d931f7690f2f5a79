#!/usr/bin/env bash
# tests/swf/cluster.sh: btl_swf with ranks on two hosts (fake hosts of
# scripts/cluster.sh, root only; skipped otherwise):
#   - private: a job of 4 ranks, 2 on h1 and 2 on h2, with the job's own
#     simulator: rank 0 starts it listening on TCP on h1's cluster address,
#     every rank (both hosts) connects there, the data are checked;
#   - token: a client without the job token is refused by a simulator that
#     listens on TCP for another host;
#   - external: a simulator started by hand on a third host h3 (TCP, with a
#     token file) serves a job of 4 ranks on h1 and h2
#     (btl_swf_server HOST:PORT, btl_swf_token_file), and exits 0.
# Uses the cluster named $TC_CLUSTER (default swfc); brings it up with 3
# hosts unless it is up, and down at exit if it brought it up. Last line:
# "N passed, N failed".
# Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause
set -u

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../lib/transports.sh
. "$here/../lib/transports.sh"

[ "$(id -u)" -eq 0 ] || { echo "SKIP swf cluster: needs root (network namespaces)"; exit 77; }
export TC_CLUSTER="${TC_CLUSTER:-swfc}"
timeout_s="${TRANSPORTS_TIMEOUT:-240}"
own_cluster=0
sim_pid=""

on_exit() {
    if [ -n "$sim_pid" ]; then
        kill "$sim_pid" 2>/dev/null
        wait "$sim_pid" 2>/dev/null
    fi
    if [ "$own_cluster" -eq 1 ]; then
        bash "$cluster_sh" down >/dev/null 2>&1
    fi
    tr_cleanup
}
trap on_exit EXIT
trap 'exit 130' INT TERM

tr_init "$here/../mpi"
# shellcheck source=swf_lib.sh
. "$here/swf_lib.sh"
swf_require_built
cluster_sh="$TR_SRCDIR/scripts/cluster.sh"
[ -x "$cluster_sh" ] || [ -f "$cluster_sh" ] || tr_die "scripts/cluster.sh not found"
prog="$TR_BUILDDIR/tests/mpi/t_pingpong"
[ -x "$prog" ] || make -C "$TR_BUILDDIR/tests/mpi" mpi-progs >/dev/null 2>&1 ||
    tr_die "cannot build the MPI test programs"

if ! bash "$cluster_sh" status 2>/dev/null | grep -q '^h3 '; then
    bash "$cluster_sh" up --hosts 3 --nets 1 >/dev/null || tr_die "cannot bring up the cluster"
    own_cluster=1
fi
addr_of() { bash "$cluster_sh" status | awk -v h="$1" '$1 == h && $2 == "net1" { print $3 }'; }
h1_addr="$(addr_of h1)"
h3_addr="$(addr_of h3)"
[ -n "$h1_addr" ] && [ -n "$h3_addr" ] || tr_die "no addresses for h1 and h3"

intruder="$TR_TMPDIR/swf_intruder"
cc -O2 -I"$TR_SRCDIR/common" -o "$intruder" "$here/swf_intruder.c" \
    "$TR_SRCDIR"/common/tc_sockmodel_*.c || tr_die "cannot compile swf_intruder.c"

passed=0
failed=0
verdict() { # PASS|FAIL NAME DETAIL [LOG]
    echo "$1  swf cluster $2: $3"
    if [ "$1" = PASS ]; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        [ -n "${4:-}" ] && [ -f "$4" ] && tail -n 25 "$4" | sed 's/^/    | /'
    fi
}

tr_load_btl swf
# mpirun of 4 ranks, 2 on h1 and 2 on h2 (h3 keeps none)
cluster_mpirun() {
    local args=(-np 4 --host h1:2,h2:2 --mca mca_base_component_path "$TR_COMPPATH"
        --mca btl swf --mca btl_swf_simulator "$swfsim" --mca btl_swf_verbose 5)
    tr_sanitizer_args
    timeout -k 10 "$timeout_s" bash "$cluster_sh" run "${args[@]}" "${TR_SAN_ARGS[@]}" "$@" \
        </dev/null
}

# ---- private simulator across hosts
log="$TR_TMPDIR/private.log"
cluster_mpirun "$prog" >"$log" 2>&1
rc=$?
hosts_seen="$(sed -n 's/^\[\(h[0-9]*\):[0-9]*\] btl:swf: rank [0-9]* connecting to .*/\1/p' "$log" |
    sort -u | tr '\n' ' ')"
targets="$(sed -n 's/.*btl:swf: rank [0-9]* connecting to \(.*\)$/\1/p' "$log" | sort -u)"
if [ "$rc" -ne 0 ] || ! grep -q '^PASS pingpong: np=4' "$log"; then
    verdict FAIL private "exit $rc" "$log"
elif [ "$hosts_seen" != "h1 h2 " ]; then
    verdict FAIL private "ranks connected from '$hosts_seen', not from h1 and h2" "$log"
elif [ "$(echo "$targets" | wc -l)" -ne 1 ] || [ "${targets%:*}" != "$h1_addr" ]; then
    verdict FAIL private "ranks connected to '$targets', not to one TCP port of $h1_addr" "$log"
else
    verdict PASS private "4 ranks on h1 and h2, one simulator at $targets (TCP on h1), data checked"
fi

# ---- a simulator on h3, started by hand, with a token file
tokfile="$TR_TMPDIR/swf.token"
portfile="$TR_TMPDIR/swf.port"
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$tokfile"
echo >>"$tokfile"
chmod 600 "$tokfile"
rm -f "$portfile"
bash "$cluster_sh" exec h3 "$swfsim" --nodes 4 --listen "$h3_addr:0" --port-file "$portfile" \
    --token-file "$tokfile" --connect-timeout "$timeout_s" --quiet \
    >"$TR_TMPDIR/sim.log" 2>&1 &
sim_pid=$!
for _ in $(seq 1 200); do
    [ -s "$portfile" ] && break
    sleep 0.1
done
sim_addr="$(head -n 1 "$portfile" 2>/dev/null)"
if [ -z "$sim_addr" ]; then
    verdict FAIL token "the simulator on h3 did not start" "$TR_TMPDIR/sim.log"
    verdict FAIL external "the simulator on h3 did not start" ""
else
    # no token: refused, and the simulator keeps waiting for its 4 nodes
    bash "$cluster_sh" exec h1 "$intruder" "$sim_addr" 0 4 1 >"$TR_TMPDIR/intruder.log" 2>&1
    irc=$?
    if [ "$irc" -ne 0 ] && grep -qi 'refused\|closed\|token' "$TR_TMPDIR/intruder.log"; then
        verdict PASS token "a client from h1 without the job token was refused by $sim_addr"
    else
        verdict FAIL token "a client without the token got exit $irc" "$TR_TMPDIR/intruder.log"
    fi
    log="$TR_TMPDIR/external.log"
    cluster_mpirun --mca btl_swf_server "$sim_addr" --mca btl_swf_token_file "$tokfile" \
        "$prog" >"$log" 2>&1
    rc=$?
    wait "$sim_pid"
    src=$?
    sim_pid=""
    if [ "$rc" -ne 0 ] || ! grep -q '^PASS pingpong: np=4' "$log"; then
        verdict FAIL external "exit $rc" "$log"
    elif [ "$src" -ne 0 ]; then
        verdict FAIL external "the simulator on h3 ended with status $src" "$TR_TMPDIR/sim.log"
    else
        verdict PASS external "4 ranks on h1 and h2 through the simulator on h3 ($sim_addr)"
    fi
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
