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

#ifdef __cplusplus
extern "C" {
#endif

/* Size of a cache line on every machine we target (x86_64, aarch64). */
#define TC_CACHELINE 64

/* Round x up to a multiple of a (a power of two). */
#define TC_ALIGN_UP(x, a) (((x) + ((a) -1)) & ~((__typeof__(x)) (a) -1))

/* Container of an embedded member (intrusive lists, trees). */
#define TC_CONTAINER_OF(ptr, type, member) ((type *) ((char *) (ptr) -offsetof(type, member)))

#ifdef __cplusplus
}
#endif

#endif /* TC_COMMON_H */
