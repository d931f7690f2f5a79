/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_common_shm.c: unit tests of tc_shm segment files: mode 0600 whatever
 * the umask, shared contents between two mappings, EEXIST, bad names,
 * attach refusing a wrong size, a loose mode, a foreign owner, a symbolic
 * link and a missing file, and unlink leaving no file behind.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "tc_shm.h"

static char dir[PATH_MAX];

static int setup(void **state)
{
    const char *tmp = getenv("TMPDIR");
    (void) state;
    snprintf(dir, sizeof(dir), "%s/tc_shm_test.XXXXXX", NULL != tmp ? tmp : "/tmp");
    return NULL == mkdtemp(dir) ? -1 : 0;
}

static int teardown(void **state)
{
    (void) state;
    return rmdir(dir);
}

static void test_create_mode_and_unlink(void **state)
{
    tc_shm_seg_t s1, s2;
    struct stat st;
    mode_t old = umask(0);
    (void) state;

    /* A umask of 0 would give 0666 to a plain open(): we want 0600. */
    assert_int_equal(tc_shm_create(&s1, dir, "seg1", 100000), 0);
    umask(old);
    assert_true(s1.creator);
    assert_int_equal(stat(s1.path, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0600);
    assert_int_equal(st.st_size, 100000);
    assert_int_equal(st.st_uid, geteuid());
    /* Zero filled, shared with a second mapping. */
    for (size_t i = 0; i < s1.size; i++) {
        assert_int_equal(((uint8_t *) s1.base)[i], 0);
    }
    assert_int_equal(tc_shm_attach(&s2, dir, "seg1", 100000), 0);
    assert_false(s2.creator);
    assert_ptr_not_equal(s1.base, s2.base);
    memcpy(s1.base, "pattern", 8);
    assert_string_equal((char *) s2.base, "pattern");
    /* Attach with size 0 accepts the actual size. */
    {
        tc_shm_seg_t s3;
        assert_int_equal(tc_shm_attach(&s3, dir, "seg1", 0), 0);
        assert_int_equal(s3.size, 100000);
        assert_int_equal(tc_shm_detach(&s3), 0);
    }

    assert_int_equal(tc_shm_unlink(&s1), 0);
    assert_int_equal(stat(s1.path, &st), -1);
    assert_int_equal(errno, ENOENT);
    /* Unlinked, the mappings still work; unlink again is harmless. */
    ((uint8_t *) s2.base)[99999] = 7;
    assert_int_equal(((uint8_t *) s1.base)[99999], 7);
    assert_int_equal(tc_shm_unlink(&s1), 0);
    assert_int_equal(tc_shm_detach(&s2), 0);
    assert_int_equal(tc_shm_detach(&s1), 0);
    assert_int_equal(tc_shm_detach(&s1), 0);
    assert_null(s1.base);
    assert_int_equal(s1.fd, -1);
    /* Gone: attach fails. */
    assert_int_equal(tc_shm_attach(&s2, dir, "seg1", 0), -ENOENT);
}

static void test_create_errors(void **state)
{
    tc_shm_seg_t s, t;
    char longname[PATH_MAX];
    (void) state;

    assert_int_equal(tc_shm_create(&s, dir, "dup", 4096), 0);
    assert_int_equal(tc_shm_create(&t, dir, "dup", 4096), -EEXIST);
    /* The failed create did not remove the existing file. */
    assert_int_equal(access(s.path, F_OK), 0);
    assert_int_equal(tc_shm_create(&t, dir, "zero", 0), -EINVAL);
    assert_int_equal(tc_shm_create(&t, dir, "a/b", 4096), -EINVAL);
    assert_int_equal(tc_shm_create(&t, dir, "..", 4096), -EINVAL);
    assert_int_equal(tc_shm_create(&t, dir, "", 4096), -EINVAL);
    assert_int_equal(tc_shm_create(&t, NULL, "x", 4096), -EINVAL);
    memset(longname, 'n', sizeof(longname) - 1);
    longname[sizeof(longname) - 1] = '\0';
    assert_int_equal(tc_shm_create(&t, dir, longname, 4096), -ENAMETOOLONG);
    assert_int_equal(tc_shm_unlink(&s), 0);
    assert_int_equal(tc_shm_detach(&s), 0);
}

static void test_attach_rejects(void **state)
{
    tc_shm_seg_t s, t;
    char path[PATH_MAX + 16], link[PATH_MAX + 16];
    (void) state;

    assert_int_equal(tc_shm_create(&s, dir, "victim", 8192), 0);
    /* Wrong size. */
    assert_int_equal(tc_shm_attach(&t, dir, "victim", 4096), -EINVAL);
    assert_int_equal(tc_shm_attach(&t, dir, "victim", 8193), -EINVAL);
    /* Mode other than 0600. */
    assert_int_equal(chmod(s.path, 0644), 0);
    assert_int_equal(tc_shm_attach(&t, dir, "victim", 8192), -EPERM);
    assert_int_equal(chmod(s.path, 0600), 0);
    assert_int_equal(tc_shm_attach(&t, dir, "victim", 8192), 0);
    tc_shm_detach(&t);
    /* Symbolic link to a valid segment. */
    snprintf(link, sizeof(link), "%s/link", dir);
    assert_int_equal(symlink(s.path, link), 0);
    assert_int_equal(tc_shm_attach(&t, dir, "link", 8192), -EPERM);
    unlink(link);
    /* Not a regular file. */
    snprintf(path, sizeof(path), "%s/adir", dir);
    assert_int_equal(mkdir(path, 0700), 0);
    assert_true(tc_shm_attach(&t, dir, "adir", 0) < 0);
    rmdir(path);
    /* Empty file. */
    snprintf(path, sizeof(path), "%s/empty", dir);
    {
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fclose(f);
        chmod(path, 0600);
        assert_int_equal(tc_shm_attach(&t, dir, "empty", 0), -EINVAL);
        unlink(path);
    }
    /* Foreign owner: only testable with the right to give files away. */
    if (0 == geteuid()) {
        assert_int_equal(chown(s.path, 65534, 65534), 0);
        assert_int_equal(tc_shm_attach(&t, dir, "victim", 8192), -EPERM);
        assert_int_equal(chown(s.path, 0, 0), 0);
    }
    assert_int_equal(tc_shm_unlink(&s), 0);
    assert_int_equal(tc_shm_detach(&s), 0);
}

/* a segment header as the BTLs lay theirs out */
typedef struct pub_hdr {
    uint64_t magic;
    uint32_t expected;
    uint32_t attached;
    uint64_t payload;
} pub_hdr_t;

#define PUB_MAGIC 0x7075626c69736831ull

static bool pub_name_exists(const char *name)
{
    char path[PATH_MAX + 64];

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    return 0 == access(path, F_OK);
}

/* format, publish, count attachments, unlink when all attached: before
 * the magic a peer sees nothing; each peer counts itself; the one that
 * makes the count reach the number expected removes the name (the
 * earlier ones do not); the owner notices; a fourth peer cannot attach. */
static void test_publish_attach_unlink(void **state)
{
    tc_shm_seg_t owner, peer[3], late;
    pub_hdr_t *h;

    (void) state;
    assert_int_equal(tc_shm_attach_header(&late, dir, "pub", sizeof(pub_hdr_t)), -ENOENT);
    assert_int_equal(tc_shm_create(&owner, dir, "pub", 4096), 0);
    h = owner.base;
    h->expected = 3;
    h->payload = 0xabcdef;
    /* not published yet: attachable, but not formatted */
    assert_int_equal(tc_shm_attach_header(&peer[0], dir, "pub", sizeof(pub_hdr_t)), 0);
    assert_false(tc_shm_published(&((pub_hdr_t *) peer[0].base)->magic, PUB_MAGIC));
    assert_int_equal(tc_shm_detach(&peer[0]), 0);
    tc_shm_publish(&h->magic, PUB_MAGIC);
    assert_false(tc_shm_unlink_when_attached(&owner, &h->attached, h->expected));
    for (int i = 0; i < 3; ++i) {
        pub_hdr_t *ph;

        assert_true(pub_name_exists("pub"));
        assert_int_equal(tc_shm_attach_header(&peer[i], dir, "pub", sizeof(pub_hdr_t)), 0);
        ph = peer[i].base;
        assert_true(tc_shm_published(&ph->magic, PUB_MAGIC));
        assert_int_equal(ph->payload, 0xabcdef);
        /* only the last expected attachment removes the name */
        assert_int_equal(tc_shm_count_attach(&peer[i], &ph->attached, ph->expected), 2 == i);
        assert_int_equal(tc_shm_unlink_when_attached(&owner, &h->attached, h->expected), 2 == i);
    }
    assert_false(pub_name_exists("pub"));
    assert_int_equal(h->attached, 3);
    assert_true(tc_shm_unlink_when_attached(&owner, &h->attached, h->expected)); /* idempotent */
    assert_int_equal(tc_shm_attach_header(&late, dir, "pub", sizeof(pub_hdr_t)), -ENOENT);
    /* the mappings stay valid after the name went */
    ((pub_hdr_t *) peer[0].base)->payload = 42;
    assert_int_equal(h->payload, 42);
    for (int i = 0; i < 3; ++i) {
        assert_int_equal(tc_shm_detach(&peer[i]), 0);
    }
    assert_int_equal(tc_shm_unlink(&owner), 0);
    assert_int_equal(tc_shm_detach(&owner), 0);
}

/* no peer expected: the owner removes the name as it publishes */
static void test_publish_nobody_expected(void **state)
{
    tc_shm_seg_t owner;
    pub_hdr_t *h;

    (void) state;
    assert_int_equal(tc_shm_create(&owner, dir, "alone", 4096), 0);
    h = owner.base;
    tc_shm_publish(&h->magic, PUB_MAGIC);
    assert_true(pub_name_exists("alone"));
    assert_true(tc_shm_unlink_when_attached(&owner, &h->attached, 0));
    assert_false(pub_name_exists("alone"));
    assert_int_equal(tc_shm_detach(&owner), 0);
}

/* too short for the header, or empty (created, not sized yet): -ENOENT,
 * "not there yet", and nothing stays mapped */
static void test_attach_header_short(void **state)
{
    tc_shm_seg_t owner, t;
    char path[PATH_MAX + 64];
    int fd;

    (void) state;
    assert_int_equal(tc_shm_create(&owner, dir, "short", 64), 0);
    assert_int_equal(tc_shm_attach_header(&t, dir, "short", 128), -ENOENT);
    assert_null(t.base);
    assert_int_equal(tc_shm_attach_header(&t, dir, "short", 64), 0);
    assert_int_equal(tc_shm_detach(&t), 0);
    assert_int_equal(tc_shm_unlink(&owner), 0);
    assert_int_equal(tc_shm_detach(&owner), 0);
    snprintf(path, sizeof(path), "%s/empty2", dir);
    fd = open(path, O_CREAT | O_EXCL | O_RDWR, 0600);
    assert_true(fd >= 0);
    assert_int_equal(fchmod(fd, 0600), 0);
    close(fd);
    assert_int_equal(tc_shm_attach_header(&t, dir, "empty2", 8), -ENOENT);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_create_mode_and_unlink),
        cmocka_unit_test(test_create_errors),
        cmocka_unit_test(test_attach_rejects),
        cmocka_unit_test(test_publish_attach_unlink),
        cmocka_unit_test(test_publish_nobody_expected),
        cmocka_unit_test(test_attach_header_short),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
