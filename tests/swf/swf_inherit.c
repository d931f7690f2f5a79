/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * swf_inherit.c: stands in for swfsim as btl_swf_simulator. It records
 * the descriptors it inherited and its blocked signals in FILE.fds and
 * FILE.sig (FILE from SWF_INHERIT_OUT), then executes the real simulator
 * (SWF_INHERIT_EXEC) with the same arguments (tests/swf/launch.sh).
 */

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    const char *out = getenv("SWF_INHERIT_OUT"), *sim = getenv("SWF_INHERIT_EXEC");
    char path[4096];
    sigset_t blocked;
    struct dirent *e;
    FILE *f;
    DIR *d;
    int sig;

    (void) argc;
    if (NULL == out || NULL == sim) {
        return 2;
    }
    snprintf(path, sizeof(path), "%s.fds", out);
    f = fopen(path, "w");
    d = opendir("/proc/self/fd");
    if (NULL == f || NULL == d) {
        return 2;
    }
    while (NULL != (e = readdir(d))) {
        int fd = atoi(e->d_name);

        /* neither the directory's nor the report's own descriptor */
        if ('.' != e->d_name[0] && fd != dirfd(d) && fd != fileno(f)) {
            fprintf(f, "%d\n", fd);
        }
    }
    closedir(d);
    fclose(f);
    snprintf(path, sizeof(path), "%s.sig", out);
    f = fopen(path, "w");
    if (NULL == f) {
        return 2;
    }
    sigprocmask(SIG_BLOCK, NULL, &blocked);
    for (sig = 1; sig < NSIG; sig++) {
        if (1 == sigismember(&blocked, sig)) {
            fprintf(f, "%d\n", sig);
        }
    }
    fclose(f);
    execv(sim, argv);
    return 127;
}
