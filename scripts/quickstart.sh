#!/usr/bin/env bash
# quickstart.sh: set up a fresh Debian 12 machine and build the project,
# then run the demo or the test suite.
#
#   scripts/quickstart.sh demo    install packages, build, run the demo
#   scripts/quickstart.sh test    install packages, build, run every test
#   scripts/quickstart.sh setup   install packages and build only
#
# Packages are installed with apt-get (as root, or through sudo) only when
# missing. The build happens in the source tree; nothing is installed into
# Open MPI's directories (see README.md, "Install", for that).
# Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"
what="${1:-demo}"

PACKAGES=(
    build-essential autoconf automake libtool pkg-config
    libopenmpi-dev openmpi-bin
    libcmocka-dev libusrsctp-dev libsctp-dev libibverbs-dev libhwloc-dev
    libfabric-dev libfabric-bin
    gnuplot-nox valgrind netpipe-openmpi iproute2 iptables procps
)

# The tests also render swfsim's HTML report in a headless browser.
TEST_PACKAGES=(chromium)

log() { printf '==> %s\n' "$*"; }

install_packages() {
    local missing=()
    local p
    for p in "${PACKAGES[@]}"; do
        if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
            missing+=("$p")
        fi
    done
    if [ "${#missing[@]}" -eq 0 ]; then
        log "all required packages are present"
        return 0
    fi
    local sudo=""
    if [ "$(id -u)" -ne 0 ]; then
        if command -v sudo > /dev/null; then
            sudo="sudo"
        else
            echo "error: missing packages (${missing[*]}) and not root; install them or run as root" >&2
            exit 1
        fi
    fi
    log "installing: ${missing[*]}"
    $sudo apt-get update -q
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
}

build() {
    if [ ! -x configure ] || [ configure.ac -nt configure ]; then
        log "autogen"
        ./autogen.sh > /dev/null
    fi
    if [ ! -f Makefile ] || [ configure -nt config.status ]; then
        log "configure"
        ./configure
    fi
    log "make"
    make -j"$(nproc)" > build.log 2>&1 || { tail -40 build.log; echo "error: build failed (see build.log)" >&2; exit 1; }
    grep -E "warning:" build.log || true
}

# "P F" from the last "PREFIX P passed, F failed" line of FILE; nothing
# when FILE is missing or holds no such line.
last_tally() {
    [ -f "$1" ] || return 0
    sed -n "s/^$2\([0-9][0-9]*\) passed, \([0-9][0-9]*\) failed.*/\1 \2/p" "$1" | tail -n 1
}

# Unit tests and the MPI suite (make check), then the unit tests under
# valgrind, then the wire parsers' fuzz tests built with ASan and UBSan
# (make check-asan: two programs, a few seconds); the last line adds up
# all of them as "N passed, N failed". A suite that does not report counts
# as one failure.
run_tests() {
    local rc=0 trs ulog n
    # Results of an earlier run must not stand in for this one.
    rm -f tests/unit/*.log tests/unit/*.trs tests/mpi/run.log \
        tests/*/*.trs check-valgrind.log check-asan.log
    log "unit tests and MPI tests (make check)"
    # -j: the unit tests run side by side, one per core; the MPI runner and
    # each component's suite are one test each and run alone
    local t0=$SECONDS
    make -k -j"$(nproc)" check || rc=1
    log "make check: $((SECONDS - t0)) s"
    if [ -f tests/mpi/run.log ]; then
        log "MPI suite, every run (tests/mpi/run.log)"
        cat tests/mpi/run.log
    fi
    log "unit tests under valgrind (make check-valgrind)"
    t0=$SECONDS
    make check-valgrind 2>&1 | tee check-valgrind.log || rc=1
    log "valgrind: $((SECONDS - t0)) s"
    log "the wire parsers' fuzz tests under ASan and UBSan (make check-asan)"
    t0=$SECONDS
    make check-asan 2>&1 | tee check-asan.log || rc=1
    log "asan: $((SECONDS - t0)) s"

    # One automake result (.trs) and log per unit test program; cmocka
    # prints "[  PASSED  ] N test(s)." and "[  FAILED  ] N test(s)...". A
    # program that crashed prints no cmocka summary: it counts as one
    # failure. (The *.valgrind.log files are the valgrind pass, not read.)
    local up=0 uf=0 nunit=0
    for trs in tests/unit/*.trs; do
        [ -e "$trs" ] || continue
        nunit=$((nunit + 1))
        ulog="${trs%.trs}.log"
        n=""
        [ -f "$ulog" ] && n=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$ulog" | tail -n 1)
        up=$((up + ${n:-0}))
        n=""
        [ -f "$ulog" ] && n=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$ulog" | tail -n 1)
        if [ -n "$n" ]; then
            uf=$((uf + n))
        elif grep -q ':test-result: \(FAIL\|ERROR\)' "$trs"; then
            uf=$((uf + 1))
        fi
    done
    [ "$nunit" -gt 0 ] || uf=$((uf + 1))
    local mp mf vp vf ap af
    read -r mp mf <<<"$(last_tally tests/mpi/run.log '')"
    read -r vp vf <<<"$(last_tally check-valgrind.log 'valgrind: ')"
    read -r ap af <<<"$(last_tally check-asan.log 'asan: ')"
    [ -n "$mp" ] || { mp=0; mf=1; }
    [ -n "$vp" ] || { vp=0; vf=1; }
    [ -n "$ap" ] || { ap=0; af=1; }
    # the component suites (tests/<comp>: tests/sci, tests/swf, ...): one
    # result per script, from automake's .trs files
    local cp=0 cf=0
    for trs in tests/*/*.trs; do
        [ -e "$trs" ] || continue
        case "$trs" in tests/unit/* | tests/mpi/*) continue ;; esac
        if grep -q ':test-result: PASS' "$trs"; then
            cp=$((cp + 1))
        elif grep -q ':test-result: \(FAIL\|ERROR\)' "$trs"; then
            cf=$((cf + 1))
        fi
    done
    echo
    echo "unit test cases: $up passed, $uf failed"
    echo "MPI runs:        $mp passed, $mf failed"
    echo "component suites: $cp passed, $cf failed (tests/<component>)"
    echo "valgrind:        $vp passed, $vf failed (unit test programs)"
    echo "asan:            $ap passed, $af failed (fuzz test programs)"
    local tp=$((up + mp + cp + vp + ap)) tf=$((uf + mf + cf + vf + af))
    if [ "$tf" -ne 0 ]; then
        rc=1
    fi
    echo "tests: $tp passed, $tf failed"
    return $rc
}

case "$what" in
    setup)
        install_packages
        build
        ;;
    demo)
        install_packages
        build
        log "demo"
        bash scripts/demo.sh
        ;;
    test)
        PACKAGES+=("${TEST_PACKAGES[@]}")
        install_packages
        build
        run_tests
        ;;
    *)
        echo "usage: $0 demo|test|setup" >&2
        exit 2
        ;;
esac
