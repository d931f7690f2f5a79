#!/usr/bin/env bash
# tests/sctp/multihome.sh: btl/sctp keeps a job running when a network
# path fails.
#
# Two network namespaces joined by two veth pairs (10.201.1.0/24 and
# 10.201.2.0/24); one rank in each namespace, btl_sctp bound to both
# subnets. While t_multihome streams patterned messages, the first path is
# cut (`ip link set ... down` on both ends); the program then runs more
# round trips and checks every byte. Pass: exit 0, no message lost or
# corrupted, and traffic moved to the second link (its packet counters
# grow after the cut).
#
# The ranks reach mpirun's PMIx server over a third link per namespace.
# Needs root, ip netns and veth; otherwise it skips (exit 77) and says why.
# Usage: tests/sctp/multihome.sh [--stack user|kernel|auto] [--extra N]

# Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../lib/transports.sh
. "$here/../lib/transports.sh"
# shellcheck source=../lib/pathcut.sh
. "$here/../lib/pathcut.sh"

stack=auto
extra=1000
while [ $# -gt 0 ]; do
    case "$1" in
        --stack) stack="$2"; shift 2 ;;
        --extra) extra="$2"; shift 2 ;;
        *) echo "usage: $0 [--stack user|kernel|auto] [--extra N]" >&2; exit 2 ;;
    esac
done

skip() {
    echo "SKIP multihome: $*"
    exit 77
}

[ "$(id -u)" -eq 0 ] || skip "needs root (network namespaces)"
if [ "$stack" = kernel ]; then
    if command -v python3 >/dev/null; then
        python3 -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_SEQPACKET, 132)' \
            2>/dev/null || skip "the kernel has no SCTP (stack kernel asked for)"
    elif [ ! -d /proc/sys/net/sctp ]; then
        skip "the kernel has no SCTP (stack kernel asked for)"
    fi
fi
command -v ip >/dev/null || skip "needs iproute2 (ip)"
command -v mpicc >/dev/null || skip "needs mpicc"

nsA="sctpmhA$$"
nsB="sctpmhB$$"
ip netns add "$nsA" 2>/dev/null || skip "cannot create network namespaces here"
cleanup() {
    ip netns del "$nsA" 2>/dev/null
    ip netns del "$nsB" 2>/dev/null
    tr_cleanup
}
trap cleanup EXIT
ip netns add "$nsB" || skip "cannot create a second namespace"
for i in 0 1; do
    ip link add "mh${i}a$$" netns "$nsA" type veth peer name "mh${i}b$$" netns "$nsB" ||
        skip "cannot create veth pairs"
done
for ns in "$nsA" "$nsB"; do
    ip -n "$ns" link set lo up
done
# A management link from each namespace to this one: the ranks reach
# mpirun's PMIx server over it (10.203.0.0/16); btl/sctp never uses it.
n=1
for ns in "$nsA" "$nsB"; do
    ip link add "mhm${n}r$$" type veth peer name "mhm${n}n$$" netns "$ns" ||
        skip "cannot create veth pairs"
    ip addr add "10.203.$n.1/24" dev "mhm${n}r$$"
    ip link set "mhm${n}r$$" up
    ip -n "$ns" addr add "10.203.$n.2/24" dev "mhm${n}n$$"
    ip -n "$ns" link set "mhm${n}n$$" up
    ip -n "$ns" route add default via "10.203.$n.1"
    n=$((n + 1))
done
ip -n "$nsA" addr add 10.201.1.1/24 dev "mh0a$$"
ip -n "$nsB" addr add 10.201.1.2/24 dev "mh0b$$"
ip -n "$nsA" addr add 10.201.2.1/24 dev "mh1a$$"
ip -n "$nsB" addr add 10.201.2.2/24 dev "mh1b$$"
for i in 0 1; do
    ip -n "$nsA" link set "mh${i}a$$" up
    ip -n "$nsB" link set "mh${i}b$$" up
done

tr_init "$here"
work="$TR_TMPDIR/mh"
mkdir -p "$work"
mpicc -O2 -o "$work/t_multihome" "$here/t_multihome.c" || tr_die "cannot build t_multihome"
[ -e "$TR_COMPDIR/mca_btl_sctp.so" ] || skip "btl/sctp is not built in this tree"

cut="$work/cut"
root=()
[ "$(id -u)" -eq 0 ] && root=(--allow-run-as-root)
tr_sanitizer_args   # --enable-sanitizers: ASan first in every rank
mca=(--mca mca_base_component_path "$TR_COMPPATH" --mca btl self,sctp
     --mca btl_sctp_if_include 10.201.0.0/16 --mca btl_sctp_stack "$stack"
     --mca btl_sctp_verbose 0)
tx_before() { ip -n "$nsA" -s link show "mh1a$$" | awk '/TX:/{getline; print $2}'; }

# One app context whose ranks pick their namespace: Open MPI 5.0.7's
# mpirun crashes on the MPMD form (A : B).
printf '#!/bin/sh\nif [ "$OMPI_COMM_WORLD_RANK" = 0 ]; then ns=%s; else ns=%s; fi\nexec ip netns exec "$ns" "$@"\n' \
    "$nsA" "$nsB" > "$work/in_ns.sh"
chmod 700 "$work/in_ns.sh"
PMIX_MCA_ptl_tcp_if_include=10.203.0.0/16 timeout 300 mpirun "${root[@]}" "${TR_SAN_ARGS[@]}" --oversubscribe -np 2 "${mca[@]}" \
    "$work/in_ns.sh" "$work/t_multihome" "$cut" "$extra" > "$work/out" 2>&1 &
job=$!
tx0="$(tx_before)"

tr_cut_wait_start multihome "$cut" "$job" "$work/out" 600 || exit 1
tx1="$(tx_before)"
ip -n "$nsA" link set "mh0a$$" down
ip -n "$nsB" link set "mh0b$$" down
echo "multihome: path 10.201.1.0/24 cut while traffic flows"
touch "$cut"
wait "$job"
rc=$?
tx2="$(tx_before)"
cat "$work/out"
echo "multihome: packets sent on the second path: $((tx1 - tx0)) before the cut (probes), $((tx2 - tx1)) after"
tr_cut_verdict multihome "the path" "$rc" "$work/out" || exit 1
if [ "$((tx2 - tx1))" -lt 100 ]; then
    echo "FAIL multihome: traffic did not move to the second path"
    exit 1
fi
echo "PASS multihome: no message lost, traffic moved to the second path"
exit 0
