/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * btl_sctp_endpoint.c: sending on an endpoint, the software send queues,
 * and the failure of a peer.
 */
#include "opal_config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "opal/util/output.h"
#include "opal/util/proc.h"
#include "opal/util/show_help.h"

#include "tc_ompi.h"

#include "btl_sctp.h"
#include "btl_sctp_endpoint.h"

static void mca_btl_sctp_endpoint_construct(mca_btl_sctp_endpoint_t *ep)
{
    ep->proc = NULL;
    ep->peer = NULL;
    OBJ_CONSTRUCT(&ep->pending_ctrl, opal_list_t);
    OBJ_CONSTRUCT(&ep->pending_bulk, opal_list_t);
    OBJ_CONSTRUCT(&ep->pending_item, opal_list_item_t);
    ep->on_pending = 0;
    ep->state = MCA_BTL_SCTP_EP_OK;
    ep->used = 0;
    ep->assoc = 0;
    ep->leaving = 0;
    ep->num_streams = 1;
    ep->next_bulk = 0;
    ep->partial = NULL;
}

static void mca_btl_sctp_endpoint_destruct(mca_btl_sctp_endpoint_t *ep)
{
    OBJ_DESTRUCT(&ep->pending_ctrl);
    OBJ_DESTRUCT(&ep->pending_bulk);
    OBJ_DESTRUCT(&ep->pending_item);
}

OBJ_CLASS_INSTANCE(mca_btl_sctp_endpoint_t, opal_list_item_t, mca_btl_sctp_endpoint_construct,
                   mca_btl_sctp_endpoint_destruct);

/* Completion of a fragment the socket took after send() returned 0. */
static void mca_btl_sctp_frag_complete(mca_btl_sctp_frag_t *frag, int status)
{
    mca_btl_base_descriptor_t *des = &frag->base;
    int owned = des->des_flags & MCA_BTL_DES_FLAGS_BTL_OWNERSHIP;

    if (NULL != des->des_cbfunc) {
        des->des_cbfunc(&mca_btl_sctp_module.super, frag->endpoint, des, status);
    }
    if (owned) {
        mca_btl_sctp_frag_return(frag);
    }
}

/* Hand the fragment (header and first segment, then the data sent in
 * place) to the socket, from where an earlier call stopped. A message
 * the socket took in part blocks the endpoint until the rest is in:
 * nothing else may go to this peer in between. */
static int mca_btl_sctp_frag_push(mca_btl_sctp_endpoint_t *ep, mca_btl_sctp_frag_t *frag)
{
    struct iovec iov[2];
    int rc;

    iov[0].iov_base = frag->hdr;
    iov[0].iov_len = MCA_BTL_SCTP_HDR_SIZE + frag->segments[0].seg_len;
    iov[1].iov_base = frag->segments[1].seg_addr.pval;
    iov[1].iov_len = frag->segments[1].seg_len;
    rc = btl_sctp_sock_sendv(mca_btl_sctp_component.sock, ep->peer, frag->stream, iov,
                             frag->base.des_segment_count, &frag->sent);
    ep->partial = (-EAGAIN == rc && frag->sent > 0) ? frag : NULL;
    return rc;
}

/* The socket mca_btl_sctp_refused a message for good: the peer is lost. */
static void mca_btl_sctp_refused(mca_btl_sctp_endpoint_t *ep, int rc)
{
    char why[128];
    snprintf(why, sizeof(why), "the socket mca_btl_sctp_refused a message (%s)", strerror(-rc));
    mca_btl_sctp_endpoint_failed(ep, why);
}

static void mca_btl_sctp_mark_pending(mca_btl_sctp_endpoint_t *ep)
{
    if (!ep->on_pending) {
        ep->on_pending = 1;
        opal_list_append(&mca_btl_sctp_component.pending_eps, &ep->pending_item);
    }
}

int mca_btl_sctp_endpoint_send(mca_btl_sctp_endpoint_t *ep, mca_btl_sctp_frag_t *frag)
{
    opal_list_t *queue = 0 == frag->stream ? &ep->pending_ctrl : &ep->pending_bulk;
    int rc;

    if (MCA_BTL_SCTP_EP_FAILED == ep->state) {
        return OPAL_ERR_UNREACH;
    }
    ep->used = 1;
    ep->assoc = 1;
    frag->endpoint = ep;
    frag->sent = 0;
    if (opal_list_is_empty(queue) && NULL == ep->partial) {
        rc = mca_btl_sctp_frag_push(ep, frag);
        if (0 == rc) {
            return 1;
        }
        if (-EAGAIN != rc) {
            mca_btl_sctp_refused(ep, rc);
            return OPAL_ERR_UNREACH;
        }
    }
    opal_list_append(queue, (opal_list_item_t *) frag);
    mca_btl_sctp_mark_pending(ep);
    return 0;
}

/* Push a queued fragment: 1 sent (taken off its queue and completed),
 * 0 the socket is full, -1 mca_btl_sctp_refused (the endpoint has failed). */
static int mca_btl_sctp_push_queued(mca_btl_sctp_endpoint_t *ep, opal_list_t *queue,
                                    mca_btl_sctp_frag_t *frag)
{
    int rc = mca_btl_sctp_frag_push(ep, frag);

    if (-EAGAIN == rc) {
        return 0;
    }
    opal_list_remove_item(queue, (opal_list_item_t *) frag);
    if (0 != rc) {
        mca_btl_sctp_frag_complete(frag, OPAL_ERR_UNREACH);
        mca_btl_sctp_refused(ep, rc);
        return -1;
    }
    mca_btl_sctp_frag_complete(frag, OPAL_SUCCESS);
    return 1;
}

/* The message begun before anything else, then control in order, then
 * bulk. Stops when the socket is full. */
static int mca_btl_sctp_endpoint_flush(mca_btl_sctp_endpoint_t *ep)
{
    opal_list_t *queues[2] = {&ep->pending_ctrl, &ep->pending_bulk};
    int sent = 0;

    if (NULL != ep->partial) {
        mca_btl_sctp_frag_t *frag = ep->partial;
        if (mca_btl_sctp_push_queued(ep, 0 == frag->stream ? queues[0] : queues[1], frag) <= 0) {
            return sent;
        }
        ++sent;
    }
    for (int q = 0; q < 2; ++q) {
        while (!opal_list_is_empty(queues[q])) {
            if (mca_btl_sctp_push_queued(
                    ep, queues[q], (mca_btl_sctp_frag_t *) opal_list_get_first(queues[q])) <= 0) {
                return sent;
            }
            ++sent;
        }
    }
    return sent;
}

int mca_btl_sctp_endpoint_flush_all(void)
{
    opal_list_t *eps = &mca_btl_sctp_component.pending_eps;
    opal_list_item_t *item, *next;
    int sent = 0;

    for (item = opal_list_get_first(eps); item != opal_list_get_end(eps); item = next) {
        mca_btl_sctp_endpoint_t *ep =
            (mca_btl_sctp_endpoint_t *) ((char *) item -
                                         offsetof(mca_btl_sctp_endpoint_t, pending_item));
        next = opal_list_get_next(item);
        sent += mca_btl_sctp_endpoint_flush(ep);
        if (opal_list_is_empty(&ep->pending_ctrl) && opal_list_is_empty(&ep->pending_bulk) &&
            ep->on_pending) {
            opal_list_remove_item(eps, item);
            ep->on_pending = 0;
        }
    }
    return sent;
}

void mca_btl_sctp_endpoint_failed(mca_btl_sctp_endpoint_t *ep, const char *why)
{
    mca_btl_sctp_component_t *c = &mca_btl_sctp_component;
    opal_list_t *queues[2] = {&ep->pending_ctrl, &ep->pending_bulk};

    int orderly;

    if (MCA_BTL_SCTP_EP_FAILED == ep->state) {
        return;
    }
    /* a peer that said goodbye, or one we said goodbye to, leaves: the end
     * of its association is the normal end of a job, never an error */
    orderly = MCA_BTL_SCTP_EP_BYE == ep->state || ep->leaving;
    ep->state = MCA_BTL_SCTP_EP_FAILED;
    ep->partial = NULL;
    if (ep->on_pending) {
        opal_list_remove_item(&c->pending_eps, &ep->pending_item);
        ep->on_pending = 0;
    }
    for (int q = 0; q < 2; ++q) {
        opal_list_item_t *item;
        while (NULL != (item = opal_list_remove_first(queues[q]))) {
            mca_btl_sctp_frag_complete((mca_btl_sctp_frag_t *) item, OPAL_ERR_UNREACH);
        }
    }
    if (c->finalizing || orderly) {
        opal_output_verbose(20, c->output, "btl:sctp: peer %s left (%s)",
                            NULL != ep->proc ? OPAL_NAME_PRINT(ep->proc->proc_name) : "unknown",
                            why);
        return;
    }
    if (NULL != ep->proc && tc_ompi_ft_enabled()) {
        /* under ULFM that peer's failure alone: the job goes on (the
         * PML's callback may send to other peers from inside) */
        (void) tc_ompi_peer_lost(&(tc_ompi_lost_t){"sctp", "help-mpi-btl-sctp.txt", c->output,
                                                   &mca_btl_sctp_module.super,
                                                   mca_btl_sctp_module.error_cb},
                                 ep->proc, "rank", (int) ep->proc->proc_name.vpid, why);
        return;
    }
    opal_show_help("help-mpi-btl-sctp.txt", "peer lost", true, opal_process_info.nodename,
                   NULL != ep->proc ? opal_get_proc_hostname(ep->proc) : "unknown",
                   NULL != ep->proc ? OPAL_NAME_PRINT(ep->proc->proc_name) : "unknown", why);
    if (NULL != mca_btl_sctp_module.error_cb) {
        mca_btl_sctp_module.error_cb(&mca_btl_sctp_module.super, MCA_BTL_ERROR_FLAGS_FATAL,
                                     ep->proc, "btl/sctp: association to the peer lost");
    }
}
