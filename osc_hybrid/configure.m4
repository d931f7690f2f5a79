# osc_hybrid/configure.m4: configure fragment of the osc/hybrid component
# (MPI one-sided communication over any BTL). It needs nothing beyond Open
# MPI's own headers and libmpi, which the top-level configure has checked.

TC_COMPONENT([osc_hybrid], [osc-hybrid], [true], [])
AM_CONDITIONAL([BUILD_OSC_HYBRID], [test "x$build_osc_hybrid" = "xyes"])
AC_CONFIG_FILES([osc_hybrid/Makefile])
