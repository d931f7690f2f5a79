/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * btl_sctp_sock_udp.c: the UDP path layer under the user stack.
 *
 * One UDP socket per local address carries the SCTP packets usrsctp puts
 * out (one packet per datagram) and the path probes. A peer has one path
 * per advertised address, from the local socket in the same subnet.
 * Paths are probed (mca_btl_sctp_probe_t, btl_sctp_hdr.h, answered by an
 * ack); packets go out on the first path whose ack is recent, or on all
 * paths when none is known to be alive. With CMT (btl_sctp_cmt) they go
 * round robin over every live path: concurrent multipath transfer below
 * SCTP, for the same reason as multihoming is done here. When a path dies, SCTP's own
 * retransmissions carry the lost packets over the next live path (the
 * association sees one AF_CONN address: usrsctp does not carry AF_CONN
 * addresses in INIT, so SCTP-level multihoming is not possible).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* recvmmsg */
#endif
#include "tc_config.h"

#if TC_HAVE_USRSCTP

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "btl_sctp_hdr.h"
#include "tc_atomic.h"
#include "btl_sctp_sock_user.h"

/* A path is dead when it has not answered for path_timeout_ms while
 * another path has: the silence is the path's, not the peer's. When the
 * peer answers on no path (its process is not scheduled on a loaded host,
 * or it is busy outside MPI) no path is declared dead and traffic stays
 * where it is; if every path was really cut, SCTP retransmits until one
 * answers again, and that one is then alive alone. */
static int btl_sctp_udp_path_alive(const btl_sctp_peer_t *p, int i, uint64_t now)
{
    uint64_t newest = 0;
    (void) now;
    if (0 == p->paths[i].last_ack_ms) {
        return 0;
    }
    for (int k = 0; k < p->npaths; ++k) {
        if (p->paths[k].last_ack_ms > newest) {
            newest = p->paths[k].last_ack_ms;
        }
    }
    return newest - p->paths[i].last_ack_ms <= (uint64_t) p->sock->cfg.path_timeout_ms;
}

/* The first live path in advertised order: both sides prefer the same
 * path and fail back to it when it returns. */
static void btl_sctp_udp_choose_path(btl_sctp_peer_t *p, uint64_t now)
{
    int old = p->active, oldlive = p->nlive;
    p->active = -1;
    p->nlive = 0;
    for (int i = 0; i < p->npaths; ++i) {
        if (btl_sctp_udp_path_alive(p, i, now)) {
            if (p->active < 0) {
                p->active = i;
            }
            p->live[p->nlive++] = i;
        }
    }
    if (p->active >= 0 &&
        ((old >= 0 && old != p->active && !btl_sctp_udp_path_alive(p, old, now)) ||
         (p->sock->cfg.cmt && p->nlive < oldlive))) {
        /* traffic moved off a dead path: what was lost on it is
         * retransmitted at once, not when the backed-off timer expires */
        p->sock->kick = 1;
    }
    if (old != p->active || (p->sock->cfg.cmt && oldlive != p->nlive)) {
        btl_sctp_user_apply_mtu(p);
    }
}

void btl_sctp_udp_set_buf(int fd, int opt_force, int opt, int size)
{
    /* Root may exceed net.core.[rw]mem_max; others get what is allowed. */
    if (setsockopt(fd, SOL_SOCKET, opt_force, &size, sizeof(size)) < 0) {
        (void) setsockopt(fd, SOL_SOCKET, opt, &size, sizeof(size));
    }
}

int btl_sctp_udp_open(user_sock_t *us, const btl_sctp_sock_addr_t *local, int nlocal, char *why,
                      size_t whylen)
{
    for (int i = 0; i < nlocal; ++i) {
        struct sockaddr_in sin;
        socklen_t slen = sizeof(sin);
        int one = 1;
        int fd = socket(AF_INET, SOCK_DGRAM, 0);
        if (fd < 0) {
            int rc = -errno;
            snprintf(why, whylen, "UDP socket: %s", strerror(errno));
            return rc;
        }
        memset(&sin, 0, sizeof(sin));
        sin.sin_family = AF_INET;
        sin.sin_addr.s_addr = local[i].ip;
        sin.sin_port = local[i].port;
        if (bind(fd, (struct sockaddr *) &sin, sizeof(sin)) < 0 ||
            getsockname(fd, (struct sockaddr *) &sin, &slen) < 0) {
            char ip[INET_ADDRSTRLEN];
            int rc = -errno;
            close(fd);
            inet_ntop(AF_INET, &local[i].ip, ip, sizeof(ip));
            snprintf(why, whylen, "bind UDP %s: %s", ip, strerror(-rc));
            return rc;
        }
        us->udp_fd[us->base.nlocal] = fd;
        us->sock_lidx[us->base.nlocal] = us->base.nlocal;
        us->nsock = us->base.nlocal + 1;
        /* after the bind (btl_sctp_sock_conn.c): a path's connected socket
         * may then share the port */
        (void) setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
        btl_sctp_udp_set_buf(fd, SO_RCVBUFFORCE, SO_RCVBUF, us->cfg.rcvbuf);
        btl_sctp_udp_set_buf(fd, SO_SNDBUFFORCE, SO_SNDBUF, us->cfg.sndbuf);
        us->base.local[us->base.nlocal] = local[i];
        us->base.local[us->base.nlocal].port = sin.sin_port;
        us->base.nlocal++;
    }
    if (us->cfg.cmt && us->base.nlocal > 1) {
        /* CMT's receive pass: a batch from every socket, each buffer split */
        us->rx_max = (size_t) USER_RX_BATCH * USER_NSOCK_MAX * USER_GRO_MAX_SEGS;
        us->rx = malloc(us->rx_max * sizeof(*us->rx));
        us->rx_order = malloc(us->rx_max * sizeof(*us->rx_order));
        if (NULL == us->rx || NULL == us->rx_order) {
            snprintf(why, whylen, "out of memory");
            return -ENOMEM;
        }
    }
    return 0;
}

void btl_sctp_udp_close(user_sock_t *us)
{
    for (int i = 0; i < us->nsock; ++i) {
        if (us->udp_fd[i] >= 0) {
            close(us->udp_fd[i]);
        }
    }
    us->nsock = 0;
    free(us->rx);
    free(us->rx_order);
    us->rx = NULL;
    us->rx_order = NULL;
}

static int btl_sctp_udp_prefix_match(uint32_t a, uint32_t b, int prefix)
{
    uint32_t mask = 0 == prefix ? 0 : htonl(~0u << (32 - prefix));
    return (a & mask) == (b & mask);
}

/* A path per remote address, from the local socket in its subnet
 * (loopback to loopback, else any non-loopback socket for a routed peer);
 * a loopback address no loopback socket can reach is skipped. */
void btl_sctp_udp_peer_paths(user_sock_t *us, btl_sctp_peer_t *p, const btl_sctp_sock_addr_t *addrs,
                             int naddrs)
{
    for (int r = 0; r < naddrs; ++r) {
        int remote_lo = (ntohl(addrs[r].ip) >> 24) == 127;
        int local_lo = 0;
        int lidx = -1;
        for (int l = 0; l < us->base.nlocal && lidx < 0; ++l) {
            int lo = (ntohl(us->base.local[l].ip) >> 24) == 127;
            if (remote_lo ? lo
                          : (!lo &&
                             btl_sctp_udp_prefix_match(addrs[r].ip, us->base.local[l].ip,
                                                       us->base.local[l].prefix))) {
                lidx = l;
                local_lo = lo;
            }
        }
        /* a routed peer (no subnet in common): the first non-loopback
         * socket, and the kernel's routing table picks the way */
        for (int l = 0; l < us->base.nlocal && lidx < 0 && !remote_lo; ++l) {
            if ((ntohl(us->base.local[l].ip) >> 24) != 127) {
                lidx = l;
            }
        }
        if (lidx < 0) {
            continue;
        }
        user_path_t *path = &p->paths[p->npaths++];
        path->lidx = lidx;
        path->to.sin_family = AF_INET;
        path->to.sin_addr.s_addr = addrs[r].ip;
        path->to.sin_port = addrs[r].port;
        /* a peer address that is one of ours is routed through loopback */
        for (int l = 0; l < us->base.nlocal && !local_lo; ++l) {
            local_lo = us->base.local[l].ip == addrs[r].ip;
        }
        path->dgram = local_lo ? USER_UDP_MAX_DGRAM
                               : (us->base.local[lidx].mtu > USER_UDP_OVERHEAD + 512
                                      ? us->base.local[lidx].mtu - USER_IP_UDP_HDRS
                                      : 1500 - USER_IP_UDP_HDRS);
        if (us->cfg.dgram > 0 && (uint32_t) us->cfg.dgram < path->dgram) {
            path->dgram = (uint32_t) us->cfg.dgram;
        }
        /* SCTP packets of the datagram's size, or as large as its
         * segments allow */
        path->mtu = us->segment                ? (uint32_t) btl_sctp_seg_packet_size(path->dgram)
            : path->dgram >= USER_LOOPBACK_MTU ? USER_LOOPBACK_MTU
                                               : path->dgram - USER_UDP_SLACK;
        path->ra = NULL;
        btl_sctp_udp_conn_open(us, path);
    }
}

void btl_sctp_udp_output(btl_sctp_peer_t *p, const void *buf, size_t len)
{
    if (p->sock->cfg.cmt && p->nlive > 1) {
        /* CMT: one packet per live path in turn. Equal paths deliver them
         * nearly in order, so SCTP sees little reordering (a TSN is only
         * fast-retransmitted after three SACKs report it missing). */
        btl_sctp_udp_queue(p->sock, &p->paths[p->live[p->rr++ % (unsigned) p->nlive]], buf, len);
    } else if (p->active >= 0) {
        btl_sctp_udp_queue(p->sock, &p->paths[p->active], buf, len);
    } else {
        for (int i = 0; i < p->npaths; ++i) {
            btl_sctp_udp_queue(p->sock, &p->paths[i], buf, len);
        }
    }
}

static void btl_sctp_udp_probe_send(user_sock_t *us, btl_sctp_peer_t *p, int i, uint8_t kind,
                                    uint32_t seq)
{
    mca_btl_sctp_probe_t probe;

    memset(&probe, 0, sizeof(probe));
    probe.kind = kind;
    probe.seq = htonl(seq);
    probe.path = htonl((uint32_t) i);
    btl_sctp_udp_queue(us, &p->paths[i], &probe, sizeof(probe));
}

void btl_sctp_udp_probe_paths(user_sock_t *us, uint64_t now)
{
    for (int k = 0; k < us->npeers; ++k) {
        btl_sctp_peer_t *p = us->peers[k];
        if (!p->probing || NULL == p->cookie) {
            continue;
        }
        for (int i = 0; i < p->npaths; ++i) {
            if (now - p->paths[i].last_probe_ms >= (uint64_t) us->cfg.probe_ms) {
                p->paths[i].last_probe_ms = now;
                btl_sctp_udp_probe_send(us, p, i, MCA_BTL_SCTP_PROBE, (uint32_t) now);
            }
        }
        btl_sctp_udp_choose_path(p, now);
    }
}

/* An SCTP packet from p came in on UDP socket s: the path it took works (a
 * cut network carries nothing either way). Without this a path that
 * carries a stream would depend on its probes alone, and they wait in
 * the same queues as the data: behind a rate-limited link's backlog an
 * answer can take longer than path_timeout_ms. */
static void btl_sctp_udp_heard(btl_sctp_peer_t *p, int s, const struct sockaddr_in *from,
                               uint64_t now)
{
    int l = p->sock->sock_lidx[s];
    for (int i = 0; i < p->npaths; ++i) {
        user_path_t *path = &p->paths[i];
        if (path->lidx == l && path->to.sin_addr.s_addr == from->sin_addr.s_addr &&
            path->to.sin_port == from->sin_port) {
            int was_alive = btl_sctp_udp_path_alive(p, i, now);
            path->last_ack_ms = now;
            if (!was_alive) {
                btl_sctp_udp_choose_path(p, now);
            }
            return;
        }
    }
}

/* A probe or ack that came in on UDP socket s from p. */
static void btl_sctp_udp_probe_input(user_sock_t *us, int s, btl_sctp_peer_t *p, unsigned char *pkt,
                                     size_t n, const struct sockaddr_in *from, uint64_t now)
{
    mca_btl_sctp_probe_t probe;
    uint32_t idx;

    if (MCA_BTL_SCTP_PROBE_SIZE != n) {
        return;
    }
    memcpy(&probe, pkt, sizeof(probe));
    if (MCA_BTL_SCTP_PROBE == probe.kind) {
        /* answer on the path it came in on: same socket, same address */
        probe.kind = MCA_BTL_SCTP_PROBE_ACK;
        (void) sendto(us->udp_fd[s], &probe, sizeof(probe), MSG_DONTWAIT,
                      (const struct sockaddr *) from, sizeof(*from));
    } else if (MCA_BTL_SCTP_PROBE_ACK == probe.kind) {
        idx = ntohl(probe.path);
        if (idx < (uint32_t) p->npaths &&
            p->paths[idx].to.sin_addr.s_addr == from->sin_addr.s_addr &&
            p->paths[idx].to.sin_port == from->sin_port) {
            int was_alive = btl_sctp_udp_path_alive(p, (int) idx, now);
            p->paths[idx].last_ack_ms = now;
            if (p->active < 0 || (int) idx < p->active || (p->sock->cfg.cmt && !was_alive)) {
                btl_sctp_udp_choose_path(p, now);
            }
        }
    }
}

/* The peer a datagram came from; NULL: no peer we know. */
static btl_sctp_peer_t *btl_sctp_udp_peer_from(user_sock_t *us, const struct sockaddr_in *from)
{
    void *v;
    if (!tc_hash_get(&us->by_addr, btl_sctp_sock_addr_key(from->sin_addr.s_addr, from->sin_port),
                     &v)) {
        return NULL;
    }
    return (btl_sctp_peer_t *) v;
}

/* A whole SCTP packet from p came in on UDP socket s: for usrsctp. */
static void btl_sctp_udp_packet(user_sock_t *us, int s, btl_sctp_peer_t *p, unsigned char *pkt,
                                size_t n, const struct sockaddr_in *from, uint64_t now)
{
    btl_sctp_udp_heard(p, s, from, now);
    p->probing = 1;
    us->hot_ms[s] = now;
    btl_sctp_user_input(p, pkt, n);
}

/* A segment that came apart from the rest of its packet: gathered in the
 * reassembly buffer of the path it came in on. */
static void btl_sctp_udp_segment(user_sock_t *us, int sock, btl_sctp_peer_t *p,
                                 const unsigned char *d, size_t n, const struct sockaddr_in *from,
                                 uint64_t now)
{
    btl_sctp_seg_info_t s;
    user_path_t *path = NULL;
    int l = us->sock_lidx[sock];
    size_t len;

    for (int i = 0; i < p->npaths && NULL == path; ++i) {
        if (p->paths[i].lidx == l && p->paths[i].to.sin_addr.s_addr == from->sin_addr.s_addr &&
            p->paths[i].to.sin_port == from->sin_port) {
            path = &p->paths[i];
        }
    }
    if (NULL == path || 0 != btl_sctp_seg_parse(d, n, &s)) {
        btl_sctp_udp_note_seg(0, 0, 1);
        return;
    }
    if (NULL == path->ra) {
        path->ra = malloc(sizeof(*path->ra));
        if (NULL == path->ra) {
            btl_sctp_udp_note_seg(0, 0, 1);
            return;
        }
        path->ra->busy = 0;
    }
    len = btl_sctp_seg_add(path->ra, &s);
    if (len > 0) {
        btl_sctp_udp_note_seg(0, 1, 0);
        btl_sctp_udp_packet(us, sock, p, path->ra->buf, len, from, now);
    }
}

/* One datagram from UDP socket l: a path probe or ack, a segment, or an
 * SCTP packet for usrsctp. */
static void btl_sctp_udp_datagram(user_sock_t *us, int l, unsigned char *pkt, size_t n,
                                  const struct sockaddr_in *from, uint64_t now)
{
    btl_sctp_peer_t *p = btl_sctp_udp_peer_from(us, from);

    if (NULL == p) {
        /* not from a peer we know: drop (its sender may be a process of
         * another job the component has no endpoint for yet: counted so
         * that the component looks for one, and the packet's resend is
         * taken in) */
        ++us->base.strangers;
        return;
    }
    if (n >= 2 && 0 == pkt[0] && 0 == pkt[1]) {
        if (n > 2 && MCA_BTL_SCTP_SEGMENT == pkt[2]) {
            btl_sctp_udp_segment(us, l, p, pkt, n, from, now);
        } else {
            btl_sctp_udp_probe_input(us, l, p, pkt, n, from, now);
        }
        return;
    }
    btl_sctp_udp_packet(us, l, p, pkt, n, from, now);
}

/* The k datagrams of one received buffer (at base + off[j], seglen[j]
 * bytes each, in order): the segments of a packet that lie whole and in
 * order in it are put together in place, the rest go one by one. */
static void btl_sctp_udp_buffer(user_sock_t *us, int l, unsigned char *base, const size_t *off,
                                const size_t *seglen, int k, const struct sockaddr_in *from,
                                uint64_t now)
{
    for (int j = 0; j < k;) {
        const unsigned char *d = base + off[j];
        if (seglen[j] > MCA_BTL_SCTP_SEG_HDR_SIZE && 0 == d[0] && 0 == d[1] &&
            MCA_BTL_SCTP_SEGMENT == d[2]) {
            btl_sctp_peer_t *p = btl_sctp_udp_peer_from(us, from);
            unsigned char *pkt;
            size_t plen;
            int c;
            if (NULL == p) {
                return; /* the whole buffer is from one sender */
            }
            c = btl_sctp_seg_whole(base, off, seglen, k, j, &pkt, &plen);
            if (c > 0) {
                btl_sctp_udp_note_seg(1, 0, 0);
                btl_sctp_udp_packet(us, l, p, pkt, plen, from, now);
                j += c;
                continue;
            }
        }
        btl_sctp_udp_datagram(us, l, base + off[j], seglen[j], from, now);
        ++j;
    }
}

/* The TSNs of the first and last DATA or I-DATA chunk of an SCTP packet;
 * 0 when the packet carries none (a SACK alone, a control chunk). */
static int btl_sctp_udp_tsns(const unsigned char *pkt, size_t n, uint32_t *first, uint32_t *last)
{
    size_t off = 12; /* common header */
    int found = 0;
    while (off + 8 <= n) {
        uint16_t clen = (uint16_t) ((pkt[off + 2] << 8) | pkt[off + 3]);
        if (0 == pkt[off] || 64 == pkt[off]) { /* DATA, I-DATA */
            uint32_t t;
            memcpy(&t, pkt + off + 4, 4);
            *last = ntohl(t);
            if (!found) {
                *first = *last;
            }
            found = 1;
        }
        if (clen < 4) {
            break;
        }
        off += ((size_t) clen + 3) & ~(size_t) 3;
    }
    return found;
}

/* CMT counters of the process (every socket), for the stack's statistics:
 * packets held ahead of a gap, gaps given up after USER_CMT_HOLD_MS, gaps
 * given up because the hold area was full. */
static uint64_t btl_sctp_udp_n_held, btl_sctp_udp_n_timeout, btl_sctp_udp_n_full;

void btl_sctp_udp_cmt_counts(uint64_t *held, uint64_t *timeout, uint64_t *full)
{
    *held = tc_atomic_load_relaxed(&btl_sctp_udp_n_held);
    *timeout = tc_atomic_load_relaxed(&btl_sctp_udp_n_timeout);
    *full = tc_atomic_load_relaxed(&btl_sctp_udp_n_full);
}

static int btl_sctp_udp_tsn_gt(uint32_t a, uint32_t b)
{
    return (int32_t) (a - b) > 0;
}

void btl_sctp_udp_peer_fini(btl_sctp_peer_t *p)
{
    for (int i = 0; i < p->npaths; ++i) {
        free(p->paths[i].ra);
        p->paths[i].ra = NULL;
        btl_sctp_udp_conn_close(p->sock, &p->paths[i]);
    }
    free(p->held);
    free(p->hold_mem);
    p->held = NULL;
    p->hold_mem = NULL;
    p->nheld = 0;
}

/* Hand the held packet k on and free its slot. */
static void btl_sctp_udp_release(user_sock_t *us, btl_sctp_peer_t *p, int k, uint64_t now)
{
    user_held_t h = p->held[k];
    memmove(&p->held[k], &p->held[k + 1], (size_t) (p->nheld - k - 1) * sizeof(h));
    if (0 == --p->nheld) {
        --us->holding;
    }
    if (!p->tsn_known || btl_sctp_udp_tsn_gt(h.last + 1, p->next_tsn)) {
        p->next_tsn = h.last + 1;
        p->tsn_known = 1;
    }
    p->free_slot[p->nfree++] = h.buf;
    btl_sctp_udp_datagram(us, h.l, h.buf, h.len, &h.from, now);
}

/* Held packets that are next in order now. */
static void btl_sctp_udp_release_ready(user_sock_t *us, btl_sctp_peer_t *p, uint64_t now)
{
    while (p->nheld > 0 && !btl_sctp_udp_tsn_gt(p->held[0].first, p->next_tsn)) {
        btl_sctp_udp_release(us, p, 0, now);
    }
}

/* Held packets older than USER_CMT_HOLD_MS: the gap before them is a
 * loss (or a long detour); SCTP sees it and repairs it. */
static void btl_sctp_udp_release_old(user_sock_t *us, uint64_t now)
{
    for (int k = 0; k < us->npeers && us->holding > 0; ++k) {
        btl_sctp_peer_t *p = us->peers[k];
        int old = 0;
        for (int i = 0; i < p->nheld; ++i) {
            old |= now - p->held[i].t >= USER_CMT_HOLD_MS;
        }
        if (old) {
            us->cmt_flushed += (uint64_t) p->nheld;
            tc_atomic_fetch_add_relaxed(&btl_sctp_udp_n_timeout, 1);
            /* everything up to the newest held packet goes, in order */
            p->next_tsn = p->held[p->nheld - 1].last + 1;
            while (p->nheld > 0) {
                btl_sctp_udp_release(us, p, 0, now);
            }
        }
    }
}

/* CMT receiver: a data packet (TSNs first..last) in order is handed on,
 * with the held packets it lets through; one ahead of a gap is held. */
static void btl_sctp_udp_cmt_data(user_sock_t *us, int l, unsigned char *pkt, size_t n,
                                  const struct sockaddr_in *from, uint32_t first, uint32_t last,
                                  uint64_t now)
{
    btl_sctp_peer_t *p;
    void *v;
    int j;

    if (!tc_hash_get(&us->by_addr, btl_sctp_sock_addr_key(from->sin_addr.s_addr, from->sin_port),
                     &v)) {
        return;
    }
    p = (btl_sctp_peer_t *) v;
    if (p->tsn_known && btl_sctp_udp_tsn_gt(first, p->next_tsn) && n <= USER_CMT_HOLD_SLOT &&
        (NULL != p->hold_mem || p->npaths > 1)) {
        if (NULL == p->hold_mem) {
            p->hold_mem = malloc((size_t) USER_CMT_HOLD_MAX * USER_CMT_HOLD_SLOT);
            p->held = malloc(USER_CMT_HOLD_MAX * sizeof(*p->held));
            if (NULL == p->hold_mem || NULL == p->held) {
                btl_sctp_udp_peer_fini(p);
                goto deliver;
            }
            for (int i = 0; i < USER_CMT_HOLD_MAX; ++i) {
                p->free_slot[i] = p->hold_mem + (size_t) i * USER_CMT_HOLD_SLOT;
            }
            p->nfree = USER_CMT_HOLD_MAX;
        }
        if (p->nheld == USER_CMT_HOLD_MAX) {
            /* full: the oldest gap is taken as a loss */
            tc_atomic_fetch_add_relaxed(&btl_sctp_udp_n_full, 1);
            p->next_tsn = p->held[0].first;
            btl_sctp_udp_release_ready(us, p, now);
        }
        if (p->nheld < USER_CMT_HOLD_MAX) {
            for (j = p->nheld; j > 0 && btl_sctp_udp_tsn_gt(p->held[j - 1].first, first); --j) {
                p->held[j] = p->held[j - 1];
            }
            p->held[j].first = first;
            p->held[j].last = last;
            p->held[j].t = now;
            p->held[j].len = n;
            p->held[j].l = l;
            p->held[j].from = *from;
            p->held[j].buf = p->free_slot[--p->nfree];
            memcpy(p->held[j].buf, pkt, n);
            if (0 == p->nheld++) {
                ++us->holding;
            }
            ++us->cmt_held;
            tc_atomic_fetch_add_relaxed(&btl_sctp_udp_n_held, 1);
            return;
        }
    }
deliver:
    if (!p->tsn_known || btl_sctp_udp_tsn_gt(last + 1, p->next_tsn)) {
        p->next_tsn = last + 1;
        p->tsn_known = 1;
    }
    btl_sctp_udp_datagram(us, l, pkt, n, from, now);
    btl_sctp_udp_release_ready(us, p, now);
}

/* Receive buffers for one recvmmsg on socket l: datagram i lands in
 * us->pkt at slot base + i, its sender in from[i]; with GRO a control
 * buffer for the segment size. */
typedef union {
    char buf[CMSG_SPACE(sizeof(int))];
    struct cmsghdr align;
} user_rx_ctrl_t;

static int btl_sctp_udp_recv_batch(user_sock_t *us, int l, size_t base, struct mmsghdr *mm,
                                   struct iovec *iov, struct sockaddr_in *from,
                                   user_rx_ctrl_t *ctrl)
{
    memset(mm, 0, USER_RX_BATCH * sizeof(*mm));
    for (int i = 0; i < USER_RX_BATCH; ++i) {
        iov[i].iov_base = us->pkt + (base + (size_t) i) * us->pkt_size;
        iov[i].iov_len = us->pkt_size;
        mm[i].msg_hdr.msg_iov = &iov[i];
        mm[i].msg_hdr.msg_iovlen = 1;
        mm[i].msg_hdr.msg_name = &from[i];
        mm[i].msg_hdr.msg_namelen = sizeof(from[i]);
        if (us->gro) {
            mm[i].msg_hdr.msg_control = ctrl[i].buf;
            mm[i].msg_hdr.msg_controllen = sizeof(ctrl[i].buf);
        }
    }
    return btl_sctp_udp_recvmmsg(us, l, mm, USER_RX_BATCH);
}

/* The datagrams of received message i: 0 when it is to be dropped (no
 * IPv4 sender, truncated, or not a valid GRO buffer). */
static int btl_sctp_udp_split(user_sock_t *us, const struct mmsghdr *m, size_t *off, size_t *seglen)
{
    long seg;
    int n;

    if (sizeof(struct sockaddr_in) != m->msg_hdr.msg_namelen ||
        0 != (m->msg_hdr.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) || m->msg_len > us->pkt_size) {
        return 0; /* a cut control message may have lost the segment size */
    }
    seg = us->gro ? btl_sctp_udp_gro_size(&m->msg_hdr) : 0;
    n = btl_sctp_udp_gro_split(m->msg_len, seg, USER_GRO_MAX_SEGS, off, seglen);
    if (n > 0) {
        btl_sctp_udp_note_rx(1, n > 1, (size_t) n);
    }
    return n > 0 ? n : 0;
}

/* CMT: one batch from every UDP socket, the packets carrying data handed
 * to usrsctp in TSN order. The sender spreads consecutive packets over
 * the paths; read one socket after the other, they would reach SCTP out
 * of order by up to a batch, and each gap makes the receiver SACK at
 * once and the sender fast-retransmit data that was never lost. */
static int btl_sctp_udp_poll_cmt(user_sock_t *us, uint64_t now, int *drained)
{
    enum { MAXB = USER_RX_BATCH * USER_NSOCK_MAX };
    struct mmsghdr mm[USER_RX_BATCH];
    struct iovec iov[USER_RX_BATCH];
    user_rx_ctrl_t ctrl[USER_RX_BATCH];
    struct sockaddr_in from[MAXB];
    size_t off[USER_GRO_MAX_SEGS], seglen[USER_GRO_MAX_SEGS];
    user_rx_pkt_t *rx = us->rx;
    int *order = us->rx_order;
    int handled = 0, rounds = 0, empty = 0;

    for (;;) {
        int nb = 0, full = 0;
        size_t np = 0, nd = 0;
        for (int l = 0; l < us->nsock; ++l) {
            int n;
            /* an idle socket (loopback in a job across hosts): once per ms */
            if (us->udp_fd[l] < 0 || (now - us->hot_ms[l] > 1000 && now == us->last_ms)) {
                continue;
            }
            if ((size_t) nb + USER_RX_BATCH > us->pkt_bufs) {
                full = 1; /* no buffer left in this pass (never with the
                           * sockets btl_sctp_sock_user_open sized it for) */
                break;
            }
            n = btl_sctp_udp_recv_batch(us, l, (size_t) nb, mm, iov, from + nb, ctrl);
            if (n <= 0) {
                continue;
            }
            full |= USER_RX_BATCH == n;
            /* buffer nb + i holds message i; each datagram of it is a packet */
            for (int i = 0; i < n; ++i) {
                int k = btl_sctp_udp_split(us, &mm[i], off, seglen);
                for (int j = 0; j < k && np < us->rx_max; ++j) {
                    user_rx_pkt_t *r = &rx[np++];
                    r->data = (unsigned char *) iov[i].iov_base + off[j];
                    r->len = seglen[j];
                    r->sock = l;
                    r->from = nb + i;
                    /* a probe or a segment carries no TSN of its own */
                    r->has = !(r->len >= 2 && 0 == r->data[0] && 0 == r->data[1]) &&
                        btl_sctp_udp_tsns(r->data, r->len, &r->tsn, &r->tsn_last);
                }
            }
            nb += n;
            handled += n;
        }
        if (0 == nb) {
            empty = 1;
            break;
        }
        /* packets without data first, in arrival order; then data packets
         * by TSN (serial number arithmetic), insertion sort: nearly in
         * order already */
        for (size_t i = 0; i < np; ++i) {
            if (!rx[i].has) {
                order[nd++] = (int) i;
            }
        }
        for (size_t i = 0, base = nd; i < np; ++i) {
            size_t j;
            if (!rx[i].has) {
                continue;
            }
            for (j = nd; j > base && (int32_t) (rx[order[j - 1]].tsn - rx[i].tsn) > 0; --j) {
                order[j] = order[j - 1];
            }
            order[j] = (int) i;
            ++nd;
        }
        for (size_t k = 0; k < nd; ++k) {
            user_rx_pkt_t *r = &rx[order[k]];
            if (r->has) {
                btl_sctp_udp_cmt_data(us, r->sock, r->data, r->len, &from[r->from], r->tsn,
                                      r->tsn_last, now);
            } else {
                btl_sctp_udp_datagram(us, r->sock, r->data, r->len, &from[r->from], now);
            }
        }
        if (!full) {
            empty = 1; /* every socket is empty */
            break;
        }
        if (++rounds * USER_RX_BATCH >= USER_PROGRESS_BURST) {
            *drained = 0;
            break;
        }
    }
    /* A gap is given up only when the sockets are empty: after the
     * process was not scheduled for longer than the hold time, the packet
     * that fills it is usually waiting in the other path's socket, and
     * giving up first would report a loss that SCTP then retransmits
     * (and halves its window for). */
    if (empty && us->holding > 0) {
        btl_sctp_udp_release_old(us, now);
    }
    return handled;
}

int btl_sctp_udp_poll(user_sock_t *us, uint64_t now, int *drained)
{
    int handled = 0;

    if (us->cfg.cmt && us->base.nlocal > 1) {
        return btl_sctp_udp_poll_cmt(us, now, drained);
    }

    for (int l = 0; l < us->nsock; ++l) {
        /* A socket that carried no SCTP packet lately (a standby path,
         * probes only, or the shared socket once every peer sends to a
         * connected one) is read once per millisecond, not on every call:
         * polling an empty socket is a system call. */
        if (us->udp_fd[l] < 0 || (now - us->hot_ms[l] > 1000 && now == us->last_ms)) {
            continue;
        }
        for (int taken = 0;;) {
            struct mmsghdr mm[USER_RX_BATCH];
            struct iovec iov[USER_RX_BATCH];
            struct sockaddr_in from[USER_RX_BATCH];
            user_rx_ctrl_t ctrl[USER_RX_BATCH];
            size_t off[USER_GRO_MAX_SEGS], seglen[USER_GRO_MAX_SEGS];
            int n;

            if (taken >= USER_PROGRESS_BURST) {
                *drained = 0; /* the rest next time, timers too */
                break;
            }
            /* several datagrams (or GRO buffers) per system call */
            n = btl_sctp_udp_recv_batch(us, l, 0, mm, iov, from, ctrl);
            if (n <= 0) {
                break;
            }
            for (int i = 0; i < n; ++i) {
                int k = btl_sctp_udp_split(us, &mm[i], off, seglen);
                btl_sctp_udp_buffer(us, l, (unsigned char *) iov[i].iov_base, off, seglen, k,
                                    &from[i], now);
            }
            handled += n;
            taken += n;
            if (n < USER_RX_BATCH) {
                break; /* the socket is empty */
            }
        }
    }
    return handled;
}

int btl_sctp_udp_paths(btl_sctp_sock_t *s, btl_sctp_peer_t *p, int *alive)
{
    uint64_t now = now_ms();
    int n = 0;
    (void) s;
    for (int i = 0; i < p->npaths; ++i) {
        n += btl_sctp_udp_path_alive(p, i, now) ? 1 : 0;
    }
    if (NULL != alive) {
        *alive = n;
    }
    return p->npaths;
}

int btl_sctp_udp_active_path(btl_sctp_sock_t *s, btl_sctp_peer_t *p)
{
    (void) s;
    return p->active;
}

#endif /* TC_HAVE_USRSCTP */
