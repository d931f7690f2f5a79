/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * btl_swf_launch.c: the private simulator of a job. When no server is
 * given, the process with local rank 0 starts swfsim listening on a
 * Unix-domain socket in the job session directory (or, with
 * btl_swf_private_transport tcp or a too long path, on an ephemeral
 * loopback port) and writing its address into a port file there; every
 * process of the job reads the address from there. At finalize the
 * launcher reaps the simulator (which exits once every client said FINISH)
 * and removes the port file and the socket.
 */

#include "opal_config.h"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <spawn.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "opal/util/output.h"
#include "opal/util/proc.h"

#include "tc_ompi.h"

#include "btl_swf.h"

#define SWF_PORT_FILE_NAME "swf.port"
#define SWF_SOCK_FILE_NAME "swf.sock"
#define SWF_TOKEN_FILE_NAME "swf.token"
/* the PMIx key under which rank 0 tells a job that spans hosts where its
 * simulator listens: "HOST:PORT TOKEN" (token in hex), or "failed" */
#define SWF_CLUSTER_KEY "btl.swf.simulator"
/* the PMIx key under which every process of a job whose simulator takes
 * joining nodes tells the jobs it spawns where it is: "ADDRESS TOKEN"
 * (ADDRESS as in a port file: HOST:PORT or unix:PATH) */
#define SWF_JOIN_KEY "btl.swf.join"
/* ... or this, when the simulator takes no joining nodes (torus) */
#define SWF_JOIN_NONE "none"
/* how long a spawned process waits for its parent's key */
#define SWF_JOIN_FETCH_S 10

#ifndef SWFSIM_INSTALLED_PATH
#define SWFSIM_INSTALLED_PATH "swfsim"
#endif

extern char **environ;

static void swf_sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long) (ms % 1000) * 1000000L};

    while (0 != nanosleep(&ts, &ts) && EINTR == errno) {
        /* keep sleeping the rest after a signal */
    }
}

static double swf_now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

/* The port file's path, computed once; NULL without a session dir. */
static const char *swf_port_file(void)
{
    mca_btl_swf_component_t *c = &mca_btl_swf_component;

    if (NULL == c->port_file && NULL != opal_process_info.job_session_dir) {
        if (0 > asprintf(&c->port_file, "%s/%s", opal_process_info.job_session_dir,
                         SWF_PORT_FILE_NAME)) {
            c->port_file = NULL;
        }
    }
    return c->port_file;
}

/* The Unix socket's path when the private simulator should use one:
 * NULL for TCP (asked for, or the path does not fit sun_path). */
static const char *swf_sock_file(void)
{
    mca_btl_swf_component_t *c = &mca_btl_swf_component;
    const char *t = c->private_transport;

    if (NULL != t && 0 == strcmp(t, "tcp")) {
        return NULL;
    }
    if (NULL != t && '\0' != t[0] && 0 != strcmp(t, "unix")) {
        opal_output(0, "btl:swf: unknown btl_swf_private_transport '%s', using tcp", t);
        return NULL;
    }
    if (NULL == c->sock_file && NULL != opal_process_info.job_session_dir) {
        if (0 > asprintf(&c->sock_file, "%s/%s", opal_process_info.job_session_dir,
                         SWF_SOCK_FILE_NAME)) {
            c->sock_file = NULL;
        } else if (strlen(c->sock_file) >= sizeof(((struct sockaddr_un *) 0)->sun_path)) {
            opal_output_verbose(5, c->output,
                                "btl:swf: %s is too long for a Unix socket, "
                                "using TCP loopback",
                                c->sock_file);
            free(c->sock_file);
            c->sock_file = NULL;
        }
    }
    return c->sock_file;
}

/* The private simulator's token file (in the job session dir). */
const char *mca_btl_swf_launch_token_file(void)
{
    mca_btl_swf_component_t *c = &mca_btl_swf_component;

    if (NULL == c->token_path && NULL != opal_process_info.job_session_dir) {
        if (0 > asprintf(&c->token_path, "%s/%s", opal_process_info.job_session_dir,
                         SWF_TOKEN_FILE_NAME)) {
            c->token_path = NULL;
        }
    }
    return c->token_path;
}

/* Read a token file (one line of hex digits): OPAL_SUCCESS or an error. */
int mca_btl_swf_token_read(const char *path, unsigned char *token)
{
    char line[2 * SOCKMODEL_TOKEN_BYTES + 8];
    ssize_t n;
    int fd;

    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return OPAL_ERR_NOT_FOUND;
    }
    n = read(fd, line, sizeof(line) - 1);
    close(fd);
    if (n <= 0) {
        return OPAL_ERR_BAD_PARAM;
    }
    line[n] = '\0';
    return 0 == tc_sockmodel_token_parse(line, token) ? OPAL_SUCCESS : OPAL_ERR_BAD_PARAM;
}

/* A fresh random token in a 0600 file of the session dir, written whole
 * before the simulator starts (so that it is there once the port file
 * is): the simulator and every process of the job read it from there. */
static int mca_btl_swf_token_create(const char *path)
{
    unsigned char token[SOCKMODEL_TOKEN_BYTES];
    char line[2 * SOCKMODEL_TOKEN_BYTES + 2];
    ssize_t n;
    int fd;

    if (0 != tc_sockmodel_token_random(token)) {
        return OPAL_ERROR;
    }
    tc_sockmodel_token_format(token, line);
    (void) unlink(path);
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        return OPAL_ERROR;
    }
    n = write(fd, line, strlen(line));
    close(fd);
    if (n != (ssize_t) strlen(line)) {
        (void) unlink(path);
        return OPAL_ERROR;
    }
    return OPAL_SUCCESS;
}

/* Append place to the list of places tried (for the error message). */
static void mca_btl_swf_tried(char *tried, size_t len, const char *place)
{
    size_t used = strlen(tried);

    if (used + 1 < len) {
        snprintf(tried + used, len - used, "%s%s", used > 0 ? ", " : "", place);
    }
}

/* 1 and *found (malloc'd) when dir/name is an executable file. */
static int mca_btl_swf_try(const char *dir, const char *name, char **found, char *tried, size_t len)
{
    char *path = NULL;
    struct stat st;

    if (0 > asprintf(&path, "%s%s%s", dir, '\0' == dir[0] ? "" : "/", name)) {
        return 0;
    }
    mca_btl_swf_tried(tried, len, path);
    if (0 == stat(path, &st) && S_ISREG(st.st_mode) && 0 == access(path, X_OK)) {
        *found = path;
        return 1;
    }
    free(path);
    return 0;
}

/* Each directory of PATH. */
static int mca_btl_swf_try_path(const char *name, char **found, char *tried, size_t len)
{
    const char *path = getenv("PATH");
    char dir[4096];

    while (NULL != path && '\0' != *path) {
        size_t n = strcspn(path, ":");

        if (n > 0 && n < sizeof(dir)) {
            memcpy(dir, path, n);
            dir[n] = '\0';
            if (mca_btl_swf_try(dir, name, found, tried, len)) {
                return 1;
            }
        }
        path += n;
        if (':' == *path) {
            path++;
        }
    }
    return 0;
}

/* The simulator to start, looked for in order: btl_swf_simulator (a path
 * as given, a bare name in PATH), the configured bindir, next to this
 * component's own file (the build tree: btl_swf/.libs/ and swfsim/ side
 * by side), PATH. NULL when none is there; *tried names every place. */
char *mca_btl_swf_launch_find(char *tried, size_t len)
{
    mca_btl_swf_component_t *c = &mca_btl_swf_component;
    char *found = NULL, *dir, *slash;
    Dl_info info;

    tried[0] = '\0';
    if (NULL != c->simulator && '\0' != c->simulator[0]) {
        /* asked for by name: nothing else is tried */
        if (NULL != strchr(c->simulator, '/')) {
            (void) mca_btl_swf_try("", c->simulator, &found, tried, len);
        } else {
            (void) mca_btl_swf_try_path(c->simulator, &found, tried, len);
        }
        return found;
    }
    if (NULL != strchr(SWFSIM_INSTALLED_PATH, '/') &&
        mca_btl_swf_try("", SWFSIM_INSTALLED_PATH, &found, tried, len)) {
        return found;
    }
    if (0 != dladdr((void *) &mca_btl_swf_component, &info) && NULL != info.dli_fname &&
        NULL != (dir = strdup(info.dli_fname))) {
        slash = strrchr(dir, '/');
        if (NULL != slash) {
            *slash = '\0';
            if (mca_btl_swf_try(dir, "swfsim", &found, tried, len) ||
                mca_btl_swf_try(dir, "../../swfsim/swfsim", &found, tried, len)) {
                free(dir);
                return found;
            }
        }
        free(dir);
    }
    (void) mca_btl_swf_try_path("swfsim", &found, tried, len);
    return found;
}

/* Tell the other processes of this host that there will be no simulator:
 * they find the line in the port file at once instead of timing out. */
static void mca_btl_swf_launch_mark_failed(void)
{
    mca_btl_swf_component_t *c = &mca_btl_swf_component;

    if (NULL != c->port_file &&
        0 == tc_sockmodel_port_file_write(c->port_file, TC_SOCKMODEL_PORT_FILE_FAILED)) {
        c->port_file_owner = true;
    }
}

/* posix_spawn the simulator: the child runs no code of this process
 * (nothing between fork and exec), gets stdin from /dev/null, keeps only
 * stdout and stderr of this process's descriptors (all of them closed,
 * however high), an empty signal mask and default signal actions. The
 * simulator itself sets its death signal and checks that its parent is
 * still the one that started it (--parent-pid), and drops this rank's
 * core binding (--all-cpus). */
static int mca_btl_swf_spawn(const char *path, char *const argv[], pid_t *pid)
{
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    sigset_t none, all;
    int rc, sig;

    sigemptyset(&none);
    sigemptyset(&all);
    for (sig = 1; sig < NSIG; sig++) {
        if (SIGKILL != sig && SIGSTOP != sig) {
            (void) sigaddset(&all, sig); /* refuses the C library's own */
        }
    }
    rc = posix_spawn_file_actions_init(&fa);
    if (0 != rc) {
        return rc;
    }
    rc = posix_spawnattr_init(&at);
    if (0 != rc) {
        posix_spawn_file_actions_destroy(&fa);
        return rc;
    }
    rc = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    if (0 == rc) {
        rc = posix_spawn_file_actions_addclosefrom_np(&fa, 3);
    }
    if (0 == rc) {
        rc = posix_spawnattr_setsigmask(&at, &none);
    }
    if (0 == rc) {
        rc = posix_spawnattr_setsigdefault(&at, &all);
    }
    if (0 == rc) {
        rc = posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    }
    if (0 == rc) {
        rc = posix_spawn(pid, path, &fa, &at, argv, environ);
    }
    posix_spawnattr_destroy(&at);
    posix_spawn_file_actions_destroy(&fa);
    return rc;
}

int mca_btl_swf_launch_start(uint32_t nodes, const char *listen)
{
    mca_btl_swf_component_t *c = &mca_btl_swf_component;
    const char *port_file = swf_port_file();
    const char *sock_file = NULL == listen ? swf_sock_file() : NULL;
    char nodes_str[16], ctimeout_str[16], spin_str[16], ppid_str[16], listen_str[128];
    char tried[2048], *path;
    const char *token_file = mca_btl_swf_launch_token_file();
    const char *argv[32];
    int argc = 0, rc;
    pid_t pid;

    if (NULL == port_file) {
        mca_btl_swf_show_help("no session dir", opal_process_info.nodename);
        return OPAL_ERROR;
    }
    path = mca_btl_swf_launch_find(tried, sizeof(tried));
    if (NULL == path) {
        mca_btl_swf_show_help(
            "simulator not found", opal_process_info.nodename,
            NULL != c->simulator && '\0' != c->simulator[0] ? c->simulator : "swfsim", tried);
        (void) unlink(port_file);
        mca_btl_swf_launch_mark_failed();
        return OPAL_ERR_NOT_FOUND;
    }
    /* a leftover from an earlier attempt would hand out a dead port */
    (void) unlink(port_file);
    if (NULL != listen) {
        snprintf(listen_str, sizeof(listen_str), "%s", listen);
    } else if (NULL != sock_file) {
        (void) unlink(sock_file);
        snprintf(listen_str, sizeof(listen_str), "unix:%s", sock_file);
    } else {
        snprintf(listen_str, sizeof(listen_str), "127.0.0.1:0");
    }
    snprintf(nodes_str, sizeof(nodes_str), "%u", nodes);
    snprintf(ctimeout_str, sizeof(ctimeout_str), "%d",
             c->connect_timeout > 0 ? c->connect_timeout : 0);
    snprintf(spin_str, sizeof(spin_str), "%d", c->simulator_spin_us > 0 ? c->simulator_spin_us : 0);
    snprintf(ppid_str, sizeof(ppid_str), "%d", (int) getpid());

    argv[argc++] = "swfsim";
    argv[argc++] = "--nodes";
    argv[argc++] = nodes_str;
    argv[argc++] = "--model";
    argv[argc++] = c->model;
    argv[argc++] = "--listen";
    argv[argc++] = listen_str;
    argv[argc++] = "--port-file";
    argv[argc++] = port_file;
    /* the simulator gives up, instead of waiting forever, when a rank
     * never connects (that rank reports its own error) */
    argv[argc++] = "--connect-timeout";
    argv[argc++] = ctimeout_str;
    argv[argc++] = "--spin-us";
    argv[argc++] = spin_str;
    /* it must not inherit this rank's core binding: it serves every
     * rank. Without fault tolerance it must not outlive this process
     * either; under ULFM the job goes on when this process dies, and so
     * must the simulator: it ends when its last node has finished or died
     * (and before the start, after the connect timeout) */
    if (!tc_ompi_ft_enabled()) {
        argv[argc++] = "--parent-pid";
        argv[argc++] = ppid_str;
    }
    argv[argc++] = "--all-cpus";
    /* clients must show the job's token: over TCP any local user could
     * otherwise claim a rank (the Unix socket is 0600 anyway) */
    if (NULL == token_file || OPAL_SUCCESS != mca_btl_swf_token_create(token_file)) {
        mca_btl_swf_show_help("simulator start failed", opal_process_info.nodename, path,
                              "cannot create the job token file in the session directory");
        free(path);
        mca_btl_swf_launch_mark_failed();
        return OPAL_ERROR;
    }
    argv[argc++] = "--token-file";
    argv[argc++] = token_file;
    if (NULL != c->simulator_config && '\0' != c->simulator_config[0]) {
        argv[argc++] = "--config";
        argv[argc++] = c->simulator_config;
    }
    if (NULL != c->simulator_report && '\0' != c->simulator_report[0]) {
        argv[argc++] = "--report";
        argv[argc++] = c->simulator_report;
    } else {
        argv[argc++] = "--quiet";
    }
    argv[argc] = NULL;

    rc = mca_btl_swf_spawn(path, (char *const *) argv, &pid);
    if (0 != rc) {
        mca_btl_swf_show_help("simulator start failed", opal_process_info.nodename, path,
                              strerror(rc));
        free(path);
        mca_btl_swf_launch_mark_failed();
        return OPAL_ERROR;
    }

    c->sim_pid = pid;
    c->port_file_owner = true;
    opal_output_verbose(5, c->output,
                        "btl:swf: started private simulator %s (pid %d, %u nodes, model %s)", path,
                        (int) pid, nodes, c->model);
    free(c->sim_path);
    c->sim_path = path;
    return OPAL_SUCCESS;
}

int mca_btl_swf_launch_wait_port(char **host, int *port)
{
    mca_btl_swf_component_t *c = &mca_btl_swf_component;
    const char *port_file = swf_port_file();
    char addr[4200];
    double deadline;
    int delay_ms = 1, rc, status;

    if (NULL == port_file) {
        mca_btl_swf_show_help("no session dir", opal_process_info.nodename);
        return OPAL_ERROR;
    }
    deadline = swf_now_s() + c->connect_timeout;
    for (;;) {
        rc = tc_sockmodel_port_file_read(port_file, addr, sizeof(addr), port);
        if (rc > 0) {
            break;
        }
        if (-ECANCELED == rc) {
            /* the launcher failed and said why: nothing to add */
            opal_output_verbose(1, c->output,
                                "btl:swf: the private simulator was not started "
                                "(see the launching process's message)");
            return OPAL_ERR_NOT_AVAILABLE;
        }
        if (rc < 0) {
            mca_btl_swf_show_help("bad port file", opal_process_info.nodename, port_file);
            return OPAL_ERROR;
        }
        /* the launcher knows at once when its simulator died early */
        if (c->sim_pid > 0 && c->sim_pid == waitpid(c->sim_pid, &status, WNOHANG)) {
            char why[64];

            c->sim_pid = 0;
            if (WIFEXITED(status)) {
                snprintf(why, sizeof(why), "exit status %d", WEXITSTATUS(status));
            } else {
                snprintf(why, sizeof(why), "signal %d", WIFSIGNALED(status) ? WTERMSIG(status) : 0);
            }
            mca_btl_swf_show_help("simulator died at start", opal_process_info.nodename,
                                  NULL != c->sim_path ? c->sim_path : c->simulator, why);
            mca_btl_swf_launch_mark_failed();
            return OPAL_ERROR;
        }
        if (swf_now_s() > deadline) {
            mca_btl_swf_show_help("port file timeout", opal_process_info.nodename, port_file,
                                  c->connect_timeout);
            return OPAL_ERR_TIMEOUT;
        }
        swf_sleep_ms(delay_ms);
        if (delay_ms < 20) {
            delay_ms *= 2;
        }
    }
    *host = strdup(addr);
    return NULL == *host ? OPAL_ERR_OUT_OF_RESOURCE : OPAL_SUCCESS;
}

void mca_btl_swf_launch_started(void)
{
    mca_btl_swf_component_t *c = &mca_btl_swf_component;

    if (!c->port_file_owner) {
        return;
    }
    if (NULL != c->token_path) {
        (void) unlink(c->token_path);
    }
    if (NULL != c->port_file) {
        (void) unlink(c->port_file);
    }
}

void mca_btl_swf_launch_stop(void)
{
    mca_btl_swf_component_t *c = &mca_btl_swf_component;
    double deadline;
    int status, delay_ms = 1;
    bool termed = false;

    if (c->sim_pid > 0) {
        /* every client has said FINISH: the simulator is writing its report
         * and exiting; give it time, then insist */
        deadline = swf_now_s() + c->connect_timeout;
        for (;;) {
            pid_t r = waitpid(c->sim_pid, &status, WNOHANG);

            if (r == c->sim_pid || (r < 0 && EINTR != errno)) {
                break;
            }
            if (swf_now_s() > deadline) {
                if (termed) {
                    (void) kill(c->sim_pid, SIGKILL);
                    (void) waitpid(c->sim_pid, &status, 0);
                    break;
                }
                opal_output_verbose(
                    1, c->output,
                    "btl:swf: private simulator (pid %d) did not exit, terminating it",
                    (int) c->sim_pid);
                (void) kill(c->sim_pid, SIGTERM);
                termed = true;
                deadline = swf_now_s() + 5.0;
            }
            swf_sleep_ms(delay_ms);
            if (delay_ms < 20) {
                delay_ms *= 2;
            }
        }
        c->sim_pid = 0;
    }
    if (c->port_file_owner && NULL != c->sock_file) {
        /* the simulator removes its socket; a killed one cannot */
        (void) unlink(c->sock_file);
    }
    if (c->port_file_owner && NULL != c->token_path) {
        (void) unlink(c->token_path);
    }
    if (c->port_file_owner && NULL != c->port_file) {
        (void) unlink(c->port_file);
        c->port_file_owner = false;
    }
    free(c->port_file);
    c->port_file = NULL;
    free(c->sock_file);
    c->sock_file = NULL;
    free(c->sim_path);
    c->sim_path = NULL;
    free(c->token_path);
    c->token_path = NULL;
}

/* ---- a job on several hosts ------------------------------------------ */

/* 1 when the interface (name, IPv4 address) is one that
 * btl_swf_if_include names: an interface name or an a.b.c.d/n block;
 * an empty list takes every interface. */
static int swf_if_selected(const char *name, struct in_addr addr)
{
    const char *list = mca_btl_swf_component.if_include;
    char item[128];

    if (NULL == list || '\0' == list[0]) {
        return 1;
    }
    while ('\0' != *list) {
        size_t n = strcspn(list, ",");

        if (n > 0 && n < sizeof(item)) {
            char *slash;

            memcpy(item, list, n);
            item[n] = '\0';
            slash = strchr(item, '/');
            if (NULL == slash) {
                if (0 == strcmp(item, name)) {
                    return 1;
                }
            } else {
                struct in_addr net;
                char *end;
                long bits;

                *slash = '\0';
                bits = strtol(slash + 1, &end, 10);
                if (1 == inet_pton(AF_INET, item, &net) && '\0' == *end && bits >= 0 &&
                    bits <= 32) {
                    uint32_t mask = 0 == bits ? 0 : htonl(0xffffffffu << (32 - bits));

                    if ((addr.s_addr & mask) == (net.s_addr & mask)) {
                        return 1;
                    }
                }
            }
        }
        list += n;
        if (',' == *list) {
            list++;
        }
    }
    return 0;
}

/* The address of this host the other hosts reach: the first IPv4
 * address of an interface that is up, not loopback, and selected by
 * btl_swf_if_include. OPAL_SUCCESS or OPAL_ERR_NOT_FOUND. */
static int swf_cluster_address(char *buf, size_t len)
{
    struct ifaddrs *ifs = NULL, *i;
    int rc = OPAL_ERR_NOT_FOUND;

    if (0 != getifaddrs(&ifs)) {
        return OPAL_ERR_NOT_FOUND;
    }
    for (i = ifs; NULL != i; i = i->ifa_next) {
        struct in_addr a;

        if (NULL == i->ifa_addr || AF_INET != i->ifa_addr->sa_family || !(i->ifa_flags & IFF_UP) ||
            (i->ifa_flags & IFF_LOOPBACK)) {
            continue;
        }
        a = ((struct sockaddr_in *) (void *) i->ifa_addr)->sin_addr;
        if (swf_if_selected(i->ifa_name, a) &&
            NULL != inet_ntop(AF_INET, &a, buf, (socklen_t) len)) {
            rc = OPAL_SUCCESS;
            break;
        }
    }
    freeifaddrs(ifs);
    return rc;
}

/* "ADDRESS TOKEN" (or "failed") published by another process (value is
 * freed): *address malloc()ed. */
static int swf_line_parse(char *value, char **address, int *port, unsigned char *token)
{
    char host[4200], *space;

    if (NULL == value) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    if (0 == strcmp(value, "failed")) {
        /* rank 0 said why */
        free(value);
        return OPAL_ERR_NOT_AVAILABLE;
    }
    space = strchr(value, ' ');
    if (NULL == space || 0 != tc_sockmodel_token_parse(space + 1, token)) {
        free(value);
        mca_btl_swf_show_help("no cluster simulator", opal_process_info.nodename,
                              "the published address cannot be read");
        return OPAL_ERR_BAD_PARAM;
    }
    *space = '\0';
    if (0 != tc_sockmodel_address_parse(value, host, sizeof(host), port)) {
        free(value);
        mca_btl_swf_show_help("no cluster simulator", opal_process_info.nodename,
                              "the published address cannot be read");
        return OPAL_ERR_BAD_PARAM;
    }
    free(value);
    *address = strdup(host);
    return NULL == *address ? OPAL_ERR_OUT_OF_RESOURCE : OPAL_SUCCESS;
}

/* A job on several hosts: rank 0 starts the simulator listening on TCP
 * on its cluster address (with the job's token, as always) and publishes
 * address and token through PMIx; every other rank fetches them from
 * there (waiting for rank 0's commit). A rank 0 that failed publishes
 * "failed" and ends the job. *address is malloc()ed "HOST:PORT". */
int mca_btl_swf_launch_cluster(uint32_t nodes, char **address, int *port, unsigned char *token)
{
    mca_btl_swf_component_t *c = &mca_btl_swf_component;
    char addr[INET_ADDRSTRLEN + 8], line[300], *value = NULL;
    int rc;

    if (0 == OPAL_PROC_MY_NAME.vpid) {
        char *sim_host = NULL;
        int sim_port = 0;

        if (OPAL_SUCCESS != swf_cluster_address(addr, sizeof(addr) - 3)) {
            mca_btl_swf_show_help("no cluster address", opal_process_info.nodename,
                                  NULL != c->if_include && '\0' != c->if_include[0] ? c->if_include
                                                                                    : "(any)");
            (void) tc_ompi_publish_string(SWF_CLUSTER_KEY, "failed");
            return OPAL_ERR_NOT_FOUND;
        }
        strcat(addr, ":0");
        if (OPAL_SUCCESS != mca_btl_swf_launch_start(nodes, addr) ||
            OPAL_SUCCESS != mca_btl_swf_launch_wait_port(&sim_host, &sim_port) ||
            OPAL_SUCCESS != mca_btl_swf_token_read(mca_btl_swf_launch_token_file(), token)) {
            free(sim_host);
            (void) tc_ompi_publish_string(SWF_CLUSTER_KEY, "failed");
            return OPAL_ERROR;
        }
        snprintf(line, sizeof(line), "%s:%d ", sim_host, sim_port);
        tc_sockmodel_token_format(token, line + strlen(line));
        free(sim_host);
        rc = tc_ompi_publish_string(SWF_CLUSTER_KEY, line);
        if (OPAL_SUCCESS != rc) {
            mca_btl_swf_show_help("simulator start failed", opal_process_info.nodename, c->sim_path,
                                  "cannot publish its address through PMIx");
            return rc;
        }
        value = strdup(line);
    } else {
        double deadline = swf_now_s() + c->connect_timeout;
        int delay_ms = 1;

        /* PMIx answers "not found" instead of waiting when rank 0 shares
         * this host and has not committed yet: ask again, bounded */
        while (OPAL_SUCCESS != (rc = tc_ompi_fetch_string(0, SWF_CLUSTER_KEY, &value)) &&
               swf_now_s() < deadline) {
            swf_sleep_ms(delay_ms);
            if (delay_ms < 50) {
                delay_ms *= 2;
            }
        }
        if (OPAL_SUCCESS != rc) {
            mca_btl_swf_show_help("no cluster simulator", opal_process_info.nodename,
                                  "PMIx has no simulator address from rank 0");
            return rc;
        }
    }
    return swf_line_parse(value, address, port, token);
}

/* ---- a job started by another (MPI_Comm_spawn) ------------------------- */

int mca_btl_swf_launch_parent(char **address, int *port, unsigned char *token)
{
    char *value = NULL;
    int rc = tc_ompi_parent_fetch_string(SWF_JOIN_KEY, SWF_JOIN_FETCH_S, &value);

    opal_output_verbose(5, mca_btl_swf_component.output,
                        "btl:swf: the parent job's simulator: %s (%d)",
                        OPAL_SUCCESS == rc ? value : "none", rc);
    if (OPAL_SUCCESS != rc) {
        return OPAL_ERR_BAD_PARAM == rc ? rc : OPAL_ERR_NOT_FOUND;
    }
    if (0 == strcmp(value, SWF_JOIN_NONE)) {
        free(value);
        return OPAL_ERR_NOT_FOUND;
    }
    rc = swf_line_parse(value, address, port, token);
    /* "failed" is never published under this key: unreadable */
    return OPAL_ERR_NOT_AVAILABLE == rc ? OPAL_ERR_BAD_PARAM : rc;
}

int mca_btl_swf_launch_publish_join(const char *host, int port, const unsigned char *token)
{
    char line[4200 + 2 * SOCKMODEL_TOKEN_BYTES + 4];
    size_t n;

    if (NULL == host) {
        return tc_ompi_publish_for_children(SWF_JOIN_KEY, SWF_JOIN_NONE);
    }
    if (0 !=
        tc_sockmodel_address_format(line, sizeof(line) - 2 * SOCKMODEL_TOKEN_BYTES - 3, host,
                                    port)) {
        return OPAL_ERR_BAD_PARAM;
    }
    n = strlen(line);
    line[n++] = ' ';
    tc_sockmodel_token_format(token, line + n);
    /* the token file's line ends in a newline: not in the key */
    line[strcspn(line, "\n")] = '\0';
    return tc_ompi_publish_for_children(SWF_JOIN_KEY, line);
}
