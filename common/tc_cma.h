/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * tc_cma.h: cross-memory attach (process_vm_readv/writev) checks shared
 * by the device layers that copy large messages between processes of one
 * host (btl_sci's DMA, btl_bip's large path).
 */
#ifndef TC_CMA_H
#define TC_CMA_H

#include <sys/types.h>

/* Whether this process can read a peer's memory: a one-byte
 * process_vm_readv from pid (this process; it passes the same permission
 * check as a peer of the same user), then, under Yama ptrace scope 1 or
 * more, allowing any process to trace us (peers are not our descendants).
 * Returns 0; -errno of process_vm_readv (-ENOSYS: no CMA in this kernel,
 * -EPERM: not allowed); -EIO when the byte read back is wrong; -EPERM when
 * Yama forbids and the exception cannot be declared. */
int tc_cma_probe(pid_t pid);

#endif /* TC_CMA_H */
