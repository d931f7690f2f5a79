/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * tc_alive.c: peer liveness that pid reuse cannot fool (see tc_alive.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "tc_alive.h"
#include "tc_atomic.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434 /* the same number on every Linux architecture */
#endif

/* The start time of pid (clock ticks since boot), 0 when unknown;
 * -ESRCH when no such process. */
static int tc_alive_start_time(pid_t pid, uint64_t *out)
{
    char path[64], buf[1024];
    const char *p, *close_paren;
    ssize_t n;
    int fd;

    *out = 0;
    snprintf(path, sizeof(path), "/proc/%d/stat", (int) pid);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        /* no such entry: gone, if /proc is there at all */
        return ENOENT == errno && 0 == access("/proc/self/stat", R_OK) ? -ESRCH : 0;
    }
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0) {
        return n < 0 && ESRCH == errno ? -ESRCH : 0;
    }
    buf[n] = '\0';
    /* the command name (field 2) may hold spaces and ')': the fields go on
     * after the last ')', field 3 (the state) first */
    close_paren = strrchr(buf, ')');
    if (NULL == close_paren || '\0' == close_paren[1] || '\0' == close_paren[2]) {
        return 0;
    }
    if ('Z' == close_paren[2] || 'X' == close_paren[2]) {
        /* exited, not yet reaped: gone for a peer */
        return -ESRCH;
    }
    /* the space before field 22 is the 20th after the ')' */
    p = close_paren;
    for (int field = 2; field < 22 && NULL != p; ++field) {
        p = strchr(p + 1, ' ');
    }
    if (NULL == p) {
        return 0;
    }
    *out = strtoull(p + 1, NULL, 10);
    return 0;
}

void tc_alive_init(tc_alive_t *a)
{
    a->pid = 0;
    a->pidfd = -1;
    a->start_time = 0;
    a->dead = 0;
}

int tc_alive_open_nopidfd(tc_alive_t *a, pid_t pid)
{
    int rc;

    tc_alive_init(a);
    if (pid <= 0) {
        return -EINVAL;
    }
    a->pid = pid;
    rc = tc_alive_start_time(pid, &a->start_time);
    if (0 != rc) {
        a->dead = 1;
        return rc;
    }
    if (0 != kill(pid, 0) && ESRCH == errno) {
        a->dead = 1;
        return -ESRCH;
    }
    return 0;
}

int tc_alive_open(tc_alive_t *a, pid_t pid)
{
    long fd;

    tc_alive_init(a);
    if (pid <= 0) {
        return -EINVAL;
    }
    fd = syscall(SYS_pidfd_open, pid, 0);
    if (fd < 0) {
        if (ESRCH == errno) {
            a->pid = pid;
            a->dead = 1;
            return -ESRCH;
        }
        /* ENOSYS (kernel < 5.3), EPERM (seccomp) ...: the fallback */
        return tc_alive_open_nopidfd(a, pid);
    }
    /* a pidfd is not inherited across exec by default on every kernel:
     * make sure */
    (void) fcntl((int) fd, F_SETFD, FD_CLOEXEC);
    a->pid = pid;
    a->pidfd = (int) fd;
    return 0;
}

/* dead is sticky and may be set by several threads checking one peer */
static int tc_alive_mark_dead(tc_alive_t *a)
{
    tc_atomic_store_relaxed(&a->dead, 1);
    return -ESRCH;
}

int tc_alive_check(tc_alive_t *a)
{
    if (tc_atomic_load_relaxed(&a->dead)) {
        return -ESRCH;
    }
    if (a->pidfd >= 0) {
        struct pollfd pfd = {.fd = a->pidfd, .events = POLLIN};

        /* readable once the process exited (reaped or not) */
        if (poll(&pfd, 1, 0) > 0 && 0 != (pfd.revents & (POLLIN | POLLHUP | POLLERR))) {
            return tc_alive_mark_dead(a);
        }
    } else if (a->pid > 0) {
        uint64_t now;

        if (0 != tc_alive_start_time(a->pid, &now) ||
            (0 != a->start_time && 0 != now && now != a->start_time)) {
            return tc_alive_mark_dead(a);
        }
        if (0 != kill(a->pid, 0) && ESRCH == errno) {
            return tc_alive_mark_dead(a);
        }
    }
    return 0;
}

void tc_alive_close(tc_alive_t *a)
{
    /* pid 0: never opened (a zeroed tc_alive_t, whose pidfd 0 is not ours) */
    if (a->pid > 0 && a->pidfd >= 0) {
        close(a->pidfd);
        a->pidfd = -1;
    }
}
