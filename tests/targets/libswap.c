/*
 * libswap.c: built twice, as libswap-a.so (LIBSWAP_A: a_spin, a_step)
 * and libswap-b.so (b_spin, b_step), so that tests/targets/dlswap finds
 * each loaded where the other was.  The step comes first and is the same
 * in size, so each spin starts at the same address; but the code
 * differs: b_spin calls b_step in its loop, a_spin does a step itself.
 * (Code the same byte for byte at the pc in both would not tell the two
 * apart: the stop reads only the code at the pc, unwind_walk.)
 * So main;spin;b_spin;b_step is a true stack, and main;spin;a_spin;a_step
 * is b_spin's code named from libswap-a.so (a map read after the swap).
 */
#ifdef LIBSWAP_A
# define SPIN a_spin
# define STEP a_step
#else
# define SPIN b_spin
# define STEP b_step
#endif

volatile long lib_sink;

__attribute__((noinline, used)) static long
STEP(long i)
{
#ifdef LIBSWAP_A
	return i ^ (lib_sink >> 3);
#else
	return (i + 7) * (lib_sink | 1);
#endif
}

__attribute__((noinline)) long
SPIN(long loops)
{
	for (long i = 0; i < loops; i++) {
#ifdef LIBSWAP_A
		lib_sink += i ^ (lib_sink >> 3);
#else
		lib_sink += STEP(i);
#endif
	}
	return lib_sink;
}
