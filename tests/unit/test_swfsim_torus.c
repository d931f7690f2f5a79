/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_swfsim_torus.c: the torus timing model against hand-computed
 * cases (docs/swfsim.md): one hop, several hops, wrap-around takes the
 * shorter way, messages sharing a link serialise, disjoint paths do not
 * interfere, and the default dimensions.
 *
 * Defaults: cycle 4 ns, 250 MB/s (4000 ps per byte), 8-byte header
 * (Thdr = 32 000 ps), router 16 cycles (Tr = 64 000 ps); P = Thdr + Tr =
 * 96 000 ps.  A 100-byte payload holds each link for Thdr + 400 000 =
 * 432 000 ps.  Delivery = S + (hops + 1) * P + Thdr + Tpay.
 */

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <cmocka.h>

#include "swfsim.h"

#define P 96000ull
#define HOLD 432000ull

static swfsim_torus_t *make_torus(uint32_t nodes)
{
    swfsim_config_t cfg;
    swfsim_torus_t *t = calloc(1, sizeof(*t));

    assert_non_null(t);
    swfsim_config_defaults(&cfg);
    cfg.nodes = nodes;
    assert_int_equal(swfsim_torus_init(t, &cfg), 0);
    return t;
}

static void free_torus(swfsim_torus_t *t)
{
    swfsim_torus_fini(t);
    free(t);
}

static void test_dims(void **state)
{
    static const uint32_t n[] = {1, 2, 3, 4, 5, 8, 9, 10, 16, 17};
    static const uint32_t x[] = {1, 2, 2, 2, 3, 3, 3, 4, 4, 5};
    static const uint32_t y[] = {1, 1, 2, 2, 2, 3, 3, 3, 4, 4};
    (void) state;
    for (unsigned i = 0; i < sizeof(n) / sizeof(n[0]); i++) {
        uint32_t dx, dy;
        swfsim_torus_dims(n[i], &dx, &dy);
        assert_int_equal(dx, x[i]);
        assert_int_equal(dy, y[i]);
    }
}

static void test_serialisation(void **state)
{
    swfsim_torus_t *t = make_torus(4);

    (void) state;
    assert_int_equal(t->t_hdr, 32000);
    assert_int_equal(t->t_router, 64000);
    assert_int_equal(swfsim_torus_ser(t, 0), 0);
    assert_int_equal(swfsim_torus_ser(t, 1), 4000);
    assert_int_equal(swfsim_torus_ser(t, 1024), 4096000);
    /* 64 MiB does not overflow: 67108864 * 4000 ps */
    assert_true(swfsim_torus_ser(t, 64ull << 20) == 268435456000ull);
    t->link_bw = 300000000ull; /* 3333.3 ps per byte: rounded up */
    assert_int_equal(swfsim_torus_ser(t, 1), 3334);
    assert_int_equal(swfsim_torus_ser(t, 3), 10000);
    free_torus(t);
}

static void test_route_shapes(void **state)
{
    swfsim_torus_t *t = make_torus(16); /* 4x4 */
    uint32_t path[16];
    uint32_t base = 4 * 16;

    (void) state;
    /* one hop east */
    assert_int_equal(swfsim_torus_route(t, 0, 1, path, 16), 3);
    assert_int_equal(path[0], base + 0); /* inj0 */
    assert_int_equal(path[1], 0 * 4 + SWFSIM_DIR_XP);
    assert_int_equal(path[2], base + 16 + 1); /* ej1 */
    /* 0 -> 3: west across the wrap is 1 hop, east would be 3 */
    assert_int_equal(swfsim_torus_route(t, 0, 3, path, 16), 3);
    assert_int_equal(path[1], 0 * 4 + SWFSIM_DIR_XM);
    /* 0 -> 12 (0,3): north-wrap, one hop on -y */
    assert_int_equal(swfsim_torus_route(t, 0, 12, path, 16), 3);
    assert_int_equal(path[1], 0 * 4 + SWFSIM_DIR_YM);
    /* 0 -> 10 (2,2): ties go the positive way, x first: 4 hops */
    assert_int_equal(swfsim_torus_route(t, 0, 10, path, 16), 6);
    assert_int_equal(path[1], 0 * 4 + SWFSIM_DIR_XP);
    assert_int_equal(path[2], 1 * 4 + SWFSIM_DIR_XP);
    assert_int_equal(path[3], 2 * 4 + SWFSIM_DIR_YP);
    assert_int_equal(path[4], 6 * 4 + SWFSIM_DIR_YP);
    assert_int_equal(path[5], base + 16 + 10);
    /* 5 -> 5: host port to host port through its own router */
    assert_int_equal(swfsim_torus_route(t, 5, 5, path, 16), 2);
    free_torus(t);
}

static void test_one_hop(void **state)
{
    swfsim_torus_t *t = make_torus(16);
    uint64_t s;

    (void) state;
    assert_int_equal(swfsim_torus_transfer(t, 0, 1, 100, 0, &s), 2 * P + HOLD); /* 624 ns */
    assert_int_equal(s, 0);
    /* the link's bookkeeping: 108 wire bytes, held HOLD */
    assert_int_equal(t->links[0 * 4 + SWFSIM_DIR_XP].bytes, 108);
    assert_int_equal(t->links[0 * 4 + SWFSIM_DIR_XP].busy_ps, HOLD);
    assert_int_equal(t->links[0 * 4 + SWFSIM_DIR_XP].free_at, P + HOLD);
    free_torus(t);
}

static void test_several_hops(void **state)
{
    swfsim_torus_t *t = make_torus(16);

    (void) state;
    /* 4 hops: 5 routers, 6 links */
    assert_int_equal(swfsim_torus_transfer(t, 0, 10, 100, 1000, NULL), 1000 + 5 * P + HOLD);
    /* 0-byte message: only the header */
    assert_int_equal(swfsim_torus_transfer(t, 5, 6, 0, 10000000, NULL), 10000000 + 2 * P + 32000);
    free_torus(t);
}

static void test_wraparound_shorter(void **state)
{
    swfsim_torus_t *t = make_torus(16);

    (void) state;
    /* 0 -> 3 is one hop across the wrap, same time as 0 -> 1 */
    assert_int_equal(swfsim_torus_transfer(t, 0, 3, 100, 0, NULL), 2 * P + HOLD);
    /* 15 (3,3) -> 0 (0,0): one hop in x and one in y, both wrapping */
    assert_int_equal(swfsim_torus_transfer(t, 15, 0, 100, 0, NULL), 3 * P + HOLD);
    free_torus(t);
}

static void test_shared_link_serialises(void **state)
{
    swfsim_torus_t *t = make_torus(16);
    uint64_t a, b, s;

    (void) state;
    /* A: 0 -> 2 over r0+x, r1+x; B: 1 -> 2 over r1+x, both to ej2 */
    a = swfsim_torus_transfer(t, 0, 2, 100, 0, NULL);
    assert_int_equal(a, 3 * P + HOLD); /* 720 ns */
    b = swfsim_torus_transfer(t, 1, 2, 100, 0, &s);
    /* B's head may enter r1+x (its link 1) only when A's tail has left it
     * at 2P + HOLD, so it starts at 2P + HOLD - P */
    assert_int_equal(s, P + HOLD);         /* 528 ns */
    assert_int_equal(b, s + 2 * P + HOLD); /* 1152 ns */
    assert_true(b > 2 * P + HOLD);         /* slower than alone */
    free_torus(t);
}

static void test_same_source_in_order(void **state)
{
    swfsim_torus_t *t = make_torus(16);
    uint64_t a, b;

    (void) state;
    a = swfsim_torus_transfer(t, 0, 1, 100, 0, NULL);
    b = swfsim_torus_transfer(t, 0, 1, 100, 0, NULL);
    assert_int_equal(a, 2 * P + HOLD);
    assert_int_equal(b, HOLD + 2 * P + HOLD); /* waits for inj0 */
    assert_true(b > a);
    /* a third one much later does not wait */
    assert_int_equal(swfsim_torus_transfer(t, 0, 1, 100, 5000000, NULL), 5000000 + 2 * P + HOLD);
    free_torus(t);
}

static void test_disjoint_paths_independent(void **state)
{
    swfsim_torus_t *t = make_torus(16);

    (void) state;
    assert_int_equal(swfsim_torus_transfer(t, 0, 1, 100, 0, NULL), 2 * P + HOLD);
    assert_int_equal(swfsim_torus_transfer(t, 2, 3, 100, 0, NULL), 2 * P + HOLD);
    /* opposite direction on the same pair of routers is another link */
    assert_int_equal(swfsim_torus_transfer(t, 1, 0, 100, 0, NULL), 2 * P + HOLD);
    assert_int_equal(swfsim_torus_transfer(t, 4, 4, 100, 0, NULL), P + HOLD);
    free_torus(t);
}

static void test_custom_parameters(void **state)
{
    swfsim_config_t cfg;
    swfsim_torus_t t;

    (void) state;
    swfsim_config_defaults(&cfg);
    cfg.nodes = 6;
    cfg.torus_x = 6;
    cfg.torus_y = 1; /* a ring */
    cfg.router_cycles = 0;
    cfg.header_bytes = 0;
    assert_int_equal(swfsim_torus_init(&t, &cfg), 0);
    /* 0 -> 3 on a 6-ring: 3 hops either way, the positive one */
    assert_int_equal(swfsim_torus_transfer(&t, 0, 3, 10, 0, NULL), 40000);
    assert_int_equal(t.links[2 * 4 + SWFSIM_DIR_XP].packets, 1);
    assert_int_equal(t.links[0 * 4 + SWFSIM_DIR_XM].packets, 0);
    swfsim_torus_fini(&t);
    cfg.torus_x = 2;
    cfg.torus_y = 2; /* too small for 6 */
    assert_int_equal(swfsim_torus_init(&t, &cfg), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dims),
        cmocka_unit_test(test_serialisation),
        cmocka_unit_test(test_route_shapes),
        cmocka_unit_test(test_one_hop),
        cmocka_unit_test(test_several_hops),
        cmocka_unit_test(test_wraparound_shorter),
        cmocka_unit_test(test_shared_link_serialises),
        cmocka_unit_test(test_same_source_in_order),
        cmocka_unit_test(test_disjoint_paths_independent),
        cmocka_unit_test(test_custom_parameters),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
