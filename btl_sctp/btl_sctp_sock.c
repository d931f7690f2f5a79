/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * btl_sctp_sock.c: stack selection and the dispatch of the socket layer
 * to the kernel (libsctp) or user (usrsctp) implementation.
 */
#include "tc_config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "btl_sctp_sock.h"

void btl_sctp_sock_config_default(btl_sctp_sock_config_t *cfg, int stack)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->stack = stack;
    cfg->sctp_port = 5899;
    cfg->num_streams = 8;
    cfg->sndbuf = 4 * 1024 * 1024;
    cfg->rcvbuf = 4 * 1024 * 1024;
    cfg->nodelay = 1;
    cfg->mtu = 0;
    cfg->crc32c = 1;
    cfg->probe_ms = 50;
    cfg->path_timeout_ms = 300;
    cfg->rto_min_ms = 100;
    cfg->rto_max_ms = 250;
    cfg->rto_initial_ms = 300;
    cfg->max_retrans = 40;
    cfg->path_max_retrans = 2;
    cfg->pf_retrans = 0;
    cfg->hb_ms = 1000;
    cfg->cmt = 0;
    cfg->max_msg = 256 * 1024;
    cfg->prio_streams = 1;
    cfg->pool = 1;
    cfg->sack_freq = 4;
    cfg->send_batch = BTL_SCTP_SEND_GSO;
    cfg->gro = 1;
    cfg->segment = 1;
    cfg->dgram = 0;
}

static const btl_sctp_sock_ops_t *btl_sctp_sock_ops_for(int stack)
{
#if TC_HAVE_USRSCTP
    if (BTL_SCTP_STACK_USER == stack) {
        return &btl_sctp_sock_user_ops;
    }
#endif
#if TC_HAVE_LIBSCTP
    if (BTL_SCTP_STACK_KERNEL == stack) {
        return &btl_sctp_sock_kernel_ops;
    }
#endif
    return NULL;
}

int btl_sctp_sock_probe(int stack, char *why, size_t whylen)
{
    if (NULL == btl_sctp_sock_ops_for(stack)) {
        snprintf(why, whylen, "the %s stack was not built (%s not found at configure time)",
                 BTL_SCTP_STACK_USER == stack ? "user" : "kernel",
                 BTL_SCTP_STACK_USER == stack ? "usrsctp" : "libsctp");
        return -ENOSYS;
    }
#if TC_HAVE_USRSCTP
    if (BTL_SCTP_STACK_USER == stack) {
        return btl_sctp_sock_user_probe(why, whylen);
    }
#endif
#if TC_HAVE_LIBSCTP
    if (BTL_SCTP_STACK_KERNEL == stack) {
        return btl_sctp_sock_kernel_probe(why, whylen);
    }
#endif
    return -ENOSYS;
}

int btl_sctp_sock_open(btl_sctp_sock_t **out, const btl_sctp_sock_config_t *cfg,
                       const btl_sctp_sock_addr_t *local, int nlocal, char *why, size_t whylen)
{
    const btl_sctp_sock_ops_t *ops = btl_sctp_sock_ops_for(cfg->stack);
    int rc;

    *out = NULL;
    if (NULL == ops) {
        snprintf(why, whylen, "stack %d not available", cfg->stack);
        return -ENOSYS;
    }
    if (nlocal < 1 || nlocal > BTL_SCTP_SOCK_MAX_ADDRS || cfg->num_streams < 1 ||
        cfg->num_streams > 1024) {
        snprintf(why, whylen, "bad socket configuration (%d addresses, %d streams)", nlocal,
                 cfg->num_streams);
        return -EINVAL;
    }
    rc = ops->open(out, cfg, local, nlocal, why, whylen);
    if (0 == rc) {
        (*out)->ops = ops;
        (*out)->stack = cfg->stack;
    }
    return rc;
}

void btl_sctp_sock_close(btl_sctp_sock_t *s)
{
    if (NULL != s) {
        s->ops->close(s);
    }
}

int btl_sctp_sock_stack(const btl_sctp_sock_t *s)
{
    return s->stack;
}

int btl_sctp_sock_local_addrs(btl_sctp_sock_t *s, btl_sctp_sock_addr_t *addrs, int max)
{
    int n = s->nlocal < max ? s->nlocal : max;
    memcpy(addrs, s->local, (size_t) n * sizeof(*addrs));
    return n;
}

int btl_sctp_sock_peer_add(btl_sctp_sock_t *s, const btl_sctp_sock_addr_t *addrs, int naddrs,
                           int sctp_port, void *cookie, btl_sctp_peer_t **out)
{
    if (naddrs < 1 || naddrs > BTL_SCTP_SOCK_MAX_ADDRS) {
        return -EINVAL;
    }
    return s->ops->peer_add(s, addrs, naddrs, sctp_port, cookie, out);
}

void btl_sctp_sock_peer_remove(btl_sctp_sock_t *s, btl_sctp_peer_t *p)
{
    if (NULL != p) {
        s->ops->peer_remove(s, p);
    }
}

int btl_sctp_sock_send(btl_sctp_sock_t *s, btl_sctp_peer_t *p, uint16_t stream, const void *buf,
                       size_t len)
{
    struct iovec iov = {(void *) buf, len};
    size_t done = 0;
    int rc = s->ops->sendv(s, p, stream, &iov, 1, &done);

    /* Part of the message is in (the user stack takes what fits): the
     * rest must follow, so wait for room while driving the stack. */
    for (int tries = 0; - EAGAIN == rc && done > 0 && tries < 1000000; ++tries) {
        (void) s->ops->progress(s);
        rc = s->ops->sendv(s, p, stream, &iov, 1, &done);
    }
    return rc;
}

int btl_sctp_sock_sendv(btl_sctp_sock_t *s, btl_sctp_peer_t *p, uint16_t stream,
                        const struct iovec *iov, int iovcnt, size_t *done)
{
    if (iovcnt < 1 || iovcnt > BTL_SCTP_SOCK_MAX_IOV) {
        return -EINVAL;
    }
    return s->ops->sendv(s, p, stream, iov, iovcnt, done);
}

int btl_sctp_sock_progress(btl_sctp_sock_t *s)
{
    return s->ops->progress(s);
}

int btl_sctp_sock_recv(btl_sctp_sock_t *s, btl_sctp_sock_msg_t *msg)
{
    return s->ops->recv(s, msg);
}

int btl_sctp_sock_paths(btl_sctp_sock_t *s, btl_sctp_peer_t *p, int *alive)
{
    return s->ops->paths(s, p, alive);
}

int btl_sctp_sock_active_path(btl_sctp_sock_t *s, btl_sctp_peer_t *p)
{
    return s->ops->active_path(s, p);
}

#if !TC_HAVE_USRSCTP
int btl_sctp_sock_user_stats(char *buf, size_t len)
{
    (void) buf;
    (void) len;
    return -ENOTCONN;
}
#endif
