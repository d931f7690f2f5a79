#!/bin/sh
# Regenerate the build system (configure, Makefile.in) from configure.ac
# and the Makefile.am files.
# Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause
set -e
cd "$(dirname "$0")"
mkdir -p config
autoreconf --install --force --warnings=all
