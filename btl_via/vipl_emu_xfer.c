/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/*
 * vipl_emu_xfer.c: the emu provider's data transfer (vipl_emu.c holds the
 * NIC and the connections): a send consumes the peer VI's next posted
 * receive slot after checking the slot's memory handle against the
 * peer's registration table (small messages travel in the slot itself);
 * RDMA descriptors are checked against the target's table and moved by
 * CMA when the send queue is processed; receive slots are posted and
 * completed in order; VipCQDone looks at the attached work queues in
 * turn.  Every value read from a peer's segment is validated before use.
 */

#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "vipl_emu.h"

/* ---- send queue -------------------------------------------------------------- */

static inline void vipl_emu_send_complete(vipl_emu_vi_t *vi, vipl_desc_t *d, uint32_t status,
                                          uint32_t len)
{
    d->status = VIPL_STATUS_DONE | status;
    d->length = len;
    d->next_ = NULL;
    if (NULL == vi->done_tail) {
        vi->done_head = d;
    } else {
        vi->done_tail->next_ = d;
    }
    vi->done_tail = d;
}

/* local data segments: registered with the VI's tag, in range */
static bool vipl_emu_check_local(vipl_emu_vi_t *vi, const vipl_desc_t *d, uint64_t *total)
{
    uint64_t sum = 0;

    if (d->seg_count > VIPL_MAX_DATA_SEGS) {
        return false;
    }
    for (uint32_t i = 0; i < d->seg_count; ++i) {
        if (0 == d->ds[i].length) {
            continue;
        }
        if (!vipl_emu_check_reg(vi->nic->regs, vi->nic->max_regs, d->ds[i].handle, vi->ptag,
                                (uintptr_t) d->ds[i].addr, d->ds[i].length, 0, NULL)) {
            return false;
        }
        sum += d->ds[i].length;
    }
    *total = sum;
    return true;
}

/* one more of the peer's receive slots used */
static inline void vipl_emu_consumed(vipl_emu_vi_t *vi)
{
    ++vi->rconsumed;
    vi->rconsumed_idx = vi->rconsumed_idx + 1 == vi->remote_depth ? 0 : vi->rconsumed_idx + 1;
}

/* strict mode: has the peer's VI asked for the connection to this VI?
 * (verbs: is the peer's queue pair past INIT?) */
static bool vipl_emu_peer_ready(const vipl_emu_vi_t *vi)
{
    uint32_t st = vipl_emu_load32(&vi->rrec->state);

    return (VIPL_STATE_PENDING_CONNECT == st || VIPL_STATE_CONNECTED == st) &&
        vi->rrec->remote_nic == vi->nic->nic_id && vi->rrec->remote_vi == vi->index;
}

/* consume the peer's next posted receive descriptor and fill it with the
 * descriptor's data (or nothing: RDMA write with immediate).  Returns the
 * status for the send descriptor. */
/* the peer's next posted receive slot, or NULL when there is none the
 * send may take (the VI broke; *err: the send's status) */
static inline vipl_emu_rslot_t *vipl_emu_take_slot(vipl_emu_vi_t *vi, uint32_t *err)
{
    vipl_emu_vi_rec_t *rr = vi->rrec;
    uint64_t posted = vi->rposted_seen;

    if (vi->nic->strict && !vipl_emu_peer_ready(vi)) {
        /* verbs drops packets to a queue pair in INIT; the sender's
         * retries run out (RETRY_EXC_ERR) and its queue pair breaks */
        vipl_emu_vi_fail(vi, VIPL_VIERR_PEER_GONE, false);
        *err = VIPL_STATUS_TRANSPORT_ERROR;
        return NULL;
    }
    if (posted == vi->rconsumed) {
        /* the peer's posted count lives on a line it writes: read it only
         * when the receives seen so far are used up */
        posted = vi->rposted_seen = tc_atomic_load_acquire(&rr->posted);
    }
    if (posted == vi->rconsumed) {
        /* VIA: a send without a posted receive breaks the connection */
        vipl_emu_vi_fail(vi, VIPL_VIERR_RECV_NOT_POSTED, true);
        *err = VIPL_STATUS_REMOTE_DESC_ERROR;
        return NULL;
    }
    if (posted - vi->rconsumed > vi->remote_depth) {
        vipl_emu_vi_fail(vi, VIPL_VIERR_PROTOCOL, true);
        *err = VIPL_STATUS_TRANSPORT_ERROR;
        return NULL;
    }
    return rr->slots + vi->rconsumed_idx;
}

/* a small message travels in the completion's own cache line (its bytes
 * already in slot->inline_data); the owner's NIC side (recv_done) checks
 * its descriptor and moves them into the buffer before it reports the
 * completion, so the buffer is never touched from here: one line
 * crosses, not three */
static inline void vipl_emu_fill_inline(vipl_emu_vi_t *vi, vipl_emu_rslot_t *slot, uint32_t len,
                                        uint32_t imm, uint32_t flags)
{
    slot->done_len = len;
    slot->imm = imm;
    vipl_emu_store32(&slot->status, VIPL_STATUS_DONE | VIPL_EMU_STATUS_INLINE | flags);
    vipl_emu_consumed(vi);
}

static uint32_t vipl_emu_deliver(vipl_emu_vi_t *vi, const vipl_desc_t *d, bool with_data,
                                 uint64_t total)
{
    vipl_emu_vi_rec_t *rr = vi->rrec;
    vipl_emu_remote_t *r = vi->remote;
    vipl_emu_rslot_t *slot;
    vipl_emu_reg_t reg;
    uint32_t rstatus = VIPL_STATUS_DONE;
    uint64_t addr, buf_len;

    slot = vipl_emu_take_slot(vi, &rstatus);
    if (NULL == slot) {
        return rstatus;
    }
    if (with_data && total <= VIPL_EMU_INLINE_MAX) {
        uint8_t *dst = slot->inline_data;

        for (uint32_t i = 0; i < d->seg_count; ++i) {
            memcpy(dst, d->ds[i].addr, d->ds[i].length);
            dst += d->ds[i].length;
        }
        vipl_emu_fill_inline(vi, slot, (uint32_t) total, d->imm_data,
                             (d->control & VIPL_CONTROL_IMMEDIATE) ? VIPL_STATUS_IMMEDIATE : 0);
        return 0;
    }
    addr = slot->addr;
    buf_len = slot->buf_len;
    if (with_data && total > 0) {
        if (total > buf_len) {
            rstatus |= VIPL_STATUS_LENGTH_ERROR;
        } else if (!vipl_emu_check_reg(r->regs, r->max_regs, slot->handle, rr->ptag, addr, total, 0,
                                       &reg)) {
            rstatus |= VIPL_STATUS_PROTECTION_ERROR;
        } else if (reg.seg_off >= 0 &&
                   vipl_emu_within((uint64_t) reg.seg_off, reg.len, r->seg.size)) {
            /* the buffer is NIC memory: copy through our mapping */
            char *dst = (char *) r->seg.base + reg.seg_off + (addr - reg.base);
            for (uint32_t i = 0; i < d->seg_count; ++i) {
                memcpy(dst, d->ds[i].addr, d->ds[i].length);
                dst += d->ds[i].length;
            }
        } else {
            struct iovec l[VIPL_MAX_DATA_SEGS],
                rem = {.iov_base = (void *) (uintptr_t) addr, .iov_len = total};
            ssize_t n;
            for (uint32_t i = 0; i < d->seg_count; ++i) {
                l[i].iov_base = d->ds[i].addr;
                l[i].iov_len = d->ds[i].length;
            }
            n = process_vm_writev(r->pid, l, d->seg_count, &rem, 1, 0);
            if (n != (ssize_t) total) {
                rstatus |= VIPL_STATUS_TRANSPORT_ERROR;
            }
        }
    }
    slot->done_len = (rstatus == VIPL_STATUS_DONE && with_data) ? (uint32_t) total : 0;
    if (!with_data && vi->nic->strict) {
        /* verbs reports an RDMA write with immediate with its length */
        slot->done_len = d->length;
    }
    slot->imm = d->imm_data;
    if (d->control & VIPL_CONTROL_IMMEDIATE) {
        rstatus |= VIPL_STATUS_IMMEDIATE;
    }
    if (!with_data) {
        rstatus |= VIPL_EMU_STATUS_RDMA;
    }
    vipl_emu_store32(&slot->status, rstatus);
    vipl_emu_consumed(vi);
    if (rstatus & VIPL_STATUS_ERROR_MASK) {
        return VIPL_STATUS_REMOTE_DESC_ERROR;
    }
    return 0;
}

/* an iovec list with its first k bytes taken off */
static void vipl_emu_iov_advance(struct iovec **v, unsigned *n, size_t k)
{
    while (k > 0 && *n > 0) {
        size_t s = k < (*v)->iov_len ? k : (*v)->iov_len;

        (*v)->iov_base = (char *) (*v)->iov_base + s;
        (*v)->iov_len -= s;
        k -= s;
        if (0 == (*v)->iov_len) {
            ++*v;
            --*n;
        }
    }
}

/* one CMA transfer, restarted after partial progress */
static bool vipl_emu_cma(pid_t pid, bool write, struct iovec *l, unsigned nl, struct iovec *r,
                         unsigned nr, size_t total)
{
    size_t done = 0;

    while (done < total) {
        ssize_t n = write ? process_vm_writev(pid, l, nl, r, nr, 0)
                          : process_vm_readv(pid, l, nl, r, nr, 0);

        if (n < 0 && EINTR == errno) {
            continue;
        }
        if (n <= 0) {
            return false;
        }
        done += (size_t) n;
        if (done < total) {
            /* advance both lists by n bytes */
            vipl_emu_iov_advance(&l, &nl, (size_t) n);
            vipl_emu_iov_advance(&r, &nr, (size_t) n);
        }
    }
    return true;
}

/* Process the queued RDMA descriptors: check each against both tables,
 * move the data of a run of same-direction descriptors with one CMA call,
 * then complete them in order (and deliver the immediates). */
void vipl_emu_flush_pending(vipl_emu_vi_t *vi)
{
    while (NULL != vi->pend_head) {
        struct iovec liov[VIPL_EMU_MAX_IOV], riov[VIPL_EMU_MAX_IOV];
        vipl_desc_t *batch[VIPL_EMU_MAX_IOV];
        uint32_t bstatus[VIPL_EMU_MAX_IOV];
        unsigned nl = 0, nr = 0, nb = 0;
        uint32_t op = vi->pend_head->control & VIPL_CONTROL_OP_MASK;
        bool write = VIPL_CONTROL_OP_RDMAWRITE == op;
        size_t total = 0;

        while (NULL != vi->pend_head && (vi->pend_head->control & VIPL_CONTROL_OP_MASK) == op &&
               nb < VIPL_EMU_MAX_IOV && nl + VIPL_MAX_DATA_SEGS <= VIPL_EMU_MAX_IOV) {
            vipl_desc_t *d = vi->pend_head;
            uint64_t len = 0;
            uint32_t st = 0;

            vi->pend_head = d->next_;
            if (NULL == vi->pend_head) {
                vi->pend_tail = NULL;
            }
            if (VIPL_STATE_CONNECTED != vi->state) {
                st = VIPL_STATUS_FLUSHED_ERROR;
            } else if (vi->nic->strict && !vipl_emu_peer_ready(vi)) {
                vipl_emu_vi_fail(vi, VIPL_VIERR_PEER_GONE, false);
                st = VIPL_STATUS_TRANSPORT_ERROR;
            } else if (!vipl_emu_check_local(vi, d, &len)) {
                st = VIPL_STATUS_PROTECTION_ERROR;
            } else if (len > vi->max_transfer) {
                st = VIPL_STATUS_LENGTH_ERROR;
            } else if (len > 0 &&
                       (!(vi->rrec->enable & (write ? VIPL_EMU_REG_WRITE : VIPL_EMU_REG_READ)) ||
                        !vipl_emu_check_reg(vi->remote->regs, vi->remote->max_regs,
                                            d->remote_handle, vi->rrec->ptag, d->remote_addr, len,
                                            write ? VIPL_EMU_REG_WRITE : VIPL_EMU_REG_READ,
                                            NULL))) {
                /* the target refuses: nothing is written */
                st = VIPL_STATUS_RDMA_PROT_ERROR;
            } else if (len > 0) {
                for (uint32_t i = 0; i < d->seg_count; ++i) {
                    if (d->ds[i].length) {
                        liov[nl].iov_base = d->ds[i].addr;
                        liov[nl].iov_len = d->ds[i].length;
                        ++nl;
                    }
                }
                riov[nr].iov_base = (void *) (uintptr_t) d->remote_addr;
                riov[nr].iov_len = len;
                ++nr;
                total += len;
            }
            d->length = (uint32_t) len;
            batch[nb] = d;
            bstatus[nb] = st;
            ++nb;
        }
        if (total > 0 && !vipl_emu_cma(vi->remote->pid, write, liov, nl, riov, nr, total)) {
            bool alive = vipl_emu_peer_alive(vi->remote);
            for (unsigned i = 0; i < nb; ++i) {
                if (0 == bstatus[i]) {
                    bstatus[i] = VIPL_STATUS_TRANSPORT_ERROR;
                }
            }
            if (!alive) {
                vipl_emu_vi_fail(vi, VIPL_VIERR_PEER_GONE, false);
            }
        }
        for (unsigned i = 0; i < nb; ++i) {
            vipl_desc_t *d = batch[i];
            uint32_t st = bstatus[i];

            if (0 == st && write && (d->control & VIPL_CONTROL_IMMEDIATE)) {
                /* the immediate arrives after the data, in a receive descriptor */
                st = vipl_emu_deliver(vi, d, false, 0);
            }
            vipl_emu_send_complete(vi, d, st, 0 == st ? d->length : 0);
        }
    }
}

vipl_return_t vipl_emu_post_send(vipl_vi_t *base, vipl_desc_t *d)
{
    vipl_emu_vi_t *vi = (vipl_emu_vi_t *) base;
    uint32_t op;
    uint64_t total = 0;

    if (NULL == d) {
        return VIPL_INVALID_PARAMETER;
    }
    if (VIPL_STATE_CONNECTED != vi->state) {
        return VIPL_INVALID_STATE;
    }
    if (d->control & VIPL_CONTROL_INLINE) {
        /* refused at post, as verbs does: a send op of at most max_inline */
        if (VIPL_CONTROL_OP_SEND != (d->control & VIPL_CONTROL_OP_MASK) ||
            d->seg_count > VIPL_MAX_DATA_SEGS) {
            return VIPL_INVALID_PARAMETER;
        }
        for (uint32_t i = 0; i < d->seg_count; ++i) {
            total += d->ds[i].length;
        }
        if (0 == vi->nic->super.attrs.max_inline || total > vi->nic->super.attrs.max_inline) {
            /* strict (max_inline 0): no inline send at all, even empty */
            return VIPL_INVALID_PARAMETER;
        }
    }
    if (vi->outstanding >= vi->send_depth) {
        return VIPL_ERROR_RESOURCE;
    }
    ++vi->outstanding;
    d->status = 0;
    d->next_ = NULL;
    op = d->control & VIPL_CONTROL_OP_MASK;
    if (d->seg_count > VIPL_MAX_DATA_SEGS || VIPL_CONTROL_OP_MASK == op ||
        (VIPL_CONTROL_OP_RDMAREAD == op && (d->control & VIPL_CONTROL_IMMEDIATE))) {
        vipl_emu_send_complete(vi, d, VIPL_STATUS_FORMAT_ERROR, 0);
        return VIPL_SUCCESS;
    }
    if (VIPL_CONTROL_OP_SEND != op) {
        /* queued: processed (gathered) at the next completion poll */
        if (NULL == vi->pend_tail) {
            vi->pend_head = d;
        } else {
            vi->pend_tail->next_ = d;
        }
        vi->pend_tail = d;
        return VIPL_SUCCESS;
    }
    /* a send keeps its place behind queued RDMA descriptors */
    if (NULL != vi->pend_head) {
        vipl_emu_flush_pending(vi);
    }
    if (VIPL_STATE_CONNECTED != vi->state) {
        vipl_emu_send_complete(vi, d, VIPL_STATUS_FLUSHED_ERROR, 0);
    } else if (!(d->control & VIPL_CONTROL_INLINE) && !vipl_emu_check_local(vi, d, &total)) {
        /* an inline send's bytes are copied now: no registration needed */
        vipl_emu_send_complete(vi, d, VIPL_STATUS_PROTECTION_ERROR, 0);
    } else if (total > vi->max_transfer) {
        vipl_emu_send_complete(vi, d, VIPL_STATUS_LENGTH_ERROR, 0);
    } else {
        uint32_t st = vipl_emu_deliver(vi, d, true, total);
        vipl_emu_send_complete(vi, d, st, 0 == st ? (uint32_t) total : 0);
    }
    return VIPL_SUCCESS;
}

/* a send without a descriptor (vipl_post_inline, vipl_post_inline2):
 * straight into the peer's next slot, behind the RDMA queued before it;
 * the two pieces are gathered there */
vipl_return_t vipl_emu_post_inline2(vipl_vi_t *base, const void *a, uint32_t alen, const void *b,
                                    uint32_t blen, uint32_t imm)
{
    vipl_emu_vi_t *vi = (vipl_emu_vi_t *) base;
    const uint32_t max = vi->nic->super.attrs.max_inline;
    vipl_emu_rslot_t *slot;
    uint32_t err;

    if (0 == max || alen > max || blen > max - alen) {
        return VIPL_INVALID_PARAMETER; /* strict: max_inline 0, none at all */
    }
    if (__builtin_expect(NULL != vi->pend_head, 0)) {
        vipl_emu_flush_pending(vi);
    }
    if (VIPL_STATE_CONNECTED != vi->state || NULL == (slot = vipl_emu_take_slot(vi, &err))) {
        return VIPL_INVALID_STATE;
    }
    /* max_inline <= VIPL_EMU_INLINE_MAX: both fit in the slot */
    memcpy(slot->inline_data, a, alen);
    if (0 != blen) {
        memcpy(slot->inline_data + alen, b, blen);
    }
    vipl_emu_fill_inline(vi, slot, alen + blen, imm, VIPL_STATUS_IMMEDIATE);
    return VIPL_SUCCESS;
}

vipl_return_t vipl_emu_post_inline(vipl_vi_t *base, const void *buf, uint32_t len, uint32_t imm)
{
    return vipl_emu_post_inline2(base, buf, len, NULL, 0, imm);
}

vipl_return_t vipl_emu_send_done(vipl_vi_t *base, vipl_desc_t **dp)
{
    vipl_emu_vi_t *vi = (vipl_emu_vi_t *) base;
    vipl_desc_t *d;

    if (NULL != vi->pend_head) {
        vipl_emu_flush_pending(vi);
    }
    d = vi->done_head;
    if (NULL == d) {
        return VIPL_NOT_DONE;
    }
    vi->done_head = d->next_;
    if (NULL == vi->done_head) {
        vi->done_tail = NULL;
    }
    --vi->outstanding;
    *dp = d;
    return VIPL_SUCCESS;
}

/* ---- receive queue ------------------------------------------------------------ */

vipl_return_t vipl_emu_post_recv(vipl_vi_t *base, vipl_desc_t *d)
{
    vipl_emu_vi_t *vi = (vipl_emu_vi_t *) base;
    vipl_emu_rslot_t *slot;

    if (NULL == d || 1 != d->seg_count ||
        VIPL_CONTROL_OP_SEND != (d->control & VIPL_CONTROL_OP_MASK)) {
        /* the emu NIC scatters into one data segment */
        return VIPL_INVALID_PARAMETER;
    }
    if (VIPL_STATE_ERROR == vi->state) {
        return VIPL_INVALID_STATE;
    }
    if (vi->rposted - vi->rdone >= vi->recv_depth) {
        return VIPL_ERROR_RESOURCE;
    }
    d->status = 0;
    d->length = 0;
    slot = vi->rec->slots + vi->rposted_idx;
    slot->status = 0;
    slot->buf_len = d->ds[0].length;
    slot->addr = (uintptr_t) d->ds[0].addr;
    slot->handle = d->ds[0].handle;
    slot->done_len = 0;
    slot->imm = 0;
    vi->rdescs[vi->rposted_idx] = d;
    ++vi->rposted;
    vi->rposted_idx = vi->rposted_idx + 1 == vi->recv_depth ? 0 : vi->rposted_idx + 1;
    tc_atomic_store_release(&vi->rec->posted, vi->rposted);
    return VIPL_SUCCESS;
}

/* the rare checks of an idle VI: the peer's report, the peer's life */
void vipl_emu_check_vi(vipl_emu_vi_t *vi)
{
    uint32_t perr = vipl_emu_load32(&vi->rec->peer_error);

    if (VIPL_VIERR_NONE != perr) {
        vipl_emu_vi_fail(vi, (vipl_vi_error_t) perr, false);
    } else if (NULL != vi->remote && VIPL_STATE_IDLE != vi->state &&
               !vipl_emu_peer_alive(vi->remote)) {
        vipl_emu_vi_fail(vi, VIPL_VIERR_PEER_GONE, false);
    }
}

/* a receive descriptor's buffer, as a delivery into it checks it: the
 * registration found valid last time still is while its entry keeps the
 * handle's generation (a deregistration changes it), so only the range
 * is checked again; else the whole check */
static inline bool vipl_emu_check_own(vipl_emu_vi_t *vi, const vipl_desc_t *d, uint32_t len)
{
    vipl_mem_handle_t h = d->ds[0].handle;
    uint64_t a = (uintptr_t) d->ds[0].addr;
    vipl_emu_reg_t reg;

    if (h == vi->rx_ok_handle && 0 != h &&
        vipl_emu_load32(&vi->nic->regs[(uint32_t) h].gen) == (uint32_t) (h >> 32) &&
        a >= vi->rx_ok_base && len <= vi->rx_ok_len && a - vi->rx_ok_base <= vi->rx_ok_len - len) {
        return true;
    }
    if (!vipl_emu_check_reg(vi->nic->regs, vi->nic->max_regs, h, vi->ptag, a, len, 0, &reg)) {
        return false;
    }
    vi->rx_ok_handle = h;
    vi->rx_ok_base = reg.base;
    vi->rx_ok_len = reg.len;
    return true;
}

/* is a receive completion (or a flushed descriptor) waiting? */
static inline bool vipl_emu_recv_ready(vipl_emu_vi_t *vi)
{
    if (vi->rdone == vi->rposted) {
        return false;
    }
    if (__builtin_expect(0 != vipl_emu_load32(&vi->rec->slots[vi->rdone_idx].status), 1)) {
        return true;
    }
    if (VIPL_STATE_ERROR == vi->state) {
        return true;
    }
    if (++vi->empty_polls >= VIPL_EMU_CHECK_POLLS) {
        vi->empty_polls = 0;
        vipl_emu_check_vi(vi);
        return VIPL_STATE_ERROR == vi->state;
    }
    return false;
}

/* the completion recv_ready found: its descriptor filled and handed out */
static inline vipl_return_t vipl_emu_recv_take(vipl_emu_vi_t *vi, vipl_desc_t **dp)
{
    vipl_emu_rslot_t *slot;
    vipl_desc_t *d;
    uint32_t st;

    slot = vi->rec->slots + vi->rdone_idx;
    d = vi->rdescs[vi->rdone_idx];
    st = vipl_emu_load32(&slot->status);
    if (0 == st) {
        /* the VI is in error: flush what is still posted */
        d->status = VIPL_STATUS_DONE | VIPL_STATUS_FLUSHED_ERROR;
        d->length = 0;
    } else {
        uint32_t len = slot->done_len;
        /* the peer wrote these: never trust a length beyond the buffer
         * (an RDMA write's length, strict mode, is not a buffer's) */
        if ((!(st & VIPL_EMU_STATUS_RDMA) && len > d->ds[0].length) ||
            ((st & VIPL_EMU_STATUS_INLINE) && len > VIPL_EMU_INLINE_MAX)) {
            st |= VIPL_STATUS_LENGTH_ERROR;
            len = 0;
        } else if (st & VIPL_EMU_STATUS_INLINE) {
            /* the NIC's last step of an inline delivery: check the
             * descriptor's buffer as the sender would have, then fill it */
            if (len > 0 && !vipl_emu_check_own(vi, d, len)) {
                st |= VIPL_STATUS_PROTECTION_ERROR;
                len = 0;
            } else {
                memcpy(d->ds[0].addr, slot->inline_data, len);
            }
        }
        st &= ~(VIPL_EMU_STATUS_INLINE | VIPL_EMU_STATUS_RDMA);
        d->status = st | VIPL_STATUS_DONE;
        d->length = len;
        d->imm_data = slot->imm;
        if (st & VIPL_STATUS_ERROR_MASK) {
            /* a descriptor error breaks the connection (reliable delivery) */
            vipl_emu_vi_fail(vi, VIPL_VIERR_PROTOCOL, true);
        }
    }
    vi->rdone++;
    vi->rdone_idx = vi->rdone_idx + 1 == vi->recv_depth ? 0 : vi->rdone_idx + 1;
    vi->empty_polls = 0;
    *dp = d;
    return VIPL_SUCCESS;
}

vipl_return_t vipl_emu_recv_done(vipl_vi_t *base, vipl_desc_t **dp)
{
    vipl_emu_vi_t *vi = (vipl_emu_vi_t *) base;

    if (!vipl_emu_recv_ready(vi)) {
        return VIPL_NOT_DONE;
    }
    return vipl_emu_recv_take(vi, dp);
}

vipl_return_t vipl_emu_cq_done(vipl_cq_t *base, vipl_vi_t **vip, bool *is_recv)
{
    vipl_emu_cq_t *cq = (vipl_emu_cq_t *) base;
    uint32_t count = tc_atomic_load_acquire(&cq->count);

    for (uint32_t n = 0; n < count; ++n) {
        uint32_t i = cq->next < count ? cq->next : 0;
        vipl_emu_vi_t *vi = cq->vis[i];
        bool ready;

        cq->next = (i + 1 == count) ? 0 : i + 1;
        if (cq->is_recv[i]) {
            ready = vipl_emu_recv_ready(vi);
        } else {
            if (NULL != vi->pend_head) {
                vipl_emu_flush_pending(vi);
            }
            ready = NULL != vi->done_head;
        }
        if (ready) {
            *vip = &vi->super;
            *is_recv = cq->is_recv[i];
            return VIPL_SUCCESS;
        }
    }
    return VIPL_NOT_DONE;
}

/* vipl_cq_recv_done: the next receive completion of the CQ's receive
 * queues, each in turn, found and taken in one look at its slot (send
 * queues on the CQ only have their pending work moved on) */
vipl_return_t vipl_emu_cq_recv_done(vipl_cq_t *base, vipl_vi_t **vip, vipl_desc_t **dp)
{
    vipl_emu_cq_t *cq = (vipl_emu_cq_t *) base;
    uint32_t count = tc_atomic_load_acquire(&cq->count);

    for (uint32_t n = 0; n < count; ++n) {
        uint32_t i = cq->next < count ? cq->next : 0;
        vipl_emu_vi_t *vi = cq->vis[i];

        cq->next = (i + 1 == count) ? 0 : i + 1;
        if (!cq->is_recv[i]) {
            if (NULL != vi->pend_head) {
                vipl_emu_flush_pending(vi);
            }
        } else if (vipl_emu_recv_ready(vi)) {
            *vip = &vi->super;
            return vipl_emu_recv_take(vi, dp);
        }
    }
    return VIPL_NOT_DONE;
}
