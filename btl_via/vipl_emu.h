/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/*
 * vipl_emu.h: the emu provider's shared layout (NIC segment header,
 * registration table, VI records and their receive slots: what peers
 * map) and its private objects, shared by vipl_emu.c (NIC, memory, CQs,
 * VIs, connections) and vipl_emu_xfer.c (send and receive queues, RDMA,
 * completions).  Not part of the device API: the BTL sees vipl.h only.
 */

#ifndef VIPL_EMU_H
#define VIPL_EMU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <sys/types.h>

#include "tc_alive.h"
#include "tc_atomic.h"
#include "tc_shm.h"
#include "vipl.h"

#define VIPL_EMU_MAGIC 0x45504956u /* "VIPE" */
#define VIPL_EMU_VERSION 1u
#define VIPL_EMU_ADDR_MAGIC 0x56454d55u /* "UMEV" */
#define VIPL_EMU_REG_WRITE 0x1u
#define VIPL_EMU_REG_READ 0x2u
#define VIPL_EMU_NIC_OPEN 1u
#define VIPL_EMU_NIC_CLOSED 2u
#define VIPL_EMU_MAX_IOV 256
#define VIPL_EMU_CHECK_POLLS 65536u /* empty polls between liveness checks */
#define VIPL_EMU_MAX_FREE 64
#define VIPL_EMU_INLINE_MAX 32             /* bytes carried in the receive slot */
#define VIPL_EMU_STATUS_INLINE 0x80000000u /* slot status: data in inline_data */
#define VIPL_EMU_STATUS_RDMA 0x40000000u   /* slot status: an RDMA write's immediate */

/* ---- shared layout -------------------------------------------------- */

typedef struct vipl_emu_nic_hdr {
    uint32_t magic;
    uint32_t version;
    uint32_t nic_id;
    int32_t pid;
    uint32_t max_vis;
    uint32_t max_recv_depth;
    uint32_t max_regs;
    uint32_t state; /* VIPL_EMU_NIC_* */
    uint64_t reg_off;
    uint64_t vi_off;
    uint64_t vi_stride;
    uint64_t mem_off;
    uint64_t mem_size;
    uint32_t attached; /* peers that mapped this segment */
    uint32_t expected; /* ... and how many will */
    /* connection requests rung by peers (vipl_emu_connect_wait looks
     * at the VI records only when this moved) */
    uint32_t conn_reqs;
    uint8_t pad_[44];
} vipl_emu_nic_hdr_t;
_Static_assert(sizeof(vipl_emu_nic_hdr_t) == 128, "emu NIC header is two cache lines");

typedef struct vipl_emu_reg {
    uint32_t gen; /* odd: free or changing; even: valid */
    uint32_t ptag;
    uint32_t flags; /* VIPL_EMU_REG_* */
    uint32_t pad_;
    uint64_t base;
    uint64_t len;
    int64_t seg_off; /* base's offset in the segment, -1: outside */
} vipl_emu_reg_t;
_Static_assert(sizeof(vipl_emu_reg_t) == 40, "emu registration entry layout");
_Static_assert(offsetof(vipl_emu_reg_t, base) == 16 && offsetof(vipl_emu_reg_t, seg_off) == 32,
               "registration entry field offsets");

typedef struct vipl_emu_rslot {
    uint32_t status; /* 0 until completed (VIPL_STATUS_*) */
    uint32_t buf_len;
    uint64_t addr;
    uint64_t handle;
    uint32_t done_len;
    uint32_t imm;
    uint8_t inline_data[32]; /* small messages: see vipl_emu_deliver */
} vipl_emu_rslot_t;
_Static_assert(sizeof(vipl_emu_rslot_t) == 64, "one receive slot per cache line");
_Static_assert(offsetof(vipl_emu_rslot_t, addr) == 8 && offsetof(vipl_emu_rslot_t, handle) == 16 &&
                   offsetof(vipl_emu_rslot_t, done_len) == 24 &&
                   offsetof(vipl_emu_rslot_t, imm) == 28 &&
                   offsetof(vipl_emu_rslot_t, inline_data) == 32,
               "receive slot field offsets");

typedef struct vipl_emu_vi_rec {
    /* line 0: written by the owner */
    uint32_t state; /* vipl_vi_state_t */
    uint32_t error; /* vipl_vi_error_t */
    uint32_t ptag;
    uint32_t recv_depth;
    uint32_t remote_nic;
    uint32_t remote_vi;
    uint32_t enable; /* VIPL_EMU_REG_* enabled on the VI */
    uint32_t in_use;
    uint8_t pad0_[32];
    /* line 1: receive descriptors posted so far (owner) */
    uint64_t posted;
    uint8_t pad1_[56];
    /* line 2: written by the peer */
    uint32_t peer_error; /* vipl_vi_error_t the peer reported */
    /* a peer asked for a connection to this record's VI (its NIC id + 1),
     * maybe before the VI exists */
    uint32_t conn_req;
    uint8_t pad2_[56];
    vipl_emu_rslot_t slots[];
} vipl_emu_vi_rec_t;
_Static_assert(sizeof(vipl_emu_vi_rec_t) == 192, "emu VI record header layout");
_Static_assert(offsetof(vipl_emu_vi_rec_t, posted) == 64 &&
                   offsetof(vipl_emu_vi_rec_t, peer_error) == 128,
               "owner's and peer's lines of a VI record");

/* what vipl_vi_address returns */
typedef struct vipl_emu_addr {
    uint32_t magic;
    uint32_t nic_id;
    int32_t pid;
    uint32_t vi_index;
} vipl_emu_addr_t;
_Static_assert(sizeof(vipl_emu_addr_t) <= VIPL_ADDR_BYTES, "emu address fits");

/* ---- private objects -------------------------------------------------- */

typedef struct vipl_emu_remote {
    struct vipl_emu_remote *next;
    uint32_t nic_id;
    pid_t pid;
    tc_alive_t alive; /* the peer process, held since the first connect */
    unsigned refs;
    tc_shm_seg_t seg;
    vipl_emu_nic_hdr_t *hdr;
    vipl_emu_reg_t *regs;
    uint32_t max_regs;
    uint32_t max_vis;
    uint32_t max_recv_depth;
    char *vi_base;
    size_t vi_stride;
} vipl_emu_remote_t;

typedef struct vipl_emu_cq vipl_emu_cq_t;
typedef struct vipl_emu_vi vipl_emu_vi_t;

typedef struct vipl_emu_nic {
    vipl_nic_t super;
    tc_shm_seg_t seg;
    vipl_emu_nic_hdr_t *hdr;
    vipl_emu_reg_t *regs;
    uint32_t max_regs;
    uint32_t reg_hint;
    char *vi_base;
    size_t vi_stride;
    uint32_t max_vis;
    uint32_t max_recv_depth;
    char *mem;
    size_t mem_size;
    size_t mem_bump;
    struct {
        size_t off, len;
    } free_blocks[VIPL_EMU_MAX_FREE];
    unsigned num_free;
    uint32_t next_ptag;
    char *dir;
    char *key;
    pid_t pid;
    uint32_t nic_id;
    bool strict;        /* vipl_open_params_t.strict */
    uint32_t reqs_seen; /* hdr->conn_reqs at the last empty scan */
    vipl_emu_remote_t *remotes;
    pthread_mutex_t lock; /* table, allocator, remotes */
} vipl_emu_nic_t;

typedef struct vipl_emu_ptag {
    vipl_ptag_t super;
    uint32_t id;
} vipl_emu_ptag_t;

struct vipl_emu_cq {
    vipl_cq_t super;
    vipl_emu_vi_t **vis; /* attached work queues */
    bool *is_recv;
    uint32_t count;
    uint32_t cap;
    uint32_t next; /* round robin */
};

struct vipl_emu_vi {
    vipl_vi_t super;
    vipl_emu_nic_t *nic;
    uint32_t index;
    vipl_emu_vi_rec_t *rec;
    vipl_emu_cq_t *send_cq;
    vipl_emu_cq_t *recv_cq;
    uint32_t ptag;
    uint32_t enable;
    uint32_t max_transfer;
    uint32_t send_depth;
    uint32_t recv_depth;
    int state;
    int error;
    /* receive queue (owner side) */
    vipl_desc_t **rdescs;
    uint64_t rposted;
    uint64_t rdone;
    /* rposted and rdone modulo recv_depth (kept, not divided: the
     * receive poll and the re-post are on the latency path) */
    uint32_t rposted_idx;
    uint32_t rdone_idx;
    unsigned empty_polls;
    /* send queue: posted, not yet processed (RDMA, gathered) and done */
    vipl_desc_t *pend_head, *pend_tail;
    vipl_desc_t *done_head, *done_tail;
    uint32_t outstanding;
    /* connection */
    vipl_emu_remote_t *remote;
    vipl_emu_vi_rec_t *rrec;
    uint32_t remote_vi;
    uint32_t remote_depth;
    uint64_t rconsumed;     /* peer's receive slots I consumed */
    uint32_t rconsumed_idx; /* rconsumed modulo remote_depth */
    uint64_t rposted_seen;  /* peer's posted count, last read */
    /* the registration of our receive buffers last found valid (an
     * inline delivery checks the generation alone while it holds) */
    vipl_mem_handle_t rx_ok_handle;
    uint64_t rx_ok_base, rx_ok_len;
};

extern const vipl_ops_t vipl_emu_ops;

/* ---- helpers ----------------------------------------------------------- */

static inline uint32_t vipl_emu_load32(const uint32_t *p)
{
    return tc_atomic_load_acquire(p);
}

static inline void vipl_emu_store32(uint32_t *p, uint32_t v)
{
    tc_atomic_store_release(p, v);
}

/* [off, off + len) lies within [0, limit): checked without a sum that a
 * hostile off or len could wrap */
static inline bool vipl_emu_within(uint64_t off, uint64_t len, uint64_t limit)
{
    return off <= limit && len <= limit - off;
}

static inline vipl_emu_vi_rec_t *vipl_emu_rec(char *vi_base, size_t stride, uint32_t index)
{
    return (vipl_emu_vi_rec_t *) (vi_base + (size_t) index * stride);
}

/* vipl_emu.c */
bool vipl_emu_check_reg(const vipl_emu_reg_t *regs, uint32_t max_regs, vipl_mem_handle_t handle,
                        uint32_t ptag, uint64_t addr, uint64_t len, uint32_t need,
                        vipl_emu_reg_t *out);
void vipl_emu_vi_fail(vipl_emu_vi_t *vi, vipl_vi_error_t why, bool tell_peer);
bool vipl_emu_peer_alive(vipl_emu_remote_t *r);

/* vipl_emu_xfer.c */
void vipl_emu_flush_pending(vipl_emu_vi_t *vi);
void vipl_emu_check_vi(vipl_emu_vi_t *vi);
vipl_return_t vipl_emu_post_send(vipl_vi_t *base, vipl_desc_t *d);
vipl_return_t vipl_emu_post_inline(vipl_vi_t *base, const void *buf, uint32_t len, uint32_t imm);
vipl_return_t vipl_emu_cq_recv_done(vipl_cq_t *base, vipl_vi_t **vip, vipl_desc_t **dp);
vipl_return_t vipl_emu_post_inline2(vipl_vi_t *base, const void *a, uint32_t alen, const void *b,
                                    uint32_t blen, uint32_t imm);
vipl_return_t vipl_emu_send_done(vipl_vi_t *base, vipl_desc_t **dp);
vipl_return_t vipl_emu_post_recv(vipl_vi_t *base, vipl_desc_t *d);
vipl_return_t vipl_emu_recv_done(vipl_vi_t *base, vipl_desc_t **dp);
vipl_return_t vipl_emu_cq_done(vipl_cq_t *base, vipl_vi_t **vip, bool *is_recv);

#endif /* VIPL_EMU_H */
