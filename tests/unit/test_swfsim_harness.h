/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_swfsim_harness.h: helpers for the tests that talk to a real
 * simulator: run swfsim in a forked child (its code comes from
 * libswfsim_core, so valgrind sees it too), raw client sockets with a
 * receive timeout so that no test can hang, and reply checks.
 */

#ifndef TEST_SWFSIM_HARNESS_H
#define TEST_SWFSIM_HARNESS_H

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>

#include "swfsim.h"
#include "tc_sockmodel_client.h"

typedef struct sim_run {
    pid_t pid;
    char dir[64];
    char port_file[128];
    char report[128];
    char hostport[300];
} sim_run_t;

/* a case run under one of the simulator's models, which it finds in
 * *state (const char *), named after both: SIM_MODEL_TEST(test_x, "torus") */
/* clang-format off */
#define SIM_MODEL_TEST(f, model) \
    {.name = #f " (" model ")", .test_func = (f), .initial_state = (void *) (model)}
/* clang-format on */

/* start "swfsim --nodes N ARGS..." (NULL-terminated extra arguments) */
static inline void sim_start(sim_run_t *s, unsigned nodes, ...)
{
    char nbuf[16];
    char *argv[32];
    int argc = 0;
    va_list ap;
    const char *a;

    snprintf(s->dir, sizeof(s->dir), "/tmp/swfsim-test.XXXXXX");
    assert_non_null(mkdtemp(s->dir));
    snprintf(s->port_file, sizeof(s->port_file), "%s/port", s->dir);
    snprintf(s->report, sizeof(s->report), "%s/report.json", s->dir);
    snprintf(nbuf, sizeof(nbuf), "%u", nodes);
    argv[argc++] = (char *) "swfsim";
    argv[argc++] = (char *) "--nodes";
    argv[argc++] = nbuf;
    argv[argc++] = (char *) "--port-file";
    argv[argc++] = s->port_file;
    argv[argc++] = (char *) "--report";
    argv[argc++] = s->report;
    argv[argc++] = (char *) "--quiet";
    va_start(ap, nodes);
    while (NULL != (a = va_arg(ap, const char *)) && argc < 30) {
        argv[argc++] = (char *) a;
    }
    va_end(ap);
    argv[argc] = NULL;
    fflush(stdout);
    fflush(stderr);
    s->pid = fork();
    assert_true(s->pid >= 0);
    if (0 == s->pid) {
        int rc;
        alarm(120); /* a hung simulator must not hang the test run */
        rc = swfsim_main(argc, argv);
        fflush(stdout);
        _exit(rc);
    }
    assert_int_equal(
        tc_sockmodel_port_file_wait(s->port_file, s->hostport, sizeof(s->hostport), 30000), 0);
}

/* wait for the simulator; returns its exit status (or 200 + signal) */
static inline int sim_wait(sim_run_t *s)
{
    int status = 0;

    for (int i = 0; i < 6000; i++) {
        pid_t p = waitpid(s->pid, &status, WNOHANG);
        if (p == s->pid) {
            break;
        }
        if (5999 == i) {
            kill(s->pid, SIGKILL);
            waitpid(s->pid, &status, 0);
        } else {
            struct timespec ts = {0, 10 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 200 + WTERMSIG(status);
}

/* the report as a string (caller frees) */
static inline char *sim_report(sim_run_t *s)
{
    FILE *f = fopen(s->report, "r");
    char *buf;
    long n;

    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = calloc(1, (size_t) n + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t) n, f), (size_t) n);
    fclose(f);
    return buf;
}

static inline void sim_cleanup(sim_run_t *s)
{
    unlink(s->report);
    unlink(s->port_file);
    rmdir(s->dir);
}

/* a blocking socket with a 60 s receive timeout */
static inline int raw_connect(const sim_run_t *s)
{
    char host[256];
    const char *colon = strrchr(s->hostport, ':');
    struct sockaddr_in sa;
    struct timeval tv = {60, 0};
    int one = 1;

    memset(&sa, 0, sizeof(sa));
    memcpy(host, s->hostport, (size_t) (colon - s->hostport));
    host[colon - s->hostport] = '\0';
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t) atoi(colon + 1));
    assert_int_equal(inet_pton(AF_INET, host, &sa.sin_addr), 1);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    assert_int_equal(connect(fd, (struct sockaddr *) &sa, sizeof(sa)), 0);
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    return fd;
}

static inline void raw_word(int fd, uint32_t v)
{
    unsigned char b[4];
    tc_sockmodel_put32(b, v);
    assert_int_equal(tc_sockmodel_client_write_all(fd, b, 4), 0);
}

static inline uint32_t raw_read_word(int fd)
{
    unsigned char b[4];
    assert_int_equal(tc_sockmodel_client_read_all(fd, b, 4), 0);
    return tc_sockmodel_get32(b);
}

/* one command header, nothing after it (even for SEND) */
static inline void raw_cmd(int fd, uint32_t req, uint32_t p0, uint32_t p1, uint32_t p2,
                           uint32_t consumetime)
{
    unsigned char b[SOCKMODEL_CMD_BYTES];
    tc_sockmodel_cmd_t c;

    tc_sockmodel_cmd_make(&c, req, p0, p1, p2, 0, consumetime);
    tc_sockmodel_cmd_encode(b, &c);
    assert_int_equal(tc_sockmodel_client_write_all(fd, b, sizeof(b)), 0);
}

static inline void raw_send(int fd, uint32_t dest, uint32_t tag, const void *buf, uint32_t len)
{
    tc_sockmodel_client_t c = {.fd = fd};
    assert_int_equal(tc_sockmodel_client_cmd(&c, SOCKMODEL_SEND, dest, tag, len, 0, buf), 0);
}

static inline void raw_reply(int fd, tc_sockmodel_reply_t *r, void *buf, size_t cap)
{
    tc_sockmodel_client_t c = {.fd = fd};
    assert_int_equal(tc_sockmodel_client_reply(&c, r, buf, cap), 0);
}

/* read a reply and check its code and status */
static inline void expect_reply(int fd, uint32_t code, uint32_t status, tc_sockmodel_reply_t *r,
                                void *buf, size_t cap)
{
    tc_sockmodel_reply_t tmp;
    if (NULL == r) {
        r = &tmp;
    }
    raw_reply(fd, r, buf, cap);
    assert_int_equal(r->code, code);
    assert_int_equal(r->status, status);
}

/* the simulator closed this connection (EOF or reset, never a timeout) */
static inline void expect_eof(int fd)
{
    char b[64];
    ssize_t r;

    do {
        r = read(fd, b, sizeof(b));
    } while (r > 0);
    if (r < 0) {
        assert_true(ECONNRESET == errno);
    }
    close(fd);
}

/* n clients connected as nodes 0..n-1, each told its rank */
static inline void connect_all(sim_run_t *s, int *fd, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        fd[i] = raw_connect(s);
        raw_word(fd[i], i);
    }
    for (uint32_t i = 0; i < n; i++) {
        assert_int_equal(raw_read_word(fd[i]), i);
    }
}

/* a node that finishes in order: FINISH answered, then the end */
static inline void finish(int fd)
{
    raw_cmd(fd, SOCKMODEL_FINISH, 0, 0, 0, 0);
    expect_reply(fd, SOCKMODEL_FINISH, SOCKMODEL_ST_OK, NULL, NULL, 0);
    expect_eof(fd);
}

static inline void fill_pattern(unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++) {
        p[i] = (unsigned char) (i * 131u + seed * 17u + (i >> 8));
    }
}

#endif /* TEST_SWFSIM_HARNESS_H */
