/* tests/unit-filemap.c - unwind_file_map() (unwind/elf-image.c): a mapped file
 * that is truncated under us (a container can do that to a library it
 * loaded) must read as zeros, not kill stackspy with SIGBUS; unmapped
 * a SIGBUS elsewhere is not swallowed (checked in a child, which must
 * die of it). */
#include "config.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/check.h"
#include "unwind/elf-image.h"

#define LEN (3 * 4096)

static int
temp_file(char *path)
{
	char buf[LEN];
	int fd = mkstemp(path);
	if (fd < 0)
		return -1;
	memset(buf, 'A', sizeof(buf));
	if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
		return -1;
	return fd;
}

int
main(void)
{
	char path[] = "/tmp/unit-filemap.XXXXXX";
	int fd = temp_file(path);
	if (fd < 0) {
		perror("temp file");
		return 99;
	}
	const unsigned char *p = unwind_file_map(fd, LEN, PROT_READ);
	CHECK(p != MAP_FAILED, "unwind_file_map maps the file");
	if (p == MAP_FAILED)
		return 1;
	CHECK(p[0] == 'A' && p[LEN - 1] == 'A', "contents before truncation");
	CHECK(ftruncate(fd, 0) == 0, "truncate the file");
	CHECK(p[LEN / 2] == 0 && p[0] == 0, "reads after truncation are zeros, no SIGBUS");
	unwind_file_unmap(p, LEN);

	/* A SIGBUS that is not about a guarded mapping still kills. */
	pid_t child = fork();
	if (child == 0) {
		char path2[] = "/tmp/unit-filemap.XXXXXX";
		int fd2 = temp_file(path2);
		const unsigned char *q = unwind_file_map(fd2, LEN, PROT_READ);
		/* Unguarded mapping of the same kind of file. */
		const volatile unsigned char *r = mmap(NULL, LEN, PROT_READ, MAP_PRIVATE, fd2, 0);
		if (q == MAP_FAILED || r == MAP_FAILED)
			_exit(3);
		unlink(path2);
		if (ftruncate(fd2, 0) != 0)
			_exit(4);
		(void)r[LEN / 2];
		_exit(0);
	}
	int st = 0;
	waitpid(child, &st, 0);
	/* Died of it: SIGBUS, or under AddressSanitizer (whose handler was
	 * there first and gets the signal back) its report and abort. */
	CHECK(WIFSIGNALED(st) || (WIFEXITED(st) && WEXITSTATUS(st) != 0 &&
				  WEXITSTATUS(st) != 3 && WEXITSTATUS(st) != 4),
	      "a SIGBUS outside guarded mappings is not swallowed");
	unlink(path);
	close(fd);
	return check_exit_status("unit-filemap");
}
