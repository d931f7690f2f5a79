/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * t_cleanup.c: btl_via leaves nothing on disk.  Every rank exchanges a
 * checked value with every other rank (so every VI is connected and every
 * emu NIC segment has been mapped by its peers), then rank 0 looks for
 * files named via.* under the directory given as argv[1] (where the
 * runner puts the session directories): there must be none while the job
 * runs, since a NIC's name is removed once all its peers attached.  With
 * "kill" as argv[2] the last rank then SIGKILLs itself while the others
 * keep talking to it: the job must end, and the runner checks again.
 */
#define _GNU_SOURCE
#include <mpi.h>

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static int via_files(const char *dir, int depth)
{
    struct dirent *e;
    DIR *d;
    int n = 0;

    if (depth > 8 || NULL == (d = opendir(dir))) {
        return 0;
    }
    while (NULL != (e = readdir(d))) {
        char path[4096];
        struct stat st;

        if ('.' == e->d_name[0] && ('\0' == e->d_name[1] || 0 == strcmp(e->d_name, ".."))) {
            continue;
        }
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        if (0 != lstat(path, &st)) {
            continue;
        }
        if (S_ISDIR(st.st_mode)) {
            n += via_files(path, depth + 1);
        } else if (0 == strncmp(e->d_name, "via.", 4)) {
            fprintf(stderr, "left on disk: %s\n", path);
            ++n;
        }
    }
    closedir(d);
    return n;
}

int main(int argc, char **argv)
{
    int rank, size, bad = 0, total = 0;
    int kill_last = argc > 2 && 0 == strcmp(argv[2], "kill");

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 2) {
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (int peer = 0; peer < size; ++peer) {
        int out = rank * 1000 + peer, in = -1;

        if (peer != rank) {
            MPI_Sendrecv(&out, 1, MPI_INT, peer, 7, &in, 1, MPI_INT, peer, 7, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
            bad += in != peer * 1000 + rank;
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (0 == rank) {
        bad += via_files(argv[1], 0);
    }
    MPI_Allreduce(&bad, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (0 == rank) {
        printf("%s cleanup: %d ranks connected, %d via files on disk or data errors\n",
               total ? "FAIL" : "PASS", size, total);
        fflush(stdout);
    }
    if (kill_last) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (size - 1 == rank) {
            printf("armed: rank %d kills itself\n", rank);
            fflush(stdout);
            raise(SIGKILL);
        }
        for (;;) {
            int v = rank, w;
            MPI_Sendrecv(&v, 1, MPI_INT, size - 1, 8, &w, 1, MPI_INT, size - 1, 8, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
        }
    }
    MPI_Finalize();
    return total ? 1 : 0;
}
