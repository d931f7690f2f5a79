#!/usr/bin/env bash
# tests/sctp/hol.sh: head-of-line blocking over btl/sctp, in MPI.
#
# Runs t_hol (8-byte round trips while a large message is in flight) over
# self,sctp twice: with the stream mapping (bulk fragments on streams
# 1..n-1, stream 0 served first) and with btl_sctp_num_streams=1, which is
# the old btl/sctp (everything on stream 0). Both runs must deliver every
# byte; the round-trip times are printed for comparison, not asserted.
#
# Usage: tests/sctp/hol.sh [MiB]   (default 64)

# Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../lib/transports.sh
. "$here/../lib/transports.sh"

mib="${1:-64}"
command -v mpicc >/dev/null || { echo "SKIP hol: needs mpicc"; exit 77; }
tr_init "$here"
trap tr_cleanup EXIT
tr_require_btl hol sctp
mpicc -O2 -o "$TR_TMPDIR/t_hol" "$here/t_hol.c" || tr_die "cannot build t_hol"

root=()
[ "$(id -u)" -eq 0 ] && root=(--allow-run-as-root)
tr_sanitizer_args   # --enable-sanitizers: ASan first in every rank
fail=0
for streams in 8 1; do
    out="$(timeout 300 mpirun "${root[@]}" "${TR_SAN_ARGS[@]}" -np 2 --mca mca_base_component_path "$TR_COMPPATH" \
        --mca btl self,sctp --mca btl_sctp_num_streams "$streams" \
        "$TR_TMPDIR/t_hol" "$mib" 2>&1)"
    rc=$?
    line="$(echo "$out" | grep '^t_hol:')"
    if [ "$rc" -ne 0 ] || ! echo "$line" | grep -q ", 0 errors"; then
        echo "$out" | tail -20
        echo "FAIL hol: num_streams=$streams (exit $rc)"
        fail=1
    else
        echo "hol: num_streams=$streams: ${line#t_hol: }"
    fi
done
[ "$fail" -eq 0 ] && echo "PASS hol: every message delivered intact with and without streams"
exit "$fail"
