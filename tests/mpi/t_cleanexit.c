/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * t_cleanexit.c: a peer's normal finalize is never an error. The last
 * rank only receives (eager messages from every other rank, so that it
 * sends nothing, not even at the transport level) and calls MPI_Finalize
 * at once; the other ranks meanwhile keep talking among themselves and
 * reach MPI_Finalize later. A transport that takes the receiver's orderly
 * close (its association ending, its segment removed) for a failure
 * aborts the job. The runner starts this job several times (the race
 * lies between the ranks' teardowns). The receiving rank verifies its
 * data and reports through its exit status; rank 0 prints the result.
 */

#include "tmpi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CLEANEXIT_MSGS 64
#define CLEANEXIT_LEN 512 /* eager on every transport */
#define CLEANEXIT_ROUNDS 200

int main(int argc, char **argv)
{
    int last;
    uint8_t *buf;

    /* btl_sci checks its peers' liveness in its idle sweep: make that
     * sweep frequent, so that the window after the receiving rank left is
     * covered (other transports ignore the variable) */
    setenv("OMPI_MCA_btl_sci_sweep_interval", "1", 0);
    tmpi_init(&argc, &argv, "cleanexit");
    last = tmpi_size - 1;
    buf = tmpi_malloc(CLEANEXIT_LEN);

    if (tmpi_size < 2) {
        tmpi_error("needs 2 ranks at least");
        return tmpi_finish(NULL);
    }
    if (tmpi_rank == last) {
        /* receive only, then leave first */
        for (int src = 0; src < last; ++src) {
            for (int i = 0; i < CLEANEXIT_MSGS; ++i) {
                MPI_Status st;

                MPI_Recv(buf, CLEANEXIT_LEN, MPI_BYTE, src, i, MPI_COMM_WORLD, &st);
                tmpi_check_status(&st, src, i, CLEANEXIT_LEN, "receive-only rank");
                tmpi_check(buf, CLEANEXIT_LEN, src, (uint32_t) i, "receive-only rank");
            }
        }
        free(buf);
        MPI_Finalize();
        return tmpi_errors ? 1 : 0;
    }

    for (int i = 0; i < CLEANEXIT_MSGS; ++i) {
        tmpi_fill(buf, CLEANEXIT_LEN, tmpi_rank, (uint32_t) i);
        MPI_Send(buf, CLEANEXIT_LEN, MPI_BYTE, last, i, MPI_COMM_WORLD);
    }
    /* the others stay busy (without the last rank) while it finalizes */
    if (last > 1) {
        int right = (tmpi_rank + 1) % last, left = (tmpi_rank + last - 1) % last;
        uint8_t *rbuf = tmpi_malloc(CLEANEXIT_LEN);

        for (int r = 0; r < CLEANEXIT_ROUNDS; ++r) {
            MPI_Status st;

            tmpi_fill(buf, CLEANEXIT_LEN, tmpi_rank, (uint32_t) (1000 + r));
            MPI_Sendrecv(buf, CLEANEXIT_LEN, MPI_BYTE, right, 77, rbuf, CLEANEXIT_LEN, MPI_BYTE,
                         left, 77, MPI_COMM_WORLD, &st);
            tmpi_check(rbuf, CLEANEXIT_LEN, left, (uint32_t) (1000 + r), "ring");
        }
        free(rbuf);
    }
    free(buf);
    if (0 == tmpi_rank) {
        /* the receiving rank's verdict is its exit status */
        printf("PASS cleanexit: np=%d %d messages to the receive-only rank, %ld errors here\n",
               tmpi_size, CLEANEXIT_MSGS * last, tmpi_errors);
    }
    MPI_Finalize();
    return tmpi_errors ? 1 : 0;
}
