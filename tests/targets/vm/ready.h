/* tests/targets/vm/ready.h - how a target of the emulated machines says it
 * is in place: its pid into the file named by argv[1] (tests/vm-init.sh
 * waits for it).  Returns 0, or -1 (said on stderr) when it cannot. */
#ifndef VM_READY_H
#define VM_READY_H

#include <stdio.h>
#include <unistd.h>

static int
vm_ready(int argc, char **argv)
{
	if (argc < 2)
		return 0;
	FILE *f = fopen(argv[1], "w");
	if (!f || fprintf(f, "%d\n", (int)getpid()) < 0 || fclose(f) != 0) {
		perror(argv[1]);
		return -1;
	}
	return 0;
}

#endif
