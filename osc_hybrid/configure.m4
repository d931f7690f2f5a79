# Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause
# osc_hybrid/configure.m4: the OSC component "hybrid" (MPI one-sided
# communication over any BTL). It needs nothing beyond Open MPI's own
# headers and libmpi, which the top-level configure has checked. The OSC
# interface is 3.0.0 in 4.1 and 5.0 and the component compiles against
# 5.0.7 as it is, but there MPI_Accumulate gives wrong results (logical
# operations, SUM on several types), so it is left out of 5.0 for now.

TC_COMPONENT([osc_hybrid], [osc-hybrid], [test "x$OMPI_SERIES" = "x4.1"],
             [accumulate results wrong on Open MPI $OMPI_SERIES (4.1 only for now)],
             [mca_osc_hybrid])
AM_CONDITIONAL([BUILD_OSC_HYBRID], [test "x$build_osc_hybrid" = "xyes"])
AC_CONFIG_FILES([osc_hybrid/Makefile])
TC_SUMMARY_ROW([osc_hybrid], [$build_osc_hybrid],
               [${why_osc_hybrid:-MPI one-sided over any BTL (active messages, BTL RDMA where present)}])
