/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * swfsim_net.c: the simulator's sockets: the listening socket (TCP or a
 * Unix-domain stream socket), one non-blocking connection per client, a single epoll loop without
 * threads, buffered input and writev-gathered output, and the port file.
 */

#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <netdb.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "swfsim.h"
#include "swfsim_engine.h"
#include "tc_sockmodel_client.h"

#define SWFSIM_IOV 64
#define SWFSIM_READS_PER_EVENT 8

static volatile sig_atomic_t swfsim_signalled;

static void swfsim_on_signal(int sig)
{
    swfsim_signalled = sig;
}

/* the port file through the client's one writer, errno set on failure */
static int swfsim_write_port_line(const char *path, const char *line)
{
    int rc = tc_sockmodel_port_file_write(path, line);

    if (0 != rc) {
        errno = -rc;
        return -1;
    }
    return 0;
}

int swfsim_write_port_file(const char *path, const char *host, unsigned port)
{
    char line[300];

    if (0 != tc_sockmodel_address_format(line, sizeof(line), host, (int) port)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return swfsim_write_port_line(path, line);
}

int swfsim_write_port_file_unix(const char *path, const char *sock_path)
{
    char line[sizeof(((struct sockaddr_un *) 0)->sun_path) + 8];

    snprintf(line, sizeof(line), "unix:%s", sock_path);
    return swfsim_write_port_line(path, line);
}

static void swfsim_epoll_update(swfsim_t *sim, swfsim_node_t *n)
{
    struct epoll_event ev;

    if (n->fd < 0) {
        return;
    }
    memset(&ev, 0, sizeof(ev));
    ev.events = (n->epoll_in ? EPOLLIN : 0) | (n->epoll_out ? EPOLLOUT : 0);
    ev.data.u32 = (uint32_t) (n - sim->slots);
    epoll_ctl(sim->epfd, EPOLL_CTL_MOD, n->fd, &ev);
}

void swfsim_net_want_in(swfsim_t *sim, swfsim_node_t *n, int on)
{
    if (n->epoll_in != on) {
        n->epoll_in = on;
        swfsim_epoll_update(sim, n);
    }
}

static void swfsim_net_want_out(swfsim_t *sim, swfsim_node_t *n, int on)
{
    if (n->epoll_out != on) {
        n->epoll_out = on;
        swfsim_epoll_update(sim, n);
    }
}

void swfsim_net_close_node(swfsim_t *sim, swfsim_node_t *n)
{
    if (n->fd >= 0) {
        epoll_ctl(sim->epfd, EPOLL_CTL_DEL, n->fd, NULL);
        close(n->fd);
        n->fd = -1;
    }
}

static int swfsim_net_open_tcp(swfsim_t *sim);

/* A socket file nobody accepts on is a leftover of a killed simulator. */
static int swfsim_unix_stale(const struct sockaddr_un *sa)
{
    struct stat st;
    int fd, stale;

    if (0 != lstat(sa->sun_path, &st) || !S_ISSOCK(st.st_mode)) {
        return 0;
    }
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        return 0;
    }
    stale = (0 != connect(fd, (const struct sockaddr *) sa, sizeof(*sa)) && ECONNREFUSED == errno);
    close(fd);
    return stale;
}

/* Listen on cfg.listen_unix, a socket file only this user may open. */
static int swfsim_net_open_unix(swfsim_t *sim)
{
    struct sockaddr_un sa;
    mode_t old_mask;
    int rc;

    memset(&sa, 0, sizeof(sa));
    sa.sun_family = AF_UNIX;
    if (strlen(sim->cfg.listen_unix) >= sizeof(sa.sun_path)) {
        swfsim_warn("the socket path %s is too long (at most %zu bytes)", sim->cfg.listen_unix,
                    sizeof(sa.sun_path) - 1);
        return -1;
    }
    memcpy(sa.sun_path, sim->cfg.listen_unix, strlen(sim->cfg.listen_unix) + 1);
    sim->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (sim->lfd < 0) {
        swfsim_warn("socket: %s", strerror(errno));
        return -1;
    }
    /* the file is created by bind: the umask keeps it private from the
     * first moment, chmod makes sure of it before anyone can connect */
    old_mask = umask(0077);
    rc = bind(sim->lfd, (struct sockaddr *) &sa, sizeof(sa));
    if (0 != rc && EADDRINUSE == errno && swfsim_unix_stale(&sa)) {
        unlink(sa.sun_path);
        rc = bind(sim->lfd, (struct sockaddr *) &sa, sizeof(sa));
    }
    umask(old_mask);
    if (0 != rc) {
        swfsim_warn("cannot bind unix:%s: %s", sa.sun_path, strerror(errno));
        return -1;
    }
    sim->unix_bound = 1;
    if (0 != chmod(sa.sun_path, 0600) || 0 != listen(sim->lfd, 128)) {
        swfsim_warn("cannot listen on unix:%s: %s", sa.sun_path, strerror(errno));
        return -1;
    }
    return 0;
}

static void swfsim_net_unlink_unix(swfsim_t *sim)
{
    if (sim->unix_bound) {
        unlink(sim->cfg.listen_unix);
        sim->unix_bound = 0;
    }
}

static int swfsim_net_open_epoll(swfsim_t *sim)
{
    struct epoll_event ev;

    sim->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (sim->epfd < 0) {
        swfsim_warn("epoll_create1: %s", strerror(errno));
        return -1;
    }
    memset(&ev, 0, sizeof(ev));
    ev.events = EPOLLIN;
    ev.data.u32 = UINT32_MAX;
    if (0 != epoll_ctl(sim->epfd, EPOLL_CTL_ADD, sim->lfd, &ev)) {
        swfsim_warn("epoll_ctl: %s", strerror(errno));
        return -1;
    }
    return 0;
}

int swfsim_net_open(swfsim_t *sim)
{
    if ('\0' == sim->cfg.listen_unix[0]) {
        return swfsim_net_open_tcp(sim);
    }
    if (0 != swfsim_net_open_unix(sim) || 0 != swfsim_net_open_epoll(sim)) {
        swfsim_net_unlink_unix(sim);
        return -1;
    }
    if ('\0' != sim->cfg.port_file[0] &&
        0 != swfsim_write_port_file_unix(sim->cfg.port_file, sim->cfg.listen_unix)) {
        swfsim_warn("cannot write the port file %s: %s", sim->cfg.port_file, strerror(errno));
        swfsim_net_unlink_unix(sim);
        return -1;
    }
    swfsim_log(sim, "listening on unix:%s for %u nodes", sim->cfg.listen_unix, sim->cfg.nodes);
    return 0;
}

static int swfsim_net_open_tcp(swfsim_t *sim)
{
    struct addrinfo hints, *res = NULL;
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    char portstr[16], host[NI_MAXHOST];
    int one = 1, rc;
    unsigned port;

    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    snprintf(portstr, sizeof(portstr), "%u", (unsigned) sim->cfg.listen_port);
    rc = getaddrinfo(sim->cfg.listen_host, portstr, &hints, &res);
    if (0 != rc) {
        swfsim_warn("cannot resolve %s: %s", sim->cfg.listen_host, gai_strerror(rc));
        return -1;
    }
    sim->lfd = socket(res->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (sim->lfd < 0) {
        swfsim_warn("socket: %s", strerror(errno));
        freeaddrinfo(res);
        return -1;
    }
    setsockopt(sim->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (0 != bind(sim->lfd, res->ai_addr, res->ai_addrlen) || 0 != listen(sim->lfd, 128)) {
        swfsim_warn("cannot listen on %s:%u: %s", sim->cfg.listen_host,
                    (unsigned) sim->cfg.listen_port, strerror(errno));
        freeaddrinfo(res);
        return -1;
    }
    freeaddrinfo(res);
    if (0 != getsockname(sim->lfd, (struct sockaddr *) &ss, &sl) ||
        0 !=
            getnameinfo((struct sockaddr *) &ss, sl, host, sizeof(host), portstr, sizeof(portstr),
                        NI_NUMERICHOST | NI_NUMERICSERV)) {
        swfsim_warn("getsockname: %s", strerror(errno));
        return -1;
    }
    port = (unsigned) atoi(portstr);
    sim->cfg.listen_port = (uint16_t) port;
    if (0 != swfsim_net_open_epoll(sim)) {
        return -1;
    }
    if ('\0' != sim->cfg.port_file[0] &&
        0 != swfsim_write_port_file(sim->cfg.port_file, host, port)) {
        swfsim_warn("cannot write the port file %s: %s", sim->cfg.port_file, strerror(errno));
        return -1;
    }
    swfsim_log(sim, "listening on %s:%u for %u nodes", host, port, sim->cfg.nodes);
    return 0;
}

static void swfsim_accept(swfsim_t *sim)
{
    for (;;) {
        struct epoll_event ev;
        swfsim_node_t *n;
        int one = 1;
        int fd = accept4(sim->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

        if (fd < 0) {
            if (EINTR == errno) {
                continue;
            }
            return; /* EAGAIN, or out of descriptors: try again later */
        }
        n = swfsim_slot_alloc(sim);
        if (NULL == n) {
            uint32_t refused = htonl(SOCKMODEL_RANK_REFUSED);
            swfsim_warn("refusing a client: no free connection slot");
            sim->refused++;
            (void) !send(fd, &refused, sizeof(refused), MSG_NOSIGNAL | MSG_DONTWAIT);
            close(fd);
            continue;
        }
        if ('\0' == sim->cfg.listen_unix[0]) {
            /* commands are small and latency-bound (TCP only) */
            setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        }
        n->fd = fd;
        n->epoll_in = 1;
        memset(&ev, 0, sizeof(ev));
        ev.events = EPOLLIN;
        ev.data.u32 = (uint32_t) (n - sim->slots);
        if (0 != epoll_ctl(sim->epfd, EPOLL_CTL_ADD, fd, &ev)) {
            close(fd);
            n->fd = -1;
            swfsim_node_drop(sim, n, "epoll_ctl failed");
            continue;
        }
        if (sim->started && (!swfsim_can_join(sim) || sim->done)) {
            /* refused at once, without waiting for its hello (a run that
             * takes joining nodes reads the hello: it may ask to join) */
            n->in_len = 0;
            tc_sockmodel_put32(n->in, SOCKMODEL_RANK_ANY);
            n->in_len = 4;
            swfsim_node_input(sim, n);
        }
    }
}

/* after input was consumed: read more only if there is room */
void swfsim_net_input_room(swfsim_t *sim, swfsim_node_t *n)
{
    int on;

    if (n->fd < 0) {
        return;
    }
    if (SWFSIM_N_CLOSING == n->state || SWFSIM_N_FINISHED == n->state || n->out_full) {
        on = 0;
    } else if (NULL != n->rx_msg && n->in_off == n->in_len) {
        on = 1;
    } else {
        on = n->in_len < n->in_cap;
    }
    swfsim_net_want_in(sim, n, on);
}

static void swfsim_read(swfsim_t *sim, swfsim_node_t *n)
{
    for (int i = 0; i < SWFSIM_READS_PER_EVENT && n->fd >= 0; i++) {
        ssize_t r;

        if (NULL != n->rx_msg && n->in_off == n->in_len) {
            /* a large payload goes straight into its message */
            swfsim_msg_t *m = n->rx_msg;
            r = read(n->fd, m->data + n->rx_got, m->len - n->rx_got);
            if (r > 0) {
                n->rx_got += (uint32_t) r;
            }
        } else {
            if (n->in_len == n->in_cap) {
                if (n->in_off == 0) {
                    break;
                }
                memmove(n->in, n->in + n->in_off, n->in_len - n->in_off);
                n->in_len -= n->in_off;
                n->in_off = 0;
            }
            r = read(n->fd, n->in + n->in_len, n->in_cap - n->in_len);
            if (r > 0) {
                n->in_len += (size_t) r;
            }
        }
        if (r > 0 && n->in_len < n->in_cap && NULL == n->rx_msg) {
            /* a short read drained the socket: spare the EAGAIN read */
            swfsim_node_input(sim, n);
            break;
        }
        if (0 == r) {
            swfsim_node_input(sim, n);
            if (n->fd < 0) {
                return;
            }
            if (SWFSIM_N_CLOSING == n->state || SWFSIM_N_FINISHED == n->state) {
                swfsim_net_close_node(sim, n);
            } else if (n->active && SOCKMODEL_FINISH == n->cmd.request && n->in_off == n->in_len &&
                       NULL == n->rx_msg) {
                /* FINISH sent and the socket closed: let the FINISH run */
                swfsim_net_want_in(sim, n, 0);
            } else if (NULL != n->rx_msg || n->in_off != n->in_len) {
                swfsim_node_drop(sim, n, "disconnected in the middle of a command");
            } else if (n->active) {
                swfsim_node_drop(sim, n, "disconnected while %s was outstanding",
                                 tc_sockmodel_request_name(n->cmd.request));
            } else {
                swfsim_node_drop(sim, n, "disconnected without FINISH");
            }
            return;
        }
        if (r < 0) {
            if (EINTR == errno) {
                continue;
            }
            if (EAGAIN == errno || EWOULDBLOCK == errno) {
                break;
            }
            swfsim_node_drop(sim, n, "read error: %s", strerror(errno));
            return;
        }
        swfsim_node_input(sim, n);
    }
    swfsim_net_input_room(sim, n);
}

int swfsim_net_flush(swfsim_t *sim, swfsim_node_t *n)
{
    while (n->out_count > 0 && n->fd >= 0) {
        struct iovec iov[SWFSIM_IOV];
        struct msghdr mh;
        int k = 0;
        size_t off = n->out_off;
        ssize_t w;

        for (size_t i = 0; i < n->out_count && k < SWFSIM_IOV - 1; i++) {
            swfsim_out_t *o = &n->out[(n->out_head + i) % n->out_cap];
            size_t plen = NULL != o->msg ? o->msg->len : 0;
            if (off < o->hdr_len) {
                iov[k].iov_base = o->hdr + off;
                iov[k].iov_len = o->hdr_len - off;
                k++;
                off = 0;
            } else {
                off -= o->hdr_len;
            }
            if (plen > off) {
                iov[k].iov_base = o->msg->data + off;
                iov[k].iov_len = plen - off;
                k++;
            }
            off = 0;
        }
        memset(&mh, 0, sizeof(mh));
        mh.msg_iov = iov;
        mh.msg_iovlen = (size_t) k;
        w = sendmsg(n->fd, &mh, MSG_NOSIGNAL);
        if (w < 0) {
            if (EINTR == errno) {
                continue;
            }
            if (EAGAIN == errno || EWOULDBLOCK == errno) {
                swfsim_net_want_out(sim, n, 1);
                return 0;
            }
            if (SWFSIM_N_CLOSING == n->state || SWFSIM_N_FINISHED == n->state) {
                swfsim_net_close_node(sim, n);
            } else {
                swfsim_node_drop(sim, n, "write error: %s", strerror(errno));
            }
            return -1;
        }
        /* retire fully written items */
        {
            size_t left = (size_t) w + n->out_off;
            while (n->out_count > 0) {
                swfsim_out_t *o = &n->out[n->out_head];
                size_t total = o->hdr_len + (NULL != o->msg ? o->msg->len : 0);
                if (left < total) {
                    break;
                }
                left -= total;
                swfsim_msg_free(sim, o->msg);
                o->msg = NULL;
                n->out_head = (n->out_head + 1) % n->out_cap;
                n->out_count--;
            }
            n->out_off = left;
        }
        swfsim_node_output_drained(sim, n);
    }
    if (0 == n->out_count) {
        swfsim_net_want_out(sim, n, 0);
        if (SWFSIM_N_CLOSING == n->state) {
            swfsim_node_drop(sim, n, "refused");
        } else if (SWFSIM_N_FINISHED == n->state) {
            swfsim_net_close_node(sim, n);
        }
    }
    return 0;
}

static void swfsim_flush_dirty(swfsim_t *sim)
{
    while (sim->ndirty > 0) {
        swfsim_node_t *n = &sim->slots[sim->dirty[--sim->ndirty]];
        n->on_dirty = 0;
        swfsim_net_flush(sim, n);
    }
}

static int swfsim_open_fds(const swfsim_t *sim)
{
    for (uint32_t i = 0; i < sim->nslots; i++) {
        if (sim->slots[i].fd >= 0) {
            return 1;
        }
    }
    return 0;
}

int swfsim_net_run(swfsim_t *sim)
{
    struct epoll_event evs[64];
    struct sigaction sa;

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = swfsim_on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);

    for (;;) {
        uint64_t now = swfsim_now_us();
        long wait_us = swfsim_step(sim, now);
        uint64_t dropped = sim->dropped;
        int timeout, nev;

        swfsim_flush_dirty(sim);
        if (sim->dropped != dropped && !sim->done) {
            /* a node lost in the flush may have been the last one, or the
             * one the others wait for: the step decides again, or this
             * loop would sleep on no connection at all */
            continue;
        }
        if (sim->done && (sim->deadlock || !swfsim_open_fds(sim))) {
            break;
        }
        if (swfsim_signalled) {
            swfsim_warn("stopped by signal %d", (int) swfsim_signalled);
            sim->exit_code = 128 + (int) swfsim_signalled;
            break;
        }
        if (!sim->started && sim->cfg.connect_timeout_s > 0 &&
            swfsim_wall() - sim->wall_start > (double) sim->cfg.connect_timeout_s) {
            swfsim_warn("not all %u nodes connected within %u s", sim->cfg.nodes,
                        sim->cfg.connect_timeout_s);
            sim->exit_code = 4;
            break;
        }
        if (wait_us < 0) {
            timeout = sim->started ? -1 : 1000;
        } else {
            timeout = (int) ((wait_us + 999) / 1000);
        }
        if (sim->done) {
            timeout = 100;
        }
        if (sim->nready > 0) {
            /* a flush above made room for a client held back by its
             * unread replies: parse it without sleeping */
            timeout = 0;
        }
        nev = 0;
        if (sim->started && !sim->done && sim->cfg.spin_us > 0 && 0 != timeout) {
            /* a sleep and wake-up costs more than a message's whole trip
             * through here: poll a little, yielding the core to clients */
            uint64_t until = swfsim_now_us() + sim->cfg.spin_us;
            do {
                nev = epoll_wait(sim->epfd, evs, 64, 0);
                if (0 != nev) {
                    break;
                }
                sched_yield();
            } while (swfsim_now_us() < until);
        }
        if (0 == nev) {
            nev = epoll_wait(sim->epfd, evs, 64, timeout);
        }
        if (nev < 0) {
            if (EINTR == errno) {
                continue;
            }
            swfsim_warn("epoll_wait: %s", strerror(errno));
            sim->exit_code = 1;
            break;
        }
        for (int i = 0; i < nev; i++) {
            swfsim_node_t *n;
            if (UINT32_MAX == evs[i].data.u32) {
                swfsim_accept(sim);
                continue;
            }
            n = &sim->slots[evs[i].data.u32];
            if (n->fd < 0) {
                continue;
            }
            if (evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
                swfsim_read(sim, n);
                if (n->fd >= 0 && (evs[i].events & (EPOLLHUP | EPOLLERR))) {
                    /* nothing more will come: do not spin on the event */
                    if (SWFSIM_N_FINISHED == n->state || SWFSIM_N_CLOSING == n->state) {
                        swfsim_net_close_node(sim, n);
                    } else {
                        swfsim_node_drop(sim, n, "connection closed or reset");
                    }
                    continue;
                }
            }
            if (n->fd >= 0 && (evs[i].events & EPOLLOUT)) {
                swfsim_net_flush(sim, n);
            }
        }
    }
    for (uint32_t i = 0; i < sim->nslots; i++) {
        swfsim_net_close_node(sim, &sim->slots[i]);
    }
    if (sim->lfd >= 0) {
        close(sim->lfd);
        sim->lfd = -1;
    }
    if (sim->epfd >= 0) {
        close(sim->epfd);
        sim->epfd = -1;
    }
    if ('\0' != sim->cfg.port_file[0]) {
        unlink(sim->cfg.port_file);
    }
    swfsim_net_unlink_unix(sim);
    sim->wall_end = swfsim_wall();
    return sim->exit_code;
}
