/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * btl_sctp_sock_user.c: the `user` stack of the socket layer: the usrsctp
 * glue (stack setup, associations, sending, receiving, closing). The UDP
 * sockets, the paths to each peer and their probes are the layer below,
 * btl_sctp_sock_udp.c; the two share btl_sctp_sock_user.h.
 *
 * usrsctp runs without its threads (usrsctp_init_nothreads) and is driven
 * from btl_sctp_sock_progress: we read our UDP sockets and hand each
 * packet to usrsctp_conninput, and we run usrsctp_handle_timers with the
 * elapsed milliseconds. The stack uses AF_CONN addresses; the address
 * pointer of an association is our btl_sctp_peer_t, so a message's
 * sender is known without any lookup, and the output callback sends the
 * packet over UDP to that peer.
 *
 * Multihoming lives below SCTP, in the UDP path layer: a peer has one
 * UDP path per advertised address, and the output callback sends on the
 * path that layer chose.
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
#include <time.h>
#include <unistd.h>

#include <usrsctp.h>

#include "btl_sctp_pool.h"
#include "btl_sctp_sock.h"
#include "btl_sctp_sock_opts.h"
#include "btl_sctp_sock_user.h"
#include "tc_hash.h"

/* Not in every usrsctp.h, known to the library since 0.9.4. */
#ifndef SCTP_INTERLEAVING_SUPPORTED
#define SCTP_INTERLEAVING_SUPPORTED 0x00001206
#endif

/* SCTP common header and an I-DATA chunk header, with room to spare:
 * the data that fills one packet is the packet size less this. */
#define USER_PACKET_OVERHEAD 64

/* Messages up to this size are always sent as one staged piece. */
#define USER_STAGE_ALWAYS 4096

static int user_stack_refs = 0;
static char user_pool_note[160] = "off"; /* how usrsctp allocates, for the stats */

/* usrsctp's output callback: addr is the peer (our AF_CONN address). */
static int btl_sctp_sock_user_output(void *addr, void *buffer, size_t length, uint8_t tos,
                                     uint8_t set_df)
{
    btl_sctp_peer_t *p = (btl_sctp_peer_t *) addr;
    (void) tos;
    (void) set_df;

    if (NULL == p || NULL == p->sock) {
        return 0;
    }
    p->probing = 1;
    btl_sctp_udp_output(p, buffer, length);
    return 0;
}

int btl_sctp_sock_user_probe(char *why, size_t whylen)
{
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    if (fd < 0) {
        snprintf(why, whylen, "cannot open a UDP socket for usrsctp: %s", strerror(errno));
        return -errno;
    }
    close(fd);
    return 0;
}

static int btl_sctp_sock_user_setopt(void *sock, int level, int name, const void *val,
                                     socklen_t len)
{
    return usrsctp_setsockopt((struct socket *) sock, level, name, val, len);
}

static int btl_sctp_sock_user_set_opt(user_sock_t *us, int level, int name, const void *val,
                                      socklen_t len, const char *what, char *why, size_t whylen)
{
    return btl_sctp_sock_setopt(us->so, btl_sctp_sock_user_setopt, "usrsctp setsockopt", level,
                                name, val, len, what, why, whylen);
}

static void btl_sctp_sock_user_close(btl_sctp_sock_t *s);

static int btl_sctp_sock_user_configure(user_sock_t *us, char *why, size_t whylen)
{
    const btl_sctp_sock_config_t *cfg = &us->cfg;
    struct sctp_assoc_value av;
    struct sctp_paddrparams pp;
    int one = 1, rc;

    if ((rc = btl_sctp_sock_set_common(us->so, btl_sctp_sock_user_setopt, "usrsctp setsockopt", cfg,
                                       why, whylen))) {
        return rc;
    }
    if ((rc = btl_sctp_sock_user_set_opt(us, IPPROTO_SCTP, SCTP_EXPLICIT_EOR, &one, sizeof(one),
                                         "SCTP_EXPLICIT_EOR", why, whylen))) {
        return rc;
    }
    /* The whole message goes to the application at once: a partial
     * delivery only for messages larger than the BTL ever sends. */
    {
        uint32_t pd = (uint32_t) cfg->rcvbuf;
        (void) usrsctp_setsockopt(us->so, IPPROTO_SCTP, SCTP_PARTIAL_DELIVERY_POINT, &pd,
                                  sizeof(pd));
    }
    memset(&pp, 0, sizeof(pp));
    pp.spp_assoc_id = SCTP_FUTURE_ASSOC;
    /* The association's one AF_CONN address: heartbeats only keep it
     * alive (the UDP layer's probes watch the paths); path_max_retrans is
     * left at usrsctp's default, as failing the only address ends nothing. */
    pp.spp_flags = SPP_PMTUD_DISABLE | (cfg->hb_ms > 0 ? SPP_HB_ENABLE : SPP_HB_DISABLE);
    pp.spp_pathmtu = (uint32_t) cfg->mtu;
    pp.spp_hbinterval = (uint32_t) (cfg->hb_ms > 0 ? cfg->hb_ms : 0);
    if ((rc = btl_sctp_sock_user_set_opt(us, IPPROTO_SCTP, SCTP_PEER_ADDR_PARAMS, &pp, sizeof(pp),
                                         "SCTP_PEER_ADDR_PARAMS (path MTU)", why, whylen))) {
        return rc;
    }
    if (cfg->prio_streams) {
        /* Stream 0 (control, eager) before the bulk streams; I-DATA lets a
         * small message pass between the chunks of a large one. */
        int level = 2;
        memset(&av, 0, sizeof(av));
        av.assoc_id = SCTP_FUTURE_ASSOC;
        av.assoc_value = SCTP_SS_PRIORITY;
        (void) usrsctp_setsockopt(us->so, IPPROTO_SCTP, SCTP_PLUGGABLE_SS, &av, sizeof(av));
        (void) usrsctp_setsockopt(us->so, IPPROTO_SCTP, SCTP_FRAGMENT_INTERLEAVE, &level,
                                  sizeof(level));
        av.assoc_value = 1;
        (void) usrsctp_setsockopt(us->so, IPPROTO_SCTP, SCTP_INTERLEAVING_SUPPORTED, &av,
                                  sizeof(av));
    }
    return 0;
}

static int btl_sctp_sock_user_open(btl_sctp_sock_t **out, const btl_sctp_sock_config_t *cfg,
                                   const btl_sctp_sock_addr_t *local, int nlocal, char *why,
                                   size_t whylen)
{
    user_sock_t *us = calloc(1, sizeof(*us));
    struct sockaddr_conn sc;
    int rc;

    if (NULL == us) {
        return -ENOMEM;
    }
    us->cfg = *cfg;
    if (0 != tc_hash_init(&us->by_addr, 64) || 0 != tc_hash_init(&us->by_assoc, 64)) {
        free(us);
        return -ENOMEM;
    }
    if ((rc = btl_sctp_udp_open(us, local, nlocal, why, whylen))) {
        goto fail;
    }
    if ((rc = btl_sctp_udp_batch_open(us))) {
        snprintf(why, whylen, "out of memory for the UDP send batches");
        goto fail;
    }
    if (0 == us->cfg.mtu) {
        /* New associations start large; btl_sctp_user_apply_mtu lowers the size to the
         * path in use (usrsctp never raises an association's fragment
         * point again, so after a failover to a smaller path it stays). */
        us->cfg.mtu = USER_LOOPBACK_MTU;
        us->per_peer_mtu = 1;
    }
    us->pkt_size = 65536;
    us->msg_size = cfg->max_msg + 4096;
    /* with CMT a batch is taken from every UDP socket, the connected ones
     * included, before any is handed on */
    us->pkt_bufs = USER_RX_BATCH *
        (size_t) (cfg->cmt && us->base.nlocal > 1 ? us->base.nlocal + USER_CONN_MAX : 1);
    us->pkt = malloc(us->pkt_size * us->pkt_bufs);
    us->msg = malloc(us->msg_size);
    us->stage_size = 65536;
    us->stage = malloc(us->stage_size);
    if (NULL == us->pkt || NULL == us->msg || NULL == us->stage) {
        rc = -ENOMEM;
        goto fail;
    }

    if (0 == user_stack_refs++) {
        if (cfg->pool) {
            char pwhy[128];
            if (0 == btl_sctp_pool_install("libusrsctp", pwhy, sizeof(pwhy))) {
                snprintf(user_pool_note, sizeof(user_pool_note), "pool");
            } else {
                snprintf(user_pool_note, sizeof(user_pool_note), "glibc (pool: %s)", pwhy);
            }
        }
        usrsctp_init_nothreads(0, btl_sctp_sock_user_output, NULL);
        usrsctp_sysctl_set_sctp_ecn_enable(0);
        usrsctp_sysctl_set_sctp_asconf_enable(0);
        usrsctp_sysctl_set_sctp_auto_asconf(0);
        usrsctp_sysctl_set_sctp_default_frag_interleave(cfg->prio_streams ? 2 : 1);
        usrsctp_sysctl_set_sctp_rto_min_default((uint32_t) cfg->rto_min_ms);
        usrsctp_sysctl_set_sctp_rto_max_default((uint32_t) cfg->rto_max_ms);
        usrsctp_sysctl_set_sctp_rto_initial_default((uint32_t) cfg->rto_initial_ms);
        /* INIT keeps its own cap (2 s or rto_max): a peer that is busy
         * outside MPI answers the INIT only when it progresses again. */
        usrsctp_sysctl_set_sctp_init_rto_max_default(
            (uint32_t) (cfg->rto_max_ms > 2000 ? cfg->rto_max_ms : 2000));
        /* A SACK every sack_freq packets, else after 1 ms (not usrsctp's
         * 200 ms, which stalls a one-way stream); in a ping-pong the SACK
         * rides on the answer instead of costing a datagram of its own.
         * Each SACK costs the sender, the busier side of a stream, an
         * input pass: every 4th packet streams about 5% faster than
         * every 2nd. */
        usrsctp_sysctl_set_sctp_sack_freq_default(
            (uint32_t) (cfg->sack_freq > 0 ? cfg->sack_freq : 1));
        usrsctp_sysctl_set_sctp_delayed_sack_time_default(1);
        usrsctp_sysctl_set_sctp_enable_sack_immediately(0);
        /* No burst limit: with one, usrsctp also clamps the congestion
         * window to the data in flight plus max_burst packets whenever
         * the sender pauses (cwnd-based max burst), and a stream between
         * two hosts kept falling back to 16 packets' worth (SCTP_STATUS:
         * 143 KB instead of 4 MB at MTU 9000). Bursts cost nothing on a
         * LAN: they leave as GSO messages of up to 64 packets. */
        usrsctp_sysctl_set_sctp_max_burst_default(0);
        /* No count limit on queued chunks (usrsctp's default is 512): the
         * byte limits of the socket buffers and the window bound memory.
         * At the limit the receiver drops every arriving chunk, and an
         * I-DATA chunk that fills a gap is dropped too (usrsctp only
         * accepts plain DATA below its highest TSN there). One loss, and
         * then 512 small messages queued behind the gap on stream 0,
         * and the association deadlocks: its retransmissions are dropped
         * until it aborts after max_retrans. Many small messages (ob1's
         * flood of unexpected sends) reach 512 in two packets. */
        usrsctp_sysctl_set_sctp_max_chunks_on_queue(UINT32_MAX);
        if (cfg->crc32c) {
            usrsctp_disable_crc32c_offload();
        } else {
            usrsctp_enable_crc32c_offload();
        }
    }
    us->so = usrsctp_socket(AF_CONN, SOCK_SEQPACKET, IPPROTO_SCTP, NULL, NULL, 0, NULL);
    if (NULL == us->so) {
        rc = -errno;
        snprintf(why, whylen, "usrsctp_socket(AF_CONN, SOCK_SEQPACKET): %s", strerror(errno));
        --user_stack_refs;
        if (0 == user_stack_refs) {
            (void) usrsctp_finish();
        }
        goto fail;
    }
    usrsctp_set_non_blocking(us->so, 1);
    if ((rc = btl_sctp_sock_user_configure(us, why, whylen))) {
        goto fail;
    }
    memset(&sc, 0, sizeof(sc));
    sc.sconn_family = AF_CONN;
    sc.sconn_port = htons((uint16_t) cfg->sctp_port);
    sc.sconn_addr = NULL; /* every registered AF_CONN address */
    if (usrsctp_bind(us->so, (struct sockaddr *) &sc, sizeof(sc)) < 0 ||
        usrsctp_listen(us->so, 1) < 0) {
        rc = -errno;
        snprintf(why, whylen, "usrsctp bind/listen on SCTP port %d: %s", cfg->sctp_port,
                 strerror(errno));
        goto fail;
    }
    us->last_ms = now_ms();
    *out = &us->base;
    return 0;

fail:
    /* btl_sctp_sock_user_close releases what was set up so far (usrsctp only if so) */
    btl_sctp_sock_user_close(&us->base);
    return rc;
}

/* A peer: its UDP paths (btl_sctp_udp_peer_paths), the routes from its
 * UDP addresses to the record, and its AF_CONN address. */
static int btl_sctp_sock_user_peer_add(btl_sctp_sock_t *s, const btl_sctp_sock_addr_t *addrs,
                                       int naddrs, int sctp_port, void *cookie,
                                       btl_sctp_peer_t **out)
{
    user_sock_t *us = (user_sock_t *) s;
    btl_sctp_peer_t *p = calloc(1, sizeof(*p));

    if (NULL == p) {
        return -ENOMEM;
    }
    p->sock = us;
    p->cookie = cookie;
    p->active = -1;
    btl_sctp_udp_peer_paths(us, p, addrs, naddrs);
    if (0 == p->npaths) {
        free(p);
        return -EHOSTUNREACH;
    }
    if (us->npeers == us->maxpeers) {
        int nmax = us->maxpeers ? 2 * us->maxpeers : 16;
        btl_sctp_peer_t **np = realloc(us->peers, (size_t) nmax * sizeof(*np));
        if (NULL == np) {
            btl_sctp_udp_peer_fini(p);
            free(p);
            return -ENOMEM;
        }
        us->peers = np;
        us->maxpeers = nmax;
    }
    for (int i = 0; i < p->npaths; ++i) {
        if (0 !=
            tc_hash_put(
                &us->by_addr,
                btl_sctp_sock_addr_key(p->paths[i].to.sin_addr.s_addr, p->paths[i].to.sin_port),
                p)) {
            for (int j = 0; j < i; ++j) {
                tc_hash_remove(
                    &us->by_addr,
                    btl_sctp_sock_addr_key(p->paths[j].to.sin_addr.s_addr, p->paths[j].to.sin_port),
                    NULL);
            }
            btl_sctp_udp_peer_fini(p);
            free(p);
            return -ENOMEM;
        }
    }
    us->peers[us->npeers++] = p;
    p->sconn.sconn_family = AF_CONN;
    p->sconn.sconn_port = htons((uint16_t) sctp_port);
    p->sconn.sconn_addr = p;
    usrsctp_register_address(p);
    *out = p;
    return 0;
}

static void btl_sctp_sock_user_peer_remove(btl_sctp_sock_t *s, btl_sctp_peer_t *p)
{
    user_sock_t *us = (user_sock_t *) s;
    /* The association may still need packets both ways (SACKs for our
     * last messages, SHUTDOWN, ABORT) through this AF_CONN address: keep
     * the record and its UDP routes until the socket closes; only stop
     * handing its messages and events to the BTL. */
    if (p->has_assoc) {
        tc_hash_remove(&us->by_assoc, (uint64_t) p->assoc_id, NULL);
    }
    p->cookie = NULL;
}

static void btl_sctp_sock_user_remember_assoc(user_sock_t *us, btl_sctp_peer_t *p, sctp_assoc_t id)
{
    if (p->has_assoc && p->assoc_id == id) {
        return;
    }
    if (p->has_assoc) {
        tc_hash_remove(&us->by_assoc, (uint64_t) p->assoc_id, NULL);
    }
    p->assoc_id = id;
    p->has_assoc = 1;
    (void) tc_hash_put(&us->by_assoc, (uint64_t) id, p);
}

/* The association's packet size follows the path in use (the smallest
 * of all while sending on every path). Chunks already cut for a larger
 * size still go out: IP fragments the UDP datagram. */
void btl_sctp_user_apply_mtu(btl_sctp_peer_t *p)
{
    user_sock_t *us = p->sock;
    struct sctp_paddrparams pp;
    uint32_t mtu = 0;

    if (!us->per_peer_mtu) {
        return;
    }
    if (p->active >= 0 && !(us->cfg.cmt && p->nlive > 1)) {
        mtu = p->paths[p->active].mtu;
    } else {
        /* every path (CMT: packets go on each of them) */
        for (int i = 0; i < p->npaths; ++i) {
            if (0 == mtu || p->paths[i].mtu < mtu) {
                mtu = p->paths[i].mtu;
            }
        }
    }
    if (!p->has_assoc || (p->has_assoc_mtu && mtu == p->mtu)) {
        p->mtu = mtu;
        return;
    }
    memset(&pp, 0, sizeof(pp));
    pp.spp_assoc_id = p->assoc_id;
    memcpy(&pp.spp_address, &p->sconn, sizeof(p->sconn));
    pp.spp_flags = SPP_PMTUD_DISABLE;
    pp.spp_pathmtu = mtu;
    if (0 == usrsctp_setsockopt(us->so, IPPROTO_SCTP, SCTP_PEER_ADDR_PARAMS, &pp, sizeof(pp))) {
        p->mtu = mtu;
        p->has_assoc_mtu = 1;
    }
}

/* Per association: the packet size of the path in use, stream priorities. */
static void btl_sctp_sock_user_assoc_setup(user_sock_t *us, btl_sctp_peer_t *p, sctp_assoc_t id)
{
    struct sctp_stream_value sv;
    if (NULL != p) {
        p->has_assoc_mtu = 0;
        btl_sctp_user_apply_mtu(p);
    }
    if (!us->cfg.prio_streams) {
        return;
    }
    for (int i = 0; i < us->cfg.num_streams; ++i) {
        memset(&sv, 0, sizeof(sv));
        sv.assoc_id = id;
        sv.stream_id = (uint16_t) i;
        sv.stream_value = 0 == i ? 0 : 1;
        (void) usrsctp_setsockopt(us->so, IPPROTO_SCTP, SCTP_SS_VALUE, &sv, sizeof(sv));
    }
}

/* One piece to the peer's association. Once its id is known the
 * association is named by id: with an address usrsctp looks the
 * association up by address before sending and again after it (for the
 * caller's copy of the id), two searches on every message. When the id
 * fails (ENOENT: the association ended before its event was read) it is
 * forgotten and the address used, as before: that starts a new
 * association, or fails with the address's own error. */
static ssize_t btl_sctp_sock_user_send_piece(user_sock_t *us, btl_sctp_peer_t *p, const void *base,
                                             size_t len, struct sctp_sendv_spa *spa)
{
    if (p->has_assoc) {
        ssize_t n;
        spa->sendv_sndinfo.snd_assoc_id = p->assoc_id;
        n = usrsctp_sendv(us->so, base, len, NULL, 0, spa, sizeof(*spa), SCTP_SENDV_SPA, 0);
        if (n >= 0 || EWOULDBLOCK == errno || EAGAIN == errno || ENOBUFS == errno) {
            return n;
        }
        tc_hash_remove(&us->by_assoc, (uint64_t) p->assoc_id, NULL);
        p->has_assoc = 0;
    }
    spa->sendv_sndinfo.snd_assoc_id = 0;
    return usrsctp_sendv(us->so, base, len, (struct sockaddr *) &p->sconn, 1, spa, sizeof(*spa),
                         SCTP_SENDV_SPA, 0);
}

/* Explicit end-of-record mode: a message is handed over in pieces (the
 * BTL's header, then the user's data in place) and ends with SCTP_EOR,
 * so the data is copied once, into the stack, and not first into a
 * fragment. The stack may take part of a piece when its buffer is
 * nearly full; *done records how far the message got. */
static int btl_sctp_sock_user_sendv_pieces(user_sock_t *us, btl_sctp_peer_t *p, uint16_t stream,
                                           const struct iovec *iov, int iovcnt, size_t *done)
{
    struct sctp_sendv_spa spa;
    size_t skip = *done;
    int last = iovcnt - 1;

    while (last > 0 && 0 == iov[last].iov_len) {
        --last; /* the last non-empty piece carries the end of record */
    }
    memset(&spa, 0, sizeof(spa));
    spa.sendv_flags = SCTP_SEND_SNDINFO_VALID;
    spa.sendv_sndinfo.snd_sid = stream;
    for (int i = 0; i <= last; ++i) {
        const char *base = (const char *) iov[i].iov_base;
        size_t len = iov[i].iov_len;
        ssize_t n;

        if (skip >= len && i < last) {
            skip -= len;
            continue;
        }
        base += skip;
        len -= skip;
        skip = 0;
        spa.sendv_sndinfo.snd_flags = i == last ? SCTP_EOR : 0;
        n = btl_sctp_sock_user_send_piece(us, p, base, len, &spa);
        if (n < 0) {
            if (EWOULDBLOCK == errno || EAGAIN == errno || ENOBUFS == errno) {
                return -EAGAIN;
            }
            return -errno;
        }
        *done += (size_t) n;
        if (!p->has_assoc) {
            sctp_assoc_t id = usrsctp_getassocid(us->so, (struct sockaddr *) &p->sconn);
            if (0 != id) {
                btl_sctp_sock_user_remember_assoc(us, p, id);
                btl_sctp_sock_user_assoc_setup(us, p, id);
            }
        }
        if ((size_t) n < len) {
            return -EAGAIN;
        }
    }
    return 0;
}

/* The peer's association status; -1 when it has none (or it is gone). */
static int btl_sctp_sock_user_assoc_status(user_sock_t *us, btl_sctp_peer_t *p,
                                           struct sctp_status *st)
{
    socklen_t len = sizeof(*st);

    if (!p->has_assoc) {
        return -1;
    }
    memset(st, 0, sizeof(*st));
    st->sstat_assoc_id = p->assoc_id;
    return usrsctp_getsockopt(us->so, IPPROTO_SCTP, SCTP_STATUS, st, &len) < 0 ? -1 : 0;
}

/* Is data of this association in flight (sent, not yet acknowledged)? */
static int btl_sctp_sock_user_in_flight(user_sock_t *us, btl_sctp_peer_t *p)
{
    struct sctp_status st;
    return 0 == btl_sctp_sock_user_assoc_status(us, p, &st) && 0 != st.sstat_unackdata;
}

/* A short first piece would leave as a packet of its own when nothing
 * is in flight (the stack sends what it has of an unfinished message):
 * two packets and an extra SACK per message. So then the first piece is
 * topped up from the following ones to a full packet in a staging
 * buffer; the rest of the data still goes in place. With data in flight
 * the stack waits for the rest of the message, and nothing is staged. */
static int btl_sctp_sock_user_sendv(btl_sctp_sock_t *s, btl_sctp_peer_t *p, uint16_t stream,
                                    const struct iovec *iov, int iovcnt, size_t *done)
{
    user_sock_t *us = (user_sock_t *) s;
    uint32_t mtu = 0 != p->mtu ? p->mtu : (uint32_t) us->cfg.mtu;
    size_t fill = mtu > USER_PACKET_OVERHEAD + 512 ? mtu - USER_PACKET_OVERHEAD : 512;
    struct iovec v[BTL_SCTP_SOCK_MAX_IOV + 1];
    size_t have, skipped = 0;
    int nv = 0, i, rc;

    p->probing = 1;
    if (iovcnt < 2 || iovcnt > BTL_SCTP_SOCK_MAX_IOV || iov[0].iov_len >= fill ||
        fill > us->stage_size) {
        return btl_sctp_sock_user_sendv_pieces(us, p, stream, iov, iovcnt, done);
    }
    /* A small message is staged whole without asking the stack (a status
     * query costs more than copying a few KiB); a larger one only when
     * nothing is in flight. */
    if (0 == *done) {
        size_t total = 0;
        for (i = 0; i < iovcnt; ++i) {
            total += iov[i].iov_len;
        }
        if (total > USER_STAGE_ALWAYS && btl_sctp_sock_user_in_flight(us, p)) {
            return btl_sctp_sock_user_sendv_pieces(us, p, stream, iov, iovcnt, done);
        }
    }
    /* the staged head: piece 0 and the start of the next pieces */
    have = 0;
    for (i = 0; i < iovcnt && have < fill; ++i) {
        size_t take = iov[i].iov_len < fill - have ? iov[i].iov_len : fill - have;
        if (*done < have + take) {
            memcpy(us->stage + have, iov[i].iov_base, take); /* resent from *done on */
        }
        have += take;
        if (take < iov[i].iov_len) {
            skipped = take; /* piece i continues after the staged part */
            break;
        }
    }
    v[nv].iov_base = us->stage;
    v[nv].iov_len = have;
    ++nv;
    if (i < iovcnt) {
        v[nv].iov_base = (char *) iov[i].iov_base + skipped;
        v[nv].iov_len = iov[i].iov_len - skipped;
        ++nv;
        for (++i; i < iovcnt; ++i) {
            v[nv++] = iov[i];
        }
    }
    rc = btl_sctp_sock_user_sendv_pieces(us, p, stream, v, nv, done);
    return rc;
}

/* Every call into usrsctp may put packets out; they leave together when
 * the call returns. */
static int btl_sctp_sock_user_sendv_flush(btl_sctp_sock_t *s, btl_sctp_peer_t *p, uint16_t stream,
                                          const struct iovec *iov, int iovcnt, size_t *done)
{
    user_sock_t *us = (user_sock_t *) s;
    int rc = btl_sctp_sock_user_sendv(s, p, stream, iov, iovcnt, done);
    btl_sctp_udp_flush(us);
    return rc;
}

/* An SCTP packet that came in over UDP, for usrsctp. */
void btl_sctp_user_input(btl_sctp_peer_t *p, void *pkt, size_t n)
{
    usrsctp_conninput(p, pkt, n, 0);
}

static int btl_sctp_sock_user_progress(btl_sctp_sock_t *s)
{
    user_sock_t *us = (user_sock_t *) s;
    uint64_t now = now_ms();
    int drained = 1;
    int handled = btl_sctp_udp_poll(us, now, &drained);

    /* Timers only once every queued packet (SACKs in particular) is in:
     * after a pause in progress they would otherwise fire spuriously. */
    if (now != us->last_ms && drained) {
        usrsctp_handle_timers((uint32_t) (now - us->last_ms));
        us->last_ms = now;
        btl_sctp_udp_probe_paths(us, now);
        if (us->kick) {
            /* A path in use was found dead and traffic moved to another:
             * usrsctp's clock is advanced by rto_max_ms, so the
             * retransmission timer fires now and resends what was lost on
             * the dead path over the new one (otherwise it waits for a
             * timer that has backed off during the detection). Every
             * timer that was due within rto_max_ms fires early: at worst
             * a spurious retransmission. */
            us->kick = 0;
            usrsctp_handle_timers((uint32_t) us->cfg.rto_max_ms);
        }
        ++handled; /* a timer may have queued an event (association lost) */
    }
    if (us->pending_recv) {
        ++handled; /* the last receive stopped early: more may be queued */
    }
    us->base.more = !drained;
    btl_sctp_udp_flush(us);
    return handled;
}

static btl_sctp_peer_t *btl_sctp_sock_user_peer_of_assoc(user_sock_t *us, sctp_assoc_t id)
{
    void *v;
    struct sockaddr *addrs = NULL;
    btl_sctp_peer_t *p = NULL;

    if (tc_hash_get(&us->by_assoc, (uint64_t) id, &v)) {
        return (btl_sctp_peer_t *) v;
    }
    if (usrsctp_getpaddrs(us->so, id, &addrs) > 0 && NULL != addrs) {
        if (AF_CONN == addrs->sa_family) {
            p = (btl_sctp_peer_t *) ((struct sockaddr_conn *) addrs)->sconn_addr;
        }
        usrsctp_freepaddrs(addrs);
    }
    if (NULL != p) {
        btl_sctp_sock_user_remember_assoc(us, p, id);
    }
    return p;
}

static int btl_sctp_sock_user_recv_one(user_sock_t *us, btl_sctp_sock_msg_t *msg)
{
    for (;;) {
        struct sockaddr_conn from;
        socklen_t flen = sizeof(from);
        struct sctp_rcvinfo rcv;
        socklen_t ilen = sizeof(rcv);
        unsigned int itype = 0;
        int flags = 0;
        ssize_t n;

        memset(&rcv, 0, sizeof(rcv));
        memset(&from, 0, sizeof(from));
        n = usrsctp_recvv(us->so, us->msg, us->msg_size, (struct sockaddr *) &from, &flen, &rcv,
                          &ilen, &itype, &flags);
        if (n < 0) {
            us->pending_recv = 0;
            if (EWOULDBLOCK == errno || EAGAIN == errno) {
                return 0;
            }
            return -errno;
        }
        us->pending_recv = 1;
        if (flags & MSG_NOTIFICATION) {
            union sctp_notification *sn = (union sctp_notification *) us->msg;
            btl_sctp_peer_t *p;
            if ((size_t) n < sizeof(sn->sn_header)) {
                continue;
            }
            if (SCTP_ASSOC_CHANGE == sn->sn_header.sn_type &&
                (size_t) n >= sizeof(struct sctp_assoc_change)) {
                struct sctp_assoc_change *ac = &sn->sn_assoc_change;
                p = btl_sctp_sock_user_peer_of_assoc(us, ac->sac_assoc_id);
                memset(msg, 0, sizeof(*msg));
                msg->cookie = NULL != p ? p->cookie : NULL;
                switch (ac->sac_state) {
                case SCTP_COMM_UP:
                case SCTP_RESTART:
                    btl_sctp_sock_user_assoc_setup(us, p, ac->sac_assoc_id);
                    msg->kind = BTL_SCTP_SOCK_UP;
                    return 1;
                case SCTP_COMM_LOST:
                case SCTP_CANT_STR_ASSOC:
                case SCTP_SHUTDOWN_COMP:
                    msg->kind = SCTP_SHUTDOWN_COMP == ac->sac_state ? BTL_SCTP_SOCK_CLOSED
                                                                    : BTL_SCTP_SOCK_LOST;
                    if (NULL != p && p->has_assoc) {
                        tc_hash_remove(&us->by_assoc, (uint64_t) p->assoc_id, NULL);
                        p->has_assoc = 0;
                    }
                    return 1;
                default:
                    continue;
                }
            }
            if (SCTP_SHUTDOWN_EVENT == sn->sn_header.sn_type &&
                (size_t) n >= sizeof(struct sctp_shutdown_event)) {
                p = btl_sctp_sock_user_peer_of_assoc(us, sn->sn_shutdown_event.sse_assoc_id);
                memset(msg, 0, sizeof(*msg));
                msg->cookie = NULL != p ? p->cookie : NULL;
                msg->kind = BTL_SCTP_SOCK_CLOSED;
                return 1;
            }
            continue;
        }
        if (us->discarding) {
            /* a later piece of a record refused whole: drop it too (no
             * other message of the socket comes between the pieces of one
             * record: fragment interleave level 0) */
            us->discarding = !(flags & MSG_EOR);
            continue;
        }
        if (!(flags & MSG_EOR)) {
            /* larger than any message the BTL sends: refuse the record
             * whole, also the pieces that have not arrived yet */
            us->discarding = 1;
            return -EMSGSIZE;
        }
        memset(msg, 0, sizeof(*msg));
        msg->kind = BTL_SCTP_SOCK_DATA;
        msg->cookie = NULL;
        if (AF_CONN == from.sconn_family && NULL != from.sconn_addr) {
            btl_sctp_peer_t *p = (btl_sctp_peer_t *) from.sconn_addr;
            msg->cookie = p->cookie;
            if (!p->has_assoc && SCTP_RECVV_RCVINFO == itype) {
                btl_sctp_sock_user_remember_assoc(us, p, rcv.rcv_assoc_id);
            }
        }
        msg->stream = SCTP_RECVV_RCVINFO == itype ? rcv.rcv_sid : 0;
        msg->data = us->msg;
        msg->len = (size_t) n;
        return 1;
    }
}

/* A read may open the receive window, and usrsctp then sends a SACK. */
static int btl_sctp_sock_user_recv(btl_sctp_sock_t *s, btl_sctp_sock_msg_t *msg)
{
    user_sock_t *us = (user_sock_t *) s;
    int rc = btl_sctp_sock_user_recv_one(us, msg);
    btl_sctp_udp_flush(us);
    return rc;
}

static int btl_sctp_sock_user_peer_drained(user_sock_t *us, btl_sctp_peer_t *p)
{
    struct sctp_status st;
    return 0 != btl_sctp_sock_user_assoc_status(us, p, &st) /* no association, or gone */
        || (0 == st.sstat_unackdata && 0 == st.sstat_penddata);
}

static void btl_sctp_sock_user_close(btl_sctp_sock_t *s)
{
    user_sock_t *us = (user_sock_t *) s;

    if (NULL != us->so) {
        struct linger lg = {1, 0};
        uint64_t start = now_ms();
        /* Let queued data reach the peers (bounded), then close abortively:
         * a graceful SHUTDOWN would need both stacks driven after exit. */
        for (int k = 0; k < us->npeers && now_ms() - start < 2000;) {
            if (btl_sctp_sock_user_peer_drained(us, us->peers[k])) {
                ++k;
            } else {
                btl_sctp_sock_user_progress(s);
            }
        }
        (void) usrsctp_setsockopt(us->so, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
        usrsctp_close(us->so);
        us->so = NULL;
        btl_sctp_udp_flush(us); /* the ABORTs */
        for (int i = 0; i < us->npeers; ++i) {
            usrsctp_deregister_address(us->peers[i]);
        }
        if (0 == --user_stack_refs) {
            /* timers of freed associations may need a tick to go away */
            for (int tries = 0; tries < 100 && 0 != usrsctp_finish(); ++tries) {
                usrsctp_handle_timers(10);
            }
        }
    }
    for (int i = 0; i < us->npeers; ++i) {
        btl_sctp_udp_peer_fini(us->peers[i]);
        free(us->peers[i]);
    }
    free(us->peers);
    btl_sctp_udp_batch_close(us);
    btl_sctp_udp_close(us);
    tc_hash_fini(&us->by_addr);
    tc_hash_fini(&us->by_assoc);
    free(us->pkt);
    free(us->msg);
    free(us->stage);
    free(us);
}

int btl_sctp_sock_user_stats(char *buf, size_t len)
{
    struct sctpstat st;
    if (0 == user_stack_refs) {
        return -ENOTCONN;
    }
    uint64_t held, timeout, full, b[7], sg[5];
    size_t n;
    memset(&st, 0, sizeof(st));
    usrsctp_get_stat(&st);
    btl_sctp_udp_cmt_counts(&held, &timeout, &full);
    btl_sctp_udp_batch_counts(b);
    btl_sctp_udp_seg_counts(sg);
    n = (size_t) snprintf(
        buf, len,
        "UDP: datagrams out %llu in %llu send calls (%llu messages, %llu GSO messages "
        "resent singly), datagrams in %llu from %llu buffers (%llu coalesced); segmented "
        "packets out %llu (%llu too large), in %llu whole and %llu gathered, %llu segments "
        "dropped; ",
        (unsigned long long) b[0], (unsigned long long) b[1], (unsigned long long) b[2],
        (unsigned long long) b[3], (unsigned long long) b[6], (unsigned long long) b[4],
        (unsigned long long) b[5], (unsigned long long) sg[0], (unsigned long long) sg[1],
        (unsigned long long) sg[2], (unsigned long long) sg[3], (unsigned long long) sg[4]);
    if (n >= len) {
        return 0;
    }
    buf += n;
    len -= n;
    snprintf(buf, len,
             "packets in %u out %u, DATA chunks in %u out %u, retransmitted %u (fast %u), "
             "T3 timeouts %u, SACKs sent %u, window probes %u, bad checksums %u, "
             "DATA dropped at the chunk limit %u, at a closed window %u; CMT: packets held "
             "%llu, gaps given up after the hold time %llu, with the hold area full %llu; "
             "allocator %s (%zu KiB reserved)",
             st.sctps_inpackets, st.sctps_outpackets, st.sctps_recvdata, st.sctps_senddata,
             st.sctps_sendretransdata, st.sctps_sendfastretrans, st.sctps_timodata,
             st.sctps_sendsacks, st.sctps_windowprobed, st.sctps_badsum, st.sctps_datadropchklmt,
             st.sctps_datadroprwnd, (unsigned long long) held, (unsigned long long) timeout,
             (unsigned long long) full, user_pool_note, btl_sctp_pool_reserved_bytes() >> 10);
    return 0;
}

const btl_sctp_sock_ops_t btl_sctp_sock_user_ops = {
    .open = btl_sctp_sock_user_open,
    .close = btl_sctp_sock_user_close,
    .peer_add = btl_sctp_sock_user_peer_add,
    .peer_remove = btl_sctp_sock_user_peer_remove,
    .sendv = btl_sctp_sock_user_sendv_flush,
    .progress = btl_sctp_sock_user_progress,
    .recv = btl_sctp_sock_user_recv,
    .paths = btl_sctp_udp_paths,
    .active_path = btl_sctp_udp_active_path,
};

#endif /* TC_HAVE_USRSCTP */
