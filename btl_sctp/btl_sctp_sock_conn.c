/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * btl_sctp_sock_conn.c: connected UDP sockets per path, under the UDP
 * path layer.
 *
 * A datagram sent with an address on an unconnected UDP socket costs the
 * kernel a route and source address lookup each time; on a connected
 * socket the route is kept with the socket. A path to another host gets
 * a UDP socket of its own, bound to the address and port of the local
 * socket the path leaves from (both have SO_REUSEPORT) and connected to
 * the peer's address: the peer still sees one port per address, and the
 * kernel hands the peer's datagrams to the connected socket (a connected
 * socket matches more of the datagram's addresses than the shared one);
 * datagrams of other senders still reach the shared socket. Both are
 * polled (a socket that carries no SCTP packet is polled once per ms).
 *
 * The shared socket gets SO_REUSEPORT only after its bind: when binding
 * to port 0, the kernel may give a socket that asks for SO_REUSEPORT
 * before the bind a port that another socket of the same user already
 * shares, and two processes would split one port's datagrams.
 *
 * A connected socket reports ICMP errors (port unreachable when the peer
 * has gone, host or network unreachable): the next call on it fails once
 * with that error and nothing sent or received. The call is made again;
 * a path's life is decided by its probes and acks alone, never by such
 * an error, so multihoming keeps a path whose peer still answers on it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sendmmsg, recvmmsg */
#endif
#include "tc_config.h"

#if TC_HAVE_USRSCTP

#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "btl_sctp_sock_user.h"

void btl_sctp_udp_conn_open(user_sock_t *us, user_path_t *path)
{
    struct sockaddr_in sin;
    int one = 1, fd, s = us->nsock;

    path->sock = path->lidx;
    /* loopback paths (one host) and a full set keep the shared socket */
    if (s >= USER_NSOCK_MAX || s - us->base.nlocal >= USER_CONN_MAX ||
        (ntohl(path->to.sin_addr.s_addr) >> 24) == 127 ||
        (ntohl(us->base.local[path->lidx].ip) >> 24) == 127) {
        return;
    }
    for (int l = 0; l < us->base.nlocal; ++l) {
        if (us->base.local[l].ip == path->to.sin_addr.s_addr) {
            return; /* an address of this host: routed through loopback */
        }
    }
    fd = socket(AF_INET, SOCK_DGRAM, 0);
    if (fd < 0) {
        return;
    }
    memset(&sin, 0, sizeof(sin));
    sin.sin_family = AF_INET;
    sin.sin_addr.s_addr = us->base.local[path->lidx].ip;
    sin.sin_port = us->base.local[path->lidx].port;
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) < 0 ||
        bind(fd, (struct sockaddr *) &sin, sizeof(sin)) < 0 ||
        connect(fd, (const struct sockaddr *) &path->to, sizeof(path->to)) < 0) {
        close(fd); /* no route yet, or no port sharing: the shared socket */
        return;
    }
    btl_sctp_udp_set_buf(fd, SO_RCVBUFFORCE, SO_RCVBUF, us->cfg.rcvbuf);
    btl_sctp_udp_set_buf(fd, SO_SNDBUFFORCE, SO_SNDBUF, us->cfg.sndbuf);
    btl_sctp_udp_gro_add(us, fd);
    us->udp_fd[s] = fd;
    us->sock_lidx[s] = path->lidx;
    us->hot_ms[s] = now_ms(); /* polled at once: the association starts on it */
    us->nsock++;
    path->sock = s;
}

void btl_sctp_udp_conn_close(user_sock_t *us, user_path_t *path)
{
    int s = path->sock;

    if (s >= us->base.nlocal && s < us->nsock && us->udp_fd[s] >= 0) {
        close(us->udp_fd[s]);
        us->udp_fd[s] = -1;
    }
    path->sock = path->lidx;
}

/* An error a connected UDP socket reports for an earlier datagram. */
static int btl_sctp_udp_icmp_error(int err)
{
    return ECONNREFUSED == err || EHOSTUNREACH == err || ENETUNREACH == err || EHOSTDOWN == err ||
        EPROTO == err;
}

int btl_sctp_udp_sendmsg(user_sock_t *us, int s, struct msghdr *mh)
{
    int r = (int) sendmsg(us->udp_fd[s], mh, MSG_DONTWAIT);
    if (r < 0 && s >= us->base.nlocal && btl_sctp_udp_icmp_error(errno)) {
        r = (int) sendmsg(us->udp_fd[s], mh, MSG_DONTWAIT);
    }
    return r;
}

int btl_sctp_udp_sendmmsg(user_sock_t *us, int s, struct mmsghdr *mm, unsigned n)
{
    int r = sendmmsg(us->udp_fd[s], mm, n, MSG_DONTWAIT);
    if (r < 0 && s >= us->base.nlocal && btl_sctp_udp_icmp_error(errno)) {
        r = sendmmsg(us->udp_fd[s], mm, n, MSG_DONTWAIT);
    }
    return r;
}

int btl_sctp_udp_recvmmsg(user_sock_t *us, int s, struct mmsghdr *mm, unsigned n)
{
    int r = recvmmsg(us->udp_fd[s], mm, n, MSG_DONTWAIT, NULL);
    if (r < 0 && s >= us->base.nlocal && btl_sctp_udp_icmp_error(errno)) {
        r = recvmmsg(us->udp_fd[s], mm, n, MSG_DONTWAIT, NULL);
    }
    return r;
}

#endif /* TC_HAVE_USRSCTP */
