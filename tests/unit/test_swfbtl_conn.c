/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_swfbtl_conn.c: unit tests of btl_swf's SockModel client
 * (common/tc_sockmodel_client.c) against a scripted simulator: the test plays
 * the server on the other end of a socket pair (or a loopback listener
 * for the handshake), queues the replies, and checks every command the
 * client wrote, word by word.
 */

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <unistd.h>

#include <cmocka.h>

#include "tc_sockmodel_client.h"

typedef struct {
    tc_sockmodel_conn_t conn;
    int server; /* the simulator's end */
} fixture_t;

static int setup(void **state)
{
    fixture_t *f = calloc(1, sizeof(*f));
    int sv[2];

    assert_non_null(f);
    assert_int_equal(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
    /* scale 0: consumetime stays 0, so commands are predictable */
    tc_sockmodel_conn_init(&f->conn, 4.0, 0.0, 5000);
    tc_sockmodel_conn_attach(&f->conn, sv[0]);
    f->conn.nodes = 4;
    f->conn.max_msg = 1024;
    f->server = sv[1];
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture_t *f = *state;

    tc_sockmodel_conn_close(&f->conn);
    if (f->server >= 0) {
        close(f->server);
    }
    free(f);
    return 0;
}

static void server_reply(fixture_t *f, uint32_t code, uint32_t status, uint32_t a0, uint32_t a1,
                         uint32_t a2, uint64_t clock_ns)
{
    unsigned char buf[SOCKMODEL_REPLY_BYTES];
    tc_sockmodel_reply_t r;

    memset(&r, 0, sizeof(r));
    r.code = code;
    r.status = status;
    r.arg[0] = a0;
    r.arg[1] = a1;
    r.arg[2] = a2;
    r.clock_ns = clock_ns;
    tc_sockmodel_reply_encode(buf, &r);
    assert_int_equal(sizeof(buf), write(f->server, buf, sizeof(buf)));
}

static void read_exact(int fd, void *buf, size_t len)
{
    size_t got = 0;

    while (got < len) {
        ssize_t n = read(fd, (char *) buf + got, len - got);

        assert_true(n > 0);
        got += (size_t) n;
    }
}

static void server_expect(fixture_t *f, uint32_t request, uint32_t p0, uint32_t p1, uint32_t p2)
{
    unsigned char buf[SOCKMODEL_CMD_BYTES];
    tc_sockmodel_cmd_t cmd;

    read_exact(f->server, buf, sizeof(buf));
    tc_sockmodel_cmd_decode(&cmd, buf);
    assert_int_equal(request, cmd.request);
    assert_int_equal(p0, cmd.param[0]);
    assert_int_equal(p1, cmd.param[1]);
    assert_int_equal(p2, cmd.param[2]);
    assert_int_equal(0, cmd.param[3]);
    assert_int_equal(0, cmd.consumetime);
}

static void test_parse_address(void **state)
{
    char host[64];
    int port = 0;

    (void) state;
    assert_int_equal(0, tc_sockmodel_address_parse("127.0.0.1:7000", host, sizeof(host), &port));
    assert_string_equal("127.0.0.1", host);
    assert_int_equal(7000, port);
    assert_int_equal(0, tc_sockmodel_address_parse(":81", host, sizeof(host), &port));
    assert_string_equal("127.0.0.1", host);
    assert_int_equal(81, port);
    assert_int_equal(0, tc_sockmodel_address_parse("[::1]:9", host, sizeof(host), &port));
    assert_string_equal("::1", host);
    assert_int_equal(0, tc_sockmodel_address_parse("sim.example:65535", host, sizeof(host), &port));
    assert_string_equal("sim.example", host);
    assert_int_equal(-EINVAL, tc_sockmodel_address_parse("127.0.0.1", host, sizeof(host), &port));
    assert_int_equal(-EINVAL, tc_sockmodel_address_parse("h:0", host, sizeof(host), &port));
    assert_int_equal(-EINVAL, tc_sockmodel_address_parse("h:65536", host, sizeof(host), &port));
    assert_int_equal(-EINVAL, tc_sockmodel_address_parse("h:12x", host, sizeof(host), &port));
    assert_int_equal(-EINVAL, tc_sockmodel_address_parse("h:", host, sizeof(host), &port));
    assert_int_equal(-EINVAL, tc_sockmodel_address_parse(NULL, host, sizeof(host), &port));
    assert_int_equal(-EINVAL,
                     tc_sockmodel_address_parse("a-very-long-host-name:1", host, 8, &port));
}

static void test_size(void **state)
{
    fixture_t *f = *state;

    f->conn.rank = 2;
    server_reply(f, SOCKMODEL_SIZE, SOCKMODEL_ST_OK, 3, 65536, SOCKMODEL_MODEL_TORUS, 77);
    assert_int_equal(0, tc_sockmodel_conn_size(&f->conn));
    server_expect(f, SOCKMODEL_SIZE, 0, 0, 0);
    assert_int_equal(3, f->conn.nodes);
    assert_int_equal(65536, f->conn.max_msg);
    assert_int_equal(0, f->conn.features);
    assert_int_equal(SOCKMODEL_MODEL_TORUS, f->conn.model);
    assert_int_equal(77, f->conn.clock_ns);
}

static void test_size_rank_outside(void **state)
{
    fixture_t *f = *state;

    /* a simulator with fewer nodes than our rank is broken */
    f->conn.rank = 5;
    server_reply(f, SOCKMODEL_SIZE, SOCKMODEL_ST_OK, 3, 65536, 0, 0);
    assert_int_equal(-EPROTO, tc_sockmodel_conn_size(&f->conn));
    assert_non_null(strstr(f->conn.error, "3 nodes"));
}

static void test_send_frames_payload(void **state)
{
    fixture_t *f = *state;
    char a[] = "head", b[] = "payload!";
    struct iovec iov[2] = {{a, 4}, {b, 8}};
    char got[12];

    assert_int_equal(0, tc_sockmodel_conn_send(&f->conn, 3, 0x53574641u, iov, 2, 12));
    server_expect(f, SOCKMODEL_SEND, 3, 0x53574641u, 12);
    read_exact(f->server, got, sizeof(got));
    assert_memory_equal("headpayload!", got, 12);
    /* zero bytes are a valid message */
    assert_int_equal(0, tc_sockmodel_conn_send(&f->conn, 0, 1, NULL, 0, 0));
    server_expect(f, SOCKMODEL_SEND, 0, 1, 0);
}

static void test_send_checks_limits(void **state)
{
    fixture_t *f = *state;
    char byte = 0;
    struct iovec iov = {&byte, 1};

    /* both are refused before anything reaches the wire */
    assert_int_equal(-EINVAL, tc_sockmodel_conn_send(&f->conn, 4, 0, &iov, 1, 1));
    assert_int_equal(-EMSGSIZE, tc_sockmodel_conn_send(&f->conn, 1, 0, &iov, 1, 1025));
    server_reply(f, SOCKMODEL_PROBE, SOCKMODEL_ST_NONE, 0, 0, 0, 0);
    tc_sockmodel_msg_info_t info;
    assert_int_equal(0, tc_sockmodel_conn_probe(&f->conn, &info));
    server_expect(f, SOCKMODEL_PROBE, 0, 0, 0);
}

static void test_probe(void **state)
{
    fixture_t *f = *state;
    tc_sockmodel_msg_info_t info;

    server_reply(f, SOCKMODEL_PROBE, SOCKMODEL_ST_NONE, 0, 0, 0, 0);
    server_reply(f, SOCKMODEL_PROBE, SOCKMODEL_ST_FOUND, 2, 0x53574640u, 100, 5000);
    assert_int_equal(0, tc_sockmodel_conn_probe(&f->conn, &info));
    assert_int_equal(1, tc_sockmodel_conn_probe(&f->conn, &info));
    assert_int_equal(2, info.src);
    assert_int_equal(0x53574640u, info.tag);
    assert_int_equal(100, info.len);
    assert_int_equal(5000, f->conn.clock_ns);
    server_expect(f, SOCKMODEL_PROBE, 0, 0, 0);
    server_expect(f, SOCKMODEL_PROBE, 0, 0, 0);
}

static void test_wait(void **state)
{
    fixture_t *f = *state;
    tc_sockmodel_msg_info_t info;

    server_reply(f, SOCKMODEL_WAITING_START, SOCKMODEL_ST_EXPIRED, 0, 0, 0, 0);
    server_reply(f, SOCKMODEL_WAITING_START, SOCKMODEL_ST_STOPPED, 0, 0, 0, 0);
    server_reply(f, SOCKMODEL_WAITING_START, SOCKMODEL_ST_FOUND, 1, 7, 8, 0);
    assert_int_equal(0, tc_sockmodel_conn_wait(&f->conn, 3000, &info));
    assert_int_equal(0, tc_sockmodel_conn_wait(&f->conn, 3000, &info));
    /* the timeout is clamped to the protocol's bound */
    assert_int_equal(1, tc_sockmodel_conn_wait(&f->conn, SOCKMODEL_WAIT_MAX_US + 1, &info));
    assert_int_equal(1, info.src);
    assert_int_equal(7, info.tag);
    assert_int_equal(8, info.len);
    server_expect(f, SOCKMODEL_WAITING_START, 3000, 0, 0);
    server_expect(f, SOCKMODEL_WAITING_START, 3000, 0, 0);
    server_expect(f, SOCKMODEL_WAITING_START, SOCKMODEL_WAIT_MAX_US, 0, 0);
}

static void test_wait_bad_status(void **state)
{
    fixture_t *f = *state;
    tc_sockmodel_msg_info_t info;

    server_reply(f, SOCKMODEL_WAITING_START, 42, 0, 0, 0, 0);
    assert_int_equal(-EPROTO, tc_sockmodel_conn_wait(&f->conn, 1000, &info));
}

static void test_recv(void **state)
{
    fixture_t *f = *state;
    tc_sockmodel_msg_info_t info;
    char buf[16];

    server_reply(f, SOCKMODEL_RECV, SOCKMODEL_ST_OK, 3, 9, 5, 0);
    assert_int_equal(5, write(f->server, "hello", 5));
    assert_int_equal(5, tc_sockmodel_conn_recv(&f->conn, buf, sizeof(buf), &info, NULL, NULL));
    assert_memory_equal("hello", buf, 5);
    assert_int_equal(3, info.src);
    assert_int_equal(9, info.tag);
    server_expect(f, SOCKMODEL_RECV, 0, 0, 0);
}

static void test_recv_with_probe(void **state)
{
    fixture_t *f = *state;
    tc_sockmodel_msg_info_t info, next;
    int found = -1;
    char buf[16];

    /* RECV and PROBE leave in one write; both replies are read */
    server_reply(f, SOCKMODEL_RECV, SOCKMODEL_ST_OK, 1, 2, 3, 0);
    assert_int_equal(3, write(f->server, "abc", 3));
    server_reply(f, SOCKMODEL_PROBE, SOCKMODEL_ST_FOUND, 2, 5, 9, 0);
    assert_int_equal(3, tc_sockmodel_conn_recv(&f->conn, buf, sizeof(buf), &info, &next, &found));
    assert_memory_equal("abc", buf, 3);
    assert_int_equal(1, found);
    assert_int_equal(2, next.src);
    assert_int_equal(5, next.tag);
    assert_int_equal(9, next.len);
    server_expect(f, SOCKMODEL_RECV, 0, 0, 0);
    server_expect(f, SOCKMODEL_PROBE, 0, 0, 0);

    server_reply(f, SOCKMODEL_RECV, SOCKMODEL_ST_OK, 2, 5, 0, 0);
    server_reply(f, SOCKMODEL_PROBE, SOCKMODEL_ST_NONE, 0, 0, 0, 0);
    assert_int_equal(0, tc_sockmodel_conn_recv(&f->conn, buf, sizeof(buf), &info, &next, &found));
    assert_int_equal(0, found);
    server_expect(f, SOCKMODEL_RECV, 0, 0, 0);
    server_expect(f, SOCKMODEL_PROBE, 0, 0, 0);

    /* a wrong answer to the riding PROBE is a protocol error */
    server_reply(f, SOCKMODEL_RECV, SOCKMODEL_ST_OK, 2, 5, 0, 0);
    server_reply(f, SOCKMODEL_PROBE, SOCKMODEL_ST_EXPIRED, 0, 0, 0, 0);
    assert_int_equal(-EPROTO,
                     tc_sockmodel_conn_recv(&f->conn, buf, sizeof(buf), &info, &next, &found));
}

static void *late_probe_reply(void *arg)
{
    fixture_t *f = arg;
    struct timespec ts = {0, 50 * 1000 * 1000};

    nanosleep(&ts, NULL); /* well past the 1 ms spin */
    server_reply(f, SOCKMODEL_PROBE, SOCKMODEL_ST_FOUND, 1, 2, 3, 0);
    return NULL;
}

static void test_spin_then_sleep(void **state)
{
    fixture_t *f = *state;
    tc_sockmodel_msg_info_t info;
    pthread_t t;

    /* with spinning on, a reply already there and one that is not yet
     * there (spin runs out, then the blocking read gets it) both work,
     * and a simulator that dies meanwhile is reported */
    f->conn.spin_us = 1000;
    server_reply(f, SOCKMODEL_PROBE, SOCKMODEL_ST_NONE, 0, 0, 0, 0);
    assert_int_equal(0, tc_sockmodel_conn_probe(&f->conn, &info));
    assert_int_equal(0, pthread_create(&t, NULL, late_probe_reply, f));
    assert_int_equal(1, tc_sockmodel_conn_probe(&f->conn, &info));
    pthread_join(t, NULL);
    assert_int_equal(3, info.len);
    server_expect(f, SOCKMODEL_PROBE, 0, 0, 0);
    server_expect(f, SOCKMODEL_PROBE, 0, 0, 0);
    shutdown(f->server, SHUT_WR);
    assert_int_equal(-ECONNRESET, tc_sockmodel_conn_probe(&f->conn, &info));
}

#ifdef SOCKMODEL_FEATURE_WAIT_RECV
static void test_wait_recv(void **state)
{
    fixture_t *f = *state;
    tc_sockmodel_msg_info_t info;
    char buf[16];

    /* the message comes with the WAITING_START answer */
    server_reply(f, SOCKMODEL_WAITING_START, SOCKMODEL_ST_OK, 3, 9, 4, 0);
    assert_int_equal(4, write(f->server, "ping", 4));
    server_reply(f, SOCKMODEL_WAITING_START, SOCKMODEL_ST_EXPIRED, 0, 0, 0, 0);
    assert_int_equal(1, tc_sockmodel_conn_wait_recv(&f->conn, 2000, buf, sizeof(buf), &info));
    assert_memory_equal("ping", buf, 4);
    assert_int_equal(3, info.src);
    assert_int_equal(9, info.tag);
    assert_int_equal(4, info.len);
    assert_int_equal(0, tc_sockmodel_conn_wait_recv(&f->conn, 2000, buf, sizeof(buf), &info));
    server_expect(f, SOCKMODEL_WAITING_START, 2000, SOCKMODEL_WAIT_RECV, 0);
    server_expect(f, SOCKMODEL_WAITING_START, 2000, SOCKMODEL_WAIT_RECV, 0);
    /* an announced length beyond the buffer is refused before reading */
    server_reply(f, SOCKMODEL_WAITING_START, SOCKMODEL_ST_OK, 0, 0, 17, 0);
    assert_int_equal(-EMSGSIZE, tc_sockmodel_conn_wait_recv(&f->conn, 1, buf, sizeof(buf), &info));
}
#endif

/* A pending WAITING_START never blocks the poll; a SEND meanwhile ends
 * the wait first; the wait's and the stop's replies are both read. */
static void test_poll_never_blocks(void **state)
{
    fixture_t *f = *state;
    tc_sockmodel_msg_info_t info;
    uint32_t status;
    struct iovec iov = {.iov_base = "abc", .iov_len = 3};
    char buf[16], payload[3];
    int i;

    assert_int_equal(0, tc_sockmodel_conn_wait_start(&f->conn, 5000, SOCKMODEL_WAIT_RECV));
    server_expect(f, SOCKMODEL_WAITING_START, 5000, SOCKMODEL_WAIT_RECV, 0);
    for (i = 0; i < 100; i++) {
        assert_int_equal(TC_SOCKMODEL_POLL_NOTYET,
                         tc_sockmodel_conn_poll(&f->conn, buf, sizeof(buf), &info, 0, &status));
    }
    assert_int_equal(100, f->conn.polls_empty);
    /* any other request with a reply must wait for the pending one */
    assert_int_equal(-EBUSY, tc_sockmodel_conn_probe_start(&f->conn));
    assert_int_equal(-EBUSY, tc_sockmodel_conn_finish(&f->conn));
    /* half a reply is not yet a reply */
    server_reply(f, SOCKMODEL_WAITING_START, SOCKMODEL_ST_STOPPED, 0, 0, 0, 0);
    assert_int_equal(0, tc_sockmodel_conn_send(&f->conn, 2, 7, &iov, 1, 3));
    server_expect(f, SOCKMODEL_WAITING_STOP, 0, 0, 0);
    server_expect(f, SOCKMODEL_SEND, 2, 7, 3);
    read_exact(f->server, payload, sizeof(payload));
    assert_memory_equal("abc", payload, 3);
    /* a second send writes no second stop */
    assert_int_equal(0, tc_sockmodel_conn_send(&f->conn, 1, 8, &iov, 1, 3));
    server_expect(f, SOCKMODEL_SEND, 1, 8, 3);
    read_exact(f->server, payload, sizeof(payload));
    server_reply(f, SOCKMODEL_WAITING_STOP, SOCKMODEL_ST_OK, 0, 0, 0, 0);
    assert_int_equal(TC_SOCKMODEL_POLL_NONE,
                     tc_sockmodel_conn_poll(&f->conn, buf, sizeof(buf), &info, 0, &status));
    assert_int_equal(SOCKMODEL_ST_STOPPED, status);
    assert_int_equal(0, f->conn.pending);
    assert_int_equal(1, f->conn.stops);
}

/* The reply a sleeping poller waits for, written by the simulator's
 * side a little later from another thread. */
static void *fd_sleep_late_reply(void *arg)
{
    fixture_t *f = arg;
    struct timespec ts = {0, 20 * 1000 * 1000};

    nanosleep(&ts, NULL);
    server_reply(f, SOCKMODEL_WAITING_START, SOCKMODEL_ST_EXPIRED, 0, 0, 0, 0);
    return NULL;
}

/* An idle progress call sleeps on the socket: it comes back with 0 when
 * nothing arrived within the bound, and is woken by an answer that
 * arrives while it sleeps (the bound is far longer than any wake-up, so
 * 1 means woken, not timed out); an unusable descriptor is an error. */
static void test_fd_sleep(void **state)
{
    fixture_t *f = *state;
    tc_sockmodel_msg_info_t info;
    uint32_t status;
    pthread_t tid;
    char buf[16];

    assert_int_equal(0, tc_sockmodel_conn_wait_start(&f->conn, 5000, 0));
    server_expect(f, SOCKMODEL_WAITING_START, 5000, 0, 0);
    assert_int_equal(0, tc_sockmodel_fd_sleep(f->conn.fd, 1000));
    assert_int_equal(TC_SOCKMODEL_POLL_NOTYET,
                     tc_sockmodel_conn_poll(&f->conn, buf, sizeof(buf), &info, 0, &status));
    assert_int_equal(0, pthread_create(&tid, NULL, fd_sleep_late_reply, f));
    assert_int_equal(1, tc_sockmodel_fd_sleep(f->conn.fd, 60u * 1000u * 1000u));
    assert_int_equal(0, pthread_join(tid, NULL));
    assert_int_equal(TC_SOCKMODEL_POLL_NONE,
                     tc_sockmodel_conn_poll(&f->conn, buf, sizeof(buf), &info, 0, &status));
    assert_int_equal(SOCKMODEL_ST_EXPIRED, status);
    assert_int_equal(-EBADF, tc_sockmodel_fd_sleep(-1, 1000));
    /* a simulator gone wakes the sleeper too: the next read reports it */
    close(f->server);
    f->server = -1;
    assert_int_equal(1, tc_sockmodel_fd_sleep(f->conn.fd, 60u * 1000u * 1000u));
}

/* The stop crossed a wait that had taken a message: the message is
 * delivered, then the stop's reply is read. A pending PROBE lets SENDs
 * through without a stop. */
static void test_poll_stop_crosses_message(void **state)
{
    fixture_t *f = *state;
    tc_sockmodel_msg_info_t info;
    uint32_t status;
    struct iovec iov = {.iov_base = "xy", .iov_len = 2};
    char buf[16];

    assert_int_equal(0, tc_sockmodel_conn_wait_start(&f->conn, 100, SOCKMODEL_WAIT_RECV));
    server_expect(f, SOCKMODEL_WAITING_START, 100, SOCKMODEL_WAIT_RECV, 0);
    assert_int_equal(0, tc_sockmodel_conn_wait_stop(&f->conn));
    server_expect(f, SOCKMODEL_WAITING_STOP, 0, 0, 0);
    server_reply(f, SOCKMODEL_WAITING_START, SOCKMODEL_ST_OK, 3, 9, 4, 0);
    assert_int_equal(4, write(f->server, "pong", 4));
    server_reply(f, SOCKMODEL_WAITING_STOP, SOCKMODEL_ST_OK, 0, 0, 0, 0);
    assert_int_equal(TC_SOCKMODEL_POLL_MSG,
                     tc_sockmodel_conn_poll(&f->conn, buf, sizeof(buf), &info, 0, &status));
    assert_memory_equal("pong", buf, 4);
    assert_int_equal(3, info.src);
    assert_int_equal(4, info.len);
    assert_int_equal(0, f->conn.pending);

    assert_int_equal(0, tc_sockmodel_conn_probe_start(&f->conn));
    server_expect(f, SOCKMODEL_PROBE, 0, 0, 0);
    assert_int_equal(0, tc_sockmodel_conn_send(&f->conn, 0, 1, &iov, 1, 2));
    server_expect(f, SOCKMODEL_SEND, 0, 1, 2);
    read_exact(f->server, buf, 2);
    assert_int_equal(1, f->conn.stops); /* the explicit one above only */
    server_reply(f, SOCKMODEL_PROBE, SOCKMODEL_ST_FOUND, 1, 5, 8, 0);
    assert_int_equal(TC_SOCKMODEL_POLL_FOUND,
                     tc_sockmodel_conn_poll(&f->conn, buf, sizeof(buf), &info, 1, &status));
    assert_int_equal(1, info.src);
    assert_int_equal(5, info.tag);
    assert_int_equal(8, info.len);
    /* a wrong status for the request is an error */
    assert_int_equal(0, tc_sockmodel_conn_probe_start(&f->conn));
    server_expect(f, SOCKMODEL_PROBE, 0, 0, 0);
    server_reply(f, SOCKMODEL_PROBE, SOCKMODEL_ST_EXPIRED, 0, 0, 0, 0);
    assert_int_equal(-EPROTO,
                     tc_sockmodel_conn_poll(&f->conn, buf, sizeof(buf), &info, 1, &status));
}

/* A simulator gone while a poll is pending: the peek says so. */
static void test_poll_dead_simulator(void **state)
{
    fixture_t *f = *state;
    tc_sockmodel_msg_info_t info;
    uint32_t status;
    char buf[16];

    assert_int_equal(0, tc_sockmodel_conn_wait_start(&f->conn, 100, 0));
    close(f->server);
    f->server = -1;
    assert_int_equal(-ECONNRESET,
                     tc_sockmodel_conn_poll(&f->conn, buf, sizeof(buf), &info, 0, &status));
}

static void test_recv_too_large(void **state)
{
    fixture_t *f = *state;
    tc_sockmodel_msg_info_t info;
    char buf[16];

    /* announced length beyond the buffer: refused, no byte read into buf */
    memset(buf, 'x', sizeof(buf));
    server_reply(f, SOCKMODEL_RECV, SOCKMODEL_ST_OK, 0, 0, 17, 0);
    assert_int_equal(-EMSGSIZE,
                     tc_sockmodel_conn_recv(&f->conn, buf, sizeof(buf), &info, NULL, NULL));
    assert_int_equal('x', buf[0]);
    /* and from a node that does not exist */
    server_reply(f, SOCKMODEL_RECV, SOCKMODEL_ST_OK, 4, 0, 1, 0);
    assert_int_equal(-EMSGSIZE,
                     tc_sockmodel_conn_recv(&f->conn, buf, sizeof(buf), &info, NULL, NULL));
}

static void test_wrong_reply(void **state)
{
    fixture_t *f = *state;
    tc_sockmodel_msg_info_t info;

    server_reply(f, SOCKMODEL_RANK, SOCKMODEL_ST_OK, 0, 0, 0, 0);
    assert_int_equal(-EPROTO, tc_sockmodel_conn_probe(&f->conn, &info));
    assert_non_null(strstr(f->conn.error, "RANK"));
}

static void test_truncated_reply(void **state)
{
    fixture_t *f = *state;
    tc_sockmodel_msg_info_t info;

    /* half a reply, then the simulator dies */
    assert_int_equal(10, write(f->server, "0123456789", 10));
    shutdown(f->server, SHUT_WR);
    assert_int_equal(-ECONNRESET, tc_sockmodel_conn_probe(&f->conn, &info));
    assert_non_null(strstr(f->conn.error, "closed"));
}

static void test_dead_simulator_send(void **state)
{
    fixture_t *f = *state;
    char byte = 1;
    struct iovec iov = {&byte, 1};

    close(f->server);
    f->server = -1;
    /* an error, never SIGPIPE */
    assert_true(tc_sockmodel_conn_send(&f->conn, 1, 0, &iov, 1, 1) < 0);
}

static void test_recv_truncated_payload(void **state)
{
    fixture_t *f = *state;
    tc_sockmodel_msg_info_t info;
    char buf[16];

    server_reply(f, SOCKMODEL_RECV, SOCKMODEL_ST_OK, 1, 0, 8, 0);
    assert_int_equal(3, write(f->server, "abc", 3));
    shutdown(f->server, SHUT_WR);
    assert_int_equal(-ECONNRESET,
                     tc_sockmodel_conn_recv(&f->conn, buf, sizeof(buf), &info, NULL, NULL));
}

static void test_finish(void **state)
{
    fixture_t *f = *state;

    server_reply(f, SOCKMODEL_FINISH, SOCKMODEL_ST_OK, 0, 0, 0, 123);
    assert_int_equal(0, tc_sockmodel_conn_finish(&f->conn));
    assert_int_equal(-1, f->conn.fd);
    server_expect(f, SOCKMODEL_FINISH, 0, 0, 0);
}

static void test_consumetime_counts_cpu(void **state)
{
    fixture_t *f = *state;
    unsigned char buf[SOCKMODEL_CMD_BYTES];
    tc_sockmodel_cmd_t cmd;
    volatile uint64_t sink = 0;
    uint64_t i;

    /* scale 1, cycle 4 ns: burn CPU, the next command reports it */
    f->conn.scale = 1.0;
    tc_sockmodel_conn_attach(&f->conn, f->conn.fd);
    for (i = 0; i < 20000000ull; i++) {
        sink += i;
    }
    assert_int_equal(0, tc_sockmodel_conn_consume(&f->conn));
    read_exact(f->server, buf, sizeof(buf));
    tc_sockmodel_cmd_decode(&cmd, buf);
    assert_int_equal(SOCKMODEL_CONSUMETIME, cmd.request);
    /* at least a microsecond of CPU went by: 250 cycles */
    assert_true(cmd.consumetime >= 250);
    assert_int_equal(cmd.consumetime, f->conn.cycles_reported);
}

/* ---- handshake over a real loopback listener ------------------------- */

typedef struct {
    int listener;
    uint32_t answer;
    uint32_t hello;
} hs_server_t;

static void *hs_server(void *arg)
{
    hs_server_t *s = arg;
    unsigned char buf[4];
    int fd = accept(s->listener, NULL, NULL);

    if (fd < 0) {
        return NULL;
    }
    read_exact(fd, buf, 4);
    s->hello = tc_sockmodel_get32(buf);
    tc_sockmodel_put32(buf, s->answer);
    (void) write(fd, buf, 4);
    close(fd);
    return NULL;
}

static int hs_listen(int *port)
{
    struct sockaddr_in sa;
    socklen_t len = sizeof(sa);
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(0, bind(fd, (struct sockaddr *) &sa, sizeof(sa)));
    assert_int_equal(0, listen(fd, 4));
    assert_int_equal(0, getsockname(fd, (struct sockaddr *) &sa, &len));
    *port = ntohs(sa.sin_port);
    return fd;
}

static int handshake(uint32_t want, uint32_t answer, tc_sockmodel_conn_t *c, uint32_t *hello)
{
    hs_server_t s;
    pthread_t t;
    int port, rc;

    s.listener = hs_listen(&port);
    s.answer = answer;
    s.hello = 0;
    assert_int_equal(0, pthread_create(&t, NULL, hs_server, &s));
    tc_sockmodel_conn_init(c, 4.0, 0.0, 5000);
    rc = tc_sockmodel_conn_connect(c, "127.0.0.1", port, want, 10000);
    pthread_join(t, NULL);
    close(s.listener);
    *hello = s.hello;
    return rc;
}

static void test_handshake(void **state)
{
    tc_sockmodel_conn_t c;
    uint32_t hello;

    (void) state;
    assert_int_equal(0, handshake(3, 3, &c, &hello));
    assert_int_equal(3, hello);
    assert_int_equal(3, c.rank);
    tc_sockmodel_conn_close(&c);

    assert_int_equal(0, handshake(SOCKMODEL_RANK_ANY, 1, &c, &hello));
    assert_int_equal(SOCKMODEL_RANK_ANY, hello);
    assert_int_equal(1, c.rank);
    tc_sockmodel_conn_close(&c);
}

static void test_handshake_refused(void **state)
{
    tc_sockmodel_conn_t c;
    uint32_t hello;

    (void) state;
    assert_int_equal(-EADDRINUSE, handshake(2, SOCKMODEL_RANK_REFUSED, &c, &hello));
    assert_non_null(strstr(c.error, "refused"));
    assert_int_equal(-1, c.fd);
    /* a different rank than asked for is a protocol error */
    assert_int_equal(-EPROTO, handshake(2, 0, &c, &hello));
}

static void test_handshake_timeout(void **state)
{
    tc_sockmodel_conn_t c;
    int port, listener;

    (void) state;
    /* a simulator that never starts the run: the wait is bounded */
    listener = hs_listen(&port);
    tc_sockmodel_conn_init(&c, 4.0, 0.0, 5000);
    assert_int_equal(-ETIMEDOUT, tc_sockmodel_conn_connect(&c, "127.0.0.1", port, 0, 200));
    assert_non_null(strstr(c.error, "did not start"));
    close(listener);
}

static void test_connect_nobody(void **state)
{
    tc_sockmodel_conn_t c;
    int port, listener;

    (void) state;
    listener = hs_listen(&port);
    close(listener);
    tc_sockmodel_conn_init(&c, 4.0, 0.0, 5000);
    assert_int_equal(-ECONNREFUSED, tc_sockmodel_conn_connect(&c, "127.0.0.1", port, 0, 50));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_address),
        cmocka_unit_test_setup_teardown(test_size, setup, teardown),
        cmocka_unit_test_setup_teardown(test_size_rank_outside, setup, teardown),
        cmocka_unit_test_setup_teardown(test_send_frames_payload, setup, teardown),
        cmocka_unit_test_setup_teardown(test_send_checks_limits, setup, teardown),
        cmocka_unit_test_setup_teardown(test_probe, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wait, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wait_bad_status, setup, teardown),
        cmocka_unit_test_setup_teardown(test_recv, setup, teardown),
        cmocka_unit_test_setup_teardown(test_recv_with_probe, setup, teardown),
        cmocka_unit_test_setup_teardown(test_spin_then_sleep, setup, teardown),
#ifdef SOCKMODEL_FEATURE_WAIT_RECV
        cmocka_unit_test_setup_teardown(test_wait_recv, setup, teardown),
#endif
        cmocka_unit_test_setup_teardown(test_poll_never_blocks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_poll_stop_crosses_message, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fd_sleep, setup, teardown),
        cmocka_unit_test_setup_teardown(test_poll_dead_simulator, setup, teardown),
        cmocka_unit_test_setup_teardown(test_recv_too_large, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wrong_reply, setup, teardown),
        cmocka_unit_test_setup_teardown(test_truncated_reply, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dead_simulator_send, setup, teardown),
        cmocka_unit_test_setup_teardown(test_recv_truncated_payload, setup, teardown),
        cmocka_unit_test_setup_teardown(test_finish, setup, teardown),
        cmocka_unit_test_setup_teardown(test_consumetime_counts_cpu, setup, teardown),
        cmocka_unit_test(test_handshake),
        cmocka_unit_test(test_handshake_refused),
        cmocka_unit_test(test_handshake_timeout),
        cmocka_unit_test(test_connect_nobody),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
