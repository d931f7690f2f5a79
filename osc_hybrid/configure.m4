# Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause
# osc_hybrid/configure.m4: the OSC component "hybrid" (MPI one-sided
# communication over any BTL). It needs nothing beyond Open MPI's own
# headers and libmpi, which the top-level configure has checked. It is
# written against the OSC interface of the 4.1 series (osc 3.0.0); 5.0
# changed that interface, so it is left out there.

TC_COMPONENT([osc_hybrid], [osc-hybrid], [test "x$OMPI_SERIES" = "x4.1"],
             [written for the OSC interface of Open MPI 4.1 (this is $OMPI_SERIES)],
             [mca_osc_hybrid])
AM_CONDITIONAL([BUILD_OSC_HYBRID], [test "x$build_osc_hybrid" = "xyes"])
AC_CONFIG_FILES([osc_hybrid/Makefile])
TC_SUMMARY_ROW([osc_hybrid], [$build_osc_hybrid],
               [${why_osc_hybrid:-MPI one-sided over any BTL (active messages, BTL RDMA where present)}])
