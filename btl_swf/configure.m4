# Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause
# btl_swf/configure.m4: the BTL that talks SockModel to swfsim; it starts
# the simulator for a job, so it is built only with swfsim (included after
# swfsim/configure.m4).

TC_COMPONENT([btl_swf], [btl-swf], [test "x$build_swfsim" = "xyes"],
             [needs swfsim (--disable-swfsim given)], [mca_btl_swf])
AM_CONDITIONAL([BUILD_BTL_SWF], [test "x$build_btl_swf" = "xyes"])
AC_CONFIG_FILES([btl_swf/Makefile])
TC_SUMMARY_ROW([btl_swf], [$build_btl_swf], [${why_btl_swf:-SockModel client}])
TC_COMPONENT_TESTS([tests/swf])
