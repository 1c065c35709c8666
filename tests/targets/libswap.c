/*
 * libswap.c: built twice, as libswap-a.so (LIBSWAP_A: a_spin) and
 * libswap-b.so (b_spin), the same layout, so that tests/targets/dlswap
 * finds each loaded where the other was.
 */
#ifdef LIBSWAP_A
# define SPIN a_spin
# define OTHER a_other
#else
# define SPIN b_spin
# define OTHER b_other
#endif

volatile long lib_sink;

__attribute__((noinline)) long
OTHER(long x)
{
	return x * 3;
}

__attribute__((noinline)) long
SPIN(long loops)
{
	for (long i = 0; i < loops; i++)
		lib_sink += i ^ (lib_sink >> 3);
	return lib_sink;
}
