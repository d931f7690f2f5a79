/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * btl_sctp_pool.h: a size-class pool allocator for usrsctp.
 *
 * usrsctp cuts every packet into 2 KiB mbuf clusters and takes each
 * cluster, mbuf header and reference count from malloc, and each packet
 * it hands to the output callback from another malloc: about 250 calls
 * per 64 KiB of data. glibc serves 2 KiB blocks from its sorted bins,
 * slowly, which costs the user stack a fifth of its bandwidth.
 * btl_sctp_pool_install points usrsctp's own malloc, calloc, realloc and
 * free (its relocation entries, as Open MPI's memory patcher and UCX's
 * ucm do for munmap) at thread-local free lists over one reserved region.
 * Nothing outside usrsctp is affected; blocks larger than the largest
 * class, and blocks glibc allocated, still go to glibc.
 */
#ifndef MCA_BTL_SCTP_POOL_H
#define MCA_BTL_SCTP_POOL_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Route the allocations of the loaded library whose file name contains
 * lib_substr (e.g. "libusrsctp") to the pool. Idempotent: later calls
 * return 0 at once. Returns 0, or a negative errno with a reason in why
 * (the library then keeps using glibc). Must run before the library
 * allocates anything it will later free. */
int btl_sctp_pool_install(const char *lib_substr, char *why, size_t whylen);

/* 1 once btl_sctp_pool_install succeeded. */
int btl_sctp_pool_installed(void);

/* The pool's own entry points (exported for the unit tests). */
void *btl_sctp_pool_malloc(size_t size);
void *btl_sctp_pool_calloc(size_t n, size_t size);
void *btl_sctp_pool_realloc(void *p, size_t size);
void btl_sctp_pool_free(void *p);

/* 1 if p lies in the pool's region (and so came from the pool). */
int btl_sctp_pool_owns(const void *p);

/* Pool blocks handed out to the calling thread so far. */
size_t btl_sctp_pool_thread_allocs(void);

/* Bytes of the region handed out to size classes so far. */
size_t btl_sctp_pool_reserved_bytes(void);

#ifdef __cplusplus
}
#endif

#endif /* MCA_BTL_SCTP_POOL_H */
