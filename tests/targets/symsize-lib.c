/* symsize-lib.c: a shared library as distributions ship them (stripped:
 * only .dynsym names it), with what misnamed frames in real libraries
 * (tests/symbols-sizes.test):
 * - pause_here, and at the same address an alias of an older, hidden
 *   version that sorts first (glibc's cfree@GLIBC_2.2.5 beside
 *   free@@GLIBC_2.2.5): the frame is pause_here, as gdb names it;
 * - zero_size, assembly without .size (musl's memset and memcpy), followed
 *   by a function that is not exported (musl's __syscall_cp_asm after
 *   memset): a pc in the latter is not zero_size's;
 * - sized_wait, with a size, and inside it a label without one right
 *   after its syscall (qemu's safe_syscall_end in safe_syscall_base): a
 *   thread in the syscall is in sized_wait, not at the label.
 * Built with a version script (in the test) that makes them so. */
#include <unistd.h>

void pause_here(void);
void enter_hidden(void);

__attribute__((noinline)) void
pause_here(void)
{
	for (;;)
		pause();
}

extern void apause_compat(void) __attribute__((alias("pause_here")));
__asm__(".symver apause_compat, apause_here@V1");

/* No CFI, no size: top-level assembly. */
__asm__(".text\n"
	".globl zero_size\n"
	".type zero_size, @function\n"
	"zero_size:\n"
	"	mov %edi, %eax\n"
	"	test %eax, %eax\n"
	"	je 1f\n"
	"	add $1, %eax\n"
	"1:	ret\n"
	"hidden_wait:\n"
	"	push %rbx\n"
	"	sub $16, %rsp\n"
	"2:	call pause@PLT\n"
	"	jmp 2b\n");

/* With a size and CFI, and an exported label of none inside. */
__asm__(".text\n"
	".globl sized_wait, sized_wait_end\n"
	".type sized_wait, @function\n"
	"sized_wait:\n"
	"	.cfi_startproc\n"
	"3:	mov $34, %eax\n"           /* pause(2) */
	"	syscall\n"
	"sized_wait_end:\n"
	"	jmp 3b\n"
	"	.cfi_endproc\n"
	".size sized_wait, .-sized_wait\n");

void hidden_wait(void);

__attribute__((noinline)) void
enter_hidden(void)
{
	hidden_wait();
	__asm__ __volatile__("" ::: "memory");
}
