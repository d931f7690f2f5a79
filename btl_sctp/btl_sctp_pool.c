/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * btl_sctp_pool.c: the pool allocator behind usrsctp (see btl_sctp_pool.h).
 *
 * One region of address space is reserved at first use and committed in
 * 1 MiB steps. It is cut into 64 KiB runs; a run serves one size class,
 * recorded in run_class[], so a block needs no header and free() learns
 * its class from its address. Each thread keeps two magazines (stacks
 * of free blocks) and a carving run per class: no lock on the fast path.
 * A block freed by another thread joins that thread's magazines; when
 * both are full, one goes whole to a shared depot, where a thread whose
 * own are empty looks before it carves, and a thread that ends gives its
 * magazines to the depot. So a block freed by a thread that never
 * allocates its class is still reused.
 * Memory is kept at its peak (usrsctp's socket buffers bound it) and
 * never returned to the system.
 *
 * The redirection rewrites the library's relocation slots (JUMP_SLOT
 * and GLOB_DAT) for malloc, calloc, realloc and free, found through
 * dl_iterate_phdr and the library's dynamic section. A read-only
 * (RELRO) slot page is made writable for the write and then restored.
 * This module is pinned in memory, since the library now calls into it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dladdr, RTLD_NODELETE */
#endif
#include "btl_sctp_pool.h"
#include "tc_atomic.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define POOL_REGION_BYTES ((size_t) 1 << 30) /* address space, not memory */
#define POOL_RUN_SHIFT 16
#define POOL_RUN_BYTES ((size_t) 1 << POOL_RUN_SHIFT)
#define POOL_NRUNS (POOL_REGION_BYTES >> POOL_RUN_SHIFT)
#define POOL_COMMIT_BYTES ((size_t) 1 << 20)
#define POOL_MAX_BLOCK POOL_RUN_BYTES

/* Size classes, multiples of 16 (malloc's alignment), at most a third wasted
 * above 64 bytes; 2048 (mbuf cluster) and 65536 (a packet) exact. */
static const uint32_t class_size[] = {16,    32,    48,    64,    80,    96,    128,  160,   192,
                                      256,   320,   384,   512,   640,   768,   1024, 1280,  1536,
                                      2048,  2560,  3072,  4096,  5120,  6144,  8192, 10240, 12288,
                                      16384, 20480, 24576, 32768, 40960, 49152, 65536};
#define POOL_NCLASS ((int) (sizeof(class_size) / sizeof(class_size[0])))

/* A magazine: a stack of free blocks of one class. The blocks are not
 * touched while they wait (no link is written into them): usrsctp frees
 * a cluster long after it last touched it, and a link written into the
 * block (or read out of it at the next malloc) was a cache miss each
 * time. */
#define POOL_MAG 128
typedef struct pool_mag {
    struct pool_mag *next; /* in the depot */
    uint32_t n;
    void *b[POOL_MAG];
} pool_mag_t;

/* Each thread holds two magazines per class (cur serves malloc and free,
 * prev is the spare): a thread that allocates and frees a class in turn
 * never goes further. */
typedef struct pool_thread {
    pool_mag_t *cur[POOL_NCLASS];
    pool_mag_t *prev[POOL_NCLASS];
    char *carve[POOL_NCLASS]; /* the run being cut, and its end */
    char *carve_end[POOL_NCLASS];
    size_t allocs;  /* blocks handed out by this thread */
    int registered; /* the exit hook knows this thread */
} pool_thread_t;

static __thread pool_thread_t pool_tls;

/* The depot, under depot_lock: per class the magazines holding blocks
 * (given up by a thread whose two were full, or by a thread that ended),
 * one list of empty magazines, and blocks freed when no magazine could be
 * allocated (linked through their first word). A whole magazine moves at
 * once: O(1) under the lock, once per POOL_MAG blocks at most. */
static pool_mag_t *depot_full[POOL_NCLASS];
static uint32_t depot_nfull[POOL_NCLASS];
static pool_mag_t *depot_empty;
static void *depot_loose[POOL_NCLASS];
static pthread_mutex_t depot_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_key_t pool_exit_key;

static char *region = NULL;
static size_t region_committed = 0; /* bytes from region start, under run_lock */
static size_t next_run = 0;         /* under run_lock */
static uint8_t run_class[POOL_NRUNS];
static uint8_t class_of_16[(POOL_MAX_BLOCK >> 4) + 1]; /* (size + 15) / 16 -> class */
static pthread_mutex_t run_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t region_once = PTHREAD_ONCE_INIT;
static int installed = 0;

/* under depot_lock: a magazine goes to the depot (to the empty list when
 * it holds nothing) */
static void btl_sctp_pool_depot_put(int c, pool_mag_t *m)
{
    if (NULL == m) {
        return;
    }
    if (0 == m->n) {
        m->next = depot_empty;
        depot_empty = m;
    } else {
        m->next = depot_full[c];
        depot_full[c] = m;
        tc_atomic_store_relaxed(&depot_nfull[c], depot_nfull[c] + 1);
    }
}

/* a thread ends: its magazines go to the depot */
static void btl_sctp_pool_thread_exit(void *arg)
{
    pool_thread_t *t = &pool_tls;

    (void) arg;
    pthread_mutex_lock(&depot_lock);
    for (int c = 0; c < POOL_NCLASS; ++c) {
        btl_sctp_pool_depot_put(c, t->cur[c]);
        btl_sctp_pool_depot_put(c, t->prev[c]);
        t->cur[c] = t->prev[c] = NULL;
    }
    pthread_mutex_unlock(&depot_lock);
}

static void btl_sctp_pool_register_thread(pool_thread_t *t)
{
    if (__builtin_expect(!t->registered, 0)) {
        t->registered = 1;
        (void) pthread_setspecific(pool_exit_key, t);
    }
}

static void btl_sctp_pool_region_init(void)
{
    void *r = mmap(NULL, POOL_REGION_BYTES, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    int c = 0;

    for (size_t i = 0; i <= (POOL_MAX_BLOCK >> 4); ++i) {
        while (class_size[c] < i * 16) {
            ++c;
        }
        class_of_16[i] = (uint8_t) c;
    }
    region = MAP_FAILED == r ? NULL : (char *) r;
    (void) pthread_key_create(&pool_exit_key, btl_sctp_pool_thread_exit);
}

/* A fresh run for class c, or NULL when the region is used up. */
static char *btl_sctp_pool_run_new(int c)
{
    char *run = NULL;

    pthread_mutex_lock(&run_lock);
    if (NULL != region && next_run < POOL_NRUNS) {
        size_t end = (next_run + 1) * POOL_RUN_BYTES;
        if (end > region_committed) {
            size_t step = POOL_COMMIT_BYTES;
            if (region_committed + step > POOL_REGION_BYTES) {
                step = POOL_REGION_BYTES - region_committed;
            }
            if (0 == mprotect(region + region_committed, step, PROT_READ | PROT_WRITE)) {
                region_committed += step;
            }
        }
        if (end <= region_committed) {
            run = region + next_run * POOL_RUN_BYTES;
            run_class[next_run] = (uint8_t) c;
            ++next_run;
        }
    }
    pthread_mutex_unlock(&run_lock);
    return run;
}

int btl_sctp_pool_owns(const void *p)
{
    return NULL != region && (const char *) p >= region &&
        (const char *) p < region + POOL_REGION_BYTES;
}

/* malloc when this thread's magazines of class c are empty: a magazine
 * from the depot, a loose block, or a block cut from a run. */
static void *btl_sctp_pool_alloc_slow(pool_thread_t *t, int c, size_t size)
{
    pool_mag_t *m = t->cur[c], *p = t->prev[c];
    void *b = NULL;

    if (NULL != p && p->n > 0) {
        t->cur[c] = p;
        t->prev[c] = m;
        return p->b[--p->n];
    }
    if (0 != tc_atomic_load_relaxed(&depot_nfull[c]) ||
        NULL != tc_atomic_load_relaxed(&depot_loose[c])) {
        /* racy peeks: a miss only means cutting one more block */
        pthread_mutex_lock(&depot_lock);
        if (NULL != depot_full[c]) {
            pool_mag_t *f = depot_full[c];
            depot_full[c] = f->next;
            tc_atomic_store_relaxed(&depot_nfull[c], depot_nfull[c] - 1);
            btl_sctp_pool_depot_put(c, m); /* empty */
            t->cur[c] = f;
            b = f->b[--f->n];
        } else if (NULL != depot_loose[c]) {
            b = depot_loose[c];
            tc_atomic_store_relaxed(&depot_loose[c], *(void **) b);
        }
        pthread_mutex_unlock(&depot_lock);
        if (NULL != b) {
            btl_sctp_pool_register_thread(t);
            return b;
        }
    }
    if (NULL == t->carve[c] || t->carve[c] + class_size[c] > t->carve_end[c]) {
        char *run = btl_sctp_pool_run_new(c);
        if (NULL == run) {
            return malloc(size); /* region used up: glibc's block */
        }
        t->carve[c] = run;
        t->carve_end[c] = run + POOL_RUN_BYTES;
    }
    b = t->carve[c];
    t->carve[c] += class_size[c];
    return b;
}

void *btl_sctp_pool_malloc(size_t size)
{
    pool_thread_t *t;
    pool_mag_t *m;
    int c;

    if (size > POOL_MAX_BLOCK) {
        return malloc(size);
    }
    pthread_once(&region_once, btl_sctp_pool_region_init);
    c = class_of_16[(size + 15) >> 4];
    t = &pool_tls;
    t->allocs++;
    m = t->cur[c];
    if (__builtin_expect(NULL != m && m->n > 0, 1)) {
        return m->b[--m->n];
    }
    return btl_sctp_pool_alloc_slow(t, c, size);
}

/* free when this thread's magazine of class c is full (or missing): the
 * spare takes over, or a full spare goes to the depot and an empty
 * magazine comes in. */
static void btl_sctp_pool_free_slow(pool_thread_t *t, int c, void *b)
{
    pool_mag_t *m = t->cur[c], *p = t->prev[c], *e;

    btl_sctp_pool_register_thread(t);
    if (NULL != p && p->n < POOL_MAG) {
        t->cur[c] = p;
        t->prev[c] = m;
        p->b[p->n++] = b;
        return;
    }
    pthread_mutex_lock(&depot_lock);
    btl_sctp_pool_depot_put(c, p); /* full (or NULL) */
    t->prev[c] = m;                /* full (or NULL) */
    t->cur[c] = NULL;
    e = depot_empty;
    if (NULL != e) {
        depot_empty = e->next;
    }
    pthread_mutex_unlock(&depot_lock);
    if (NULL == e) {
        e = calloc(1, sizeof(*e)); /* glibc's: this module is not redirected */
    }
    if (NULL == e) {
        /* no memory for a magazine: the block waits loose in the depot */
        pthread_mutex_lock(&depot_lock);
        *(void **) b = depot_loose[c];
        tc_atomic_store_relaxed(&depot_loose[c], b);
        pthread_mutex_unlock(&depot_lock);
        return;
    }
    e->n = 0;
    e->b[e->n++] = b;
    t->cur[c] = e;
}

void btl_sctp_pool_free(void *p)
{
    pool_thread_t *t;
    pool_mag_t *m;
    int c;

    if (NULL == p) {
        return;
    }
    if (!btl_sctp_pool_owns(p)) {
        free(p);
        return;
    }
    c = run_class[((char *) p - region) >> POOL_RUN_SHIFT];
    t = &pool_tls;
    m = t->cur[c];
    if (__builtin_expect(NULL != m && m->n < POOL_MAG, 1)) {
        m->b[m->n++] = p;
        return;
    }
    btl_sctp_pool_free_slow(t, c, p);
}

void *btl_sctp_pool_calloc(size_t n, size_t size)
{
    void *p;

    if (0 != size && n > SIZE_MAX / size) {
        errno = ENOMEM;
        return NULL;
    }
    p = btl_sctp_pool_malloc(n * size);
    if (NULL != p) {
        memset(p, 0, n * size); /* pool blocks are reused, not fresh */
    }
    return p;
}

void *btl_sctp_pool_realloc(void *p, size_t size)
{
    size_t have;
    void *q;

    if (NULL == p) {
        return btl_sctp_pool_malloc(size);
    }
    if (0 == size) {
        /* free, for glibc's blocks too: realloc(p, 0) is not portable
         * (C23 leaves it undefined; valgrind 3.24 reports it) */
        btl_sctp_pool_free(p);
        return NULL;
    }
    if (!btl_sctp_pool_owns(p)) {
        return realloc(p, size);
    }
    have = class_size[run_class[((char *) p - region) >> POOL_RUN_SHIFT]];
    if (size <= have) {
        return p;
    }
    q = btl_sctp_pool_malloc(size);
    if (NULL != q) {
        memcpy(q, p, have);
        btl_sctp_pool_free(p);
    }
    return q;
}

size_t btl_sctp_pool_reserved_bytes(void)
{
    size_t n;
    pthread_mutex_lock(&run_lock);
    n = next_run * POOL_RUN_BYTES;
    pthread_mutex_unlock(&run_lock);
    return n;
}

size_t btl_sctp_pool_thread_allocs(void)
{
    return pool_tls.allocs;
}

int btl_sctp_pool_installed(void)
{
    return installed;
}

/* ---- relocation rewriting ---- */

#if defined(__x86_64__)
#define POOL_R_JUMP_SLOT R_X86_64_JUMP_SLOT
#define POOL_R_GLOB_DAT R_X86_64_GLOB_DAT
#elif defined(__aarch64__)
#define POOL_R_JUMP_SLOT R_AARCH64_JUMP_SLOT
#define POOL_R_GLOB_DAT R_AARCH64_GLOB_DAT
#endif

#if defined(POOL_R_JUMP_SLOT) && defined(__LP64__)

typedef struct pool_patch {
    const char *lib_substr;
    int free_pass; /* 1: only free's slots; 0: the allocating functions */
    int found;     /* the library is loaded */
    int patched;   /* slots rewritten */
    int err;       /* first error (negative errno) */
} pool_patch_t;

static const struct {
    const char *name;
    void *fn;
} pool_targets[] = {
    {"malloc", (void *) btl_sctp_pool_malloc},
    {"calloc", (void *) btl_sctp_pool_calloc},
    {"realloc", (void *) btl_sctp_pool_realloc},
    {"free", (void *) btl_sctp_pool_free},
};

/* The protection of the mapping holding addr, from /proc/self/maps. */
static int btl_sctp_pool_page_prot(uintptr_t addr)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    int prot = -1;

    if (NULL == f) {
        return -1;
    }
    while (NULL != fgets(line, sizeof(line), f)) {
        unsigned long lo, hi;
        char perms[8];
        if (3 == sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) && addr >= lo && addr < hi) {
            prot = ('r' == perms[0] ? PROT_READ : 0) | ('w' == perms[1] ? PROT_WRITE : 0) |
                ('x' == perms[2] ? PROT_EXEC : 0);
            break;
        }
    }
    fclose(f);
    return prot;
}

static int btl_sctp_pool_write_slot(void **slot, void *fn)
{
    long pagesz = sysconf(_SC_PAGESIZE);
    uintptr_t page = (uintptr_t) slot & ~((uintptr_t) pagesz - 1);
    int prot = btl_sctp_pool_page_prot((uintptr_t) slot);

    if (prot < 0) {
        return -ENOENT;
    }
    if (!(prot & PROT_WRITE) && 0 != mprotect((void *) page, (size_t) pagesz, prot | PROT_WRITE)) {
        return -errno;
    }
    tc_atomic_store_release(slot, fn);
    if (!(prot & PROT_WRITE)) {
        (void) mprotect((void *) page, (size_t) pagesz, prot);
    }
    return 0;
}

/* ld.so rewrites most address tags of a writable dynamic section to
 * absolute addresses; a read-only one keeps offsets. */
static uintptr_t btl_sctp_pool_dyn_addr(ElfW(Addr) base, ElfW(Addr) v)
{
    return v < base ? base + v : v;
}

static void btl_sctp_pool_patch_table(const ElfW(Rela) * rel, size_t bytes, ElfW(Addr) base,
                                      const ElfW(Sym) * symtab, const char *strtab, size_t strsz,
                                      pool_patch_t *pp)
{
    for (size_t i = 0; i < bytes / sizeof(*rel); ++i) {
        unsigned type = (unsigned) ELF64_R_TYPE(rel[i].r_info);
        size_t sym = ELF64_R_SYM(rel[i].r_info);
        const char *name;

        if ((POOL_R_JUMP_SLOT != type && POOL_R_GLOB_DAT != type) || 0 == sym) {
            continue;
        }
        if (symtab[sym].st_name >= strsz) {
            continue;
        }
        name = strtab + symtab[sym].st_name;
        for (size_t k = 0; k < sizeof(pool_targets) / sizeof(pool_targets[0]); ++k) {
            if (pp->free_pass != (pool_targets[k].fn == (void *) btl_sctp_pool_free)) {
                continue;
            }
            if (0 == strcmp(name, pool_targets[k].name)) {
                int rc = btl_sctp_pool_write_slot((void **) (base + rel[i].r_offset),
                                                  pool_targets[k].fn);
                if (0 == rc) {
                    pp->patched++;
                } else if (0 == pp->err) {
                    pp->err = rc;
                }
            }
        }
    }
}

static int btl_sctp_pool_patch_object(struct dl_phdr_info *info, size_t size, void *arg)
{
    pool_patch_t *pp = (pool_patch_t *) arg;
    const ElfW(Dyn) *dyn = NULL;
    const ElfW(Sym) *symtab = NULL;
    const char *strtab = NULL;
    const ElfW(Rela) *jmprel = NULL, *rela = NULL;
    size_t jmpsz = 0, relasz = 0, strsz = 0;
    ElfW(Addr) base = info->dlpi_addr;
    (void) size;

    if (NULL == info->dlpi_name || NULL == strstr(info->dlpi_name, pp->lib_substr)) {
        return 0;
    }
    pp->found = 1;
    for (int i = 0; i < info->dlpi_phnum; ++i) {
        if (PT_DYNAMIC == info->dlpi_phdr[i].p_type) {
            dyn = (const ElfW(Dyn) *) (base + info->dlpi_phdr[i].p_vaddr);
        }
    }
    if (NULL == dyn) {
        pp->err = -ENOEXEC;
        return 1;
    }
    for (; DT_NULL != dyn->d_tag; ++dyn) {
        switch (dyn->d_tag) {
        case DT_SYMTAB:
            symtab = (const ElfW(Sym) *) btl_sctp_pool_dyn_addr(base, dyn->d_un.d_ptr);
            break;
        case DT_STRTAB:
            strtab = (const char *) btl_sctp_pool_dyn_addr(base, dyn->d_un.d_ptr);
            break;
        case DT_STRSZ:
            strsz = dyn->d_un.d_val;
            break;
        case DT_JMPREL:
            jmprel = (const ElfW(Rela) *) btl_sctp_pool_dyn_addr(base, dyn->d_un.d_ptr);
            break;
        case DT_PLTRELSZ:
            jmpsz = dyn->d_un.d_val;
            break;
        case DT_RELA:
            rela = (const ElfW(Rela) *) btl_sctp_pool_dyn_addr(base, dyn->d_un.d_ptr);
            break;
        case DT_RELASZ:
            relasz = dyn->d_un.d_val;
            break;
        default:
            break;
        }
    }
    if (NULL == symtab || NULL == strtab) {
        pp->err = -ENOEXEC;
        return 1;
    }
    if (NULL != jmprel) {
        btl_sctp_pool_patch_table(jmprel, jmpsz, base, symtab, strtab, strsz, pp);
    }
    if (NULL != rela) {
        btl_sctp_pool_patch_table(rela, relasz, base, symtab, strtab, strsz, pp);
    }
    return 1;
}

/* dl_iterate_phdr lists the main program first. */
static int btl_sctp_pool_first_object_base(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void) size;
    *(ElfW(Addr) *) arg = info->dlpi_addr;
    return 1;
}

/* Keep the object holding this code loaded for good: a module is pinned
 * with RTLD_NODELETE; the main program needs nothing. */
static int btl_sctp_pool_pin_self(void)
{
    Dl_info self;
    ElfW(Addr) main_base = 0;

    if (0 == dladdr((void *) btl_sctp_pool_install, &self) || NULL == self.dli_fname) {
        return -1;
    }
    dl_iterate_phdr(btl_sctp_pool_first_object_base, &main_base);
    if ((ElfW(Addr)) self.dli_fbase == main_base) {
        return 0;
    }
    return NULL != dlopen(self.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE) ? 0 : -1;
}

int btl_sctp_pool_install(const char *lib_substr, char *why, size_t whylen)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    pool_patch_t pp = {lib_substr, 1, 0, 0, 0};
    int rc = 0;

    pthread_mutex_lock(&lock);
    if (installed) {
        pthread_mutex_unlock(&lock);
        return 0;
    }
    pthread_once(&region_once, btl_sctp_pool_region_init);
    if (NULL == region) {
        snprintf(why, whylen, "cannot reserve %zu MiB of address space for the pool",
                 POOL_REGION_BYTES >> 20);
        rc = -ENOMEM;
        goto out;
    }
    /* The library will call into this module until the process ends. */
    if (0 != btl_sctp_pool_pin_self()) {
        snprintf(why, whylen, "cannot pin the module that holds the pool");
        rc = -ENOENT;
        goto out;
    }
    /* free first, and all of its slots, or nothing: a pool block must
     * never reach glibc's free. The pool's free takes glibc's blocks too,
     * so an allocating slot left unwritten is harmless. */
    dl_iterate_phdr(btl_sctp_pool_patch_object, &pp);
    if (!pp.found) {
        snprintf(why, whylen, "no loaded library named *%s*", lib_substr);
        rc = -ENOENT;
    } else if (0 == pp.patched || 0 != pp.err) {
        snprintf(why, whylen, "cannot redirect free() of %s: %s", lib_substr,
                 0 != pp.err ? strerror(-pp.err) : "no relocation found");
        rc = 0 != pp.err ? pp.err : -ENOENT;
    } else {
        pp.free_pass = 0;
        pp.patched = 0;
        dl_iterate_phdr(btl_sctp_pool_patch_object, &pp);
        installed = pp.patched > 0;
        if (!installed) {
            snprintf(why, whylen, "no malloc relocation found in %s", lib_substr);
            rc = -ENOENT;
        }
    }
out:
    pthread_mutex_unlock(&lock);
    return rc;
}

#else /* no relocation rewriting on this platform */

int btl_sctp_pool_install(const char *lib_substr, char *why, size_t whylen)
{
    (void) lib_substr;
    snprintf(why, whylen, "relocation rewriting is not supported on this platform");
    return -ENOTSUP;
}

#endif
