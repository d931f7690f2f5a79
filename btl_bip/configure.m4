# btl_bip/configure.m4: the bip BTL (BIP-style static receive queue with
# MPI-BIP's credits; shm provider: shared segment + CMA). Needs nothing
# beyond Open MPI and the common library.
TC_COMPONENT([btl_bip], [btl-bip], [true], [])
AM_CONDITIONAL([BUILD_BTL_BIP], [test "x$build_btl_bip" = "xyes"])
AC_CONFIG_FILES([btl_bip/Makefile])
