/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * tc_alive.h: is a peer process still the one we connected to?
 *
 * kill(pid, 0) answers for whatever process holds the pid now: after the
 * peer died, the pid can be handed to an unrelated process, and the peer
 * then looks alive for ever. tc_alive_open takes hold of the process
 * itself when the connection is made:
 *   - a pidfd (pidfd_open(2), Linux >= 5.3): refers to that process and no
 *     other; it polls readable once the process has exited;
 *   - without pidfds (older kernel, seccomp): the process's start time
 *     (field 22 of /proc/PID/stat, in clock ticks) is recorded and
 *     compared at each check: a reused pid has a later start time;
 *   - without /proc either: kill(pid, 0) alone.
 * A process that exited but is not reaped yet (a zombie) counts as gone.
 * Each connection that calls tc_alive_open keeps one descriptor until
 * tc_alive_close.
 */
#ifndef TC_ALIVE_H
#define TC_ALIVE_H

#include <stdint.h>
#include <sys/types.h>

#include "tc_common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tc_alive {
    pid_t pid;
    int pidfd;           /* -1: none (fallback) */
    uint64_t start_time; /* fallback: /proc start time, 0 when unknown */
    int dead;            /* sticky once seen dead (atomic) */
} tc_alive_t;

/* Take hold of process pid (> 0), at connect. -ESRCH when no such process
 * runs now, -EINVAL for pid <= 0; otherwise 0 (falling back as above
 * when pidfds are unavailable). */
int tc_alive_open(tc_alive_t *a, pid_t pid);

/* The same without trying pidfd_open (the fallback; for tests). */
int tc_alive_open_nopidfd(tc_alive_t *a, pid_t pid);

/* 0 while the process lives, -ESRCH once it has exited (or its pid now
 * names another process). Sticky. Cheap: one poll, or one small read of
 * /proc in the fallback. */
int tc_alive_check(tc_alive_t *a);

/* Release the descriptor. Idempotent; on a tc_alive_t that was never
 * opened (zeroed, or after tc_alive_init) it does nothing. */
void tc_alive_close(tc_alive_t *a);

/* A closed tc_alive_t (no process). */
void tc_alive_init(tc_alive_t *a);

#ifdef __cplusplus
}
#endif

#endif /* TC_ALIVE_H */
