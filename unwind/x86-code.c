/* unwind/x86-code.c - the x86-64 instruction decoder: one instruction's
 * length and what it does to %rsp and %rbp (unwind_x86_decode, for the
 * heuristics of engine-x86.c), and how far the code of a function
 * without a size reaches (unwind_x86_code_reach, for symtab.c, which bounds
 * such a symbol by it).  Pure code over bytes: below the symbols and the
 * engines alike (symtab.c called it in engine-x86.c, which looks up
 * symbols: the two called each other). */
#include "config.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "unwind/x86-code.h"

/* The length of the ModRM operand at m (ModRM, SIB, displacement), or 0
 * past end. */
static size_t
modrm_len(const unsigned char *m, const unsigned char *end)
{
	size_t n = 1;
	unsigned mod, rm;

	if (m >= end)
		return 0;
	mod = m[0] >> 6;
	rm = m[0] & 7;
	if (mod == 3)
		return 1;
	if (rm == 4) {
		if (m + 1 >= end)
			return 0;
		n++;
		if (mod == 0 && (m[1] & 7) == 5)
			n += 4;
	} else if (mod == 0 && rm == 5) {
		n += 4;         /* rip-relative */
	}
	if (mod == 1)
		n += 1;
	else if (mod == 2)
		n += 4;
	return n;
}

/* One-byte opcodes with a ModRM operand, and the immediate they take. */
static int
modrm_opcode(unsigned op, unsigned reg, bool opsize16, size_t *imm)
{
	*imm = 0;
	if (op < 0x40 && (op & 7) < 4)
		return 1;               /* add/or/adc/sbb/and/sub/xor/cmp r/m */
	switch (op) {
	case 0x63: case 0x84: case 0x85: case 0x86: case 0x87:
	case 0x88: case 0x89: case 0x8a: case 0x8b: case 0x8d:
	case 0xd0: case 0xd1: case 0xd2: case 0xd3: case 0xfe: case 0xff:
		return 1;
	case 0x6b: case 0x80: case 0x83: case 0xc0: case 0xc1: case 0xc6:
		*imm = 1;
		return 1;
	case 0x69: case 0x81: case 0xc7:
		*imm = opsize16 ? 2 : 4;
		return 1;
	case 0xf6:
		*imm = reg < 2 ? 1 : 0;
		return 1;
	case 0xf7:
		*imm = reg < 2 ? (opsize16 ? 2 : 4) : 0;
		return 1;
	}
	return 0;
}

/* Two-byte (0f xx) opcodes with a ModRM operand. */
static bool
modrm_opcode_0f(unsigned op)
{
	return op == 0x1e || op == 0x1f || (op >= 0x10 && op <= 0x17) ||
	       (op >= 0x28 && op <= 0x2f) || (op >= 0x40 && op <= 0x4f) ||
	       (op >= 0x50 && op <= 0x7f) || (op >= 0x90 && op <= 0x9f) ||
	       op == 0xa3 || op == 0xab || op == 0xaf || op == 0xb0 || op == 0xb1 ||
	       op == 0xb3 || op == 0xb6 || op == 0xb7 || op == 0xbb || op == 0xbc ||
	       op == 0xbd || op == 0xbe || op == 0xbf || op == 0xc0 || op == 0xc1 ||
	       (op >= 0xd0 && op <= 0xff);
}

static int64_t
disp_of(const unsigned char *m, unsigned mod, size_t at)
{
	if (mod == 1)
		return (int8_t)m[at];
	int32_t d;
	memcpy(&d, m + at, 4);
	return d;
}

/* An x86 instruction is at most 15 bytes (Intel SDM 2.3.11): prefixes
 * beyond that fault on the CPU. */
#define INSN_MAX 15

/* The prefixes at x, leaving room for the opcode: how many.  *o16 when
 * one of them is 0x66 (16-bit operands). */
static size_t
skip_prefixes(const unsigned char *x, bool *o16)
{
	size_t k = 0;

	while (k < INSN_MAX - 1 &&
	       (x[k] == 0x66 || x[k] == 0xf2 || x[k] == 0xf3 || x[k] == 0xf0 ||
		x[k] == 0x2e || x[k] == 0x3e || x[k] == 0x26 || x[k] == 0x36 ||
		x[k] == 0x64 || x[k] == 0x65)) {
		*o16 |= x[k] == 0x66;
		k++;
	}
	return k;
}

/* A two-byte opcode 0f xx, xx at m[0] (k: the bytes before it, prefixes
 * and REX; known_end: the end of the bytes known, in the zero-padded
 * copy), at address addr.  Returns false for what is not decoded. */
static bool
decode_0f(const unsigned char *m, const unsigned char *known_end, size_t k, uint64_t addr,
	  struct insn *in)
{
	unsigned op2 = m[0];
	if (op2 == 0x05 || op2 == 0x0b || op2 == 0xa2 || op2 == 0x31) {
		in->len = k + 2;
	} else if (op2 >= 0x80 && op2 <= 0x8f) {
		in->len = k + 6;
		in->kind = INSN_JCC;
		in->val = (int64_t)(addr + in->len) + disp_of(m + 1, 2, 0);
	} else if (modrm_opcode_0f(op2)) {
		size_t ml = modrm_len(m + 1, known_end);
		if (!ml)
			return false;
		in->len = k + 2 + ml + (op2 == 0x70 || op2 == 0xc2 || op2 == 0xc6 ||
					(op2 >= 0x71 && op2 <= 0x73) || op2 == 0xa4 ||
					op2 == 0xac || op2 == 0xba ? 1 : 0);
		in->prologue = op2 == 0x1e || op2 == 0x1f;
	} else {
		return false;
	}
	return true;
}

/* A VEX- (c5: two bytes, c4: three) or EVEX-coded (62: four bytes)
 * instruction at x + k: AVX and AVX-512, what x264's and x265's assembly
 * is made of (without it the way out of such a leaf was not found, and
 * its frame pointer register, 0 there as data, ended the stack: ffmpeg
 * with libx264, tests/dump-asmleaf.test).  In 64-bit code these bytes
 * are never the old LES, LDS or BOUND.  Nothing of it moves %rsp or
 * %rbp as the heuristics follow them.  Its length: the prefix, the
 * opcode, the ModRM operand, and an imm8 where the opcode map has one
 * (0f3a always; 0f for the shuffles, shifts by immediate, compares,
 * pinsrw and pextrw).  known_end: as for decode_0f. */
static bool
decode_vex(const unsigned char *x, const unsigned char *known_end, size_t k, struct insn *in)
{
	unsigned map;
	size_t p;

	if (x[k] == 0xc5) {
		map = 1;
		p = 2;
	} else if (x[k] == 0xc4) {
		map = x[k + 1] & 0x1f;
		p = 3;
	} else {
		/* EVEX: P0's bit 3 is 0 and P1's bit 2 is 1, else it is not
		 * one (or one of a later extension, not decoded). */
		if ((x[k + 1] & 0x08) || !(x[k + 2] & 0x04))
			return false;
		map = x[k + 1] & 0x07;
		p = 4;
		if (map == 4 || map == 7 || map == 0)
			return false;
	}
	if (map < 1 || (x[k] != 0x62 && map > 3))
		return false;
	unsigned op = x[k + p];
	if (x[k] != 0x62 && map == 1 && op == 0x77) {
		in->len = k + p + 1;            /* vzeroupper, vzeroall */
		return true;
	}
	size_t ml = modrm_len(x + k + p + 1, known_end);
	if (!ml)
		return false;
	bool imm = map == 3 || (map == 1 && ((op >= 0x70 && op <= 0x73) || op == 0xc2 ||
					     op == 0xc4 || op == 0xc5 || op == 0xc6));
	in->len = k + p + 1 + ml + (imm ? 1 : 0);
	return true;
}

/* What a one-byte opcode op with a ModRM operand at m (REX prefix rex)
 * does to %rsp and %rbp, for engine-x86.c's heuristics, and whether it
 * is one a prologue holds. */
static void
modrm_effect(unsigned op, const unsigned char *m, unsigned rex, struct insn *in)
{
	bool w = rex & 8;
	unsigned reg = (m[0] >> 3) & 7, rm = m[0] & 7, mod = m[0] >> 6;
	bool rm_is_rsp = mod == 3 && rm == 4 && !(rex & 1);
	bool reg_is_rsp = reg == 4 && !(rex & 4);
	bool sib_rsp = rm == 4 && mod != 3 && (m[1] & 7) == 4 && !(rex & 1);

	if (w && (op == 0x83 || op == 0x81) && rm_is_rsp) {
		int64_t v = op == 0x83 ? (int8_t)m[1] : disp_of(m, 2, 1);
		if (reg == 5) {
			in->kind = INSN_RSP_ADD;        /* sub $v,%rsp */
			in->val = -v;
			in->prologue = true;
		} else if (reg == 0) {
			in->kind = INSN_RSP_ADD;        /* add $v,%rsp */
			in->val = v;
		} else {
			in->kind = INSN_RSP_UNKNOWN;    /* and $-16,%rsp */
		}
	} else if (w && ((op == 0x89 && reg_is_rsp && mod == 3 && rm == 5 && !(rex & 1)) ||
			 (op == 0x8b && mod == 3 && reg == 5 && !(rex & 4) && rm_is_rsp))) {
		in->kind = INSN_RBP_FROM_RSP;           /* mov %rsp,%rbp */
		in->prologue = true;
	} else if (w && ((op == 0x89 && rm_is_rsp && reg == 5 && !(rex & 4)) ||
			 (op == 0x8b && reg_is_rsp && mod == 3 && rm == 5 && !(rex & 1)))) {
		in->kind = INSN_RSP_FROM_RBP;           /* mov %rbp,%rsp */
	} else if (w && op == 0x89 && reg == 5 && !(rex & 4) && sib_rsp &&
		   (mod == 1 || mod == 2)) {
		in->kind = INSN_RBP_STORE;              /* mov %rbp,d(%rsp) */
		in->val = disp_of(m, mod, 2);
		in->prologue = true;
	} else if (w && op == 0x8d && reg == 5 && !(rex & 4) && sib_rsp &&
		   (mod == 1 || mod == 2)) {
		in->kind = INSN_RBP_FROM_RSP;           /* lea d(%rsp),%rbp */
		in->val = disp_of(m, mod, 2);
		in->prologue = true;
	} else if (op == 0x8d && reg_is_rsp && sib_rsp && (mod == 1 || mod == 2)) {
		in->kind = INSN_RSP_ADD;                /* lea d(%rsp),%rsp */
		in->val = disp_of(m, mod, 2);
	} else if ((op == 0x89 && rm_is_rsp) || ((op == 0x8b || op == 0x8d) && reg_is_rsp) ||
		   (op < 0x40 && (op & 7) == 1 && rm_is_rsp) ||
		   (op < 0x40 && (op & 7) == 3 && reg_is_rsp && (op & 0x38) != 0x38)) {
		in->kind = INSN_RSP_UNKNOWN;            /* %rsp from elsewhere */
	} else if (op == 0xff && reg == 6) {
		in->kind = INSN_PUSH;                   /* push r/m */
	} else if (op == 0xff && (reg == 4 || reg == 5)) {
		in->kind = INSN_JMP;                    /* jmp *r/m */
	} else if (op == 0xff && (reg == 2 || reg == 3)) {
		in->kind = INSN_CALL;                   /* call *r/m */
	}
	in->prologue = in->prologue || ((op == 0x89 || op == 0x8b) && mod == 3) ||
		       (op == 0x89 && sib_rsp);
}

/* Decode the instruction at code (end: how far bytes are known), at
 * address addr.  Returns false for what is not decoded.  The bytes are
 * the target's: the decoder reads a zero-padded copy of at most
 * INSN_MAX of them, longer than any offset it reads at (prefixes,
 * REX, opcode, ModRM, SIB, 4-byte displacement, 4-byte immediate: 15 +
 * 9), so no input reads past it (issue 32: 60 prefixes then 48 81 c4
 * read 4 bytes past the buffer of scan_epilogue_forward); an
 * instruction that does not end within what is known is not decoded.
 * tests/fuzz/fuzz-cfi.c. */
bool
unwind_x86_decode(const unsigned char *code, const unsigned char *end, uint64_t addr,
		  struct insn *in)
{
	unsigned char x[INSN_MAX + 17];
	size_t known = (size_t)(end - code) < INSN_MAX ? (size_t)(end - code) : INSN_MAX;
	bool o16 = false;
	unsigned rex = 0;
	size_t k, imm = 0;

	memset(in, 0, sizeof(*in));
	memset(x, 0, sizeof(x));
	memcpy(x, code, known);
	k = skip_prefixes(x, &o16);
	if (k + 1 > known)
		return false;
	if (x[k] == 0xc4 || x[k] == 0xc5 || x[k] == 0x62)
		return decode_vex(x, x + known, k, in) && in->len <= known;
	if ((x[k] & 0xf0) == 0x40)
		rex = x[k++];
	unsigned op = x[k];
	bool w = rex & 8;
	const unsigned char *m = x + k + 1;
	unsigned reg = (m[0] >> 3) & 7;

	if (op >= 0x50 && op <= 0x57) {
		in->len = k + 1;
		in->kind = op == 0x55 && !(rex & 1) ? INSN_PUSH_RBP : INSN_PUSH;
		in->prologue = true;
	} else if (op >= 0x58 && op <= 0x5f) {
		in->len = k + 1;
		in->kind = op == 0x5d && !(rex & 1) ? INSN_POP_RBP :
			   op == 0x5c && !(rex & 1) ? INSN_RSP_UNKNOWN : INSN_POP;
	} else if (op == 0x6a || op == 0x68) {
		in->len = k + 1 + (op == 0x6a ? 1 : 4);
		in->kind = INSN_PUSH;
	} else if (op == 0xc9) {
		in->len = k + 1;
		in->kind = INSN_LEAVE;
	} else if (op == 0xc3 || op == 0xc2) {
		in->len = k + 1 + (op == 0xc2 ? 2 : 0);
		in->kind = INSN_RET;
	} else if (op == 0xe9 || op == 0xeb || op == 0xe8) {
		int64_t d = op == 0xeb ? (int8_t)m[0] : disp_of(m, 2, 0);
		in->len = k + 1 + (op == 0xeb ? 1 : 4);
		in->kind = op == 0xe8 ? INSN_CALL : INSN_JMP;
		in->val = (int64_t)(addr + in->len) + d;
	} else if (op >= 0x70 && op <= 0x7f) {
		in->len = k + 2;
		in->kind = INSN_JCC;
		in->val = (int64_t)(addr + in->len) + (int8_t)m[0];
	} else if (op == 0xa8) {
		in->len = k + 2;
	} else if (op == 0xa9 || (op < 0x40 && (op & 7) == 5)) {
		in->len = k + 1 + (o16 ? 2 : 4);
	} else if (op < 0x40 && (op & 7) == 4) {
		in->len = k + 2;
	} else if (op == 0x90 || op == 0x98 || op == 0x99 || op == 0xcc || op == 0xf4) {
		in->len = k + 1;
		in->prologue = op == 0x90;
	} else if (op >= 0xb0 && op <= 0xb7) {
		in->len = k + 2;
	} else if (op >= 0xb8 && op <= 0xbf) {
		in->len = k + 1 + (w ? 8 : o16 ? 2 : 4);
		in->prologue = true;
	} else if (op == 0x0f) {
		if (!decode_0f(m, x + known, k, addr, in))
			return false;
	} else if (modrm_opcode(op, reg, o16, &imm)) {
		size_t ml = modrm_len(m, x + known);
		if (!ml)
			return false;
		in->len = k + 1 + ml + imm;
		modrm_effect(op, m, rex, in);
	} else {
		return false;
	}
	return in->len <= known;
}

size_t
unwind_x86_insn_len(const unsigned char *code, size_t len, uint64_t addr)
{
	struct insn in;
	return unwind_x86_decode(code, code + len, addr, &in) ? in.len : 0;
}

/* The code a function without a size reaches from its start: every way
 * along its branches (a conditional jump both ways, a direct jump within
 * reach followed, a call stepped over) up to a ret, a jump out of reach
 * (a tail call) or hlt.  The bytes of code are at code, avail of them
 * from start; reach: how far the symbol may reach (up to the next
 * symbol), avail no less.  Returns the
 * end reached, as an offset from start, or 0 when it is not known (an
 * instruction not decoded, an indirect jump, out of paths or steps):
 * then the symbol keeps its reach. */
#define REACH_PATHS 64
#define REACH_INSNS 8192
uint64_t
unwind_x86_code_reach(const unsigned char *code, size_t avail, uint64_t reach, uint64_t start)
{
	uint64_t todo[REACH_PATHS], seen[REACH_PATHS * 2], end = 0;
	size_t ntodo = 0, nseen = 0;
	unsigned insns = 0;

	todo[ntodo++] = 0;
	while (ntodo) {
		uint64_t at = todo[--ntodo];
		for (;;) {
			struct insn in;
			if (at >= reach || ++insns > REACH_INSNS)
				return 0;
			size_t k = 0;
			/* String instructions (rep stos, movs ...), which the
			 * prologue's decoder has no need of. */
			while (at + k < avail && k < 4 &&
			       (code[at + k] == 0xf3 || code[at + k] == 0xf2 || code[at + k] == 0x66 ||
				(code[at + k] & 0xf0) == 0x40))
				k++;
			if (at + k < avail && code[at + k] >= 0xa4 && code[at + k] <= 0xaf &&
			    code[at + k] != 0xa8 && code[at + k] != 0xa9) {
				memset(&in, 0, sizeof(in));
				in.len = k + 1;
			} else if (!unwind_x86_decode(code + at, code + avail, start + at, &in) ||
				   in.len == 0) {
				return 0;
			}
			uint64_t next = at + in.len;
			if (next > end)
				end = next;
			if (in.kind == INSN_RET || code[at] == 0xf4)
				break;
			if (in.kind == INSN_JMP || in.kind == INSN_JCC) {
				if (in.val == 0)
					return 0;       /* jmp *r/m: a table we cannot see */
				uint64_t to = (uint64_t)in.val - start;
				bool inside = (uint64_t)in.val >= start && to < reach;
				bool known = !inside;
				for (size_t j = 0; j < nseen && !known; j++)
					known = seen[j] == to;
				if (!known) {
					if (nseen == REACH_PATHS * 2 || ntodo == REACH_PATHS)
						return 0;
					seen[nseen++] = to;
					todo[ntodo++] = to;
				}
				if (in.kind == INSN_JMP)
					break;
			}
			at = next;
		}
	}
	return end;
}
