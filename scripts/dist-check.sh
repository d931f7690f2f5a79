#!/bin/sh
# dist-check.sh SRCDIR DISTDIR: every file git tracks in SRCDIR must be in
# DISTDIR (the tree `make dist` is about to pack), so that a file added to
# the repository but not to a Makefile.am's EXTRA_DIST (or _SOURCES) cannot
# be left out of the release tarball unnoticed. Run by `make dist` (and so
# by `make distcheck`) through the top Makefile's dist-hook. Outside a git
# checkout (a tree unpacked from a tarball) there is nothing to compare.
# Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause
set -eu

[ $# -eq 2 ] || { echo "usage: $0 SRCDIR DISTDIR" >&2; exit 2; }
srcdir="$1"
distdir="$2"

if ! command -v git > /dev/null 2>&1 ||
    ! git -C "$srcdir" rev-parse --is-inside-work-tree > /dev/null 2>&1; then
    echo "dist-check: $srcdir is not a git checkout, nothing to compare"
    exit 0
fi

# Tracked files that are not part of a release: git's own files and the
# placeholder that keeps the (generated) config/ directory in the
# repository.
is_excluded() {
    case "$1" in
        .gitignore | */.gitignore | .gitattributes | */.gitattributes) return 0 ;;
        config/.keep) return 0 ;;
    esac
    return 1
}

missing=0
list="$(mktemp)"
trap 'rm -f "$list"' EXIT
git -C "$srcdir" ls-files > "$list"
while IFS= read -r f; do
    is_excluded "$f" && continue
    # deleted in the working tree but not yet in the index
    [ -e "$srcdir/$f" ] || continue
    if [ ! -e "$distdir/$f" ]; then
        echo "dist-check: $f is tracked by git but not in the tarball" >&2
        missing=$((missing + 1))
    fi
done < "$list"
if [ "$missing" -gt 0 ]; then
    echo "dist-check: $missing file(s) missing: add them to EXTRA_DIST (or a _SOURCES list) of their directory's Makefile.am" >&2
    exit 1
fi
echo "dist-check: every tracked file is in $distdir"
