# Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause
# btl_sci/configure.m4: the BTL over SCI remote-write segments. Its shm
# provider needs nothing beyond libc and Open MPI.

TC_COMPONENT([btl_sci], [btl-sci], [true], [], [mca_btl_sci])
AM_CONDITIONAL([BUILD_BTL_SCI], [test "x$build_btl_sci" = "xyes"])
AC_CONFIG_FILES([btl_sci/Makefile])
TC_SUMMARY_ROW([btl_sci], [$build_btl_sci],
               [${why_btl_sci:-shm provider (SCI remote writes over shared segments, CMA DMA)}])
TC_COMPONENT_TESTS([tests/sci])
