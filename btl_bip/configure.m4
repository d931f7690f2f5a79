# Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause
# btl_bip/configure.m4: the BTL over BIP-style queues with MPI-BIP's
# credits. Its shm provider (shared segment + CMA) needs nothing beyond
# libc and Open MPI; its ofi provider (peers on other hosts) is built
# when libfabric and its header are found (--without-libfabric: not).

TC_COMPONENT([btl_bip], [btl-bip], [true], [], [mca_btl_bip])
AM_CONDITIONAL([BUILD_BTL_BIP], [test "x$build_btl_bip" = "xyes"])
have_bip_ofi=no
AS_IF([test "x$with_libfabric" != "xno"],
      [AC_CHECK_HEADER([rdma/fabric.h],
          [AC_CHECK_LIB([fabric], [fi_getinfo], [have_bip_ofi=yes])])])
AS_IF([test "x$have_bip_ofi" = "xyes"], [BIP_OFI_LIBS="-lfabric"])
AC_SUBST([BIP_OFI_LIBS])
AM_CONDITIONAL([BUILD_BIP_OFI], [test "x$have_bip_ofi" = "xyes"])
AC_CONFIG_FILES([btl_bip/Makefile])
AS_IF([test "x$have_bip_ofi" = "xyes"],
      [btl_bip_providers="shm provider (BIP static receive queue, MPI-BIP credits, CMA), ofi provider (libfabric)"],
      [btl_bip_providers="shm provider (BIP static receive queue, MPI-BIP credits, CMA); no ofi (libfabric not found)"])
TC_SUMMARY_ROW([btl_bip], [$build_btl_bip],
               [${why_btl_bip:-$btl_bip_providers}])
TC_COMPONENT_TESTS([tests/bip])
