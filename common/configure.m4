# common/configure.m4: the helper library every component links. Always
# built; it needs no optional library.

AC_CONFIG_FILES([common/Makefile])
TC_SUMMARY_ROW([common], [yes], [helper library (credits, rcache, shm, rings, hash)])
