/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_sockmodel_codec.c: the SockModel codec in common/tc_sockmodel.h:
 * exact bytes on the wire (network order), round trips, the request
 * codes fixed by docs/sockmodel.md, and the command checks.
 */

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "tc_sockmodel.h"

static void test_codes_are_fixed(void **state)
{
    (void) state;
    /* the numbers are the protocol: docs/sockmodel.md lists them */
    assert_int_equal(SOCKMODEL_FINISH, 1);
    assert_int_equal(SOCKMODEL_SIZE, 2);
    assert_int_equal(SOCKMODEL_RANK, 3);
    assert_int_equal(SOCKMODEL_CONSUMETIME, 4);
    assert_int_equal(SOCKMODEL_SEND, 5);
    assert_int_equal(SOCKMODEL_RECV, 6);
    assert_int_equal(SOCKMODEL_RECVFROM, 7);
    assert_int_equal(SOCKMODEL_RECVTAG, 8);
    assert_int_equal(SOCKMODEL_PROBE, 9);
    assert_int_equal(SOCKMODEL_PROBEFROM, 10);
    assert_int_equal(SOCKMODEL_PROBETAG, 11);
    assert_int_equal(SOCKMODEL_BARRIER_INIT, 12);
    assert_int_equal(SOCKMODEL_BARRIER_ENTER, 13);
    assert_int_equal(SOCKMODEL_WAITING_START, 14);
    assert_int_equal(SOCKMODEL_WAITING_STOP, 15);
    assert_int_equal(SOCKMODEL_WATCH, 16);
    assert_int_equal(SOCKMODEL_FEATURE_WATCH, 2);
    assert_int_equal(SOCKMODEL_RANK_ANY, 99999);
    assert_int_equal(SOCKMODEL_CMD_BYTES, 24);
    assert_int_equal(SOCKMODEL_REPLY_BYTES, 32);
    assert_int_equal(SOCKMODEL_MAX_MSG_DEFAULT, 64 * 1024 * 1024);
    assert_string_equal(tc_sockmodel_request_name(SOCKMODEL_WAITING_START), "WAITING_START");
    assert_string_equal(tc_sockmodel_request_name(0), "UNKNOWN");
    assert_string_equal(tc_sockmodel_request_name(SOCKMODEL_WATCH), "WATCH");
    assert_string_equal(tc_sockmodel_request_name(17), "UNKNOWN");
    assert_string_equal(tc_sockmodel_status_name(SOCKMODEL_ST_EXPIRED), "EXPIRED");
    assert_string_equal(tc_sockmodel_status_name(99), "UNKNOWN");
}

static void test_cmd_wire_bytes(void **state)
{
    static const unsigned char want[24] = {0, 0, 0, 5, 0, 0, 0, 3, 0x12, 0x34, 0x56, 0x78,
                                           0, 0, 1, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xfe};
    unsigned char buf[SOCKMODEL_CMD_BYTES];
    tc_sockmodel_cmd_t c, d;

    (void) state;
    tc_sockmodel_cmd_make(&c, SOCKMODEL_SEND, 3, 0x12345678u, 256, 0, 0xfffffffeu);
    tc_sockmodel_cmd_encode(buf, &c);
    assert_memory_equal(buf, want, sizeof(want));
    tc_sockmodel_cmd_decode(&d, buf);
    assert_memory_equal(&c, &d, sizeof(c));
}

static void test_reply_wire_bytes(void **state)
{
    static const unsigned char want[32] = {0, 0, 0, 6, 0, 0, 0, 0, 0, 0, 0, 1, 0,    0, 0, 9,
                                           0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 2, 0x80, 0, 0, 1};
    unsigned char buf[SOCKMODEL_REPLY_BYTES];
    tc_sockmodel_reply_t r = {SOCKMODEL_RECV, SOCKMODEL_ST_OK, {1, 9, 4, 0}, 0x0000000280000001ull};
    tc_sockmodel_reply_t d;

    (void) state;
    tc_sockmodel_reply_encode(buf, &r);
    assert_memory_equal(buf, want, sizeof(want));
    tc_sockmodel_reply_decode(&d, buf);
    assert_int_equal(d.code, r.code);
    assert_int_equal(d.status, r.status);
    assert_memory_equal(d.arg, r.arg, sizeof(r.arg));
    assert_true(d.clock_ns == r.clock_ns);
    assert_true(tc_sockmodel_reply_has_payload(&d));
    d.code = SOCKMODEL_PROBE;
    assert_false(tc_sockmodel_reply_has_payload(&d));
    d.code = SOCKMODEL_RECVTAG;
    assert_true(tc_sockmodel_reply_has_payload(&d));
}

static void test_roundtrip_many(void **state)
{
    unsigned char buf[SOCKMODEL_REPLY_BYTES];
    uint32_t x = 12345;

    (void) state;
    for (int i = 0; i < 10000; i++) {
        tc_sockmodel_cmd_t c, d;
        tc_sockmodel_reply_t r, q;
        uint32_t v[8];
        for (int k = 0; k < 8; k++) {
            x = x * 1103515245u + 12345u;
            v[k] = x ^ (x >> 7);
        }
        tc_sockmodel_cmd_make(&c, v[0], v[1], v[2], v[3], v[4], v[5]);
        tc_sockmodel_cmd_encode(buf, &c);
        tc_sockmodel_cmd_decode(&d, buf);
        assert_memory_equal(&c, &d, sizeof(c));
        r.code = v[0];
        r.status = v[1];
        memcpy(r.arg, &v[2], sizeof(r.arg));
        r.clock_ns = ((uint64_t) v[6] << 32) | v[7];
        tc_sockmodel_reply_encode(buf, &r);
        tc_sockmodel_reply_decode(&q, buf);
        assert_int_equal(q.code, r.code);
        assert_int_equal(q.status, r.status);
        assert_memory_equal(q.arg, r.arg, sizeof(r.arg));
        assert_true(q.clock_ns == r.clock_ns);
    }
}

static void test_cmd_check(void **state)
{
    tc_sockmodel_cmd_t c;

    (void) state;
    tc_sockmodel_cmd_make(&c, SOCKMODEL_SEND, 3, 0, 100, 0, 0);
    assert_null(tc_sockmodel_cmd_check(&c, 4, 1000));
    c.param[0] = 4; /* no such node */
    assert_non_null(tc_sockmodel_cmd_check(&c, 4, 1000));
    c.param[0] = 0;
    c.param[2] = 1001; /* above the limit */
    assert_non_null(tc_sockmodel_cmd_check(&c, 4, 1000));
    c.param[2] = 0xffffffffu;
    assert_non_null(tc_sockmodel_cmd_check(&c, 4, 1000));
    c.param[2] = 1000; /* exactly the limit */
    assert_null(tc_sockmodel_cmd_check(&c, 4, 1000));
    c.param[2] = 0; /* empty messages are fine */
    assert_null(tc_sockmodel_cmd_check(&c, 4, 1000));

    tc_sockmodel_cmd_make(&c, SOCKMODEL_RECVFROM, 4, 0, 0, 0, 0);
    assert_non_null(tc_sockmodel_cmd_check(&c, 4, 1000));

    c.param[0] = 3;
    assert_null(tc_sockmodel_cmd_check(&c, 4, 1000));
    /* WAITING_START: any timeout, known flags only */
    tc_sockmodel_cmd_make(&c, SOCKMODEL_WAITING_START, 0xffffffffu, SOCKMODEL_WAIT_RECV, 0, 0, 0);
    assert_null(tc_sockmodel_cmd_check(&c, 4, 1000));
    c.param[1] = 0x2;
    assert_non_null(tc_sockmodel_cmd_check(&c, 4, 1000));
    /* WATCH: any tag, no flags */
    tc_sockmodel_cmd_make(&c, SOCKMODEL_WATCH, 0xffffffffu, 0, 0, 0, 0);
    assert_null(tc_sockmodel_cmd_check(&c, 4, 1000));
    c.param[1] = 1;
    assert_non_null(tc_sockmodel_cmd_check(&c, 4, 1000));
    tc_sockmodel_cmd_make(&c, SOCKMODEL_PROBEFROM, 99999, 0, 0, 0, 0);
    assert_non_null(tc_sockmodel_cmd_check(&c, 4, 1000));
    tc_sockmodel_cmd_make(&c, SOCKMODEL_BARRIER_INIT, 5, 0, 0, 0, 0);
    assert_non_null(tc_sockmodel_cmd_check(&c, 4, 1000));
    c.param[0] = 0;
    assert_null(tc_sockmodel_cmd_check(&c, 4, 1000));

    /* every known code without parameters passes; unknown ones do not */
    for (uint32_t code = 0; code < 40; code++) {
        tc_sockmodel_cmd_make(&c, code, 0, 0, 0, 0, 0);
        if (code >= SOCKMODEL_REQUEST_MIN && code <= SOCKMODEL_REQUEST_MAX) {
            assert_null(tc_sockmodel_cmd_check(&c, 4, 1000));
            assert_true(tc_sockmodel_request_valid(code));
        } else {
            assert_non_null(tc_sockmodel_cmd_check(&c, 4, 1000));
            assert_false(tc_sockmodel_request_valid(code));
        }
    }
    tc_sockmodel_cmd_make(&c, 0x41414141u, 0, 0, 0, 0, 0);
    assert_non_null(tc_sockmodel_cmd_check(&c, 4, 1000));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_codes_are_fixed),  cmocka_unit_test(test_cmd_wire_bytes),
        cmocka_unit_test(test_reply_wire_bytes), cmocka_unit_test(test_roundtrip_many),
        cmocka_unit_test(test_cmd_check),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
