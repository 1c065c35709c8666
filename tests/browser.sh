# browser.sh: sourced after init.sh by the tests that open stackspy's
# output in a real browser (tests/svg-browser.test, tests/speedscope.test).
#
# need_browser: skips the test (77, saying why) unless Debian's chromium,
# node >= 18 and npm are there; then installs, once for all such tests and
# under a lock (make check -j runs them together), playwright-core and
# speedscope from the npm registry into tests/node-cache/ of the build tree.
# Versions are pinned so a run today and a run next year drive the same
# code.  It exports CHROMIUM and NODE_CACHE for the node scripts
# (tests/*.mjs).

PLAYWRIGHT_VERSION=1.54.2
SPEEDSCOPE_VERSION=1.25.0
NODE_CACHE=$abs_top_builddir/tests/node-cache
FLAMEGRAPH_GEN=$abs_top_builddir/tests/flamegraph-gen
PNGSTAT=$abs_top_srcdir/tests/pngstat.py

[ -x "$FLAMEGRAPH_GEN" ] || framework_failure_ "no $FLAMEGRAPH_GEN"

# npm_has_ PACKAGE VERSION: the cache holds that version of PACKAGE.
npm_has_()
{
	grep -qs "\"version\": \"$2\"" "$NODE_CACHE/node_modules/$1/package.json"
}

need_browser()
{
	CHROMIUM=${CHROMIUM:-$(command -v chromium || command -v chromium-browser)} ||
		skip_ "no chromium (Debian package chromium)"
	command -v node > /dev/null 2>&1 || skip_ "no node (Debian package nodejs)"
	_major=$(node -e 'console.log(process.versions.node.split(".")[0])') ||
		skip_ "node does not run"
	[ "$_major" -ge 18 ] || skip_ "node $_major is too old for playwright-core (>= 18)"
	command -v flock > /dev/null 2>&1 || skip_ "no flock (util-linux)"
	mkdir -p "$NODE_CACHE" || framework_failure_ "mkdir $NODE_CACHE"
	# Under the lock: the first test installs, the others wait and find
	# the packages there.  npm writes into the cache only.
	# shellcheck disable=SC2016
	flock "$NODE_CACHE/.lock" sh -c '
		cd "$1" || exit 1
		grep -qs "\"version\": \"$2\"" node_modules/playwright-core/package.json &&
		grep -qs "\"version\": \"$3\"" node_modules/speedscope/package.json &&
			exit 0
		command -v npm > /dev/null 2>&1 || { echo "no npm"; exit 1; }
		# Bounded: an unreachable registry must end in a skip, not
		# in the test harness timeout (npm retries for minutes).
		timeout 100 npm install --prefix "$1" --no-audit --no-fund --no-save \
			--no-package-lock --fetch-retries=1 --fetch-timeout=30000 \
			--loglevel=error "playwright-core@$2" "speedscope@$3"
	' sh "$NODE_CACHE" "$PLAYWRIGHT_VERSION" "$SPEEDSCOPE_VERSION" \
		< /dev/null > npm.out 2>&1 &&
	npm_has_ playwright-core "$PLAYWRIGHT_VERSION" &&
	npm_has_ speedscope "$SPEEDSCOPE_VERSION" || {
		tail -20 npm.out
		skip_ "cannot install playwright-core@$PLAYWRIGHT_VERSION and speedscope@$SPEEDSCOPE_VERSION from the npm registry into $NODE_CACHE"
	}
	export CHROMIUM NODE_CACHE
}
