#!/usr/bin/env bash
# package.sh: Debian packages of the project, for the Open MPI installed on
# this machine (debian/ holds the packaging; see docs/install.md).
#
#   scripts/package.sh deb [--out DIR] [--with-ompi-source SRC]
#       build the binary packages (dpkg-buildpackage -us -uc -b on a clean
#       copy of the working tree) and copy them, with their .changes and
#       .buildinfo, to DIR (default: dist); then lintian on them (an error
#       or a warning fails). SRC: an Open MPI source tree of the installed
#       version, for a -dev package that lacks headers (Debian 13's 5.0.7).
#       As root, missing build tools and build dependencies are installed
#       with apt-get first.
#   scripts/package.sh check [--overlay] DIR
#       install DIR's packages (apt-get), run debian/tests/smoke with a
#       plain mpirun, purge them and check that none of their files is
#       left. Needs root. --overlay: all of it in a throwaway overlay of
#       this machine's root (a private mount namespace), so the machine
#       itself is not changed (a machine other jobs share).
# Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

usage() {
    sed -n '2,/^# Copyright/{/^# Copyright/d;s/^# \{0,1\}//p;}' "$0" >&2
    exit 2
}
log() { printf '==> %s\n' "$*"; }
die() { echo "package.sh: $*" >&2; exit 1; }

# ---------------------------------------------------------------------------
# deb
# ---------------------------------------------------------------------------
# apt_need PKG...: install the packages that are not installed (as root),
# or name them and stop.
apt_need() {
    local p missing=()
    for p in "$@"; do
        dpkg-query -W -f '${Status}\n' "$p" 2> /dev/null | grep -q ' installed$' ||
            missing+=("$p")
    done
    [ "${#missing[@]}" -eq 0 ] && return 0
    [ "$(id -u)" -eq 0 ] ||
        die "missing packages: ${missing[*]} (apt-get install ${missing[*]})"
    log "apt-get install ${missing[*]}"
    apt-get update -q > "$work/apt.log" 2>&1 || true
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
        "${missing[@]}" >> "$work/apt.log" 2>&1 ||
        { tail -n 20 "$work/apt.log"; die "apt-get install failed"; }
}

# A clean copy of the working tree into $1: tracked and untracked files,
# not the ignored ones (no build products), as they are now. Outside a git
# checkout (an unpacked tarball) the whole tree but a Debian 13 root.
copy_tree() {
    local dst="$1"
    mkdir -p "$dst"
    if git -C "$here" rev-parse --is-inside-work-tree > /dev/null 2>&1; then
        (cd "$here" && git ls-files -z --cached --others --exclude-standard |
            while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
            tar --null -T - -cf -) | tar -xf - -C "$dst"
    else
        (cd "$here" && tar --exclude=./ompi5-root --exclude='./ompi5-root.*' \
            --exclude="./${out_rel:-dist}" -cf - .) | tar -xf - -C "$dst"
    fi
}

do_deb() {
    local out="dist" ompi_source="" version upstream src t0 t1 f
    while [ $# -gt 0 ]; do
        case "$1" in
            --out) [ $# -ge 2 ] || usage; out="$2"; shift 2 ;;
            --out=*) out="${1#--out=}"; shift ;;
            --with-ompi-source) [ $# -ge 2 ] || usage; ompi_source="$2"; shift 2 ;;
            --with-ompi-source=*) ompi_source="${1#--with-ompi-source=}"; shift ;;
            *) usage ;;
        esac
    done
    out_rel="$out"
    mkdir -p "$out"
    out="$(cd "$out" && pwd)"
    [ -z "$ompi_source" ] || ompi_source="$(cd "$ompi_source" && pwd)"
    t0=$(date +%s)

    work="$(mktemp -d "${TMPDIR:-/tmp}/package.XXXXXX")"
    trap 'rm -rf "$work"' EXIT
    apt_need build-essential dpkg-dev debhelper lintian

    version="$(cd "$here" && dpkg-parsechangelog -S Version)"
    upstream="${version%-*}"
    src="$work/ompi-transports-$upstream"
    log "copying the tree to $src"
    copy_tree "$src"
    [ -f "$src/debian/control" ] || die "no debian/control in the tree"

    # the build dependencies dpkg-checkbuilddeps names, without versions
    local unmet
    unmet="$(cd "$src" && dpkg-checkbuilddeps 2>&1 | sed -n 's/.*[Uu]nmet build dependencies: //p' |
             sed -e 's/([^)]*)//g' -e 's/<[^>]*>//g' -e 's/|[^ ]*//g')" || true
    # shellcheck disable=SC2086
    [ -z "$unmet" ] || apt_need $unmet

    log "dpkg-buildpackage -us -uc -b (log: build.log in $out)"
    if ! (cd "$src" && OMPI_SOURCE="$ompi_source" nice dpkg-buildpackage -us -uc -b \
            -j"$(nproc)" > "$work/build.log" 2>&1); then
        cp "$work/build.log" "$out/build.log"
        tail -n 40 "$work/build.log"
        die "dpkg-buildpackage failed (log: $out/build.log)"
    fi
    grep -E 'warning:' "$work/build.log" | grep -v 'remember to run .libtool --finish' || true
    grep -E '^(PASS|FAIL|ERROR|# (TOTAL|PASS|FAIL|ERROR)):' "$work/build.log" | grep -v '^PASS' || true

    # only this build's packages in DIR
    for f in "$work"/*.deb "$work"/*.changes "$work"/*.buildinfo; do
        rm -f "$out/$(basename "$f" | sed 's/_.*//')"_*."${f##*.}"
    done
    cp "$work"/*.deb "$work"/*.changes "$work"/*.buildinfo "$work/build.log" "$out/"
    t1=$(date +%s)
    log "built in $((t1 - t0)) s:"
    (cd "$out" && for f in "$work"/*.deb; do
        f="$(basename "$f")"
        printf '    %s\n' "$f"
        dpkg-deb -f "$f" Depends | sed 's/^/        Depends: /'
    done)

    log "lintian $(lintian --version | sed 's/^lintian v*//')"
    if ! lintian --fail-on error,warning --display-info "$out"/*.changes; then
        die "lintian reports an error or a warning"
    fi
    log "lintian: no error, no warning ($(($(date +%s) - t1)) s)"
}

# ---------------------------------------------------------------------------
# check
# ---------------------------------------------------------------------------
# check_here DIR: install, smoke test, purge, leftovers, on this system.
check_here() {
    local dir="$1" f p rc=0 left=0
    local debs=() pkgs=()
    for f in "$dir"/*.deb; do
        [ -f "$f" ] || continue
        debs+=("$(cd "$(dirname "$f")" && pwd)/$(basename "$f")")
        pkgs+=("$(dpkg-deb -f "$f" Package)")
    done
    [ "${#debs[@]}" -gt 0 ] || die "no .deb in $dir"

    log "apt-get install ${pkgs[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${debs[@]}" \
        > "$tmp/apt.log" 2>&1 || { tail -n 20 "$tmp/apt.log"; die "apt-get install failed"; }
    for p in "${pkgs[@]}"; do
        dpkg-query -W -f '    ${Package} ${Version}\n' "$p"
        dpkg -L "$p" | while IFS= read -r f; do
            [ -d "$f" ] || echo "$f"
        done >> "$tmp/files"
    done
    log "$(wc -l < "$tmp/files") files installed; debian/tests/smoke with a plain mpirun"
    (cd "$tmp" && env -u OMPI_MCA_mca_base_component_path \
        AUTOPKGTEST_TMP="$tmp" "$here/debian/tests/smoke") || rc=1

    log "dpkg --purge ${pkgs[*]}"
    dpkg --purge "${pkgs[@]}" > "$tmp/purge.log" 2>&1 || { cat "$tmp/purge.log"; rc=1; }
    while IFS= read -r f; do
        if [ -e "$f" ] || [ -L "$f" ]; then
            echo "left after purge: $f" >&2
            left=$((left + 1))
        fi
    done < "$tmp/files"
    if [ "$left" -gt 0 ]; then
        rc=1
    else
        log "purged: none of the $(wc -l < "$tmp/files") files is left"
    fi
    return "$rc"
}

# check_overlay DIR: check_here in a chroot into an overlay of / whose
# writes go to a tmpfs, in a private mount namespace: the packages, the
# package database and everything the test writes vanish with it.
check_overlay() {
    local dir="$1" base merged
    base="$(mktemp -d "${TMPDIR:-/tmp}/pkgcheck.XXXXXX")"
    mount -t tmpfs -o mode=0755 tmpfs "$base"
    mkdir "$base/upper" "$base/work" "$base/root"
    merged="$base/root"
    mount -t overlay overlay -o "lowerdir=/,upperdir=$base/upper,workdir=$base/work" "$merged"
    mount -t proc proc "$merged/proc"
    mount --rbind /sys "$merged/sys"
    mount --rbind /dev "$merged/dev"
    mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs "$merged/dev/shm"
    mount -t tmpfs -o mode=0755 tmpfs "$merged/run"
    # what the check needs, copied in: the packages, this script, the test
    mkdir -p "$merged/tmp/pkgcheck/debs" "$merged/tmp/pkgcheck/scripts" \
        "$merged/tmp/pkgcheck/debian"
    cp "$dir"/*.deb "$merged/tmp/pkgcheck/debs/"
    cp "$here/scripts/package.sh" "$merged/tmp/pkgcheck/scripts/"
    cp -r "$here/debian/tests" "$merged/tmp/pkgcheck/debian/"
    local rc=0
    chroot "$merged" /usr/bin/env PACKAGE_IN_OVERLAY=1 \
        bash /tmp/pkgcheck/scripts/package.sh check /tmp/pkgcheck/debs || rc=$?
    umount -R -l "$merged" 2> /dev/null || true
    umount -l "$base" 2> /dev/null || true
    rmdir "$base" 2> /dev/null || true
    return "$rc"
}

do_check() {
    local overlay=0 dir=""
    while [ $# -gt 0 ]; do
        case "$1" in
            --overlay) overlay=1; shift ;;
            -*) usage ;;
            *) [ -z "$dir" ] || usage; dir="$1"; shift ;;
        esac
    done
    [ -n "$dir" ] || usage
    [ -d "$dir" ] || die "$dir: no such directory"
    [ "$(id -u)" -eq 0 ] || die "check needs root (it installs and purges packages)"
    dir="$(cd "$dir" && pwd)"
    if [ "$overlay" -eq 1 ]; then
        if [ -z "${PACKAGE_IN_NS:-}" ]; then
            command -v unshare > /dev/null || die "unshare (util-linux) not found"
            PACKAGE_IN_NS=1 exec unshare --mount --propagation private -- \
                bash "$0" check --overlay "$dir"
        fi
        log "check in an overlay of this machine's root"
        check_overlay "$dir"
        return
    fi
    tmp="$(mktemp -d "${TMPDIR:-/tmp}/pkgcheck.XXXXXX")"
    chmod 755 "$tmp"
    trap 'rm -rf "$tmp"' EXIT
    check_here "$dir"
}

[ $# -ge 1 ] || usage
what="$1"
shift
case "$what" in
    deb) do_deb "$@" ;;
    check) do_check "$@" ;;
    -h | --help) usage ;;
    *) usage ;;
esac
