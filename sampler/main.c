/* sampler/main.c - parse the command, run it, clean up. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sampler/error.h"
#include "sampler/options.h"
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
	      "  record    sample stacks periodically into a flamegraph (folded, SVG,\n"
	      "            speedscope, pprof)\n"
	      "  top       a live view of the hottest functions (ncurses)\n"
	      "  help [COMMAND]  this help, or a command's (as stackspy COMMAND --help)\n"
	      "\n"
	      "Options:\n"
	      "  -h, --help     show this help (stackspy COMMAND --help for a command's)\n"
	      "  -V, -v, --version  show the version\n"
	      "\n"
	      "Exit status: 0 success, 1 partial (some threads or frames failed, output\n"
	      "still written), 2 fatal error (nothing written), 64 usage error.\n"
	      "\n"
	      "Run as root, stackspy treats what other users' processes control as\n"
	      "hostile (names, files, symlinks): see stackspy(1), SECURITY.\n"
	      "\n"
	      "Examples:\n"
	      "  stackspy dump $(pidof myservice)           every thread's stack, once (a hang)\n"
	      "  stackspy record -p PID -d 30 -o flame.svg  30 s flamegraph of a live process\n"
	      "  stackspy top -p PID                        its hottest functions, live\n"
	      "  stackspy record -o flame.svg -- ./prog ARG  start ./prog and record it\n", f);
}

static const char *const commands[] = { "dump", "record", "top", "help", NULL };

/* stackspy help [COMMAND]: the same as --help. */
static int
help(int argc, char **argv)
{
	if (argc < 3) {
		usage(stdout);
		return 0;
	}
	char *args[] = { argv[2], (char *)"--help", NULL };
	if (strcmp(argv[2], "dump") == 0)
		return sampler_cmd_dump(2, args);
	if (strcmp(argv[2], "record") == 0)
		return sampler_cmd_record(2, args);
	if (strcmp(argv[2], "top") == 0)
		return sampler_cmd_top(2, args);
	error_msg_and_help(NULL, "unknown command '%s'", argv[2]);
}

int
main(int argc, char **argv)
{
	sampler_stdio_reserve();
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	const char *cmd = argv[1];
	if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0)
		return help(1, argv);
	if (strcmp(cmd, "help") == 0)
		return help(argc, argv);
	if (strcmp(cmd, "-V") == 0 || strcmp(cmd, "-v") == 0 || strcmp(cmd, "--version") == 0) {
		printf("stackspy %s\n", PACKAGE_VERSION);
		return 0;
	}
	sampler_signals_install();
	if (strcmp(cmd, "dump") == 0)
		return sampler_cmd_dump(argc - 1, argv + 1);
	if (strcmp(cmd, "record") == 0)
		return sampler_cmd_record(argc - 1, argv + 1);
	if (strcmp(cmd, "top") == 0)
		return sampler_cmd_top(argc - 1, argv + 1);
	if (cmd[0] == '-')
		error_msg_and_help(NULL, "unrecognized option '%s'", cmd);
	const char *near = sampler_closest_word(cmd, commands);
	if (near)
		error_msg_and_help(NULL, "unknown command '%s' (did you mean '%s'?)", cmd, near);
	error_msg_and_help(NULL, "unknown command '%s'", cmd);
}
