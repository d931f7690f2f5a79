/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * btl_sctp_component.c: parameters, stack selection, interface binding,
 * modex publication and the progress function of btl/sctp.
 */
#include "opal_config.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "opal/mca/base/mca_base_var.h"
#include "tc_ompi_compat.h"
#include "opal/util/argv.h"
#include "opal/util/output.h"
#include "opal/util/show_help.h"

#include "tc_ompi.h"

#include "btl_sctp.h"
#include "tc_atomic.h"
#include "btl_sctp_endpoint.h"
#include "btl_sctp_frag.h"
#include "btl_sctp_hdr.h"
#include "btl_sctp_lost.h"

static int mca_btl_sctp_component_register(void);
static int mca_btl_sctp_component_open(void);
static int mca_btl_sctp_component_close(void);
static mca_btl_base_module_t **
mca_btl_sctp_component_init(int *num_btls, bool enable_progress_threads, bool enable_mpi_threads);

mca_btl_sctp_component_t mca_btl_sctp_component = {
    .super =
        {
            .btl_version =
                {
                    MCA_BTL_DEFAULT_VERSION("sctp"),
                    .mca_open_component = mca_btl_sctp_component_open,
                    .mca_close_component = mca_btl_sctp_component_close,
                    .mca_register_component_params = mca_btl_sctp_component_register,
                },
            .btl_data =
                {
                    .param_field = MCA_BASE_METADATA_PARAM_CHECKPOINT,
                },
            .btl_init = mca_btl_sctp_component_init,
            .btl_progress = mca_btl_sctp_component_progress,
        },
};

static const mca_base_var_enum_value_t stack_values[] = {
    {BTL_SCTP_STACK_AUTO, "auto"},
    {BTL_SCTP_STACK_KERNEL, "kernel"},
    {BTL_SCTP_STACK_USER, "user"},
    {0, NULL},
};

static const mca_base_var_enum_value_t send_batch_values[] = {
    {BTL_SCTP_SEND_SINGLE, "single"},
    {BTL_SCTP_SEND_MMSG, "mmsg"},
    {BTL_SCTP_SEND_GSO, "gso"},
    {0, NULL},
};

/* Set a parameter's default into its storage, then register it. */
static void mca_btl_sctp_reg_int(const char *name, const char *desc, int *storage, int def,
                                 int level)
{
    (void) tc_ompi_param_int(&mca_btl_sctp_component.super.btl_version, name, desc, level, storage,
                             def);
}

static void mca_btl_sctp_reg_bool(const char *name, const char *desc, bool *storage, bool def,
                                  int level)
{
    (void) tc_ompi_param_bool(&mca_btl_sctp_component.super.btl_version, name, desc, level, storage,
                              def);
}

static void mca_btl_sctp_reg_string(const char *name, const char *desc, char **storage, char *def,
                                    int level)
{
    (void) tc_ompi_param_string(&mca_btl_sctp_component.super.btl_version, name, desc, level,
                                storage, def);
}

static int mca_btl_sctp_component_register(void)
{
    mca_btl_sctp_component_t *c = &mca_btl_sctp_component;
    btl_sctp_sock_config_t def;

    btl_sctp_sock_config_default(&def, BTL_SCTP_STACK_USER);

    (void) tc_ompi_param_enum(
        &c->super.btl_version, "stack",
        "SCTP stack: auto (kernel SCTP when the kernel has it, else usrsctp), kernel "
        "(libsctp), user (usrsctp over UDP, driven by the BTL's progress)",
        OPAL_INFO_LVL_4, "btl_sctp_stack", stack_values, &c->stack_param, BTL_SCTP_STACK_AUTO);

    mca_btl_sctp_reg_string(
        "if_include",
        "Comma-separated interfaces (names or a.b.c.d/n) to bind and advertise; "
        "mutually exclusive with if_exclude",
        &c->if_include, NULL, OPAL_INFO_LVL_1);
    mca_btl_sctp_reg_string(
        "if_exclude",
        "Comma-separated interfaces (names or a.b.c.d/n) not to use; default: none, "
        "so that loopback carries a single-host job",
        &c->if_exclude, NULL, OPAL_INFO_LVL_1);
    mca_btl_sctp_reg_int(
        "num_streams",
        "SCTP streams per association: stream 0 for control and eager traffic, the "
        "others for bulk fragments (1: everything on stream 0)",
        &c->num_streams, def.num_streams, OPAL_INFO_LVL_4);
    mca_btl_sctp_reg_int("sndbuf", "Socket send buffer in bytes", &c->sndbuf, def.sndbuf,
                         OPAL_INFO_LVL_4);
    mca_btl_sctp_reg_int("rcvbuf", "Socket receive buffer in bytes", &c->rcvbuf, def.rcvbuf,
                         OPAL_INFO_LVL_4);
    mca_btl_sctp_reg_bool("nodelay", "Set SCTP_NODELAY (send small messages at once)", &c->nodelay,
                          true, OPAL_INFO_LVL_4);
    mca_btl_sctp_reg_int(
        "mtu",
        "User stack: largest SCTP packet per UDP datagram (0: per peer, the "
        "smallest of its paths: 65000 over loopback, interface MTU - 44 elsewhere)",
        &c->mtu, 0, OPAL_INFO_LVL_5);
    mca_btl_sctp_reg_bool(
        "crc32c",
        "User stack: compute and check SCTP's CRC32c (false: rely on the UDP checksum, "
        "which is cheaper; must be equal in every process)",
        &c->crc32c, false, OPAL_INFO_LVL_5);
    mca_btl_sctp_reg_int(
        "sack_freq",
        "User stack: the receiver acknowledges every this many packets, else after "
        "1 ms (1-16)",
        &c->sack_freq, def.sack_freq, OPAL_INFO_LVL_5);
    mca_btl_sctp_reg_bool(
        "user_pool",
        "User stack: usrsctp takes its mbufs and packet buffers from a pool of "
        "per-thread free lists instead of glibc's malloc (true), or from malloc (false); "
        "the pool streams 4 MiB messages about 1.4x faster",
        &c->user_pool, 0 != def.pool, OPAL_INFO_LVL_5);
    (void) tc_ompi_param_enum(
        &c->super.btl_version, "send_batch",
        "User stack: how UDP datagrams reach the kernel: single (one sendto each), mmsg "
        "(the datagrams of one call into the stack with one sendmmsg), gso (as mmsg, runs "
        "of equal-size datagrams as one UDP_SEGMENT message each: the kernel cuts them "
        "as late as it can; falls back to mmsg where the kernel lacks it)",
        OPAL_INFO_LVL_5, "btl_sctp_send_batch", send_batch_values, &c->send_batch, def.send_batch);
    mca_btl_sctp_reg_bool(
        "gro",
        "User stack: let the kernel coalesce received datagrams of a flow (UDP_GRO) and "
        "split them back into SCTP packets (false: one datagram per buffer)",
        &c->gro, 0 != def.gro, OPAL_INFO_LVL_5);
    mca_btl_sctp_reg_bool(
        "segment",
        "User stack: SCTP packets of up to 64 KB whatever the MTU, each cut into "
        "datagrams of the path's MTU with a 12-byte segment header and put back together "
        "by the receiver (usrsctp's work is per packet: about twice faster at MTU 1500); "
        "false: SCTP packets of the path's MTU (a lost datagram then costs one small "
        "packet, not a 64 KB one: for lossy networks). Without CMT only",
        &c->segment, 0 != def.segment, OPAL_INFO_LVL_5);
    mca_btl_sctp_reg_int(
        "path_probe_ms",
        "User stack: interval of path probes per peer, ms (cluster default 50: with "
        "path_timeout_ms 300 a cut path is found dead 250-300 ms after the cut)",
        &c->probe_ms, def.probe_ms, OPAL_INFO_LVL_5);
    mca_btl_sctp_reg_int(
        "path_timeout_ms",
        "User stack: a path that has not answered (probe or packet) for this long while "
        "another path has is dead, and traffic moves to the next live path; it is used "
        "again with its first answer, ms (300: six probes; a peer silent on every path, "
        "e.g. not scheduled on a loaded host, kills no path)",
        &c->path_timeout_ms, def.path_timeout_ms, OPAL_INFO_LVL_5);
    mca_btl_sctp_reg_int(
        "rto_min_ms",
        "Minimum retransmission timeout, ms (100: a LAN's round trip is far below, but a "
        "loaded host answers late; lower values retransmit spuriously)",
        &c->rto_min_ms, def.rto_min_ms, OPAL_INFO_LVL_5);
    mca_btl_sctp_reg_int(
        "rto_max_ms",
        "Maximum retransmission timeout, ms (250: after a network cut the timeout doubles on "
        "every lost retransmission; this cap lets the first retransmission after the "
        "failover leave at most 250 ms after the path is found dead; RFC 4960's 60 s is for "
        "the Internet)",
        &c->rto_max_ms, def.rto_max_ms, OPAL_INFO_LVL_5);
    mca_btl_sctp_reg_int("rto_initial_ms",
                         "Initial retransmission timeout, before a round trip is measured, ms",
                         &c->rto_initial_ms, def.rto_initial_ms, OPAL_INFO_LVL_5);
    mca_btl_sctp_reg_int(
        "max_retrans",
        "Retransmissions after which an association is aborted (the peer is dead); with "
        "rto_max_ms 250, 40 retransmissions are about 10 s without any answer (the user "
        "stack answers only while the peer's process is in MPI, so this is also how long "
        "a peer may compute without calling MPI while data waits for it)",
        &c->max_retrans, def.max_retrans, OPAL_INFO_LVL_5);
    mca_btl_sctp_reg_int(
        "path_max_retrans",
        "Kernel stack: retransmissions after which a path (peer address) is failed and "
        "traffic moves to another (2: with rto_max_ms 250 a dead path is left after about "
        "0.5 s; RFC 4960 says 5); the user stack's paths are probed instead",
        &c->path_max_retrans, def.path_max_retrans, OPAL_INFO_LVL_5);
    mca_btl_sctp_reg_int(
        "pf_retrans",
        "Kernel stack: retransmissions after which a path is potentially failed (SCTP-PF, "
        "RFC 7829) and new data avoids it while it is still probed (0: at the first "
        "timeout, the quickest switch)",
        &c->pf_retrans, def.pf_retrans, OPAL_INFO_LVL_5);
    mca_btl_sctp_reg_int(
        "hb_interval_ms",
        "SCTP heartbeat interval per path, ms (0: off). The kernel stack finds an idle dead "
        "path and a restored one with heartbeats; the user stack's path probes do that "
        "(its association has a single address), heartbeats only keep it alive",
        &c->hb_ms, def.hb_ms, OPAL_INFO_LVL_5);
    mca_btl_sctp_reg_bool(
        "cmt",
        "User stack: concurrent multipath transfer: spread the SCTP packets of each "
        "association over every live path to the peer (round robin below SCTP), instead of "
        "using one path and keeping the others for failover",
        &c->cmt, false, OPAL_INFO_LVL_4);
    mca_btl_sctp_reg_int("port", "User stack: SCTP port inside the AF_CONN stack", &c->sctp_port,
                         def.sctp_port, OPAL_INFO_LVL_6);
    mca_btl_sctp_reg_bool("stream_priority",
                          "Serve stream 0 before the bulk streams and interleave messages (I-DATA) "
                          "when the stack supports it",
                          &c->prio_streams, true, OPAL_INFO_LVL_5);
    mca_btl_sctp_reg_int("inplace_min",
                         "Send contiguous data of at least this many bytes from the user's buffer "
                         "instead of packing it into a fragment (0: always pack)",
                         &c->inplace_min, 65536, OPAL_INFO_LVL_5);
    mca_btl_sctp_reg_int("free_list_num", "Initial fragments per free list", &c->free_list_num, 8,
                         OPAL_INFO_LVL_9);
    mca_btl_sctp_reg_int("free_list_max", "Most fragments per free list (-1: unlimited)",
                         &c->free_list_max, -1, OPAL_INFO_LVL_9);
    mca_btl_sctp_reg_int(
        "max_queued",
        "Most fragments queued on one endpoint while its socket has no room; beyond it "
        "btl_send refuses (the PML retries later), and btl_sendi refuses as soon as "
        "anything is queued, so a sender to a slow receiver stays bounded",
        &c->max_queued, 64, OPAL_INFO_LVL_5);
    mca_btl_sctp_reg_int(
        "keeper_ms",
        "User stack: when no MPI call has driven the stack for this long (ms), a keeper "
        "thread runs its packet layer (acknowledgements, retransmissions, queued data, "
        "path probes) without delivering anything, so that peers of a rank that computes "
        "or spins without MPI calls neither stall nor abort the association (0: no thread; "
        "such a rank then answers nothing until its next MPI call)",
        &c->keeper_ms, 10, OPAL_INFO_LVL_5);
    mca_btl_sctp_reg_int("free_list_inc", "Fragments added when a free list grows",
                         &c->free_list_inc, 32, OPAL_INFO_LVL_9);
    mca_btl_sctp_reg_int("verbose", "Verbosity of btl/sctp (0-100; 0 follows btl_base_verbose)",
                         &c->verbose, 0, OPAL_INFO_LVL_9);

    mca_btl_sctp_module.super.btl_exclusivity = MCA_BTL_EXCLUSIVITY_LOW;
    /* 128 KiB: a rendezvous costs the user stack a round trip through
     * both stacks (64 KiB ping-pong on one host, half round trip: 58-61
     * us with a 64 KiB limit, 36-37 us with this one, tcp 33). It stays below
     * max_send_size, so that the size still tells ob1's FRAG data (bulk
     * streams) from matched messages (stream 0). */
    mca_btl_sctp_module.super.btl_eager_limit = 128 * 1024;
    mca_btl_sctp_module.super.btl_rndv_eager_limit = 128 * 1024;
    mca_btl_sctp_module.super.btl_max_send_size = 256 * 1024;
    mca_btl_sctp_module.super.btl_latency = 100;
    mca_btl_sctp_module.super.btl_bandwidth = 100;
    mca_btl_sctp_module.super.btl_flags = MCA_BTL_FLAGS_SEND | MCA_BTL_FLAGS_SEND_INPLACE;
    (void) tc_ompi_watch_register(&c->super.btl_version);
    return mca_btl_base_param_register(&c->super.btl_version, &mca_btl_sctp_module.super);
}

static int mca_btl_sctp_component_open(void)
{
    mca_btl_sctp_component_t *c = &mca_btl_sctp_component;

    c->output = tc_ompi_output_open(c->verbose);
    c->sock = NULL;
    c->finalizing = 0;
    OBJ_CONSTRUCT(&c->eager_frags, opal_free_list_t);
    OBJ_CONSTRUCT(&c->max_frags, opal_free_list_t);
    OBJ_CONSTRUCT(&c->endpoints, opal_list_t);
    OBJ_CONSTRUCT(&c->pending_eps, opal_list_t);
    OBJ_CONSTRUCT(&c->lock, opal_recursive_mutex_t);
    c->use_threads = false;
    c->locking = false;
    c->keeper_on = false;
    c->keeper_input = 0;
    c->keeper_runs = 0;
    c->drives = 0;
#ifdef MCA_BTL_SCTP_HELP_DIR
    (void) opal_show_help_add_dir(MCA_BTL_SCTP_HELP_DIR);
#endif
#ifdef MCA_BTL_SCTP_SRC_HELP_DIR
    (void) opal_show_help_add_dir(MCA_BTL_SCTP_SRC_HELP_DIR);
#endif
    return OPAL_SUCCESS;
}

static int mca_btl_sctp_component_close(void)
{
    mca_btl_sctp_component_t *c = &mca_btl_sctp_component;

    if (NULL != c->sock) {
        btl_sctp_sock_close(c->sock);
        c->sock = NULL;
    }
    OBJ_DESTRUCT(&c->pending_eps);
    OBJ_DESTRUCT(&c->endpoints);
    OBJ_DESTRUCT(&c->eager_frags);
    OBJ_DESTRUCT(&c->max_frags);
    OBJ_DESTRUCT(&c->lock);
    tc_ompi_output_close(&c->output);
    return OPAL_SUCCESS;
}

/* Was sctp named in the btl selection (not as an exclusion)? Only then
 * does a failure to start deserve a message. */
static int mca_btl_sctp_requested_explicitly(void)
{
    return tc_ompi_btl_selection("sctp").named;
}

/* Does an interface (name, address) match one entry of a comma list of
 * names or a.b.c.d/n? */
static int mca_btl_sctp_if_matches(const char *list, const char *name, uint32_t ip)
{
    char **items = opal_argv_split(list, ',');
    int hit = 0;

    for (int i = 0; NULL != items && NULL != items[i] && !hit; ++i) {
        char *slash = strchr(items[i], '/');
        if (NULL != slash) {
            struct in_addr net;
            int prefix = atoi(slash + 1);
            *slash = '\0';
            if (1 == inet_pton(AF_INET, items[i], &net) && prefix >= 0 && prefix <= 32) {
                uint32_t mask = 0 == prefix ? 0 : htonl(~0u << (32 - prefix));
                hit = (ip & mask) == (net.s_addr & mask);
            }
        } else {
            hit = 0 == strcmp(items[i], name);
        }
    }
    opal_argv_free(items);
    return hit;
}

static int mca_btl_sctp_prefix_len(uint32_t mask_net)
{
    uint32_t m = ntohl(mask_net);
    int n = 0;
    while (m & 0x80000000u) {
        ++n;
        m <<= 1;
    }
    return n;
}

/* The IPv4 addresses of every allowed interface that is up. */
static int mca_btl_sctp_collect_addrs(btl_sctp_sock_addr_t *addrs, int max, char *why,
                                      size_t whylen)
{
    mca_btl_sctp_component_t *c = &mca_btl_sctp_component;
    struct ifaddrs *ifa = NULL;
    int n = 0;

    if (NULL != c->if_include && '\0' != c->if_include[0] && NULL != c->if_exclude &&
        '\0' != c->if_exclude[0]) {
        snprintf(why, whylen, "btl_sctp_if_include and btl_sctp_if_exclude are both set");
        return -1;
    }
    if (0 != getifaddrs(&ifa)) {
        snprintf(why, whylen, "getifaddrs failed");
        return -1;
    }
    for (struct ifaddrs *i = ifa; NULL != i && n < max; i = i->ifa_next) {
        uint32_t ip;
        if (NULL == i->ifa_addr || AF_INET != i->ifa_addr->sa_family || !(i->ifa_flags & IFF_UP)) {
            continue;
        }
        ip = ((struct sockaddr_in *) i->ifa_addr)->sin_addr.s_addr;
        if (NULL != c->if_include && '\0' != c->if_include[0]) {
            if (!mca_btl_sctp_if_matches(c->if_include, i->ifa_name, ip)) {
                continue;
            }
        } else if (NULL != c->if_exclude && '\0' != c->if_exclude[0] &&
                   mca_btl_sctp_if_matches(c->if_exclude, i->ifa_name, ip)) {
            continue;
        }
        addrs[n].ip = ip;
        addrs[n].port = 0;
        addrs[n].prefix =
            (uint16_t) (NULL != i->ifa_netmask
                            ? mca_btl_sctp_prefix_len(
                                  ((struct sockaddr_in *) i->ifa_netmask)->sin_addr.s_addr)
                            : 32);
        addrs[n].mtu = 0;
        {
            struct ifreq ifr;
            int fd = socket(AF_INET, SOCK_DGRAM, 0);
            memset(&ifr, 0, sizeof(ifr));
            strncpy(ifr.ifr_name, i->ifa_name, sizeof(ifr.ifr_name) - 1);
            if (fd >= 0 && 0 == ioctl(fd, SIOCGIFMTU, &ifr) && ifr.ifr_mtu > 0) {
                addrs[n].mtu = (uint32_t) ifr.ifr_mtu;
            }
            if (fd >= 0) {
                close(fd);
            }
        }
        opal_output_verbose(10, c->output, "btl:sctp: using %s %s/%d mtu %u", i->ifa_name,
                            inet_ntoa(((struct sockaddr_in *) i->ifa_addr)->sin_addr),
                            addrs[n].prefix, addrs[n].mtu);
        ++n;
    }
    freeifaddrs(ifa);
    if (0 == n) {
        snprintf(why, whylen,
                 "no IPv4 interface is up and allowed by btl_sctp_if_include/"
                 "btl_sctp_if_exclude");
        return -1;
    }
    return n;
}

static void mca_btl_sctp_disqualify(const char *why)
{
    mca_btl_sctp_component_t *c = &mca_btl_sctp_component;
    opal_output_verbose(5, c->output, "btl:sctp: disabled: %s", why);
    if (c->explicit_request) {
        opal_show_help("help-mpi-btl-sctp.txt", "unavailable", true, opal_process_info.nodename,
                       why);
    }
}

static int mca_btl_sctp_publish_modex(void)
{
    mca_btl_sctp_component_t *c = &mca_btl_sctp_component;
    btl_sctp_sock_addr_t addrs[BTL_SCTP_SOCK_MAX_ADDRS];
    char buf[sizeof(mca_btl_sctp_modex_t) +
             BTL_SCTP_SOCK_MAX_ADDRS * sizeof(mca_btl_sctp_modex_addr_t)];
    mca_btl_sctp_modex_t *m = (mca_btl_sctp_modex_t *) buf;
    int n = btl_sctp_sock_local_addrs(c->sock, addrs, BTL_SCTP_SOCK_MAX_ADDRS);
    int rc;

    memset(buf, 0, sizeof(buf));
    m->version = MCA_BTL_SCTP_MODEX_VERSION;
    m->stack = (uint8_t) c->stack;
    m->naddrs = (uint8_t) n;
    m->crc32c = (uint8_t) (c->crc32c ? 1 : 0);
    m->sctp_port = (uint16_t) c->sctp_port;
    m->num_streams = (uint16_t) c->num_streams;
    for (int i = 0; i < n; ++i) {
        m->addrs[i].ip = addrs[i].ip;
        m->addrs[i].port = addrs[i].port;
    }
    TC_OMPI_MODEX_SEND(rc, TC_OMPI_SCOPE_GLOBAL, &c->super.btl_version, buf,
                       sizeof(*m) + (size_t) n * sizeof(mca_btl_sctp_modex_addr_t));
    return rc;
}

static mca_btl_base_module_t **
mca_btl_sctp_component_init(int *num_btls, bool enable_progress_threads, bool enable_mpi_threads)
{
    mca_btl_sctp_component_t *c = &mca_btl_sctp_component;
    mca_btl_base_module_t **btls;
    btl_sctp_sock_addr_t addrs[BTL_SCTP_SOCK_MAX_ADDRS];
    btl_sctp_sock_config_t cfg;
    char why[512] = "", why2[256] = "";
    size_t max_payload;
    int naddrs, rc;
    (void) enable_progress_threads;

    *num_btls = 0;
    c->use_threads = enable_mpi_threads;
    c->locking = enable_mpi_threads;
    c->explicit_request = mca_btl_sctp_requested_explicitly();

    /* the stack */
    c->stack = c->stack_param;
    if (BTL_SCTP_STACK_AUTO == c->stack) {
        if (0 == btl_sctp_sock_probe(BTL_SCTP_STACK_KERNEL, why, sizeof(why))) {
            c->stack = BTL_SCTP_STACK_KERNEL;
        } else if (0 == btl_sctp_sock_probe(BTL_SCTP_STACK_USER, why2, sizeof(why2))) {
            c->stack = BTL_SCTP_STACK_USER;
        } else {
            size_t l = strlen(why);
            snprintf(why + l, sizeof(why) - l, "; %s", why2);
            mca_btl_sctp_disqualify(why);
            return NULL;
        }
    } else if (0 != btl_sctp_sock_probe(c->stack, why, sizeof(why))) {
        mca_btl_sctp_disqualify(why);
        return NULL;
    }
    if (c->num_streams < 1 || c->num_streams > 1024) {
        mca_btl_sctp_disqualify("btl_sctp_num_streams must be between 1 and 1024");
        return NULL;
    }
    if (c->max_queued < 1) {
        mca_btl_sctp_disqualify("btl_sctp_max_queued must be at least 1");
        return NULL;
    }
    if (c->sack_freq < 1 || c->sack_freq > 16) {
        mca_btl_sctp_disqualify("btl_sctp_sack_freq must be between 1 and 16");
        return NULL;
    }

    if (OPAL_SUCCESS != mca_btl_base_param_verify(&mca_btl_sctp_module.super)) {
        return NULL;
    }
    max_payload = mca_btl_sctp_module.super.btl_max_send_size;
    if (mca_btl_sctp_module.super.btl_eager_limit > max_payload) {
        max_payload = mca_btl_sctp_module.super.btl_eager_limit;
    }

    naddrs = mca_btl_sctp_collect_addrs(addrs, BTL_SCTP_SOCK_MAX_ADDRS, why, sizeof(why));
    if (naddrs < 1) {
        mca_btl_sctp_disqualify(why);
        return NULL;
    }
    btl_sctp_sock_config_default(&cfg, c->stack);
    cfg.sctp_port = c->sctp_port;
    cfg.num_streams = c->num_streams;
    cfg.sndbuf = c->sndbuf;
    cfg.rcvbuf = c->rcvbuf;
    cfg.nodelay = c->nodelay;
    cfg.mtu = c->mtu;
    cfg.crc32c = c->crc32c;
    cfg.pool = c->user_pool;
    cfg.sack_freq = c->sack_freq;
    cfg.send_batch = c->send_batch;
    cfg.gro = c->gro;
    cfg.segment = c->segment;
    cfg.probe_ms = c->probe_ms;
    cfg.path_timeout_ms = c->path_timeout_ms;
    cfg.rto_min_ms = c->rto_min_ms;
    cfg.rto_max_ms = c->rto_max_ms;
    cfg.rto_initial_ms = c->rto_initial_ms;
    cfg.max_retrans = c->max_retrans;
    cfg.path_max_retrans = c->path_max_retrans;
    cfg.pf_retrans = c->pf_retrans;
    cfg.hb_ms = c->hb_ms;
    cfg.cmt = c->cmt;
    cfg.prio_streams = c->prio_streams;
    cfg.max_msg = max_payload + MCA_BTL_SCTP_HDR_SIZE;
    if ((size_t) cfg.sndbuf < 2 * cfg.max_msg || (size_t) cfg.rcvbuf < 2 * cfg.max_msg) {
        mca_btl_sctp_disqualify("btl_sctp_sndbuf and btl_sctp_rcvbuf must hold two fragments of "
                                "btl_sctp_max_send_size");
        return NULL;
    }
    rc = btl_sctp_sock_open(&c->sock, &cfg, addrs, naddrs, why, sizeof(why));
    if (0 != rc) {
        mca_btl_sctp_disqualify(why);
        return NULL;
    }

    /* Small messages take fragments of at most MCA_BTL_SCTP_SMALL_FRAG
     * bytes whatever the eager limit: a larger eager message is sent in
     * place (only ob1's header is in the fragment) or, when it must be
     * packed, takes a max-size fragment. */
    c->eager_frag_size = mca_btl_sctp_module.super.btl_eager_limit < MCA_BTL_SCTP_SMALL_FRAG
                             ? mca_btl_sctp_module.super.btl_eager_limit
                             : MCA_BTL_SCTP_SMALL_FRAG;
    c->max_frag_size = max_payload;
    rc = opal_free_list_init(&c->eager_frags, sizeof(mca_btl_sctp_frag_t), opal_cache_line_size,
                             OBJ_CLASS(mca_btl_sctp_frag_t),
                             c->eager_frag_size + MCA_BTL_SCTP_HDR_SIZE,
                             opal_cache_line_size, c->free_list_num, c->free_list_max,
                             c->free_list_inc, NULL, 0, NULL, mca_btl_sctp_frag_init,
                             &c->eager_frags);
    if (OPAL_SUCCESS == rc) {
        rc = opal_free_list_init(&c->max_frags, sizeof(mca_btl_sctp_frag_t), opal_cache_line_size,
                                 OBJ_CLASS(mca_btl_sctp_frag_t),
                                 max_payload + MCA_BTL_SCTP_HDR_SIZE, opal_cache_line_size,
                                 c->free_list_num, c->free_list_max, c->free_list_inc, NULL, 0,
                                 NULL, mca_btl_sctp_frag_init, &c->max_frags);
    }
    if (OPAL_SUCCESS != rc || OPAL_SUCCESS != mca_btl_sctp_publish_modex()) {
        btl_sctp_sock_close(c->sock);
        c->sock = NULL;
        mca_btl_sctp_disqualify("out of memory or modex failure at initialisation");
        return NULL;
    }
    tc_ompi_watch_publish(&c->super.btl_version);

    btls = (mca_btl_base_module_t **) malloc(sizeof(mca_btl_base_module_t *));
    if (NULL == btls) {
        tc_ompi_watch_stop();
        btl_sctp_sock_close(c->sock);
        c->sock = NULL;
        return NULL;
    }
    btls[0] = &mca_btl_sctp_module.super;
    *num_btls = 1;
    (void) mca_btl_sctp_keeper_start(c);
    opal_output_verbose(5, c->output, "btl:sctp: %s stack, %d address(es), %d streams",
                        BTL_SCTP_STACK_KERNEL == c->stack ? "kernel" : "user", naddrs,
                        c->num_streams);
    return btls;
}

int mca_btl_sctp_component_progress(void)
{
    mca_btl_sctp_component_t *c = &mca_btl_sctp_component;
    /* one thread at a time drives the stack; a callback that calls
     * opal_progress again must not re-enter either */
    static tc_guard_t busy;
    btl_sctp_sock_msg_t msg;
    int count = 0;

    if (NULL == c->sock) {
        return 0;
    }
    if (c->use_threads) {
        if (!tc_guard_try_enter(&busy)) {
            return 0;
        }
    } else if (busy.taken) {
        return 0;
    } else {
        busy.taken = 1;
    }
    mca_btl_sctp_lock();
    if (NULL == c->sock) {
        goto out; /* finalized by another thread meanwhile */
    }
    count += mca_btl_sctp_lost_progress();
    count += mca_btl_sctp_others_learn();
    /* packets in, then their messages out, a few rounds while packets
     * remain: the stack's receive buffer stays nearly empty and its
     * window open */
    if (c->keeper_on) {
        tc_atomic_store_relaxed(&c->drives, c->drives + 1); /* the keeper may rest */
    }
    for (int round = 0; round < 8; ++round) {
        int packets = btl_sctp_sock_progress(c->sock);
        int got = 0;
        if (0 == packets && !c->keeper_input) {
            break; /* nothing new can be readable: spare the receive call */
        }
        c->keeper_input = 0;
        for (;;) {
            int rc = btl_sctp_sock_recv(c->sock, &msg);
            if (rc <= 0) {
                if (rc < 0) {
                    opal_output_verbose(1, c->output, "btl:sctp: receive error %d dropped", rc);
                }
                break;
            }
            mca_btl_sctp_recv_msg(&msg);
            ++got;
        }
        count += got;
        if (!c->sock->more) {
            break; /* every socket was read to the end: back to the PML */
        }
    }
    if (!opal_list_is_empty(&c->pending_eps)) {
        count += mca_btl_sctp_endpoint_flush_all();
    }
out:
    mca_btl_sctp_unlock();
    if (c->use_threads) {
        tc_guard_leave(&busy);
    } else {
        busy.taken = 0;
    }
    return count;
}
