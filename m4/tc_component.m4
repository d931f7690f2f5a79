# Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause
# tc_component.m4: TC_COMPONENT, the build decision for one component.
#
# TC_COMPONENT(var, option, condition, reason-if-not, [mca-libraries])
# Sets build_<var>=yes|no and why_<var>; --disable-<option> turns it off.
# mca-libraries (e.g. mca_btl_sci) are the Open MPI components the
# directory installs: they join TC_MCA_COMPONENTS, the list the top
# Makefile's install and uninstall hooks walk.
AC_DEFUN([TC_COMPONENT], [
    AC_ARG_ENABLE([$2], [AS_HELP_STRING([--disable-$2], [do not build $2])],
                  [], [enable_$1=yes])
    build_$1=no
    why_$1=""
    AS_IF([test "x$enable_$1" = "xno"],
          [why_$1="--disable-$2"],
          [AS_IF([$3], [build_$1=yes], [why_$1="$4"])])
    m4_ifnblank([$5], [TC_MCA_COMPONENTS="$TC_MCA_COMPONENTS $5"])
    AC_SUBST([TC_MCA_COMPONENTS])
])

# TC_COMPONENT_TESTS(dir)
# A component's own MPI/script tests in DIR (tests/<comp>) with their own
# Makefile.am: configured here, and run by `make check` after the build
# and the common suites (the top Makefile's SUBDIRS names
# $(TC_TEST_SUBDIRS)). Call it from the component's configure.m4.
AC_DEFUN([TC_COMPONENT_TESTS], [
    AC_CONFIG_FILES([$1/Makefile])
    TC_TEST_SUBDIRS="$TC_TEST_SUBDIRS $1"
    AC_SUBST([TC_TEST_SUBDIRS])
])
