# Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause
# btl_via/configure.m4: configure fragment of btl_via, included from
# configure.ac.  The emu provider (a software VI NIC between processes of
# one host) is always built; the verbs provider is built when libibverbs
# and its header are found (--without-ibverbs turns it off); the ofi
# provider (VIs as connected libfabric endpoints, across hosts) when
# libfabric 1.5 or later and its header are found (--without-libfabric).

TC_WITH_LIB([ibverbs], [infiniband/verbs.h], [ibverbs], [ibv_get_device_list], [libibverbs provider])
have_via_verbs=$have_ibverbs
why_via_verbs=$why_ibverbs
AS_IF([test "x$have_via_verbs" = "xyes"],
      [VIA_VERBS_LIBS="-libverbs"
       AC_DEFINE([TC_HAVE_VIA_VERBS], [1], [btl_via's verbs provider is built])])
AC_SUBST([VIA_VERBS_LIBS])
AM_CONDITIONAL([BUILD_VIA_VERBS], [test "x$have_via_verbs" = "xyes"])

TC_WITH_LIB([libfabric], [rdma/fabric.h], [fabric], [fi_getinfo], [libfabric provider of btl_via])
have_via_ofi=$have_libfabric
why_via_ofi=$why_libfabric
AS_IF([test "x$have_via_ofi" = "xyes"],
      [AC_MSG_CHECKING([for libfabric >= 1.5 (FI_MR_PROV_KEY, fi_writemsg with remote CQ data)])
       AC_COMPILE_IFELSE([AC_LANG_PROGRAM([[#include <rdma/fabric.h>
#include <rdma/fi_rma.h>]], [[
#if FI_MAJOR_VERSION < 1 || (FI_MAJOR_VERSION == 1 && FI_MINOR_VERSION < 5)
#error libfabric too old
#endif
int m = FI_MR_PROV_KEY | FI_MR_VIRT_ADDR | FI_MR_LOCAL; (void) m;]])],
           [AC_MSG_RESULT([yes])],
           [AC_MSG_RESULT([no])
            have_via_ofi=no
            why_via_ofi="libfabric older than 1.5"])])
AS_IF([test "x$have_via_ofi" = "xyes"],
      [VIA_OFI_LIBS="-lfabric"
       AC_DEFINE([TC_HAVE_VIA_OFI], [1], [btl_via's libfabric (ofi) provider is built])])
AC_SUBST([VIA_OFI_LIBS])
AM_CONDITIONAL([BUILD_VIA_OFI], [test "x$have_via_ofi" = "xyes"])

TC_COMPONENT([btl_via], [btl-via], [true], [], [mca_btl_via])
AM_CONDITIONAL([BUILD_BTL_VIA], [test "x$build_btl_via" = "xyes"])
AC_CONFIG_FILES([btl_via/Makefile])
TC_COMPONENT_TESTS([tests/via])
btl_via_providers="emu"
AS_IF([test "x$have_via_verbs" = "xyes"],
      [btl_via_providers="$btl_via_providers verbs"],
      [btl_via_providers="$btl_via_providers (no verbs: $why_via_verbs)"])
AS_IF([test "x$have_via_ofi" = "xyes"],
      [btl_via_providers="$btl_via_providers ofi"],
      [btl_via_providers="$btl_via_providers (no ofi: $why_via_ofi)"])
TC_SUMMARY_ROW([btl_via], [$build_btl_via], [${why_btl_via:-providers: $btl_via_providers}])
