/*
 * badcfi.c: code whose CFI does not hold where it stops, as a runtime's
 * stack-switching assembly (Go's asmcgocall) has
 * (tests/dump-badcfi.test).  main -> wrong_cfi, which pushes the address
 * of a data word without saying so in its CFI and then blocks in read(2)
 * through block_here: the caller its CFI gives is that data word.  A
 * return address in memory that is not code is no frame.  A second thread,
 * "small", does the same with the number 2 (as qemu-user's translated
 * code left one): no page below 4 KiB is ever code.  (Two pushes:
 * the stack stays aligned for the call.)  x86-64 only;
 * elsewhere it says so and exits 77.
 */
#include "target.h"

long badcfi_data[4] = { 1, 2, 3, 4 };

NOINLINE void
park_here(void)
{
	for (;;)
		pause();
}

NOINLINE void
block_here(void)
{
	printf("ready\n");
	fflush(stdout);
	char c;
	while (read(0, &c, 1) > 0)
		;
	exit(0);
}

#if defined(__x86_64__)
/* Its CFI says only the return address is on the stack; the push of
 * badcfi_data's address is not in it. */
__asm__(".text\n"
	".globl wrong_cfi\n"
	".type wrong_cfi, @function\n"
	"wrong_cfi:\n"
	"	.cfi_startproc\n"
	"	lea badcfi_data(%rip), %rax\n"
	"	push %rax\n"
	"	push %rax\n"
	"	call block_here\n"
	"	add $16, %rsp\n"
	"	ret\n"
	"	.cfi_endproc\n"
	".size wrong_cfi, .-wrong_cfi\n");
void wrong_cfi(void);

/* The same, with the number 2 where its CFI finds the return address. */
__asm__(".text\n"
	".globl wrong_cfi_small\n"
	".type wrong_cfi_small, @function\n"
	"wrong_cfi_small:\n"
	"	.cfi_startproc\n"
	"	push $2\n"
	"	push $2\n"
	"	call park_here\n"
	"	add $16, %rsp\n"
	"	ret\n"
	"	.cfi_endproc\n"
	".size wrong_cfi_small, .-wrong_cfi_small\n");
void wrong_cfi_small(void);

static volatile int small_said;

static void *
small_thread(void *arg)
{
	pthread_setname_np(pthread_self(), "small");
	printf("thread small %d\n", (int)target_gettid());
	small_said = 1;
	wrong_cfi_small();
	return arg;
}

int
main(void)
{
	pthread_t t;

	target_init();
	printf("thread main %d\n", (int)getpid());
	if (pthread_create(&t, NULL, small_thread, NULL) != 0)
		target_die("pthread_create");
	/* "ready" after "small" has said its line (tests wait for it to
	 * park: wait_asleep). */
	while (!small_said)
		target_sleep_ms(1);
	wrong_cfi();
	return 0;
}
#else
int
main(void)
{
	printf("badcfi: x86-64 only\n");
	return 77;
}
#endif
