#!/usr/bin/env bash
# ompi5.sh: build and test the project against Open MPI 5.0 (Debian 13's
# 5.0.7) in a Debian 13 root, from a Debian 12 (Open MPI 4.1) machine.
#
#   scripts/ompi5.sh [--root DIR] setup        build (or reuse) the Debian 13
#                                              root: Open MPI 5.0, the build
#                                              dependencies, Open MPI's source
#   scripts/ompi5.sh [--root DIR] test         build a clean clone of the
#                                              working tree in the root, run
#                                              make check and the MPI runner
#                                              (TRANSPORTS_BTLS, _NP, _TESTS
#                                              passed on: tests/mpi/run)
#   scripts/ompi5.sh [--root DIR] demo         the demo (scripts/demo.sh) there
#   scripts/ompi5.sh [--root DIR] exec CMD...  run CMD in the root with the
#                                              components built by `test` on
#                                              Open MPI's component path and
#                                              swfsim on PATH (arguments and
#                                              standard input passed through)
#   scripts/ompi5.sh [--root DIR] deb --out OUT [--check]
#                                              Debian packages for the root's
#                                              Open MPI 5.0 (scripts/package.sh
#                                              deb in the root), copied to OUT;
#                                              --check: then install them in the
#                                              root, smoke test, purge
#                                              (scripts/package.sh check)
#
# DIR defaults to ompi5-root in the build directory (the current directory
# when it holds config.status, else the top of the source tree). Needs root
# (debootstrap, chroot, mount) and Debian's package mirror.
#
# While a command runs in the root, /proc, /sys, /dev, /dev/pts and a
# private /dev/shm are mounted there; they are unmounted on every exit path
# (interrupts included), and all of it happens in a private mount namespace,
# so even a killed script leaves no mount behind on the host.
#
# Debian 13's libopenmpi-dev lacks four headers that its own opal_config.h
# includes; `apt-get source openmpi` inside the root unpacks Open MPI's
# source of the same version, and configure finds them there through
# --with-ompi-source (nothing of it is copied into this tree).
# Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

usage() {
    echo "usage: $0 [--root DIR] setup|test|demo|exec CMD...|deb --out OUT [--check]" >&2
    exit 2
}

root=""
while [ $# -gt 0 ]; do
    case "$1" in
        --root) [ $# -ge 2 ] || usage; root="$2"; shift 2 ;;
        --root=*) root="${1#--root=}"; shift ;;
        -h|--help) usage ;;
        *) break ;;
    esac
done
[ $# -ge 1 ] || usage
what="$1"
shift
case "$what" in
    setup|test|demo) [ $# -eq 0 ] || usage ;;
    exec) [ $# -ge 1 ] || usage ;;
    deb) [ $# -ge 1 ] || usage ;;
    *) usage ;;
esac

if [ -z "$root" ]; then
    if [ -f "$PWD/config.status" ]; then
        root="$PWD/ompi5-root"
    else
        root="$here/ompi5-root"
    fi
fi
mkdir -p "$root"
root="$(cd "$root" && pwd)"

SUITE=trixie
MIRROR="${OMPI5_MIRROR:-http://deb.debian.org/debian}"
# Open MPI 5.0 and what the build and the tests need: scripts/quickstart.sh's
# list less gnuplot (bench/run then prints its tables without plots), plus
# python3 (tests/swfsim/run reads JSON with it, the host has it anyway) and
# dpkg-dev for apt-get source.
PACKAGES=(
    build-essential autoconf automake libtool pkg-config
    libopenmpi-dev openmpi-bin
    libcmocka-dev libusrsctp-dev libsctp-dev libibverbs-dev libhwloc-dev
    libfabric-dev libfabric-bin
    valgrind netpipe-openmpi iproute2 iptables procps python3 dpkg-dev ca-certificates
)
# Inside the root: the clean clone and build, Open MPI's source tree.
WORK=/build/ompi-transports
SRC=/build/openmpi-src
STAMP="$root/.ompi5-setup"

log() { printf '==> %s\n' "$*"; }
die() { echo "error: $*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || die "needs root (debootstrap, chroot and mount)"

# Everything that mounts runs in a private mount namespace: the mounts are
# invisible on the host and vanish with the namespace whatever happens.
if [ -z "${OMPI5_IN_NS:-}" ]; then
    command -v unshare > /dev/null || die "unshare (util-linux) not found"
    export OMPI5_IN_NS=1
    exec unshare --mount --propagation private -- bash "$0" --root "$root" "$what" "$@"
fi

# ---------------------------------------------------------------------------
# mounts
# ---------------------------------------------------------------------------
mounted=()

umount_all() {
    local i
    for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
        umount "${mounted[$i]}" 2> /dev/null || umount -l "${mounted[$i]}" 2> /dev/null || true
    done
    mounted=()
}

on_exit() {
    local rc=$?
    umount_all
    exit "$rc"
}
on_signal() {
    # the command and everything it started (its own process group): TERM,
    # since an asynchronous command ignores INT; 10 s to end, then KILL
    local i
    if [ -n "$child" ]; then
        kill -s TERM -- "-$child" 2> /dev/null || true
        for ((i = 0; i < 20; i++)); do
            kill -0 "$child" 2> /dev/null || break
            sleep 0.5
        done
        kill -s KILL -- "-$child" 2> /dev/null || true
        wait "$child" 2> /dev/null || true
    fi
    umount_all
    trap - "$1"
    kill -s "$1" "$$"
}
trap on_exit EXIT
trap 'on_signal INT' INT
trap 'on_signal TERM' TERM
trap 'on_signal HUP' HUP

mount_one() {
    local target="$root$1"
    shift
    mkdir -p "$target"
    mount "$@" "$target"
    mounted+=("$target")
}

mount_all() {
    [ "${#mounted[@]}" -eq 0 ] || return 0
    # the root itself is a mount point, so that / is one inside (`ip netns
    # exec`, used by tests/sctp/multihome.sh, remounts / as a slave)
    mount --bind "$root" "$root"
    mounted+=("$root")
    mount_one /proc -t proc proc
    mount_one /sys --bind /sys
    mount_one /dev --bind /dev
    mount_one /dev/pts --bind /dev/pts
    # the root's own /dev/shm: shared memory files of its jobs never meet
    # the host's, and whatever a job leaves behind is visible (and counted)
    mount_one /dev/shm -t tmpfs -o mode=1777,nosuid,nodev tmpfs
}

# in_root CMD...: run CMD in the root as root, with a clean environment,
# Open MPI's settings for this root, and EXTRA_ENV (NAME=VALUE words). It
# runs in the background, in a process group of its own, so that a signal
# to this script is handled at once and reaches all of it; standard input
# is passed through.
EXTRA_ENV=()
child=""
in_root() {
    local rc=0
    exec 3<&0
    setsid chroot "$root" /usr/bin/env -i \
        HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        LANG=C.UTF-8 TERM="${TERM:-dumb}" DEBIAN_FRONTEND=noninteractive \
        OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
        "${EXTRA_ENV[@]}" "$@" <&3 3<&- &
    child=$!
    exec 3<&-
    wait "$child" || rc=$?
    child=""
    return "$rc"
}

timed() {
    local label="$1" t0 t1
    shift
    t0=$(date +%s)
    "$@"
    t1=$(date +%s)
    log "$label: $((t1 - t0)) s"
}

# ---------------------------------------------------------------------------
# setup
# ---------------------------------------------------------------------------
do_debootstrap() {
    command -v debootstrap > /dev/null || {
        log "installing debootstrap on the host"
        apt-get install -y -q debootstrap > /dev/null
    }
    debootstrap --variant=minbase "$SUITE" "$root" "$MIRROR" > "$root.debootstrap.log" 2>&1 ||
        { tail -20 "$root.debootstrap.log"; die "debootstrap failed (see $root.debootstrap.log)"; }
    rm -f "$root.debootstrap.log"
}

do_packages() {
    cat > "$root/etc/apt/sources.list" <<EOF
deb $MIRROR $SUITE main
deb-src $MIRROR $SUITE main
EOF
    cp /etc/resolv.conf "$root/etc/resolv.conf" 2> /dev/null || true
    # the host's name must resolve for mpirun (prte)
    [ -s "$root/etc/hosts" ] || cp /etc/hosts "$root/etc/hosts"
    in_root apt-get update -q > /dev/null
    in_root apt-get install -y -q --no-install-recommends "${PACKAGES[@]}" > "$root/root/apt.log" 2>&1 ||
        { tail -20 "$root/root/apt.log"; die "apt-get install failed in the root"; }
}

do_source() {
    # Open MPI's source, the same version as the installed libopenmpi-dev:
    # configure --with-ompi-source takes the headers the package lacks
    # from there.
    in_root sh -c "rm -rf $SRC && mkdir -p $SRC && cd $SRC && apt-get source -q openmpi" > "$root/root/source.log" 2>&1 ||
        { tail -20 "$root/root/source.log"; die "apt-get source openmpi failed in the root"; }
}

setup() {
    local want
    want="$SUITE ${PACKAGES[*]}"
    if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$want" ]; then
        log "reusing the Debian 13 root in $root"
        return 0
    fi
    if [ ! -x "$root/usr/bin/apt-get" ]; then
        log "debootstrap --variant=minbase $SUITE into $root"
        timed "debootstrap" do_debootstrap
    fi
    mount_all
    log "installing Open MPI 5.0 and the build dependencies in the root"
    timed "packages" do_packages
    log "apt-get source openmpi (into $SRC in the root)"
    timed "apt-get source" do_source
    echo "$want" > "$STAMP"
    in_root ompi_info --version | head -n 1
}

# ---------------------------------------------------------------------------
# build, test, demo, exec
# ---------------------------------------------------------------------------
# The environment of every command in the root after the build:
# - the components found by mpirun and ompi_info: COMPDIR first;
# - swfsim of the build on PATH (btl_swf looks there too);
# - Open MPI 5.0.7's own tcp BTL fails on a dual-stack interface ("Unable
#   to find reachable pairing", open-mpi/ompi#14079): keep it on loopback;
# - 5.0's PMIx scans Open MPI's component path too and prints four lines
#   for every file there that is not a PMIx plugin: not those.
COMPDIR=/build/components
ompi5_env() {
    local pkglibdir
    pkglibdir="$(chroot "$root" ompi_info --parsable --path pkglibdir 2> /dev/null |
                 sed -n 's/^path:pkglibdir://p')"
    [ -n "$pkglibdir" ] || die "ompi_info in the root does not name its component directory"
    EXTRA_ENV=(
        OMPI_MCA_mca_base_component_path="$COMPDIR:$pkglibdir"
        OMPI_MCA_btl_tcp_if_include=lo
        PMIX_MCA_mca_base_component_show_load_errors=0
        PATH="$WORK/swfsim:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
    )
    # the MPI runner's selection (tests/mpi/run), when the caller made one,
    # and the fake-host cluster the suites that need one use (TC_CLUSTER)
    local v
    for v in TRANSPORTS_BTLS TRANSPORTS_NP TRANSPORTS_TESTS TC_CLUSTER; do
        [ -n "${!v:-}" ] && EXTRA_ENV+=("$v=${!v}")
    done
    return 0
}

# A clean copy of the working tree (tracked and untracked files, not the
# ignored ones: no build products), as it is now, committed or not.
copy_tree() {
    local dst="${1:-$WORK}"
    rm -rf "${root:?}$dst"
    mkdir -p "$root$dst"
    (cd "$here" && git ls-files -z --cached --others --exclude-standard |
        while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
        tar --null -T - -cf -) | tar -xf - -C "$root$dst"
}

build() {
    local srcdir
    srcdir="$(cd "$root$SRC" && ls -d openmpi-*/ 2> /dev/null | head -n 1)"
    [ -n "$srcdir" ] || die "no Open MPI source in $root$SRC: run setup again"
    log "copying the working tree to $WORK in the root"
    copy_tree
    log "autogen, configure --with-ompi-source=$SRC/${srcdir%/}, make"
    in_root sh -c "cd $WORK && ./autogen.sh > autogen.log 2>&1 &&
        ./configure --with-ompi-source=$SRC/${srcdir%/} > configure.log 2>&1" ||
        { tail -n 20 "$root$WORK/configure.log" "$root$WORK/autogen.log" 2> /dev/null;
          die "configure failed in the root"; }
    grep -E '^configure: (WARNING|taken from)' "$root$WORK/configure.log" || true
    in_root sh -c "cd $WORK && make -j\$(nproc) > build.log 2>&1" ||
        { tail -n 40 "$root$WORK/build.log"; die "the build failed in the root (see $root$WORK/build.log)"; }
    grep -E 'warning:' "$root$WORK/build.log" || true
    # the components, where ompi5_env's component path looks first
    rm -rf "${root:?}$COMPDIR"
    mkdir -p "$root$COMPDIR"
    cp -L "$root$WORK"/*/.libs/mca_*.so "$root$COMPDIR/"
    log "built: $(cd "$root$COMPDIR" && echo *)"
}

test_root() {
    local rc=0 n
    ompi5_env
    log "ompi_info --param btl all --level 9 (our components)"
    in_root ompi_info --param btl all --level 9 > "$root$WORK/ompi_info.log" 2>&1 || rc=1
    for c in "$root$COMPDIR"/mca_btl_*.so; do
        c="$(basename "$c" .so)"
        c="${c#mca_btl_}"
        n="$(grep -c "MCA btl $c: parameter" "$root$WORK/ompi_info.log" || true)"
        echo "btl $c: $n parameters"
        [ "$n" -gt 0 ] || rc=1
    done
    log "make check (unit tests, the MPI runner, the component suites)"
    in_root sh -c "cd $WORK && make -k -j\$(nproc) check > check.log 2>&1" || rc=1
    in_root sh -c "cd $WORK && grep -h -E '^(PASS|FAIL|XFAIL|ERROR|SKIP):' check.log | sort | uniq -c | sort -rn | head -n 60"
    in_root sh -c "cd $WORK && grep -h -E '^# (TOTAL|PASS|FAIL|ERROR):' check.log" || true
    if [ -f "$root$WORK/tests/mpi/run.log" ]; then
        log "MPI runner (tests/mpi/run.log)"
        grep -E '^(FAIL|.* passed, [0-9]+ failed)' "$root$WORK/tests/mpi/run.log" || true
    fi
    log "the wire parsers' fuzz tests under ASan and UBSan (make check-asan)"
    in_root sh -c "cd $WORK && make check-asan > check-asan.log 2>&1; r=\$?; grep -E '^(PASS|FAIL) \\(asan\\)' check-asan.log; exit \$r" || rc=1
    [ "$rc" -eq 0 ] && log "Open MPI 5.0: all passed" || log "Open MPI 5.0: FAILURES (logs in $root$WORK)"
    return "$rc"
}

# deb OUT CHECK: scripts/package.sh deb in the root on a copy of the tree
# of its own (the test build stays), with Open MPI's source for the
# headers the -dev package lacks; the packages copied to OUT; CHECK=1:
# scripts/package.sh check in the root (install, smoke test, purge).
DEBWORK=/build/deb-src
DEBOUT=/build/deb-out
deb_root() {
    local out="$1" check="$2" srcdir f
    srcdir="$(cd "$root$SRC" && ls -d openmpi-*/ 2> /dev/null | head -n 1)"
    [ -n "$srcdir" ] || die "no Open MPI source in $root$SRC: run setup again"
    log "copying the working tree to $DEBWORK in the root"
    copy_tree "$DEBWORK"
    rm -rf "${root:?}$DEBOUT"
    in_root bash "$DEBWORK/scripts/package.sh" deb --out "$DEBOUT" \
        --with-ompi-source "$SRC/${srcdir%/}"
    for f in "$root$DEBOUT"/*.deb "$root$DEBOUT"/*.changes "$root$DEBOUT"/*.buildinfo; do
        cp "$f" "$out/"
        echo "$out/$(basename "$f")"
    done
    if [ "$check" -eq 1 ]; then
        in_root bash "$DEBWORK/scripts/package.sh" check "$DEBOUT"
    fi
}

case "$what" in
    setup)
        timed "setup" setup
        ;;
    test)
        timed "setup" setup
        mount_all
        timed "build" build
        timed "tests" test_root
        ;;
    demo)
        setup
        mount_all
        [ -d "$root$COMPDIR" ] && [ -f "$root$WORK/config.status" ] || timed "build" build
        ompi5_env
        in_root sh -c "cd $WORK && bash scripts/demo.sh"
        ;;
    exec)
        setup > /dev/null
        mount_all
        [ -d "$root$COMPDIR" ] && [ -f "$root$WORK/config.status" ] || timed "build" build >&2
        ompi5_env
        in_root "$@"
        ;;
    deb)
        deb_out=""
        deb_check=0
        while [ $# -gt 0 ]; do
            case "$1" in
                --out) [ $# -ge 2 ] || usage; deb_out="$2"; shift 2 ;;
                --out=*) deb_out="${1#--out=}"; shift ;;
                --check) deb_check=1; shift ;;
                *) usage ;;
            esac
        done
        [ -n "$deb_out" ] || usage
        mkdir -p "$deb_out"
        deb_out="$(cd "$deb_out" && pwd)"
        timed "setup" setup
        mount_all
        timed "packages" deb_root "$deb_out" "$deb_check"
        ;;
esac
