/* translated.c: threads running translated code, as qemu-user's do
 * (tests/dump-translated.test): blocks copied into an anonymous executable
 * mapping (no file, no symbol, no CFI, no frame record), entered from a
 * prologue stub that reserved the frame all blocks share, whose words are
 * never cleared.  Among them, below the real return address, a return
 * address a call left long ago: right after a call in stale_caller (a
 * function with CFI), whose CFI then finds a data address where its own
 * return address would be.
 *
 *   block (generated, a loop) <- [stub frame] <- run_block (C)
 *   <- translated_thread <- clone
 *
 * `near` threads' stub frame is 64 bytes: the real return address is a
 * few words above the stale one.  `far` threads' is 4 KiB: beyond what a
 * scan of the stack looks at, so no frame is found past the block; for
 * two of them, stale_caller's CFI finds 0 instead of a data address.  The
 * block lies more than 256 bytes after the stub (where the heuristics
 * look back for a function's start), after a jump that ends another
 * block, as translated blocks lie. */
#include "target.h"

#include <sys/mman.h>

long stale_data[4];

/* A function with CFI whose call left stale_ra on some stack. */
__asm__(".text\n"
	".globl stale_caller, stale_ra\n"
	".type stale_caller, @function\n"
	"stale_caller:\n"
	"	.cfi_startproc\n"
	"	sub $24, %rsp\n"
	"	.cfi_adjust_cfa_offset 24\n"
	"	call stale_callee\n"
	"stale_ra:\n"
	"	add $24, %rsp\n"
	"	.cfi_adjust_cfa_offset -24\n"
	"	ret\n"
	"	.cfi_endproc\n"
	".size stale_caller, .-stale_caller\n"
	"stale_callee:\n"
	"	ret\n");

/* The translated code, copied whole (position-independent).  The stub
 * (%rdi: the frame size, %rsi: the stale return address, %rdx: the data
 * address) reserves the frame, writes the stale words at its bottom and
 * jumps to the block. */
__asm__(".text\n"
	".globl tr_code_start, tr_code_end, tr_stub\n"
	"tr_code_start:\n"
	"tr_stub:\n"
	"	sub %rdi, %rsp\n"
	"	mov %rsi, (%rsp)\n"         /* the stale return address */
	"	movq $0, 8(%rsp)\n"
	"	movq $0, 16(%rsp)\n"
	"	movq $0, 24(%rsp)\n"
	"	mov %rdx, 32(%rsp)\n"       /* where stale_caller's CFI looks */
	"	movabs $0x5a5a5a5a5a5a5a5b, %rbp\n"  /* data, no frame pointer */
	"	jmp tr_block\n"
	/* other blocks, between the stub and this one */
	"	.rept 96\n"
	"	add $1, %rax\n"
	"	.endr\n"
	"	jmp tr_stub\n"
	"tr_block:\n"
	"1:	pause\n"
	"	add $2, %rbp\n"
	"	jmp 1b\n"
	"tr_code_end:\n");

extern const unsigned char tr_code_start[], tr_code_end[], tr_stub[];
extern const unsigned char stale_ra[];

static void *code;

struct kind {
	long frame;               /* the stub's frame, bytes */
	void *data;               /* what stale_caller's CFI finds */
};

static NOINLINE void
run_block(const struct kind *k)
{
	/* The stub's frame ends below this call's return address. */
	((void (*)(long, const void *, void *))code)(k->frame, stale_ra, k->data);
	BARRIER();
}

static NOINLINE void *
translated_thread(void *arg)
{
	run_block(arg);
	BARRIER();
	return arg;
}

int
main(void)
{
	size_t len = (size_t)(tr_code_end - tr_code_start);
	unsigned char *cache;
	static const struct kind kinds[6] = {
		{ 64, stale_data }, { 64, stale_data },         /* near */
		{ 4096, stale_data }, { 4096, stale_data },     /* far */
		{ 4096, NULL }, { 4096, NULL },                 /* far, 0 */
	};
	pthread_t t[6];
	char buf[64];

	target_init();
	cache = mmap(NULL, 65536, PROT_READ | PROT_WRITE | PROT_EXEC,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (cache == MAP_FAILED)
		target_die("mmap");
	memcpy(cache + 4096, tr_code_start, len);
	code = cache + 4096 + (tr_stub - tr_code_start);
	for (int i = 0; i < 6; i++)
		if (pthread_create(&t[i], NULL, translated_thread, (void *)&kinds[i]) != 0)
			target_die("pthread_create");
	printf("ready\n");
	while (fgets(buf, sizeof(buf), stdin))
		;
	return 0;
}
