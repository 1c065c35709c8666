/*
 * dlswap.c: a plugin host that unloads one library and loads another at
 * the same address, over and over (tests/record-dlswap.test): dlopen
 * libswap-a.so, spin in a_spin for some milliseconds, dlclose, then the
 * same with libswap-b.so and b_spin.  Prints "at a_spin 0x..." and
 * "at b_spin 0x..." for the first rounds (the addresses are the same),
 * then "ready".
 *
 *   dlswap LIB_A LIB_B
 */
#include "target.h"

#include <dlfcn.h>

NOINLINE long
spin(long (*fn)(long), long loops)
{
	long r = fn(loops);
	BARRIER();
	return r;
}

int
main(int argc, char **argv)
{
	static const char *const fns[2] = { "a_spin", "b_spin" };

	if (argc != 3)
		return 99;
	target_init();
	for (unsigned long k = 0;; k++) {
		void *h = dlopen(argv[1 + (k & 1)], RTLD_NOW);
		if (!h) {
			fprintf(stderr, "%s\n", dlerror());
			return 3;
		}
		long (*fn)(long) = (long (*)(long))dlsym(h, fns[k & 1]);
		if (!fn)
			target_die("dlsym");
		if (k < 2)
			printf("at %s %p\n", fns[k & 1], (void *)fn);
		if (k == 2)
			printf("ready\n");
		spin(fn, 2000000);
		dlclose(h);
	}
}
