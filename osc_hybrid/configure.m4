# Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause
# osc_hybrid/configure.m4: the OSC component "hybrid" (MPI one-sided
# communication over any BTL). It needs nothing beyond Open MPI's own
# headers and libmpi, which the top-level configure has checked. The OSC
# interface is 3.0.0 in both 4.1 and 5.0; what else differs is spelled in
# common/ompi/tc_ompi_compat.h.

TC_COMPONENT([osc_hybrid], [osc-hybrid], [test "x$OMPI_SERIES" = "x4.1" || test "x$OMPI_SERIES" = "x5.0"],
             [needs Open MPI 4.1 or 5.0 (this is $OMPI_SERIES)],
             [mca_osc_hybrid])
AM_CONDITIONAL([BUILD_OSC_HYBRID], [test "x$build_osc_hybrid" = "xyes"])
AC_CONFIG_FILES([osc_hybrid/Makefile])
TC_SUMMARY_ROW([osc_hybrid], [$build_osc_hybrid],
               [${why_osc_hybrid:-MPI one-sided over any BTL (active messages, BTL RDMA where present)}])
