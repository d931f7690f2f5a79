/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * sci_ofi_dir.c: the parser of the ofi provider's wire records
 * (sci_ofi_dir.h).  Every length comes from another process: checked
 * without overflow before anything is read.
 */

#include <string.h>

#include "sci_ofi_dir.h"

#define SCI_OFI_PAD8(n) (((n) + (size_t) 7) & ~(size_t) 7)

size_t sci_ofi_dir_size(size_t addrlen, uint32_t nsegs)
{
    if (addrlen > SCI_OFI_MAX_ADDR || nsegs > SCI_OFI_MAX_SEGS) {
        return 0;
    }
    return sizeof(sci_ofi_dir_hdr_t) + SCI_OFI_PAD8(addrlen) +
        (size_t) nsegs * sizeof(sci_ofi_dir_seg_t);
}

int sci_ofi_dir_parse(const void *buf, size_t len, sci_ofi_dir_view_t *view)
{
    const uint8_t *p = buf;
    sci_ofi_dir_hdr_t hdr;
    size_t rest, apad;

    if (NULL == buf || NULL == view || len < sizeof(hdr)) {
        return -1;
    }
    memcpy(&hdr, p, sizeof(hdr));
    if (SCI_OFI_DIR_MAGIC != hdr.magic || SCI_OFI_DIR_VERSION != hdr.version || 0 == hdr.addrlen ||
        hdr.addrlen > SCI_OFI_MAX_ADDR || hdr.nsegs > SCI_OFI_MAX_SEGS) {
        return -1;
    }
    rest = len - sizeof(hdr);
    apad = SCI_OFI_PAD8((size_t) hdr.addrlen);
    if (apad > rest || (rest - apad) / sizeof(sci_ofi_dir_seg_t) != hdr.nsegs ||
        (rest - apad) % sizeof(sci_ofi_dir_seg_t) != 0) {
        return -1;
    }
    view->node_id = hdr.node_id;
    view->addr = p + sizeof(hdr);
    view->addrlen = hdr.addrlen;
    view->segs = p + sizeof(hdr) + apad;
    view->nsegs = hdr.nsegs;
    for (uint32_t i = 0; i < hdr.nsegs; ++i) {
        sci_ofi_dir_seg_t seg;

        sci_ofi_dir_seg(view, i, &seg);
        if (0 == seg.size || seg.addr > UINT64_MAX - seg.size) {
            return -1;
        }
    }
    return 0;
}

void sci_ofi_dir_seg(const sci_ofi_dir_view_t *view, uint32_t i, sci_ofi_dir_seg_t *seg)
{
    memcpy(seg, view->segs + (size_t) i * sizeof(*seg), sizeof(*seg));
}

int sci_ofi_word_encode(uint32_t index, uint64_t offset, uint64_t value, uint64_t *data)
{
    if (index > SCI_OFI_WORD_INDEX_MAX || offset > SCI_OFI_WORD_OFF_MAX || 0 != (offset & 7)) {
        return -1;
    }
    *data = (uint64_t) index << 48 | (offset >> 3) << 24 | (value & SCI_OFI_WORD_LOW_MASK);
    return 0;
}

void sci_ofi_word_decode(uint64_t data, uint32_t *index, uint64_t *offset, uint32_t *low)
{
    *index = (uint32_t) (data >> 48);
    *offset = ((data >> 24) & 0xffffff) << 3;
    *low = (uint32_t) (data & SCI_OFI_WORD_LOW_MASK);
}

uint64_t sci_ofi_word_advance(uint64_t current, uint32_t low)
{
    uint64_t step = ((uint64_t) low - current) & SCI_OFI_WORD_LOW_MASK;

    /* a step of 2^23 or more is a word from before the current one */
    if (step > (SCI_OFI_WORD_LOW_MASK >> 1) || current > UINT64_MAX - step) {
        return current;
    }
    return current + step;
}

int sci_ofi_bye_parse(const void *buf, size_t len, uint64_t *name)
{
    sci_ofi_bye_t bye;

    if (NULL == buf || len != sizeof(bye)) {
        return -1;
    }
    memcpy(&bye, buf, sizeof(bye));
    if (SCI_OFI_BYE_MAGIC != bye.magic) {
        return -1;
    }
    *name = bye.name;
    return 0;
}

int sci_ofi_offer_parse(const void *buf, size_t len, sci_ofi_offer_t *offer)
{
    if (NULL == buf || len != sizeof(*offer)) {
        return -1;
    }
    memcpy(offer, buf, sizeof(*offer));
    if (SCI_OFI_OFFER_MAGIC != offer->magic || 0 == offer->seg.size ||
        offer->seg.addr > UINT64_MAX - offer->seg.size) {
        return -1;
    }
    return 0;
}
