/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * swf_client.h: a small blocking SockModel client used by the load
 * generator, the example and the tests.  One connection, plain
 * read/write; no Open MPI.
 */

#ifndef SWF_CLIENT_H
#define SWF_CLIENT_H

#include <stdint.h>
#include <stddef.h>

#include "tc_sockmodel.h"

typedef struct swf_client {
    int fd;
    uint32_t rank;
    uint32_t size;
    uint32_t max_msg;
    uint32_t model;
} swf_client_t;

/* Connect to "HOST:PORT" and do the handshake (rank or SOCKMODEL_RANK_ANY).
 * Blocks until the simulator has all its nodes.  Returns 0, or -1 with
 * errno-style reason in *why. */
int swf_client_connect(swf_client_t *c, const char *hostport, uint32_t rank,
                       const char **why);
/* Read HOST:PORT from a port file, waiting up to timeout_ms for it. */
int swf_client_read_port_file(const char *path, char *buf, size_t n, int timeout_ms);

int swf_client_write_all(int fd, const void *buf, size_t len);
int swf_client_read_all(int fd, void *buf, size_t len);

/* send one command (and payload for SEND) */
int swf_client_cmd(swf_client_t *c, uint32_t req, uint32_t p0, uint32_t p1, uint32_t p2,
                   uint32_t consumetime, const void *payload);
/* read one reply; if it has a payload, read it into buf (up to cap bytes,
 * the rest is read and discarded) */
int swf_client_reply(swf_client_t *c, sockmodel_reply_t *r, void *buf, size_t cap);
/* command + its reply, checking the reply code */
int swf_client_call(swf_client_t *c, uint32_t req, uint32_t p0, uint32_t p1,
                    sockmodel_reply_t *r, void *buf, size_t cap);
int swf_client_send(swf_client_t *c, uint32_t dest, uint32_t tag, const void *buf,
                    uint32_t len);
int swf_client_finish(swf_client_t *c);
void swf_client_close(swf_client_t *c);

#endif /* SWF_CLIENT_H */
