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
 * tests/dump-nocfi.test, tests/dump-static.test.
 */
#include "config.h"

#include <elf.h>
#include <errno.h>
#include <string.h>

#include "unwind/unwind-internal.h"

#define PROLOGUE_MAX   256      /* bytes of a prologue decoded at most */
#define FUNC_MAX       (1 << 20)/* a pc further from its symbol: not its function */
#define EPILOGUE_POPS  8        /* pops before a ret looked at */
#define SCAN_WORDS     256      /* stack words scanned for a return address */

/* x86-64 register numbers of arch/arch-x86_64.c's table (DWARF order). */
#define X86_RBP 6

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

/* A return address: in executable memory, right after a call. */
static bool
plausible_ra(struct unwind_target *t, struct memory_reader *mr, uint64_t ra)
{
	struct mapping *m;

	if (ra < 4096)
		return false;
	m = unwind_target_mapping(t, ra - 1);
	return m && (m->perms & MAPPING_X) && after_call(mr, ra);
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

/* Decode [start, pc) linearly, following what each instruction does to
 * %rsp: pushes and pops, add/sub/lea of %rsp, mov %rsp,%rbp, leave.  A
 * ret or an unconditional jump ends a block: the next one starts with
 * the body's depth (what the prologue's pushes and sub left).  An instruction that is not
 * decoded, or that sets %rsp some other way without an rbp frame, leaves
 * the depth unknown (p->ok false). */
static void
scan_prologue(struct memory_reader *mr, uint64_t start, uint64_t pc, struct prologue *p)
{
	unsigned char c[PROLOGUE_MAX + 16];
	size_t len = pc - start < PROLOGUE_MAX ? (size_t)(pc - start) : PROLOGUE_MAX;
	const unsigned char *end = c + len + 16;
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
		const unsigned char *x = c + i;
		bool o16 = false;
		unsigned rex = 0;
		size_t k = 0, n = 0, imm = 0;
		bool prologue_like = false;

		while (x[k] == 0x66 || x[k] == 0xf2 || x[k] == 0xf3 || x[k] == 0x2e) {
			o16 |= x[k] == 0x66;
			k++;
		}
		if ((x[k] & 0xf0) == 0x40)
			rex = x[k++];
		unsigned op = x[k];
		bool w = rex & 8;
		const unsigned char *m = x + k + 1;
		unsigned reg = (m[0] >> 3) & 7, rm = m[0] & 7, mod = m[0] >> 6;
		bool rm_is_rsp = mod == 3 && rm == 4 && !(rex & 1);
		bool reg_is_rsp = reg == 4 && !(rex & 4);

		if (op >= 0x50 && op <= 0x57) {                /* push */
			p->depth += 8;
			if (op == 0x55 && !rex && !p->rbp_saved) {
				p->rbp_saved = true;
				p->rbp_slot = 8 + p->depth;
			}
			n = k + 1;
			prologue_like = true;
		} else if (op >= 0x58 && op <= 0x5f) {         /* pop */
			if (op == 0x5c && !rex)
				p->ok = false;
			if (op == 0x5d && !rex)
				p->rbp_frame = false;   /* %rbp is the caller's again */
			p->depth -= 8;
			n = k + 1;
		} else if (op == 0x6a || op == 0x68) {         /* push $imm */
			p->depth += 8;
			n = k + 1 + (op == 0x6a ? 1 : 4);
		} else if (op == 0xc9) {                       /* leave */
			if (!p->rbp_frame)
				p->ok = false;
			p->depth = p->rbp_cfa - 16;
			p->rbp_frame = false;
			n = k + 1;
		} else if (op == 0xc3 || op == 0xc2 || op == 0xe9 || op == 0xeb) {
			/* The end of a block: what follows is reached by a
			 * jump, with the body's depth. */
			p->depth = body;
			p->rbp_frame = body_rbp;
			n = k + 1 + (op == 0xc2 ? 2 : op == 0xe9 ? 4 : op == 0xeb ? 1 : 0);
		} else if (op == 0xe8) {                       /* call rel32 */
			n = k + 5;
		} else if ((op >= 0x70 && op <= 0x7f) || op == 0xa8) {
			n = k + 2;                              /* jcc rel8; test al */
		} else if (op == 0xa9 || (op < 0x40 && (op & 7) == 5)) {
			n = k + 1 + (o16 ? 2 : 4);              /* op eax,imm32 */
		} else if (op < 0x40 && (op & 7) == 4) {
			n = k + 2;                              /* op al,imm8 */
		} else if (op == 0x90 || op == 0x98 || op == 0x99 || op == 0xcc) {
			n = k + 1;
		} else if (op >= 0xb0 && op <= 0xb7) {
			n = k + 2;
		} else if (op >= 0xb8 && op <= 0xbf) {
			n = k + 1 + (w ? 8 : o16 ? 2 : 4);
		} else if (op == 0x0f) {
			unsigned op2 = x[k + 1];
			if (op2 == 0x05 || op2 == 0x0b || op2 == 0xa2) {
				n = k + 2;                      /* syscall, ud2, cpuid */
			} else if (op2 >= 0x80 && op2 <= 0x8f) {
				n = k + 6;                      /* jcc rel32 */
			} else if (modrm_opcode_0f(op2)) {
				size_t ml = modrm_len(x + k + 2, end);
				if (!ml)
					break;
				n = k + 2 + ml + (op2 == 0x70 || op2 == 0xc2 || op2 == 0xc6 ||
						  (op2 >= 0x71 && op2 <= 0x73) ? 1 : 0);
				prologue_like = op2 == 0x1e || op2 == 0x1f;  /* endbr, nop */
			} else {
				p->ok = false;
				break;
			}
		} else if (modrm_opcode(op, reg, o16, &imm)) {
			size_t ml = modrm_len(m, end);
			if (!ml)
				break;
			n = k + 1 + ml + imm;
			if (w && (op == 0x83 || op == 0x81) && rm_is_rsp) {
				uint64_t v;
				if (op == 0x83) {
					v = (uint64_t)(int64_t)(int8_t)m[1];
				} else {
					int32_t v32;
					memcpy(&v32, m + 1, 4);
					v = (uint64_t)(int64_t)v32;
				}
				if (reg == 5)                   /* sub $v,%rsp */
					p->depth += v;
				else if (reg == 0)              /* add $v,%rsp */
					p->depth -= v;
				else if (!p->rbp_frame)         /* and $-16,%rsp */
					p->ok = false;
				prologue_like = reg == 5;
			} else if (w && op == 0x89 && reg == 4 && !(rex & 4) && mod == 3 &&
				   rm == 5 && !(rex & 1)) {
				p->rbp_frame = true;            /* mov %rsp,%rbp */
				p->rbp_cfa = 8 + p->depth;
				prologue_like = true;
			} else if (w && op == 0x8b && mod == 3 && reg == 5 && !(rex & 4) &&
				   rm == 4 && !(rex & 1)) {
				p->rbp_frame = true;            /* mov %rsp,%rbp */
				p->rbp_cfa = 8 + p->depth;
				prologue_like = true;
			} else if (w && (op == 0x89 || op == 0x8d) && reg == 5 && !(rex & 4) &&
				   rm == 4 && (mod == 1 || mod == 2) && m[1] == 0x24) {
				/* Go's frame: mov %rbp,d(%rsp); lea d(%rsp),%rbp */
				int32_t d = 0;
				if (mod == 1)
					d = (int8_t)m[2];
				else
					memcpy(&d, m + 2, 4);
				if (op == 0x89 && !p->rbp_saved) {
					p->rbp_saved = true;
					p->rbp_slot = 8 + p->depth - (uint64_t)(int64_t)d;
				} else if (op == 0x8d) {
					p->rbp_frame = true;
					p->rbp_cfa = 8 + p->depth - (uint64_t)(int64_t)d;
				}
				prologue_like = true;
			} else if (op == 0x8d && reg_is_rsp && rm == 4 && mod != 3 &&
				   (m[1] & 7) == 4 && (mod == 1 || mod == 2)) {
				int32_t d = 0;                  /* lea d(%rsp),%rsp */
				if (mod == 1)
					d = (int8_t)m[2];
				else
					memcpy(&d, m + 2, 4);
				p->depth -= (uint64_t)(int64_t)d;
			} else if (w && ((op == 0x89 && rm_is_rsp) ||
					 ((op == 0x8b || op == 0x8d) && reg_is_rsp))) {
				/* %rsp set from elsewhere: from %rbp in an rbp
				 * frame (mov %rbp,%rsp before pop %rbp). */
				if (p->rbp_frame && ((op == 0x89 && reg == 5 && !(rex & 4)) ||
						     (op == 0x8b && mod == 3 && rm == 5 && !(rex & 1))))
					p->depth = p->rbp_cfa - 8;
				else
					p->ok = false;
			} else if (op == 0xff && reg == 6) {
				p->depth += 8;                  /* push r/m */
			} else if (op == 0xff && (reg == 4 || reg == 5)) {
				p->depth = body;                /* jmp *r/m */
				p->rbp_frame = body_rbp;
			}
			prologue_like = prologue_like || ((op == 0x89 || op == 0x8b) && mod == 3) ||
					((op == 0x89) && rm == 4 && mod != 3);
		} else {
			p->ok = false;
			break;
		}
		/* The body's depth: what pushes of registers, sub and
		 * mov %rsp,%rbp made it, wherever they are (Go checks its
		 * stack before its prologue). */
		if (prologue_like && p->depth > body)
			body = p->depth;
		body_rbp = body_rbp || p->rbp_frame;
		i += n;
	}
	if ((int64_t)p->depth < 0)
		p->ok = false;
}

/* The pc sits at a ret, or at pops followed by a ret: the number of
 * pops (>= 0), or -1 when it does not; *rbp_pop: which of them pops %rbp
 * (-1: none). */
static int
epilogue_pops(struct memory_reader *mr, uint64_t pc, int *rbp_pop)
{
	unsigned char c[2 * EPILOGUE_POPS + 1];
	size_t i = 0;
	int pops = 0;

	*rbp_pop = -1;
	if (!read_bytes(mr, pc, c, sizeof(c)))
		return -1;
	while (i < sizeof(c)) {
		if (c[i] == 0xc3)
			return pops;
		if (c[i] == 0x5d)
			*rbp_pop = pops;
		if (c[i] >= 0x58 && c[i] <= 0x5f)
			i += 1;
		else if (c[i] == 0x41 && i + 1 < sizeof(c) && c[i + 1] >= 0x58 && c[i + 1] <= 0x5f)
			i += 2;
		else
			return -1;
		pops++;
	}
	return -1;
}

/* The start of the function that holds pc, from its symbol. */
static bool
func_start(struct unwind_target *t, const struct mapping *m, uint64_t pc, uint64_t *start)
{
	uint64_t off = 0;

	if (!m->image || !m->bias_known)
		return false;
	if (!elf_image_lookup(m->image, pc - m->bias, UNWIND_SYM_NO_DEMANGLE, &off) ||
	    off >= FUNC_MAX)
		return false;
	*start = pc - off;
	(void)t;
	return true;
}

static void
stepped(const struct arch *a, struct arch_regs *regs, uint64_t ra, uint64_t cfa)
{
	regs->r[a->reg_ip] = ra;
	regs->r[a->reg_sp] = cfa;
}

int
x86_heur_step(struct unwind_target *t, struct memory_reader *mr, struct arch_regs *regs,
	      bool exact, enum unwind_how *how)
{
	const struct arch *a = unwind_target_arch(t);
	uint64_t pc = regs->r[a->reg_ip], sp = regs->r[a->reg_sp], ra, start;

	if (a->e_machine != EM_X86_64)
		return 0;
	struct mapping *m = pc ? unwind_target_mapping(t, exact ? pc : pc - 1) : NULL;
	*how = UNWIND_HOW_PROLOGUE;
	if (!m || !(m->perms & MAPPING_X)) {
		/* Called through a bad pointer: nothing of the callee ran. */
		if (exact && read_word(mr, sp, &ra) && plausible_ra(t, mr, ra)) {
			stepped(a, regs, ra, sp + 8);
			return 1;
		}
		return 0;
	}
	if (exact) {
		int rbp_pop, pops = epilogue_pops(mr, pc, &rbp_pop);
		uint64_t rbp;
		if (pops >= 0 && read_word(mr, sp + 8 * (uint64_t)pops, &ra) &&
		    plausible_ra(t, mr, ra)) {
			/* The pops restore what the prologue saved: %rbp
			 * among them, which is read where it was pushed. */
			if (rbp_pop >= 0 && read_word(mr, sp + 8 * (uint64_t)rbp_pop, &rbp))
				regs->r[X86_RBP] = rbp;
			stepped(a, regs, ra, sp + 8 * (uint64_t)pops + 8);
			return 1;
		}
	}
	if (func_start(t, m, pc, &start)) {
		struct prologue p;
		uint64_t cfa;

		scan_prologue(mr, start, pc, &p);
		cfa = p.rbp_frame ? regs->r[X86_RBP] + p.rbp_cfa : sp + p.depth + 8;
		if ((p.ok || p.rbp_frame) && read_word(mr, cfa - 8, &ra) &&
		    plausible_ra(t, mr, ra)) {
			uint64_t rbp;
			if (p.rbp_saved && read_word(mr, cfa - p.rbp_slot, &rbp))
				regs->r[X86_RBP] = rbp;
			stepped(a, regs, ra, cfa);
			return 1;
		}
	}
	return 0;
}

int
x86_scan_step(struct unwind_target *t, struct memory_reader *mr, struct arch_regs *regs)
{
	const struct arch *a = unwind_target_arch(t);
	uint64_t sp = regs->r[a->reg_sp], pc = regs->r[a->reg_ip], w;

	if (a->e_machine != EM_X86_64)
		return 0;
	/* Only from code: a pc that is not (a walk already astray) gives
	 * nothing to go on. */
	struct mapping *m = pc ? unwind_target_mapping(t, pc - 1) : NULL;
	if (!m || !(m->perms & MAPPING_X))
		return 0;
	struct mapping *stack = module_map_find(&t->maps, sp);
	for (uint64_t k = 0; k < SCAN_WORDS; k++) {
		uint64_t at = sp + 8 * k;
		if (!stack || at + 8 > stack->end || !read_word(mr, at, &w))
			return 0;
		if (plausible_ra(t, mr, w)) {
			stepped(a, regs, w, at + 8);
			return 1;
		}
	}
	return 0;
}
