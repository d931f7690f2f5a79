#!/usr/bin/env bash
# tests/sctp/peerloss.sh: a dead peer's association aborts and the job
# gets btl/sctp's own error, no hang.
#
# t_killpeer (tests/mpi) SIGKILLs one rank while transfers are in flight.
# mpirun normally ends the job itself; with --enable-recovery it lets the
# survivors run, so only btl/sctp can notice: its association must abort
# (retransmissions exhausted) and the "peer lost" message must appear
# before the timeout.

# Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../lib/transports.sh
. "$here/../lib/transports.sh"

command -v mpicc >/dev/null || { echo "SKIP peerloss: needs mpicc"; exit 77; }
tr_init "$here"
trap tr_cleanup EXIT
tr_require_btl peerloss sctp
mpicc -O2 -I"$TR_SRCDIR/tests/mpi" -o "$TR_TMPDIR/t_killpeer" \
    "$TR_SRCDIR/tests/mpi/t_killpeer.c" "$TR_SRCDIR/tests/mpi/tmpi.c" ||
    tr_die "cannot build t_killpeer"

root=()
[ "$(id -u)" -eq 0 ] && root=(--allow-run-as-root)
tr_sanitizer_args   # --enable-sanitizers: ASan first in every rank
# mpirun's own error manager may end the job (exit 0 under
# --enable-recovery) before the association times out; that run shows
# nothing about btl/sctp, so it is tried again, up to three times.
for attempt in 1 2 3; do
    start=$(date +%s)
    out="$(timeout 120 mpirun "${root[@]}" "${TR_SAN_ARGS[@]}" --enable-recovery -np 2 \
        --mca mca_base_component_path "$TR_COMPPATH" --mca btl self,sctp \
        "$TR_TMPDIR/t_killpeer" 2>&1)"
    rc=$?
    secs=$(( $(date +%s) - start ))
    echo "$out" | grep -E "KILLTEST|lost its association|Reason:" | head -5
    if [ "$rc" -eq 124 ]; then
        echo "FAIL peerloss: the job hung"
        exit 1
    fi
    if echo "$out" | grep -q "lost its association"; then
        echo "PASS peerloss: dead peer reported by btl/sctp, job ended after ${secs}s (attempt $attempt)"
        exit 0
    fi
    echo "peerloss: attempt $attempt: the job ended (exit $rc) before btl/sctp reported the loss"
done
echo "FAIL peerloss: no btl/sctp error about the dead peer in 3 attempts"
exit 1
