/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * swf_client_example.c: the smallest useful SockModel client, as a guide
 * for writing one.  Run two of them against "swfsim --nodes 2": each asks
 * for any rank, rank 0 sends a greeting to rank 1, which waits for it with
 * the report's probe-then-wait strategy and prints it.
 *
 *   swfsim --nodes 2 --port-file /tmp/swf.port &
 *   swf_client_example $(cat /tmp/swf.port) & swf_client_example $(cat /tmp/swf.port)
 */

#include <stdio.h>
#include <string.h>

#include "tc_sockmodel_client.h"

/* Wait for any message: probe three times, then WAITING_START with a
 * timeout that grows by 1 ms per idle round up to 100 ms. */
static int wait_for_message(tc_sockmodel_client_t *c, tc_sockmodel_reply_t *info)
{
    uint32_t timeout_us = 1000;

    for (int round = 0;; round++) {
        uint32_t req = round < 3 ? SOCKMODEL_PROBE : SOCKMODEL_WAITING_START;
        if (0 != tc_sockmodel_client_call(c, req, round < 3 ? 0 : timeout_us, 0, info, NULL, 0)) {
            return -1;
        }
        if (SOCKMODEL_ST_FOUND == info->status) {
            return 0;
        }
        if (round >= 3 && timeout_us < 100000) {
            timeout_us += 1000;
        }
    }
}

int main(int argc, char **argv)
{
    tc_sockmodel_client_t c;
    tc_sockmodel_reply_t r;
    const char *why;
    char buf[256];

    if (argc != 2) {
        fprintf(stderr, "usage: %s HOST:PORT\n", argv[0]);
        return 2;
    }
    if (0 != tc_sockmodel_client_connect(&c, argv[1], SOCKMODEL_RANK_ANY, NULL, &why)) {
        fprintf(stderr, "connect: %s\n", why);
        return 1;
    }
    printf("rank %u of %u (%s model, messages up to %u bytes)\n", c.rank, c.size,
           c.model == SOCKMODEL_MODEL_TORUS ? "torus" : "simpel", c.max_msg);
    if (0 == c.rank && c.size > 1) {
        const char *hello = "hello from rank 0";
        tc_sockmodel_client_send(&c, 1, 42, hello, (uint32_t) strlen(hello) + 1);
    } else if (1 == c.rank) {
        if (0 != wait_for_message(&c, &r)) {
            return 1;
        }
        printf("message from %u, tag %u, %u bytes waiting\n", r.arg[0], r.arg[1], r.arg[2]);
        if (0 !=
            tc_sockmodel_client_call(&c, SOCKMODEL_RECVFROM, r.arg[0], 0, &r, buf,
                                     sizeof(buf) - 1)) {
            return 1;
        }
        buf[r.arg[2] < sizeof(buf) ? r.arg[2] : sizeof(buf) - 1] = '\0';
        printf("received \"%s\" at simulated time %llu ns\n", buf, (unsigned long long) r.clock_ns);
    }
    return 0 == tc_sockmodel_client_finish(&c) ? 0 : 1;
}
