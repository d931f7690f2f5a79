#!/usr/bin/env bash
# format-check.sh: compare C sources with what clang-format makes of them
# under the project's .clang-format; changes nothing.
#
#   scripts/format-check.sh [--strict] [FILE...]
#
# Without FILE: every tracked .c and .h file. Prints one line per file that
# departs from the layout ("N lines differ: FILE") and a summary line
# "format: N files clean, N differ". Exit status 0, or with --strict 1
# when a file differs (use it on new files: `make format-check
# FORMAT_STRICT=1 FORMAT_FILES='btl_foo/*.c btl_foo/*.h'`). Exit 77 when
# clang-format is not installed.
# Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause
set -u

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"
strict=0
if [ "${1:-}" = "--strict" ]; then
    strict=1
    shift
fi
fmt="${CLANG_FORMAT:-clang-format}"
if ! command -v "$fmt" > /dev/null 2>&1; then
    echo "format: $fmt not found (Debian: apt-get install clang-format); nothing checked"
    exit 77
fi

if [ $# -gt 0 ]; then
    files=("$@")
elif git rev-parse --is-inside-work-tree > /dev/null 2>&1; then
    mapfile -t files < <(git ls-files '*.c' '*.h')
else
    mapfile -t files < <(find . -name '*.[ch]' -not -path './config/*' | sed 's|^\./||' | sort)
fi

clean=0
differ=0
for f in "${files[@]}"; do
    [ -f "$f" ] || continue
    n=$("$fmt" --style=file "$f" | diff "$f" - | grep -c '^<')
    if [ "$n" -eq 0 ]; then
        clean=$((clean + 1))
    else
        differ=$((differ + 1))
        echo "$n lines differ: $f"
    fi
done
echo "format: $clean files clean, $differ differ"
if [ $strict -eq 1 ] && [ $differ -gt 0 ]; then
    exit 1
fi
exit 0
