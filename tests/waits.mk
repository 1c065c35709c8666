# tests/waits.mk - the tests of what blocked threads wait on and the
# chains across processes (sampler/waits.c, dump --follow): their target.
check_DATA += tests/targets/waits
CLEANFILES += tests/targets/waits
EXTRA_DIST += tests/targets/waits.c
