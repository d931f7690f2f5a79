/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * swf_intruder.c: a SockModel node that is not a process of the MPI job
 * sharing its simulator. It sends messages that carry btl_swf's marker and
 * ob1's tags, with garbage payloads, to every job node, then finishes.
 * btl_swf must drop and count them (tests/swf/external.sh).
 *
 * Usage: swf_intruder HOST:PORT MY_NODE JOB_NODES COUNT
 */

#include <stdio.h>
#include <stdlib.h>

#include "tc_sockmodel_client.h"

int main(int argc, char **argv)
{
    tc_sockmodel_client_t c;
    const char *why = "";
    unsigned char junk[64];
    uint32_t me, job, count, i, d;

    if (argc != 5) {
        fprintf(stderr, "usage: %s HOST:PORT MY_NODE JOB_NODES COUNT\n", argv[0]);
        return 2;
    }
    me = (uint32_t) strtoul(argv[2], NULL, 10);
    job = (uint32_t) strtoul(argv[3], NULL, 10);
    count = (uint32_t) strtoul(argv[4], NULL, 10);
    if (0 != tc_sockmodel_client_connect(&c, argv[1], me, NULL, &why)) {
        fprintf(stderr, "swf_intruder: %s\n", why);
        return 1;
    }
    for (i = 0; i < count; i++) {
        for (size_t k = 0; k < sizeof(junk); k++) {
            junk[k] = (unsigned char) (k * 37u + i * 11u + 0xA5u);
        }
        for (d = 0; d < job; d++) {
            /* "SWF" marker, then ob1's active-message tags 65.. */
            if (0 !=
                tc_sockmodel_client_send(&c, d, 0x53574600u | (65u + i % 4u), junk, sizeof(junk))) {
                fprintf(stderr, "swf_intruder: send failed\n");
                return 1;
            }
        }
    }
    printf("swf_intruder: sent %u messages to each of %u nodes\n", count, job);
    return 0 == tc_sockmodel_client_finish(&c) ? 0 : 1;
}
