/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * t_rma_misuse.c: erroneous uses of MPI one-sided communication get MPI's
 * error class back (MPI_ERRORS_RETURN on the window) and no process
 * crashes: operations outside an epoch, unlock without lock, a second lock
 * of one target, flush outside a passive epoch, complete/wait without
 * start/post, a request-based op in a fence epoch, accesses beyond the
 * window (caught at the call) and to unattached memory of a dynamic window
 * (reported by the target, returned by the next synchronisation), a
 * reduction op undefined on the type. Afterwards the window still works,
 * and a put across two regions attached next to each other is accepted.
 *
 * Behaviour on erroneous programs differs between osc components, so this
 * program selects osc/hybrid itself (unless OMPI_MCA_osc is already set).
 */

#include "tmpi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void expect(int rc, int cls, const char *what)
{
    int got = MPI_SUCCESS;

    if (MPI_SUCCESS != rc) {
        MPI_Error_class(rc, &got);
    }
    if (got != cls) {
        char s1[MPI_MAX_ERROR_STRING], s2[MPI_MAX_ERROR_STRING];
        int l;
        MPI_Error_string(got, s1, &l);
        MPI_Error_string(cls, s2, &l);
        tmpi_error("%s: got error class %d (%s), expected %d (%s)", what, got, s1, cls, s2);
    }
}

int main(int argc, char **argv)
{
    int right, v = 42, r = 0;
    long buf[64];
    MPI_Win win, dyn;
    MPI_Group world, g;
    MPI_Request req;
    MPI_Aint *addr, mine;
    double d = 1.0;

    setenv("OMPI_MCA_osc", "hybrid", 0);
    tmpi_init(&argc, &argv, "rma_misuse");
    right = (tmpi_rank + 1) % tmpi_size;
    memset(buf, 0, sizeof(buf));
    MPI_Win_create(buf, sizeof(buf), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);

    expect(MPI_Put(&v, 1, MPI_INT, right, 0, 1, MPI_INT, win), MPI_ERR_RMA_SYNC,
           "put outside an epoch");
    expect(MPI_Win_unlock(right, win), MPI_ERR_RMA_SYNC, "unlock without lock");
    expect(MPI_Win_flush(right, win), MPI_ERR_RMA_SYNC, "flush outside a passive epoch");
    expect(MPI_Win_complete(win), MPI_ERR_RMA_SYNC, "complete without start");
    expect(MPI_Win_wait(win), MPI_ERR_RMA_SYNC, "wait without post");

    expect(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win), MPI_SUCCESS, "lock");
    expect(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win), MPI_ERR_RMA_SYNC, "second lock");
    expect(MPI_Put(&v, 1, MPI_INT, right, 64, 1, MPI_INT, win), MPI_ERR_RMA_RANGE,
           "put past the end");
    /* a negative displacement: MPI's own argument check answers */
    expect(MPI_Put(&v, 1, MPI_INT, right, -1, 1, MPI_INT, win), MPI_ERR_DISP,
           "put before the start");
    expect(MPI_Get(buf, 2, MPI_LONG, right, 63, 2, MPI_LONG, win), MPI_ERR_RMA_RANGE,
           "get across the end");
    expect(MPI_Accumulate(&d, 1, MPI_DOUBLE, right, 0, 1, MPI_DOUBLE, MPI_BAND, win), MPI_ERR_OP,
           "MPI_BAND on MPI_DOUBLE");
    expect(MPI_Put(&v, 1, MPI_INT, right, 3, 1, MPI_INT, win), MPI_SUCCESS, "valid put");
    expect(MPI_Win_unlock(right, win), MPI_SUCCESS, "unlock");

    expect(MPI_Win_fence(0, win), MPI_SUCCESS, "fence");
    expect(MPI_Rput(&v, 1, MPI_INT, right, 0, 1, MPI_INT, win, &req), MPI_ERR_RMA_SYNC,
           "rput in a fence epoch");
    expect(MPI_Win_fence(MPI_MODE_NOSUCCEED, win), MPI_SUCCESS, "fence");
    if (42 != *(int *) &buf[3]) {
        tmpi_error("valid put after refused ones: %d", *(int *) &buf[3]);
    }

    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 1, &right, &g);
    expect(MPI_Win_post(g, 0, win), MPI_SUCCESS, "post");
    expect(MPI_Win_post(g, 0, win), MPI_ERR_RMA_SYNC, "second post");
    {
        int left = (tmpi_rank + tmpi_size - 1) % tmpi_size;
        MPI_Group gl;
        MPI_Group_incl(world, 1, &left, &gl);
        /* post above exposed to right; accessing left, who posted to us */
        expect(MPI_Win_start(gl, 0, win), MPI_SUCCESS, "start");
        expect(MPI_Win_start(gl, 0, win), MPI_ERR_RMA_SYNC, "second start");
        expect(MPI_Win_complete(win), MPI_SUCCESS, "complete");
        MPI_Group_free(&gl);
    }
    expect(MPI_Win_wait(win), MPI_SUCCESS, "wait");
    MPI_Group_free(&g);
    MPI_Group_free(&world);
    MPI_Win_free(&win);

    /* dynamic window: only the target can tell that memory is unattached */
    MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &dyn);
    MPI_Win_set_errhandler(dyn, MPI_ERRORS_RETURN);
    MPI_Win_attach(dyn, buf, sizeof(buf));
    addr = tmpi_malloc(tmpi_size * sizeof(MPI_Aint));
    MPI_Get_address(buf, &mine);
    MPI_Allgather(&mine, 1, MPI_AINT, addr, 1, MPI_AINT, MPI_COMM_WORLD);
    expect(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, dyn), MPI_SUCCESS, "lock dynamic");
    expect(MPI_Put(&v, 1, MPI_INT, right, addr[right] + sizeof(buf), 1, MPI_INT, dyn), MPI_SUCCESS,
           "put to unattached memory (accepted at the origin)");
    expect(MPI_Win_flush(right, dyn), MPI_ERR_RMA_RANGE, "flush after a put to unattached memory");
    expect(MPI_Get(&r, 1, MPI_INT, right, addr[right] - 4096, 1, MPI_INT, dyn), MPI_SUCCESS,
           "get from unattached memory (accepted at the origin)");
    expect(MPI_Win_unlock(right, dyn), MPI_ERR_RMA_RANGE, "unlock after a bad get");
    expect(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, dyn), MPI_SUCCESS, "lock dynamic again");
    v = 4242;
    expect(MPI_Put(&v, 1, MPI_INT, right, addr[right] + 8, 1, MPI_INT, dyn), MPI_SUCCESS,
           "valid dynamic put");
    expect(MPI_Win_unlock(right, dyn), MPI_SUCCESS, "unlock dynamic");
    MPI_Barrier(MPI_COMM_WORLD);
    if (4242 != *(int *) &buf[1]) {
        tmpi_error("valid dynamic put after refused ones: %d", *(int *) &buf[1]);
    }
    /* two regions attached next to each other: one access may span both
     * (as osc/pt2pt allows), but not run past the second */
    {
        int *two = tmpi_malloc(2048 * sizeof(int));
        int span[64];
        MPI_Aint a2, *addr2 = tmpi_malloc(tmpi_size * sizeof(MPI_Aint));
        for (int i = 0; i < 2048; i++) {
            two[i] = -1;
        }
        for (int i = 0; i < 64; i++) {
            span[i] = 7000 + i;
        }
        MPI_Win_attach(dyn, two, 1024 * sizeof(int));
        MPI_Win_attach(dyn, two + 1024, 1024 * sizeof(int));
        MPI_Get_address(two, &a2);
        MPI_Allgather(&a2, 1, MPI_AINT, addr2, 1, MPI_AINT, MPI_COMM_WORLD);
        expect(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, dyn), MPI_SUCCESS, "lock for the span");
        expect(
            MPI_Put(span, 64, MPI_INT, right, addr2[right] + 1000 * sizeof(int), 64, MPI_INT, dyn),
            MPI_SUCCESS, "put across two adjacent regions");
        expect(MPI_Win_flush(right, dyn), MPI_SUCCESS, "flush after a put across two regions");
        expect(
            MPI_Put(span, 64, MPI_INT, right, addr2[right] + 2000 * sizeof(int), 64, MPI_INT, dyn),
            MPI_SUCCESS, "put past the second region (accepted at the origin)");
        expect(MPI_Win_unlock(right, dyn), MPI_ERR_RMA_RANGE,
               "unlock after a put past the regions");
        MPI_Barrier(MPI_COMM_WORLD);
        for (int i = 0; i < 2048; i++) {
            int want = (i >= 1000 && i < 1064) ? 7000 + i - 1000 : -1;
            if (two[i] != want) {
                tmpi_error("two adjacent regions: int %d is %d, expected %d", i, two[i], want);
                break;
            }
        }
        MPI_Barrier(MPI_COMM_WORLD);
        expect(MPI_Win_detach(dyn, two), MPI_SUCCESS, "detach the first of two");
        expect(MPI_Win_detach(dyn, two + 1024), MPI_SUCCESS, "detach the second of two");
        free(two);
        free(addr2);
    }
    expect(MPI_Win_detach(dyn, buf), MPI_SUCCESS, "detach");
    MPI_Win_free(&dyn);
    free(addr);
    return tmpi_finish("sync, range, op and attach errors");
}
