# tests/cli.mk - the command line as users give it (issue 14): PIDs as
# arguments and no limit on them, the end of a command started by record
# or top, and the lines a terminal shows while recording.

cli_tests = \
	tests/cli-pids.test \
	tests/cli-command-end.test \
	tests/cli-top-command.test \
	tests/cli-terminal.test
TESTS += $(cli_tests)
EXTRA_DIST += $(cli_tests)
