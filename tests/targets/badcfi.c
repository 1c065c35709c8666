/*
 * badcfi.c: code whose CFI does not hold where it stops, as a runtime's
 * stack-switching assembly (Go's asmcgocall) has
 * (tests/dump-badcfi.test).  main -> wrong_cfi, which pushes the address
 * of a data word without saying so in its CFI and then blocks in read(2)
 * through block_here: the caller its CFI gives is that data word.  A
 * return address in memory that is not code is no frame.  (Two pushes:
 * the stack stays aligned for the call.)  x86-64 only;
 * elsewhere it says so and exits 77.
 */
#include "target.h"

long badcfi_data[4] = { 1, 2, 3, 4 };

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

int
main(void)
{
	target_init();
	printf("thread main %d\n", (int)getpid());
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
