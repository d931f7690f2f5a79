# Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause
# pathcut.sh: shell helpers of the tests that cut a network path under a
# running job (tests/cluster/netcut.sh across fake hosts, tests/sctp/
# multihome.sh across two namespaces), both driving tests/sctp/t_multihome:
# it creates CUT.run once its traffic flows, goes on when CUT appears, and
# ends with "after the cut, 0 errors" when every byte after the cut was
# right.
#
# Source it after transports.sh.
# shellcheck shell=bash

# tr_cut_wait_start NAME CUT PID OUT TENTHS: waits up to TENTHS tenths of
# a second, while job PID lives, for CUT.run. Returns 0 once it is there;
# otherwise waits for the job, shows OUT, prints "FAIL NAME: traffic never
# started" and returns 1.
tr_cut_wait_start() {
    local name="$1" cut="$2" pid="$3" out="$4" tenths="$5"

    for _ in $(seq 1 "$tenths"); do
        [ -e "$cut.run" ] && return 0
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    [ -e "$cut.run" ] && return 0
    wait "$pid"
    cat "$out"
    echo "FAIL $name: traffic never started"
    return 1
}

# tr_cut_verdict NAME WHAT RC OUT: 0 when the job survived the cut of WHAT
# (exit RC 0) and OUT reports no error after it; otherwise prints the FAIL
# line and returns 1.
tr_cut_verdict() {
    local name="$1" what="$2" rc="$3" out="$4"

    if [ "$rc" -ne 0 ]; then
        echo "FAIL $name: the job failed (exit $rc) after $what was cut"
        return 1
    fi
    if ! grep -q "after the cut, 0 errors" "$out"; then
        echo "FAIL $name: messages lost or corrupted"
        return 1
    fi
    return 0
}
