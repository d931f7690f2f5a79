/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * tc_ofi.h: which of the fi_info entries libfabric lists a provider
 * takes; shared by the libfabric back ends of the device layers (btl_sci,
 * btl_bip). Header only, for files that already include rdma/fabric.h,
 * so that common/ itself does not depend on libfabric.
 *
 * Why a rule of our own: tcp;ofi_rxm (libfabric 1.17) ignores the hint's
 * domain name and lists every interface of the host in no useful order,
 * link-local addresses of bridges first. An endpoint on an interface that
 * goes away (another job's bridge) loses what it had injected without a
 * completion, so the first entry is never taken blindly.
 */
#ifndef TC_OFI_H
#define TC_OFI_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>

#include <rdma/fabric.h>

/* a back end's own test of an entry (MR mode, address size, ...) */
typedef bool (*tc_ofi_accept_fn_t)(const struct fi_info *info, void *arg);

/* how good an entry's source address is when no domain is named: lower
 * is better; a routable IPv4 address, then a global IPv6 one, then
 * loopback, then IPv6 link-local (it reaches no other subnet, and the
 * bridges that have one come and go) */
static inline int tc_ofi_addr_rank(const struct fi_info *i)
{
    const struct sockaddr *sa = (const struct sockaddr *) i->src_addr;
    const char *dom = NULL != i->domain_attr ? i->domain_attr->name : NULL;
    bool lo = NULL != dom && 0 == strcmp(dom, "lo");

    if (NULL == sa) {
        return 4;
    }
    if (AF_INET == sa->sa_family && i->src_addrlen >= sizeof(struct sockaddr_in)) {
        const struct sockaddr_in *in = (const struct sockaddr_in *) sa;

        lo = lo || 127 == (ntohl(in->sin_addr.s_addr) >> 24);
        return lo ? 2 : 0;
    }
    if (AF_INET6 == sa->sa_family && i->src_addrlen >= sizeof(struct sockaddr_in6)) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *) sa;

        if (lo || IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr)) {
            return 2;
        }
        return IN6_IS_ADDR_LINKLOCAL(&in6->sin6_addr) ? 3 : 1;
    }
    return 4;
}

/* the entry to open: with a domain name, the first accepted entry of
 * exactly that domain; without, the accepted entry of the best address
 * rank (the first of equals); NULL when none qualifies */
static inline struct fi_info *tc_ofi_pick(struct fi_info *list, const char *domain,
                                          tc_ofi_accept_fn_t accept, void *arg)
{
    struct fi_info *best = NULL;
    int best_rank = 5;

    if (NULL != domain && '\0' == domain[0]) {
        domain = NULL;
    }
    for (struct fi_info *i = list; NULL != i; i = i->next) {
        const char *dom = NULL != i->domain_attr ? i->domain_attr->name : NULL;
        int rank;

        if (NULL != accept && !accept(i, arg)) {
            continue;
        }
        if (NULL != domain) {
            if (NULL != dom && 0 == strcmp(dom, domain)) {
                return i;
            }
            continue;
        }
        rank = tc_ofi_addr_rank(i);
        if (rank < best_rank) {
            best = i;
            best_rank = rank;
        }
    }
    return best;
}

#endif /* TC_OFI_H */
