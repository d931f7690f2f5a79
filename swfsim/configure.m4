# Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause
# swfsim/configure.m4: the SockModel network simulator (a program, not an
# Open MPI component; btl_swf needs it).

TC_COMPONENT([swfsim], [swfsim], [true], [])
AM_CONDITIONAL([BUILD_SWFSIM], [test "x$build_swfsim" = "xyes"])
AC_CONFIG_FILES([swfsim/Makefile])
TC_SUMMARY_ROW([swfsim], [$build_swfsim], [${why_swfsim:-SockModel simulator (simpel, torus)}])
TC_COMPONENT_TESTS([tests/swfsim])
