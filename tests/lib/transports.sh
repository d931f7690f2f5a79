# Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause
# transports.sh: shell helpers shared by tests/mpi/run, bench/run and the
# scripts of tests/cluster and tests/<comp> (bash).
#
# They find the build tree, collect the components built there into a
# private component directory (copies, never symlinks), build the mpirun
# command line (run-as-root, oversubscription, component path), and load a
# transport's settings from tests/btl.d/NAME.conf (format: docs/testing.md).
#
# Source this file, then call tr_init "$script_dir"; call tr_cleanup on exit.

# Directories, set by tr_init.
TR_SRCDIR=""        # top of the source tree (holds tests/btl.d)
TR_BUILDDIR=""      # top of the build tree (holds */.libs/mca_*.so)
TR_TMPDIR=""        # private scratch directory, removed by tr_cleanup
TR_COMPDIR=""       # the private component directory inside TR_TMPDIR
TR_SYSCOMPDIR=""    # Open MPI's own component directory
TR_COMPPATH=""      # value for mca_base_component_path
TR_TREE_COMPONENTS=()  # framework_name of each component found in the tree
TR_TREE_BTLS=()        # names of the BTL components found in the tree
TR_NCORES=1
TR_OMPI_SERIES=""   # Open MPI's release series, e.g. 4.1 or 5.0
TR_TMPDIR_PARAM=""  # MCA parameter for the session directories' base
TR_CLUSTER=""       # cluster mode: the number of fake hosts (else empty)
TR_CLUSTER_SH=""    # scripts/cluster.sh of the source tree
TR_CLUSTER_OWN=0    # 1 when tr_cluster_init brought the cluster up

tr_die() {
    echo "$(basename "$0"): $*" >&2
    exit 2
}

tr_note() {
    echo "$(basename "$0"): $*" >&2
}

# tr_usage [STATUS]: prints the calling script's header comment (from its
# second line to the first line that is not a comment) and exits.
tr_usage() {
    sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p;}' "$0"
    exit "${1:-0}"
}

# tr_init SCRIPT_DIR: SCRIPT_DIR is tests/mpi or bench, in the source tree
# (the script's own directory). TRANSPORTS_SRCDIR and TRANSPORTS_BUILDDIR
# override the guesses; make check sets both.
tr_init() {
    local here="$1"

    TR_SRCDIR="${TRANSPORTS_SRCDIR:-$(cd "$here/../.." 2>/dev/null && pwd)}"
    if [ -z "${TRANSPORTS_SRCDIR:-}" ] && [ ! -d "$TR_SRCDIR/tests/btl.d" ]; then
        TR_SRCDIR="$(cd "$here/.." && pwd)"
    fi
    TR_BUILDDIR="${TRANSPORTS_BUILDDIR:-}"
    if [ -z "$TR_BUILDDIR" ]; then
        # In-tree build: the script's tree is the build tree. Otherwise the
        # caller must say where the build tree is.
        TR_BUILDDIR="$TR_SRCDIR"
        if [ ! -f "$TR_BUILDDIR/config.status" ] && [ -f ./config.status ]; then
            TR_BUILDDIR="$(pwd)"
        fi
    fi
    [ -d "$TR_BUILDDIR" ] || tr_die "build tree $TR_BUILDDIR not found"
    TR_BUILDDIR="$(cd "$TR_BUILDDIR" && pwd)"

    TR_NCORES="$(nproc 2>/dev/null || getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)"
    TR_TMPDIR="$(mktemp -d "${TMPDIR:-/tmp}/transports.XXXXXX")" ||
        tr_die "cannot create a temporary directory"
    chmod 700 "$TR_TMPDIR"
    # Marks the processes of our jobs (ranks inherit mpirun's environment),
    # so that leftovers are told apart from other people's runs.
    TRANSPORTS_RUN_ID="$(basename "$TR_TMPDIR")"
    export TRANSPORTS_RUN_ID
    TR_COMPDIR="$TR_TMPDIR/components"
    mkdir "$TR_COMPDIR"
    tr_find_system_components
    tr_collect_components
    tr_find_series
}

# The release series of the Open MPI on PATH and what differs with it for
# the scripts (for C: common/ompi/tc_ompi_compat.h): 5.0's mpirun is
# prte's, so its session directories follow prte_tmpdir_base.
tr_find_series() {
    TR_OMPI_SERIES="$(ompi_info --version 2>/dev/null |
                      sed -n 's/^Open MPI v\([0-9]*\.[0-9]*\).*/\1/p' | head -n 1)"
    case "$TR_OMPI_SERIES" in
        4.*) TR_TMPDIR_PARAM=orte_tmpdir_base ;;
        *) TR_TMPDIR_PARAM=prte_tmpdir_base ;;
    esac
}

tr_cleanup() {
    if [ -n "$TR_TMPDIR" ] && [ -d "$TR_TMPDIR" ]; then
        rm -rf "$TR_TMPDIR"
    fi
    TR_TMPDIR=""
}

# Open MPI's own component directory, from ompi_info (falls back to the
# pkglibdir of mpicc's library directory). Only an existing directory will
# do: a missing one on the path stops the component scan.
tr_find_system_components() {
    local dir=""

    dir="$(ompi_info --parsable --path pkglibdir 2>/dev/null |
           sed -n 's/^path:pkglibdir://p' | head -n 1)"
    if [ -z "$dir" ] || [ ! -d "$dir" ]; then
        local libdir
        libdir="$(ompi_info --parsable --path libdir 2>/dev/null |
                  sed -n 's/^path:libdir://p' | head -n 1)"
        for cand in "$libdir/openmpi3" "$libdir/openmpi40" "$libdir/openmpi"; do
            if [ -n "$libdir" ] && [ -d "$cand" ]; then
                dir="$cand"
                break
            fi
        done
    fi
    [ -n "$dir" ] && [ -d "$dir" ] ||
        tr_die "cannot find Open MPI's component directory (is ompi_info installed?)"
    TR_SYSCOMPDIR="$dir"
}

# Copies every component built in the tree (*/.libs/mca_*.so, one level
# below the top and also inside nested component dirs) into TR_COMPDIR.
tr_collect_components() {
    local so base name

    TR_TREE_COMPONENTS=()
    TR_TREE_BTLS=()
    shopt -s nullglob
    for so in "$TR_BUILDDIR"/*/.libs/mca_*.so "$TR_BUILDDIR"/*/*/.libs/mca_*.so; do
        # A dangling symlink in the component dir would stop the scan.
        [ -f "$so" ] || continue
        base="$(basename "$so")"
        if [ -e "$TR_COMPDIR/$base" ]; then
            tr_note "warning: $base found twice in the build tree, using the first"
            continue
        fi
        cp -L "$so" "$TR_COMPDIR/$base" || tr_die "cannot copy $so"
        name="${base#mca_}"
        name="${name%.so}"
        TR_TREE_COMPONENTS+=("$name")
        case "$name" in
            btl_*) TR_TREE_BTLS+=("${name#btl_}") ;;
        esac
    done
    shopt -u nullglob
    TR_COMPPATH="$TR_COMPDIR:$TR_SYSCOMPDIR"
}

# The default list of transports: vader, tcp, each BTL built in the tree,
# and each extra configuration NAME-*.conf that a built BTL ships.
tr_default_btls() {
    local list="vader tcp" b conf

    for b in "${TR_TREE_BTLS[@]}"; do
        list="$list $b"
        for conf in "$TR_SRCDIR"/tests/btl.d/"$b"-*.conf; do
            [ -f "$conf" ] || continue
            conf="$(basename "$conf" .conf)"
            list="$list $conf"
        done
    done
    echo "$list"
}

# tr_load_btl NAME: sets BTL_NAME, BTL_SELECT, BTL_KIND, BTL_MCA_ARGS,
# BTL_NP_MAX, BTL_NP, BTL_SKIP_TESTS and the functions btl_setup/btl_teardown from
# tests/btl.d/NAME.conf, or defaults when there is no such file. The
# fragment runs in this shell with BTL_NAME, TR_SRCDIR, TR_BUILDDIR,
# TR_COMPDIR and BTL_TMPDIR (a private scratch dir for this transport) set.
tr_load_btl() {
    local name="$1" conf

    BTL_NAME="$name"
    BTL_SELECT="self,$name"
    BTL_KIND="host"
    BTL_MCA_ARGS=()
    BTL_NP_MAX=""
    BTL_NP=""
    BTL_SKIP_TESTS=()
    BTL_OTHER_JOB=""
    BTL_TMPDIR="$TR_TMPDIR/btl-$name"
    mkdir -p "$BTL_TMPDIR"
    btl_setup() { :; }
    btl_teardown() { :; }
    conf="$TR_SRCDIR/tests/btl.d/$name.conf"
    if [ -f "$conf" ]; then
        # shellcheck disable=SC1090
        . "$conf" || tr_die "error in $conf"
    fi
    case "$BTL_KIND" in
        host|network) ;;
        *) tr_die "$conf: BTL_KIND must be host or network, not '$BTL_KIND'" ;;
    esac
}

# tr_mpirun_args NP [EXTRA]: fills the array TR_MPIRUN with mpirun and its
# options for NP ranks over the loaded transport (run tr_load_btl first);
# EXTRA: processes the program spawns (counted for oversubscription).
tr_mpirun_args() {
    local np="$1" all=$(($1 + ${2:-0}))

    if [ -n "$TR_CLUSTER" ]; then
        # across the fake hosts, consecutive ranks on different hosts;
        # cluster.sh allows root and sets the hosts' interfaces
        TR_MPIRUN=(bash "$TR_CLUSTER_SH" run -np "$np" --map-by node)
        if [ "$all" -gt $((TR_NCORES * TR_CLUSTER)) ]; then
            TR_MPIRUN+=(--oversubscribe)
        fi
    else
        TR_MPIRUN=(mpirun -np "$np")
        if [ "$(id -u)" -eq 0 ]; then
            TR_MPIRUN+=(--allow-run-as-root)
        fi
        if [ "$all" -gt "$TR_NCORES" ]; then
            TR_MPIRUN+=(--oversubscribe)
        fi
    fi
    TR_MPIRUN+=(--mca mca_base_component_path "$TR_COMPPATH")
    TR_MPIRUN+=(--mca btl "$BTL_SELECT")
    TR_MPIRUN+=("${BTL_MCA_ARGS[@]}")
    tr_sanitizer_args
    TR_MPIRUN+=("${TR_SAN_ARGS[@]}")
}

# tr_sanitizer_args: fills the array TR_SAN_ARGS with the mpirun arguments
# of a build with --enable-sanitizers (make check sets TRANSPORTS_PRELOAD):
# ASan's runtime first in every rank (Open MPI is not built with it), and
# Open MPI's own leaks not reported. Empty otherwise.
tr_sanitizer_args() {
    TR_SAN_ARGS=()
    if [ -n "${TRANSPORTS_PRELOAD:-}" ]; then
        TR_SAN_ARGS+=(-x "LD_PRELOAD=$TRANSPORTS_PRELOAD")
        TR_SAN_ARGS+=(-x "ASAN_OPTIONS=detect_leaks=0:abort_on_error=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}")
        TR_SAN_ARGS+=(-x "UBSAN_OPTIONS=print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}")
    fi
}

# tr_cluster_init N: cluster mode over N fake hosts (scripts/cluster.sh,
# the cluster named $TC_CLUSTER, default tc). A cluster of N hosts that is
# up already is used as it is; otherwise one is brought up (N hosts, 2
# networks) and TR_CLUSTER_OWN says that the caller must take it down.
tr_cluster_init() {
    local n="$1" hosts

    TR_CLUSTER_SH="$TR_SRCDIR/scripts/cluster.sh"
    [ -f "$TR_CLUSTER_SH" ] || tr_die "cluster mode needs $TR_CLUSTER_SH"
    [ "$(id -u)" -eq 0 ] || tr_die "cluster mode needs root (network namespaces)"
    hosts="$(bash "$TR_CLUSTER_SH" status 2>/dev/null | grep -c '^h[0-9]* net1 ')"
    if [ "$hosts" != "$n" ]; then
        bash "$TR_CLUSTER_SH" up --hosts "$n" --nets 2 >"$TR_TMPDIR/cluster-up.log" 2>&1 || {
            cat "$TR_TMPDIR/cluster-up.log" >&2
            return 1
        }
        TR_CLUSTER_OWN=1
    fi
    TR_CLUSTER="$n"
    export TR_CLUSTER
}

# tr_require_btl NAME BTL: ends the test NAME as skipped (exit 77) when
# btl/BTL is not among the components tr_init collected.
tr_require_btl() {
    [ -e "$TR_COMPDIR/mca_btl_$2.so" ] || { echo "SKIP $1: btl/$2 is not built"; exit 77; }
}

# tr_cluster_release: takes the cluster down if tr_cluster_init brought it
# up (for the caller's exit trap); a cluster that was up before stays up.
tr_cluster_release() {
    if [ "$TR_CLUSTER_OWN" -eq 1 ]; then
        bash "$TR_CLUSTER_SH" down >/dev/null 2>&1
        TR_CLUSTER_OWN=0
    fi
}

# The default transports of cluster mode: the network ones that can carry
# ranks on several hosts (tcp, and sctp and swf when built).
tr_cluster_default_btls() {
    local list="tcp" b

    for b in "${TR_TREE_BTLS[@]}"; do
        case "$b" in
            sctp|swf) list="$list $b" ;;
        esac
    done
    echo "$list"
}

# tr_split LIST: comma- or space-separated list to one word per line.
tr_split() {
    echo "$1" | tr ', ' '\n\n' | sed '/^$/d'
}

# tr_own_pids PROG: ids of the live processes running PROG that were started
# by this script's jobs (they carry our TRANSPORTS_RUN_ID).
tr_own_pids() {
    local prog="$1" pid

    for pid in $(pgrep -f -x "$prog( .*)?" 2>/dev/null); do
        if tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null |
            grep -qx "TRANSPORTS_RUN_ID=$TRANSPORTS_RUN_ID"; then
            echo "$pid"
        fi
    done
}
