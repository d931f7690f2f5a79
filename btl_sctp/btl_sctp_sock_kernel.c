/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * btl_sctp_sock_kernel.c: the `kernel` stack of the socket layer (libsctp).
 *
 * One one-to-many SOCK_SEQPACKET socket bound with sctp_bindx to every
 * allowed address (the kernel advertises them all in INIT, so the
 * association is multihomed and fails over by itself). Associations are
 * set up implicitly by the first sendmsg to a peer. Messages carry
 * SCTP_SNDINFO / SCTP_RCVINFO; events are subscribed one by one with
 * SCTP_EVENT. Association ids map to peers through a hash; the first
 * message of a new association is matched by its source address.
 */
#include "tc_config.h"

#if TC_HAVE_LIBSCTP

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/sctp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "btl_sctp_sock.h"
#include "btl_sctp_sock_opts.h"
#include "tc_hash.h"

struct btl_sctp_peer {
    void *cookie;
    int naddrs;
    struct sockaddr_in addrs[BTL_SCTP_SOCK_MAX_ADDRS];
    sctp_assoc_t assoc_id;
    int has_assoc;
};

typedef struct kernel_sock {
    btl_sctp_sock_t base;
    btl_sctp_sock_config_t cfg;
    int fd;
    tc_hash_t by_addr;  /* ip:port -> peer */
    tc_hash_t by_assoc; /* association id -> peer */
    unsigned char *msg;
    size_t msg_size;
    int discarding; /* the rest of an oversize record is still to
                                  * be dropped (its pieces may arrive later) */
} kernel_sock_t;

int btl_sctp_sock_kernel_probe(char *why, size_t whylen)
{
    int fd = socket(AF_INET, SOCK_SEQPACKET, IPPROTO_SCTP);
    if (fd < 0) {
        int err = errno;
        snprintf(why, whylen,
                 "the kernel has no SCTP (socket(AF_INET, SOCK_SEQPACKET, "
                 "IPPROTO_SCTP): %s)",
                 strerror(err));
        return -err;
    }
    close(fd);
    return 0;
}

static int btl_sctp_sock_kernel_setopt(void *sock, int level, int name, const void *val,
                                       socklen_t len)
{
    return setsockopt(*(int *) sock, level, name, val, len);
}

static void btl_sctp_sock_kernel_close(btl_sctp_sock_t *s);

static int btl_sctp_sock_kernel_open(btl_sctp_sock_t **out, const btl_sctp_sock_config_t *cfg,
                                     const btl_sctp_sock_addr_t *local, int nlocal, char *why,
                                     size_t whylen)
{
    kernel_sock_t *ks = calloc(1, sizeof(*ks));
    struct sockaddr_in sin[BTL_SCTP_SOCK_MAX_ADDRS];
    socklen_t slen;
    int rc;

    if (NULL == ks) {
        return -ENOMEM;
    }
    ks->cfg = *cfg;
    ks->fd = -1;
    *out = &ks->base;
    if (0 != tc_hash_init(&ks->by_addr, 64) || 0 != tc_hash_init(&ks->by_assoc, 64)) {
        btl_sctp_sock_kernel_close(&ks->base);
        *out = NULL;
        return -ENOMEM;
    }
    ks->msg_size = cfg->max_msg + 4096;
    ks->msg = malloc(ks->msg_size);
    ks->fd = socket(AF_INET, SOCK_SEQPACKET, IPPROTO_SCTP);
    if (NULL == ks->msg || ks->fd < 0) {
        rc = NULL == ks->msg ? -ENOMEM : -errno;
        snprintf(why, whylen, "kernel SCTP socket: %s", strerror(-rc));
        goto fail;
    }
    if ((rc = btl_sctp_sock_set_common(&ks->fd, btl_sctp_sock_kernel_setopt, "setsockopt", cfg, why,
                                       whylen))) {
        goto fail;
    }
    {
        /* Multihoming: a path fails after path_max_retrans timeouts;
         * heartbeats find idle dead paths and restored ones. */
        struct sctp_paddrparams pp;
        memset(&pp, 0, sizeof(pp));
        pp.spp_assoc_id = SCTP_FUTURE_ASSOC;
        pp.spp_flags = cfg->hb_ms > 0 ? SPP_HB_ENABLE : SPP_HB_DISABLE;
        pp.spp_hbinterval = (uint32_t) (cfg->hb_ms > 0 ? cfg->hb_ms : 0);
        pp.spp_pathmaxrxt = (uint16_t) cfg->path_max_retrans;
        (void) setsockopt(ks->fd, IPPROTO_SCTP, SCTP_PEER_ADDR_PARAMS, &pp, sizeof(pp));
    }
#if defined(SCTP_PEER_ADDR_THLDS)
    {
        /* SCTP-PF: a path is avoided after pf_retrans timeouts while it is
         * still probed (kernels without it fail the path at path_max_retrans) */
        struct sctp_paddrthlds th;
        memset(&th, 0, sizeof(th));
        th.spt_assoc_id = SCTP_FUTURE_ASSOC;
        th.spt_pathmaxrxt = (uint16_t) cfg->path_max_retrans;
        th.spt_pathpfthld = (uint16_t) cfg->pf_retrans;
        (void) setsockopt(ks->fd, IPPROTO_SCTP, SCTP_PEER_ADDR_THLDS, &th, sizeof(th));
    }
#endif
#if defined(SCTP_STREAM_SCHEDULER) && defined(SCTP_SS_PRIO)
    if (cfg->prio_streams) {
        struct sctp_assoc_value av = {.assoc_id = SCTP_FUTURE_ASSOC, .assoc_value = SCTP_SS_PRIO};
        (void) setsockopt(ks->fd, IPPROTO_SCTP, SCTP_STREAM_SCHEDULER, &av, sizeof(av));
    }
#endif
#if defined(SCTP_INTERLEAVING_SUPPORTED)
    if (cfg->prio_streams) {
        int level = 2;
        struct sctp_assoc_value av = {.assoc_id = SCTP_FUTURE_ASSOC, .assoc_value = 1};
        (void) setsockopt(ks->fd, IPPROTO_SCTP, SCTP_FRAGMENT_INTERLEAVE, &level, sizeof(level));
        (void) setsockopt(ks->fd, IPPROTO_SCTP, SCTP_INTERLEAVING_SUPPORTED, &av, sizeof(av));
    }
#endif
    /* bind the first address, then add the others on the same port */
    for (int i = 0; i < nlocal; ++i) {
        memset(&sin[i], 0, sizeof(sin[i]));
        sin[i].sin_family = AF_INET;
        sin[i].sin_addr.s_addr = local[i].ip;
        sin[i].sin_port = local[i].port;
    }
    if (bind(ks->fd, (struct sockaddr *) &sin[0], sizeof(sin[0])) < 0) {
        rc = -errno;
        snprintf(why, whylen, "bind SCTP: %s", strerror(errno));
        goto fail;
    }
    slen = sizeof(sin[0]);
    if (getsockname(ks->fd, (struct sockaddr *) &sin[0], &slen) < 0) {
        rc = -errno;
        goto fail;
    }
    for (int i = 1; i < nlocal; ++i) {
        sin[i].sin_port = sin[0].sin_port;
    }
    if (nlocal > 1 &&
        sctp_bindx(ks->fd, (struct sockaddr *) &sin[1], nlocal - 1, SCTP_BINDX_ADD_ADDR) < 0) {
        rc = -errno;
        snprintf(why, whylen, "sctp_bindx: %s", strerror(errno));
        goto fail;
    }
    if (listen(ks->fd, 128) < 0) {
        rc = -errno;
        snprintf(why, whylen, "listen: %s", strerror(errno));
        goto fail;
    }
    for (int i = 0; i < nlocal; ++i) {
        ks->base.local[i] = local[i];
        ks->base.local[i].port = sin[0].sin_port;
    }
    ks->base.nlocal = nlocal;
    return 0;
fail:
    btl_sctp_sock_kernel_close(&ks->base);
    *out = NULL;
    return rc;
}

static void btl_sctp_sock_kernel_close(btl_sctp_sock_t *s)
{
    kernel_sock_t *ks = (kernel_sock_t *) s;
    size_t pos = 0;
    uint64_t key;
    void *v;

    if (ks->fd >= 0) {
        close(ks->fd);
    }
    /* peers are owned here: free each once (by_addr may hold several keys) */
    while (tc_hash_next(&ks->by_addr, &pos, &key, &v)) {
        btl_sctp_peer_t *p = v;
        if (p->naddrs > 0 && p->addrs[0].sin_addr.s_addr == (uint32_t) (key >> 16) &&
            p->addrs[0].sin_port == (uint16_t) key) {
            free(p);
        }
    }
    tc_hash_fini(&ks->by_addr);
    tc_hash_fini(&ks->by_assoc);
    free(ks->msg);
    free(ks);
}

static int btl_sctp_sock_kernel_peer_add(btl_sctp_sock_t *s, const btl_sctp_sock_addr_t *addrs,
                                         int naddrs, int sctp_port, void *cookie,
                                         btl_sctp_peer_t **out)
{
    kernel_sock_t *ks = (kernel_sock_t *) s;
    btl_sctp_peer_t *p = calloc(1, sizeof(*p));
    (void) sctp_port;

    if (NULL == p) {
        return -ENOMEM;
    }
    p->cookie = cookie;
    for (int i = 0; i < naddrs; ++i) {
        p->addrs[i].sin_family = AF_INET;
        p->addrs[i].sin_addr.s_addr = addrs[i].ip;
        p->addrs[i].sin_port = addrs[i].port;
        if (0 != tc_hash_put(&ks->by_addr, btl_sctp_sock_addr_key(addrs[i].ip, addrs[i].port), p)) {
            for (int j = 0; j < i; ++j) {
                tc_hash_remove(&ks->by_addr, btl_sctp_sock_addr_key(addrs[j].ip, addrs[j].port),
                               NULL);
            }
            free(p);
            return -ENOMEM;
        }
    }
    p->naddrs = naddrs;
    *out = p;
    return 0;
}

static void btl_sctp_sock_kernel_peer_remove(btl_sctp_sock_t *s, btl_sctp_peer_t *p)
{
    kernel_sock_t *ks = (kernel_sock_t *) s;
    for (int i = 0; i < p->naddrs; ++i) {
        tc_hash_remove(&ks->by_addr,
                       btl_sctp_sock_addr_key(p->addrs[i].sin_addr.s_addr, p->addrs[i].sin_port),
                       NULL);
    }
    if (p->has_assoc) {
        tc_hash_remove(&ks->by_assoc, (uint64_t) (uint32_t) p->assoc_id, NULL);
    }
    free(p);
}

/* The kernel takes a whole message or nothing: *done stays 0 until then. */
static int btl_sctp_sock_kernel_sendv(btl_sctp_sock_t *s, btl_sctp_peer_t *p, uint16_t stream,
                                      const struct iovec *iov, int iovcnt, size_t *done)
{
    kernel_sock_t *ks = (kernel_sock_t *) s;
    char cbuf[CMSG_SPACE(sizeof(struct sctp_sndinfo))];
    struct msghdr mh;
    struct cmsghdr *cm;
    struct sctp_sndinfo *si;

    memset(&mh, 0, sizeof(mh));
    memset(cbuf, 0, sizeof(cbuf));
    mh.msg_name = &p->addrs[0];
    mh.msg_namelen = sizeof(p->addrs[0]);
    mh.msg_iov = (struct iovec *) iov;
    mh.msg_iovlen = (size_t) iovcnt;
    mh.msg_control = cbuf;
    mh.msg_controllen = sizeof(cbuf);
    cm = CMSG_FIRSTHDR(&mh);
    cm->cmsg_level = IPPROTO_SCTP;
    cm->cmsg_type = SCTP_SNDINFO;
    cm->cmsg_len = CMSG_LEN(sizeof(struct sctp_sndinfo));
    si = (struct sctp_sndinfo *) CMSG_DATA(cm);
    si->snd_sid = stream;
    if (p->has_assoc) {
        si->snd_assoc_id = p->assoc_id;
    }
    if (sendmsg(ks->fd, &mh, MSG_DONTWAIT) < 0) {
        if (EAGAIN == errno || EWOULDBLOCK == errno || ENOBUFS == errno) {
            return -EAGAIN;
        }
        return -errno;
    }
    for (int i = 0; i < iovcnt; ++i) {
        *done += iov[i].iov_len;
    }
    return 0;
}

static int btl_sctp_sock_kernel_progress(btl_sctp_sock_t *s)
{
    (void) s;
    return 1; /* the kernel fills the socket: always worth a receive */
}

static btl_sctp_peer_t *btl_sctp_sock_kernel_peer_of(kernel_sock_t *ks, sctp_assoc_t id,
                                                     const struct sockaddr_in *from)
{
    void *v;
    if (tc_hash_get(&ks->by_assoc, (uint64_t) (uint32_t) id, &v)) {
        return v;
    }
    if (NULL != from && AF_INET == from->sin_family &&
        tc_hash_get(&ks->by_addr, btl_sctp_sock_addr_key(from->sin_addr.s_addr, from->sin_port),
                    &v)) {
        btl_sctp_peer_t *p = v;
        p->assoc_id = id;
        p->has_assoc = 1;
        (void) tc_hash_put(&ks->by_assoc, (uint64_t) (uint32_t) id, p);
        return p;
    }
    return NULL;
}

static int btl_sctp_sock_kernel_recv(btl_sctp_sock_t *s, btl_sctp_sock_msg_t *msg)
{
    kernel_sock_t *ks = (kernel_sock_t *) s;

    for (;;) {
        char cbuf[CMSG_SPACE(sizeof(struct sctp_rcvinfo))];
        struct sockaddr_in from;
        struct iovec iov = {ks->msg, ks->msg_size};
        struct msghdr mh;
        struct cmsghdr *cm;
        struct sctp_rcvinfo *ri = NULL;
        ssize_t n;

        memset(&mh, 0, sizeof(mh));
        memset(&from, 0, sizeof(from));
        mh.msg_name = &from;
        mh.msg_namelen = sizeof(from);
        mh.msg_iov = &iov;
        mh.msg_iovlen = 1;
        mh.msg_control = cbuf;
        mh.msg_controllen = sizeof(cbuf);
        n = recvmsg(ks->fd, &mh, MSG_DONTWAIT);
        if (n < 0) {
            return (EAGAIN == errno || EWOULDBLOCK == errno) ? 0 : -errno;
        }
        for (cm = CMSG_FIRSTHDR(&mh); NULL != cm; cm = CMSG_NXTHDR(&mh, cm)) {
            if (IPPROTO_SCTP == cm->cmsg_level && SCTP_RCVINFO == cm->cmsg_type) {
                ri = (struct sctp_rcvinfo *) CMSG_DATA(cm);
            }
        }
        memset(msg, 0, sizeof(*msg));
        if (mh.msg_flags & MSG_NOTIFICATION) {
            union sctp_notification *sn = (union sctp_notification *) ks->msg;
            btl_sctp_peer_t *p;
            if ((size_t) n < sizeof(sn->sn_header)) {
                continue;
            }
            if (SCTP_ASSOC_CHANGE == sn->sn_header.sn_type &&
                (size_t) n >= sizeof(struct sctp_assoc_change)) {
                struct sctp_assoc_change *ac = &sn->sn_assoc_change;
                p = btl_sctp_sock_kernel_peer_of(ks, ac->sac_assoc_id, NULL);
                msg->cookie = NULL != p ? p->cookie : NULL;
                if (SCTP_COMM_UP == ac->sac_state || SCTP_RESTART == ac->sac_state) {
                    msg->kind = BTL_SCTP_SOCK_UP;
                } else if (SCTP_COMM_LOST == ac->sac_state ||
                           SCTP_CANT_STR_ASSOC == ac->sac_state) {
                    msg->kind = BTL_SCTP_SOCK_LOST;
                } else if (SCTP_SHUTDOWN_COMP == ac->sac_state) {
                    msg->kind = BTL_SCTP_SOCK_CLOSED;
                } else {
                    continue;
                }
                if (BTL_SCTP_SOCK_UP != msg->kind && NULL != p && p->has_assoc) {
                    tc_hash_remove(&ks->by_assoc, (uint64_t) (uint32_t) p->assoc_id, NULL);
                    p->has_assoc = 0;
                }
                return 1;
            }
            if (SCTP_SHUTDOWN_EVENT == sn->sn_header.sn_type) {
                p = btl_sctp_sock_kernel_peer_of(ks, sn->sn_shutdown_event.sse_assoc_id, NULL);
                msg->cookie = NULL != p ? p->cookie : NULL;
                msg->kind = BTL_SCTP_SOCK_CLOSED;
                return 1;
            }
            continue;
        }
        if (ks->discarding) {
            /* a later piece of a record refused whole: drop it too */
            ks->discarding = !(mh.msg_flags & MSG_EOR);
            continue;
        }
        if (!(mh.msg_flags & MSG_EOR)) {
            /* larger than any message the BTL sends: refuse the record
             * whole, also the pieces still to be read */
            ks->discarding = 1;
            return -EMSGSIZE;
        }
        {
            btl_sctp_peer_t *p =
                btl_sctp_sock_kernel_peer_of(ks, NULL != ri ? ri->rcv_assoc_id : 0, &from);
            msg->kind = BTL_SCTP_SOCK_DATA;
            msg->cookie = NULL != p ? p->cookie : NULL;
            msg->stream = NULL != ri ? ri->rcv_sid : 0;
            msg->data = ks->msg;
            msg->len = (size_t) n;
        }
        return 1;
    }
}

static int btl_sctp_sock_kernel_paths(btl_sctp_sock_t *s, btl_sctp_peer_t *p, int *alive)
{
    kernel_sock_t *ks = (kernel_sock_t *) s;
    struct sockaddr *addrs = NULL;
    int n = 0;
    if (p->has_assoc) {
        n = sctp_getpaddrs(ks->fd, p->assoc_id, &addrs);
        if (n > 0) {
            sctp_freepaddrs(addrs);
        } else {
            n = 0;
        }
    }
    if (NULL != alive) {
        *alive = n;
    }
    return p->naddrs;
}

static int btl_sctp_sock_kernel_active_path(btl_sctp_sock_t *s, btl_sctp_peer_t *p)
{
    (void) s;
    (void) p;
    return 0;
}

const btl_sctp_sock_ops_t btl_sctp_sock_kernel_ops = {
    .open = btl_sctp_sock_kernel_open,
    .close = btl_sctp_sock_kernel_close,
    .peer_add = btl_sctp_sock_kernel_peer_add,
    .peer_remove = btl_sctp_sock_kernel_peer_remove,
    .sendv = btl_sctp_sock_kernel_sendv,
    .progress = btl_sctp_sock_kernel_progress,
    .recv = btl_sctp_sock_kernel_recv,
    .paths = btl_sctp_sock_kernel_paths,
    .active_path = btl_sctp_sock_kernel_active_path,
};

#endif /* TC_HAVE_LIBSCTP */
