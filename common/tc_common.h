/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * tc_common.h: conventions shared by every module of libtransports_common.
 *
 * Error convention: functions return 0 on success and a negative errno
 * value on failure (-EAGAIN: try again later, -ENOMEM, -EINVAL: bad
 * argument, -EPROTO: corrupt data read from shared memory or the wire,
 * -EMSGSIZE: payload larger than a slot, -EEXIST, -ENOENT, -EPERM ...).
 * Components map these onto OPAL_ERR_* codes (tc_ompi_errno_to_opal in
 * common/ompi), so this library never includes Open MPI headers.
 */
#ifndef TC_COMMON_H
#define TC_COMMON_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Size of a cache line on every machine we target (x86_64, aarch64). */
#define TC_CACHELINE 64

/* Round x up to a multiple of a (a power of two). */
#define TC_ALIGN_UP(x, a) (((x) + ((a) -1)) & ~((__typeof__(x)) (a) -1))

/* Container of an embedded member (intrusive lists, trees). */
#define TC_CONTAINER_OF(ptr, type, member) ((type *) ((char *) (ptr) -offsetof(type, member)))

/* Copy n bytes; inline for the sizes of a small message's pieces (an
 * upper layer's header, a short payload): overlapping word moves instead
 * of a call into the C library's memcpy. */
static inline void tc_copy_small(void *dst, const void *src, size_t n)
{
    unsigned char *d = (unsigned char *) dst;
    const unsigned char *s = (const unsigned char *) src;

    if (n >= 8 && n <= 16) {
        uint64_t a, b;

        memcpy(&a, s, 8);
        memcpy(&b, s + n - 8, 8);
        memcpy(d, &a, 8);
        memcpy(d + n - 8, &b, 8);
    } else if (n > 16 && n <= 32) {
        uint64_t a[2], b[2];

        memcpy(a, s, 16);
        memcpy(b, s + n - 16, 16);
        memcpy(d, a, 16);
        memcpy(d + n - 16, b, 16);
    } else if (n >= 4 && n < 8) {
        uint32_t a, b;

        memcpy(&a, s, 4);
        memcpy(&b, s + n - 4, 4);
        memcpy(d, &a, 4);
        memcpy(d + n - 4, &b, 4);
    } else if (0 != n) {
        memcpy(d, s, n);
    }
}

#ifdef __cplusplus
}
#endif

#endif /* TC_COMMON_H */
