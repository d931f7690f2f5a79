/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * tr_cleanup.h: the cleanup test of a shared-memory BTL (tests/<btl>/
 * t_cleanup.c calls tr_cleanup_main with the BTL's name): the BTL leaves
 * nothing on disk.  Every rank talks to every other rank (so every queue
 * or segment of the BTL has been connected), then counts the files named
 * <btl>.* under the directory given as argv[1] (the runner puts Open MPI's
 * session directories there with orte_tmpdir_base, 5.0's
 * prte_tmpdir_base): none may remain while the job runs, because each
 * file's name is removed as soon as its peers have mapped it.  With "kill"
 * as argv[2], the last rank then SIGKILLs itself while the others keep
 * communicating with it: the job must end (the runner checks that it
 * does, and that nothing is left afterwards either).  With a file name as
 * argv[3], rank 0's result line and the killed rank's "armed" line are
 * also appended to that file, where the runner reads them: they then
 * do not depend on what the launcher relays of a job it tears down.
 *
 * A header, included by each BTL's program, so that the runners can build
 * that one file alone with mpicc.
 */
#ifndef TR_CLEANUP_H
#define TR_CLEANUP_H

#include <mpi.h>

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int tr_cleanup_count(const char *dir, const char *prefix, int depth)
{
    DIR *d;
    struct dirent *e;
    int n = 0;

    if (depth > 8 || NULL == (d = opendir(dir))) {
        return 0;
    }
    while (NULL != (e = readdir(d))) {
        char path[4096];
        struct stat st;

        if (0 == strcmp(e->d_name, ".") || 0 == strcmp(e->d_name, "..")) {
            continue;
        }
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        if (0 != lstat(path, &st)) {
            continue;
        }
        if (S_ISDIR(st.st_mode)) {
            n += tr_cleanup_count(path, prefix, depth + 1);
        } else if (0 == strncmp(e->d_name, prefix, strlen(prefix))) {
            fprintf(stderr, "left on disk: %s\n", path);
            ++n;
        }
    }
    closedir(d);
    return n;
}

/* print a line, and append it to the result file when there is one */
static void tr_cleanup_report(const char *result, const char *line)
{
    printf("%s", line);
    fflush(stdout);
    if (NULL != result) {
        int fd = open(result, O_WRONLY | O_CREAT | O_APPEND, 0600);

        if (fd >= 0) {
            if (write(fd, line, strlen(line)) < 0) {
                perror(result);
            }
            close(fd);
        } else {
            perror(result);
        }
    }
}

static int tr_cleanup_main(int argc, char **argv, const char *btl)
{
    char prefix[64], line[256];
    int rank, size, errors = 0, total = 0;
    int kill_last = argc > 2 && 0 == strcmp(argv[2], "kill");
    const char *result = argc > 3 ? argv[3] : NULL;

    /* the BTL's files are named "<btl>.*" */
    snprintf(prefix, sizeof(prefix), "%s.", btl);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 2) {
        if (0 == rank) {
            fprintf(stderr, "usage: t_cleanup DIR [run|kill [RESULT-FILE]]\n");
        }
        MPI_Abort(MPI_COMM_WORLD, 2);
    }

    /* everybody to everybody, with data checked */
    for (int peer = 0; peer < size; ++peer) {
        int out = rank * 1000 + peer, in = -1;
        if (peer == rank) {
            continue;
        }
        MPI_Sendrecv(&out, 1, MPI_INT, peer, 7, &in, 1, MPI_INT, peer, 7, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        errors += in != peer * 1000 + rank;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (0 == rank) {
        errors += tr_cleanup_count(argv[1], prefix, 0);
    }
    MPI_Allreduce(&errors, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (0 == rank) {
        snprintf(line, sizeof(line),
                 "%s cleanup: %d ranks connected, %d %s files on disk or data errors\n",
                 total ? "FAIL" : "PASS", size, total, btl);
        tr_cleanup_report(result, line);
    }

    if (kill_last) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (size - 1 == rank) {
            snprintf(line, sizeof(line), "armed: rank %d kills itself\n", rank);
            tr_cleanup_report(result, line);
            raise(SIGKILL);
        }
        /* keep talking to the dead rank: the job must still end */
        for (;;) {
            int v = rank, w;
            MPI_Sendrecv(&v, 1, MPI_INT, size - 1, 8, &w, 1, MPI_INT, size - 1, 8, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
        }
    }
    MPI_Finalize();
    return total ? 1 : 0;
}

#endif /* TR_CLEANUP_H */
