/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * t_comms.c: communicator creation and freeing with small collectives on
 * each new communicator, the pattern of library and solver setup: dup,
 * split by parity and by a rotating key, allreduce/bcast/allgather of a
 * few integers with exact expected values, and a ping around each
 * sub-communicator with a verified payload. Every communicator is freed.
 * An optional argument sets the number of rounds (default 200).
 */

#include "tmpi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TCOMMS_PING_LEN 96

/* allreduce of (rank + round) over comm: the exact sum is known */
static void tcomms_allreduce(MPI_Comm comm, int round, const char *what)
{
    int size, rank, in, out = -1, expect;

    MPI_Comm_size(comm, &size);
    MPI_Comm_rank(comm, &rank);
    in = rank + round;
    MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_SUM, comm);
    expect = size * (size - 1) / 2 + size * round;
    if (out != expect) {
        tmpi_error("%s round %d: allreduce gave %d, expected %d", what, round, out, expect);
    }
}

/* bcast from a rotating root and allgather of world ranks */
static void tcomms_bcast_gather(MPI_Comm comm, int round, const char *what)
{
    int size, rank, root, value, i, *all, me = tmpi_rank, *expect;
    MPI_Group g, world;

    MPI_Comm_size(comm, &size);
    MPI_Comm_rank(comm, &rank);
    root = round % size;
    value = rank == root ? 1000 * round + root : -1;
    MPI_Bcast(&value, 1, MPI_INT, root, comm);
    if (value != 1000 * round + root) {
        tmpi_error("%s round %d: bcast gave %d, expected %d", what, round, value,
                   1000 * round + root);
    }
    all = tmpi_malloc(sizeof(int) * (size_t) size);
    expect = tmpi_malloc(sizeof(int) * (size_t) size);
    MPI_Allgather(&me, 1, MPI_INT, all, 1, MPI_INT, comm);
    /* the world ranks of comm's members, in comm's order */
    MPI_Comm_group(comm, &g);
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    for (i = 0; i < size; i++) {
        expect[i] = i;
    }
    MPI_Group_translate_ranks(g, size, expect, world, expect);
    for (i = 0; i < size; i++) {
        if (all[i] != expect[i]) {
            tmpi_error("%s round %d: allgather slot %d holds %d, expected %d", what, round, i,
                       all[i], expect[i]);
            break;
        }
    }
    MPI_Group_free(&g);
    MPI_Group_free(&world);
    free(all);
    free(expect);
}

/* a verified message from each member to the next one around comm */
static void tcomms_ring(MPI_Comm comm, int round, const char *what)
{
    unsigned char out[TCOMMS_PING_LEN], in[TCOMMS_PING_LEN];
    int size, rank, next, prev, tag = round & 0x7fff;
    MPI_Status st;

    MPI_Comm_size(comm, &size);
    MPI_Comm_rank(comm, &rank);
    next = (rank + 1) % size;
    prev = (rank + size - 1) % size;
    tmpi_fill(out, sizeof(out), tmpi_rank, (uint32_t) round);
    memset(in, 0, sizeof(in));
    MPI_Sendrecv(out, (int) sizeof(out), MPI_BYTE, next, tag, in, (int) sizeof(in), MPI_BYTE, prev,
                 tag, comm, &st);
    {
        /* the sender's world rank, to know its pattern */
        int src_world = -1;
        MPI_Group g, world;

        MPI_Comm_group(comm, &g);
        MPI_Comm_group(MPI_COMM_WORLD, &world);
        MPI_Group_translate_ranks(g, 1, &prev, world, &src_world);
        MPI_Group_free(&g);
        MPI_Group_free(&world);
        tmpi_check_status(&st, prev, tag, (int) sizeof(in), what);
        tmpi_check(in, sizeof(in), src_world, (uint32_t) round, what);
    }
}

int main(int argc, char **argv)
{
    int rounds = 200, round;
    char detail[96];

    tmpi_init(&argc, &argv, "comms");
    if (argc > 1) {
        rounds = atoi(argv[1]);
        if (rounds <= 0) {
            rounds = 1;
        }
    }
    for (round = 0; round < rounds; round++) {
        MPI_Comm dup, half, rot, dup2;
        int size;

        /* dup + one allreduce + free: the pattern of issue reports */
        MPI_Comm_dup(MPI_COMM_WORLD, &dup);
        tcomms_allreduce(dup, round, "dup");

        if (0 == round % 4) {
            /* sub-communicators: parity, and a key that rotates the order */
            MPI_Comm_split(dup, tmpi_rank % 2, tmpi_rank, &half);
            MPI_Comm_split(MPI_COMM_WORLD, 0, (tmpi_rank + round) % tmpi_size, &rot);
            MPI_Comm_size(half, &size);
            if (size != (tmpi_size + 1 - tmpi_rank % 2) / 2) {
                tmpi_error("round %d: parity split has %d members", round, size);
            }
            tcomms_allreduce(half, round, "split-parity");
            tcomms_bcast_gather(rot, round, "split-rotate");
            tcomms_ring(rot, round, "ring on split-rotate");
            MPI_Comm_dup(half, &dup2);
            tcomms_allreduce(dup2, round, "dup of split");
            MPI_Comm_free(&dup2);
            MPI_Comm_free(&rot);
            MPI_Comm_free(&half);
        }
        MPI_Comm_free(&dup);
    }
    snprintf(detail, sizeof(detail), "%d rounds of dup/split/free with collectives", rounds);
    return tmpi_finish(detail);
}
