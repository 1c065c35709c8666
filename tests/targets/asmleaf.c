/*
 * asmleaf.c: a thread in hand-written code with no CFI and no symbol, a
 * leaf that uses the frame pointer register as data and holds 0 there,
 * and spins in AVX instructions, as x264's and x265's assembly does
 * (tests/dump-asmleaf.test: it needs a CPU with AVX).
 * main -> spin_outer -> (unnamed asm) spins with rbp = 0; a frame pointer
 * of 0 there is not the outermost frame.  Prints "thread main TID" and
 * "ready" (the thread is running, not blocked: tests must not wait for it
 * to sleep).  x86-64 only; elsewhere it says so and exits 77.
 */
#include "target.h"

volatile int spin_stop;

#if defined(__x86_64__)
/* No .cfi_* directives, no symbol (.L): only its address, in data. */
__asm__(".text\n"
	".Lasm_spin:\n"
	"	mov %rbp, %r11\n"
	"	xor %ebp, %ebp\n"
	"	mov %rsp, %rdx\n"
	"1:	vmovdqu (%rdx), %xmm0\n"
	"	vpavgb %xmm0, %xmm0, %xmm1\n"
	"	vpxor %xmm1, %xmm0, %xmm2\n"
	"	vpaddb %xmm2, %xmm1, %xmm3\n"
	"	vpsubb %xmm3, %xmm2, %xmm0\n"
	"	cmpl $0, spin_stop(%rip)\n"
	"	je 1b\n"
	"	vzeroupper\n"
	"	mov %r11, %rbp\n"
	"	ret\n"
	".data\n"
	".balign 8\n"
	".globl asm_spin_ptr\n"
	"asm_spin_ptr:\n"
	"	.quad .Lasm_spin\n"
	".text\n");
extern void (*asm_spin_ptr)(void);

NOINLINE void
spin_outer(void)
{
	asm_spin_ptr();
	BARRIER();
}

int
main(void)
{
	target_init();
	printf("thread main %d\n", (int)getpid());
	printf("ready\n");
	spin_outer();
	return 0;
}
#else
int
main(void)
{
	printf("asmleaf: x86-64 only\n");
	return 77;
}
#endif
