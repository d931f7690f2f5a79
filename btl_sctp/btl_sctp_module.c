/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * btl_sctp_module.c: the module functions of btl/sctp: peers (modex,
 * reachability), descriptors, send with the stream mapping, the receive
 * path, and finalize.
 */
#include "opal_config.h"

#include <arpa/inet.h>
#include <string.h>

#include "opal/class/opal_bitmap.h"
#include "opal/datatype/opal_convertor.h"
#include "tc_ompi_compat.h"
#include "opal/util/output.h"
#include "opal/util/proc.h"
#include "opal/util/show_help.h"

#include "tc_ompi.h"

#include "btl_sctp.h"
#include "btl_sctp_endpoint.h"
#include "btl_sctp_frag.h"
#include "btl_sctp_hdr.h"
#include "btl_sctp_lost.h"

mca_btl_sctp_module_t mca_btl_sctp_module = {
    .super =
        {
            .btl_component = &mca_btl_sctp_component.super,
            .btl_add_procs = mca_btl_sctp_add_procs,
            .btl_del_procs = mca_btl_sctp_del_procs,
            .btl_finalize = mca_btl_sctp_finalize,
            .btl_alloc = mca_btl_sctp_alloc,
            .btl_free = mca_btl_sctp_free,
            .btl_prepare_src = mca_btl_sctp_prepare_src,
            .btl_send = mca_btl_sctp_send,
            .btl_sendi = mca_btl_sctp_sendi,
            .btl_dump = mca_btl_sctp_dump,
            .btl_register_error = mca_btl_sctp_register_error,
        },
    .error_cb = NULL,
};

/* Build an endpoint from the peer's modex entry; NULL when unreachable. */
mca_btl_sctp_endpoint_t *mca_btl_sctp_endpoint_create(opal_proc_t *proc)
{
    mca_btl_sctp_component_t *c = &mca_btl_sctp_component;
    mca_btl_sctp_modex_t *m = NULL;
    btl_sctp_sock_addr_t addrs[BTL_SCTP_SOCK_MAX_ADDRS];
    mca_btl_sctp_endpoint_t *ep;
    size_t size = 0;
    int rc, n = 0;
    int local = OPAL_PROC_ON_LOCAL_NODE(proc->proc_flags);

    TC_OMPI_MODEX_RECV(rc, &c->super.btl_version, &proc->proc_name, (void **) &m, &size);
    if (OPAL_SUCCESS != rc || NULL == m) {
        return NULL; /* the peer has no sctp */
    }
    /* every length read from the modex is checked before use */
    if (size < sizeof(*m) || MCA_BTL_SCTP_MODEX_VERSION != m->version ||
        m->naddrs > BTL_SCTP_SOCK_MAX_ADDRS ||
        size < sizeof(*m) + (size_t) m->naddrs * sizeof(mca_btl_sctp_modex_addr_t)) {
        opal_output_verbose(1, c->output, "btl:sctp: malformed modex entry from %s",
                            OPAL_NAME_PRINT(proc->proc_name));
        free(m);
        return NULL;
    }
    if (m->stack != c->stack ||
        (BTL_SCTP_STACK_USER == c->stack && m->crc32c != (c->crc32c ? 1 : 0))) {
        opal_output_verbose(1, c->output, "btl:sctp: %s uses another stack or checksum mode",
                            OPAL_NAME_PRINT(proc->proc_name));
        free(m);
        return NULL;
    }
    for (int i = 0; i < m->naddrs; ++i) {
        /* another host's loopback is not the peer */
        if (!local && 127 == (ntohl(m->addrs[i].ip) >> 24)) {
            continue;
        }
        addrs[n].ip = m->addrs[i].ip;
        addrs[n].port = m->addrs[i].port;
        addrs[n].prefix = 0;
        addrs[n].mtu = 0;
        ++n;
    }
    if (0 == n) {
        free(m);
        return NULL;
    }
    ep = OBJ_NEW(mca_btl_sctp_endpoint_t);
    if (NULL == ep) {
        free(m);
        return NULL;
    }
    ep->proc = proc;
    ep->num_streams =
        (uint16_t) (m->num_streams < c->num_streams ? m->num_streams : c->num_streams);
    if (0 == ep->num_streams) {
        ep->num_streams = 1;
    }
    rc = btl_sctp_sock_peer_add(c->sock, addrs, n, m->sctp_port, ep, &ep->peer);
    free(m);
    if (0 != rc) {
        OBJ_RELEASE(ep);
        return NULL;
    }
    opal_list_append(&c->endpoints, &ep->super);
    return ep;
}

/* The endpoint of a process, by name; NULL when it has none. */
mca_btl_sctp_endpoint_t *mca_btl_sctp_endpoint_of(const opal_process_name_t *name)
{
    mca_btl_sctp_component_t *c = &mca_btl_sctp_component;
    mca_btl_sctp_endpoint_t *ep;

    OPAL_LIST_FOREACH(ep, &c->endpoints, mca_btl_sctp_endpoint_t)
    {
        if (ep->proc->proc_name.jobid == name->jobid && ep->proc->proc_name.vpid == name->vpid) {
            return ep;
        }
    }
    return NULL;
}

/* Open MPI gives a BTL the processes of other hosts only when the PML
 * first sends to them (mpi_add_procs_cutoff 0), but such a process may
 * start the association first: its request comes from an address no
 * endpoint knows and would be dropped, and its association would fail.
 * So at the first add_procs every process of the job gets its endpoint
 * (addresses from the modex; an association still starts with the first
 * message), and until the BML registers our progress for a peer it
 * handed us, the component registers it itself. */
static void mca_btl_sctp_add_job_locked(void)
{
    mca_btl_sctp_component_t *c = &mca_btl_sctp_component;
    uint32_t size = 0;

    c->job_added = 1;
    if (OPAL_SUCCESS != tc_ompi_job_size(&size)) {
        return;
    }
    for (uint32_t v = 0; v < size; ++v) {
        opal_process_name_t name;
        opal_proc_t *proc;

        name.jobid = OPAL_PROC_MY_NAME.jobid;
        name.vpid = v;
        if (v == OPAL_PROC_MY_NAME.vpid || NULL != mca_btl_sctp_endpoint_of(&name)) {
            continue;
        }
        proc = opal_proc_for_name(name);
        if (NULL != proc) {
            (void) mca_btl_sctp_endpoint_create(proc);
        }
    }
    /* the user stack also listens for processes of other jobs that may
     * start an association before any add_procs names them
     * (btl_sctp_others.c), even with no peer in the job */
    if ((!opal_list_is_empty(&c->endpoints) || BTL_SCTP_STACK_USER == c->stack) &&
        !c->own_progress &&
        OPAL_SUCCESS == opal_progress_register(mca_btl_sctp_component_progress)) {
        c->own_progress = 1;
    }
}

static int mca_btl_sctp_add_procs_locked(struct mca_btl_base_module_t *btl, size_t nprocs,
                                         struct opal_proc_t **procs,
                                         struct mca_btl_base_endpoint_t **peers,
                                         opal_bitmap_t *reachable)
{
    mca_btl_sctp_component_t *c = &mca_btl_sctp_component;
    opal_proc_t *me = opal_proc_local_get();
    (void) btl;

    if (!c->job_added) {
        mca_btl_sctp_add_job_locked();
    }
    for (size_t i = 0; i < nprocs; ++i) {
        if (procs[i] == me || NULL != peers[i]) {
            continue;
        }
        peers[i] = mca_btl_sctp_endpoint_of(&procs[i]->proc_name);
        if (NULL == peers[i]) {
            peers[i] = mca_btl_sctp_endpoint_create(procs[i]);
        } else {
            /* the BML's process object from now on */
            peers[i]->proc = procs[i];
        }
        if (NULL != peers[i] && NULL != reachable) {
            opal_bitmap_set_bit(reachable, (int) i);
        }
    }
    return OPAL_SUCCESS;
}

static void mca_btl_sctp_endpoint_destroy(mca_btl_sctp_endpoint_t *ep)
{
    mca_btl_sctp_component_t *c = &mca_btl_sctp_component;
    opal_list_item_t *item;

    if (ep->on_pending) {
        opal_list_remove_item(&c->pending_eps, &ep->pending_item);
        ep->on_pending = 0;
    }
    while (NULL != (item = opal_list_remove_first(&ep->pending_ctrl))) {
        mca_btl_sctp_frag_return((mca_btl_sctp_frag_t *) item);
    }
    while (NULL != (item = opal_list_remove_first(&ep->pending_bulk))) {
        mca_btl_sctp_frag_return((mca_btl_sctp_frag_t *) item);
    }
    btl_sctp_sock_peer_remove(c->sock, ep->peer);
    ep->peer = NULL;
    opal_list_remove_item(&c->endpoints, &ep->super);
    OBJ_RELEASE(ep);
}

static void mca_btl_sctp_say_goodbye(mca_btl_sctp_endpoint_t **eps, size_t n);

static int mca_btl_sctp_del_procs_locked(struct mca_btl_base_module_t *btl, size_t nprocs,
                                         struct opal_proc_t **procs,
                                         struct mca_btl_base_endpoint_t **peers)
{
    (void) btl;
    (void) procs;
    mca_btl_sctp_say_goodbye(peers, nprocs);
    for (size_t i = 0; i < nprocs; ++i) {
        if (NULL != peers[i]) {
            mca_btl_sctp_endpoint_destroy(peers[i]);
        }
    }
    return OPAL_SUCCESS;
}

static mca_btl_sctp_frag_t *mca_btl_sctp_frag_for(size_t size)
{
    mca_btl_sctp_component_t *c = &mca_btl_sctp_component;

    if (size <= c->eager_frag_size) {
        return mca_btl_sctp_frag_alloc(&c->eager_frags);
    }
    if (size <= c->max_frag_size) {
        return mca_btl_sctp_frag_alloc(&c->max_frags);
    }
    return NULL;
}

/* A fresh descriptor: one segment of len bytes, no callback. */
static void mca_btl_sctp_frag_setup(mca_btl_sctp_frag_t *frag,
                                    struct mca_btl_base_endpoint_t *endpoint, uint32_t flags,
                                    size_t len)
{
    frag->segments[0].seg_len = len;
    frag->base.des_segment_count = 1;
    frag->endpoint = endpoint;
    frag->base.des_flags = flags;
    frag->base.order = MCA_BTL_NO_ORDER;
    frag->base.des_cbfunc = NULL;
    frag->base.des_cbdata = NULL;
}

mca_btl_base_descriptor_t *mca_btl_sctp_alloc(struct mca_btl_base_module_t *btl,
                                              struct mca_btl_base_endpoint_t *endpoint,
                                              uint8_t order, size_t size, uint32_t flags)
{
    mca_btl_sctp_frag_t *frag = mca_btl_sctp_frag_for(size);
    (void) btl;
    (void) order;

    if (NULL == frag) {
        return NULL;
    }
    mca_btl_sctp_frag_setup(frag, endpoint, flags, size);
    return &frag->base;
}

int mca_btl_sctp_free(struct mca_btl_base_module_t *btl, mca_btl_base_descriptor_t *des)
{
    (void) btl;
    mca_btl_sctp_frag_return((mca_btl_sctp_frag_t *) des);
    return OPAL_SUCCESS;
}

/* reserve bytes of room for the PML's header, then up to *size bytes of
 * data: referenced in place when contiguous and large, else packed. */
mca_btl_base_descriptor_t *mca_btl_sctp_prepare_src(struct mca_btl_base_module_t *btl,
                                                    struct mca_btl_base_endpoint_t *endpoint,
                                                    struct opal_convertor_t *convertor,
                                                    uint8_t order, size_t reserve, size_t *size,
                                                    uint32_t flags)
{
    mca_btl_sctp_frag_t *frag;
    size_t max_data = tc_ompi_payload(reserve, *size, mca_btl_sctp_module.super.btl_max_send_size);
    void *data = NULL;
    int inplace;
    (void) btl;
    (void) order;

    /* from btl_sctp_inplace_min bytes on, contiguous data stays where it
     * is (the stack copies it anyway); smaller data is packed behind the
     * header, which keeps a small message one piece */
    inplace = mca_btl_sctp_component.inplace_min > 0 &&
        max_data >= (size_t) mca_btl_sctp_component.inplace_min &&
        !opal_convertor_need_buffers(convertor);
    frag = mca_btl_sctp_frag_for(inplace ? reserve : reserve + max_data);
    if (NULL == frag) {
        return NULL;
    }
    /* in place: the convertor hands out a pointer to the user's data */
    if (OPAL_SUCCESS !=
        tc_ompi_pack(convertor, inplace ? NULL : (char *) frag->segments[0].seg_addr.pval + reserve,
                     &max_data, &data)) {
        mca_btl_sctp_frag_return(frag);
        return NULL;
    }
    *size = max_data;
    mca_btl_sctp_frag_setup(frag, endpoint, flags, inplace ? reserve : reserve + max_data);
    if (inplace) {
        frag->segments[1].seg_addr.pval = data;
        frag->segments[1].seg_len = max_data;
        frag->base.des_segment_count = 2;
    }
    return &frag->base;
}

/* Stream mapping: PML fragments above the eager limit (ob1's FRAG data,
 * placed by offset) round-robin over streams 1..n-1; everything else on
 * stream 0, which keeps the order of matching and control messages. */
static uint16_t mca_btl_sctp_choose_stream(mca_btl_sctp_endpoint_t *ep, mca_btl_base_tag_t tag,
                                           size_t len)
{
    if (ep->num_streams > 1 && MCA_BTL_TAG_PML == tag &&
        len > mca_btl_sctp_module.super.btl_eager_limit) {
        uint16_t s = (uint16_t) (1 + ep->next_bulk);
        ep->next_bulk = (uint16_t) ((ep->next_bulk + 1) % (ep->num_streams - 1));
        return s;
    }
    return 0;
}

static int mca_btl_sctp_send_locked(struct mca_btl_base_module_t *btl,
                                    struct mca_btl_base_endpoint_t *endpoint,
                                    struct mca_btl_base_descriptor_t *descriptor,
                                    mca_btl_base_tag_t tag)
{
    mca_btl_sctp_frag_t *frag = (mca_btl_sctp_frag_t *) descriptor;
    size_t len = frag->segments[0].seg_len;
    int rc;

    if (2 == descriptor->des_segment_count) {
        len += frag->segments[1].seg_len;
    }
    /* back-pressure: a receiver that does not read must not make the
     * sender queue without bound; the PML keeps the request and retries */
    if (OPAL_UNLIKELY(mca_btl_sctp_endpoint_queued(endpoint) >=
                      (size_t) mca_btl_sctp_component.max_queued)) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    frag->hdr->hdr_type = MCA_BTL_SCTP_HDR_DATA;
    frag->hdr->hdr_tag = tag;
    frag->hdr->hdr_pad = 0;
    frag->hdr->hdr_size = htonl((uint32_t) len);
    frag->stream = mca_btl_sctp_choose_stream(endpoint, tag, len);
    rc = mca_btl_sctp_endpoint_send(endpoint, frag);
    if (1 == rc) {
        int owned = descriptor->des_flags & MCA_BTL_DES_FLAGS_BTL_OWNERSHIP;
        if ((descriptor->des_flags & MCA_BTL_DES_SEND_ALWAYS_CALLBACK) &&
            NULL != descriptor->des_cbfunc) {
            descriptor->des_cbfunc(btl, endpoint, descriptor, OPAL_SUCCESS);
        }
        if (owned) {
            mca_btl_sctp_frag_return(frag);
        }
        return 1;
    }
    return rc; /* 0: queued, completion from progress; <0: error */
}

/* Immediate send of a short message (ob1 sends its smallest messages
 * this way without allocating a request): header and data are copied
 * into an eager fragment, which is sent like any other. The data is the
 * BTL's from then on, so a fragment the socket could not take yet stays
 * queued and the send still succeeds; but only when nothing was queued
 * before: once the endpoint has a backlog, sendi refuses, the PML sends
 * through a request that completes when the socket took the data, and
 * the sender waits for the receiver instead of growing. */
static int mca_btl_sctp_sendi_locked(struct mca_btl_base_module_t *btl,
                                     struct mca_btl_base_endpoint_t *endpoint,
                                     struct opal_convertor_t *convertor, void *header,
                                     size_t header_size, size_t payload_size, uint8_t order,
                                     uint32_t flags, mca_btl_base_tag_t tag,
                                     mca_btl_base_descriptor_t **descriptor)
{
    size_t len = header_size + payload_size;
    mca_btl_base_descriptor_t *des = NULL;
    int rc;

    if (NULL != descriptor) {
        *descriptor = NULL;
    }
    if (MCA_BTL_SCTP_EP_FAILED == endpoint->state) {
        return OPAL_ERR_UNREACH;
    }
    if (0 != mca_btl_sctp_endpoint_queued(endpoint) || NULL != endpoint->partial) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    if (len <= mca_btl_sctp_module.super.btl_eager_limit) {
        des =
            mca_btl_sctp_alloc(btl, endpoint, order, len, flags | MCA_BTL_DES_FLAGS_BTL_OWNERSHIP);
    }
    if (NULL == des) {
        /* the PML packs into a descriptor and sends it the usual way */
        if (NULL != descriptor) {
            *descriptor = mca_btl_sctp_alloc(btl, endpoint, order, len, flags);
        }
        return OPAL_ERR_RESOURCE_BUSY;
    }
    memcpy(des->des_segments[0].seg_addr.pval, header, header_size);
    if (payload_size > 0) {
        size_t max_data = payload_size;
        if (OPAL_SUCCESS !=
                tc_ompi_pack(convertor, (char *) des->des_segments[0].seg_addr.pval + header_size,
                             &max_data, NULL) ||
            max_data != payload_size) {
            mca_btl_sctp_free(btl, des);
            return OPAL_ERROR;
        }
    }
    rc = mca_btl_sctp_send_locked(btl, endpoint, des, tag);
    if (rc < 0) {
        mca_btl_sctp_free(btl, des);
        return rc;
    }
    return OPAL_SUCCESS; /* 1: sent and returned; 0: queued, completes from progress */
}

void mca_btl_sctp_recv_msg(const btl_sctp_sock_msg_t *msg)
{
    mca_btl_sctp_component_t *c = &mca_btl_sctp_component;
    mca_btl_sctp_endpoint_t *ep = (mca_btl_sctp_endpoint_t *) msg->cookie;
    mca_btl_sctp_hdr_t hdr;

    if (NULL == ep) {
        opal_output_verbose(1, c->output, "btl:sctp: %s from an unknown peer dropped",
                            BTL_SCTP_SOCK_DATA == msg->kind ? "message" : "event");
        return;
    }
    switch (msg->kind) {
    case BTL_SCTP_SOCK_UP:
        ep->assoc = 1;
        opal_output_verbose(20, c->output, "btl:sctp: association to %s up",
                            OPAL_NAME_PRINT(ep->proc->proc_name));
        return;
    case BTL_SCTP_SOCK_CLOSED:
        if (MCA_BTL_SCTP_EP_OK == ep->state) {
            ep->state = MCA_BTL_SCTP_EP_BYE;
        }
        return;
    case BTL_SCTP_SOCK_LOST:
        if (MCA_BTL_SCTP_EP_OK == ep->state && !ep->leaving && !c->finalizing) {
            char stats[640];
            /* what the stack saw before giving up: retransmissions, drops */
            if (0 == btl_sctp_sock_user_stats(stats, sizeof(stats))) {
                opal_output_verbose(1, c->output, "btl:sctp: association lost; user stack: %s",
                                    stats);
            }
            mca_btl_sctp_endpoint_failed(ep,
                                         "the SCTP association was aborted (the peer "
                                         "died or every path to it failed)");
        }
        return;
    default:
        break;
    }
    if (msg->len < MCA_BTL_SCTP_HDR_SIZE) {
        opal_output_verbose(1, c->output, "btl:sctp: runt message (%zu bytes) dropped", msg->len);
        return;
    }
    ep->assoc = 1;
    memcpy(&hdr, msg->data, sizeof(hdr));
    if (MCA_BTL_SCTP_HDR_BYE == hdr.hdr_type) {
        if (MCA_BTL_SCTP_EP_OK == ep->state) {
            ep->state = MCA_BTL_SCTP_EP_BYE;
        }
        return;
    }
    if (MCA_BTL_SCTP_HDR_DATA != hdr.hdr_type ||
        ntohl(hdr.hdr_size) != msg->len - MCA_BTL_SCTP_HDR_SIZE) {
        opal_output_verbose(1, c->output,
                            "btl:sctp: malformed message (type %u, size %u of %zu) dropped",
                            hdr.hdr_type, ntohl(hdr.hdr_size), msg->len);
        return;
    }
    {
        mca_btl_active_message_callback_t *reg = mca_btl_base_active_message_trigger + hdr.hdr_tag;
        mca_btl_base_segment_t seg;

        if (NULL == reg->cbfunc) {
            opal_output_verbose(1, c->output, "btl:sctp: message for unused tag %u dropped",
                                hdr.hdr_tag);
            return;
        }
        if (OPAL_UNLIKELY(tc_ompi_proc_failed(ep->proc))) {
            /* data of a peer ULFM already failed (the stack may still
             * hold what it sent before it died): its receives are gone */
            opal_output_verbose(5, c->output, "btl:sctp: message from failed %s dropped",
                                OPAL_NAME_PRINT(ep->proc->proc_name));
            return;
        }
        seg.seg_addr.pval = (char *) msg->data + MCA_BTL_SCTP_HDR_SIZE;
        seg.seg_len = msg->len - MCA_BTL_SCTP_HDR_SIZE;
        tc_ompi_deliver(reg, &mca_btl_sctp_module.super, ep, hdr.hdr_tag, &seg, 1);
    }
}

/* Tell every peer with an association that we are leaving (also those we
 * only received from: our close aborts their association as well), so
 * that its end is not taken for a failure, then let the queues drain
 * (the socket's close waits until the peers have acknowledged it all).
 * From here on, losing one of these peers is no error either: it may
 * have left before us. */
static void mca_btl_sctp_say_goodbye(mca_btl_sctp_endpoint_t **eps, size_t n)
{
    mca_btl_sctp_component_t *c = &mca_btl_sctp_component;

    for (size_t i = 0; i < n; ++i) {
        mca_btl_sctp_endpoint_t *ep = eps[i];
        mca_btl_sctp_frag_t *frag;
        if (NULL == ep || MCA_BTL_SCTP_EP_FAILED == ep->state) {
            continue;
        }
        ep->leaving = 1;
        if (!ep->assoc) {
            continue; /* never associated: nothing to end */
        }
        frag = mca_btl_sctp_frag_alloc(&c->eager_frags);
        if (NULL == frag) {
            continue;
        }
        frag->hdr->hdr_type = MCA_BTL_SCTP_HDR_BYE;
        frag->hdr->hdr_tag = 0;
        frag->hdr->hdr_pad = 0;
        frag->hdr->hdr_size = 0;
        frag->segments[0].seg_len = 0;
        frag->base.des_segment_count = 1;
        frag->stream = 0;
        frag->base.des_flags = MCA_BTL_DES_FLAGS_BTL_OWNERSHIP;
        frag->base.des_cbfunc = NULL;
        if (1 == mca_btl_sctp_endpoint_send(ep, frag)) {
            mca_btl_sctp_frag_return(frag);
        }
        ep->used = 0;
    }
    for (int i = 0; i < 100000 && !opal_list_is_empty(&c->pending_eps); ++i) {
        (void) btl_sctp_sock_progress(c->sock);
        (void) mca_btl_sctp_endpoint_flush_all();
    }
}

static int mca_btl_sctp_finalize_locked(struct mca_btl_base_module_t *btl)
{
    mca_btl_sctp_component_t *c = &mca_btl_sctp_component;
    opal_list_item_t *item;
    (void) btl;

    if (NULL == c->sock) {
        return OPAL_SUCCESS;
    }
    if (c->own_progress) {
        (void) opal_progress_unregister(mca_btl_sctp_component_progress);
        c->own_progress = 0;
    }
    while (NULL != (item = opal_list_get_first(&c->endpoints)) &&
           item != opal_list_get_end(&c->endpoints)) {
        mca_btl_sctp_endpoint_t *ep = (mca_btl_sctp_endpoint_t *) item;
        mca_btl_sctp_say_goodbye(&ep, 1);
        mca_btl_sctp_endpoint_destroy(ep);
    }
    c->finalizing = 1;
    {
        char stats[640];
        if (0 == btl_sctp_sock_user_stats(stats, sizeof(stats))) {
            opal_output_verbose(10, c->output, "btl:sctp: user stack: %s", stats);
        }
    }
    btl_sctp_sock_close(c->sock);
    c->sock = NULL;
    return OPAL_SUCCESS;
}

int mca_btl_sctp_register_error(struct mca_btl_base_module_t *btl,
                                mca_btl_base_module_error_cb_fn_t cbfunc)
{
    (void) btl;
    mca_btl_sctp_module.error_cb = cbfunc;
    return OPAL_SUCCESS;
}

void mca_btl_sctp_dump(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                       int verbose)
{
    mca_btl_sctp_component_t *c = &mca_btl_sctp_component;
    (void) btl;
    (void) verbose;
    if (NULL != endpoint && NULL != endpoint->peer) {
        int alive = 0;
        int n = btl_sctp_sock_paths(c->sock, endpoint->peer, &alive);
        opal_output(c->output,
                    "btl:sctp: endpoint %s: state %d, %d path(s), %d alive, "
                    "active %d, ctrl queue %zu, bulk queue %zu",
                    OPAL_NAME_PRINT(endpoint->proc->proc_name), endpoint->state, n, alive,
                    btl_sctp_sock_active_path(c->sock, endpoint->peer),
                    opal_list_get_size(&endpoint->pending_ctrl),
                    opal_list_get_size(&endpoint->pending_bulk));
    }
}

/* The entry points Open MPI calls from any thread: under the component's
 * lock when threads are enabled (see btl_sctp.h). */

int mca_btl_sctp_add_procs(struct mca_btl_base_module_t *btl, size_t nprocs,
                           struct opal_proc_t **procs, struct mca_btl_base_endpoint_t **peers,
                           opal_bitmap_t *reachable)
{
    int rc;

    mca_btl_sctp_lock();
    rc = mca_btl_sctp_add_procs_locked(btl, nprocs, procs, peers, reachable);
    mca_btl_sctp_unlock();
    mca_btl_sctp_lost_watch_start();
    return rc;
}

int mca_btl_sctp_del_procs(struct mca_btl_base_module_t *btl, size_t nprocs,
                           struct opal_proc_t **procs, struct mca_btl_base_endpoint_t **peers)
{
    int rc;

    mca_btl_sctp_lock();
    rc = mca_btl_sctp_del_procs_locked(btl, nprocs, procs, peers);
    mca_btl_sctp_unlock();
    return rc;
}

int mca_btl_sctp_send(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                      struct mca_btl_base_descriptor_t *descriptor, mca_btl_base_tag_t tag)
{
    int rc;

    mca_btl_sctp_lock();
    rc = mca_btl_sctp_send_locked(btl, endpoint, descriptor, tag);
    mca_btl_sctp_unlock();
    return rc;
}

int mca_btl_sctp_sendi(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                       struct opal_convertor_t *convertor, void *header, size_t header_size,
                       size_t payload_size, uint8_t order, uint32_t flags, mca_btl_base_tag_t tag,
                       mca_btl_base_descriptor_t **descriptor)
{
    int rc;

    mca_btl_sctp_lock();
    rc = mca_btl_sctp_sendi_locked(btl, endpoint, convertor, header, header_size, payload_size,
                                   order, flags, tag, descriptor);
    mca_btl_sctp_unlock();
    return rc;
}

int mca_btl_sctp_finalize(struct mca_btl_base_module_t *btl)
{
    int rc;

    /* the watcher and the keeper first: they must not touch what goes away */
    mca_btl_sctp_lost_watch_stop();
    mca_btl_sctp_keeper_stop(&mca_btl_sctp_component);
    mca_btl_sctp_lock();
    rc = mca_btl_sctp_finalize_locked(btl);
    mca_btl_sctp_unlock();
    return rc;
}
