# tests/flamegraph.mk - unit tests of the SVG flamegraph and speedscope
# writers of collapse/, the folded-to-graph test tool, and the browser
# tests that open their output
# (headless Chromium through playwright-core from npm, installed on first
# use into tests/node-cache/ of the build tree).
check_PROGRAMS += tests/unit-flamegraph tests/flamegraph-gen
tests_unit_flamegraph_SOURCES = tests/unit-flamegraph.c
tests_unit_flamegraph_LDADD = collapse/libcollapse.a base/libbase.a
tests_flamegraph_gen_SOURCES = tests/flamegraph-gen.c
tests_flamegraph_gen_LDADD = collapse/libcollapse.a base/libbase.a

EXTRA_DIST += tests/browser.sh tests/svg-browser.mjs \
	tests/speedscope.mjs tests/pngstat.py

clean-local: clean-local-node-cache
clean-local-node-cache:
	rm -rf tests/node-cache
.PHONY: clean-local-node-cache
