#!/usr/bin/env bash
# tests/cluster/netcut.sh: a job across two fake hosts survives the loss of
# one of the two networks between them.
#
# scripts/cluster.sh with 2 hosts and 2 networks; rank 0 on h1, rank 1 on
# h2, btl/sctp bound to both networks (every address of a host is part of
# the association), Open MPI's own out-of-band traffic on net2 only. While
# t_multihome (tests/sctp) streams patterned messages, net1 is cut for
# every host (`cluster.sh net net1 down`); the program then runs more round
# trips and checks every byte. Pass: exit 0 and no message lost or
# corrupted.
#
# Usage: tests/cluster/netcut.sh [--btl sctp] [--extra N]
# Uses the cluster $TC_CLUSTER (default tc) when it is up with 2 hosts and
# 2 networks, else brings one up and takes it down at exit. Needs root.

# Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../lib/transports.sh
. "$here/../lib/transports.sh"
# shellcheck source=../lib/pathcut.sh
. "$here/../lib/pathcut.sh"

btl=sctp
extra=500
while [ $# -gt 0 ]; do
    case "$1" in
        --btl) btl="$2"; shift 2 ;;
        --extra) extra="$2"; shift 2 ;;
        *) echo "usage: $0 [--btl NAME] [--extra N]" >&2; exit 2 ;;
    esac
done
[ "$(id -u)" -eq 0 ] || { echo "SKIP netcut: needs root (network namespaces)"; exit 77; }

job=""
on_exit() {
    [ -n "$job" ] && kill "$job" 2>/dev/null && wait "$job" 2>/dev/null
    [ -n "$TR_CLUSTER_SH" ] && bash "$TR_CLUSTER_SH" net net1 up >/dev/null 2>&1
    tr_cluster_release
    tr_cleanup
}
trap on_exit EXIT
trap 'exit 130' INT TERM

tr_init "$here/../mpi"
tr_require_btl netcut "$btl"
tr_cluster_init 2 || tr_die "cannot bring up the cluster"
cl=(bash "$TR_CLUSTER_SH")
if [ "$("${cl[@]}" status | grep -c '^net[0-9]')" -lt 2 ]; then
    echo "SKIP netcut: the cluster ${TC_CLUSTER:-tc} has one network (up --nets 2)"
    exit 77
fi
net1="$("${cl[@]}" status | sed -n 's/^net1 \([^ ]*\) .*/\1/p')"
net2="$("${cl[@]}" status | sed -n 's/^net2 \([^ ]*\) .*/\1/p')"
work="$TR_TMPDIR/netcut"
mkdir -p "$work"
mpicc -O2 -o "$work/t_multihome" "$TR_SRCDIR/tests/sctp/t_multihome.c" || tr_die "cannot build t_multihome"
tr_load_btl "$btl"
tr_mpirun_args 2
cut="$work/cut"
out="$work/out"
timeout -k 10 300 "${TR_MPIRUN[@]}" --mca "btl_${btl}_if_include" "$net1,$net2" \
    --mca oob_tcp_if_include "$net2" "$work/t_multihome" "$cut" "$extra" </dev/null >"$out" 2>&1 &
job=$!
tr_cut_wait_start "netcut $btl" "$cut" "$job" "$out" 1200 || { job=""; exit 1; }
"${cl[@]}" net net1 down
echo "netcut: net1 ($net1) cut while traffic flows"
touch "$cut"
rc=0
wait "$job" || rc=$?
job=""
"${cl[@]}" net net1 up
tail -n 15 "$out" | sed 's/^/    | /'
tr_cut_verdict "netcut $btl" net1 "$rc" "$out" || exit 1
echo "PASS netcut $btl: no message lost after net1 was cut"
exit 0
