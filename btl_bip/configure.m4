# Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause
# btl_bip/configure.m4: the BTL over BIP-style queues with MPI-BIP's
# credits. Its shm provider (shared segment + CMA) needs nothing beyond
# libc and Open MPI.

TC_COMPONENT([btl_bip], [btl-bip], [true], [], [mca_btl_bip])
AM_CONDITIONAL([BUILD_BTL_BIP], [test "x$build_btl_bip" = "xyes"])
AC_CONFIG_FILES([btl_bip/Makefile])
TC_SUMMARY_ROW([btl_bip], [$build_btl_bip],
               [${why_btl_bip:-shm provider (BIP static receive queue, MPI-BIP credits, CMA)}])
TC_COMPONENT_TESTS([tests/bip])
