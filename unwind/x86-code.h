/* unwind/x86-code.h - the x86-64 instruction decoder of the heuristics
 * (engine-x86.c) and the reach of a function without a size (symtab.c).
 * Defined in unwind/x86-code.c.
 *
 * Private to unwind/ (and its unit tests and tests/fuzz/fuzz-cfi.c); pure
 * code over bytes, it calls nothing of unwind/.
 */
#ifndef STACKSPY_UNWIND_X86_CODE_H
#define STACKSPY_UNWIND_X86_CODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What one instruction does to the stack pointer and the frame. */
enum insn_kind {
	INSN_OTHER,               /* nothing to %rsp or %rbp */
	INSN_PUSH,                /* %rsp -= 8 (push %reg, $imm, r/m) */
	INSN_PUSH_RBP,
	INSN_POP,                 /* %rsp += 8 */
	INSN_POP_RBP,
	INSN_RSP_ADD,             /* %rsp += val (add, sub, lea d(%rsp),%rsp) */
	INSN_RBP_FROM_RSP,        /* %rbp = %rsp + val (mov, lea) */
	INSN_RBP_STORE,           /* mov %rbp,val(%rsp) */
	INSN_RSP_FROM_RBP,        /* mov %rbp,%rsp */
	INSN_LEAVE,
	INSN_RSP_UNKNOWN,         /* %rsp set some other way (and $-16, mov) */
	INSN_RET,
	INSN_JMP,                 /* unconditional; val: the target, 0 if indirect */
	INSN_JCC,                 /* conditional; val: the target */
	INSN_CALL,
};

struct insn {
	size_t len;
	enum insn_kind kind;
	int64_t val;
	bool prologue;            /* what prologues are made of (for the
				     body's depth): register pushes, sub of
				     %rsp, frame set-up, moves, endbr */
};


/* Decode the instruction at code (end: how far bytes are known), at
 * address addr, into *in.  false for what is not decoded (x86-code.c). */
bool unwind_x86_decode(const unsigned char *code, const unsigned char *end, uint64_t addr,
		struct insn *in);

/* How far the x86-64 code of a function without a size reaches from its
 * start (code: avail bytes at address start, its symbol reaching reach
 * bytes at most): the end of what its branches reach, as an offset, or 0
 * when not known.  Pure code (symtab.c bounds a size-0 symbol so). */
uint64_t unwind_x86_code_reach(const unsigned char *code, size_t avail, uint64_t reach,
			uint64_t start);
/* The length of the instruction at code[0, len) (at address addr) as the
 * heuristics decode it, or 0 when they do not (tests/fuzz/fuzz-cfi.c). */
size_t unwind_x86_insn_len(const unsigned char *code, size_t len, uint64_t addr);

#endif
