/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/*
 * vipl.h: the VI device API that btl_via's protocol code calls.
 *
 * Shaped after the Virtual Interface Architecture's user library (VIPL):
 * VipOpenNic, VipQueryNic, VipCreatePtag, VipRegisterMem, VipCreateCQ,
 * VipCreateVi, VipConnectPeerRequest/VipConnectPeerDone, VipPostSend,
 * VipPostRecv, VipSendDone, VipRecvDone, VipCQDone, VipQueryVi,
 * VipDisconnect.  docs/btl_via.md names the VIPL call behind each
 * function.  A provider fills one vipl_ops_t; the inline wrappers below
 * dispatch through it, so the BTL never calls a provider's internals.
 *
 * Providers: "emu" (vipl_emu.c, a software VI NIC between processes of
 * one host: queues in shared segments, RDMA by CMA after a protection
 * check), "verbs" (vipl_verbs.c, libibverbs RC queue pairs) and "ofi"
 * (vipl_ofi.c, connected libfabric endpoints, FI_EP_MSG).  vipl.c holds
 * the table of the providers built in.
 *
 * Depends on nothing from Open MPI: the unit tests build it alone.
 */

#ifndef VIPL_H
#define VIPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* VIP_RETURN */
typedef enum {
    VIPL_SUCCESS = 0,
    VIPL_NOT_DONE = 1, /* nothing completed (yet) */
    VIPL_INVALID_PARAMETER = 2,
    VIPL_ERROR_RESOURCE = 3,
    VIPL_INVALID_RELIABILITY_LEVEL = 4,
    VIPL_INVALID_PTAG = 5,
    VIPL_INVALID_RDMAREAD = 6, /* RDMA read not supported/enabled */
    VIPL_DESCRIPTOR_ERROR = 7,
    VIPL_INVALID_STATE = 8, /* VI not connected, or in error */
    VIPL_NOT_REACHABLE = 9, /* peer NIC not there (yet) */
    VIPL_NO_DEVICE = 10,    /* provider has no device on this host */
    VIPL_ERROR_NOT_SUPPORTED = 11
} vipl_return_t;

/* descriptor status bits (VIP_STATUS_*), set by the provider */
#define VIPL_STATUS_DONE 0x00000001u
#define VIPL_STATUS_FORMAT_ERROR 0x00000002u      /* bad descriptor */
#define VIPL_STATUS_PROTECTION_ERROR 0x00000004u  /* local handle/ptag/range */
#define VIPL_STATUS_LENGTH_ERROR 0x00000008u      /* receive buffer too small */
#define VIPL_STATUS_FLUSHED_ERROR 0x00000010u     /* VI went to error */
#define VIPL_STATUS_TRANSPORT_ERROR 0x00000020u   /* peer gone */
#define VIPL_STATUS_RDMA_PROT_ERROR 0x00000040u   /* remote handle/ptag/range/enable */
#define VIPL_STATUS_REMOTE_DESC_ERROR 0x00000080u /* no receive posted at the peer */
#define VIPL_STATUS_ERROR_MASK 0x000000feu
#define VIPL_STATUS_IMMEDIATE 0x00010000u /* immediate data valid */

/* control segment: operation and flags (VIP_CONTROL_*) */
#define VIPL_CONTROL_OP_SEND 0x0u
#define VIPL_CONTROL_OP_RDMAWRITE 0x1u
#define VIPL_CONTROL_OP_RDMAREAD 0x2u
#define VIPL_CONTROL_OP_MASK 0x3u
#define VIPL_CONTROL_IMMEDIATE 0x4u /* carry imm_data (send, RDMA write) */
/* send of at most attrs.max_inline bytes, copied by the NIC at post time
 * (verbs' IBV_SEND_INLINE; no VIPL counterpart): the data segments need
 * no registration, and the memory may be reused once the post returned */
#define VIPL_CONTROL_INLINE 0x8u

#define VIPL_MAX_DATA_SEGS 4
#define VIPL_ADDR_BYTES 48

typedef uint64_t vipl_mem_handle_t; /* VIP_MEM_HANDLE (0: none) */

typedef struct vipl_nic vipl_nic_t;
typedef struct vipl_vi vipl_vi_t;
typedef struct vipl_cq vipl_cq_t;
typedef struct vipl_ptag vipl_ptag_t;
typedef struct vipl_ops vipl_ops_t;

/* Processes of other jobs (no VIPL counterpart). A VI address whose
 * discriminator is VIPL_DISC_ANY names the peer's NIC only: the VI the
 * peer makes for us is unknown until the peer names it itself. Such a
 * connection carries the full name of the process that asks (an opaque
 * 64-bit word the NIC was given), and the NIC that receives it asks the
 * owner's resolver which discriminator that process has there (0, or
 * nonzero: refused). */
#define VIPL_DISC_ANY 0xffffffffu
typedef int (*vipl_resolve_fn_t)(void *ctx, uint64_t name, uint32_t *discriminator);

/* where a VI can be reached: what travels in the modex (VIP_NET_ADDRESS
 * plus the connection discriminator, in one opaque blob) */
typedef struct vipl_vi_address {
    uint8_t bytes[VIPL_ADDR_BYTES];
} vipl_vi_address_t;

/* data segment (VIP_DATA_SEGMENT) */
typedef struct vipl_data_seg {
    void *addr;
    vipl_mem_handle_t handle;
    uint32_t length;
} vipl_data_seg_t;

/* a descriptor (VIP_DESCRIPTOR): control segment, address segment for
 * RDMA, data segments.  Lives in the caller's memory until completed. */
typedef struct vipl_desc {
    /* control segment */
    uint32_t control;   /* VIPL_CONTROL_* */
    uint32_t seg_count; /* data segments used */
    uint32_t length;    /* completion: bytes transferred */
    uint32_t status;    /* completion: VIPL_STATUS_* */
    uint32_t imm_data;  /* immediate data (sent / received) */
    uint32_t prov_;     /* provider private */
    void *context;      /* the caller's cookie */
    /* address segment (RDMA write/read) */
    uint64_t remote_addr;
    vipl_mem_handle_t remote_handle;
    vipl_data_seg_t ds[VIPL_MAX_DATA_SEGS];
    /* provider private */
    struct vipl_desc *next_;
} vipl_desc_t;

/* A provider's FIFO of descriptors through next_ (posted receives,
 * completions waiting for the caller). */
static inline void vipl_desc_push(vipl_desc_t **head, vipl_desc_t **tail, vipl_desc_t *d)
{
    d->next_ = NULL;
    if (NULL == *tail) {
        *head = d;
    } else {
        (*tail)->next_ = d;
    }
    *tail = d;
}

static inline vipl_desc_t *vipl_desc_pop(vipl_desc_t **head, vipl_desc_t **tail)
{
    vipl_desc_t *d = *head;

    if (NULL != d) {
        *head = d->next_;
        if (NULL == *head) {
            *tail = NULL;
        }
    }
    return d;
}

enum { VIPL_RELIABLE_DELIVERY = 1 };

/* VIP_NIC_ATTRIBUTES, reduced */
typedef struct vipl_nic_attrs {
    const char *provider;
    uint32_t max_transfer_size; /* bytes per descriptor */
    uint32_t max_descriptors;   /* per work queue */
    uint32_t max_segs;
    uint32_t max_inline; /* bytes a VIPL_CONTROL_INLINE send may carry (0: none) */
    bool rdma_read;      /* VipPostSend with RDMA read works */
    /* a send's data segment may be unregistered memory (handle 0): the
     * NIC reads local memory without a registration (libfabric without
     * FI_MR_LOCAL); VIA has no such thing */
    bool local_unregistered;
    bool local_only; /* reaches this host's processes only */
    /* VipConnectWait: the NIC reports connection requests for VIs that
     * do not exist yet (vipl_connect_wait), so VIs can be created on
     * first use; the address of a VI is then known before it exists
     * (vipl_nic_vi_address) */
    bool connect_wait;
} vipl_nic_attrs_t;

/* VIP_MEM_ATTRIBUTES */
typedef struct vipl_mem_attrs {
    vipl_ptag_t *ptag;
    bool enable_rdma_write;
    bool enable_rdma_read;
} vipl_mem_attrs_t;

/* VIP_VI_ATTRIBUTES */
typedef struct vipl_vi_attrs {
    int reliability; /* VIPL_RELIABLE_DELIVERY */
    vipl_ptag_t *ptag;
    uint32_t max_transfer_size;
    uint32_t send_depth; /* descriptors per work queue */
    uint32_t recv_depth;
    bool enable_rdma_write;
    bool enable_rdma_read;
    /* the VI's connection discriminator (VIPL's discriminator of the
     * local VIP_NET_ADDRESS): with has_discriminator, the VI is the one
     * vipl_nic_vi_address(nic, discriminator) names; else the provider
     * picks one */
    bool has_discriminator;
    uint32_t discriminator;
} vipl_vi_attrs_t;

typedef enum {
    VIPL_STATE_IDLE = 0,
    VIPL_STATE_PENDING_CONNECT = 1,
    VIPL_STATE_CONNECTED = 2,
    VIPL_STATE_ERROR = 3
} vipl_vi_state_t;

/* why a VI went to error (VIPL's asynchronous error codes, reduced) */
typedef enum {
    VIPL_VIERR_NONE = 0,
    VIPL_VIERR_PEER_GONE = 1,       /* the peer process/NIC went away */
    VIPL_VIERR_RECV_NOT_POSTED = 2, /* a send found no receive descriptor */
    VIPL_VIERR_PROTOCOL = 3,        /* corrupt shared queue */
    VIPL_VIERR_DISCONNECTED = 4     /* the peer disconnected */
} vipl_vi_error_t;

/* parameters of VipOpenNic; providers ignore what they do not use */
typedef struct vipl_open_params {
    const char *device; /* verbs: device name (NULL: first); ofi: domain (tcp: interface) */
    const char *fabric_provider; /* ofi: libfabric provider (NULL: "tcp") */
    const char *segment_dir;     /* emu: where the NIC segment lives */
    const char *job_key;         /* emu: names this job's segments */
    uint32_t nic_id;             /* emu: this NIC's number in the job */
    uint32_t max_vis;            /* emu: VIs this NIC will create */
    uint32_t max_recv_depth;     /* emu: largest receive queue */
    uint32_t max_regs;           /* emu: registration table entries */
    size_t nic_memory;           /* emu: bytes of NIC memory (vipl_mem_alloc) */
    uint32_t expected_peers;     /* emu: NICs that attach; then the name goes */
    uint32_t max_transfer_size;  /* 0: the provider's default */
    /* emu: as strict as verbs hardware: no inline sends (max_inline 0),
     * the receive completion of an RDMA write with immediate carries the
     * write's length, a VI is connected as soon as it asked (no wait for
     * the peer), and a send that reaches a peer VI not connected to it is
     * dropped (the sender's descriptor fails with a transport error, as
     * verbs' RETRY_EXC_ERR) */
    bool strict;
} vipl_open_params_t;

struct vipl_ops {
    const char *name;
    vipl_return_t (*open_nic)(const vipl_open_params_t *params, vipl_nic_t **nic);
    void (*close_nic)(vipl_nic_t *nic);
    vipl_return_t (*create_ptag)(vipl_nic_t *nic, vipl_ptag_t **ptag);
    void (*destroy_ptag)(vipl_ptag_t *ptag);
    vipl_return_t (*register_mem)(vipl_nic_t *nic, void *addr, size_t len,
                                  const vipl_mem_attrs_t *attrs, vipl_mem_handle_t *handle);
    vipl_return_t (*deregister_mem)(vipl_nic_t *nic, void *addr, vipl_mem_handle_t handle);
    void *(*mem_alloc)(vipl_nic_t *nic, size_t len);
    void (*mem_free)(vipl_nic_t *nic, void *ptr);
    vipl_return_t (*create_cq)(vipl_nic_t *nic, uint32_t entries, vipl_cq_t **cq);
    void (*destroy_cq)(vipl_cq_t *cq);
    vipl_return_t (*create_vi)(vipl_nic_t *nic, const vipl_vi_attrs_t *attrs, vipl_cq_t *send_cq,
                               vipl_cq_t *recv_cq, vipl_vi_t **vi);
    void (*destroy_vi)(vipl_vi_t *vi);
    void (*vi_address)(vipl_vi_t *vi, vipl_vi_address_t *addr);
    vipl_return_t (*connect_peer_request)(vipl_vi_t *vi, const vipl_vi_address_t *remote);
    vipl_return_t (*connect_peer_done)(vipl_vi_t *vi);
    vipl_return_t (*disconnect)(vipl_vi_t *vi);
    vipl_return_t (*post_send)(vipl_vi_t *vi, vipl_desc_t *desc);
    vipl_return_t (*post_recv)(vipl_vi_t *vi, vipl_desc_t *desc);
    vipl_return_t (*send_done)(vipl_vi_t *vi, vipl_desc_t **desc);
    vipl_return_t (*recv_done)(vipl_vi_t *vi, vipl_desc_t **desc);
    vipl_return_t (*cq_done)(vipl_cq_t *cq, vipl_vi_t **vi, bool *is_recv);
    vipl_return_t (*query_vi)(vipl_vi_t *vi, vipl_vi_state_t *state, vipl_vi_error_t *error);
    /* NULL unless attrs.connect_wait: */
    void (*nic_vi_address)(vipl_nic_t *nic, uint32_t discriminator, vipl_vi_address_t *addr);
    vipl_return_t (*connect_wait)(vipl_nic_t *nic, uint32_t *discriminator);
    /* NULL when there is nothing to prepare: */
    vipl_return_t (*attach_peer)(vipl_nic_t *nic, const vipl_vi_address_t *remote);
    /* NULL without inline sends (verbs): */
    vipl_return_t (*post_inline)(vipl_vi_t *vi, const void *buf, uint32_t len, uint32_t imm);
    /* NULL: vipl_cq_recv_done calls cq_done, then recv_done */
    vipl_return_t (*cq_recv_done)(vipl_cq_t *cq, vipl_vi_t **vi, vipl_desc_t **desc);
    /* NULL: vipl_post_inline2 gathers the two pieces for post_inline */
    vipl_return_t (*post_inline2)(vipl_vi_t *vi, const void *a, uint32_t alen, const void *b,
                                  uint32_t blen, uint32_t imm);
    /* NULL unless the provider reaches processes of other jobs: the
     * NIC's own name and resolver; a peer NIC's address with
     * VIPL_DISC_ANY from any VI address of that NIC (false: malformed) */
    void (*set_names)(vipl_nic_t *nic, uint64_t my_name, vipl_resolve_fn_t resolve, void *ctx);
    bool (*any_vi_address)(const vipl_vi_address_t *of_nic, vipl_vi_address_t *out);
};

/* the public head of every provider object */
struct vipl_nic {
    const vipl_ops_t *ops;
    vipl_nic_attrs_t attrs;
};
struct vipl_vi {
    vipl_nic_t *nic;
    void *user; /* the caller's cookie (the endpoint) */
};
struct vipl_cq {
    vipl_nic_t *nic;
};
struct vipl_ptag {
    vipl_nic_t *nic;
};

/* the providers built into this library; NULL when name is unknown or
 * not built ("verbs" without libibverbs, "ofi" without libfabric) */
const vipl_ops_t *vipl_provider(const char *name);

/* shared by the providers whose NIC has no memory of its own (verbs,
 * ofi): page-aligned host memory for vipl_mem_alloc / vipl_mem_free */
void *vipl_host_mem_alloc(vipl_nic_t *nic, size_t len);
void vipl_host_mem_free(vipl_nic_t *nic, void *ptr);

/* VipSendDone / VipRecvDone of a provider that queues completions per VI
 * (verbs, ofi): the head of the done queue, after one poll of the
 * provider (poll(ctx)) when the queue is empty; the caller holds what
 * guards the queue */
static inline vipl_return_t vipl_done_take(vipl_desc_t **head, vipl_desc_t **tail,
                                           void (*poll)(void *ctx), void *ctx, vipl_desc_t **dp)
{
    if (NULL == *head) {
        poll(ctx);
    }
    *dp = vipl_desc_pop(head, tail);
    return NULL == *dp ? VIPL_NOT_DONE : VIPL_SUCCESS;
}
const char *vipl_strerror(vipl_return_t rc);
/* text of the first error bit of a descriptor status */
const char *vipl_status_string(uint32_t status);

/* ---- the VIPL calls, dispatched through the NIC's ops table ---------- */

static inline vipl_return_t vipl_open_nic(const vipl_ops_t *ops, const vipl_open_params_t *params,
                                          vipl_nic_t **nic)
{
    return ops->open_nic(params, nic);
}
static inline void vipl_close_nic(vipl_nic_t *nic)
{
    nic->ops->close_nic(nic);
}
static inline const vipl_nic_attrs_t *vipl_query_nic(const vipl_nic_t *nic)
{
    return &nic->attrs;
}
static inline vipl_return_t vipl_create_ptag(vipl_nic_t *nic, vipl_ptag_t **ptag)
{
    return nic->ops->create_ptag(nic, ptag);
}
static inline void vipl_destroy_ptag(vipl_ptag_t *ptag)
{
    ptag->nic->ops->destroy_ptag(ptag);
}
static inline vipl_return_t vipl_register_mem(vipl_nic_t *nic, void *addr, size_t len,
                                              const vipl_mem_attrs_t *attrs, vipl_mem_handle_t *h)
{
    return nic->ops->register_mem(nic, addr, len, attrs, h);
}
static inline vipl_return_t vipl_deregister_mem(vipl_nic_t *nic, void *addr, vipl_mem_handle_t h)
{
    return nic->ops->deregister_mem(nic, addr, h);
}
static inline void *vipl_mem_alloc(vipl_nic_t *nic, size_t len)
{
    return nic->ops->mem_alloc(nic, len);
}
static inline void vipl_mem_free(vipl_nic_t *nic, void *ptr)
{
    nic->ops->mem_free(nic, ptr);
}
static inline vipl_return_t vipl_create_cq(vipl_nic_t *nic, uint32_t entries, vipl_cq_t **cq)
{
    return nic->ops->create_cq(nic, entries, cq);
}
static inline void vipl_destroy_cq(vipl_cq_t *cq)
{
    cq->nic->ops->destroy_cq(cq);
}
static inline vipl_return_t vipl_create_vi(vipl_nic_t *nic, const vipl_vi_attrs_t *attrs,
                                           vipl_cq_t *send_cq, vipl_cq_t *recv_cq, vipl_vi_t **vi)
{
    return nic->ops->create_vi(nic, attrs, send_cq, recv_cq, vi);
}
static inline void vipl_destroy_vi(vipl_vi_t *vi)
{
    vi->nic->ops->destroy_vi(vi);
}
static inline void vipl_vi_address(vipl_vi_t *vi, vipl_vi_address_t *addr)
{
    vi->nic->ops->vi_address(vi, addr);
}
static inline vipl_return_t vipl_connect_peer_request(vipl_vi_t *vi,
                                                      const vipl_vi_address_t *remote)
{
    return vi->nic->ops->connect_peer_request(vi, remote);
}
static inline vipl_return_t vipl_connect_peer_done(vipl_vi_t *vi)
{
    return vi->nic->ops->connect_peer_done(vi);
}
static inline vipl_return_t vipl_disconnect(vipl_vi_t *vi)
{
    return vi->nic->ops->disconnect(vi);
}
static inline vipl_return_t vipl_post_send(vipl_vi_t *vi, vipl_desc_t *desc)
{
    return vi->nic->ops->post_send(vi, desc);
}
static inline vipl_return_t vipl_post_recv(vipl_vi_t *vi, vipl_desc_t *desc)
{
    return vi->nic->ops->post_recv(vi, desc);
}
static inline vipl_return_t vipl_send_done(vipl_vi_t *vi, vipl_desc_t **desc)
{
    return vi->nic->ops->send_done(vi, desc);
}
static inline vipl_return_t vipl_recv_done(vipl_vi_t *vi, vipl_desc_t **desc)
{
    return vi->nic->ops->recv_done(vi, desc);
}
static inline vipl_return_t vipl_cq_done(vipl_cq_t *cq, vipl_vi_t **vi, bool *is_recv)
{
    return cq->nic->ops->cq_done(cq, vi, is_recv);
}
static inline vipl_return_t vipl_query_vi(vipl_vi_t *vi, vipl_vi_state_t *state,
                                          vipl_vi_error_t *error)
{
    return vi->nic->ops->query_vi(vi, state, error);
}

/* the address of the VI with this discriminator on this NIC, whether it
 * exists yet or not (attrs.connect_wait providers) */
static inline void vipl_nic_vi_address(vipl_nic_t *nic, uint32_t discriminator,
                                       vipl_vi_address_t *addr)
{
    nic->ops->nic_vi_address(nic, discriminator, addr);
}
/* VipConnectWait without blocking: VIPL_SUCCESS and the discriminator of
 * a VI not created yet that a peer asked to connect to (the caller
 * creates it with that discriminator and calls VipConnectPeerRequest,
 * which accepts the request); VIPL_NOT_DONE when no request waits;
 * VIPL_ERROR_NOT_SUPPORTED without attrs.connect_wait */
static inline vipl_return_t vipl_connect_wait(vipl_nic_t *nic, uint32_t *discriminator)
{
    if (NULL == nic->ops->connect_wait) {
        return VIPL_ERROR_NOT_SUPPORTED;
    }
    return nic->ops->connect_wait(nic, discriminator);
}
/* A send of len <= attrs.max_inline bytes from buf with immediate data
 * imm, without a descriptor (no VIPL counterpart: verbs' unsignaled
 * inline send, libfabric's fi_injectdata): the NIC has copied the bytes
 * when the call returns, the message takes the peer's next posted
 * receive in order with the VI's other sends, and no completion is ever
 * reported for it.  VIPL_ERROR_RESOURCE: the provider's queue is full
 * for now; VIPL_INVALID_STATE: the VI is not connected (or broke on it);
 * VIPL_INVALID_PARAMETER: too long; VIPL_ERROR_NOT_SUPPORTED: the
 * provider has no inline sends */
static inline vipl_return_t vipl_post_inline(vipl_vi_t *vi, const void *buf, uint32_t len,
                                             uint32_t imm)
{
    if (NULL == vi->nic->ops->post_inline) {
        return VIPL_ERROR_NOT_SUPPORTED;
    }
    return vi->nic->ops->post_inline(vi, buf, len, imm);
}

/* vipl_post_inline of a message in two pieces (an upper layer's header
 * and its payload), gathered by the NIC as it copies them (emu: straight
 * into the peer's receive slot); a provider without the gather gets
 * them gathered here, up to VIPL_INLINE2_STACK bytes
 * (VIPL_INVALID_PARAMETER beyond) */
#define VIPL_INLINE2_STACK 256
static inline vipl_return_t vipl_post_inline2(vipl_vi_t *vi, const void *a, uint32_t alen,
                                              const void *b, uint32_t blen, uint32_t imm)
{
    uint64_t buf[VIPL_INLINE2_STACK / sizeof(uint64_t)];

    if (NULL != vi->nic->ops->post_inline2) {
        return vi->nic->ops->post_inline2(vi, a, alen, b, blen, imm);
    }
    if (alen > VIPL_INLINE2_STACK || blen > VIPL_INLINE2_STACK - alen) {
        return VIPL_INVALID_PARAMETER;
    }
    if (0 != alen) {
        memcpy(buf, a, alen);
    }
    if (0 != blen) {
        memcpy((unsigned char *) buf + alen, b, blen);
    }
    return vipl_post_inline(vi, buf, alen + blen, imm);
}

/* The next receive completion on a CQ: VipCQDone, then VipRecvDone on
 * the VI it names, in one call (emu: one look at the slot); a completion
 * of a send queue on the CQ is passed over. VIPL_NOT_DONE: none. */
typedef vipl_return_t (*vipl_cq_recv_fn_t)(vipl_cq_t *cq, vipl_vi_t **vi, vipl_desc_t **desc);

/* what a provider without the op gets: cq_done, then recv_done */
static inline vipl_return_t vipl_cq_recv_done_generic(vipl_cq_t *cq, vipl_vi_t **vi,
                                                      vipl_desc_t **desc)
{
    bool is_recv;

    while (VIPL_SUCCESS == cq->nic->ops->cq_done(cq, vi, &is_recv)) {
        if (VIPL_SUCCESS == (*vi)->nic->ops->recv_done(*vi, desc)) {
            return VIPL_SUCCESS;
        }
    }
    return VIPL_NOT_DONE;
}

/* the function behind vipl_cq_recv_done for this CQ: a poll loop may keep
 * it and call it directly, without reading the NIC's ops table on every
 * empty poll */
static inline vipl_cq_recv_fn_t vipl_cq_recv_fn(vipl_cq_t *cq)
{
    return NULL != cq->nic->ops->cq_recv_done ? cq->nic->ops->cq_recv_done
                                              : vipl_cq_recv_done_generic;
}

static inline vipl_return_t vipl_cq_recv_done(vipl_cq_t *cq, vipl_vi_t **vi, vipl_desc_t **desc)
{
    return vipl_cq_recv_fn(cq)(cq, vi, desc);
}

/* prepare for connections with the peer NIC of this address (emu: map
 * its segment now, so that its name can go); optional */
static inline vipl_return_t vipl_attach_peer(vipl_nic_t *nic, const vipl_vi_address_t *remote)
{
    if (NULL == nic->ops->attach_peer) {
        return VIPL_SUCCESS;
    }
    return nic->ops->attach_peer(nic, remote);
}

#ifdef __cplusplus
}
#endif

#endif /* VIPL_H */
