/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * swfsim-load.c: load generator for swfsim.  Starts a simulator (or uses
 * a running one), forks two clients and streams small messages from rank
 * 0 to rank 1: the sender writes SEND commands in large batches and waits
 * for an acknowledgement every --window messages; the receiver keeps
 * --depth RECV commands outstanding and checks order and contents.
 * Prints the message rate the simulator sustained.
 */

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#include "tc_sockmodel_client.h"

typedef struct load_opts {
    const char *server;
    const char *swfsim;
    const char *model;
    unsigned long messages;
    uint32_t size;
    uint32_t window;
    uint32_t depth;
    int pingpong;
} load_opts_t;

static double load_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

static unsigned char load_pattern(unsigned long i, uint32_t k)
{
    return (unsigned char) (i * 31u + k * 7u + 1u);
}

static int load_sender(const char *hostport, const load_opts_t *o)
{
    tc_sockmodel_client_t c;
    const char *why;
    size_t fsize = SOCKMODEL_CMD_BYTES + o->size;
    size_t batch = 65536 / fsize + 1;
    unsigned char *buf = malloc(batch * fsize);
    unsigned long i = 0;
    tc_sockmodel_reply_t r;

    if (NULL == buf || 0 != tc_sockmodel_client_connect(&c, hostport, 0, NULL, &why)) {
        fprintf(stderr, "sender: cannot connect\n");
        return 1;
    }
    while (i < o->messages) {
        unsigned long upto = i + o->window < o->messages ? i + o->window : o->messages;
        while (i < upto) {
            size_t k = 0;
            for (; k < batch && i < upto; k++, i++) {
                unsigned char *f = buf + k * fsize;
                tc_sockmodel_cmd_t cmd;
                tc_sockmodel_cmd_make(&cmd, SOCKMODEL_SEND, 1, (uint32_t) i, o->size, 0, 0);
                tc_sockmodel_cmd_encode(f, &cmd);
                for (uint32_t b = 0; b < o->size; b++) {
                    f[SOCKMODEL_CMD_BYTES + b] = load_pattern(i, b);
                }
            }
            if (0 != tc_sockmodel_client_write_all(c.fd, buf, k * fsize)) {
                fprintf(stderr, "sender: write failed\n");
                return 1;
            }
        }
        /* flow control: wait for the receiver's acknowledgement */
        if (0 != tc_sockmodel_client_call(&c, SOCKMODEL_RECVFROM, 1, 0, &r, NULL, 0)) {
            fprintf(stderr, "sender: ack failed\n");
            return 1;
        }
    }
    free(buf);
    return 0 == tc_sockmodel_client_finish(&c) ? 0 : 1;
}

static int load_receiver(const char *hostport, const load_opts_t *o)
{
    tc_sockmodel_client_t c;
    const char *why;
    unsigned char cmdbuf[SOCKMODEL_CMD_BYTES * 1024];
    size_t cap = 1 << 20, have = 0, off = 0;
    unsigned char *in = malloc(cap);
    unsigned long got = 0, posted = 0, since_ack = 0;
    double t0 = 0, t1;
    tc_sockmodel_cmd_t cmd;
    uint32_t depth = o->depth > 1024 ? 1024 : o->depth;

    if (NULL == in || 0 != tc_sockmodel_client_connect(&c, hostport, 1, NULL, &why)) {
        fprintf(stderr, "receiver: cannot connect\n");
        return 1;
    }
    tc_sockmodel_cmd_make(&cmd, SOCKMODEL_RECVFROM, 0, 0, 0, 0, 0);
    while (got < o->messages) {
        /* keep depth receives outstanding, written in one go */
        size_t k = 0;
        /* never past the end of the current window: the acknowledgement
         * SEND must not queue behind receives that only it can satisfy */
        unsigned long limit = (got / o->window + 1) * o->window;
        if (limit > o->messages) {
            limit = o->messages;
        }
        while (posted < limit && posted - got < depth) {
            tc_sockmodel_cmd_encode(cmdbuf + k * SOCKMODEL_CMD_BYTES, &cmd);
            k++;
            posted++;
        }
        if (k > 0 && 0 != tc_sockmodel_client_write_all(c.fd, cmdbuf, k * SOCKMODEL_CMD_BYTES)) {
            fprintf(stderr, "receiver: write failed\n");
            return 1;
        }
        if (off > 0) {
            memmove(in, in + off, have - off);
            have -= off;
            off = 0;
        }
        {
            ssize_t n = read(c.fd, in + have, cap - have);
            if (n <= 0) {
                fprintf(stderr, "receiver: connection lost\n");
                return 1;
            }
            have += (size_t) n;
        }
        for (;;) {
            tc_sockmodel_reply_t r;
            if (have - off < SOCKMODEL_REPLY_BYTES) {
                break;
            }
            tc_sockmodel_reply_decode(&r, in + off);
            if (have - off < SOCKMODEL_REPLY_BYTES + r.arg[2]) {
                break;
            }
            if (SOCKMODEL_RECVFROM != r.code || r.arg[1] != (uint32_t) got || r.arg[2] != o->size) {
                fprintf(stderr, "receiver: message %lu: unexpected reply code %u tag %u len %u\n",
                        got, r.code, r.arg[1], r.arg[2]);
                return 1;
            }
            for (uint32_t b = 0; b < o->size; b++) {
                if (in[off + SOCKMODEL_REPLY_BYTES + b] != load_pattern(got, b)) {
                    fprintf(stderr, "receiver: message %lu byte %u corrupted\n", got, b);
                    return 1;
                }
            }
            off += SOCKMODEL_REPLY_BYTES + r.arg[2];
            if (0 == got) {
                t0 = load_now();
            }
            got++;
            if (++since_ack == o->window || got == o->messages) {
                since_ack = 0;
                if (0 != tc_sockmodel_client_send(&c, 0, 0, NULL, 0)) {
                    return 1;
                }
            }
        }
    }
    t1 = load_now();
    printf("swfsim-load: %lu messages of %u bytes in %.3f s: %.0f messages/s "
           "(window %u, receive depth %u)\n",
           got, o->size, t1 - t0, (double) (got - 1) / (t1 - t0), o->window, depth);
    fflush(stdout);
    free(in);
    return 0 == tc_sockmodel_client_finish(&c) ? 0 : 1;
}

/* blocking ping-pong: rank 0 SENDs then RECVs, rank 1 the reverse; the
 * half round trip is the simulator's latency for one message */
static int load_pingpong(const char *hostport, const load_opts_t *o, uint32_t rank)
{
    tc_sockmodel_client_t c;
    const char *why;
    unsigned char *buf = calloc(1, o->size + 1);
    tc_sockmodel_reply_t r;
    uint32_t peer = 1 - rank;
    double t0 = 0;

    if (NULL == buf || 0 != tc_sockmodel_client_connect(&c, hostport, rank, NULL, &why)) {
        fprintf(stderr, "pingpong: cannot connect\n");
        return 1;
    }
    for (unsigned long i = 0; i < o->messages; i++) {
        if (1 == i) {
            t0 = load_now(); /* the first round trip warms up */
        }
        if (0 == rank && 0 != tc_sockmodel_client_send(&c, peer, 1, buf, o->size)) {
            return 1;
        }
        if (0 != tc_sockmodel_client_call(&c, SOCKMODEL_RECVFROM, peer, 0, &r, buf, o->size)) {
            fprintf(stderr, "pingpong: receive failed\n");
            return 1;
        }
        if (1 == rank && 0 != tc_sockmodel_client_send(&c, peer, 1, buf, o->size)) {
            return 1;
        }
    }
    if (0 == rank && o->messages > 1) {
        double dt = load_now() - t0;
        printf("swfsim-load: ping-pong %u bytes: %.2f us half round trip (%lu round trips)\n",
               o->size, dt / (double) (o->messages - 1) / 2.0 * 1e6, o->messages - 1);
        fflush(stdout);
    }
    free(buf);
    return 0 == tc_sockmodel_client_finish(&c) ? 0 : 1;
}

static void usage(void)
{
    fprintf(stderr,
            "usage: swfsim-load [--server HOST:PORT | --swfsim PATH] [--model simpel|torus]\n"
            "                   [--messages N] [--size BYTES] [--window W] [--depth D]\n"
            "                   [--pingpong]\n"
            "  default: starts the swfsim next to this program (or PATH) with 2 nodes, 1000000 "
            "messages of 8 bytes,\n"
            "  window 4096, depth 256; --pingpong: blocking SEND/RECV round trips,\n"
            "  prints the half round-trip time\n");
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"server", required_argument, NULL, 's'}, {"swfsim", required_argument, NULL, 'x'},
        {"model", required_argument, NULL, 'm'},  {"messages", required_argument, NULL, 'n'},
        {"size", required_argument, NULL, 'b'},   {"window", required_argument, NULL, 'w'},
        {"depth", required_argument, NULL, 'd'},  {"pingpong", no_argument, NULL, 'P'},
        {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0}};
    load_opts_t o = {NULL, NULL, "simpel", 1000000, 8, 4096, 256, 0};
    char hostport[300], portfile[64], selfpath[4096];
    pid_t sim = -1, kids[2];
    int c, status, rc = 0;

    while (-1 != (c = getopt_long(argc, argv, "h", opts, NULL))) {
        switch (c) {
        case 's':
            o.server = optarg;
            break;
        case 'x':
            o.swfsim = optarg;
            break;
        case 'm':
            o.model = optarg;
            break;
        case 'n':
            o.messages = strtoul(optarg, NULL, 0);
            break;
        case 'b':
            o.size = (uint32_t) strtoul(optarg, NULL, 0);
            break;
        case 'w':
            o.window = (uint32_t) strtoul(optarg, NULL, 0);
            break;
        case 'd':
            o.depth = (uint32_t) strtoul(optarg, NULL, 0);
            break;
        case 'P':
            o.pingpong = 1;
            break;
        default:
            usage();
            return 'h' == c ? 0 : 2;
        }
    }
    if (0 == o.messages || 0 == o.window || 0 == o.depth) {
        usage();
        return 2;
    }
    if (NULL == o.swfsim) {
        /* the simulator built next to this program */
        ssize_t l = readlink("/proc/self/exe", selfpath, sizeof(selfpath) - 8);
        char *slash;
        if (l > 0) {
            selfpath[l] = '\0';
        }
        slash = l > 0 ? strrchr(selfpath, '/') : NULL;
        if (NULL != slash) {
            strcpy(slash + 1, "swfsim");
            o.swfsim = selfpath;
        } else {
            o.swfsim = "swfsim";
        }
    }
    if (NULL == o.server) {
        snprintf(portfile, sizeof(portfile), "/tmp/swfsim-load.%ld.port", (long) getpid());
        sim = fork();
        if (0 == sim) {
            execlp(o.swfsim, o.swfsim, "--nodes", "2", "--model", o.model, "--port-file", portfile,
                   "--quiet", (char *) NULL);
            fprintf(stderr, "swfsim-load: cannot run %s: %s\n", o.swfsim, strerror(errno));
            _exit(127);
        }
        if (0 != tc_sockmodel_port_file_wait(portfile, hostport, sizeof(hostport), 10000)) {
            fprintf(stderr, "swfsim-load: the simulator did not start\n");
            kill(sim, SIGTERM);
            waitpid(sim, NULL, 0);
            return 1;
        }
    } else {
        snprintf(hostport, sizeof(hostport), "%s", o.server);
    }
    for (int k = 0; k < 2; k++) {
        kids[k] = fork();
        if (0 == kids[k]) {
            if (o.pingpong) {
                _exit(load_pingpong(hostport, &o, (uint32_t) k));
            }
            _exit(0 == k ? load_sender(hostport, &o) : load_receiver(hostport, &o));
        }
    }
    for (int k = 0; k < 2; k++) {
        if (kids[k] < 0 || waitpid(kids[k], &status, 0) < 0 || !WIFEXITED(status) ||
            0 != WEXITSTATUS(status)) {
            rc = 1;
        }
    }
    if (sim > 0) {
        if (waitpid(sim, &status, 0) < 0 || !WIFEXITED(status) || 0 != WEXITSTATUS(status)) {
            fprintf(stderr, "swfsim-load: the simulator failed\n");
            rc = 1;
        }
    }
    return rc;
}
