# Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause
# btl_via/configure.m4: configure fragment of btl_via, included from
# configure.ac.  The emu provider (a software VI NIC between processes of
# one host) is always built; the verbs provider is built when libibverbs
# and its header are found (--without-ibverbs turns it off).

TC_WITH_LIB([ibverbs], [infiniband/verbs.h], [ibverbs], [ibv_get_device_list], [libibverbs provider])
have_via_verbs=$have_ibverbs
why_via_verbs=$why_ibverbs
AS_IF([test "x$have_via_verbs" = "xyes"],
      [VIA_VERBS_LIBS="-libverbs"
       AC_DEFINE([TC_HAVE_VIA_VERBS], [1], [btl_via's verbs provider is built])])
AC_SUBST([VIA_VERBS_LIBS])
AM_CONDITIONAL([BUILD_VIA_VERBS], [test "x$have_via_verbs" = "xyes"])

TC_COMPONENT([btl_via], [btl-via], [true], [], [mca_btl_via])
AM_CONDITIONAL([BUILD_BTL_VIA], [test "x$build_btl_via" = "xyes"])
AC_CONFIG_FILES([btl_via/Makefile])
TC_COMPONENT_TESTS([tests/via])
AS_IF([test "x$have_via_verbs" = "xyes"],
      [btl_via_providers="emu verbs"],
      [btl_via_providers="emu (no verbs: $why_via_verbs)"])
TC_SUMMARY_ROW([btl_via], [$build_btl_via], [${why_btl_via:-providers: $btl_via_providers}])
