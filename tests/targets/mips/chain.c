/* tests/targets/mips/chain.c - cross-compiled for mipsel, run under
 * qemu-mipsel, dies at a known call chain so tests/mips-core.test can check
 * the chain stackspy recovers from the core qemu writes.
 *
 *   chain leaf     main > leaf_1 > leaf_2 > leaf_3 > leaf_fault (SIGSEGV in a leaf)
 *   chain abort    main > deep_1 > deep_2 > deep_3 > deep_4 > abort()
 *   chain alloca   main > va_1 > va_alloca > va_fault
 *   chain recurse  main > rec(6) > ... > rec(0) > rec_fault
 *   chain signal   main > sig_1 > sig_2 > raise(SIGUSR1) > [signal] > on_usr1 > sig_fault
 *   chain all      each of the five in a child of its own (fork: one start of
 *                  the program and of qemu for them all), one after the
 *                  other; prints "CASE PID SIGNAL" for each child (SIGNAL 0:
 *                  it did not die of one) and exits 0
 *
 * Every function is noipa (no inlining, cloning or tail calls through
 * IPA), and each call is followed by work so it is not a tail call: the
 * chain is the source's, at every optimisation level.
 */
#include <alloca.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define NOIPA __attribute__((noipa))

volatile int sink;
int *volatile null_ptr;

NOIPA void leaf_fault(int x)
{
	*null_ptr = x;            /* no call, no ra saved: a leaf */
}

NOIPA int leaf_3(int x) { leaf_fault(x + 1); return sink + 3; }
NOIPA int leaf_2(int x) { int r = leaf_3(x * 2); return r + sink; }
NOIPA int leaf_1(int x) { int r = leaf_2(x + 5); return r + sink; }

NOIPA int deep_4(int x) { if (x > 0) abort(); return sink; }
NOIPA int deep_3(int x) { int r = deep_4(x + 1); return r + sink; }
NOIPA int deep_2(int x) { int r = deep_3(x + 1); return r + sink; }
NOIPA int deep_1(int x) { int r = deep_2(x + 1); return r + sink; }

NOIPA void va_fault(char *p) { p[0] = 1; *null_ptr = p[1]; }
NOIPA int va_alloca(int n)
{
	/* A variable-sized frame: sp moves, the frame is found from s8. */
	char *p = alloca(n);
	memset(p, 0, n);
	va_fault(p);
	return p[2] + sink;
}
NOIPA int va_1(int n) { int r = va_alloca(n * 16); return r + sink; }

NOIPA void rec_fault(void) { *null_ptr = 7; }
NOIPA int rec(int n)
{
	if (n == 0)
		rec_fault();
	else
		sink += rec(n - 1);
	return sink + n;
}

NOIPA void sig_fault(int s) { *null_ptr = s; }
NOIPA void on_usr1(int s) { sig_fault(s); sink++; }
NOIPA int sig_2(int x) { raise(SIGUSR1); return x + sink; }
NOIPA int sig_1(int x) { int r = sig_2(x + 1); return r + sink; }

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "leaf";
	int r = 0;
	/* Each case in a child of its own, one after the other: one start
	 * of the program (and of qemu) for the five. */
	if (strcmp(what, "all") == 0) {
		static const char *const cases[] = { "leaf", "abort", "alloca", "recurse", "signal" };
		for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; i++) {
			fflush(stdout);
			pid_t pid = fork();
			if (pid < 0)
				return 2;
			if (pid == 0) {
				what = cases[i];
				break;
			}
			int st;
			if (waitpid(pid, &st, 0) != pid)
				return 2;
			printf("%s %d %d\n", cases[i], (int)pid, WIFSIGNALED(st) ? WTERMSIG(st) : 0);
		}
		if (strcmp(what, "all") == 0)
			return 0;
	}
	if (strcmp(what, "leaf") == 0)
		r = leaf_1(argc);
	else if (strcmp(what, "abort") == 0)
		r = deep_1(argc);
	else if (strcmp(what, "alloca") == 0)
		r = va_1(argc + 3);
	else if (strcmp(what, "recurse") == 0)
		r = rec(6);
	else if (strcmp(what, "signal") == 0) {
		signal(SIGUSR1, on_usr1);
		r = sig_1(argc);
	}
	return r + sink;
}
