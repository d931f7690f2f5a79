/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * t_rma_selfcas.c: MPI_Compare_and_swap and MPI_Fetch_and_op with the
 * calling rank as target, in lock, lock_all and fence epochs, on windows of
 * the flavors create, allocate and dynamic. Kept apart from t_rma_ops
 * because Open MPI 4.1.4's osc/rdma crashes in a self-targeted
 * compare-and-swap over vader; osc/hybrid passes it over every transport.
 * Names no osc component.
 */

#include "tmpi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    const char *fl[3] = {"create", "allocate", "dynamic"};

    tmpi_init(&argc, &argv, "rma_selfcas");
    for (int f = 0; f < 3; f++) {
        MPI_Win win;
        long *base = NULL;
        MPI_Aint disp = 0;
        int me = tmpi_rank;

        if (0 == f) {
            base = tmpi_malloc(64);
            MPI_Win_create(base, 64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
        } else if (1 == f) {
            MPI_Win_allocate(64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
        } else {
            base = tmpi_malloc(64);
            MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win);
            MPI_Win_attach(win, base, 64);
            MPI_Get_address(base, &disp);
        }
        memset(base, 0, 64);
        MPI_Barrier(MPI_COMM_WORLD);
        for (int mode = 0; mode < 3; mode++) {
            long nv = 100 + mode, cmp = 0, old = -1, add = 5, prev = -1;
            base[0] = 0;
            if (0 == mode) {
                MPI_Win_lock(MPI_LOCK_EXCLUSIVE, me, 0, win);
            } else if (1 == mode) {
                MPI_Win_lock_all(0, win);
            } else {
                MPI_Win_fence(0, win);
            }
            MPI_Compare_and_swap(&nv, &cmp, &old, MPI_LONG, me, disp, win);
            if (2 == mode) {
                MPI_Win_fence(0, win);
            } else {
                MPI_Win_flush(me, win);
            }
            cmp = 12345; /* does not match: no swap */
            MPI_Compare_and_swap(&cmp, &cmp, &prev, MPI_LONG, me, disp, win);
            MPI_Fetch_and_op(&add, &prev, MPI_LONG, me, disp, MPI_SUM, win);
            if (0 == mode) {
                MPI_Win_unlock(me, win);
            } else if (1 == mode) {
                MPI_Win_unlock_all(win);
            } else {
                MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
            }
            if (0 != old || 100 + mode != prev || 105 + mode != base[0]) {
                tmpi_error("%s mode %d: cas old %ld, fop old %ld, final %ld; expected 0, %d, %d",
                           fl[f], mode, old, prev, base[0], 100 + mode, 105 + mode);
            }
        }
        if (2 == f) {
            MPI_Win_detach(win, base);
        }
        MPI_Win_free(&win);
        if (1 != f) {
            free(base);
        }
    }
    return tmpi_finish("3 flavors, lock, lock_all and fence");
}
