/*
 * t_cleanup.c: btl_bip leaves nothing on disk.  Every rank talks to every
 * other rank (so every bip queue has been connected), then counts the
 * files named bip.* under the directory given as argv[1] (the runner puts
 * Open MPI's session directories there with orte_tmpdir_base): none may
 * remain while the job runs, because each queue file is removed as
 * soon as its peers have mapped it.  With "kill" as argv[2], the last rank
 * then SIGKILLs itself while the others keep communicating with it: the
 * job must end (the runner checks that it does, and that nothing is left
 * afterwards either).
 */

#define _GNU_SOURCE
#include <mpi.h>

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int count_bip_files(const char *dir, int depth)
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
            n += count_bip_files(path, depth + 1);
        } else if (0 == strncmp(e->d_name, "bip.", 4)) {
            fprintf(stderr, "left on disk: %s\n", path);
            ++n;
        }
    }
    closedir(d);
    return n;
}

int main(int argc, char **argv)
{
    int rank, size, errors = 0, total = 0;
    int kill_last = argc > 2 && 0 == strcmp(argv[2], "kill");

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 2) {
        if (0 == rank) {
            fprintf(stderr, "usage: t_cleanup DIR [kill]\n");
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
        errors += count_bip_files(argv[1], 0);
    }
    MPI_Allreduce(&errors, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (0 == rank) {
        printf("%s cleanup: %d ranks connected, %d bip files on disk or data errors\n",
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
