# Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause
# osc_hybrid/configure.m4: the OSC component "hybrid" (MPI one-sided
# communication over any BTL). It needs nothing beyond Open MPI's own
# headers and libmpi, which the top-level configure has checked. The OSC
# interface is 3.0.0 in 4.1 and 5.0 and the component compiles against
# 5.0.7 as it is; it is built for both series (the wrong accumulate
# results seen on 5.0 came from osc/rdma's active-message emulation, which
# 5.0 selected for those windows; see docs/osc_hybrid.md).

TC_COMPONENT([osc_hybrid], [osc-hybrid], [true],
             [never disabled],
             [mca_osc_hybrid])
AM_CONDITIONAL([BUILD_OSC_HYBRID], [test "x$build_osc_hybrid" = "xyes"])
AC_CONFIG_FILES([osc_hybrid/Makefile])
TC_SUMMARY_ROW([osc_hybrid], [$build_osc_hybrid],
               [${why_osc_hybrid:-MPI one-sided over any BTL (active messages, BTL RDMA where present)}])
