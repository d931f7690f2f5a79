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

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "opal/util/output.h"
#include "opal/util/proc.h"

#include "btl_swf.h"

#define SWF_PORT_FILE_NAME "swf.port"
#define SWF_SOCK_FILE_NAME "swf.sock"

static void swf_sleep_ms(int ms)
{
    struct timespec ts = { ms / 1000, (long) (ms % 1000) * 1000000L };

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
            opal_output_verbose(5, c->output, "btl:swf: %s is too long for a Unix socket, "
                                "using TCP loopback", c->sock_file);
            free(c->sock_file);
            c->sock_file = NULL;
        }
    }
    return c->sock_file;
}

/* Allow every CPU of the host (in the forked child only). */
static void swf_unbind(void)
{
    long ncpu = sysconf(_SC_NPROCESSORS_CONF);
    cpu_set_t set;
    long i;

    CPU_ZERO(&set);
    for (i = 0; i < ncpu && i < CPU_SETSIZE; i++) {
        CPU_SET((int) i, &set);
    }
    (void) sched_setaffinity(0, sizeof(set), &set);
}

int mca_btl_swf_launch_start(uint32_t nodes)
{
    mca_btl_swf_component_t *c = &mca_btl_swf_component;
    const char *port_file = swf_port_file();
    const char *sock_file = swf_sock_file();
    char nodes_str[16], ctimeout_str[16], spin_str[16], listen_str[128];
    pid_t pid;

    if (NULL == port_file) {
        mca_btl_swf_show_help("no session dir", opal_process_info.nodename);
        return OPAL_ERROR;
    }
    /* a bare name is looked up in PATH by execvp; a path must exist */
    if (NULL == c->simulator || '\0' == c->simulator[0] ||
        (NULL != strchr(c->simulator, '/') && 0 != access(c->simulator, X_OK))) {
        bool unset = (NULL == c->simulator || '\0' == c->simulator[0]);

        mca_btl_swf_show_help("simulator not found", opal_process_info.nodename,
                              unset ? "(not set)" : c->simulator,
                              unset ? "btl_swf_simulator is empty" : strerror(errno));
        return OPAL_ERR_NOT_FOUND;
    }
    /* a leftover from an earlier attempt would hand out a dead port */
    (void) unlink(port_file);
    if (NULL != sock_file) {
        (void) unlink(sock_file);
        snprintf(listen_str, sizeof(listen_str), "unix:%s", sock_file);
    } else {
        snprintf(listen_str, sizeof(listen_str), "127.0.0.1:0");
    }
    snprintf(nodes_str, sizeof(nodes_str), "%u", nodes);
    snprintf(ctimeout_str, sizeof(ctimeout_str), "%d", c->connect_timeout > 0 ? c->connect_timeout : 0);
    snprintf(spin_str, sizeof(spin_str), "%d", c->simulator_spin_us > 0 ? c->simulator_spin_us : 0);

    pid = fork();
    if (pid < 0) {
        mca_btl_swf_show_help("simulator start failed", opal_process_info.nodename,
                              c->simulator, strerror(errno));
        return OPAL_ERROR;
    }
    if (0 == pid) {
        const char *argv[24];
        int argc = 0, fd;

        /* the simulator must not outlive the process that started it */
        (void) prctl(PR_SET_PDEATHSIG, SIGTERM);
        /* nor inherit this rank's core binding: it serves every rank and
         * must not compete with the launcher for one core */
        swf_unbind();
        fd = open("/dev/null", O_RDONLY);
        if (fd >= 0) {
            (void) dup2(fd, 0);
        }
        /* keep stdout/stderr (the simulator's errors reach the user) but no
         * other descriptor of this MPI process */
        for (fd = 3; fd < 1024; fd++) {
            (void) close(fd);
        }
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
        execvp(c->simulator, (char *const *) argv);
        fprintf(stderr, "btl_swf: cannot execute %s: %s\n", c->simulator, strerror(errno));
        _exit(127);
    }

    c->sim_pid = pid;
    c->port_file_owner = true;
    opal_output_verbose(5, c->output, "btl:swf: started private simulator %s (pid %d, %u nodes, model %s)",
                        c->simulator, (int) pid, nodes, c->model);
    return OPAL_SUCCESS;
}

/* Parse "PORT", "HOST:PORT" or "unix:PATH" (a complete line); 0 when the
 * file is incomplete. A unix:PATH goes whole into *sock (port 0). */
static int swf_parse_port_file(const char *path, int *port, char **sock)
{
    char buf[256], *colon, *end;
    ssize_t n;
    long value;
    int fd;

    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return 0;
    }
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0) {
        return 0;
    }
    buf[n] = '\0';
    /* only a complete line counts: the simulator may still be writing */
    end = strchr(buf, '\n');
    if (NULL == end) {
        return 0;
    }
    *end = '\0';
    if (0 == strncmp(buf, SWF_CONN_UNIX_PREFIX, 5)) {
        if ('\0' == buf[5] || strlen(buf + 5) >= sizeof(((struct sockaddr_un *) 0)->sun_path)) {
            return -1;
        }
        *sock = strdup(buf);
        *port = 0;
        return NULL == *sock ? -1 : 1;
    }
    colon = strrchr(buf, ':');
    errno = 0;
    value = strtol(NULL != colon ? colon + 1 : buf, &end, 10);
    if (0 != errno || '\0' != *end || value <= 0 || value > 65535) {
        return -1;
    }
    *port = (int) value;
    return 1;
}

int mca_btl_swf_launch_wait_port(char **host, int *port)
{
    mca_btl_swf_component_t *c = &mca_btl_swf_component;
    const char *port_file = swf_port_file();
    char *sock = NULL;
    double deadline;
    int delay_ms = 1, rc, status;

    if (NULL == port_file) {
        mca_btl_swf_show_help("no session dir", opal_process_info.nodename);
        return OPAL_ERROR;
    }
    deadline = swf_now_s() + c->connect_timeout;
    for (;;) {
        rc = swf_parse_port_file(port_file, port, &sock);
        if (rc > 0) {
            break;
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
                                  c->simulator, why);
            return OPAL_ERROR;
        }
        if (swf_now_s() > deadline) {
            mca_btl_swf_show_help("port file timeout", opal_process_info.nodename,
                                  port_file, c->connect_timeout);
            return OPAL_ERR_TIMEOUT;
        }
        swf_sleep_ms(delay_ms);
        if (delay_ms < 20) {
            delay_ms *= 2;
        }
    }
    *host = NULL != sock ? sock : strdup("127.0.0.1");
    return NULL == *host ? OPAL_ERR_OUT_OF_RESOURCE : OPAL_SUCCESS;
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
                opal_output_verbose(1, c->output, "btl:swf: private simulator (pid %d) did not exit, terminating it",
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
    if (c->port_file_owner && NULL != c->port_file) {
        (void) unlink(c->port_file);
        c->port_file_owner = false;
    }
    free(c->port_file);
    c->port_file = NULL;
    free(c->sock_file);
    c->sock_file = NULL;
}
