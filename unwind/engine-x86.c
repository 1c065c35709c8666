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
 * tests/accuracy-builds.test, tests/dump-nullcall.test.  The decoder
 * itself is x86-code.c's.
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
#include "unwind/x86-code.h"

#define PROLOGUE_MAX   256      /* bytes of a prologue decoded at most */
#define FUNC_MAX       (1 << 20)/* a pc further from its symbol: not its function */
#define SCAN_WORDS     256      /* stack words scanned for a return address */

static bool
read_bytes(struct memory_reader *mr, uint64_t addr, void *buf, size_t n)
{
	return unwind_memory_read(mr, addr, buf, n) >= 0;
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

		if (!unwind_x86_decode(c + i, c + sizeof(c), start + i, &in)) {
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

			if (!read_bytes(mr, at, c, sizeof(c)) ||
			    !unwind_x86_decode(c, c + sizeof(c), at, &in))
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
	if (!unwind_elf_image_lookup(m->image, at - m->bias, UNWIND_SYM_NO_DEMANGLE, &off) ||
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
		       unwind_x86_decode(c + i, c + sizeof(c), pc - back + i, &in) && in.len)
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
unwind_x86_plausible_ra(struct unwind_target *t, struct memory_reader *mr, uint64_t ra)
{
	return unwind_target_arch(t)->e_machine != EM_X86_64 || plausible_ra(t, mr, ra);
}

int
unwind_x86_heur_step(struct unwind_target *t, struct memory_reader *mr, struct arch_regs *regs,
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
	 * stopped anywhere, maybe at the pc itself).  Not in generated
	 * code (maps.h): it has no functions to find the start of (qemu's
	 * translated blocks, after the jump that ends another, gave a
	 * return address a call left long ago), and records and scans
	 * are tried for it. */
	return *no_symbol && !unwind_mapping_generated(m) &&
	       code_start_step(t, mr, regs, m, pc, exact);
}

int
unwind_x86_scan_step(struct unwind_target *t, struct memory_reader *mr, struct arch_regs *regs,
		     uint64_t from, uint64_t *found)
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
	struct mapping *stack = unwind_module_map_find(&t->maps, sp);
	for (uint64_t at = from > sp ? from : sp;
	     stack && at < sp + 8 * SCAN_WORDS && at + 8 <= stack->end; at += 8)
		if (take_frame(t, mr, regs, at + 8, 0)) {
			*found = at;
			return 1;
		}
	return 0;
}

/* ---- steps offered to a composition (engine-auto.c) ---------------------- */

int
unwind_x86_heur_frame_step(struct frame_step *f)
{
	return unwind_x86_heur_step(f->t, f->mr, f->regs, f->exact, &f->how, &f->no_symbol) > 0;
}

int
unwind_x86_scan_frame_step(struct frame_step *f)
{
	/* One scan, after the frame-pointer step failed or found nothing
	 * plausible, and never a guess from a guess. */
	if ((f->fp < 0 && f->stop == UNWIND_STOP_END) || f->prev_how == UNWIND_HOW_SCAN ||
	    unwind_x86_scan_step(f->t, f->mr, f->regs, f->scan_from, &f->scan_found) <= 0)
		return 0;
	f->how = UNWIND_HOW_SCAN;
	return 1;
}
