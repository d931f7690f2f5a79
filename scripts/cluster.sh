#!/usr/bin/env bash
# cluster.sh: a cluster of fake hosts on this machine, to run MPI jobs with
# ranks on several "hosts" and every network transport between them.
#
#   scripts/cluster.sh [--name NAME] up [--hosts N] [--nets K] [--mtu M] [--cc ALG]
#   scripts/cluster.sh [--name NAME] down
#   scripts/cluster.sh [--name NAME] status
#   scripts/cluster.sh [--name NAME] exec HOST CMD...
#   scripts/cluster.sh [--name NAME] run MPIRUN-ARGS...
#   scripts/cluster.sh [--name NAME] net NET down|up|rate RATE|loss PERCENT|clear
#   scripts/cluster.sh [--name NAME] pids HOST
#
# up      N hosts h1..hN (default 2), K networks net1..netK (default 1).
#         A host is a network namespace, a UTS namespace (hostname hI) and
#         a mount namespace with its own /dev/shm, its own Open MPI session
#         directory and an /etc/hosts naming every host; the rest of the
#         filesystem is shared, as a cluster's NFS home would be. A network
#         is a bridge in this machine's namespace with a veth to every
#         host; inside a host the interface is called netK. Addresses come
#         from 198.18.0.0/15 (RFC 2544's range for test networks), one /24
#         per network, host hI at .I. IPv6 is off inside the hosts.
#         --mtu M (default 1500; 576..65535) is the MTU of every link and
#         bridge, e.g. 9000 for jumbo frames.
#         --cc ALG (default cubic, Linux's default) is the TCP congestion
#         control of the hosts' routes (ip route ... congctl); `host` keeps
#         this machine's default. A machine set to bbr would otherwise pace
#         every connection of the fake hosts by its measured rate, and a
#         ping-pong's 64-256 KiB messages then take 1.5-3x as long in some
#         runs and not in others (docs/testing.md).
#         Idempotent: the same sizes, MTU and ALG again keep the cluster,
#         others replace it.
# down    removes every process, namespace, link, bridge, rule and file the
#         cluster made; nothing else on the machine is touched.
# status  one line per network "NET CIDR STATE [mtu=M] [cc=ALG] [rate=R]
#         [loss=P]" (mtu only when it is not 1500, cc when not cubic), then one
#         line per address "HOST NET ADDRESS".
# exec    runs CMD on HOST (arguments, stdin and exit status pass through;
#         the current directory is kept).
# run     mpirun on h1 across the hosts: a hostfile of the hosts, a launch
#         agent that enters a host's namespaces (plm_rsh_agent on Open MPI
#         4.1, plm_ssh_agent on 5.0), the out-of-band and btl_tcp interface
#         selection set to the cluster's networks, the session directories
#         in each host's private directory, no binding and ranks that
#         yield when idle (the hosts share this machine's cores). These
#         are set as environment defaults, so the same parameters on the
#         command line win; every argument goes to mpirun unchanged. On exit (an interrupt too)
#         every process the job left on any host is ended.
# net     cuts (down) or restores (up) a network for every host, limits its
#         rate (tbf, e.g. 100mbit) or drops PERCENT of the packets each
#         host sends on it (iptables' statistic match, inside the hosts);
#         clear removes rate and loss. This kernel has no netem: there is
#         no added delay.
# pids    the process ids running on HOST (for tests that kill a host).
#
# NAME (option --name or $TC_CLUSTER, default tc; 1-6 letters and digits)
# prefixes every bridge and link of the cluster and picks its own block of
# 198.18.0.0/15, so several clusters coexist on one machine; the hosts are
# h1..hN in each. Needs root, iproute2, util-linux (unshare, nsenter) and
# iptables for `net loss`. Inside the Debian 13 root: scripts/ompi5.sh exec
# scripts/cluster.sh ... (the root shares this machine's network namespace).
# Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause
set -euo pipefail

prog="$(basename "$0")"
die() { echo "$prog: $*" >&2; exit 2; }
note() { echo "$prog: $*" >&2; }
usage() {
    sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p;}' "$0" | sed '/^Copyright/d'
    exit "${1:-0}"
}

name="${TC_CLUSTER:-tc}"
while [ $# -gt 0 ]; do
    case "$1" in
        --name) [ $# -ge 2 ] || usage 2; name="$2"; shift 2 ;;
        --name=*) name="${1#*=}"; shift ;;
        -h|--help) usage 0 ;;
        *) break ;;
    esac
done
[ $# -ge 1 ] || usage 2
cmd="$1"
shift
case "$name" in
    ''|*[!a-z0-9]*) die "cluster name '$name': lower-case letters and digits only" ;;
esac
[ "${#name}" -le 6 ] || die "cluster name '$name': at most 6 characters (interface names)"
[ "$(id -u)" -eq 0 ] || die "needs root (namespaces, links)"

STATEBASE=/run/tc-cluster
STATE="$STATEBASE/$name"
MARK="tc-cluster:$name"     # argv[0] of a host's holder: "$MARK:hI"
MAX_HOSTS=64
MAX_NETS=8
NBLOCKS=64                  # 198.18.0.0/15 = 512 /24s = 64 blocks of 8

# ---------------------------------------------------------------------------
# names and addresses
# ---------------------------------------------------------------------------
br_name() { echo "$name-net$1"; }           # bridge of network K
veth_name() { echo "$name-h$1-net$2"; }     # root-side end, host I net K
# net_prefix K: the first three octets of network K's /24
net_prefix() {
    local n=$((BLOCK * MAX_NETS + $1 - 1))
    echo "198.$((18 + n / 256)).$((n % 256))"
}
net_cidr() { echo "$(net_prefix "$1").0/24"; }
host_addr() { echo "$(net_prefix "$2").$1"; }

load_conf() {
    [ -f "$STATE/conf" ] || return 1
    # shellcheck disable=SC1091
    . "$STATE/conf"
}

is_up() {
    load_conf 2> /dev/null || return 1
    local i pid
    for ((i = 1; i <= HOSTS; i++)); do
        pid="$(cat "$STATE/h$i.pid" 2> /dev/null)" || return 1
        holder_ok "$pid" "h$i" || return 1
    done
    return 0
}

# holder_ok PID HOST: PID is HOST's holder process of this cluster
holder_ok() {
    [ -n "$1" ] && [ -r "/proc/$1/cmdline" ] &&
        [ "$(tr -d '\0' < "/proc/$1/cmdline" 2> /dev/null)" = "$MARK:$2infinity" ]
}

# the block of 198.18.0.0/15 a cluster uses is written on its bridges'
# alias ("tc-cluster:NAME:BLOCK"): visible from the Debian 13 root as well
used_blocks() {
    local f a
    for f in /sys/class/net/*/ifalias; do
        a="$(cat "$f" 2> /dev/null)" || continue
        case "$a" in
            tc-cluster:*:*) [ "$(echo "$a" | cut -d: -f2)" = "$name" ] || echo "$a" | cut -d: -f3 ;;
        esac
    done
}

pick_block() {
    local used b start h
    used=" $(used_blocks | sort -u | tr '\n' ' ') "
    if [ "$name" = tc ]; then
        start=0
    else
        h="$(printf '%s' "$name" | cksum | cut -d' ' -f1)"
        start=$((h % NBLOCKS))
    fi
    for ((b = 0; b < NBLOCKS; b++)); do
        case "$used" in
            *" $(((start + b) % NBLOCKS)) "*) ;;
            *) echo $(((start + b) % NBLOCKS)); return 0 ;;
        esac
    done
    die "no free address block in 198.18.0.0/15 ($NBLOCKS clusters up)"
}

# ---------------------------------------------------------------------------
# entering a host
# ---------------------------------------------------------------------------
host_pid() {
    local h="$1" pid
    case "$h" in
        h[1-9]|h[1-9][0-9]) ;;
        *) die "unknown host '$h' (hosts are h1..h$HOSTS)" ;;
    esac
    [ "${h#h}" -le "$HOSTS" ] || die "unknown host '$h' (hosts are h1..h$HOSTS)"
    pid="$(cat "$STATE/$h.pid" 2> /dev/null)" || die "host $h has no holder (cluster half down? run up again)"
    holder_ok "$pid" "$h" || die "host $h's holder is gone (run up again)"
    echo "$pid"
}

# in_host PID CMD...: CMD in the host's namespaces and root, current dir kept
in_host() {
    local pid="$1"
    shift
    nsenter -t "$pid" -n -u -m -r "--wd=$PWD" -- "$@"
}

# host_procs INODE: pids in the network namespace INODE (all of them ours:
# nothing else can enter a namespace this script made)
host_procs() {
    # shellcheck disable=SC2012
    ls -l /proc/[0-9]*/ns/net 2> /dev/null |
        sed -n "s|.* /proc/\([0-9]*\)/ns/net -> net:\[$1\]\$|\1|p" || true
}

# ---------------------------------------------------------------------------
# down
# ---------------------------------------------------------------------------
do_down() {
    local i k ino pids pid try
    if load_conf 2> /dev/null; then
        # every process on the hosts, then the holders
        for ((try = 0; try < 20; try++)); do
            pids=""
            for ((i = 1; i <= HOSTS; i++)); do
                ino="$(cat "$STATE/h$i.ns" 2> /dev/null)" || continue
                pids="$pids $(host_procs "$ino")"
            done
            pids="$(echo $pids)"
            [ -z "$pids" ] && break
            # shellcheck disable=SC2086
            kill -9 $pids 2> /dev/null || true
            sleep 0.2
        done
        [ -z "$pids" ] || note "processes $pids did not end"
    fi
    # holders whose namespace was not recorded yet (up interrupted early)
    for f in "$STATE"/h*.pid; do
        [ -f "$f" ] || continue
        pid="$(cat "$f" 2> /dev/null)" || continue
        holder_ok "$pid" "$(basename "$f" .pid)" && kill -9 "$pid" 2> /dev/null || true
    done
    # the links: the hosts' ends went with their namespaces; what is left
    # of this cluster in this namespace is found by name
    for ((k = 1; k <= MAX_NETS; k++)); do
        for l in $(ip -o link show 2> /dev/null | sed -n "s/^[0-9]*: \($name-h[0-9]*-net$k\)[@:].*/\1/p"); do
            ip link del "$l" 2> /dev/null || true
        done
        ip link show "$(br_name "$k")" > /dev/null 2>&1 && ip link del "$(br_name "$k")" 2> /dev/null || true
    done
    if [ -d "$STATE" ]; then
        rm -rf "${STATE:?}"
    fi
    rmdir "$STATEBASE" 2> /dev/null || true
    return 0
}

# ---------------------------------------------------------------------------
# up
# ---------------------------------------------------------------------------
start_holder() {
    local i="$1" pid me try
    me="$(stat -L -c %i /proc/self/ns/net)"
    # a process that only holds the host's namespaces; its argv[0] names it;
    # it keeps no descriptor of ours (a lock, the pipe of a caller's tee)
    setsid unshare --net --uts --mount --propagation private -- \
        bash -c 'for fd in /proc/$$/fd/*; do fd=${fd##*/}; [ "$fd" -gt 2 ] && eval "exec $fd>&-"; done
                 exec -a "$0" sleep infinity' "$MARK:h$i" < /dev/null > /dev/null 2>&1 &
    pid=$!
    echo "$pid" > "$STATE/h$i.pid"
    for ((try = 0; try < 100; try++)); do
        if holder_ok "$pid" "h$i" && [ "$(stat -L -c %i "/proc/$pid/ns/net" 2> /dev/null)" != "$me" ]; then
            stat -L -c %i "/proc/$pid/ns/net" > "$STATE/h$i.ns"
            return 0
        fi
        kill -0 "$pid" 2> /dev/null || die "the holder of h$i died at once (unshare: no namespaces here?)"
        sleep 0.05
    done
    die "the holder of h$i did not start"
}

setup_host() {
    local i="$1" pid k
    pid="$(cat "$STATE/h$i.pid")"
    nsenter -t "$pid" -u hostname "h$i"
    nsenter -t "$pid" -m -r --wd=/ -- sh -c "
        mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs /dev/shm &&
        mount -t tmpfs -o mode=1777 tmpfs '$STATE/tmp' &&
        mount --bind '$STATE/hosts' /etc/hosts"
    nsenter -t "$pid" -n -- sh -c "
        echo 1 > /proc/sys/net/ipv6/conf/all/disable_ipv6
        echo 1 > /proc/sys/net/ipv6/conf/default/disable_ipv6
        ip link set lo up" 2> /dev/null || true
    for ((k = 1; k <= NETS; k++)); do
        ip link add "$(veth_name "$i" "$k")" type veth peer name "net$k" netns "$pid"
        ip link set "$(veth_name "$i" "$k")" mtu "$MTU" master "$(br_name "$k")" up
        nsenter -t "$pid" -n -- ip link set "net$k" mtu "$MTU"
        nsenter -t "$pid" -n -- ip addr add "$(host_addr "$i" "$k")/24" dev "net$k"
        nsenter -t "$pid" -n -- ip link set "net$k" up
        if [ "$CC" != host ]; then
            nsenter -t "$pid" -n -- ip route replace "$(net_cidr "$k")" dev "net$k" proto kernel \
                scope link src "$(host_addr "$i" "$k")" congctl "$CC"
        fi
    done
}

ompi_series() {
    mpirun --version 2> /dev/null | sed -n 's/.*Open MPI) \([0-9]*\.[0-9]*\).*/\1/p' | head -n 1
}

write_agent() {
    cat > "$STATE/agent" << EOF
#!/bin/sh
# launch agent of cluster $name: agent [OPTIONS] HOST COMMAND...; runs
# COMMAND (a shell command line, as ssh would) in HOST's namespaces
while [ \$# -gt 0 ]; do
    case "\$1" in
        -*) shift ;;
        *) break ;;
    esac
done
host="\$1"
shift
pid="\$(cat "$STATE/\$host.pid" 2> /dev/null)" || { echo "agent: no host \$host in cluster $name" >&2; exit 255; }
exec nsenter -t "\$pid" -n -u -m -r "--wd=\$PWD" -- /bin/sh -c "\$*"
EOF
    chmod 755 "$STATE/agent"
}

do_up() {
    local hosts=2 nets=1 mtu=1500 cc=cubic cc_given=0 i k
    while [ $# -gt 0 ]; do
        case "$1" in
            --mtu) mtu="${2:-}"; shift 2 || usage 2 ;;
            --mtu=*) mtu="${1#*=}"; shift ;;
            --hosts) hosts="${2:-}"; shift 2 || usage 2 ;;
            --hosts=*) hosts="${1#*=}"; shift ;;
            --nets) nets="${2:-}"; shift 2 || usage 2 ;;
            --nets=*) nets="${1#*=}"; shift ;;
            --cc) cc="${2:-}"; cc_given=1; shift 2 || usage 2 ;;
            --cc=*) cc="${1#*=}"; cc_given=1; shift ;;
            *) die "up: unknown argument '$1'" ;;
        esac
    done
    case "$hosts" in ''|*[!0-9]*) die "--hosts wants a number" ;; esac
    case "$nets" in ''|*[!0-9]*) die "--nets wants a number" ;; esac
    [ "$hosts" -ge 1 ] && [ "$hosts" -le "$MAX_HOSTS" ] || die "--hosts: 1..$MAX_HOSTS"
    [ "$nets" -ge 1 ] && [ "$nets" -le "$MAX_NETS" ] || die "--nets: 1..$MAX_NETS"
    case "$mtu" in ''|*[!0-9]*) die "--mtu wants a number" ;; esac
    [ "$mtu" -ge 576 ] && [ "$mtu" -le 65535 ] || die "--mtu: 576..65535"
    if [ "$cc" != host ]; then
        local avail
        avail="$(cat /proc/sys/net/ipv4/tcp_available_congestion_control 2> /dev/null || true)"
        case " $avail " in
            *" $cc "*) ;;
            *)
                # the default falls back; an algorithm asked for does not
                [ "$cc_given" -eq 1 ] || { note "no cubic in this kernel: the machine's congestion control"; cc=host; }
                [ "$cc" = host ] || die "--cc $cc: not a congestion control of this kernel (${avail:-none listed}; or host)"
                ;;
        esac
    fi
    for c in ip nsenter unshare setsid; do
        command -v "$c" > /dev/null || die "needs $c"
    done

    if is_up && [ "$HOSTS" = "$hosts" ] && [ "$NETS" = "$nets" ] && [ "${MTU:-1500}" = "$mtu" ] &&
        [ "${CC:-host}" = "$cc" ]; then
        local ok=1
        for ((k = 1; k <= NETS; k++)); do
            ip link show "$(br_name "$k")" > /dev/null 2>&1 || ok=0
        done
        if [ "$ok" -eq 1 ]; then
            do_status
            return 0
        fi
    fi
    do_down

    # from here on, any way out but success takes down what was made
    up_done=0
    trap '[ "$up_done" -eq 1 ] || do_down' EXIT
    trap 'exit 130' INT TERM HUP

    mkdir -p "$STATE/tmp"
    BLOCK="$(pick_block)"
    HOSTS="$hosts"
    NETS="$nets"
    MTU="$mtu"
    CC="$cc"
    SERIES="$(ompi_series)"
    printf 'HOSTS=%s\nNETS=%s\nBLOCK=%s\nSERIES=%s\nMTU=%s\nCC=%s\n' "$HOSTS" "$NETS" "$BLOCK" "$SERIES" "$MTU" "$CC" > "$STATE/conf"
    {
        printf '127.0.0.1\tlocalhost\n'
        for ((i = 1; i <= HOSTS; i++)); do
            printf '%s\th%s\n' "$(host_addr "$i" 1)" "$i"
        done
    } > "$STATE/hosts"
    : > "$STATE/hostfile"
    for ((i = 1; i <= HOSTS; i++)); do
        echo "h$i slots=$(nproc)" >> "$STATE/hostfile"
    done
    write_agent
    for ((k = 1; k <= NETS; k++)); do
        ip link add "$(br_name "$k")" type bridge
        # no spanning tree, no forwarding delay: a port forwards at once
        ip link set "$(br_name "$k")" type bridge stp_state 0 forward_delay 0 2> /dev/null || true
        ip link set "$(br_name "$k")" alias "$MARK:$BLOCK"
        ip link set "$(br_name "$k")" mtu "$MTU"
        ip link set "$(br_name "$k")" up
        echo up > "$STATE/net$k.state"
    done
    for ((i = 1; i <= HOSTS; i++)); do
        start_holder "$i"
        setup_host "$i"
    done
    up_done=1
    trap - EXIT INT TERM HUP
    do_status
}

# ---------------------------------------------------------------------------
# status, exec, pids
# ---------------------------------------------------------------------------
do_status() {
    local i k state extra
    is_up || { echo "cluster $name: down"; return 1; }
    for ((k = 1; k <= NETS; k++)); do
        state="$(cat "$STATE/net$k.state" 2> /dev/null || echo up)"
        extra=""
        [ "${MTU:-1500}" = 1500 ] || extra=" mtu=$MTU"
        [ "${CC:-host}" = cubic ] || extra="$extra cc=${CC:-host}"
        [ -f "$STATE/net$k.rate" ] && extra="$extra rate=$(cat "$STATE/net$k.rate")"
        [ -f "$STATE/net$k.loss" ] && extra="$extra loss=$(cat "$STATE/net$k.loss")"
        echo "net$k $(net_cidr "$k") $state$extra"
    done
    for ((i = 1; i <= HOSTS; i++)); do
        for ((k = 1; k <= NETS; k++)); do
            echo "h$i net$k $(host_addr "$i" "$k")"
        done
    done
}

do_exec() {
    [ $# -ge 2 ] || die "exec HOST CMD..."
    load_conf || die "cluster $name is not up"
    local pid
    pid="$(host_pid "$1")"
    shift
    # Slurm's commands find the cluster's own configuration
    [ -f "$STATE/slurm/slurm.conf" ] && export SLURM_CONF="$STATE/slurm/slurm.conf"
    in_host "$pid" "$@"
}

do_pids() {
    [ $# -eq 1 ] || die "pids HOST"
    load_conf || die "cluster $name is not up"
    local pid ino p
    pid="$(host_pid "$1")"
    ino="$(cat "$STATE/$1.ns")"
    for p in $(host_procs "$ino"); do
        [ "$p" = "$pid" ] || echo "$p"
    done
}

# ---------------------------------------------------------------------------
# run
# ---------------------------------------------------------------------------
run_pid=""
run_id=""
# run_leftovers: processes on any host started by this run (they carry
# TC_CLUSTER_RUN=$run_id in their environment, inherited from mpirun)
run_leftovers() {
    local i ino p
    for ((i = 1; i <= HOSTS; i++)); do
        ino="$(cat "$STATE/h$i.ns" 2> /dev/null)" || continue
        for p in $(host_procs "$ino"); do
            # a process may end between the listing and the read
            { tr '\0' '\n' < "/proc/$p/environ"; } 2> /dev/null |
                grep -qx "TC_CLUSTER_RUN=$run_id" && echo "$p"
        done
    done
    return 0
}

run_cleanup() {
    local i pids
    if [ -n "$run_pid" ]; then
        kill -TERM "$run_pid" 2> /dev/null || true
        for ((i = 0; i < 20; i++)); do
            kill -0 "$run_pid" 2> /dev/null || break
            sleep 0.5
        done
        kill -KILL "$run_pid" 2> /dev/null || true
        wait "$run_pid" 2> /dev/null || true
        run_pid=""
    fi
    # daemons and ranks go on their own once mpirun is gone; give them a
    # moment, then end what is left
    for ((i = 0; i < 20; i++)); do
        pids="$(run_leftovers)"
        [ -z "$pids" ] && return 0
        sleep 0.25
    done
    # shellcheck disable=SC2086
    kill -9 $pids 2> /dev/null || true
}

do_run() {
    is_up || die "cluster $name is not up (scripts/cluster.sh up)"
    local pid cidrs="" k rc=0 series
    pid="$(host_pid h1)"
    for ((k = 1; k <= NETS; k++)); do
        cidrs="$cidrs${cidrs:+,}$(net_cidr "$k")"
    done
    series="${SERIES:-$(ompi_series)}"
    run_id="$name.$$.$(date +%s%N)"
    export TC_CLUSTER_RUN="$run_id"
    # defaults as environment variables: a parameter given on the command
    # line wins (given twice on the command line, Open MPI joins values)
    if [ "$(id -u)" -eq 0 ]; then
        export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    fi
    export OMPI_MCA_btl_tcp_if_include="$cidrs"
    unset OMPI_MCA_btl_tcp_if_exclude
    # the fake hosts share this machine's cores, but each daemon sees them
    # all as its own: binding would put a rank of every host on core 0,
    # and ranks that poll without yielding would wait for each other's
    # time slices (t_comms over tcp: 5 times slower)
    export OMPI_MCA_mpi_yield_when_idle="${OMPI_MCA_mpi_yield_when_idle:-1}"
    case "$series" in
        4.*)
            export OMPI_MCA_hwloc_base_binding_policy="${OMPI_MCA_hwloc_base_binding_policy:-none}"
            export OMPI_MCA_plm_rsh_agent="$STATE/agent"
            export OMPI_MCA_oob_tcp_if_include="$cidrs"
            export OMPI_MCA_orte_tmpdir_base="$STATE/tmp"
            ;;
        *)
            export PRTE_MCA_hwloc_default_binding_policy="${PRTE_MCA_hwloc_default_binding_policy:-none}"
            export PRTE_MCA_plm_ssh_agent="$STATE/agent"
            export PRTE_MCA_oob_tcp_if_include="$cidrs"
            export PRTE_MCA_prte_tmpdir_base="$STATE/tmp"
            ;;
    esac
    trap 'run_cleanup' EXIT
    trap 'run_cleanup; trap - EXIT; exit 130' INT TERM HUP
    exec 3<&0
    # a subshell that becomes mpirun: run_pid is mpirun's pid
    (exec nsenter -t "$pid" -n -u -m -r "--wd=$PWD" -- mpirun --hostfile "$STATE/hostfile" "$@" <&3 3<&-) &
    run_pid=$!
    exec 3<&-
    wait "$run_pid" || rc=$?
    run_pid=""
    run_cleanup
    trap - EXIT INT TERM HUP
    return "$rc"
}

# ---------------------------------------------------------------------------
# net
# ---------------------------------------------------------------------------
do_net() {
    [ $# -ge 2 ] || die "net NET down|up|rate RATE|loss PERCENT|clear"
    is_up || die "cluster $name is not up"
    local net="$1" what="$2" k i pid br chain p
    case "$net" in
        net[1-9]) k="${net#net}" ;;
        *) die "unknown network '$net'" ;;
    esac
    [ "$k" -le "$NETS" ] || die "unknown network '$net' (networks are net1..net$NETS)"
    br="$(br_name "$k")"
    chain="$name-net$k"
    case "$what" in
        down)
            # a switch that fails: the bridge stops forwarding; the hosts'
            # interfaces and addresses stay as they are
            ip link set "$br" down
            echo down > "$STATE/net$k.state"
            ;;
        up)
            ip link set "$br" up
            echo up > "$STATE/net$k.state"
            ;;
        rate)
            [ $# -eq 3 ] || die "net NET rate RATE (e.g. 100mbit)"
            for ((i = 1; i <= HOSTS; i++)); do
                pid="$(host_pid "h$i")"
                tc qdisc replace dev "$(veth_name "$i" "$k")" root tbf rate "$3" burst 64kb latency 200ms
                nsenter -t "$pid" -n -- tc qdisc replace dev "net$k" root tbf rate "$3" burst 64kb latency 200ms
            done
            echo "$3" > "$STATE/net$k.rate"
            ;;
        loss)
            [ $# -eq 3 ] || die "net NET loss PERCENT"
            p="$3"
            case "$p" in
                ''|*[!0-9.]*) die "loss wants a percentage, e.g. 5 or 0.5" ;;
            esac
            command -v iptables > /dev/null || die "net loss needs iptables"
            p="$(awk -v p="$p" 'BEGIN { if (p < 0 || p > 100) exit 1; printf "%.6f", p / 100 }')" ||
                die "loss: 0..100 percent"
            for ((i = 1; i <= HOSTS; i++)); do
                pid="$(host_pid "h$i")"
                nsenter -t "$pid" -n -- sh -c "
                    iptables -w -N '$chain' 2> /dev/null || iptables -w -F '$chain'
                    iptables -w -C OUTPUT -o 'net$k' -j '$chain' 2> /dev/null ||
                        iptables -w -A OUTPUT -o 'net$k' -j '$chain'
                    iptables -w -A '$chain' -m statistic --mode random --probability $p -j DROP"
            done
            echo "$3%" > "$STATE/net$k.loss"
            ;;
        clear)
            for ((i = 1; i <= HOSTS; i++)); do
                pid="$(host_pid "h$i")"
                tc qdisc del dev "$(veth_name "$i" "$k")" root 2> /dev/null || true
                nsenter -t "$pid" -n -- tc qdisc del dev "net$k" root 2> /dev/null || true
                if [ -f "$STATE/net$k.loss" ]; then
                    nsenter -t "$pid" -n -- sh -c "
                        iptables -w -D OUTPUT -o 'net$k' -j '$chain' 2> /dev/null
                        iptables -w -F '$chain' 2> /dev/null
                        iptables -w -X '$chain' 2> /dev/null" || true
                fi
            done
            rm -f "$STATE/net$k.rate" "$STATE/net$k.loss"
            ;;
        *) die "net NET down|up|rate RATE|loss PERCENT|clear" ;;
    esac
}

# ---------------------------------------------------------------------------
# slurm: munge, slurmctld and slurmd inside the hosts
# ---------------------------------------------------------------------------
# Everything lives in $SLURM_DIR (removed by `down` with the rest of the
# state): slurm.conf and the munge key, slurmctld's state, and one
# directory per host (hI/) holding that host's munged socket, slurmd's
# spool, pid file and log. Inside host I, hI/ is bind-mounted on
# $SLURM_DIR/run, so slurm.conf names one path for every host (as a real
# cluster's /run) while each host has its own. Clients and daemons find
# the configuration through SLURM_CONF (and the daemons through -f):
# nothing in /etc/slurm or /etc/munge is read or written.
SLURM_DIR="$STATE/slurm"
SLURM_CPUS=8                # CPUs each node declares (several ranks per host)
SLURM_PATH=/usr/sbin:/usr/bin:/sbin:/bin

# slurm_in_host HOST CMD...: CMD in HOST with a clean environment and the
# cluster's Slurm configuration, without the cluster's lock (descriptor 9:
# a daemon that kept it would block every later up or down)
slurm_in_host() {
    local pid
    pid="$(host_pid "$1")"
    shift
    in_host "$pid" env -i PATH="$SLURM_PATH" SLURM_CONF="$SLURM_DIR/slurm.conf" "$@" 9>&-
}

# slurm_pid FILE: the pid in FILE when that process is alive
slurm_pid() {
    local p
    p="$(cat "$1" 2> /dev/null)" || return 1
    [ -n "$p" ] && kill -0 "$p" 2> /dev/null && echo "$p"
}

# slurm_running: slurmctld, and munged and slurmd on every host, alive
slurm_running() {
    local i
    [ -f "$SLURM_DIR/slurm.conf" ] || return 1
    slurm_pid "$SLURM_DIR/slurmctld.pid" > /dev/null || return 1
    for ((i = 1; i <= HOSTS; i++)); do
        slurm_pid "$SLURM_DIR/h$i/munged.pid" > /dev/null || return 1
        slurm_pid "$SLURM_DIR/h$i/slurmd.pid" > /dev/null || return 1
    done
}

# slurm_stop: ends the daemons (down ends them with every other process
# of the hosts anyway) and removes their directory
slurm_stop() {
    local f p pids="" try
    for f in "$SLURM_DIR"/slurmctld.pid "$SLURM_DIR"/h*/slurmd.pid "$SLURM_DIR"/h*/munged.pid; do
        p="$(slurm_pid "$f")" && pids="$pids $p"
    done
    if [ -n "$pids" ]; then
        # shellcheck disable=SC2086
        kill -TERM $pids 2> /dev/null || true
        for ((try = 0; try < 50; try++)); do
            # shellcheck disable=SC2086
            kill -0 $pids 2> /dev/null || break
            sleep 0.1
        done
        # shellcheck disable=SC2086
        kill -KILL $pids 2> /dev/null || true
    fi
    rm -rf "${SLURM_DIR:?}"
}

slurm_write_conf() {
    local nodes="h1"
    [ "$HOSTS" -gt 1 ] && nodes="h[1-$HOSTS]"
    cat > "$SLURM_DIR/slurm.conf" << EOF
# slurm.conf of the fake-host cluster $name (scripts/cluster.sh up --slurm)
ClusterName=tc$name
SlurmctldHost=h1
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$SLURM_DIR/run/munge.sock
CredType=cred/munge
StateSaveLocation=$SLURM_DIR/ctld
SlurmctldPidFile=$SLURM_DIR/slurmctld.pid
SlurmctldLogFile=$SLURM_DIR/slurmctld.log
SlurmdSpoolDir=$SLURM_DIR/run/spool
SlurmdPidFile=$SLURM_DIR/run/slurmd.pid
SlurmdLogFile=$SLURM_DIR/run/slurmd.log
PlugStackConfig=$SLURM_DIR/plugstack.conf
# each host's private tmpfs: PMIx's client directories, and (TaskProlog)
# every task's TMPDIR, where Open MPI puts its session directories
TmpFS=$STATE/tmp
TaskProlog=$SLURM_DIR/task-prolog
# no cgroups in these namespaces: processes are tracked by parent pid
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
# the fake hosts share this machine's cores: the CPUs below are declared
SlurmdParameters=config_overrides
ReturnToService=2
KillWait=10
# sbatch --wait polls every 2 s while MinJobAge is at most 4 (otherwise its
# pause grows fourfold up to 32 s: a 3 s job took 10 s)
MinJobAge=4
MessageTimeout=30
InactiveLimit=0
PropagateResourceLimits=NONE
NodeName=$nodes CPUs=$SLURM_CPUS State=UNKNOWN
PartitionName=batch Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
    : > "$SLURM_DIR/plugstack.conf"
    # Slurm 24.05 and later initialise cgroups in slurmd whatever the
    # plugins (and fail without /sys/fs/cgroup) unless told not to; 22.05
    # does not know the value
    local v
    v="$(slurmd -V 2> /dev/null | sed -n 's/^slurm[^ ]* \([0-9]*\)\.\([0-9]*\).*/\1 \2/p')"
    if [ -n "$v" ] && [ "$(echo "$v" | awk '{ print $1 * 100 + $2 }')" -ge 2405 ]; then
        echo "CgroupPlugin=disabled" > "$SLURM_DIR/cgroup.conf"
    fi
    cat > "$SLURM_DIR/task-prolog" << EOF
#!/bin/sh
# TaskProlog of cluster $name: a task's temporary files (Open MPI's session
# directories) on its host's private tmpfs
echo "export TMPDIR=$STATE/tmp"
EOF
    chmod 755 "$SLURM_DIR/task-prolog"
}

# slurm_start_host I: the host's own run directory, and munged there
slurm_start_host() {
    local i="$1" d="$SLURM_DIR/h$1" pid
    pid="$(host_pid "h$i")"
    mkdir -p "$d/spool"
    chmod 755 "$d"
    nsenter -t "$pid" -m -r --wd=/ -- mount --bind "$d" "$SLURM_DIR/run"
    slurm_in_host "h$i" munged --socket="$SLURM_DIR/run/munge.sock" \
        --key-file="$SLURM_DIR/munge.key" --pid-file="$SLURM_DIR/run/munged.pid" \
        --seed-file="$SLURM_DIR/run/munged.seed" --log-file="$SLURM_DIR/run/munged.log" \
        < /dev/null > "$d/munged.out" 2>&1 || die "munged did not start on h$i"
}

slurm_start_slurmd() {
    slurm_in_host "h$1" slurmd -f "$SLURM_DIR/slurm.conf" \
        < /dev/null > "$SLURM_DIR/h$1/slurmd.out" 2>&1 || die "slurmd did not start on h$1"
}

# slurm_wait WHAT CMD...: runs CMD until it succeeds, for at most 60 s
slurm_wait() {
    local what="$1" try
    shift
    for ((try = 0; try < 240; try++)); do
        "$@" > /dev/null 2>&1 && return 0
        sleep 0.25
    done
    note "timed out waiting for $what"
    return 1
}

slurm_all_idle() {
    local n
    n="$(slurm_in_host h1 sinfo -h -N -o '%N %t' | grep -c ' idle$')"
    [ "$n" -eq "$HOSTS" ]
}

# slurm_logs: the end of every daemon's log (after a failed start)
slurm_logs() {
    local f
    for f in "$SLURM_DIR"/slurmctld.log "$SLURM_DIR"/slurmctld.out "$SLURM_DIR"/h*/slurmd.log \
        "$SLURM_DIR"/h*/slurmd.out "$SLURM_DIR"/h*/munged.log "$SLURM_DIR"/h*/munged.out; do
        [ -s "$f" ] || continue
        echo "--- ${f#"$SLURM_DIR"/}" >&2
        tail -n 15 "$f" >&2
    done
}

slurm_up() {
    local i c
    load_conf || die "cluster $name is not up"
    for c in munged munge slurmctld slurmd sinfo scontrol; do
        command -v "$c" > /dev/null ||
            die "--slurm needs $c (apt-get install slurm-wlm munge)"
    done
    if slurm_running && slurm_all_idle 2> /dev/null; then
        slurm_status
        return 0
    fi
    slurm_stop
    # from here on, any way out but success stops what was started
    slurm_ok=0
    trap '[ "$slurm_ok" -eq 1 ] || { slurm_logs; slurm_stop; }' EXIT
    trap 'exit 130' INT TERM HUP
    mkdir -p "$SLURM_DIR/run" "$SLURM_DIR/ctld"
    chmod 755 "$SLURM_DIR"
    chmod 700 "$SLURM_DIR/ctld"
    (umask 077 && head -c 1024 /dev/urandom > "$SLURM_DIR/munge.key")
    chmod 400 "$SLURM_DIR/munge.key"
    slurm_write_conf
    for ((i = 1; i <= HOSTS; i++)); do
        slurm_start_host "$i"
    done
    slurm_in_host h1 slurmctld -f "$SLURM_DIR/slurm.conf" \
        < /dev/null > "$SLURM_DIR/slurmctld.out" 2>&1 || die "slurmctld did not start"
    slurm_wait "slurmctld on h1" slurm_in_host h1 scontrol ping || die "slurmctld does not answer"
    for ((i = 1; i <= HOSTS; i++)); do
        slurm_start_slurmd "$i"
    done
    slurm_wait "$HOSTS idle Slurm nodes" slurm_all_idle || die "the Slurm nodes did not come up idle"
    slurm_ok=1
    trap - EXIT INT TERM HUP
    slurm_status
}

slurm_status() {
    [ -f "$SLURM_DIR/slurm.conf" ] || return 0
    if slurm_running; then
        echo "slurm up: slurmctld on h1, munged and slurmd on h1..h$HOSTS, SLURM_CONF=$SLURM_DIR/slurm.conf"
    else
        echo "slurm down: a daemon has died (up --slurm starts it again)"
    fi
}

# up [ARGS] [--slurm]: the cluster as do_up makes it, then Slurm in it
do_up_cmd() {
    local a slurm=0
    local args=()
    for a in "$@"; do
        case "$a" in
            --slurm) slurm=1 ;;
            *) args+=("$a") ;;
        esac
    done
    do_up "${args[@]}"
    if [ "$slurm" -eq 1 ]; then
        slurm_up
    fi
}

# ---------------------------------------------------------------------------
# commands that change the cluster hold its lock
# ---------------------------------------------------------------------------
lock() {
    mkdir -p "$STATEBASE"
    exec 9> "$STATEBASE/.$name.lock"
    flock 9
}

case "$cmd" in
    up) lock; do_up_cmd "$@" ;;
    down) lock; do_down; rm -f "$STATEBASE/.$name.lock"; rmdir "$STATEBASE" 2> /dev/null || true ;;
    status) do_status && slurm_status ;;
    exec) do_exec "$@" ;;
    run) do_run "$@" ;;
    net) lock; do_net "$@" ;;
    pids) do_pids "$@" ;;
    *) usage 2 ;;
esac
