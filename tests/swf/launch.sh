#!/usr/bin/env bash
# tests/swf/launch.sh: how btl_swf starts (or fails to start) the private
# simulator of a job.
#   - a wrong btl_swf_simulator ends the job within 10 s, non-zero, with
#     one message naming the path, and no crash;
#   - without btl_swf_simulator the simulator is found next to the
#     component in the build tree;
#   - found nowhere: the message names every place tried, PATH included;
#   - the simulator inherits no descriptor beyond stdout/stderr (also one
#     above 1024) and no blocked signal;
#   - a simulator whose parent died before it could set its death signal
#     exits at once.
# Prints PASS/FAIL lines and "N passed, N failed".

# Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause
set -u

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../lib/transports.sh
. "$here/../lib/transports.sh"
# shellcheck source=swf_lib.sh
. "$here/swf_lib.sh"

trap 'tr_cleanup' EXIT
trap 'exit 130' INT TERM
tr_init "$here"
swf_require_built

passed=0
failed=0
verdict() {
    printf '%s  %-28s %s\n' "$1" "$2" "$3"
    if [ "$1" = PASS ]; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        [ -n "${4:-}" ] && [ -f "$4" ] && tail -n 25 "$4" | sed 's/^/    | /'
    fi
}

prog="$TR_BUILDDIR/tests/mpi/t_pingpong"
[ -x "$prog" ] || make -s -C "$TR_BUILDDIR/tests/mpi" mpi-progs >/dev/null 2>&1
env_prog="$TR_TMPDIR/swf_launchenv"
mpicc -O2 -o "$env_prog" "$here/swf_launchenv.c" || tr_die "cannot compile swf_launchenv.c"
sysdir="$(ompi_info --path pkglibdir | sed -n 's/.*: *//p')"
base=(mpirun -np 2 --mca btl swf)
[ "$(id -u)" -eq 0 ] && base+=(--allow-run-as-root)

# 1. wrong path
log="$TR_TMPDIR/wrong.log"
start=$(date +%s)
timeout -k 5 60 "${base[@]}" --mca mca_base_component_path "$TR_COMPPATH" \
    --mca btl_swf_simulator /nonexistent/swfsim "$prog" </dev/null >"$log" 2>&1
rc=$?
took=$(( $(date +%s) - start ))
n="$(grep -c 'cannot start its private simulator' "$log")"
if [ "$rc" -eq 0 ] || [ "$rc" -ge 128 ] || [ "$took" -gt 10 ] || [ "$n" -ne 1 ] ||
   grep -q 'Segmentation\|signal 11' "$log" || ! grep -q '/nonexistent/swfsim' "$log"; then
    verdict FAIL "wrong simulator path" "exit $rc after ${took}s, message $n times" "$log"
else
    verdict PASS "wrong simulator path" "exit $rc after ${took}s, one message"
fi

# 2. found next to the component in the build tree (not copied elsewhere)
log="$TR_TMPDIR/buildtree.log"
timeout -k 5 120 env PATH=/usr/bin:/bin "${base[@]}" \
    --mca mca_base_component_path "$TR_BUILDDIR/btl_swf/.libs:$sysdir" "$prog" \
    </dev/null >"$log" 2>&1
rc=$?
if [ "$rc" -eq 0 ] && grep -q '^PASS pingpong' "$log"; then
    verdict PASS "found in the build tree" "no btl_swf_simulator, swfsim not in PATH"
else
    verdict FAIL "found in the build tree" "exit $rc" "$log"
fi

# 3. found nowhere: every place is named
log="$TR_TMPDIR/nowhere.log"
start=$(date +%s)
timeout -k 5 60 env PATH=/usr/bin:/bin "${base[@]}" --mca mca_base_component_path "$TR_COMPPATH" \
    "$prog" </dev/null >"$log" 2>&1
rc=$?
took=$(( $(date +%s) - start ))
if [ "$rc" -ne 0 ] && [ "$rc" -lt 128 ] && [ "$took" -le 10 ] &&
   grep -q '/usr/bin/swfsim, /bin/swfsim' "$log" && grep -q "$TR_COMPDIR/swfsim" "$log"; then
    verdict PASS "found nowhere" "exit $rc after ${took}s, places named"
else
    verdict FAIL "found nowhere" "exit $rc after ${took}s" "$log"
fi

# 4. what the simulator inherits
wrap="$TR_TMPDIR/swf_inherit"
cc -O2 -o "$wrap" "$here/swf_inherit.c" || tr_die "cannot compile swf_inherit.c"
seen="$TR_TMPDIR/seen"
log="$TR_TMPDIR/inherit.log"
SWF_INHERIT_OUT="$seen" SWF_INHERIT_EXEC="$swfsim" timeout -k 5 120 "${base[@]}" \
    -x SWF_INHERIT_OUT -x SWF_INHERIT_EXEC --mca mca_base_component_path "$TR_COMPPATH" \
    --mca btl_swf_simulator "$wrap" "$env_prog" </dev/null >"$log" 2>&1
rc=$?
fds="$(sort -n "$seen.fds" 2>/dev/null | tr '\n' ' ')"
sigs="$(tr '\n' ' ' <"$seen.sig" 2>/dev/null)"
if [ "$rc" -eq 0 ] && [ "$fds" = "0 1 2 " ] && [ -f "$seen.sig" ] && [ -z "$sigs" ]; then
    verdict PASS "nothing inherited" "descriptors $fds; no blocked signal"
else
    verdict FAIL "nothing inherited" "exit $rc, descriptors '$fds', blocked signals '$sigs'" "$log"
fi

# 5. the parent died before the simulator set its death signal
log="$TR_TMPDIR/orphan.log"
timeout -k 5 10 "$swfsim" --nodes 1 --quiet --listen 127.0.0.1:0 --parent-pid 1 >"$log" 2>&1
rc=$?
if [ "$rc" -eq 1 ] && grep -q 'is gone' "$log"; then
    verdict PASS "orphaned at start" "exits at once"
else
    verdict FAIL "orphaned at start" "exit $rc" "$log"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
