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
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"
what="${1:-demo}"

PACKAGES=(
    build-essential autoconf automake libtool pkg-config
    libopenmpi-dev openmpi-bin
    libcmocka-dev libusrsctp-dev libsctp-dev libibverbs-dev libhwloc-dev
    gnuplot-nox valgrind netpipe-openmpi iproute2 procps
)

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
        install_packages
        build
        log "unit tests and MPI tests (make check)"
        make check
        log "unit tests under valgrind (make check-valgrind)"
        make check-valgrind
        ;;
    *)
        echo "usage: $0 demo|test|setup" >&2
        exit 2
        ;;
esac
