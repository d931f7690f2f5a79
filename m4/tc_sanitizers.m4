# Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause
# tc_sanitizers.m4: --enable-sanitizers builds everything (components,
# libraries, simulator, unit and MPI test programs) with AddressSanitizer
# and UndefinedBehaviorSanitizer; undefined behaviour is fatal.
#
# The components are loaded by an Open MPI built without sanitizers, and
# ASan's runtime must be the first library of a process: SANITIZER_PRELOAD
# is the absolute path of libasan, which make check puts into LD_PRELOAD
# of every MPI process (tests/lib/transports.sh, TRANSPORTS_PRELOAD).
#
# TC_SANITIZERS: call once, after the compiler checks.
AC_DEFUN([TC_SANITIZERS], [
AC_ARG_ENABLE([sanitizers],
    [AS_HELP_STRING([--enable-sanitizers],
        [build everything with AddressSanitizer and UndefinedBehaviorSanitizer
         (make check then preloads the ASan runtime into the MPI processes)])],
    [], [enable_sanitizers=no])
SANITIZER_PRELOAD=
tc_san_status=off
AS_IF([test "x$enable_sanitizers" = "xyes"], [
    tc_san_status=on
    tc_san_flags="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
    tc_san_save_CFLAGS="$CFLAGS"
    tc_san_save_LDFLAGS="$LDFLAGS"
    CFLAGS="$CFLAGS $tc_san_flags"
    LDFLAGS="$LDFLAGS $tc_san_flags"
    AC_MSG_CHECKING([whether $CC links with $tc_san_flags])
    AC_LINK_IFELSE([AC_LANG_PROGRAM([], [])], [AC_MSG_RESULT([yes])],
        [AC_MSG_RESULT([no])
         AC_MSG_ERROR([--enable-sanitizers: $CC cannot build with $tc_san_flags (install the compiler's libasan and libubsan)])])
    AC_MSG_CHECKING([for the ASan runtime to preload])
    SANITIZER_PRELOAD=`$CC -print-file-name=libasan.so`
    AS_CASE([$SANITIZER_PRELOAD],
        [/*], [AC_MSG_RESULT([$SANITIZER_PRELOAD])],
        [AC_MSG_RESULT([not found])
         AC_MSG_ERROR([--enable-sanitizers: $CC does not name its libasan.so (-print-file-name)])])
    AS_UNSET([tc_san_save_CFLAGS])
    AS_UNSET([tc_san_save_LDFLAGS])
])
AC_SUBST([SANITIZER_PRELOAD])
TC_SUMMARY_ROW([sanitizers], [$tc_san_status], [ASan and UBSan (--enable-sanitizers)])

# ThreadSanitizer for the unit tests of the progress guards (built only
# without --enable-sanitizers: ASan and TSan exclude each other)
have_tsan=no
AS_IF([test "x$enable_sanitizers" != "xyes"], [
    tc_san_save_CFLAGS="$CFLAGS"
    tc_san_save_LDFLAGS="$LDFLAGS"
    CFLAGS="$CFLAGS -fsanitize=thread"
    LDFLAGS="$LDFLAGS -fsanitize=thread"
    AC_MSG_CHECKING([whether $CC builds with ThreadSanitizer])
    AC_LINK_IFELSE([AC_LANG_PROGRAM([], [])], [have_tsan=yes])
    AC_MSG_RESULT([$have_tsan])
    CFLAGS="$tc_san_save_CFLAGS"
    LDFLAGS="$tc_san_save_LDFLAGS"
    AS_UNSET([tc_san_save_CFLAGS])
    AS_UNSET([tc_san_save_LDFLAGS])
])
AM_CONDITIONAL([HAVE_TSAN], [test "x$have_tsan" = "xyes"])
])
