/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * sci_ofi_mr.c: the ofi provider's memory registration: the memory
 * regions of sci_register_memory (the handles DMA names) and the local
 * segments (SCICreateSegment: anonymous memory registered for remote
 * read and write, indexed so that a remote word can name it).
 */

#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <rdma/fi_domain.h>
#include <rdma/fi_errno.h>

#include "sci_ofi_int.h"
#include "tc_atomic.h"
#include "tc_mem.h"

/* Segment memory and shadows: anonymous mappings, zero and page-aligned,
 * written in when made while the budget btl_sci_ofi_prefault lasts (a
 * page met for the first time by a message costs it 1-3 us: docs/common.md,
 * "Writing pages in ahead"); beyond the budget their pages cost memory
 * only once written.  A ring touches the page of each slot's header when
 * formatted; the rest of a slot fills as messages come, and the shadow of
 * a slot whose payload leaves from the sender's buffer keeps only its
 * header page. */
void *sci_ofi_zalloc(size_t len)
{
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

    return MAP_FAILED == p ? NULL : p;
}

size_t sci_ofi_page_round(size_t len)
{
    return (len + 4095) & ~(size_t) 4095;
}

/* ---- registrations ---------------------------------------------------- */

int sci_ofi_mr_reg_raw(sci_desc_t *sd, void *addr, size_t len, struct fid_mr **mr, uint64_t *key)
{
    uint64_t want;
    int ret;

    pthread_mutex_lock(&sd->lock);
    want = sd->next_key++;
    pthread_mutex_unlock(&sd->lock);
    ret = tc_ofi_mr_reg(&sd->f.guard, sd->f.domain, addr, len,
                        FI_REMOTE_READ | FI_REMOTE_WRITE | FI_READ | FI_WRITE,
                        sd->prov_key ? 0 : want, mr);
    if (0 != ret) {
        return ret;
    }
    *key = fi_mr_key(*mr);
    return FI_KEY_NOTAVAIL == *key ? -FI_EINVAL : 0;
}

sci_error_t sci_ofi_register_memory(sci_desc_t *sd, void *addr, size_t len,
                                    sci_mem_handle_t *handle)
{
    sci_ofi_mr_t *m;
    int ret;

    if (NULL == sd || NULL == handle || NULL == addr || 0 == len) {
        return SCI_ERR_ILLEGAL_PARAMETER;
    }
    m = calloc(1, sizeof(*m));
    if (NULL == m) {
        return SCI_ERR_NOSPC;
    }
    ret = sci_ofi_mr_reg_raw(sd, addr, len, &m->mr, &m->key);
    if (0 != ret) {
        free(m);
        return sci_ofi_err(ret);
    }
    pthread_mutex_lock(&sd->lock);
    m->next = sd->mrs;
    sd->mrs = m;
    pthread_mutex_unlock(&sd->lock);
    /* the shm provider may have named the owner already: keep its fields */
    if (0 == handle->len) {
        handle->base = (uint64_t) (uintptr_t) addr;
        handle->len = (uint64_t) len;
    }
    handle->key = m->key;
    handle->key_node = sd->node_id;
    handle->key_flags = SCI_MEM_HANDLE_KEY;
    handle->key_base = (uint64_t) (uintptr_t) addr;
    return SCI_ERR_OK;
}

void sci_ofi_deregister_memory(sci_desc_t *sd, sci_mem_handle_t *handle)
{
    sci_ofi_mr_t **pp, *m = NULL;

    if (NULL == sd || NULL == handle) {
        return;
    }
    pthread_mutex_lock(&sd->lock);
    for (pp = &sd->mrs; NULL != *pp; pp = &(*pp)->next) {
        if ((*pp)->key == handle->key) {
            m = *pp;
            *pp = m->next;
            break;
        }
    }
    pthread_mutex_unlock(&sd->lock);
    if (NULL != m) {
        tc_ofi_mr_close(&sd->f.guard, m->mr);
        free(m);
    }
    handle->key = 0;
    handle->key_node = 0;
    handle->key_flags = 0;
}

/* ---- local segments ------------------------------------------------------ */

/* the lowest free index for a new segment, the table grown as needed
 * (lock held) */
static int sci_ofi_segtab_add(sci_desc_t *sd, sci_local_segment_t *s)
{
    uint32_t i;

    for (i = 0; i < sd->nsegtab && NULL != sd->segtab[i]; ++i) {
    }
    if (i == sd->nsegtab) {
        uint32_t n = 0 == sd->nsegtab ? 16 : 2 * sd->nsegtab;
        sci_local_segment_t **t;

        if (sd->nsegtab >= SCI_OFI_MAX_SEGS) {
            return -1;
        }
        t = realloc(sd->segtab, (size_t) n * sizeof(*t));
        if (NULL == t) {
            return -1;
        }
        memset(t + sd->nsegtab, 0, (size_t) (n - sd->nsegtab) * sizeof(*t));
        sd->segtab = t;
        sd->nsegtab = n;
    }
    sd->segtab[i] = s;
    s->index = i;
    return 0;
}

sci_error_t sci_ofi_create_segment(sci_desc_t *sd, uint32_t segment_id, size_t size,
                                   sci_local_segment_t **segp)
{
    sci_local_segment_t *s;
    int ret;

    if (NULL == segp || 0 == size || size > ((size_t) 1 << 40)) {
        return SCI_ERR_ILLEGAL_PARAMETER;
    }
    pthread_mutex_lock(&sd->lock);
    for (s = sd->segs; NULL != s; s = s->next) {
        if (s->segment_id == segment_id) {
            pthread_mutex_unlock(&sd->lock);
            return SCI_ERR_ILLEGAL_PARAMETER;
        }
    }
    pthread_mutex_unlock(&sd->lock);
    s = sci_obj_new(sizeof(*s), &sci_ofi_ops);
    if (NULL == s) {
        return SCI_ERR_NOSPC;
    }
    s->sd = sd;
    s->segment_id = segment_id;
    s->size = (size + 4095) & ~(size_t) 4095;
    s->mem = sci_ofi_zalloc(s->size);
    if (NULL == s->mem) {
        free(s);
        return SCI_ERR_NOSPC;
    }
    /* a ring's first pass would fault in a page per message and size */
    (void) tc_mem_prefault(s->mem, s->size, &sd->prefault_left);
    ret = sci_ofi_mr_reg_raw(sd, s->mem, s->size, &s->mr, &s->key);
    if (0 != ret) {
        munmap(s->mem, s->size);
        free(s);
        return sci_ofi_err(ret);
    }
    pthread_mutex_lock(&sd->lock);
    if (0 != sci_ofi_segtab_add(sd, s)) {
        pthread_mutex_unlock(&sd->lock);
        tc_ofi_mr_close(&sd->f.guard, s->mr);
        munmap(s->mem, s->size);
        free(s);
        return SCI_ERR_NOSPC;
    }
    s->next = sd->segs;
    sd->segs = s;
    pthread_mutex_unlock(&sd->lock);
    *segp = s;
    return SCI_ERR_OK;
}

sci_error_t sci_ofi_prepare_segment(sci_local_segment_t *seg)
{
    (void) seg; /* registered at creation */
    return SCI_ERR_OK;
}

sci_error_t sci_ofi_set_segment_available(sci_local_segment_t *seg, unsigned expected)
{
    (void) expected;
    tc_atomic_store_release(&seg->available, 1);
    return SCI_ERR_OK;
}

sci_error_t sci_ofi_set_segment_unavailable(sci_local_segment_t *seg)
{
    tc_atomic_store_release(&seg->available, 0);
    return SCI_ERR_OK;
}

void *sci_ofi_local_segment_address(const sci_local_segment_t *seg)
{
    return seg->mem;
}

size_t sci_ofi_local_segment_size(const sci_local_segment_t *seg)
{
    return seg->size;
}

void sci_ofi_remove_segment(sci_local_segment_t *seg)
{
    sci_desc_t *sd = seg->sd;

    pthread_mutex_lock(&sd->lock);
    for (sci_local_segment_t **pp = &sd->segs; NULL != *pp; pp = &(*pp)->next) {
        if (*pp == seg) {
            *pp = seg->next;
            break;
        }
    }
    sd->segtab[seg->index] = NULL;
    pthread_mutex_unlock(&sd->lock);
    tc_ofi_mr_close(&sd->f.guard, seg->mr);
    munmap(seg->mem, seg->size);
    free(seg);
}
