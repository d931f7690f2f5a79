/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * btl_sctp_sock_gso.c: the user stack's datagram batching, below the UDP
 * path layer. At a 1500-byte MTU every SCTP packet is one UDP datagram
 * of about 1.4 KiB, and a datagram per system call, through the kernel's
 * UDP, IP, veth and bridge code one by one, was most of what a stream
 * cost.
 *
 * Send: the packets usrsctp puts out during one call into the stack are
 * queued per UDP socket and sent when the call returns
 * (btl_sctp_udp_flush): consecutive packets to one address of equal size
 * (the last may be shorter) form one UDP generic segmentation offload
 * message (the UDP_SEGMENT control message: the kernel cuts the segments
 * as late as it can, on a veth or a capable NIC not at all), and all the
 * messages of a socket leave with one sendmmsg.
 *
 * Receive: with UDP_GRO set the kernel hands several datagrams of one
 * flow as one buffer and says the size of its segments; the buffer is
 * split back into datagrams (btl_sctp_udp_gro_split) before they reach
 * the probe check or usrsctp.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sendmmsg */
#endif
#include "tc_config.h"

#if TC_HAVE_USRSCTP

#include <errno.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "btl_sctp_hdr.h"
#include "btl_sctp_sock_user.h"
#include "tc_atomic.h"

#ifndef SOL_UDP
#define SOL_UDP 17
#endif
#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif
#ifndef UDP_GRO
#define UDP_GRO 104
#endif

/* Counters of the process, for the stack's statistics line. */
static uint64_t gso_n_dgrams, gso_n_calls, gso_n_msgs, gso_n_fallback;
static uint64_t gro_n_bufs, gro_n_coalesced, gro_n_dgrams;
static uint64_t seg_n_packets, seg_n_unsent, seg_n_whole, seg_n_gathered, seg_n_bad;

int btl_sctp_udp_gro_split(size_t len, long seg, size_t max, size_t *off, size_t *seglen)
{
    size_t n, s;

    if (0 == len) {
        return 0;
    }
    if (seg <= 0 || (size_t) seg >= len) {
        if (max < 1) {
            return -1;
        }
        off[0] = 0;
        seglen[0] = len;
        return 1;
    }
    s = (size_t) seg;
    n = len / s + (0 != len % s ? 1 : 0);
    if (n > max) {
        return -1; /* more segments than a GRO buffer can hold: not one */
    }
    for (size_t i = 0; i < n; ++i) {
        off[i] = i * s;
        seglen[i] = i + 1 < n ? s : len - i * s;
    }
    return (int) n;
}

long btl_sctp_udp_gro_size(const struct msghdr *mh)
{
    const struct cmsghdr *c;
    const unsigned char *end;

    if (NULL == mh->msg_control || mh->msg_controllen < sizeof(struct cmsghdr)) {
        return 0;
    }
    end = (const unsigned char *) mh->msg_control + mh->msg_controllen;
    for (c = CMSG_FIRSTHDR(mh); NULL != c;
         c = CMSG_NXTHDR((struct msghdr *) mh, (struct cmsghdr *) c)) {
        if (c->cmsg_len < CMSG_LEN(sizeof(int)) ||
            c->cmsg_len > (size_t) (end - (const unsigned char *) c)) {
            return 0; /* malformed: taken as one datagram */
        }
        if (SOL_UDP == c->cmsg_level && UDP_GRO == c->cmsg_type) {
            int v;
            memcpy(&v, CMSG_DATA(c), sizeof(v));
            return v > 0 ? v : 0;
        }
    }
    return 0;
}

int btl_sctp_udp_batch_open(user_sock_t *us)
{
    int one = 1;

    us->gso = 0;
    us->tx_max_segs = us->cfg.cmt && us->base.nlocal > 1 ? USER_TX_CMT_SEGS : USER_TX_MAX_SEGS;
    if (us->cfg.send_batch >= BTL_SCTP_SEND_MMSG) {
        us->tx = calloc((size_t) us->base.nlocal, sizeof(*us->tx));
        if (NULL == us->tx) {
            return -ENOMEM;
        }
        for (int l = 0; l < us->base.nlocal; ++l) {
            us->tx[l].buf = malloc((size_t) USER_TX_GROUPS * USER_TX_SLOT);
            if (NULL == us->tx[l].buf) {
                return -ENOMEM;
            }
        }
    }
    if (BTL_SCTP_SEND_GSO == us->cfg.send_batch && us->base.nlocal > 0) {
        /* the kernel knows the option when it can be read */
        int v = 0;
        socklen_t vl = sizeof(v);
        us->gso = 0 == getsockopt(us->udp_fd[0], SOL_UDP, UDP_SEGMENT, &v, &vl);
    }
    /* CMT reorders whole packets by TSN in a hold area of path-sized slots */
    us->segment = us->cfg.segment && !(us->cfg.cmt && us->base.nlocal > 1);
    us->gro = 0;
    if (us->cfg.gro) {
        us->gro = 1;
        for (int l = 0; l < us->base.nlocal && us->gro; ++l) {
            us->gro = 0 == setsockopt(us->udp_fd[l], SOL_UDP, UDP_GRO, &one, sizeof(one));
        }
        if (!us->gro) {
            /* on every socket or on none: a coalesced buffer that is not
             * split would reach usrsctp as one packet */
            int zero = 0;
            for (int l = 0; l < us->base.nlocal; ++l) {
                (void) setsockopt(us->udp_fd[l], SOL_UDP, UDP_GRO, &zero, sizeof(zero));
            }
        }
    }
    return 0;
}

void btl_sctp_udp_gro_add(user_sock_t *us, int fd)
{
    int one = 1;
    if (us->gro) {
        /* without it the socket hands whole datagrams: still correct */
        (void) setsockopt(fd, SOL_UDP, UDP_GRO, &one, sizeof(one));
    }
}

void btl_sctp_udp_batch_close(user_sock_t *us)
{
    if (NULL != us->tx) {
        for (int l = 0; l < us->base.nlocal; ++l) {
            free(us->tx[l].buf);
        }
        free(us->tx);
        us->tx = NULL;
    }
}

/* One datagram on UDP socket s (no address on a connected socket). */
static void btl_sctp_udp_send_one(user_sock_t *us, int s, const struct sockaddr_in *to,
                                  const void *buf, size_t len)
{
    struct iovec iov = {.iov_base = (void *) buf, .iov_len = len};
    struct msghdr mh;

    memset(&mh, 0, sizeof(mh));
    mh.msg_name = btl_sctp_udp_name(us, s, to);
    mh.msg_namelen = NULL == mh.msg_name ? 0 : sizeof(*to);
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    (void) btl_sctp_udp_sendmsg(us, s, &mh);
}

/* A GSO message the kernel refused (a segment larger than the route's
 * MTU allows, after a failover to a smaller path): its packets one by one. */
static void btl_sctp_udp_send_each(user_sock_t *us, const user_tx_group_t *g,
                                   const unsigned char *slot)
{
    size_t off = 0;
    for (unsigned i = 0; i < g->nseg && off < g->bytes; ++i) {
        size_t len = g->bytes - off < g->seg ? g->bytes - off : g->seg;
        btl_sctp_udp_send_one(us, g->sock, &g->to, slot + off, len);
        off += len;
    }
    tc_atomic_fetch_add_relaxed(&gso_n_fallback, 1);
}

static void btl_sctp_udp_flush_socket(user_sock_t *us, int l)
{
    user_tx_t *t = &us->tx[l];
    struct mmsghdr mm[USER_TX_GROUPS];
    struct iovec iov[USER_TX_GROUPS];
    union {
        char buf[CMSG_SPACE(sizeof(uint16_t))];
        struct cmsghdr align;
    } ctrl[USER_TX_GROUPS];
    uint64_t dgrams = 0;
    int n = t->ngroups, start = 0, calls = 0;

    if (0 == n) {
        return;
    }
    memset(mm, 0, (size_t) n * sizeof(mm[0]));
    for (int i = 0; i < n; ++i) {
        user_tx_group_t *g = &t->g[i];
        iov[i].iov_base = t->buf + (size_t) i * USER_TX_SLOT;
        iov[i].iov_len = g->bytes;
        mm[i].msg_hdr.msg_name = btl_sctp_udp_name(us, g->sock, &g->to);
        mm[i].msg_hdr.msg_namelen = NULL == mm[i].msg_hdr.msg_name ? 0 : sizeof(g->to);
        mm[i].msg_hdr.msg_iov = &iov[i];
        mm[i].msg_hdr.msg_iovlen = 1;
        if (g->nseg > 1) {
            struct cmsghdr *c;
            uint16_t seg = (uint16_t) g->seg;
            memset(&ctrl[i], 0, sizeof(ctrl[i]));
            mm[i].msg_hdr.msg_control = ctrl[i].buf;
            mm[i].msg_hdr.msg_controllen = sizeof(ctrl[i].buf);
            c = CMSG_FIRSTHDR(&mm[i].msg_hdr);
            c->cmsg_level = SOL_UDP;
            c->cmsg_type = UDP_SEGMENT;
            c->cmsg_len = CMSG_LEN(sizeof(seg));
            memcpy(CMSG_DATA(c), &seg, sizeof(seg));
        }
        dgrams += g->nseg;
    }
    while (start < n) {
        /* a run of messages that leave on one socket: one call */
        int end = start + 1, r;
        while (end < n && t->g[end].sock == t->g[start].sock) {
            ++end;
        }
        r = btl_sctp_udp_sendmmsg(us, t->g[start].sock, mm + start, (unsigned) (end - start));
        ++calls;
        if (r > 0) {
            start += r;
            continue;
        }
        /* message start failed; a GSO message the kernel cannot segment
         * goes as single datagrams, anything else is a loss that SCTP
         * repairs (a full buffer, no route) */
        if (t->g[start].nseg > 1 && (EINVAL == errno || EIO == errno || EMSGSIZE == errno)) {
            btl_sctp_udp_send_each(us, &t->g[start], t->buf + (size_t) start * USER_TX_SLOT);
        }
        ++start;
    }
    t->ngroups = 0;
    tc_atomic_fetch_add_relaxed(&gso_n_dgrams, dgrams);
    tc_atomic_fetch_add_relaxed(&gso_n_calls, (uint64_t) calls);
    tc_atomic_fetch_add_relaxed(&gso_n_msgs, (uint64_t) n);
}

void btl_sctp_udp_flush(user_sock_t *us)
{
    if (0 == us->tx_pending) {
        return;
    }
    us->tx_pending = 0;
    for (int l = 0; l < us->base.nlocal; ++l) {
        btl_sctp_udp_flush_socket(us, l);
    }
}

/* A packet larger than the path's datagram: its segments leave at once,
 * gathered from the packet and a header per segment (no copy), as one
 * UDP_SEGMENT message, or as one datagram each with one sendmmsg. What is
 * queued before it leaves first. */
static void btl_sctp_udp_send_segments(user_sock_t *us, const user_path_t *path, const void *buf,
                                       size_t len)
{
    int l = path->lidx, s = path->sock;
    size_t dgram = path->dgram;
    void *to = btl_sctp_udp_name(us, s, &path->to);
    socklen_t tolen = NULL == to ? 0 : sizeof(path->to);
    mca_btl_sctp_seg_t hdr[MCA_BTL_SCTP_SEG_MAX];
    struct iovec iov[2 * MCA_BTL_SCTP_SEG_MAX];
    struct mmsghdr mm[MCA_BTL_SCTP_SEG_MAX];
    union {
        char buf[CMSG_SPACE(sizeof(uint16_t))];
        struct cmsghdr align;
    } ctrl;
    unsigned count = btl_sctp_seg_count(len, dgram);
    size_t per = dgram - MCA_BTL_SCTP_SEG_HDR_SIZE;
    uint32_t id = us->seg_id++;
    int sent = 0;

    if (count < 2 || count > MCA_BTL_SCTP_SEG_MAX || per > UINT16_MAX ||
        len > MCA_BTL_SCTP_SEG_PKT_MAX) {
        tc_atomic_fetch_add_relaxed(&seg_n_unsent, 1); /* lost: SCTP retransmits */
        return;
    }
    if (NULL != us->tx && us->tx[l].ngroups > 0) {
        btl_sctp_udp_flush_socket(us, l);
    }
    memset(hdr, 0, (size_t) count * sizeof(hdr[0]));
    for (unsigned i = 0; i < count; ++i) {
        hdr[i].kind = MCA_BTL_SCTP_SEGMENT;
        hdr[i].index = (uint8_t) i;
        hdr[i].count = (uint8_t) count;
        hdr[i].seg_len = htons((uint16_t) per);
        hdr[i].id = htonl(id);
        iov[2 * i].iov_base = &hdr[i];
        iov[2 * i].iov_len = sizeof(hdr[i]);
        iov[2 * i + 1].iov_base = (char *) buf + (size_t) i * per;
        iov[2 * i + 1].iov_len = i + 1 < count ? per : len - (size_t) i * per;
    }
    if (us->gso) {
        struct msghdr mh;
        struct cmsghdr *c;
        uint16_t seg = (uint16_t) dgram;
        memset(&mh, 0, sizeof(mh));
        memset(&ctrl, 0, sizeof(ctrl));
        mh.msg_name = to;
        mh.msg_namelen = tolen;
        mh.msg_iov = iov;
        mh.msg_iovlen = 2 * count;
        mh.msg_control = ctrl.buf;
        mh.msg_controllen = sizeof(ctrl.buf);
        c = CMSG_FIRSTHDR(&mh);
        c->cmsg_level = SOL_UDP;
        c->cmsg_type = UDP_SEGMENT;
        c->cmsg_len = CMSG_LEN(sizeof(seg));
        memcpy(CMSG_DATA(c), &seg, sizeof(seg));
        sent = btl_sctp_udp_sendmsg(us, s, &mh) >= 0 ||
            !(EINVAL == errno || EIO == errno || EMSGSIZE == errno);
        if (!sent) {
            tc_atomic_fetch_add_relaxed(&gso_n_fallback, 1);
        }
        tc_atomic_fetch_add_relaxed(&gso_n_calls, 1);
    }
    if (!sent) {
        /* a datagram each (a full buffer loses the rest: SCTP retransmits),
         * with one sendmmsg, or one sendmsg each when batching is off */
        memset(mm, 0, (size_t) count * sizeof(mm[0]));
        for (unsigned i = 0; i < count; ++i) {
            mm[i].msg_hdr.msg_name = to;
            mm[i].msg_hdr.msg_namelen = tolen;
            mm[i].msg_hdr.msg_iov = &iov[2 * i];
            mm[i].msg_hdr.msg_iovlen = 2;
        }
        for (unsigned i = 0; i < count && NULL == us->tx; ++i) {
            (void) btl_sctp_udp_sendmsg(us, s, &mm[i].msg_hdr);
            tc_atomic_fetch_add_relaxed(&gso_n_calls, 1);
        }
        for (unsigned start = 0; start < count && NULL != us->tx;) {
            int r = btl_sctp_udp_sendmmsg(us, s, mm + start, count - start);
            tc_atomic_fetch_add_relaxed(&gso_n_calls, 1);
            if (r <= 0) {
                break;
            }
            start += (unsigned) r;
        }
    }
    tc_atomic_fetch_add_relaxed(&gso_n_dgrams, (uint64_t) count);
    tc_atomic_fetch_add_relaxed(&gso_n_msgs, 1);
    tc_atomic_fetch_add_relaxed(&seg_n_packets, 1);
}

void btl_sctp_udp_queue(user_sock_t *us, const user_path_t *path, const void *buf, size_t len)
{
    const struct sockaddr_in *to = &path->to;
    int l = path->lidx, s = path->sock;
    user_tx_t *t;
    user_tx_group_t *g;

    if (len > path->dgram) {
        btl_sctp_udp_send_segments(us, path, buf, len);
        return;
    }
    if (NULL == us->tx || len > USER_TX_GSO_BYTES / 2) {
        /* Batching is off, or no second packet could join this one
         * (loopback's 64 KB packets): copying it to batch it would cost
         * more than the system call saved. What is queued before it
         * leaves first. A full UDP buffer or a dead route loses the
         * packet: SCTP retransmits. */
        if (NULL != us->tx && us->tx[l].ngroups > 0) {
            btl_sctp_udp_flush_socket(us, l);
        }
        btl_sctp_udp_send_one(us, s, to, buf, len);
        tc_atomic_fetch_add_relaxed(&gso_n_dgrams, 1);
        tc_atomic_fetch_add_relaxed(&gso_n_calls, 1);
        return;
    }
    t = &us->tx[l];
    g = t->ngroups > 0 ? &t->g[t->ngroups - 1] : NULL;
    if (NULL != g && us->gso && !g->closed && len <= g->seg && g->nseg < us->tx_max_segs &&
        g->bytes + len <= USER_TX_GSO_BYTES && g->sock == s &&
        g->to.sin_addr.s_addr == to->sin_addr.s_addr && g->to.sin_port == to->sin_port) {
        /* the next segment of the same message; a shorter one is its last */
        memcpy(t->buf + (size_t) (t->ngroups - 1) * USER_TX_SLOT + g->bytes, buf, len);
        g->bytes += len;
        g->nseg++;
        g->closed = len < g->seg;
        return;
    }
    if (us->cfg.cmt && t->ngroups > 0) {
        /* CMT: the paths take turns in short runs, so that the receiver,
         * which reorders by TSN, finds the other path's packets in time
         * (a run of one path's packets longer than its hold area is
         * reported to the sender as losses) */
        btl_sctp_udp_flush(us);
    } else if (USER_TX_GROUPS == t->ngroups) {
        btl_sctp_udp_flush_socket(us, l);
    }
    g = &t->g[t->ngroups];
    memcpy(t->buf + (size_t) t->ngroups * USER_TX_SLOT, buf, len);
    t->ngroups++;
    g->to = *to;
    g->sock = s;
    g->bytes = len;
    g->seg = len;
    g->nseg = 1;
    g->closed = 0;
    us->tx_pending = 1;
}

void btl_sctp_udp_note_rx(size_t bufs, size_t coalesced, size_t dgrams)
{
    tc_atomic_fetch_add_relaxed(&gro_n_bufs, (uint64_t) bufs);
    tc_atomic_fetch_add_relaxed(&gro_n_coalesced, (uint64_t) coalesced);
    tc_atomic_fetch_add_relaxed(&gro_n_dgrams, (uint64_t) dgrams);
}

void btl_sctp_udp_note_seg(size_t whole, size_t gathered, size_t bad)
{
    tc_atomic_fetch_add_relaxed(&seg_n_whole, (uint64_t) whole);
    tc_atomic_fetch_add_relaxed(&seg_n_gathered, (uint64_t) gathered);
    tc_atomic_fetch_add_relaxed(&seg_n_bad, (uint64_t) bad);
}

void btl_sctp_udp_seg_counts(uint64_t c[5])
{
    c[0] = tc_atomic_load_relaxed(&seg_n_packets);
    c[1] = tc_atomic_load_relaxed(&seg_n_unsent);
    c[2] = tc_atomic_load_relaxed(&seg_n_whole);
    c[3] = tc_atomic_load_relaxed(&seg_n_gathered);
    c[4] = tc_atomic_load_relaxed(&seg_n_bad);
}

void btl_sctp_udp_batch_counts(uint64_t c[7])
{
    c[0] = tc_atomic_load_relaxed(&gso_n_dgrams);
    c[1] = tc_atomic_load_relaxed(&gso_n_calls);
    c[2] = tc_atomic_load_relaxed(&gso_n_msgs);
    c[3] = tc_atomic_load_relaxed(&gso_n_fallback);
    c[4] = tc_atomic_load_relaxed(&gro_n_bufs);
    c[5] = tc_atomic_load_relaxed(&gro_n_coalesced);
    c[6] = tc_atomic_load_relaxed(&gro_n_dgrams);
}

#endif /* TC_HAVE_USRSCTP */
