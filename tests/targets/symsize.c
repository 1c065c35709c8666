/* symsize.c: main -> enter_hidden -> (hidden) -> pause, a thread in
 * pause_here and one in sized_wait, of libsymsize.so (symsize-lib.c;
 * tests/symbols-sizes.test). */
#include "target.h"

void pause_here(void);
void enter_hidden(void);
void sized_wait(void);

static void *
in_lib(void *arg)
{
	pause_here();
	return arg;
}

static void *
in_sized(void *arg)
{
	sized_wait();
	return arg;
}

int
main(void)
{
	pthread_t t;

	target_init();
	if (pthread_create(&t, NULL, in_lib, NULL) != 0 ||
	    pthread_create(&t, NULL, in_sized, NULL) != 0)
		target_die("pthread_create");
	printf("ready\n");
	enter_hidden();
	return 0;
}
