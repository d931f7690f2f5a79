/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_sci_device.c: unit tests of btl_sci's device layer (sci_device.h,
 * shm provider) without MPI: segment life cycle and names on disk, mode
 * 0600, unlink once every expected peer connected, connect before the
 * segment is available, map bounds, sequences that notice a removed
 * segment and a dead owner, and the CMA DMA engine between two processes
 * (pattern checked both ways, range checks, a dead peer).
 */

#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sci_device.h"

typedef struct {
    char dir[64];
    sci_desc_t *sd;
} fixture_t;

static int count_files(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;

    if (NULL == d) {
        return -1;
    }
    while (NULL != (e = readdir(d))) {
        if ('.' != e->d_name[0]) {
            ++n;
        }
    }
    closedir(d);
    return n;
}

static int setup(void **state)
{
    fixture_t *f = calloc(1, sizeof(*f));
    sci_open_params_t p = {0};

    assert_non_null(f);
    strcpy(f->dir, "/tmp/test_sci_device.XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    p.segment_dir = f->dir;
    p.job_key = "t";
    assert_int_equal(SCI_ERR_OK, sci_open(&p, &f->sd));
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture_t *f = *state;

    sci_close(f->sd);
    assert_int_equal(0, count_files(f->dir));
    rmdir(f->dir);
    free(f);
    return 0;
}

static void test_open_params(void **state)
{
    fixture_t *f = *state;
    sci_desc_t *sd = NULL;
    sci_open_params_t p = {0};

    assert_int_equal(SCI_ERR_ILLEGAL_PARAMETER, sci_open(NULL, &sd));
    assert_int_equal(SCI_ERR_ILLEGAL_PARAMETER, sci_open(&p, &sd));
    assert_int_not_equal(0, sci_local_node_id(f->sd));
    /* the descriptor's provider, and the providers built in */
    assert_string_equal("shm", sci_desc_provider(f->sd));
    assert_true(sci_provider_available("shm"));
    assert_true(0 == strcmp("shm", sci_provider_name()) ||
                0 == strcmp("shm,ofi", sci_provider_name()));
    /* an unknown provider is refused */
    p.segment_dir = "/tmp";
    p.provider = "nosuch";
    assert_int_equal(SCI_ERR_NOT_SUPPORTED, sci_open(&p, &sd));
    p.provider = NULL;
    p.segment_dir = NULL;
    assert_non_null(sci_strerror(SCI_ERR_TRANSFER_FAILED));
}

/* create, prepare, available, connect, map, write through the remote map,
 * name gone after the expected connections, remove */
static void test_segment_life_cycle(void **state)
{
    fixture_t *f = *state;
    sci_local_segment_t *seg;
    sci_remote_segment_t *r1, *r2;
    char path[256];
    struct stat st;
    uint32_t *local, *remote;

    assert_int_equal(SCI_ERR_OK, sci_create_segment(f->sd, 0x10002, 10000, &seg));
    assert_true(sci_local_segment_size(seg) >= 10000);
    snprintf(path, sizeof(path), "%s/sci.t.%08x", f->dir, 0x10002);
    assert_int_equal(0, stat(path, &st));
    assert_int_equal(0600, st.st_mode & 0777);

    /* not available yet: peers cannot connect */
    assert_int_equal(SCI_ERR_NO_SUCH_SEGMENT,
                     sci_connect_segment(f->sd, sci_local_node_id(f->sd), 0x10002, &r1));
    assert_int_equal(SCI_ERR_OK, sci_prepare_segment(seg));
    assert_int_equal(SCI_ERR_OK, sci_set_segment_available(seg, 2));

    assert_int_equal(SCI_ERR_OK,
                     sci_connect_segment(f->sd, sci_local_node_id(f->sd), 0x10002, &r1));
    assert_int_equal(0, stat(path, &st)); /* one of two connected */
    assert_int_equal(SCI_ERR_OK,
                     sci_connect_segment(f->sd, sci_local_node_id(f->sd), 0x10002, &r2));
    assert_int_not_equal(0, stat(path, &st)); /* both: name removed */
    assert_int_equal(ENOENT, errno);

    local = sci_local_segment_address(seg);
    remote = sci_map_remote_segment(r1, 4096, 64);
    assert_non_null(remote);
    remote[3] = 0xabcdef01u;
    sci_store_barrier();
    assert_int_equal(0xabcdef01u, local[1024 + 3]);

    /* the mapping is the remote memory: a publish from another buffer is
     * the caller's copy */
    assert_int_equal(0, sci_remote_write_through(r1));
    assert_int_equal(SCI_ERR_NOT_SUPPORTED,
                     sci_flush_publish_from(r1, 4096, 8, remote, 8, 4096 + 16, (void *) 1));

    /* map bounds */
    assert_null(sci_map_remote_segment(r1, sci_remote_segment_size(r1), 1));
    assert_null(sci_map_remote_segment(r1, 0, sci_remote_segment_size(r1) + 1));
    assert_non_null(sci_map_remote_segment(r1, 0, sci_remote_segment_size(r1)));

    sci_disconnect_segment(r1);
    sci_disconnect_segment(r2);
    sci_remove_segment(seg);
}

/* the owner rewrites the size in its header after a peer connected: the
 * peer keeps the size it checked at connect (before, it mapped up to the
 * new size, beyond its mapping) */
static void test_hostile_size_after_connect(void **state)
{
    fixture_t *f = *state;
    sci_local_segment_t *seg;
    sci_remote_segment_t *r;
    unsigned char *hdr;
    uint64_t size, hostile = UINT64_MAX - 4095;

    assert_int_equal(SCI_ERR_OK, sci_create_segment(f->sd, 0x10003, 8192, &seg));
    assert_int_equal(SCI_ERR_OK, sci_prepare_segment(seg));
    assert_int_equal(SCI_ERR_OK, sci_set_segment_available(seg, 1));
    assert_int_equal(SCI_ERR_OK, sci_connect_segment(f->sd, sci_local_node_id(f->sd), 0x10003, &r));
    size = sci_remote_segment_size(r);
    assert_true(size >= 8192);
    /* user_size: offset 32 of the header page in front of the user area */
    hdr = (unsigned char *) sci_local_segment_address(seg) - 4096;
    memcpy(hdr + 32, &hostile, sizeof(hostile));
    assert_int_equal(size, sci_remote_segment_size(r));
    assert_null(sci_map_remote_segment(r, 0, (size_t) 1 << 40));
    assert_null(sci_map_remote_segment(r, size, 4096));
    assert_non_null(sci_map_remote_segment(r, 0, size));
    memcpy(hdr + 32, &size, sizeof(size));
    sci_disconnect_segment(r);
    sci_remove_segment(seg);
}

static void test_connect_errors(void **state)
{
    fixture_t *f = *state;
    sci_remote_segment_t *r;
    sci_local_segment_t *seg;

    assert_int_equal(SCI_ERR_NO_SUCH_SEGMENT,
                     sci_connect_segment(f->sd, sci_local_node_id(f->sd), 0x777, &r));
    /* another node: the shm provider reaches this host only */
    assert_int_equal(SCI_ERR_NOT_SUPPORTED,
                     sci_connect_segment(f->sd, sci_local_node_id(f->sd) + 4, 0x777, &r));
    assert_int_equal(SCI_ERR_ILLEGAL_PARAMETER, sci_create_segment(f->sd, 1, 0, &seg));
    /* a segment that exists twice */
    assert_int_equal(SCI_ERR_OK, sci_create_segment(f->sd, 5, 100, &seg));
    {
        sci_local_segment_t *dup;
        assert_int_not_equal(SCI_ERR_OK, sci_create_segment(f->sd, 5, 100, &dup));
    }
    sci_remove_segment(seg);
}

static void test_create_in_missing_dir(void **state)
{
    sci_open_params_t p = {.segment_dir = "/nonexistent/sci/dir", .job_key = "t"};
    sci_local_segment_t *seg = NULL;
    sci_desc_t *sd;

    (void) state;
    assert_int_equal(SCI_ERR_OK, sci_open(&p, &sd));
    assert_int_not_equal(SCI_ERR_OK, sci_create_segment(sd, 1, 4096, &seg));
    assert_null(seg);
    sci_close(sd);
}

/* removing a segment is seen by a connected peer's sequence */
static void test_sequence_removed_segment(void **state)
{
    fixture_t *f = *state;
    sci_local_segment_t *seg;
    sci_remote_segment_t *r;
    sci_sequence_t *seq;

    assert_int_equal(SCI_ERR_OK, sci_create_segment(f->sd, 9, 4096, &seg));
    assert_int_equal(SCI_ERR_OK, sci_prepare_segment(seg));
    assert_int_equal(SCI_ERR_OK, sci_set_segment_available(seg, 1));
    assert_int_equal(SCI_ERR_OK, sci_connect_segment(f->sd, sci_local_node_id(f->sd), 9, &r));
    assert_int_equal(SCI_ERR_OK, sci_create_map_sequence(r, &seq));
    assert_int_equal(SCI_ERR_OK, sci_start_sequence(seq));
    assert_int_equal(SCI_ERR_OK, sci_check_sequence(seq));
    sci_remove_segment(seg);
    /* removed by its owner: an orderly exit, told apart from a failure */
    assert_int_equal(SCI_ERR_DISCONNECTED, sci_check_sequence(seq));
    /* sticky */
    assert_int_equal(SCI_ERR_DISCONNECTED, sci_start_sequence(seq));
    sci_remove_sequence(seq);
    sci_disconnect_segment(r);
}

/* a forked child opens its own device, as a separate process would */
static sci_desc_t *child_open(const fixture_t *f)
{
    sci_open_params_t p = {.segment_dir = f->dir, .job_key = "t"};
    sci_desc_t *sd = NULL;

    if (SCI_ERR_OK != sci_open(&p, &sd)) {
        _exit(10);
    }
    return sd;
}

/* a child creates a segment and dies by SIGKILL without removing it: the
 * sequence notices that its owner is gone */
static void test_sequence_dead_owner(void **state)
{
    fixture_t *f = *state;
    sci_remote_segment_t *r;
    sci_sequence_t *seq;
    int ready[2];
    pid_t pid;
    char c;

    assert_int_equal(0, pipe(ready));
    pid = fork();
    assert_true(pid >= 0);
    if (0 == pid) {
        sci_desc_t *sd = child_open(f);
        sci_local_segment_t *seg;
        if (SCI_ERR_OK != sci_create_segment(sd, 11, 4096, &seg) ||
            SCI_ERR_OK != sci_prepare_segment(seg) ||
            SCI_ERR_OK != sci_set_segment_available(seg, 1)) {
            _exit(1);
        }
        (void) write(ready[1], "r", 1);
        for (;;) {
            pause();
        }
    }
    close(ready[1]);
    assert_int_equal(1, read(ready[0], &c, 1));
    close(ready[0]);
    assert_int_equal(SCI_ERR_OK, sci_connect_segment(f->sd, sci_local_node_id(f->sd), 11, &r));
    assert_int_equal(SCI_ERR_OK, sci_create_map_sequence(r, &seq));
    assert_int_equal(SCI_ERR_OK, sci_check_sequence(seq));
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    assert_int_equal(SCI_ERR_TRANSFER_FAILED, sci_check_sequence(seq));
    sci_remove_sequence(seq);
    sci_disconnect_segment(r);
}

/* a child removes its segment (as btl_sci's finalize does) and exits: the
 * peer sees an orderly exit, never a failure, although the pid is gone */
static void test_sequence_owner_left_in_order(void **state)
{
    fixture_t *f = *state;
    sci_remote_segment_t *r;
    sci_sequence_t *seq;
    int ready[2], go[2];
    pid_t pid;
    char c;

    assert_int_equal(0, pipe(ready));
    assert_int_equal(0, pipe(go));
    pid = fork();
    assert_true(pid >= 0);
    if (0 == pid) {
        sci_desc_t *sd = child_open(f);
        sci_local_segment_t *seg;
        if (SCI_ERR_OK != sci_create_segment(sd, 12, 4096, &seg) ||
            SCI_ERR_OK != sci_prepare_segment(seg) ||
            SCI_ERR_OK != sci_set_segment_available(seg, 1)) {
            _exit(1);
        }
        (void) write(ready[1], "r", 1);
        (void) read(go[0], &c, 1);
        (void) sci_set_segment_unavailable(seg);
        sci_remove_segment(seg);
        sci_close(sd);
        _exit(0);
    }
    close(ready[1]);
    close(go[0]);
    assert_int_equal(1, read(ready[0], &c, 1));
    close(ready[0]);
    assert_int_equal(SCI_ERR_OK, sci_connect_segment(f->sd, sci_local_node_id(f->sd), 12, &r));
    assert_int_equal(SCI_ERR_OK, sci_create_map_sequence(r, &seq));
    assert_int_equal(SCI_ERR_OK, sci_check_sequence(seq));
    assert_int_equal(1, write(go[1], "g", 1));
    close(go[1]);
    waitpid(pid, NULL, 0);
    assert_int_equal(SCI_ERR_DISCONNECTED, sci_check_sequence(seq));
    sci_remove_sequence(seq);
    sci_disconnect_segment(r);
}

static unsigned char pat(size_t i, int who)
{
    return (unsigned char) ((i * 131u + (size_t) who * 17u) >> 1);
}

/* DMA between two processes: the child registers a buffer and publishes
 * the handle; the parent reads it, writes a new pattern, and the child
 * checks what arrived */
static void test_dma_between_processes(void **state)
{
    fixture_t *f = *state;
    const size_t len = 3 * 1024 * 1024 + 13;
    int to_parent[2], to_child[2];
    sci_mem_handle_t h;
    sci_dma_queue_t *dq;
    unsigned char *buf;
    pid_t pid;
    int status;
    char c;

    if (SCI_ERR_OK != sci_dma_probe(f->sd)) {
        skip();
    }
    assert_int_equal(0, pipe(to_parent));
    assert_int_equal(0, pipe(to_child));
    pid = fork();
    assert_true(pid >= 0);
    if (0 == pid) {
        sci_desc_t *sd = child_open(f);
        unsigned char *mine = malloc(len);
        sci_mem_handle_t mh;
        int bad = 0;

        for (size_t i = 0; i < len; ++i) {
            mine[i] = pat(i, 1);
        }
        if (SCI_ERR_OK != sci_register_memory(sd, mine, len, &mh)) {
            _exit(2);
        }
        (void) write(to_parent[1], &mh, sizeof(mh));
        if (1 != read(to_child[0], &c, 1)) {
            _exit(3);
        }
        for (size_t i = 0; i < len; ++i) {
            bad += mine[i] != pat(i, 2);
        }
        sci_deregister_memory(sd, &mh);
        free(mine);
        sci_close(sd);
        sci_close(f->sd);
        free(f);
        _exit(bad ? 4 : 0);
    }
    assert_int_equal(sizeof(h), read(to_parent[0], &h, sizeof(h)));
    buf = malloc(len);
    assert_non_null(buf);
    assert_int_equal(SCI_ERR_OK, sci_create_dma_queue(f->sd, 2, &dq));

    /* read the child's pattern */
    assert_int_equal(SCI_ERR_OK, sci_dma_enqueue(dq, SCI_DMA_READ, buf, &h, h.base, len));
    assert_int_equal(SCI_ERR_OK, sci_dma_start(dq));
    assert_int_equal(SCI_ERR_OK, sci_dma_wait(dq));
    for (size_t i = 0; i < len; ++i) {
        if (buf[i] != pat(i, 1)) {
            fail_msg("DMA read: byte %zu", i);
        }
    }
    /* range checks: before, after, straddling the registration; full queue */
    assert_int_equal(SCI_ERR_OUT_OF_RANGE,
                     sci_dma_enqueue(dq, SCI_DMA_READ, buf, &h, h.base - 1, 8));
    assert_int_equal(SCI_ERR_OUT_OF_RANGE,
                     sci_dma_enqueue(dq, SCI_DMA_READ, buf, &h, h.base + len - 4, 8));
    assert_int_equal(SCI_ERR_OUT_OF_RANGE,
                     sci_dma_enqueue(dq, SCI_DMA_READ, buf, &h, h.base, len + 1));
    assert_int_equal(SCI_ERR_ILLEGAL_PARAMETER, sci_dma_enqueue(dq, 7, buf, &h, h.base, 8));

    /* write a new pattern in two transfers */
    for (size_t i = 0; i < len; ++i) {
        buf[i] = pat(i, 2);
    }
    assert_int_equal(SCI_ERR_OK, sci_dma_enqueue(dq, SCI_DMA_WRITE, buf, &h, h.base, len / 2));
    assert_int_equal(
        SCI_ERR_OK,
        sci_dma_enqueue(dq, SCI_DMA_WRITE, buf + len / 2, &h, h.base + len / 2, len - len / 2));
    assert_int_equal(SCI_ERR_BUSY, sci_dma_enqueue(dq, SCI_DMA_WRITE, buf, &h, h.base, 1));
    assert_int_equal(SCI_ERR_OK, sci_dma_start(dq));
    assert_int_equal(SCI_ERR_OK, sci_dma_wait(dq));
    assert_int_equal(1, write(to_child[1], "w", 1));
    assert_int_equal(pid, waitpid(pid, &status, 0));
    assert_true(WIFEXITED(status));
    assert_int_equal(0, WEXITSTATUS(status));

    /* the peer is gone: an error, not a crash */
    assert_int_equal(SCI_ERR_OK, sci_dma_enqueue(dq, SCI_DMA_READ, buf, &h, h.base, 64));
    assert_int_not_equal(SCI_ERR_OK, sci_dma_start(dq));
    assert_int_not_equal(SCI_ERR_OK, sci_dma_wait(dq));

    sci_remove_dma_queue(dq);
    free(buf);
    close(to_parent[0]);
    close(to_parent[1]);
    close(to_child[0]);
    close(to_child[1]);
}

/* a handle naming another node is refused by the shm engine */
static void test_dma_foreign_node(void **state)
{
    fixture_t *f = *state;
    sci_dma_queue_t *dq;
    sci_mem_handle_t h;
    char b[8];

    assert_int_equal(SCI_ERR_OK, sci_register_memory(f->sd, b, sizeof(b), &h));
    h.node_id += 4;
    assert_int_equal(SCI_ERR_OK, sci_create_dma_queue(f->sd, 1, &dq));
    assert_int_equal(SCI_ERR_NOT_SUPPORTED, sci_dma_enqueue(dq, SCI_DMA_READ, b, &h, h.base, 8));
    sci_remove_dma_queue(dq);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_open_params, setup, teardown),
        cmocka_unit_test_setup_teardown(test_segment_life_cycle, setup, teardown),
        cmocka_unit_test_setup_teardown(test_connect_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hostile_size_after_connect, setup, teardown),
        cmocka_unit_test(test_create_in_missing_dir),
        cmocka_unit_test_setup_teardown(test_sequence_removed_segment, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sequence_dead_owner, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sequence_owner_left_in_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dma_between_processes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dma_foreign_node, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
