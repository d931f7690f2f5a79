/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * t_rma_params.c: osc/hybrid refuses a window whose processes disagree on
 * a parameter that both ends of its messages must share. Rank 0 runs with
 * osc_hybrid_slot_size 2048, every other rank with 4096 (set in the
 * environment before MPI_Init): a message of 4 KiB from another rank would
 * be truncated at rank 0 and its records lost. Window creation of every
 * flavor must fail on every rank (MPI_ERRORS_RETURN on MPI_COMM_WORLD),
 * with no hang and no crash, and MPI must work on afterwards.
 *
 * Selects osc/hybrid itself (unless OMPI_MCA_osc is already set).
 */

#include "tmpi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void expect_refused(int rc, MPI_Win *win, const char *what)
{
    if (MPI_SUCCESS == rc) {
        tmpi_error("%s: created although osc_hybrid_slot_size differs between ranks", what);
        MPI_Win_free(win);
    }
}

int main(int argc, char **argv)
{
    const char *r = getenv("OMPI_COMM_WORLD_RANK");
    long buf[64];
    void *abuf = NULL;
    MPI_Win win = MPI_WIN_NULL;
    int sum = 0, one = 1;

    if (NULL == r) {
        r = getenv("PMIX_RANK");
    }
    setenv("OMPI_MCA_osc", "hybrid", 0);
    /* before MPI_Init: parameters are read once */
    setenv("OMPI_MCA_osc_hybrid_slot_size", (NULL != r && 0 == strcmp(r, "0")) ? "2048" : "4096",
           1);
    tmpi_init(&argc, &argv, "rma_params");
    if (NULL == r) {
        tmpi_error("neither OMPI_COMM_WORLD_RANK nor PMIX_RANK is set: cannot give rank 0 "
                   "another slot size");
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    memset(buf, 0, sizeof(buf));
    expect_refused(
        MPI_Win_create(buf, sizeof(buf), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &win), &win,
        "MPI_Win_create");
    expect_refused(MPI_Win_allocate(512, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &abuf, &win), &win,
                   "MPI_Win_allocate");
    expect_refused(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win), &win,
                   "MPI_Win_create_dynamic");

    /* the job goes on */
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (sum != tmpi_size) {
        tmpi_error("allreduce after the refused windows: %d, expected %d", sum, tmpi_size);
    }
    return tmpi_finish("three flavors refused for differing osc_hybrid_slot_size");
}
