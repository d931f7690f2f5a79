/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * tc_ofi.h: which of the fi_info entries libfabric lists a provider
 * takes, the objects of one reliable-datagram endpoint, opened and
 * closed in one place (btl_sci, btl_bip), and the guard that keeps
 * memory registration apart from the rest of a domain's calls (every
 * libfabric back end: btl_sci, btl_bip, btl_via). Header only, for files
 * that already include rdma/fabric.h, so that common/ itself does not
 * depend on libfabric.
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
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>

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

/* ---- memory registration under threads ----
 *
 * A domain's registrations go through this guard. libfabric 1.17's tcp
 * provider ("net") keeps a domain's memory keys in a tree that neither
 * fi_mr_reg nor the close of a region locks, though the domain is
 * FI_THREAD_SAFE: two threads that register or close at once corrupt it
 * (4 threads registering and closing regions of one domain hang in the
 * tree within seconds; under MPI_THREAD_MULTIPLE a rank crashed inside
 * fi_mr_reg). Its progress, run by a CQ read, looks keys up in that tree
 * for a peer's RMA, so a CQ read holds the guard shared and a
 * registration or a close holds it alone. Writers go first (glibc, with
 * _GNU_SOURCE as our back ends define it), so that threads spinning on
 * CQ reads cannot keep a registration out. Held only around the
 * libfabric call itself: no other lock is taken under it. */
typedef struct tc_ofi_guard {
    pthread_rwlock_t lock;
    bool ready;
} tc_ofi_guard_t;

static inline int tc_ofi_guard_init(tc_ofi_guard_t *g)
{
    pthread_rwlockattr_t a;
    int rc;

    if (0 != pthread_rwlockattr_init(&a)) {
        return -1;
    }
#if defined(__GLIBC__) && defined(__USE_GNU)
    (void) pthread_rwlockattr_setkind_np(&a, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
#endif
    rc = pthread_rwlock_init(&g->lock, &a);
    (void) pthread_rwlockattr_destroy(&a);
    g->ready = 0 == rc;
    return g->ready ? 0 : -1;
}

static inline void tc_ofi_guard_fini(tc_ofi_guard_t *g)
{
    if (g->ready) {
        (void) pthread_rwlock_destroy(&g->lock);
        g->ready = false;
    }
}

static inline int tc_ofi_mr_reg(tc_ofi_guard_t *g, struct fid_domain *domain, const void *buf,
                                size_t len, uint64_t access, uint64_t key, struct fid_mr **mr)
{
    int rc;

    (void) pthread_rwlock_wrlock(&g->lock);
    rc = fi_mr_reg(domain, buf, len, access, 0, key, 0, mr, NULL);
    (void) pthread_rwlock_unlock(&g->lock);
    return rc;
}

static inline void tc_ofi_mr_close(tc_ofi_guard_t *g, struct fid_mr *mr)
{
    if (NULL != mr) {
        (void) pthread_rwlock_wrlock(&g->lock);
        (void) fi_close(&mr->fid);
        (void) pthread_rwlock_unlock(&g->lock);
    }
}

static inline ssize_t tc_ofi_cq_read(tc_ofi_guard_t *g, struct fid_cq *cq, void *buf, size_t count)
{
    ssize_t n;

    (void) pthread_rwlock_rdlock(&g->lock);
    n = fi_cq_read(cq, buf, count);
    (void) pthread_rwlock_unlock(&g->lock);
    return n;
}

static inline ssize_t tc_ofi_cq_readerr(tc_ofi_guard_t *g, struct fid_cq *cq,
                                        struct fi_cq_err_entry *err)
{
    ssize_t n;

    (void) pthread_rwlock_rdlock(&g->lock);
    n = fi_cq_readerr(cq, err, 0);
    (void) pthread_rwlock_unlock(&g->lock);
    return n;
}

/* one reliable-datagram endpoint and what it hangs on: an address vector
 * (table) and one completion queue (FI_CQ_FORMAT_DATA, no wait object)
 * for transmit and receive; the domain's registration guard (above) */
typedef struct tc_ofi_rdm {
    struct fi_info *info; /* owned: freed by tc_ofi_rdm_close */
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_av *av;
    struct fid_cq *cq;
    struct fid_ep *ep;
    tc_ofi_guard_t guard;
} tc_ofi_rdm_t;

/* the back end's options on the endpoint before it is enabled */
typedef int (*tc_ofi_setopt_fn_t)(struct fid_ep *ep, void *arg);

/* Opens everything for r->info (set by the caller): cq_size 0 takes the
 * provider's size, cq_flags are added to FI_TRANSMIT | FI_RECV in the
 * binding (FI_SELECTIVE_COMPLETION), setopt may be NULL.  0, or a
 * negative libfabric error with what was opened left for
 * tc_ofi_rdm_close. */
static inline int tc_ofi_rdm_open(tc_ofi_rdm_t *r, size_t cq_size, uint64_t cq_flags,
                                  tc_ofi_setopt_fn_t setopt, void *arg)
{
    struct fi_cq_attr cqa;
    struct fi_av_attr ava;
    int rc;

    memset(&cqa, 0, sizeof(cqa));
    cqa.format = FI_CQ_FORMAT_DATA;
    cqa.size = cq_size;
    cqa.wait_obj = FI_WAIT_NONE;
    memset(&ava, 0, sizeof(ava));
    ava.type = FI_AV_TABLE;
    if (0 != tc_ofi_guard_init(&r->guard)) {
        return -FI_ENOMEM;
    }
    rc = fi_fabric(r->info->fabric_attr, &r->fabric, NULL);
    if (0 == rc) {
        rc = fi_domain(r->fabric, r->info, &r->domain, NULL);
    }
    if (0 == rc) {
        rc = fi_av_open(r->domain, &ava, &r->av, NULL);
    }
    if (0 == rc) {
        rc = fi_cq_open(r->domain, &cqa, &r->cq, NULL);
    }
    if (0 == rc) {
        rc = fi_endpoint(r->domain, r->info, &r->ep, NULL);
    }
    if (0 == rc) {
        rc = fi_ep_bind(r->ep, &r->av->fid, 0);
    }
    if (0 == rc) {
        rc = fi_ep_bind(r->ep, &r->cq->fid, FI_TRANSMIT | FI_RECV | cq_flags);
    }
    if (0 == rc && NULL != setopt) {
        rc = setopt(r->ep, arg);
    }
    if (0 == rc) {
        rc = fi_enable(r->ep);
    }
    return rc;
}

/* the endpoint first (what it had in flight is cancelled; the back end
 * then closes its memory registrations), then tc_ofi_rdm_close */
static inline void tc_ofi_rdm_close_ep(tc_ofi_rdm_t *r)
{
    if (NULL != r->ep) {
        (void) fi_close(&r->ep->fid);
        r->ep = NULL;
    }
}

static inline void tc_ofi_rdm_close(tc_ofi_rdm_t *r)
{
    struct fid *fids[4];

    tc_ofi_rdm_close_ep(r);
    fids[0] = NULL != r->cq ? &r->cq->fid : NULL;
    fids[1] = NULL != r->av ? &r->av->fid : NULL;
    fids[2] = NULL != r->domain ? &r->domain->fid : NULL;
    fids[3] = NULL != r->fabric ? &r->fabric->fid : NULL;
    for (int i = 0; i < 4; ++i) {
        if (NULL != fids[i]) {
            (void) fi_close(fids[i]);
        }
    }
    if (NULL != r->info) {
        fi_freeinfo(r->info);
    }
    tc_ofi_guard_fini(&r->guard);
    memset(r, 0, sizeof(*r));
}

#endif /* TC_OFI_H */
