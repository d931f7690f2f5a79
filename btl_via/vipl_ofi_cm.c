/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/*
 * vipl_ofi_cm.c: the ofi provider's connection events (vipl_ofi.c holds
 * the NIC and the VIs, vipl_ofi_xfer.c the data transfer): endpoints
 * opened for a VI, the NIC's event queue read for connection requests,
 * doorbells and goodbyes (the peer-to-peer connection of VIA over
 * libfabric's client/server one, described at the top of vipl_ofi.c),
 * requests that came before their VI kept until it asks.
 */

#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>

#include "tc_common.h"
#include "vipl.h"
#include "vipl_ofi.h"

static vipl_ofi_vi_t *vipl_ofi_vi_of(vipl_ofi_nic_t *nic, fid_t fid)
{
    uintptr_t idx = NULL != fid ? (uintptr_t) fid->context : 0;

    if (idx < 1 || idx > nic->cap_vis || NULL == nic->vis[idx - 1] ||
        NULL == nic->vis[idx - 1]->ep || &nic->vis[idx - 1]->ep->fid != fid) {
        return NULL;
    }
    return nic->vis[idx - 1];
}

/* under the NIC's lock: the VI whose doorbell endpoint this is */
static vipl_ofi_vi_t *vipl_ofi_bell_of(vipl_ofi_nic_t *nic, fid_t fid)
{
    uintptr_t idx = NULL != fid ? (uintptr_t) fid->context : 0;

    if (!(idx & VIPL_OFI_BELL_CTX)) {
        return NULL;
    }
    idx &= ~VIPL_OFI_BELL_CTX;
    if (idx < 1 || idx > nic->cap_vis || NULL == nic->vis[idx - 1] ||
        NULL == nic->vis[idx - 1]->bell || &nic->vis[idx - 1]->bell->fid != fid) {
        return NULL;
    }
    return nic->vis[idx - 1];
}

/* under the NIC's lock: the VI with this discriminator */
vipl_ofi_vi_t *vipl_ofi_vi_named(vipl_ofi_nic_t *nic, uint32_t disc)
{
    for (uint32_t i = 0; i < nic->cap_vis; ++i) {
        if (NULL != nic->vis[i] && nic->vis[i]->disc == disc) {
            return nic->vis[i];
        }
    }
    return NULL;
}

/* is a request (or doorbell, goodbye) from the peer a VI asked for?  A
 * peer of another job whose VI we do not know yet (VIPL_DISC_ANY) is
 * known by its listening address alone */
static bool vipl_ofi_from_peer(const vipl_ofi_addr_t *remote, const vipl_ofi_conn_t *conn)
{
    return (VIPL_DISC_ANY == remote->vi_index || conn->source_vi == remote->vi_index) &&
        conn->sa_len == remote->sa_len && 0 == memcmp(conn->sa, remote->sa, conn->sa_len);
}

/* under the VI's lock: the endpoint, bound and enabled, with the
 * receives posted so far handed to it */
vipl_return_t vipl_ofi_ep_open(vipl_ofi_vi_t *vi, struct fi_info *info)
{
    vipl_ofi_nic_t *nic = vi->nic;

    info->tx_attr->size = VIPL_OFI_MAX(info->tx_attr->size, (size_t) vi->send_depth);
    info->rx_attr->size = VIPL_OFI_MAX(info->rx_attr->size, (size_t) vi->recv_depth);
    if (0 != fi_endpoint(nic->domain, info, &vi->ep, (void *) (uintptr_t) (vi->index + 1))) {
        vi->ep = NULL;
        return VIPL_ERROR_RESOURCE;
    }
    if (0 != fi_ep_bind(vi->ep, &nic->eq->fid, 0)) {
        (void) fi_close(&vi->ep->fid);
        vi->ep = NULL;
        return VIPL_ERROR_RESOURCE;
    }
    /* every receive, RDMA and non-inline send asks for its completion
     * (FI_COMPLETION); a provider without selective completion makes
     * one for every operation */
    vi->selective =
        0 == fi_ep_bind(vi->ep, &vi->cq->fid, FI_TRANSMIT | FI_RECV | FI_SELECTIVE_COMPLETION);
    if ((!vi->selective && 0 != fi_ep_bind(vi->ep, &vi->cq->fid, FI_TRANSMIT | FI_RECV)) ||
        0 != fi_enable(vi->ep)) {
        (void) fi_close(&vi->ep->fid);
        vi->ep = NULL;
        return VIPL_ERROR_RESOURCE;
    }
    for (uint32_t i = 0; i < vi->ring_count; ++i) {
        if (0 != vipl_ofi_fi_recv(vi, vi->ring[(vi->ring_head + i) % vi->recv_depth])) {
            return VIPL_ERROR_RESOURCE;
        }
    }
    return VIPL_SUCCESS;
}

/* under the NIC's lock: accept a request for a VI that asked for the same
 * connection (and give the request back in every case) */
void vipl_ofi_accept(vipl_ofi_vi_t *vi, struct fi_info *info, const vipl_ofi_conn_t *conn)
{
    vipl_ofi_nic_t *nic = vi->nic;

    pthread_mutex_lock(&vi->lock);
    if (NULL != vi->ep || VIPL_STATE_PENDING_CONNECT != vi->state ||
        !vipl_ofi_from_peer(&vi->remote, conn)) {
        /* not the peer this VI asked for */
        (void) fi_reject(nic->pep, info->handle, NULL, 0);
        pthread_mutex_unlock(&vi->lock);
        fi_freeinfo(info);
        return;
    }
    /* a peer of another job names its VI now */
    vi->remote.vi_index = conn->source_vi;
    if (VIPL_SUCCESS != vipl_ofi_ep_open(vi, info)) {
        (void) fi_reject(nic->pep, info->handle, NULL, 0);
        vipl_ofi_fail_locked(vi, VIPL_VIERR_PROTOCOL);
        --nic->connecting;
    } else if (0 != fi_accept(vi->ep, NULL, 0)) {
        vipl_ofi_fail_locked(vi, VIPL_VIERR_PROTOCOL);
        --nic->connecting;
    }
    pthread_mutex_unlock(&vi->lock);
    fi_freeinfo(info);
}

/* under the NIC's lock: note a request (info NULL: a doorbell) for a VI
 * that does not exist yet; a newer one from the same peer VI replaces an
 * older one */
static void vipl_ofi_wait_add(vipl_ofi_nic_t *nic, struct fi_info *info,
                              const vipl_ofi_conn_t *conn)
{
    vipl_ofi_waiting_t *w = NULL;

    for (uint32_t i = 0; i < nic->num_waiting; ++i) {
        vipl_ofi_waiting_t *x = nic->waiting + i;

        if (x->conn.target_vi == conn->target_vi && x->conn.source_vi == conn->source_vi &&
            x->conn.sa_len == conn->sa_len && 0 == memcmp(x->conn.sa, conn->sa, conn->sa_len)) {
            w = x;
            break;
        }
    }
    if (NULL == w) {
        if (nic->num_waiting == nic->cap_waiting) {
            uint32_t cap = nic->cap_waiting ? 2 * nic->cap_waiting : 16;
            vipl_ofi_waiting_t *v =
                cap <= VIPL_OFI_MAX_VIS ? realloc(nic->waiting, cap * sizeof(*v)) : NULL;

            if (NULL == v) {
                if (NULL != info) {
                    (void) fi_reject(nic->pep, info->handle, NULL, 0);
                    fi_freeinfo(info);
                }
                return;
            }
            nic->waiting = v;
            nic->cap_waiting = cap;
        }
        w = nic->waiting + nic->num_waiting++;
        memset(w, 0, sizeof(*w));
    } else if (NULL != info && NULL != w->info) {
        (void) fi_reject(nic->pep, w->info->handle, NULL, 0);
        fi_freeinfo(w->info);
        w->info = NULL;
    }
    if (NULL != info) {
        w->info = info;
    }
    w->conn = *conn;
}

/* under the NIC's lock: take the waiting entries of a VI that now asks
 * for its connection; the request from its peer (if one came) is
 * returned, every other one refused */
struct fi_info *vipl_ofi_wait_take(vipl_ofi_nic_t *nic, uint32_t disc, const vipl_ofi_addr_t *peer,
                                   vipl_ofi_conn_t *conn)
{
    struct fi_info *found = NULL;
    uint32_t i = 0;

    while (i < nic->num_waiting) {
        vipl_ofi_waiting_t *w = nic->waiting + i;

        if (w->conn.target_vi != disc) {
            ++i;
            continue;
        }
        if (NULL != w->info) {
            if (NULL == found && NULL != peer && vipl_ofi_from_peer(peer, &w->conn)) {
                found = w->info;
                *conn = w->conn;
            } else {
                (void) fi_reject(nic->pep, w->info->handle, NULL, 0);
                fi_freeinfo(w->info);
            }
        }
        nic->waiting[i] = nic->waiting[--nic->num_waiting];
    }
    return found;
}

/* under the NIC's lock: a connection request from a peer */
static void vipl_ofi_connreq(vipl_ofi_nic_t *nic, struct fi_info *info, const void *data,
                             size_t len)
{
    vipl_ofi_conn_t conn;
    vipl_ofi_vi_t *vi;
    bool bell;

    if (len < sizeof(conn)) {
        goto reject;
    }
    memcpy(&conn, data, sizeof(conn));
    bell = VIPL_OFI_BELL_MAGIC == conn.magic;
    if ((VIPL_OFI_CONN_MAGIC != conn.magic && VIPL_OFI_BYE_MAGIC != conn.magic && !bell) ||
        conn.sa_len > VIPL_OFI_SA_BYTES || 0 == conn.sa_len) {
        goto reject;
    }
    if (VIPL_DISC_ANY == conn.target_vi) {
        /* a process of another job that does not know our VI for it:
         * the owner's resolver names it (refused without one) */
        uint32_t disc = VIPL_DISC_ANY;

        if (NULL == nic->resolve || 0 != nic->resolve(nic->resolve_ctx, conn.name, &disc) ||
            VIPL_DISC_ANY == disc) {
            goto reject;
        }
        conn.target_vi = disc;
    }
    vi = vipl_ofi_vi_named(nic, conn.target_vi);
    if (VIPL_OFI_BYE_MAGIC == conn.magic) {
        /* the peer's orderly disconnect, before its fi_shutdown: the
         * connection's end that follows (or came just before) is no
         * failure; the refusal tells the peer we noted it */
        if (NULL != vi) {
            pthread_mutex_lock(&vi->lock);
            if (vi->have_remote && vipl_ofi_from_peer(&vi->remote, &conn)) {
                vi->bye = true;
                if (VIPL_STATE_ERROR == vi->state && VIPL_VIERR_PEER_GONE == vi->error) {
                    vi->error = VIPL_VIERR_DISCONNECTED;
                }
            }
            pthread_mutex_unlock(&vi->lock);
        }
        goto reject;
    }
    if (bell) {
        /* noted, refused: we connect (an existing VI has asked already or
         * will ask at its VipConnectPeerRequest) */
        (void) fi_reject(nic->pep, info->handle, NULL, 0);
        fi_freeinfo(info);
        if (NULL == vi) {
            vipl_ofi_wait_add(nic, NULL, &conn);
        }
        return;
    }
    if (NULL == vi) {
        vipl_ofi_wait_add(nic, info, &conn);
        return;
    }
    if (VIPL_STATE_PENDING_CONNECT == vi->state) {
        vipl_ofi_accept(vi, info, &conn);
        return;
    }
    if (VIPL_STATE_IDLE == vi->state) {
        /* we have not asked for this connection yet: it waits */
        if (NULL != vi->connreq) {
            (void) fi_reject(nic->pep, vi->connreq->handle, NULL, 0);
            fi_freeinfo(vi->connreq);
        }
        vi->connreq = info;
        vi->connreq_data = conn;
        return;
    }
reject:
    (void) fi_reject(nic->pep, info->handle, NULL, 0);
    fi_freeinfo(info);
}

/* under the NIC's lock: a doorbell has done its work (refused, or even
 * accepted): close it */
void vipl_ofi_bell_close(vipl_ofi_vi_t *vi)
{
    if (NULL != vi->bell) {
        (void) fi_close(&vi->bell->fid);
        vi->bell = NULL;
    }
}

/* under the NIC's lock: connection events */
void vipl_ofi_poll_eq(vipl_ofi_nic_t *nic)
{
    for (;;) {
        union {
            struct fi_eq_cm_entry cm;
            uint8_t raw[sizeof(struct fi_eq_cm_entry) + sizeof(vipl_ofi_conn_t) + 64];
        } buf;
        uint32_t event = 0;
        vipl_ofi_vi_t *vi;
        ssize_t n = fi_eq_read(nic->eq, &event, &buf, sizeof(buf), 0);

        if (-FI_EAVAIL == n) {
            struct fi_eq_err_entry err;

            memset(&err, 0, sizeof(err));
            if (fi_eq_readerr(nic->eq, &err, 0) < 0) {
                return;
            }
            vi = vipl_ofi_bell_of(nic, err.fid);
            if (NULL != vi) {
                /* the connector refused our doorbell, as it does: it
                 * connects to us */
                vipl_ofi_bell_close(vi);
                continue;
            }
            vi = vipl_ofi_vi_of(nic, err.fid);
            if (NULL != vi) {
                pthread_mutex_lock(&vi->lock);
                if (VIPL_STATE_PENDING_CONNECT == vi->state && nic->connecting > 0) {
                    --nic->connecting;
                }
                vipl_ofi_fail_locked(vi, VIPL_VIERR_PEER_GONE);
                pthread_mutex_unlock(&vi->lock);
            }
            continue;
        }
        if (n < (ssize_t) sizeof(struct fi_eq_cm_entry)) {
            return;
        }
        switch (event) {
        case FI_CONNREQ:
            vipl_ofi_connreq(nic, buf.cm.info, buf.cm.data, (size_t) n - sizeof(buf.cm));
            break;
        case FI_CONNECTED:
            vi = vipl_ofi_bell_of(nic, buf.cm.fid);
            if (NULL != vi) {
                vipl_ofi_bell_close(vi);
                break;
            }
            vi = vipl_ofi_vi_of(nic, buf.cm.fid);
            if (NULL != vi) {
                pthread_mutex_lock(&vi->lock);
                if (VIPL_STATE_PENDING_CONNECT == vi->state) {
                    vi->state = VIPL_STATE_CONNECTED;
                    if (nic->connecting > 0) {
                        --nic->connecting;
                    }
                }
                pthread_mutex_unlock(&vi->lock);
            }
            break;
        case FI_SHUTDOWN:
            vi = vipl_ofi_vi_of(nic, buf.cm.fid);
            if (NULL != vi) {
                /* orderly only after the peer's goodbye (or our own
                 * disconnect): a killed process's socket ends alike */
                pthread_mutex_lock(&vi->lock);
                vipl_ofi_fail_locked(
                    vi, vi->bye || vi->closing ? VIPL_VIERR_DISCONNECTED : VIPL_VIERR_PEER_GONE);
                pthread_mutex_unlock(&vi->lock);
            }
            break;
        default:
            break;
        }
    }
}
