# Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause
# tc_with_lib.m4: TC_WITH_LIB, the probe for an optional library.
#
# TC_WITH_LIB(name, header, library, function, description, [prologue])
# Sets have_<name>=yes|no and why_<name> (the reason when no); honours
# --with-<name> (missing library is an error) and --without-<name>. The
# name is added to the "optional libraries" line of the configure summary.
AC_DEFUN([TC_WITH_LIB], [
    AC_ARG_WITH([$1], [AS_HELP_STRING([--with-$1], [$5 (default: auto)])],
                [], [with_$1=auto])
    have_$1=no
    why_$1=""
    AS_IF([test "x$with_$1" = "xno"],
          [why_$1="--without-$1"],
          [AC_CHECK_HEADER([$2],
              [AC_CHECK_LIB([$3], [$4], [have_$1=yes], [why_$1="lib$3 not found"])],
              [why_$1="$2 not found"], [$6])
           AS_IF([test "x$with_$1" = "xyes" && test "x$have_$1" = "xno"],
                 [AC_MSG_ERROR([--with-$1 given but $why_$1])])])
    tc_optional_libs="$tc_optional_libs $1=$have_$1"
])
