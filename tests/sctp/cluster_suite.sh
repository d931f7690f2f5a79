#!/usr/bin/env bash
# tests/sctp/cluster_suite.sh: the MPI test programs (tests/mpi) across two
# fake hosts (scripts/cluster.sh, 2 hosts, 2 networks) over sctp and tcp,
# with random loss on both networks.
#
# Usage: tests/sctp/cluster_suite.sh [--name CLUSTER] [--loss PERCENT]
#            [tests/mpi/run arguments, e.g. --btls sctp,tcp --np 2,4]
#
# Sets PERCENT (default 2) random loss on both networks of the cluster
# (brought up with 2 hosts and 2 networks if needed), then runs
# tests/mpi/run --cluster 2 (ranks by node, every program checks its data
# with patterns) with the remaining arguments, and clears the loss.
# Prints the runner's lines and "N passed, N failed".
# Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause
set -u

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
top="$(cd "$here/../.." && pwd)"
name="${TC_CLUSTER:-sctp}"
loss=2
args=()
while [ $# -gt 0 ]; do
    case "$1" in
        --name) name="$2"; shift 2 ;;
        --loss) loss="$2"; shift 2 ;;
        *) args+=("$1"); shift ;;
    esac
done
export TC_CLUSTER="$name"
C=("$top/scripts/cluster.sh" --name "$name")
"${C[@]}" up --hosts 2 --nets 2 > /dev/null || exit 2
trap 'for k in 1 2; do "${C[@]}" net net$k clear > /dev/null 2>&1; done' EXIT
for k in 1 2; do
    "${C[@]}" net net$k clear
    "${C[@]}" net net$k up
    [ "$loss" = 0 ] || "${C[@]}" net net$k loss "$loss"
done
echo "# loss $loss% on net1 and net2 of cluster $name, load $(cut -d' ' -f1 /proc/loadavg)"
"$top/tests/mpi/run" --cluster 2 "${args[@]}"
