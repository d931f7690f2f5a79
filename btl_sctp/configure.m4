# Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause
# btl_sctp/configure.m4: the BTL over SCTP. Two stacks: the kernel's
# through libsctp and the user-space usrsctp; either one is enough.

TC_WITH_LIB([usrsctp], [usrsctp.h], [usrsctp], [usrsctp_init_nothreads], [usrsctp user-space SCTP stack])
TC_WITH_LIB([libsctp], [netinet/sctp.h], [sctp], [sctp_sendmsg], [kernel SCTP through libsctp],
            [#include <sys/types.h>
             #include <sys/socket.h>
             #include <netinet/in.h>])
AS_IF([test "x$have_usrsctp" = "xyes"], [USRSCTP_LIBS="-lusrsctp"])
AS_IF([test "x$have_libsctp" = "xyes"], [SCTP_LIBS="-lsctp"])
AC_SUBST([USRSCTP_CFLAGS])
AC_SUBST([USRSCTP_LIBS])
AC_SUBST([SCTP_LIBS])
AM_CONDITIONAL([HAVE_USRSCTP], [test "x$have_usrsctp" = "xyes"])
AM_CONDITIONAL([HAVE_LIBSCTP], [test "x$have_libsctp" = "xyes"])
AS_IF([test "x$have_usrsctp" = "xyes"], [AC_DEFINE([TC_HAVE_USRSCTP], [1], [usrsctp is available])])
AS_IF([test "x$have_libsctp" = "xyes"], [AC_DEFINE([TC_HAVE_LIBSCTP], [1], [libsctp is available])])

TC_COMPONENT([btl_sctp], [btl-sctp],
             [test "x$have_usrsctp" = "xyes" || test "x$have_libsctp" = "xyes"],
             [neither usrsctp nor libsctp found], [mca_btl_sctp])
AM_CONDITIONAL([BUILD_BTL_SCTP], [test "x$build_btl_sctp" = "xyes"])
AC_CONFIG_FILES([btl_sctp/Makefile])
TC_COMPONENT_TESTS([tests/sctp])

btl_sctp_stacks=""
AS_IF([test "x$have_libsctp" = "xyes"], [btl_sctp_stacks="kernel"])
AS_IF([test "x$have_usrsctp" = "xyes"], [btl_sctp_stacks="$btl_sctp_stacks user"])
TC_SUMMARY_ROW([btl_sctp], [$build_btl_sctp], [${why_btl_sctp:-stacks:$btl_sctp_stacks}])
