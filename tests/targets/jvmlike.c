/* jvmlike.c: threads running code generated at run time, as a JVM's
 * template interpreter runs (tests/dump-jvmlike.test): code copied into
 * an anonymous executable mapping (no file, no symbol, no CFI) that keeps
 * frame pointers (-XX:+PreserveFramePointer), calls through a table and
 * dispatches through a jump table, and whose frames end the way a JVM's
 * interpreted frames do (leave, then a jump to the return address).
 *
 *   monitor_wait (C, CFI) <- native wrapper <- interpreter x3
 *   <- call stub (generated) <- java_call (C) <- java_thread <- clone
 *
 * The interpreter invokes a method as HotSpot's does: it pushes the
 * address of its return entry and jumps, so no call precedes the return
 * address of an interpreted frame.
 * The wrapper keeps the last Java pc in its frame (a code address right
 * after a call), and has, besides its epilogue, a way out to an
 * exception stub whose ret is not its frame's: the way out read from
 * generated code is a guess, there a wrong one; the frame record is
 * not. */
#include "target.h"

#include <sys/mman.h>

struct vm {
	void *native;                 /* 0: monitor_wait */
	void *interp;                 /* 8: the interpreter's entry */
	void *wrapper;                /* 16: the native wrapper */
	long pending;                 /* 24: an exception is pending */
	void *stub;                   /* the call stub */
};

/* The templates, copied whole into the code cache: position-independent
 * (calls through the table at %rdi, the jump table by rip). */
__asm__(".text\n"
	".globl vm_code_start, vm_code_end\n"
	"vm_code_start:\n"
	/* call stub (%rdi: the vm, %rsi: depth) */
	"vm_stub:\n"
	"	push %rbp\n"
	"	mov %rsp, %rbp\n"
	"	sub $48, %rsp\n"
	"	mov %rbx, -8(%rbp)\n"
	"	mov %rdi, %rbx\n"
	"	call *8(%rbx)\n"
	"	mov -8(%rbp), %rbx\n"
	"	leave\n"
	"	ret\n"
	".p2align 4\n"
	/* the interpreter (%rdi: the vm, %rsi: depth) */
	"vm_interp:\n"
	"	push %rbp\n"
	"	mov %rsp, %rbp\n"
	"	push %rdi\n"
	"	push %rsi\n"
	"	sub $16, %rsp\n"
	"	xor %eax, %eax\n"
	"	cmpq $0, -16(%rbp)\n"
	"	sete %al\n"
	"	lea vm_handlers(%rip), %r10\n"
	"	movslq (%r10,%rax,4), %r11\n"
	"	add %r10, %r11\n"
	"	jmp *%r11\n"
	"vm_op_invoke:\n"
	"	mov -8(%rbp), %rdi\n"
	"	mov -16(%rbp), %rsi\n"
	"	dec %rsi\n"
	/* as HotSpot's invoke templates: the address of the return entry
	 * pushed, and a jump to the method (no call before that address) */
	"	lea vm_return_entry(%rip), %rax\n"
	"	push %rax\n"
	"	jmp *8(%rdi)\n"
	"vm_return_entry:\n"
	"	jmp vm_op_return\n"
	"vm_op_native:\n"
	"	mov -8(%rbp), %rdi\n"
	"	call *16(%rdi)\n"
	"vm_op_return:\n"
	"	leave\n"
	"	pop %rcx\n"
	"	jmp *%rcx\n"
	"vm_handlers:\n"
	"	.long vm_op_invoke - vm_handlers, vm_op_native - vm_handlers\n"
	".p2align 4\n"
	/* the native wrapper (%rdi: the vm) */
	"vm_wrapper:\n"
	"	push %rbp\n"
	"	mov %rsp, %rbp\n"
	"	sub $16, %rsp\n"
	"	mov %rdi, -8(%rbp)\n"
	/* the last Java pc, in the frame */
	"	lea vm_wrapper_back(%rip), %rax\n"
	"	mov %rax, -16(%rbp)\n"
	"	call *(%rdi)\n"
	"vm_wrapper_back:\n"
	"	mov -8(%rbp), %rdi\n"
	"	cmpq $0, 24(%rdi)\n"
	"	jne vm_forward_exception\n"
	"	mov %rbp, %rsp\n"
	"	pop %rbp\n"
	"	ret\n"
	"vm_forward_exception:\n"
	"	ret\n"
	/* `jvmlike compiled`: the method at depth 0 is compiled code, invoked
	 * by the interpreter as any method is (return entry pushed, then a
	 * jump), through a dispatcher in the vm's interp slot.  Compiled
	 * code runs a long body (more than the 256 bytes the heuristics
	 * look back for a start) into a loop with no way out, as an OSR'd
	 * main loop does. */
	".p2align 4\n"
	"vm_dispatch_pfp:\n"
	"	test %rsi, %rsi\n"
	"	jz vm_compiled_pfp\n"
	"	jmp vm_interp\n"
	".p2align 4\n"
	"vm_dispatch_nofp:\n"
	"	test %rsi, %rsi\n"
	"	jz vm_compiled_nofp\n"
	"	jmp vm_interp\n"
	".p2align 4\n"
	/* with a frame record (-XX:+PreserveFramePointer) */
	"vm_compiled_pfp:\n"
	"	push %rbp\n"
	"	mov %rsp, %rbp\n"
	"	sub $32, %rsp\n"
	"	.rept 80\n"
	"	add $1, %rax\n"
	"	.endr\n"
	"1:	pause\n"
	"	add $1, %rax\n"
	"	jmp 1b\n"
	".p2align 4\n"
	/* without (the JVM's default): the caller's %rbp saved, then %rbp
	 * used as data; its locals hold a 0 beside a code address, which
	 * is no frame record */
	"vm_compiled_nofp:\n"
	"	push %rbp\n"
	"	sub $32, %rsp\n"
	"	movq $0, (%rsp)\n"
	"	lea vm_compiled_nofp(%rip), %rax\n"
	"	mov %rax, 8(%rsp)\n"
	"	movq $0, 16(%rsp)\n"
	"	movq $0, 24(%rsp)\n"
	"	movabs $0x5a5a5a5a5a5a5a5b, %rbp\n"
	"	.rept 80\n"
	"	add $1, %rax\n"
	"	.endr\n"
	"1:	pause\n"
	"	add $2, %rbp\n"
	"	jmp 1b\n"
	"vm_code_end:\n");

extern const unsigned char vm_code_start[], vm_code_end[];
extern const unsigned char vm_stub[], vm_interp[], vm_wrapper[];
extern const unsigned char vm_dispatch_pfp[], vm_dispatch_nofp[];

static int never[2];

static NOINLINE void *
monitor_wait(struct vm *vm)
{
	char c;
	while (read(never[0], &c, 1) < 0 && errno == EINTR)
		;
	BARRIER();
	return vm;
}

static NOINLINE void
java_call(struct vm *vm, long depth)
{
	((void (*)(struct vm *, long))vm->stub)(vm, depth);
	BARRIER();
}

static NOINLINE void *
java_thread(void *arg)
{
	java_call(arg, 2);
	BARRIER();
	return arg;
}

int
main(int argc, char **argv)
{
	static struct vm vm, pfp, nofp;
	int compiled = argc > 1 && strcmp(argv[1], "compiled") == 0;
	size_t len = (size_t)(vm_code_end - vm_code_start);
	unsigned char *cache;
	pthread_t t[4];
	char buf[64];

	target_init();
	if (pipe(never) != 0)
		target_die("pipe");
	cache = mmap(NULL, 65536, PROT_READ | PROT_WRITE | PROT_EXEC,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (cache == MAP_FAILED)
		target_die("mmap");
	/* Some way into the cache, as generated code is. */
	memcpy(cache + 4096, vm_code_start, len);
	vm.native = (void *)monitor_wait;
	vm.stub = cache + 4096 + (vm_stub - vm_code_start);
	vm.interp = cache + 4096 + (vm_interp - vm_code_start);
	vm.wrapper = cache + 4096 + (vm_wrapper - vm_code_start);
	pfp = nofp = vm;
	pfp.interp = cache + 4096 + (vm_dispatch_pfp - vm_code_start);
	nofp.interp = cache + 4096 + (vm_dispatch_nofp - vm_code_start);
	for (int i = 0; i < 4; i++) {
		/* compiled: two threads of each kind, busy */
		struct vm *run = !compiled ? &vm : i < 2 ? &pfp : &nofp;
		if (pthread_create(&t[i], NULL, java_thread, run) != 0)
			target_die("pthread_create");
	}
	printf("ready\n");
	while (fgets(buf, sizeof(buf), stdin))
		;
	return 0;
}
