/*
 * libdlt.c: the library threads.c dlopen()s (built as libdlt.so by an
 * explicit rule in tests/local.mk).  Its thread blocks in
 * read <- dlt_f3 <- dlt_f2 <- dlt_f1.
 */
#include <unistd.h>

#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 8
# define NOINLINE __attribute__((noipa, noinline))
#else
# define NOINLINE __attribute__((noinline))
#endif
#define BARRIER() __asm__ __volatile__("" ::: "memory")

int dlt_f3(int fd);
int dlt_f2(int fd);
int dlt_f1(int fd);

NOINLINE int
dlt_f3(int fd)
{
	char c;
	int r = (int) read(fd, &c, 1);
	BARRIER();
	return r;
}

NOINLINE int dlt_f2(int fd) { int r = dlt_f3(fd); BARRIER(); return r + 1; }
NOINLINE int dlt_f1(int fd) { int r = dlt_f2(fd); BARRIER(); return r + 1; }
