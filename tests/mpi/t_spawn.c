/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * t_spawn.c: MPI dynamic processes. The job spawns TSPAWN_CHILDREN copies
 * of this program (a second job); every parent rank exchanges a message
 * of each threshold size with every child in both directions, the
 * children pass a ring among themselves, parents and children merge into
 * one intracommunicator for an allreduce and an alltoall, then the
 * children connect to a port the parents open (MPI_Comm_connect/accept)
 * and exchange once more over that second intercommunicator. Every
 * payload is a pattern of (sender, sequence); the children's error count
 * comes back to the parents, and both communicators are disconnected.
 */

#include "tmpi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TSPAWN_CHILDREN 2
#define TSPAWN_MAX_LEN (256 * 1024)
#define TSPAWN_PARENT_SRC(r) (1000 + (r))
#define TSPAWN_CHILD_SRC(r) (2000 + (r))

/* every parent rank with every child, both ways, sizes up to the cap:
 * parents send first, so the two sides never both wait to receive */
static void tspawn_exchange(MPI_Comm inter, int parent, uint32_t seq0, const char *what)
{
    int me, remote;
    char *buf = tmpi_malloc(TSPAWN_MAX_LEN);

    MPI_Comm_rank(inter, &me);
    MPI_Comm_remote_size(inter, &remote);
    for (int s = 0; s < tmpi_nsizes && tmpi_sizes[s] <= TSPAWN_MAX_LEN; ++s) {
        size_t len = tmpi_sizes[s];
        uint32_t seq = seq0 + (uint32_t) s;

        for (int peer = 0; peer < remote; ++peer) {
            int mysrc = parent ? TSPAWN_PARENT_SRC(me) : TSPAWN_CHILD_SRC(me);
            int peersrc = parent ? TSPAWN_CHILD_SRC(peer) : TSPAWN_PARENT_SRC(peer);
            MPI_Status st;
            char label[96];

            snprintf(label, sizeof(label), "%s %zu B from %s %d", what, len,
                     parent ? "child" : "parent", peer);
            if (parent) {
                tmpi_fill(buf, len, mysrc, seq);
                MPI_Send(buf, (int) len, MPI_BYTE, peer, s, inter);
                memset(buf, 0, len);
                MPI_Recv(buf, (int) len, MPI_BYTE, peer, s, inter, &st);
            } else {
                MPI_Recv(buf, (int) len, MPI_BYTE, peer, s, inter, &st);
            }
            tmpi_check_status(&st, peer, s, (int) len, label);
            tmpi_check(buf, len, peersrc, seq, label);
            if (!parent) {
                tmpi_fill(buf, len, mysrc, seq);
                MPI_Send(buf, (int) len, MPI_BYTE, peer, s, inter);
            }
        }
    }
    free(buf);
}

/* the children's ring over their own MPI_COMM_WORLD */
static void tspawn_child_ring(void)
{
    int next = (tmpi_rank + 1) % tmpi_size, prev = (tmpi_rank + tmpi_size - 1) % tmpi_size;
    char *out = tmpi_malloc(TSPAWN_MAX_LEN), *in = tmpi_malloc(TSPAWN_MAX_LEN);

    for (int s = 0; s < tmpi_nsizes && tmpi_sizes[s] <= TSPAWN_MAX_LEN; ++s) {
        size_t len = tmpi_sizes[s];
        MPI_Status st;

        tmpi_fill(out, len, TSPAWN_CHILD_SRC(tmpi_rank), 500u + (uint32_t) s);
        MPI_Sendrecv(out, (int) len, MPI_BYTE, next, s, in, (int) len, MPI_BYTE, prev, s,
                     MPI_COMM_WORLD, &st);
        tmpi_check_status(&st, prev, s, (int) len, "children's ring");
        tmpi_check(in, len, TSPAWN_CHILD_SRC(prev), 500u + (uint32_t) s, "children's ring");
    }
    free(out);
    free(in);
}

/* parents and children as one communicator: exact sums and a pattern
 * alltoall, the traffic of MPI_Intercomm_merge's users */
static void tspawn_merged(MPI_Comm inter, int parent)
{
    MPI_Comm all;
    int rank, size, in, sum = -1;
    const size_t blk = 4096;
    char *sbuf, *rbuf;

    MPI_Intercomm_merge(inter, parent ? 0 : 1, &all);
    MPI_Comm_rank(all, &rank);
    MPI_Comm_size(all, &size);
    in = rank;
    MPI_Allreduce(&in, &sum, 1, MPI_INT, MPI_SUM, all);
    if (sum != size * (size - 1) / 2) {
        tmpi_error("merged allreduce gave %d, expected %d", sum, size * (size - 1) / 2);
    }
    sbuf = tmpi_malloc(blk * (size_t) size);
    rbuf = tmpi_malloc(blk * (size_t) size);
    for (int i = 0; i < size; ++i) {
        tmpi_fill(sbuf + blk * (size_t) i, blk, rank, 700u + (uint32_t) i);
    }
    MPI_Alltoall(sbuf, (int) blk, MPI_BYTE, rbuf, (int) blk, MPI_BYTE, all);
    for (int i = 0; i < size; ++i) {
        tmpi_check(rbuf + blk * (size_t) i, blk, i, 700u + (uint32_t) rank, "merged alltoall");
    }
    free(sbuf);
    free(rbuf);
    MPI_Comm_free(&all);
}

/* connect/accept: parent rank 0 opens a port and gives its name to the
 * children over the spawn intercommunicator */
static void tspawn_connect(MPI_Comm inter, int parent)
{
    char port[MPI_MAX_PORT_NAME];
    MPI_Comm second;

    memset(port, 0, sizeof(port));
    if (parent) {
        if (0 == tmpi_rank) {
            MPI_Open_port(MPI_INFO_NULL, port);
        }
        MPI_Bcast(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0 == tmpi_rank ? MPI_ROOT : MPI_PROC_NULL,
                  inter);
        MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &second);
    } else {
        MPI_Bcast(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, inter);
        if ('\0' == port[0]) {
            tmpi_error("no port name from the parents");
            return;
        }
        MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &second);
    }
    tspawn_exchange(second, parent, 300u, "connect/accept");
    MPI_Comm_disconnect(&second);
    if (parent && 0 == tmpi_rank) {
        MPI_Close_port(port);
    }
}

int main(int argc, char **argv)
{
    MPI_Comm parent_comm, inter;
    int parent, errcodes[TSPAWN_CHILDREN];
    long child_errors = 0, mine;
    char detail[96];

    tmpi_init(&argc, &argv, "spawn");
    MPI_Comm_get_parent(&parent_comm);
    parent = MPI_COMM_NULL == parent_comm;
    if (parent) {
        char *child_argv[] = {"child", NULL};

        for (int i = 0; i < TSPAWN_CHILDREN; ++i) {
            errcodes[i] = -1;
        }
        MPI_Comm_spawn(argv[0], child_argv, TSPAWN_CHILDREN, MPI_INFO_NULL, 0, MPI_COMM_WORLD,
                       &inter, errcodes);
        for (int i = 0; i < TSPAWN_CHILDREN; ++i) {
            if (MPI_SUCCESS != errcodes[i]) {
                tmpi_error("child %d: spawn error code %d", i, errcodes[i]);
            }
        }
    } else {
        inter = parent_comm;
    }

    tspawn_exchange(inter, parent, 0u, "spawn intercomm");
    if (!parent) {
        tspawn_child_ring();
    }
    tspawn_merged(inter, parent);
    tspawn_connect(inter, parent);

    /* the children's errors, summed on child 0, to parent rank 0 */
    mine = tmpi_errors;
    if (parent) {
        if (0 == tmpi_rank) {
            MPI_Recv(&child_errors, 1, MPI_LONG, 0, 99, inter, MPI_STATUS_IGNORE);
            tmpi_errors += child_errors;
        }
    } else {
        long sum = 0;

        MPI_Reduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
        if (0 == tmpi_rank) {
            MPI_Send(&sum, 1, MPI_LONG, 0, 99, inter);
        }
    }
    MPI_Comm_disconnect(&inter);

    if (!parent) {
        MPI_Finalize();
        return 0 == mine ? 0 : 1;
    }
    snprintf(detail, sizeof(detail), "%d children, %ld child errors", TSPAWN_CHILDREN,
             child_errors);
    return tmpi_finish(detail);
}
