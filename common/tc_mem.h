/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * tc_mem.h: writing a buffer's pages in ahead of use. A receive ring or
 * pool that peers fill in turn touches each of its pages for the first
 * time on some message; each such page fault costs that message 1-3 us.
 * Across hosts a ring of 128 slots of 32-64 KiB, or a multi-receive buffer
 * of megabytes, took OSU's osu_latency 1.5x of tcp's time at 16 KiB: its
 * 110 iterations of a size all met fresh pages (docs/common.md, "Writing
 * pages in ahead").
 */
#ifndef TC_MEM_H
#define TC_MEM_H

#include <stddef.h>

/* Make the pages of [addr, addr + len) present and writable now, keeping
 * their contents: MADV_POPULATE_WRITE (Linux 5.14), else a read and write
 * back of one byte per page (call it before any other thread or peer
 * writes the memory). At most *budget bytes are done, from addr on, and
 * *budget shrinks by them (atomically: threads may share a budget); a
 * NULL budget sets no limit. addr need not be
 * page-aligned. Returns the bytes done: 0 for a NULL addr, len 0, an empty
 * budget, or memory the kernel refuses to populate (not writable, no
 * memory left: the budget is kept and nothing is touched). */
size_t tc_mem_prefault(void *addr, size_t len, size_t *budget);

#endif /* TC_MEM_H */
