# osc_hybrid/configure.m4: the OSC component "hybrid" (MPI one-sided
# communication over any BTL). It needs nothing beyond Open MPI's own
# headers and libmpi, which the top-level configure has checked.

TC_COMPONENT([osc_hybrid], [osc-hybrid], [true], [], [mca_osc_hybrid])
AM_CONDITIONAL([BUILD_OSC_HYBRID], [test "x$build_osc_hybrid" = "xyes"])
AC_CONFIG_FILES([osc_hybrid/Makefile])
TC_SUMMARY_ROW([osc_hybrid], [$build_osc_hybrid],
               [${why_osc_hybrid:-MPI one-sided over any BTL (active messages, BTL RDMA where present)}])
