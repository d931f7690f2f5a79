/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * tc_sockmodel_addr.c: SockModel addresses and the port file: the one
 * parser and writer of HOST:PORT, [IPv6]:PORT and unix:PATH, and the
 * port-file line a simulator writes (atomically, by rename) and its
 * launcher waits for.
 */

#define _GNU_SOURCE /* ppoll; every piece of the client sees the same libc */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "tc_sockmodel_client_priv.h"

int tc_sockmodel_address_parse(const char *address, char *host, size_t host_len, int *port)
{
    const char *colon;
    char *end;
    size_t n;
    long value;

    if (NULL != address && 0 == strncmp(address, TC_SOCKMODEL_UNIX_PREFIX, 5)) {
        /* unix:PATH stays whole in host; the path must fit sun_path */
        n = strlen(address);
        if (n == 5 || n + 1 > host_len || n - 5 >= sizeof(((struct sockaddr_un *) 0)->sun_path)) {
            return -EINVAL;
        }
        memcpy(host, address, n + 1);
        *port = 0;
        return 0;
    }
    if (NULL == address || NULL == (colon = strrchr(address, ':'))) {
        return -EINVAL;
    }
    n = (size_t) (colon - address);
    if (n + 1 > host_len) {
        return -EINVAL;
    }
    if (0 == n) {
        snprintf(host, host_len, "127.0.0.1");
    } else {
        memcpy(host, address, n);
        host[n] = '\0';
        /* [::1]:port */
        if ('[' == host[0] && n > 2 && ']' == host[n - 1]) {
            memmove(host, host + 1, n - 2);
            host[n - 2] = '\0';
        }
    }
    errno = 0;
    value = strtol(colon + 1, &end, 10);
    if (0 != errno || end == colon + 1 || '\0' != *end || value <= 0 || value > 65535) {
        return -EINVAL;
    }
    *port = (int) value;
    return 0;
}

int tc_sm_write_fd(int fd, const void *buf, size_t len, int is_socket)
{
    const unsigned char *p = buf;

    while (len > 0) {
        ssize_t w = is_socket ? send(fd, p, len, MSG_NOSIGNAL) : write(fd, p, len);

        if (w < 0) {
            if (EINTR == errno) {
                continue;
            }
            return -1;
        }
        p += w;
        len -= (size_t) w;
    }
    return 0;
}

int tc_sockmodel_address_format(char *buf, size_t len, const char *host, int port)
{
    int n;

    if (0 == strncmp(host, TC_SOCKMODEL_UNIX_PREFIX, 5)) {
        n = snprintf(buf, len, "%s", host);
    } else if (NULL != strchr(host, ':')) {
        n = snprintf(buf, len, "[%s]:%d", host, port); /* IPv6 */
    } else {
        n = snprintf(buf, len, "%s:%d", host, port);
    }
    return (n < 0 || (size_t) n >= len) ? -ENAMETOOLONG : 0;
}

int tc_sockmodel_port_file_write(const char *path, const char *line)
{
    char tmp[4200];
    size_t n = strlen(line);
    int fd, err;

    if ((size_t) snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long) getpid()) >= sizeof(tmp)) {
        return -ENAMETOOLONG;
    }
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) {
        return -errno;
    }
    if (0 != tc_sm_write_fd(fd, line, n, 0) || 0 != tc_sm_write_fd(fd, "\n", 1, 0)) {
        err = errno;
        close(fd);
        unlink(tmp);
        return -err;
    }
    if (0 != close(fd) || 0 != rename(tmp, path)) {
        err = errno;
        unlink(tmp);
        return -err;
    }
    return 0;
}

int tc_sockmodel_port_file_read(const char *path, char *host, size_t host_len, int *port)
{
    char buf[4200], *end;
    ssize_t n;
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
    /* only a complete line counts: the writer may be mid-way */
    end = strchr(buf, '\n');
    if (NULL == end) {
        return 0;
    }
    *end = '\0';
    if (0 == strcmp(buf, TC_SOCKMODEL_PORT_FILE_FAILED)) {
        return -ECANCELED;
    }
    return 0 == tc_sockmodel_address_parse(buf, host, host_len, port) ? 1 : -EINVAL;
}

int tc_sockmodel_port_file_wait(const char *path, char *buf, size_t len, int timeout_ms)
{
    char host[4200];
    int port = 0, rc;

    for (int waited = 0;; waited += 10) {
        rc = tc_sockmodel_port_file_read(path, host, sizeof(host), &port);
        if (rc > 0) {
            return 0 == tc_sockmodel_address_format(buf, len, host, port) ? 0 : -1;
        }
        if (rc < 0 || waited >= timeout_ms) {
            return -1;
        }
        usleep(10000);
    }
}
