# btl_via/configure.m4: configure fragment of btl_via, included from
# configure.ac.  The emu provider (a software VI NIC between processes of
# one host) is always built; the verbs provider is built when libibverbs
# and its header are found (--without-via-verbs turns it off).

AC_ARG_WITH([via-verbs],
    [AS_HELP_STRING([--with-via-verbs],
        [build btl_via's verbs provider over libibverbs (default: auto)])],
    [], [with_via_verbs=auto])
have_via_verbs=no
why_via_verbs=""
AS_IF([test "x$with_via_verbs" = "xno"],
      [why_via_verbs="--without-via-verbs"],
      [AC_CHECK_HEADER([infiniband/verbs.h],
          [AC_CHECK_LIB([ibverbs], [ibv_get_device_list],
              [AC_CHECK_DECL([ibv_reg_mr], [have_via_verbs=yes],
                  [why_via_verbs="infiniband/verbs.h has no ibv_reg_mr"],
                  [#include <infiniband/verbs.h>])],
              [why_via_verbs="libibverbs not found"])],
          [why_via_verbs="infiniband/verbs.h not found"])
       AS_IF([test "x$with_via_verbs" = "xyes" && test "x$have_via_verbs" = "xno"],
             [AC_MSG_ERROR([--with-via-verbs given but $why_via_verbs])])])
AS_IF([test "x$have_via_verbs" = "xyes"],
      [VIA_VERBS_LIBS="-libverbs"
       AC_DEFINE([TC_HAVE_VIA_VERBS], [1], [btl_via's verbs provider is built])])
AC_SUBST([VIA_VERBS_LIBS])
AM_CONDITIONAL([BUILD_VIA_VERBS], [test "x$have_via_verbs" = "xyes"])

tc_optional_libs="$tc_optional_libs via-verbs=$have_via_verbs"

TC_COMPONENT([btl_via], [btl-via], [true], [], [mca_btl_via])
AM_CONDITIONAL([BUILD_BTL_VIA], [test "x$build_btl_via" = "xyes"])
AC_CONFIG_FILES([btl_via/Makefile])
TC_COMPONENT_TESTS([tests/via])
AS_IF([test "x$have_via_verbs" = "xyes"],
      [btl_via_providers="emu verbs"],
      [btl_via_providers="emu (no verbs: $why_via_verbs)"])
TC_SUMMARY_ROW([btl_via], [$build_btl_via], [${why_btl_via:-providers: $btl_via_providers}])
