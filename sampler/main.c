/* sampler/main.c - parse the command, run it, clean up. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sampler/error.h"
#include "sampler/sampler.h"
#include "sampler/signals.h"

static void
usage(FILE *f)
{
	fputs("Usage: stackspy COMMAND [OPTIONS]\n"
	      "External stack sampler for native Linux processes: attaches with ptrace\n"
	      "to running processes, without restarting them.\n"
	      "\n"
	      "Commands:\n"
	      "  dump      print the stack of every thread of a process, once\n"
	      "  record    sample stacks periodically into a flamegraph (folded, SVG, speedscope)\n"
	      "  top       a live view of the hottest functions (ncurses)\n"
	      "\n"
	      "Options:\n"
	      "  -h, --help     show this help (stackspy COMMAND --help for a command's)\n"
	      "  -V, --version  show the version\n"
	      "\n"
	      "Exit status: 0 success, 1 partial (some threads or frames failed, output\n"
	      "still written), 2 fatal error (nothing written), 64 usage error.\n"
	      "\n"
	      "Run as root against other users' processes, stackspy treats what they\n"
	      "control as hostile: it refuses to write -o FILE through another user's\n"
	      "symlink, file or FIFO in /tmp-like directories, or into devices other\n"
	      "than terminals and /dev/null; shows names with control and bidi\n"
	      "characters as \\xNN; reads /tmp/perf-PID.map only as the target's own\n"
	      "regular file, never through a symlink; throws push replies away and takes\n"
	      "credentials from --push-auth-file or STACKSPY_PUSH_AUTH; and caches\n"
	      "debuginfod downloads in root's home (see stackspy(1), SECURITY).\n", f);
}

int
main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	const char *cmd = argv[1];
	if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0) {
		usage(stdout);
		return 0;
	}
	if (strcmp(cmd, "-V") == 0 || strcmp(cmd, "--version") == 0) {
		printf("stackspy %s\n", PACKAGE_VERSION);
		return 0;
	}
	signals_install();
	if (strcmp(cmd, "dump") == 0)
		return cmd_dump(argc - 1, argv + 1);
	if (strcmp(cmd, "record") == 0)
		return cmd_record(argc - 1, argv + 1);
	if (strcmp(cmd, "top") == 0)
		return cmd_top(argc - 1, argv + 1);
	if (cmd[0] == '-')
		error_msg_and_help(NULL, "unrecognized option '%s'", cmd);
	error_msg_and_help(NULL, "unknown command '%s'", cmd);
}
