# Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause
# btl_sci/configure.m4: the BTL over SCI remote-write segments. Its shm
# provider needs nothing beyond libc and Open MPI; its ofi provider
# (segments across hosts over libfabric RMA) is built when libfabric's
# header and library are found (--without-libfabric: not).

TC_COMPONENT([btl_sci], [btl-sci], [true], [], [mca_btl_sci])
have_sci_ofi=no
SCI_OFI_LIBS=
AS_IF([test "x$build_btl_sci" = "xyes" && test "x$with_libfabric" != "xno"],
      [AC_CHECK_HEADER([rdma/fi_rma.h],
                       [AC_CHECK_LIB([fabric], [fi_getinfo], [have_sci_ofi=yes])])])
AS_IF([test "x$have_sci_ofi" = "xyes"],
      [SCI_OFI_LIBS="-lfabric"
       AC_DEFINE([TC_HAVE_SCI_OFI], [1], [btl_sci's libfabric (ofi) provider is built])])
AC_SUBST([SCI_OFI_LIBS])
AM_CONDITIONAL([BUILD_SCI_OFI], [test "x$have_sci_ofi" = "xyes"])
AM_CONDITIONAL([BUILD_BTL_SCI], [test "x$build_btl_sci" = "xyes"])
AC_CONFIG_FILES([btl_sci/Makefile])
TC_SUMMARY_ROW([btl_sci], [$build_btl_sci],
               [${why_btl_sci:-shm provider (SCI remote writes over shared segments, CMA DMA)}; ofi provider: $have_sci_ofi])
TC_COMPONENT_TESTS([tests/sci])
