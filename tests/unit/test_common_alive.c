/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_common_alive.c: tc_alive, with a pidfd and in its fallback (the
 * process's start time): a live peer, a peer that exited (reaped, and not
 * yet reaped), and a pid that now names another process, which
 * kill(pid, 0) takes for the peer.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "tc_alive.h"

typedef int (*alive_open_fn)(tc_alive_t *, pid_t);

static pid_t alive_child(void)
{
    pid_t pid = fork();

    assert_true(pid >= 0);
    if (0 == pid) {
        for (;;) {
            pause();
        }
    }
    return pid;
}

static void alive_kill(pid_t pid, bool reap)
{
    siginfo_t si;

    assert_int_equal(kill(pid, SIGKILL), 0);
    /* wait until it has exited; WNOWAIT leaves it a zombie */
    assert_int_equal(waitid(P_PID, (id_t) pid, &si, WEXITED | (reap ? 0 : WNOWAIT)), 0);
}

static void alive_live_and_dead(alive_open_fn open_fn, bool reap)
{
    tc_alive_t a;
    pid_t pid = alive_child();

    assert_int_equal(open_fn(&a, pid), 0);
    assert_int_equal(tc_alive_check(&a), 0);
    assert_int_equal(tc_alive_check(&a), 0);
    alive_kill(pid, reap);
    assert_int_equal(tc_alive_check(&a), -ESRCH);
    assert_int_equal(tc_alive_check(&a), -ESRCH); /* sticky */
    tc_alive_close(&a);
    tc_alive_close(&a); /* idempotent */
    if (!reap) {
        assert_int_equal(waitpid(pid, NULL, 0), pid);
    }
}

static void test_alive_pidfd_dead(void **state)
{
    (void) state;
    alive_live_and_dead(tc_alive_open, true);
    alive_live_and_dead(tc_alive_open, false);
}

static void test_alive_fallback_dead(void **state)
{
    (void) state;
    alive_live_and_dead(tc_alive_open_nopidfd, true);
    alive_live_and_dead(tc_alive_open_nopidfd, false);
}

/* The peer exits and its pid names another process: kill(pid, 0) says
 * alive, tc_alive says gone. The kernel hands pids out in order, so the
 * reuse is staged: the handle is pointed at a live process that started
 * after the peer, which is what a reused pid looks like. */
static void alive_reused(alive_open_fn open_fn)
{
    tc_alive_t a;
    pid_t peer = alive_child(), other;

    assert_int_equal(open_fn(&a, peer), 0);
    alive_kill(peer, true);
    /* the start time counts clock ticks: start the other one in a later
     * tick (a wait for ordering, not a timed assertion) */
    usleep(50000);
    other = alive_child();
    a.pid = other;
    assert_int_equal(kill(other, 0), 0); /* what the old check saw */
    assert_int_equal(tc_alive_check(&a), -ESRCH);
    tc_alive_close(&a);
    alive_kill(other, true);
}

static void test_alive_pidfd_reused(void **state)
{
    (void) state;
    alive_reused(tc_alive_open);
}

static void test_alive_fallback_reused(void **state)
{
    (void) state;
    alive_reused(tc_alive_open_nopidfd);
}

static void test_alive_open_errors(void **state)
{
    tc_alive_t a, zero = {0};
    pid_t pid = alive_child();

    (void) state;
    assert_int_equal(tc_alive_open(&a, 0), -EINVAL);
    assert_int_equal(tc_alive_open(&a, -5), -EINVAL);
    alive_kill(pid, true);
    assert_int_equal(tc_alive_open(&a, pid), -ESRCH);
    assert_int_equal(tc_alive_check(&a), -ESRCH);
    tc_alive_close(&a);
    assert_int_equal(tc_alive_open_nopidfd(&a, pid), -ESRCH);
    tc_alive_close(&a);
    /* ourselves: alive */
    assert_int_equal(tc_alive_open(&a, getpid()), 0);
    assert_int_equal(tc_alive_check(&a), 0);
    tc_alive_close(&a);
    /* a handle that was never opened (pid 0) closes nothing, whatever
     * its descriptor field says */
    zero.pidfd = open("/dev/null", O_RDONLY);
    assert_true(zero.pidfd >= 0);
    tc_alive_close(&zero);
    assert_true(fcntl(zero.pidfd, F_GETFD) >= 0);
    close(zero.pidfd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_alive_pidfd_dead),   cmocka_unit_test(test_alive_fallback_dead),
        cmocka_unit_test(test_alive_pidfd_reused), cmocka_unit_test(test_alive_fallback_reused),
        cmocka_unit_test(test_alive_open_errors),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
