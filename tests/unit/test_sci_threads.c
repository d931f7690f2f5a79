/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_sci_threads.c: btl_sci's one DMA queue used by several threads at
 * once (MPI_THREAD_MULTIPLE: two threads in put/get).  Each thread moves
 * its own patterned buffers through the shared queue with
 * sci_dma_transfer; a transfer lost, done twice with another thread's
 * entry, or reported complete before its data moved shows up as a wrong
 * byte.  CMA to our own process exercises the same engine as to a peer.
 */

#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sci_device.h"

#define SCI_THREADS_N 4
#define SCI_THREADS_ITERS 2000
#define SCI_THREADS_LEN 4096

typedef struct {
    sci_desc_t *sd;
    sci_dma_queue_t *dq;
    int id;
    long bad;
    long failed;
} sci_threads_arg_t;

static uint8_t sci_threads_byte(size_t pos, int id, int iter)
{
    return (uint8_t) ((pos * 131u) ^ ((unsigned) id * 29u) ^ ((unsigned) iter * 7u));
}

static void *sci_threads_main(void *p)
{
    sci_threads_arg_t *a = p;
    uint8_t *src = malloc(SCI_THREADS_LEN), *dst = malloc(SCI_THREADS_LEN);
    sci_mem_handle_t h;

    if (NULL == src || NULL == dst) {
        a->failed++;
        free(src);
        free(dst);
        return NULL;
    }
    for (int it = 0; it < SCI_THREADS_ITERS; ++it) {
        int dir = it & 1 ? SCI_DMA_WRITE : SCI_DMA_READ;

        for (size_t i = 0; i < SCI_THREADS_LEN; ++i) {
            src[i] = sci_threads_byte(i, a->id, it);
        }
        memset(dst, 0, SCI_THREADS_LEN);
        /* READ: the "remote" registration is src; WRITE: it is dst */
        if (SCI_ERR_OK !=
            sci_register_memory(a->sd, SCI_DMA_READ == dir ? src : dst, SCI_THREADS_LEN, &h)) {
            a->failed++;
            continue;
        }
        if (SCI_ERR_OK !=
            sci_dma_transfer(a->dq, dir, SCI_DMA_READ == dir ? dst : src, &h, h.base,
                             SCI_THREADS_LEN)) {
            a->failed++;
        }
        for (size_t i = 0; i < SCI_THREADS_LEN; ++i) {
            if (dst[i] != sci_threads_byte(i, a->id, it)) {
                a->bad++;
                break;
            }
        }
        sci_deregister_memory(a->sd, &h);
    }
    free(src);
    free(dst);
    return NULL;
}

static void test_dma_queue_shared_by_threads(void **state)
{
    char dir[] = "/tmp/test_sci_threads.XXXXXX";
    sci_open_params_t params = {0};
    sci_threads_arg_t args[SCI_THREADS_N];
    pthread_t tid[SCI_THREADS_N];
    sci_desc_t *sd;
    sci_dma_queue_t *dq;
    long bad = 0, failed = 0;

    (void) state;
    assert_non_null(mkdtemp(dir));
    params.segment_dir = dir;
    params.job_key = "thr";
    assert_int_equal(SCI_ERR_OK, sci_open(&params, &sd));
    if (SCI_ERR_OK != sci_dma_probe(sd)) {
        sci_close(sd);
        rmdir(dir);
        skip();
    }
    assert_int_equal(SCI_ERR_OK, sci_create_dma_queue(sd, 16, &dq));
    /* what btl_sci does when Open MPI enables threads */
    assert_int_equal(SCI_ERR_OK, sci_dma_queue_share(dq));
    for (int t = 0; t < SCI_THREADS_N; ++t) {
        args[t] = (sci_threads_arg_t){.sd = sd, .dq = dq, .id = t};
        assert_int_equal(0, pthread_create(&tid[t], NULL, sci_threads_main, &args[t]));
    }
    for (int t = 0; t < SCI_THREADS_N; ++t) {
        pthread_join(tid[t], NULL);
        bad += args[t].bad;
        failed += args[t].failed;
    }
    sci_remove_dma_queue(dq);
    sci_close(sd);
    rmdir(dir);
    if (0 != bad || 0 != failed) {
        fail_msg("%ld transfers with wrong data, %ld failed, of %d", bad, failed,
                 SCI_THREADS_N * SCI_THREADS_ITERS);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dma_queue_shared_by_threads),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
