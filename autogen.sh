#!/bin/sh
# Regenerate the build system (configure, Makefile.in) from configure.ac
# and the Makefile.am files.
set -e
cd "$(dirname "$0")"
mkdir -p config
autoreconf --install --force --warnings=all
