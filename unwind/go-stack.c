/* unwind/go-stack.c - Go's switch from a goroutine's stack to the thread's
 * system stack (g0) for a call of C (cgo), walked back.
 *
 * runtime.asmcgocall (asm_amd64.s) saves, on g0's stack below the call of
 * the C function, the goroutine's g at 48(SP) and how deep the goroutine's
 * stack was at its entry at 40(SP) (g.stack.hi minus its SP: the stack
 * may move while C runs a callback), or, when it was on a system stack
 * already, that SP itself at 40(SP).  Its CFI knows nothing of the switch
 * and walks on up g0's stack, through words of calls that returned long
 * ago (runtime.park_m, then "implausible frame").  Where the C function
 * returns to it, the caller is instead the return address at the
 * goroutine's SP, into runtime.cgocall, and the walk goes on on the
 * goroutine's stack to the goroutine's start, as Go's own tracebacks do.
 *
 * The place is told by its code, right after the call, in a Go binary
 * (one with .gopclntab) only, and stepped on x86-64 only; g and the depth
 * are the target's words, and every one is checked before it is used. */
#include "config.h"

#include <elf.h>
#include <string.h>

#include "arch/arch.h"
#include "unwind/cfi.h"
#include "unwind/elf-image.h"
#include "unwind/engines.h"
#include "unwind/maps.h"
#include "unwind/memory.h"
#include "unwind/target.h"

/* After `call *%rax`: the switched form reloads g and the depth
 * (mov 0x30(%rsp),%rdi; mov 0x8(%rdi),%rsi; sub 0x28(%rsp),%rsi); the
 * form already on a system stack reloads the SP it saved
 * (mov 0x28(%rsp),%rsi; mov %rsi,%rsp).  Go 1.5 to 1.22 write these. */
static const unsigned char switched_code[] = {
	0x48, 0x8b, 0x7c, 0x24, 0x30, 0x48, 0x8b, 0x77, 0x08, 0x48, 0x2b, 0x74, 0x24, 0x28,
};
static const unsigned char unswitched_code[] = {
	0x48, 0x8b, 0x74, 0x24, 0x28, 0x48, 0x89, 0xf4,
};

/* A goroutine's stack is never deeper than this (Go's default maximum is
 * 1 GB on 64-bit). */
#define GO_STACK_MAX (UINT64_C(1) << 30)

int
unwind_go_cgo_return(struct mapping *m, uint64_t vaddr)
{
	/* A Go binary's (asked once per mapping: its section headers). */
	if (m->go == 0) {
		Elf64_Shdr sh;
		m->go = m->image && unwind_elf_find_section(m->image->data, m->image->size,
							   ".gopclntab", &sh) ? 1 : 2;
	}
	if (m->go != 1)
		return 0;
	const unsigned char *c = unwind_cfi_image_at(m->image, vaddr, sizeof(switched_code), NULL);
	if (c && memcmp(c, switched_code, sizeof(switched_code)) == 0)
		return GO_CGO_SWITCHED;
	c = unwind_cfi_image_at(m->image, vaddr, sizeof(unswitched_code), NULL);
	if (c && memcmp(c, unswitched_code, sizeof(unswitched_code)) == 0)
		return GO_CGO_UNSWITCHED;
	return 0;
}

static bool
word(struct memory_reader *mr, uint64_t addr, uint64_t *v)
{
	return addr + 8 > addr && unwind_memory_read(mr, addr, v, 8) == 0;
}

int
unwind_go_cgo_step(struct unwind_target *t, struct memory_reader *mr, struct arch_regs *regs,
		   int kind)
{
	const struct arch *a = unwind_target_arch(t);
	uint64_t sp = regs->r[a->reg_sp], gsp, g, hi, depth, ra;

	if (a->e_machine != EM_X86_64 || a->word_size != 8 || a->big_endian)
		return 0;
	if (kind == GO_CGO_SWITCHED) {
		if (!word(mr, sp + 48, &g) || !word(mr, sp + 40, &depth) || !word(mr, g + 8, &hi) ||
		    depth > GO_STACK_MAX || depth > hi)
			return 0;
		gsp = hi - depth;
	} else if (kind == GO_CGO_UNSWITCHED) {
		if (!word(mr, sp + 40, &gsp))
			return 0;
	} else {
		return 0;
	}
	/* The goroutine's SP at asmcgocall's entry: its return address, in
	 * a stack of the target, into code. */
	const struct mapping *stack = unwind_module_map_find(&t->maps, gsp);
	if ((gsp & 7) != 0 || !stack || gsp + 8 > stack->end || !word(mr, gsp, &ra))
		return 0;
	const struct mapping *code = ra ? unwind_target_mapping(t, ra - 1) : NULL;
	if (!code || !(code->perms & MAPPING_X))
		return 0;
	regs->r[a->reg_ip] = ra;
	regs->r[a->reg_sp] = gsp + 8;
	return 1;
}
