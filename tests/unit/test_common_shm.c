/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_common_shm.c: unit tests of tc_shm segment files: mode 0600 whatever
 * the umask, shared contents between two mappings, EEXIST, bad names,
 * attach refusing a wrong size, a loose mode, a foreign owner, a symbolic
 * link and a missing file, and unlink leaving no file behind.
 */
#include <setjmp.h>
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_create_mode_and_unlink),
        cmocka_unit_test(test_create_errors),
        cmocka_unit_test(test_attach_rejects),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
