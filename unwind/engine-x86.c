/* unwind/engine-x86.c - x86-64 code without CFI: prologue analysis,
 * epilogue scan, and stack scanning, one step at a time (the auto engine
 * calls it where neither CFI nor, first, a plausible analysis is there).
 *
 * musl's libc (built without unwind tables), hand-written assembly, JIT
 * code and -fno-asynchronous-unwind-tables builds leave the CFI walk
 * stranded at their first frame.  From the function's start (its symbol)
 * the instructions up to the pc are decoded, as far as a prologue goes:
 * endbr64, push, sub $N,%rsp, mov %rsp,%rbp, and the register moves and
 * stores compilers interleave with them; what they did to %rsp gives the
 * canonical frame address, and the return address sits just below it.
 * A pc at a ret, or at the pops before one, is in an epilogue: the
 * return address is above those pops.  A pc outside executable memory
 * (a call through a NULL or garbage pointer) has not run a single
 * instruction of its "function": the return address is at [%rsp], as
 * gdb takes it.  Each candidate return address must point into
 * executable memory right after a call instruction; where the analysis
 * gives none, the stack is scanned upward for the first word that does
 * ("scan?": a guess, as Breakpad's "found by stack scanning").
 * tests/accuracy-builds.test, tests/dump-nullcall.test.
 */
#include "config.h"

#include <elf.h>
#include <errno.h>
#include <string.h>

#include "arch/arch.h"
#include "unwind/engines.h"
#include "unwind/maps.h"
#include "unwind/memory.h"
#include "unwind/symbols.h"
#include "unwind/target.h"
#include "unwind/unwind.h"

#define PROLOGUE_MAX   256      /* bytes of a prologue decoded at most */
#define FUNC_MAX       (1 << 20)/* a pc further from its symbol: not its function */
#define SCAN_WORDS     256      /* stack words scanned for a return address */

static bool
read_bytes(struct memory_reader *mr, uint64_t addr, void *buf, size_t n)
{
	return memory_read(mr, addr, buf, n) >= 0;
}

static bool
read_word(struct memory_reader *mr, uint64_t addr, uint64_t *v)
{
	return read_bytes(mr, addr, v, 8);
}

/* Is there a call instruction that ends at ra?  (call rel32; call through
 * a register, through memory at a register plus 0, 8 or 32 bits, through
 * a SIB, or rip-relative.) */
static bool
after_call(struct memory_reader *mr, uint64_t ra)
{
	unsigned char b[8];

	if (ra < 8 || !read_bytes(mr, ra - 8, b, 8))
		return false;
	/* b[8 - k] is the byte k before ra. */
	if (b[3] == 0xe8)                                       /* e8 rel32 */
		return true;
	if (b[6] == 0xff && (b[7] & 0xf8) == 0xd0)              /* ff /2, reg */
		return true;
	if (b[6] == 0xff && (b[7] & 0xf8) == 0x10 && b[7] != 0x14 && b[7] != 0x15)
		return true;                                    /* ff /2, (reg) */
	if (b[5] == 0xff && (b[6] & 0xf8) == 0x50 && b[6] != 0x54)
		return true;                                    /* disp8(reg) */
	if (b[5] == 0xff && b[6] == 0x14)                       /* (SIB) */
		return true;
	if (b[4] == 0xff && b[5] == 0x54)                       /* disp8(SIB) */
		return true;
	if (b[2] == 0xff && ((b[3] & 0xf8) == 0x90 || b[3] == 0x15) && b[3] != 0x94)
		return true;                                    /* disp32(reg), rip */
	if (b[1] == 0xff && b[2] == 0x94)                       /* disp32(SIB) */
		return true;
	return false;
}

/* Is the code at ra a signal return (arch->sigreturn: glibc's and musl's
 * __restore_rt), which the kernel makes a handler return to? */
static bool
restorer(struct unwind_target *t, struct memory_reader *mr, uint64_t ra)
{
	const struct arch_sigreturn *sr = unwind_target_arch(t)->sigreturn;
	unsigned char code[sizeof(sr->code)];

	return sr && sr->code_len <= sizeof(code) &&
	       read_bytes(mr, ra, code, sr->code_len) && memcmp(code, sr->code, sr->code_len) == 0;
}

/* A return address: in executable memory, right after a call, or the
 * signal return a handler goes back to (a handler stopped at its first
 * instructions, in code without CFI: busybox-static's). */
static bool
plausible_ra(struct unwind_target *t, struct memory_reader *mr, uint64_t ra)
{
	struct mapping *m;

	if (ra < 4096)
		return false;
	m = unwind_target_mapping(t, ra - 1);
	return m && (m->perms & MAPPING_X) && (after_call(mr, ra) || restorer(t, mr, ra));
}

/* What the instructions from a function's start to the pc did. */
struct prologue {
	bool ok;                  /* depth (or the rbp frame) is known */
	uint64_t depth;           /* bytes below the return address at pc */
	bool rbp_frame;           /* mov %rsp,%rbp done: CFA = %rbp + rbp_cfa */
	uint64_t rbp_cfa;
	bool rbp_saved;           /* push %rbp done: at CFA - rbp_slot */
	uint64_t rbp_slot;
};

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

/* Decode the instruction at code (end: how far bytes are known), at
 * address addr.  Returns false for what is not decoded.  The bytes are
 * the target's: the decoder reads a zero-padded copy of at most
 * INSN_MAX of them, longer than any offset it reads at (prefixes,
 * REX, opcode, ModRM, SIB, 4-byte displacement, 4-byte immediate: 15 +
 * 9), so no input reads past it (issue 32: 60 prefixes then 48 81 c4
 * read 4 bytes past the buffer of scan_epilogue_forward); an
 * instruction that does not end within what is known is not decoded.
 * tests/fuzz/fuzz-cfi.c. */
static bool
decode(const unsigned char *code, const unsigned char *end, uint64_t addr, struct insn *in)
{
	unsigned char x[INSN_MAX + 17];
	size_t known = (size_t)(end - code) < INSN_MAX ? (size_t)(end - code) : INSN_MAX;
	bool o16 = false;
	unsigned rex = 0;
	size_t k = 0, imm = 0;

	memset(in, 0, sizeof(*in));
	memset(x, 0, sizeof(x));
	memcpy(x, code, known);
	/* Prefixes, leaving room for the opcode. */
	while (k < INSN_MAX - 1 &&
	       (x[k] == 0x66 || x[k] == 0xf2 || x[k] == 0xf3 || x[k] == 0xf0 ||
		x[k] == 0x2e || x[k] == 0x3e || x[k] == 0x26 || x[k] == 0x36 ||
		x[k] == 0x64 || x[k] == 0x65)) {
		o16 |= x[k] == 0x66;
		k++;
	}
	if (k + 1 > known)
		return false;
	if ((x[k] & 0xf0) == 0x40)
		rex = x[k++];
	unsigned op = x[k];
	bool w = rex & 8;
	const unsigned char *m = x + k + 1;
	unsigned reg = (m[0] >> 3) & 7, rm = m[0] & 7, mod = m[0] >> 6;
	bool rm_is_rsp = mod == 3 && rm == 4 && !(rex & 1);
	bool reg_is_rsp = reg == 4 && !(rex & 4);
	bool sib_rsp = rm == 4 && mod != 3 && (m[1] & 7) == 4 && !(rex & 1);

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
		unsigned op2 = m[0];
		if (op2 == 0x05 || op2 == 0x0b || op2 == 0xa2 || op2 == 0x31) {
			in->len = k + 2;
		} else if (op2 >= 0x80 && op2 <= 0x8f) {
			in->len = k + 6;
			in->kind = INSN_JCC;
			in->val = (int64_t)(addr + in->len) + disp_of(m + 1, 2, 0);
		} else if (modrm_opcode_0f(op2)) {
			size_t ml = modrm_len(m + 1, x + known);
			if (!ml)
				return false;
			in->len = k + 2 + ml + (op2 == 0x70 || op2 == 0xc2 || op2 == 0xc6 ||
						(op2 >= 0x71 && op2 <= 0x73) || op2 == 0xa4 ||
						op2 == 0xac || op2 == 0xba ? 1 : 0);
			in->prologue = op2 == 0x1e || op2 == 0x1f;
		} else {
			return false;
		}
	} else if (modrm_opcode(op, reg, o16, &imm)) {
		size_t ml = modrm_len(m, x + known);
		if (!ml)
			return false;
		in->len = k + 1 + ml + imm;
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
	} else {
		return false;
	}
	return in->len <= known;
}

size_t
x86_insn_len(const unsigned char *code, size_t len, uint64_t addr)
{
	struct insn in;
	return decode(code, code + len, addr, &in) ? in.len : 0;
}

/* Decode [start, pc) linearly, following what each instruction does to
 * %rsp: pushes and pops, add/sub/lea of %rsp, the frame set-up of %rbp,
 * leave.  A ret or an unconditional jump ends a block: the next one
 * starts with the body's depth (what the prologue's pushes and sub
 * left).  An instruction that is not decoded, or that sets %rsp some
 * other way without an rbp frame, leaves the depth unknown (p->ok false). */
static void
scan_prologue(struct memory_reader *mr, uint64_t start, uint64_t pc, struct prologue *p)
{
	unsigned char c[PROLOGUE_MAX + 16];
	size_t len = pc - start < PROLOGUE_MAX ? (size_t)(pc - start) : PROLOGUE_MAX;
	uint64_t body = 0;
	bool body_rbp = false;
	size_t i = 0;

	memset(p, 0, sizeof(*p));
	if (pc - start > PROLOGUE_MAX)
		return;         /* too far in to follow the body */
	memset(c, 0x90, sizeof(c));
	if (len && !read_bytes(mr, start, c, len))
		return;
	p->ok = true;
	while (i < len) {
		struct insn in;

		if (!decode(c + i, c + sizeof(c), start + i, &in)) {
			p->ok = false;
			break;
		}
		switch (in.kind) {
		case INSN_PUSH_RBP:
			if (!p->rbp_saved) {
				p->rbp_saved = true;
				p->rbp_slot = 16 + p->depth;
			}
			/* fall through */
		case INSN_PUSH:
			p->depth += 8;
			break;
		case INSN_POP_RBP:
			p->rbp_frame = false;   /* %rbp is the caller's again */
			/* fall through */
		case INSN_POP:
			p->depth -= 8;
			break;
		case INSN_RSP_ADD:
			p->depth -= (uint64_t)in.val;
			break;
		case INSN_RBP_FROM_RSP:
			p->rbp_frame = true;
			p->rbp_cfa = 8 + p->depth - (uint64_t)in.val;
			break;
		case INSN_RBP_STORE:
			if (!p->rbp_saved) {
				p->rbp_saved = true;
				p->rbp_slot = 8 + p->depth - (uint64_t)in.val;
			}
			break;
		case INSN_RSP_FROM_RBP:
			if (p->rbp_frame)
				p->depth = p->rbp_cfa - 8;
			else
				p->ok = false;
			break;
		case INSN_LEAVE:
			if (!p->rbp_frame)
				p->ok = false;
			p->depth = p->rbp_cfa - 16;
			p->rbp_frame = false;
			break;
		case INSN_RSP_UNKNOWN:
			if (!p->rbp_frame)
				p->ok = false;
			break;
		case INSN_RET:
		case INSN_JMP:
			/* The end of a block: what follows is reached by a
			 * jump, with the body's depth. */
			p->depth = body;
			p->rbp_frame = body_rbp;
			break;
		default:
			break;
		}
		/* The body's depth: what pushes of registers, sub and the
		 * frame's set-up made it, wherever they are (Go checks its
		 * stack before its prologue). */
		if (in.prologue && p->depth > body)
			body = p->depth;
		body_rbp = body_rbp || p->rbp_frame;
		i += in.len;
	}
	if ((int64_t)p->depth < 0)
		p->ok = false;
}

/* Decode forward from pc to a ret that ends the function, along every
 * branch (a loop's exit may be a forward conditional jump, its back edge
 * an unconditional one), stepping over calls, adding up what the way there
 * pops.  Compiled code reaches each ret with the same depth.  pops_only:
 * the pc is in an epilogue, pops and then the ret, nothing else.  Returns
 * the bytes between %rsp and the return address, or -1; *rbp_at: where a
 * pop %rbp on the way reads it from (-1: none). */
#define FWD_PATHS 32
#define FWD_INSNS 400
static int64_t
scan_epilogue_forward(struct memory_reader *mr, uint64_t pc, bool pops_only, int64_t *rbp_at)
{
	struct { uint64_t at; int64_t up, rbp; } todo[FWD_PATHS];
	uint64_t seen[FWD_PATHS * 2];
	size_t ntodo = 0, nseen = 0;
	int insns = 0;

	todo[ntodo].at = pc;
	todo[ntodo].up = 0;
	todo[ntodo++].rbp = -1;
	while (ntodo && insns < FWD_INSNS) {
		uint64_t at = todo[--ntodo].at;
		int64_t up = todo[ntodo].up, rbp = todo[ntodo].rbp;
		bool dead = false;

		while (!dead && insns++ < FWD_INSNS) {
			unsigned char c[64];
			struct insn in;

			if (!read_bytes(mr, at, c, sizeof(c)) || !decode(c, c + sizeof(c), at, &in))
				break;
			if (pops_only && in.kind != INSN_RET && in.kind != INSN_POP &&
			    in.kind != INSN_POP_RBP)
				return -1;
			switch (in.kind) {
			case INSN_RET:
				*rbp_at = rbp;
				return up;
			case INSN_POP_RBP:
				rbp = up;
				/* fall through */
			case INSN_POP:
				up += 8;
				break;
			case INSN_PUSH:
			case INSN_PUSH_RBP:
				up -= 8;
				break;
			case INSN_RSP_ADD:
				up += in.val;
				break;
			case INSN_RBP_FROM_RSP:
			case INSN_RBP_STORE:
			case INSN_RSP_UNKNOWN:
			case INSN_RSP_FROM_RBP:
			case INSN_LEAVE:
				dead = true;    /* not a way out we can count */
				continue;
			case INSN_JMP:
			case INSN_JCC: {
				/* A target already walked is not walked again. */
				bool known = !in.val;
				for (size_t k = 0; k < nseen && !known; k++)
					known = seen[k] == (uint64_t)in.val;
				if (!known && nseen < FWD_PATHS * 2)
					seen[nseen++] = (uint64_t)in.val;
				if (in.kind == INSN_JMP) {
					if (known) {
						dead = true;
						continue;
					}
					at = (uint64_t)in.val;
					continue;
				}
				if (!known && ntodo < FWD_PATHS) {
					todo[ntodo].at = (uint64_t)in.val;
					todo[ntodo].up = up;
					todo[ntodo++].rbp = rbp;
				}
				break;
			}
			default:
				break;
			}
			at += in.len;
		}
	}
	return -1;
}

/* The start of the function that holds pc, from its symbol; a return
 * address (!exact) is looked up at pc - 1: after a noreturn call at the
 * end of a function it is already past it. */
static bool
func_start(const struct mapping *m, uint64_t pc, bool exact, uint64_t *start)
{
	uint64_t off = 0, at = exact ? pc : pc - 1;

	if (!m->image || !m->bias_known)
		return false;
	if (!elf_image_lookup(m->image, at - m->bias, UNWIND_SYM_NO_DEMANGLE, &off) ||
	    off >= FUNC_MAX)
		return false;
	*start = at - off;
	return true;
}

/* The caller's frame, if the return address below cfa is one: regs' pc
 * and sp become the caller's, and %rbp the one saved at rbp_at (0: not
 * saved, it is the caller's still).  Returns whether it was taken. */
static bool
take_frame(struct unwind_target *t, struct memory_reader *mr, struct arch_regs *regs,
	   uint64_t cfa, uint64_t rbp_at)
{
	const struct arch *a = unwind_target_arch(t);
	uint64_t ra, rbp;

	if (!read_word(mr, cfa - 8, &ra) || !plausible_ra(t, mr, ra))
		return false;
	if (rbp_at && read_word(mr, rbp_at, &rbp))
		regs->r[a->reg_fp] = rbp;
	regs->r[a->reg_ip] = ra;
	regs->r[a->reg_sp] = cfa;
	return true;
}

/* Does the instruction before ra, a return address, call start, or is
 * it an indirect call (which cannot say)? */
static bool
call_reaches(struct memory_reader *mr, uint64_t ra, uint64_t start)
{
	unsigned char b[5];
	int32_t d;

	if (ra < 5 || !read_bytes(mr, ra - 5, b, 5) || b[0] != 0xe8)
		return true;
	memcpy(&d, b + 1, 4);
	return ra + (uint64_t)(int64_t)d == start;
}

/* Is the code that ends at c + at (c: the bytes before the pc, from
 * address base) the end of a function: a ret, a jump, hlt, int3 or nop
 * padding?  Then c + at may be where the next function starts. */
static bool
ends_function(const unsigned char *c, size_t at)
{
	unsigned char x = c[at - 1];
	return x == 0xc3 || x == 0xcc || x == 0xf4 || x == 0x90 ||
	       (at >= 2 && c[at - 2] == 0xeb) || (at >= 5 && c[at - 5] == 0xe9) ||
	       /* the last byte of a long nop (0f 1f ... 00) */
	       (x == 0x00 && at >= 4 && (c[at - 4] == 0x1f || c[at - 5] == 0x1f ||
					 c[at - 7] == 0x1f || c[at - 8] == 0x1f));
}

/* Code without a symbol (a library's hidden functions, stripped: musl's
 * thread start; assembly without CFI): the function's start found from
 * the code, nearest the pc first.  A start follows the end of another
 * function (ends_function) and its instructions, decoded from there,
 * reach the pc exactly; the prologue they make must give a return
 * address, right after a call that (a direct one) calls that start.
 * Then regs are the caller's.  tests/symbols-sizes.test,
 * tests/dump-musl.test, tests/dump-sighandler.test. */
#define START_BACK 256
#define START_STEPS 4096          /* instructions decoded for all candidates */
static bool
code_start_step(struct unwind_target *t, struct memory_reader *mr, struct arch_regs *regs,
		const struct mapping *m, uint64_t pc, bool exact)
{
	const struct arch *a = unwind_target_arch(t);
	uint64_t sp = regs->r[a->reg_sp];
	unsigned char c[START_BACK + 16];
	size_t back = pc - m->start < START_BACK ? (size_t)(pc - m->start) : START_BACK;
	unsigned tries = 0, steps = 0;

	if (back < 8 || !read_bytes(mr, pc - back, c, back))
		return false;
	memset(c + back, 0x90, sizeof(c) - back);
	/* First where a direct call says so; then where the call does not
	 * (a tail call on the way: musl's _start_c jumps to
	 * __libc_start_main, which jumps to its hidden stage 2). */
	for (int strict = 1; strict >= 0; strict--, tries = 0)
	for (size_t at = exact ? back : back - 1; at >= 8 && tries < 16; at--) {
		if (!ends_function(c, at))
			continue;
		/* The instructions from there land on the pc. */
		size_t i = at;
		struct insn in;
		while (i < back && steps++ < START_STEPS &&
		       decode(c + i, c + sizeof(c), pc - back + i, &in) && in.len)
			i += in.len;
		if (i != back)
			continue;
		tries++;
		uint64_t start = pc - back + at;
		struct prologue p;
		scan_prologue(mr, start, pc, &p);
		if (!p.ok && !p.rbp_frame)
			continue;
		uint64_t cfa = p.rbp_frame ? regs->r[a->reg_fp] + p.rbp_cfa : sp + p.depth + 8;
		uint64_t ra;
		if (!read_word(mr, cfa - 8, &ra) || (strict && !call_reaches(mr, ra, start)))
			continue;
		if (take_frame(t, mr, regs, cfa, p.rbp_saved ? cfa - p.rbp_slot : 0))
			return true;
	}
	return false;
}

bool
x86_plausible_ra(struct unwind_target *t, struct memory_reader *mr, uint64_t ra)
{
	return unwind_target_arch(t)->e_machine != EM_X86_64 || plausible_ra(t, mr, ra);
}

int
x86_heur_step(struct unwind_target *t, struct memory_reader *mr, struct arch_regs *regs,
	      bool exact, enum unwind_how *how, bool *no_symbol)
{
	const struct arch *a = unwind_target_arch(t);
	uint64_t pc = regs->r[a->reg_ip], sp = regs->r[a->reg_sp], start;

	*no_symbol = false;
	if (a->e_machine != EM_X86_64)
		return 0;
	struct mapping *m = pc ? unwind_target_mapping(t, exact ? pc : pc - 1) : NULL;
	*how = UNWIND_HOW_PROLOGUE;
	/* Called through a bad pointer: nothing of the callee ran. */
	if (!m || !(m->perms & MAPPING_X))
		return exact && take_frame(t, mr, regs, sp + 8, 0);
	/* At the pops before a ret: they restore what the prologue saved,
	 * %rbp among them, which is read where it was pushed. */
	int64_t rbp_at, up;
	if (exact && (up = scan_epilogue_forward(mr, pc, true, &rbp_at)) >= 0 &&
	    take_frame(t, mr, regs, sp + (uint64_t)up + 8, rbp_at >= 0 ? sp + (uint64_t)rbp_at : 0))
		return 1;
	*no_symbol = !func_start(m, pc, exact, &start);
	if (!*no_symbol) {
		struct prologue p;

		scan_prologue(mr, start, pc, &p);
		uint64_t cfa = p.rbp_frame ? regs->r[a->reg_fp] + p.rbp_cfa : sp + p.depth + 8;
		if ((p.ok || p.rbp_frame) &&
		    take_frame(t, mr, regs, cfa, p.rbp_saved ? cfa - p.rbp_slot : 0))
			return 1;
	}
	/* No symbol (a stripped library: musl's), or a prologue not
	 * understood: the way out of the function. */
	up = scan_epilogue_forward(mr, pc, false, &rbp_at);
	if (up >= 0 &&
	    take_frame(t, mr, regs, sp + (uint64_t)up + 8, rbp_at >= 0 ? sp + (uint64_t)rbp_at : 0))
		return 1;
	/* No way out (a function that never returns: a thread's start; a
	 * handler stopped before its first ret), and no symbol: the
	 * prologue from where the code says it starts (where the frame
	 * stopped anywhere, maybe at the pc itself). */
	return *no_symbol && code_start_step(t, mr, regs, m, pc, exact);
}

int
x86_scan_step(struct unwind_target *t, struct memory_reader *mr, struct arch_regs *regs)
{
	const struct arch *a = unwind_target_arch(t);
	uint64_t sp = regs->r[a->reg_sp], pc = regs->r[a->reg_ip];

	if (a->e_machine != EM_X86_64)
		return 0;
	/* Only from code: a pc that is not (a walk already astray) gives
	 * nothing to go on. */
	struct mapping *m = pc ? unwind_target_mapping(t, pc - 1) : NULL;
	if (!m || !(m->perms & MAPPING_X))
		return 0;
	struct mapping *stack = module_map_find(&t->maps, sp);
	for (uint64_t at = sp; stack && at < sp + 8 * SCAN_WORDS && at + 8 <= stack->end; at += 8)
		if (take_frame(t, mr, regs, at + 8, 0))
			return 1;
	return 0;
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
x86_code_reach(const unsigned char *code, size_t avail, uint64_t reach, uint64_t start)
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
			} else if (!decode(code + at, code + avail, start + at, &in) || in.len == 0) {
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
