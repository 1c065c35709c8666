# tests/dump-source.mk - dump --source: its test and its target,
# tests/targets/inline.c, built -O2 -g by an explicit rule like the targets
# of tests/local.mk (same reason: nothing may change its flags), with the
# TARGET_* variables from there.  The test makes its stripped, debuglink
# and compressed-DWARF copies itself.

EXTRA_DIST += tests/targets/inline.c

check_DATA += tests/targets/inline-O2
CLEANFILES += tests/targets/inline-O2

tests/targets/inline-O2: tests/targets/inline.c $(TARGET_DEPS)
	@$(MKDIR_P) tests/targets
	$(AM_V_CC)$(TARGET_CC) -O2 $(TARGET_PIE) \
		-o $@ $(srcdir)/tests/targets/inline.c
