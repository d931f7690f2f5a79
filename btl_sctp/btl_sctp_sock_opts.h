/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * btl_sctp_sock_opts.h: the socket options both stacks set alike.
 *
 * Included by btl_sctp_sock_kernel.c (after <netinet/sctp.h>) and by
 * btl_sctp_sock_user.c (after <usrsctp.h>): the two headers declare the
 * same SCTP structures and cannot meet in one file, so this is a static
 * function compiled once per stack, calling that stack's setsockopt.
 */
#ifndef MCA_BTL_SCTP_SOCK_OPTS_H
#define MCA_BTL_SCTP_SOCK_OPTS_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "btl_sctp_sock.h"

/* A stack's setsockopt: 0, or -1 with errno set. */
typedef int (*btl_sctp_setopt_fn_t)(void *sock, int level, int name, const void *val,
                                    socklen_t len);

/* Set an option; on failure say which in why ("<api> <what>: <error>"). */
static inline int btl_sctp_sock_setopt(void *sock, btl_sctp_setopt_fn_t set, const char *api,
                                       int level, int name, const void *val, socklen_t len,
                                       const char *what, char *why, size_t whylen)
{
    if (set(sock, level, name, val, len) < 0) {
        int err = errno;
        snprintf(why, whylen, "%s %s: %s", api, what, strerror(err));
        return -err;
    }
    return 0;
}

/* Stream counts, buffers, receive info, nodelay, the association events
 * the BTL reads, retransmission timeouts and the retransmission limit
 * (the last two best effort). */
static inline int btl_sctp_sock_set_common(void *sock, btl_sctp_setopt_fn_t set, const char *api,
                                           const btl_sctp_sock_config_t *cfg, char *why,
                                           size_t whylen)
{
    const uint16_t events[] = {SCTP_ASSOC_CHANGE, SCTP_SHUTDOWN_EVENT};
    struct sctp_initmsg init;
    struct sctp_event ev;
    struct sctp_rtoinfo rto;
    struct sctp_assocparams ap;
    int one = 1, rc;

    memset(&init, 0, sizeof(init));
    init.sinit_num_ostreams = (uint16_t) cfg->num_streams;
    init.sinit_max_instreams = (uint16_t) cfg->num_streams;
    init.sinit_max_attempts = 8;
    if ((rc = btl_sctp_sock_setopt(sock, set, api, IPPROTO_SCTP, SCTP_INITMSG, &init, sizeof(init),
                                   "SCTP_INITMSG", why, whylen)) ||
        (rc = btl_sctp_sock_setopt(sock, set, api, SOL_SOCKET, SO_SNDBUF, &cfg->sndbuf, sizeof(int),
                                   "SO_SNDBUF", why, whylen)) ||
        (rc = btl_sctp_sock_setopt(sock, set, api, SOL_SOCKET, SO_RCVBUF, &cfg->rcvbuf, sizeof(int),
                                   "SO_RCVBUF", why, whylen)) ||
        (rc = btl_sctp_sock_setopt(sock, set, api, IPPROTO_SCTP, SCTP_RECVRCVINFO, &one,
                                   sizeof(one), "SCTP_RECVRCVINFO", why, whylen))) {
        return rc;
    }
    if (cfg->nodelay &&
        (rc = btl_sctp_sock_setopt(sock, set, api, IPPROTO_SCTP, SCTP_NODELAY, &one, sizeof(one),
                                   "SCTP_NODELAY", why, whylen))) {
        return rc;
    }
    memset(&ev, 0, sizeof(ev));
    ev.se_assoc_id = SCTP_FUTURE_ASSOC;
    ev.se_on = 1;
    for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); ++i) {
        ev.se_type = events[i];
        if ((rc = btl_sctp_sock_setopt(sock, set, api, IPPROTO_SCTP, SCTP_EVENT, &ev, sizeof(ev),
                                       "SCTP_EVENT", why, whylen))) {
            return rc;
        }
    }
    memset(&rto, 0, sizeof(rto));
    rto.srto_assoc_id = SCTP_FUTURE_ASSOC;
    rto.srto_initial = (uint32_t) cfg->rto_initial_ms;
    rto.srto_min = (uint32_t) cfg->rto_min_ms;
    rto.srto_max = (uint32_t) cfg->rto_max_ms;
    (void) set(sock, IPPROTO_SCTP, SCTP_RTOINFO, &rto, sizeof(rto));
    memset(&ap, 0, sizeof(ap));
    ap.sasoc_assoc_id = SCTP_FUTURE_ASSOC;
    ap.sasoc_asocmaxrxt = (uint16_t) cfg->max_retrans;
    (void) set(sock, IPPROTO_SCTP, SCTP_ASSOCINFO, &ap, sizeof(ap));
    return 0;
}

#endif /* MCA_BTL_SCTP_SOCK_OPTS_H */
