/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * tc_sockmodel.h: the SockModel wire protocol spoken between a simulated
 * node (btl_swf, test clients) and the simulator (swfsim).
 *
 * This is the ONE definition of the wire format, the request codes, the
 * reply layouts and the limits for both sides.  docs/sockmodel.md is the
 * prose version; keep them in step.  Header-only: everything is static
 * inline and depends on libc only.
 *
 * Summary:
 *   - connect, send a 4-byte hello (requested rank, 99999 = any), read a
 *     4-byte answer (the rank, or SOCKMODEL_RANK_REFUSED).  The answer is
 *     sent only once all N nodes have connected (the run has started).
 *   - every command is 6 x uint32 in network byte order:
 *       request, param[0..3], consumetime        (24 bytes)
 *     SEND is followed by param[2] bytes of payload.
 *   - every reply is 8 x uint32 in network byte order:
 *       code, status, arg[0..3], clock_hi, clock_lo   (32 bytes)
 *     a RECV* reply is followed by arg[2] bytes of payload.
 *   - SEND and CONSUMETIME have no reply; every other request has
 *     exactly one.  Any malformed command makes the simulator log a
 *     reason and close the connection.
 */

#ifndef TC_SOCKMODEL_H
#define TC_SOCKMODEL_H

#include <stdint.h>
#include <stddef.h>
#include <string.h>
#include <arpa/inet.h>
#include <errno.h>
#include <sys/random.h>
#include <sys/types.h>

/* Protocol revision of this header (not sent on the wire). */
#define SOCKMODEL_PROTOCOL_VERSION 2

/* ---- framing ---------------------------------------------------------- */

#define SOCKMODEL_HELLO_BYTES 4u   /* client -> server: requested rank */
#define SOCKMODEL_WELCOME_BYTES 4u /* server -> client: assigned rank */
#define SOCKMODEL_CMD_WORDS 6u
#define SOCKMODEL_CMD_BYTES (SOCKMODEL_CMD_WORDS * 4u) /* 24 */
#define SOCKMODEL_REPLY_WORDS 8u
#define SOCKMODEL_REPLY_BYTES (SOCKMODEL_REPLY_WORDS * 4u) /* 32 */

/* ---- handshake values ------------------------------------------------- */

#define SOCKMODEL_RANK_ANY 99999u          /* "give me any free rank" */
#define SOCKMODEL_RANK_REFUSED 0xFFFFFFFFu /* welcome: connection refused */

/* The hello with a job token: this word (instead of a rank), the
 * requested rank, then SOCKMODEL_TOKEN_BYTES bytes of token. A simulator
 * started with a token refuses every hello without it. The token file
 * holds the token as one line of 2 x SOCKMODEL_TOKEN_BYTES hex digits. */
#define SOCKMODEL_HELLO_AUTH 0x53574654u /* "SWFT" */
#define SOCKMODEL_TOKEN_BYTES 32u
#define SOCKMODEL_HELLO_AUTH_BYTES (8u + SOCKMODEL_TOKEN_BYTES)

/* The requested rank of a node that joins a run already going (a job
 * started by MPI_Comm_spawn joining its parent's simulation): the
 * simulator welcomes it with the next node number beyond the ones it has
 * (simpel model, at most --max-joined such nodes) or refuses it. Sent in
 * either hello; a simulator with a token wants it here too. */
#define SOCKMODEL_RANK_JOIN 0xFFFFFFFEu

/* A hello as the simulator reads it, from either form:
 *   plain: rank (4 bytes)
 *   auth:  SOCKMODEL_HELLO_AUTH, rank, token (8 + SOCKMODEL_TOKEN_BYTES)
 * rank is a node number, SOCKMODEL_RANK_ANY or SOCKMODEL_RANK_JOIN. */
typedef struct tc_sockmodel_hello {
    uint32_t rank;
    int has_token;
    unsigned char token[SOCKMODEL_TOKEN_BYTES];
} tc_sockmodel_hello_t;

/* ---- limits ----------------------------------------------------------- */

/* Largest SEND payload the simulator accepts unless started with
 * --max-msg; the value in force is returned by SIZE (arg[1]). */
#define SOCKMODEL_MAX_MSG_DEFAULT (64u * 1024u * 1024u)
/* --max-msg may not exceed this. */
#define SOCKMODEL_MAX_MSG_LIMIT (1024u * 1024u * 1024u)
/* Largest number of simulated nodes (--nodes). */
#define SOCKMODEL_MAX_NODES 4096u
/* Upper bound of a WAITING_START wait in microseconds; larger values are
 * clamped, so a wait always ends. */
#define SOCKMODEL_WAIT_MAX_US 10000000u
/* Most barriers a run can create with BARRIER_INIT. */
#define SOCKMODEL_MAX_BARRIERS 1024u

/* ---- request codes (command word 0) ----------------------------------- */

enum tc_sockmodel_request {
    SOCKMODEL_FINISH = 1,         /* reply, then the server closes      */
    SOCKMODEL_SIZE = 2,           /* reply arg0=nodes arg1=max_msg arg2=model */
    SOCKMODEL_RANK = 3,           /* reply arg0=rank                    */
    SOCKMODEL_CONSUMETIME = 4,    /* p0=cycles; no reply                */
    SOCKMODEL_SEND = 5,           /* p0=dest p1=tag p2=len; payload; no reply */
    SOCKMODEL_RECV = 6,           /* blocking; reply + payload          */
    SOCKMODEL_RECVFROM = 7,       /* p0=src; blocking; reply + payload  */
    SOCKMODEL_RECVTAG = 8,        /* p0=tag; blocking; reply + payload  */
    SOCKMODEL_PROBE = 9,          /* reply FOUND(src,tag,len) or NONE   */
    SOCKMODEL_PROBEFROM = 10,     /* p0=src                             */
    SOCKMODEL_PROBETAG = 11,      /* p0=tag                             */
    SOCKMODEL_BARRIER_INIT = 12,  /* p0=participants (0=all); reply arg0=id */
    SOCKMODEL_BARRIER_ENTER = 13, /* p0=id; blocking; reply arg0=id arg1=round */
    SOCKMODEL_WAITING_START = 14, /* p0=timeout_us; reply FOUND/EXPIRED/STOPPED */
    SOCKMODEL_WAITING_STOP = 15,  /* reply OK (after any pending WAITING_START reply) */
    SOCKMODEL_WATCH = 16          /* p0=tag, p1=0; reply OK; node-down notices from now on */
};

#define SOCKMODEL_REQUEST_MIN SOCKMODEL_FINISH
#define SOCKMODEL_REQUEST_MAX SOCKMODEL_WATCH

/* ---- reply status (reply word 1) -------------------------------------- */

enum tc_sockmodel_status {
    SOCKMODEL_ST_OK = 0,      /* request done                              */
    SOCKMODEL_ST_FOUND = 1,   /* PROBE, WAITING_START: a message is queued */
    SOCKMODEL_ST_NONE = 2,    /* PROBE*: nothing queued                     */
    SOCKMODEL_ST_EXPIRED = 3, /* WAITING_START: the timeout passed          */
    SOCKMODEL_ST_STOPPED = 4  /* WAITING_START: ended by WAITING_STOP       */
};

/* ---- simulation models (SIZE reply arg2) ------------------------------ */

enum tc_sockmodel_model { SOCKMODEL_MODEL_SIMPEL = 0, SOCKMODEL_MODEL_TORUS = 1 };

/* Indices into tc_sockmodel_reply_t.arg for message information
 * (RECV*, PROBE*, WAITING_START with FOUND). */
#define SOCKMODEL_ARG_SRC 0
#define SOCKMODEL_ARG_TAG 1
#define SOCKMODEL_ARG_LEN 2

/* SIZE reply arg[3]: features this simulator offers (a client that does
 * not know a bit ignores it). */
#define SOCKMODEL_FEATURE_WAIT_RECV 0x1u /* WAITING_START may take the message */
#define SOCKMODEL_FEATURE_WATCH 0x2u     /* the WATCH request (node-down notices) */
#define SOCKMODEL_FEATURE_JOIN 0x4u      /* hellos with SOCKMODEL_RANK_JOIN are served */

/* WATCH (once per node, p1 must be 0): from then on, for every other node
 * that dies during the run (its connection drops without FINISH, or the
 * simulator drops it), the watcher gets a message of length 0 from that
 * node with tag p0, behind every message the dead node had sent it
 * (also for the nodes that were dead already). A node that finished is
 * not dead. The tag is the watcher's choice: one its own traffic never
 * uses. */

/* WAITING_START p1: flags. With SOCKMODEL_WAIT_RECV the message that ends
 * the wait is removed and returned at once, like RECV: reply code
 * WAITING_START, status OK, src/tag/len, then the payload. It saves the
 * separate RECV round trip per message. */
#define SOCKMODEL_WAIT_RECV 0x1u
#define SOCKMODEL_WAIT_FLAGS_KNOWN (SOCKMODEL_WAIT_RECV)

/* ---- decoded forms ---------------------------------------------------- */

typedef struct tc_sockmodel_cmd {
    uint32_t request;
    uint32_t param[4];
    uint32_t consumetime; /* cycles of CPU time since the last command */
} tc_sockmodel_cmd_t;

typedef struct tc_sockmodel_reply {
    uint32_t code;   /* the request code this answers */
    uint32_t status; /* enum tc_sockmodel_status */
    uint32_t arg[4];
    uint64_t clock_ns; /* the node's simulated clock (0 in simpel) */
} tc_sockmodel_reply_t;

/* The decoded forms hold the wire's words in the wire's order (the reply's
 * clock_hi/clock_lo as one 64-bit field), so their layout is the frame's. */
#include <stddef.h>
_Static_assert(sizeof(tc_sockmodel_cmd_t) == SOCKMODEL_CMD_BYTES, "command: six words");
_Static_assert(offsetof(tc_sockmodel_cmd_t, param) == 4 &&
                   offsetof(tc_sockmodel_cmd_t, consumetime) == 20,
               "command word order");
_Static_assert(sizeof(tc_sockmodel_reply_t) == SOCKMODEL_REPLY_BYTES, "reply: eight words");
_Static_assert(offsetof(tc_sockmodel_reply_t, status) == 4 &&
                   offsetof(tc_sockmodel_reply_t, arg) == 8 &&
                   offsetof(tc_sockmodel_reply_t, clock_ns) == 24,
               "reply word order");
_Static_assert(SOCKMODEL_HELLO_BYTES == sizeof(uint32_t) &&
                   SOCKMODEL_WELCOME_BYTES == sizeof(uint32_t),
               "hello and welcome: one word");

/* ---- token ------------------------------------------------------------ */

/* The token in a token file's first line: 0, or -1 when the line is not
 * exactly 2 x SOCKMODEL_TOKEN_BYTES hex digits (a newline may follow). */
static inline int tc_sockmodel_token_parse(const char *line, unsigned char *token)
{
    for (unsigned i = 0; i < 2u * SOCKMODEL_TOKEN_BYTES; i++) {
        char ch = line[i];
        unsigned v;

        if (ch >= '0' && ch <= '9') {
            v = (unsigned) (ch - '0');
        } else if (ch >= 'a' && ch <= 'f') {
            v = (unsigned) (ch - 'a' + 10);
        } else if (ch >= 'A' && ch <= 'F') {
            v = (unsigned) (ch - 'A' + 10);
        } else {
            return -1;
        }
        if (0 == (i & 1u)) {
            token[i / 2] = (unsigned char) (v << 4);
        } else {
            token[i / 2] |= (unsigned char) v;
        }
    }
    return ('\0' == line[2u * SOCKMODEL_TOKEN_BYTES] || '\n' == line[2u * SOCKMODEL_TOKEN_BYTES])
        ? 0
        : -1;
}

/* The token as a token file's line (2 x SOCKMODEL_TOKEN_BYTES digits,
 * newline, NUL). */
static inline void tc_sockmodel_token_format(const unsigned char *token,
                                             char line[2u * SOCKMODEL_TOKEN_BYTES + 2u])
{
    static const char hex[] = "0123456789abcdef";

    for (unsigned i = 0; i < SOCKMODEL_TOKEN_BYTES; i++) {
        line[2 * i] = hex[token[i] >> 4];
        line[2 * i + 1] = hex[token[i] & 0xFu];
    }
    line[2u * SOCKMODEL_TOKEN_BYTES] = '\n';
    line[2u * SOCKMODEL_TOKEN_BYTES + 1u] = '\0';
}

/* A fresh random token (the kernel's generator): 0, or -1. */
static inline int tc_sockmodel_token_random(unsigned char *token)
{
    size_t got = 0;

    while (got < SOCKMODEL_TOKEN_BYTES) {
        ssize_t n = getrandom(token + got, SOCKMODEL_TOKEN_BYTES - got, 0);

        if (n < 0) {
            if (EINTR == errno) {
                continue;
            }
            return -1;
        }
        got += (size_t) n;
    }
    return 0;
}

/* Equal tokens, in time independent of where they differ. */
static inline int tc_sockmodel_token_equal(const unsigned char *a, const unsigned char *b)
{
    unsigned char diff = 0;

    for (unsigned i = 0; i < SOCKMODEL_TOKEN_BYTES; i++) {
        diff |= (unsigned char) (a[i] ^ b[i]);
    }
    return 0 == diff;
}

/* ---- codec ------------------------------------------------------------ */

static inline uint32_t tc_sockmodel_get32(const unsigned char *p);

/* Decode the hello at the front of the len bytes at buf: the bytes it
 * took (SOCKMODEL_HELLO_BYTES or SOCKMODEL_HELLO_AUTH_BYTES), or 0 when
 * more bytes are needed. Reads nothing beyond buf[len - 1]. */
static inline size_t tc_sockmodel_hello_parse(const unsigned char *buf, size_t len,
                                              tc_sockmodel_hello_t *h)
{
    uint32_t w;

    if (len < SOCKMODEL_HELLO_BYTES) {
        return 0;
    }
    w = tc_sockmodel_get32(buf);
    if (SOCKMODEL_HELLO_AUTH != w) {
        h->rank = w;
        h->has_token = 0;
        return SOCKMODEL_HELLO_BYTES;
    }
    if (len < SOCKMODEL_HELLO_AUTH_BYTES) {
        return 0;
    }
    h->rank = tc_sockmodel_get32(buf + 4);
    h->has_token = 1;
    memcpy(h->token, buf + 8, SOCKMODEL_TOKEN_BYTES);
    return SOCKMODEL_HELLO_AUTH_BYTES;
}

static inline void tc_sockmodel_put32(unsigned char *p, uint32_t v)
{
    uint32_t n = htonl(v);
    memcpy(p, &n, 4);
}

static inline uint32_t tc_sockmodel_get32(const unsigned char *p)
{
    uint32_t n;
    memcpy(&n, p, 4);
    return ntohl(n);
}

/* Returns 1 when code is a known request. */
static inline int tc_sockmodel_request_valid(uint32_t code)
{
    return code >= SOCKMODEL_REQUEST_MIN && code <= SOCKMODEL_REQUEST_MAX;
}

static inline const char *tc_sockmodel_request_name(uint32_t code)
{
    static const char *const names[] = {
        "?",           "FINISH",   "SIZE",         "RANK",          "CONSUMETIME",
        "SEND",        "RECV",     "RECVFROM",     "RECVTAG",       "PROBE",
        "PROBEFROM",   "PROBETAG", "BARRIER_INIT", "BARRIER_ENTER", "WAITING_START",
        "WAITING_STOP", "WATCH"};
    return tc_sockmodel_request_valid(code) ? names[code] : "UNKNOWN";
}

static inline const char *tc_sockmodel_status_name(uint32_t status)
{
    static const char *const names[] = {"OK", "FOUND", "NONE", "EXPIRED", "STOPPED"};
    return status <= SOCKMODEL_ST_STOPPED ? names[status] : "UNKNOWN";
}

/* Fill a command; unused parameters are zero. */
static inline void tc_sockmodel_cmd_make(tc_sockmodel_cmd_t *cmd, uint32_t request, uint32_t p0,
                                         uint32_t p1, uint32_t p2, uint32_t p3,
                                         uint32_t consumetime)
{
    cmd->request = request;
    cmd->param[0] = p0;
    cmd->param[1] = p1;
    cmd->param[2] = p2;
    cmd->param[3] = p3;
    cmd->consumetime = consumetime;
}

static inline void tc_sockmodel_cmd_encode(unsigned char buf[SOCKMODEL_CMD_BYTES],
                                           const tc_sockmodel_cmd_t *cmd)
{
    tc_sockmodel_put32(buf + 0, cmd->request);
    tc_sockmodel_put32(buf + 4, cmd->param[0]);
    tc_sockmodel_put32(buf + 8, cmd->param[1]);
    tc_sockmodel_put32(buf + 12, cmd->param[2]);
    tc_sockmodel_put32(buf + 16, cmd->param[3]);
    tc_sockmodel_put32(buf + 20, cmd->consumetime);
}

static inline void tc_sockmodel_cmd_decode(tc_sockmodel_cmd_t *cmd,
                                           const unsigned char buf[SOCKMODEL_CMD_BYTES])
{
    cmd->request = tc_sockmodel_get32(buf + 0);
    cmd->param[0] = tc_sockmodel_get32(buf + 4);
    cmd->param[1] = tc_sockmodel_get32(buf + 8);
    cmd->param[2] = tc_sockmodel_get32(buf + 12);
    cmd->param[3] = tc_sockmodel_get32(buf + 16);
    cmd->consumetime = tc_sockmodel_get32(buf + 20);
}

static inline void tc_sockmodel_reply_encode(unsigned char buf[SOCKMODEL_REPLY_BYTES],
                                             const tc_sockmodel_reply_t *r)
{
    tc_sockmodel_put32(buf + 0, r->code);
    tc_sockmodel_put32(buf + 4, r->status);
    tc_sockmodel_put32(buf + 8, r->arg[0]);
    tc_sockmodel_put32(buf + 12, r->arg[1]);
    tc_sockmodel_put32(buf + 16, r->arg[2]);
    tc_sockmodel_put32(buf + 20, r->arg[3]);
    tc_sockmodel_put32(buf + 24, (uint32_t) (r->clock_ns >> 32));
    tc_sockmodel_put32(buf + 28, (uint32_t) (r->clock_ns & 0xFFFFFFFFu));
}

static inline void tc_sockmodel_reply_decode(tc_sockmodel_reply_t *r,
                                             const unsigned char buf[SOCKMODEL_REPLY_BYTES])
{
    r->code = tc_sockmodel_get32(buf + 0);
    r->status = tc_sockmodel_get32(buf + 4);
    r->arg[0] = tc_sockmodel_get32(buf + 8);
    r->arg[1] = tc_sockmodel_get32(buf + 12);
    r->arg[2] = tc_sockmodel_get32(buf + 16);
    r->arg[3] = tc_sockmodel_get32(buf + 20);
    r->clock_ns =
        ((uint64_t) tc_sockmodel_get32(buf + 24) << 32) | (uint64_t) tc_sockmodel_get32(buf + 28);
}

/* A reply carries a payload of arg[2] bytes exactly when it answers a
 * RECV, RECVFROM or RECVTAG, or a WAITING_START with SOCKMODEL_WAIT_RECV
 * that took a message, with status OK. */
static inline int tc_sockmodel_reply_has_payload(const tc_sockmodel_reply_t *r)
{
    return (SOCKMODEL_RECV == r->code || SOCKMODEL_RECVFROM == r->code ||
            SOCKMODEL_RECVTAG == r->code || SOCKMODEL_WAITING_START == r->code) &&
        SOCKMODEL_ST_OK == r->status;
}

/*
 * Validate a decoded command against the run's node count and message
 * limit, exactly as the simulator does.  Returns NULL when the command
 * is well formed, otherwise a short reason (the simulator then logs it
 * and drops the client).  Clients may call it to catch their own bugs.
 */
static inline const char *tc_sockmodel_cmd_check(const tc_sockmodel_cmd_t *cmd, uint32_t nodes,
                                                 uint32_t max_msg)
{
    switch (cmd->request) {
    case SOCKMODEL_SEND:
        if (cmd->param[0] >= nodes) {
            return "SEND to a node that does not exist";
        }
        if (cmd->param[2] > max_msg) {
            return "SEND larger than the message limit";
        }
        return NULL;
    case SOCKMODEL_RECVFROM:
    case SOCKMODEL_PROBEFROM:
        if (cmd->param[0] >= nodes) {
            return "source node does not exist";
        }
        return NULL;
    case SOCKMODEL_BARRIER_INIT:
        if (cmd->param[0] > nodes) {
            return "barrier with more participants than nodes";
        }
        return NULL;
    case SOCKMODEL_FINISH:
    case SOCKMODEL_SIZE:
    case SOCKMODEL_RANK:
    case SOCKMODEL_CONSUMETIME:
    case SOCKMODEL_RECV:
    case SOCKMODEL_RECVTAG:
    case SOCKMODEL_PROBE:
    case SOCKMODEL_PROBETAG:
    case SOCKMODEL_BARRIER_ENTER: /* the id is checked against the table */
    case SOCKMODEL_WAITING_STOP:
        return NULL;
    case SOCKMODEL_WATCH: /* any tag; a second WATCH is refused by the simulator */
        if (0 != cmd->param[1]) {
            return "unknown WATCH flags";
        }
        return NULL;
    case SOCKMODEL_WAITING_START: /* the timeout is clamped, never refused */
        if (0 != (cmd->param[1] & ~SOCKMODEL_WAIT_FLAGS_KNOWN)) {
            return "unknown WAITING_START flags";
        }
        return NULL;
    default:
        return "unknown request code";
    }
}

#endif /* TC_SOCKMODEL_H */
