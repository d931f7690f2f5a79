/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * swfsim.h: internal types of the SockModel network simulator: the run
 * configuration, simulated nodes and messages, the timed event queue, the
 * torus model and the statistics.  Shared by the swfsim program, its
 * load generator and the unit tests (all link libswfsim_core).
 */

#ifndef SWFSIM_H
#define SWFSIM_H

#include <stdint.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/uio.h>

#include "tc_sockmodel.h"

#define SWFSIM_PS_PER_NS 1000ull
/* nodes that may join a running simpel simulation unless --max-joined */
#define SWFSIM_MAX_JOINED_DEFAULT 64u

/* ------------------------------------------------------------------ */
/* configuration                                                       */

typedef struct swfsim_config {
    uint32_t nodes;
    int model; /* enum tc_sockmodel_model */
    char listen_host[256];
    uint16_t listen_port;
    char listen_unix[108]; /* --listen unix:PATH (sun_path's size); "" = TCP */
    char port_file[1024];
    char report_file[1024];
    uint32_t max_msg;
    int quiet;
    unsigned connect_timeout_s; /* 0: wait for N clients forever */
    /* torus */
    uint32_t torus_x, torus_y; /* 0: smallest near-square for N */
    uint64_t cycle_ps;         /* length of one cycle */
    uint64_t link_bw;          /* bytes per second */
    uint32_t router_cycles;    /* per-hop router delay */
    uint32_t header_bytes;     /* header flit */
    uint32_t probe_cycles;     /* cost of PROBE / immediate WAITING_START */
    uint64_t mem_limit;        /* payload bytes the simulator may hold */
    uint32_t spin_us;          /* poll this long before sleeping in epoll */
    uint32_t max_joined;       /* --max-joined: nodes that may join after the start */
    int parent_pid;            /* --parent-pid: end with this process; 0: no */
    int all_cpus;              /* --all-cpus: drop an inherited CPU binding */
    int have_token;            /* --token-file: every hello must carry it */
    unsigned char token[SOCKMODEL_TOKEN_BYTES];
    /* virtual nodes, traces, the HTML report (docs/swfsim_workloads.md, docs/swfsim.md) */
    char workload[256];     /* --workload SPEC: run built-in virtual nodes */
    char replay_file[1024]; /* --replay FILE: run a recorded trace */
    char record_file[1024]; /* --record FILE: write a trace of a live run */
    char report_html[1024]; /* --report-html FILE */
} swfsim_config_t;

void swfsim_config_defaults(swfsim_config_t *cfg);
/* Parse the command line (and the --config file it names).  Returns 0 to
 * run, 1 when the program should exit 0 (--help, --version), -1 on error
 * (message already printed). */
int swfsim_config_parse(swfsim_config_t *cfg, int argc, char **argv);
/* The same over settings already in cfg (no defaults first): a replay
 * applies the command line over the recorded parameters. */
int swfsim_config_parse_over(swfsim_config_t *cfg, int argc, char **argv);
/* Apply one "key = value" setting; returns 0 or -1. */
int swfsim_config_set(swfsim_config_t *cfg, const char *key, const char *value);
int swfsim_config_load(swfsim_config_t *cfg, const char *path);
void swfsim_usage(FILE *out);

/* ------------------------------------------------------------------ */
/* event queue: a binary min-heap ordered by (time, sequence)          */

enum swfsim_event_type {
    SWFSIM_EV_CMD = 1, /* a node's timed command comes due */
    SWFSIM_EV_INJECT,  /* a message enters the network */
    SWFSIM_EV_DELIVER  /* a message's tail reaches its destination */
};

struct swfsim_msg;

typedef struct swfsim_event {
    uint64_t time; /* ps */
    uint64_t seq;  /* insertion order: equal times stay FIFO */
    int type;
    uint32_t node;
    uint64_t gen; /* node generation, to cancel stale commands */
    struct swfsim_msg *msg;
} swfsim_event_t;

typedef struct swfsim_heap {
    swfsim_event_t *ev;
    size_t len, cap;
    uint64_t next_seq;
} swfsim_heap_t;

void swfsim_heap_init(swfsim_heap_t *h);
void swfsim_heap_fini(swfsim_heap_t *h);
int swfsim_heap_push(swfsim_heap_t *h, const swfsim_event_t *ev);
int swfsim_heap_pop(swfsim_heap_t *h, swfsim_event_t *out);
static inline const swfsim_event_t *swfsim_heap_top(const swfsim_heap_t *h)
{
    return h->len ? &h->ev[0] : NULL;
}

/* ------------------------------------------------------------------ */
/* torus model                                                         */

enum { SWFSIM_DIR_XP = 0, SWFSIM_DIR_XM, SWFSIM_DIR_YP, SWFSIM_DIR_YM };

typedef struct swfsim_link {
    uint64_t free_at; /* ps: the tail of the last packet has left */
    uint64_t bytes;
    uint64_t packets;
    uint64_t busy_ps;
} swfsim_link_t;

typedef struct swfsim_torus {
    uint32_t nodes, dx, dy;
    uint64_t t_hdr;    /* ps for the header flit on one link */
    uint64_t t_router; /* ps per router */
    uint64_t link_bw;
    uint32_t header_bytes;
    /* links: router r, direction d at r*4+d; injection of node i at
     * 4*dx*dy+i; ejection of node i at 4*dx*dy+nodes+i */
    swfsim_link_t *links;
    uint32_t nlinks;
    /* busy time per link over simulated time (swfsim_timeline.c) */
    uint64_t *tl;      /* nlinks x SWFSIM_TL_BUCKETS, ps */
    uint64_t tl_width; /* ps per bucket; doubles as time goes on */
} swfsim_torus_t;

#define SWFSIM_TL_BUCKETS 48

/* swfsim_timeline.c: link k busy from t0 for len ps */
int swfsim_timeline_init(swfsim_torus_t *t);
void swfsim_timeline_add(swfsim_torus_t *t, uint32_t link, uint64_t t0, uint64_t len);
/* the "link_timeline" member of the JSON report (busiest links) */
void swfsim_timeline_json(const swfsim_torus_t *t, FILE *f, uint64_t end_ps);

#define SWFSIM_MAX_PATH (2 * 4096 + 2)

/* Choose dimensions: given ones, else x = ceil(sqrt(n)), y = ceil(n/x). */
void swfsim_torus_dims(uint32_t n, uint32_t *x, uint32_t *y);
int swfsim_torus_init(swfsim_torus_t *t, const swfsim_config_t *cfg);
void swfsim_torus_fini(swfsim_torus_t *t);
/* Dimension-order path from src to dst as link indices (injection,
 * network links, ejection).  Returns the number of links (hops + 2). */
uint32_t swfsim_torus_route(const swfsim_torus_t *t, uint32_t src, uint32_t dst, uint32_t *path,
                            uint32_t max);
/* Serialisation time of n bytes on one link, rounded up to a ps. */
uint64_t swfsim_torus_ser(const swfsim_torus_t *t, uint64_t bytes);
/* Send len payload bytes from src to dst, injected at time t_inj: reserve
 * the path and return the delivery time (tail at the destination);
 * *start gets the time the head left (after waiting for the links). */
uint64_t swfsim_torus_transfer(swfsim_torus_t *t, uint32_t src, uint32_t dst, uint32_t len,
                               uint64_t t_inj, uint64_t *start);
/* Human name of link i, e.g. "r3+x" or "inj2". */
void swfsim_torus_link_name(const swfsim_torus_t *t, uint32_t i, char *buf, size_t n);

/* ------------------------------------------------------------------ */
/* statistics                                                          */

#define SWFSIM_HIST_BUCKETS (64 * 8)

typedef struct swfsim_hist {
    uint64_t count, sum, min, max;
    uint64_t bucket[SWFSIM_HIST_BUCKETS];
} swfsim_hist_t;

void swfsim_hist_add(swfsim_hist_t *h, uint64_t v);
/* Approximate percentile (upper bound of the bucket, at most max). */
uint64_t swfsim_hist_pct(const swfsim_hist_t *h, double pct);

/* ------------------------------------------------------------------ */
/* nodes and messages                                                  */

typedef struct swfsim_msg {
    struct swfsim_msg *next;
    uint32_t src, dst, tag, len;
    uint64_t t_send;    /* ps, sender's clock */
    uint64_t t_deliver; /* ps */
    unsigned char data[];
} swfsim_msg_t;

/* one queued piece of output: a reply header and maybe a payload */
typedef struct swfsim_out {
    unsigned char hdr[SOCKMODEL_REPLY_BYTES];
    uint32_t hdr_len;
    swfsim_msg_t *msg; /* payload owner, freed when written */
} swfsim_out_t;

enum swfsim_node_state {
    SWFSIM_N_FREE = 0, /* slot unused */
    SWFSIM_N_HELLO,    /* connected, hello not complete */
    SWFSIM_N_READY,    /* hello accepted, waiting for the start */
    SWFSIM_N_RUNNING,
    SWFSIM_N_BLOCKED_RECV,
    SWFSIM_N_BLOCKED_BARRIER,
    SWFSIM_N_WAITING,
    SWFSIM_N_FINISHED, /* FINISH done; closed once output is out */
    SWFSIM_N_CLOSING,  /* refused; closed once output is out */
    SWFSIM_N_DEAD      /* dropped after the start */
};

typedef struct swfsim_node {
    int fd;
    int state;
    uint32_t rank;
    uint32_t req_rank;
    uint64_t conn_order;
    uint64_t clock; /* ps */
    int active;     /* a command awaits its event or a wake-up */
    uint64_t gen;
    tc_sockmodel_cmd_t cmd; /* the active command */
    uint64_t deadline_us;   /* WAITING: real-time end */
    /* input */
    unsigned char *in;
    size_t in_off, in_len, in_cap;
    swfsim_msg_t *rx_msg; /* SEND whose payload is being read */
    uint32_t rx_got;
    int epoll_in; /* EPOLLIN currently requested */
    int epoll_out;
    /* delivered messages */
    swfsim_msg_t *qhead, *qtail;
    uint64_t queued_bytes;
    /* output */
    swfsim_out_t *out;
    size_t out_head, out_count, out_cap;
    size_t out_off;  /* bytes of the head item already written */
    size_t out_peak; /* most replies queued at once */
    int out_full;    /* SWFSIM_OUT_MAX replies queued: parse no more */
    int on_dirty, on_ready;
    /* barriers */
    uint32_t barrier_inits;
    /* statistics */
    uint64_t msgs_sent, bytes_sent, msgs_recv, bytes_recv, discarded;
    /* the simulator's view of the node's waits: how each WAITING_START
     * ended, and the wall time the node spent parked in them */
    uint64_t waits_found, waits_expired, waits_stopped;
    uint64_t wait_wall_us, wait_since_us;
    uint64_t wait_ps;                  /* blocked for a message or a barrier */
    swfsim_msg_t *inj_head, *inj_tail; /* sent, not yet in the torus */
    /* WATCH: node-down notices with this tag (swfsim_watch.c) */
    int watching;
    uint32_t watch_tag;
    uint64_t notices; /* notices queued for this node */
    char why[160];    /* reason of a drop */
} swfsim_node_t;

typedef struct swfsim_barrier {
    uint32_t participants;
    uint32_t entered;
    uint32_t round;
    uint64_t latest; /* ps, latest entry */
} swfsim_barrier_t;

typedef struct swfsim {
    swfsim_config_t cfg;
    swfsim_node_t *slots; /* connections; nodes[] points into it */
    uint32_t nslots;
    swfsim_node_t **nodes; /* by rank, after the start */
    uint32_t nnodes;       /* nodes in the run: --nodes, then more as nodes join */
    uint32_t joined;       /* of them joined after the start (SOCKMODEL_RANK_JOIN) */
    int started;
    int done;
    int exit_code;
    uint64_t conn_counter;
    uint64_t now; /* ps: time of the last processed event */
    swfsim_heap_t heap;
    swfsim_torus_t torus;
    swfsim_barrier_t *barriers;
    uint32_t nbarriers;
    /* lists of nodes: output to flush, input to parse */
    uint32_t *dirty;
    uint32_t ndirty;
    uint32_t *ready;
    uint32_t nready;
    /* io */
    int epfd, lfd;
    int unix_bound; /* cfg.listen_unix was created: unlink it at the end */
    /* statistics */
    swfsim_hist_t latency; /* ns */
    uint64_t msgs_total, bytes_total, discarded_total, refused, dropped;
    uint64_t held_bytes; /* payload of all messages alive */
    uint64_t events;
    double wall_start, wall_run_start, wall_end;
    int deadlock;
    struct swfsim_trace *trace; /* --record: the trace being written */
} swfsim_t;

/* Most replies queued for one client. A client that sends requests and
 * does not read their replies (pipelined SIZE or PROBE) is no longer
 * parsed, nor read from, until its output has drained to half of it:
 * its queue, and the simulator's memory, stay bounded. */
#define SWFSIM_OUT_MAX 4096u
/* injection queues (swfsim_inject.c).  offer: queue m, sent by n at
 * m->t_send (0, or -1 out of memory: m not queued).  due: an INJECT
 * event came due: 1 and *deliver = arrival time when the packet went,
 * 0 when it was put off until the injection link is free, -1 out of
 * memory.  The message of a queued INJECT event is its node's queue head:
 * free it with the queue, not with the event. */
int swfsim_inject_offer(swfsim_t *sim, swfsim_node_t *n, swfsim_msg_t *m);
int swfsim_inject_due(swfsim_t *sim, const swfsim_event_t *ev, uint64_t *deliver);

/* a message m from node n (the sender, alive or dead) enters the network:
 * delivered at once (simpel), or queued for injection at m->t_send
 * (torus). 0, or -1 out of memory (m freed) */
int swfsim_post(swfsim_t *sim, swfsim_node_t *n, swfsim_msg_t *m);

/* node-down notices (swfsim_watch.c, the WATCH request of
 * docs/sockmodel.md): start: n asked for them with c (the notices of the
 * nodes dead already are queued at once); 0, or -1 when n was dropped.
 * died: n has just died; every other watching node that is alive gets
 * its notice. is_notice: m, given to n, is one of n's notices */
int swfsim_watch_start(swfsim_t *sim, swfsim_node_t *n, const tc_sockmodel_cmd_t *c);
void swfsim_watch_died(swfsim_t *sim, swfsim_node_t *dead);
int swfsim_watch_is_notice(const swfsim_node_t *n, const swfsim_msg_t *m);

/* engine (swfsim_engine.c and the pieces swfsim_engine.h names): no
 * system calls except through the hooks below, which the network layer
 * implements */
int swfsim_init(swfsim_t *sim, const swfsim_config_t *cfg);
void swfsim_fini(swfsim_t *sim);
/* a new connection in slot s */
swfsim_node_t *swfsim_slot_alloc(swfsim_t *sim);
/* bytes arrived in n->in: parse what can be parsed */
void swfsim_node_input(swfsim_t *sim, swfsim_node_t *n);
/* connection lost (eof or error); reason for the log */
void swfsim_node_drop(swfsim_t *sim, swfsim_node_t *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* process due events, expire waits, parse ready nodes; returns the
 * microseconds until the next wait deadline (or -1 for none) */
long swfsim_step(swfsim_t *sim, uint64_t now_us);
/* the network layer wrote some of n's output */
void swfsim_node_output_drained(swfsim_t *sim, swfsim_node_t *n);
/* n sends m (a client's SEND or a virtual node's): counted for the
 * report, traced when a run is recorded */
void swfsim_count_send(swfsim_t *sim, swfsim_node_t *n, const swfsim_msg_t *m);
/* append a reply (and payload owner) to n's output */
void swfsim_msg_free(swfsim_t *sim, swfsim_msg_t *m);
void swfsim_node_reply(swfsim_t *sim, swfsim_node_t *n, const tc_sockmodel_reply_t *r,
                       swfsim_msg_t *payload);
/* messages (swfsim_log.c) and real-time clocks (swfsim_clock.c) */
void swfsim_log(swfsim_t *sim, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void swfsim_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
uint64_t swfsim_now_us(void);
double swfsim_wall(void);

/* network layer (swfsim_net.c) */
int swfsim_net_open(swfsim_t *sim);
int swfsim_net_run(swfsim_t *sim);
void swfsim_net_close_node(swfsim_t *sim, swfsim_node_t *n);
/* write out what n has queued; returns -1 if the connection broke */
int swfsim_net_flush(swfsim_t *sim, swfsim_node_t *n);
void swfsim_net_want_in(swfsim_t *sim, swfsim_node_t *n, int on);
/* input was consumed (also by a command that came due later): read more
 * from n if its buffer has room again */
void swfsim_net_input_room(swfsim_t *sim, swfsim_node_t *n);
int swfsim_write_port_file(const char *path, const char *host, unsigned port);
/* the port file of a Unix-domain socket: "unix:PATH" */
int swfsim_write_port_file_unix(const char *path, const char *sock_path);

/* report (swfsim_report.c) */
int swfsim_report_json(swfsim_t *sim, FILE *f);
void swfsim_report_summary(swfsim_t *sim, FILE *f);
int swfsim_report_write(swfsim_t *sim);
/* --report-html (swfsim_report_html.c): from the JSON report of sim */
int swfsim_report_html_write(swfsim_t *sim);
/* the same from a JSON report's text; returns 0 or -1 (message printed) */
int swfsim_html_from_json(const char *json, size_t len, FILE *out, const char *src_name);

/* whole program, used by main() and by tests that fork a simulator */
int swfsim_main(int argc, char **argv);

#endif /* SWFSIM_H */
