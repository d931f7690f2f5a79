# Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause
# tc_summary.m4: the table configure prints at the end.
#
# TC_SUMMARY_ROW(name, status, reason)
# Adds one row. status is a shell word: "yes" prints "built", "no" prints
# "not built", anything else is printed as is. status and reason are
# expanded by the shell when the summary is printed (after AC_OUTPUT), so
# they may name variables such as $build_<var> and ${why_<var>:-text}.
# Rows appear in the order of the TC_SUMMARY_ROW calls, i.e. of the
# m4_include lines in configure.ac.
AC_DEFUN([TC_SUMMARY_ROW],
    [m4_append([_TC_SUMMARY_ROWS], [tc_summary_row "$1" "$2" "$3"
])])

# TC_SUMMARY_OUTPUT: print the table (call once, after AC_OUTPUT).
AC_DEFUN([TC_SUMMARY_OUTPUT], [
tc_summary_row() {
    case "$[]2" in
        yes) tc_status=built ;;
        no) tc_status="not built" ;;
        *) tc_status="$[]2" ;;
    esac
    printf '  %-12s %-10s %s\n' "$[]1" "$tc_status" "$[]3"
}
echo ""
echo "ompi-transports $PACKAGE_VERSION configured against Open MPI $OMPI_RT_VERSION"
echo "  components install into: $ompicomponentdir"
echo ""
tc_summary_row "component" "status" "reason"
tc_summary_row "---------" "------" "------"
m4_ifdef([_TC_SUMMARY_ROWS], [m4_defn([_TC_SUMMARY_ROWS])])
echo ""
echo "  optional libraries:$tc_optional_libs"
echo ""
])
