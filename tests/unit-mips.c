/* tests/unit-mips.c - the MIPS prologue-analysis unwinder (unwind/engine-
 * mips.c unwind_mips_step) on hand-assembled instruction arrays: one case per edge
 * the engine claims to handle (DESIGN.md), in both byte orders,
 * plus random code and stacks that must end the walk, never loop.
 */
#include "config.h"

#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/arch.h"
#include "tests/check.h"
#include "unwind/engines.h"
#include "unwind/unwind.h"

/* ---- an assembler, just enough ----------------------------------------- */

enum { ZERO = 0, V0 = 2, A0 = 4, T0 = 8, S0 = 16, S1 = 17, T9 = 25, GP = 28,
       SP = 29, S8 = 30, RA = 31, PC = 32 };

#define I_TYPE(op, rs, rt, imm) \
	((uint32_t)(op) << 26 | (uint32_t)(rs) << 21 | (uint32_t)(rt) << 16 | ((uint32_t)(imm) & 0xffff))
#define R_TYPE(rs, rt, rd, fn) \
	((uint32_t)(rs) << 21 | (uint32_t)(rt) << 16 | (uint32_t)(rd) << 11 | (fn))
#define ADDIU(rt, rs, imm)   I_TYPE(0x09, rs, rt, imm)
#define DADDIU(rt, rs, imm)  I_TYPE(0x19, rs, rt, imm)
#define SW(rt, off, base)    I_TYPE(0x2b, base, rt, off)
#define SD(rt, off, base)    I_TYPE(0x3f, base, rt, off)
#define LW(rt, off, base)    I_TYPE(0x23, base, rt, off)
#define LUI(rt, imm)         I_TYPE(0x0f, 0, rt, imm)
#define ORI(rt, rs, imm)     I_TYPE(0x0d, rs, rt, imm)
#define BEQ(rs, rt, off)     I_TYPE(0x04, rs, rt, off)
#define BAL(off)             I_TYPE(0x01, 0, 0x11, off)
#define ADDU(rd, rs, rt)     R_TYPE(rs, rt, rd, 0x21)
#define SUBU(rd, rs, rt)     R_TYPE(rs, rt, rd, 0x23)
#define MOVE(rd, rs)         R_TYPE(rs, 0, rd, 0x25)   /* or rd,rs,zero */
#define MOVE_ADDU(rd, rs)    ADDU(rd, rs, ZERO)
#define JR_RA                R_TYPE(RA, 0, 0, 0x08)
#define JALR_T9              R_TYPE(T9, 0, RA, 0x09)
#define JAL(a)               ((uint32_t)0x03 << 26 | ((uint32_t)(a) >> 2 & 0x3ffffff))
#define SYSCALL              0x0000000cu
#define NOP                  0u

/* ---- a fake target: one code mapping, one stack mapping ----------------- */

#define CODE_BASE  UINT64_C(0x00400000)
#define CODE_WORDS 8192
#define STACK_BASE UINT64_C(0x7ff00000)
#define STACK_SIZE 0x10000
#define OTHER_CODE UINT64_C(0x00500000)   /* where return addresses point */

struct fake {
	const struct arch *arch;
	unsigned char code[CODE_WORDS * 4];
	size_t ncode;             /* words assembled */
	unsigned char stack[STACK_SIZE];
	uint64_t sym_start;       /* 0: no symbol */
	const char *sym_name;
	unsigned long reads, bad_reads;
};

static void
put(unsigned char *p, uint64_t v, unsigned size, bool be)
{
	for (unsigned k = 0; k < size; k++)
		p[be ? size - 1 - k : k] = (unsigned char)(v >> 8 * k);
}

static uint64_t
code_at(struct fake *f, const uint32_t *insns, size_t n)
{
	uint64_t at = CODE_BASE + 4 * f->ncode;
	for (size_t k = 0; k < n; k++)
		put(f->code + 4 * (f->ncode + k), insns[k], 4, f->arch->big_endian);
	f->ncode += n;
	return at;
}

static void
stack_word(struct fake *f, uint64_t addr, uint64_t v)
{
	put(f->stack + (addr - STACK_BASE), v, f->arch->word_size, f->arch->big_endian);
}

static int
f_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct fake *f = ctx;
	f->reads++;
	if (addr >= CODE_BASE && addr + len <= CODE_BASE + sizeof(f->code)) {
		memcpy(buf, f->code + (addr - CODE_BASE), len);
		return 0;
	}
	if (addr >= STACK_BASE && addr + len <= STACK_BASE + STACK_SIZE) {
		memcpy(buf, f->stack + (addr - STACK_BASE), len);
		return 0;
	}
	f->bad_reads++;
	return -EFAULT;
}

static int
f_func(void *ctx, uint64_t addr, uint64_t *start, const char **name)
{
	struct fake *f = ctx;
	if (!f->sym_start || addr < f->sym_start || addr >= CODE_BASE + 4 * f->ncode)
		return -ENOENT;
	*start = f->sym_start;
	*name = f->sym_name ? f->sym_name : "fn";
	return 0;
}

static int
f_code(void *ctx, uint64_t addr, uint64_t *lo, uint64_t *hi)
{
	(void)ctx;
	if (addr >= CODE_BASE && addr < CODE_BASE + 4 * CODE_WORDS) {
		*lo = CODE_BASE;
		*hi = CODE_BASE + 4 * CODE_WORDS;
		return 0;
	}
	if (addr >= OTHER_CODE && addr < OTHER_CODE + 0x10000) {
		*lo = OTHER_CODE;
		*hi = OTHER_CODE + 0x10000;
		return 0;
	}
	return -ENOENT;
}

static int
f_stack(void *ctx, uint64_t addr, uint64_t *lo, uint64_t *hi)
{
	(void)ctx;
	if (addr < STACK_BASE || addr >= STACK_BASE + STACK_SIZE)
		return -ENOENT;
	*lo = STACK_BASE;
	*hi = STACK_BASE + STACK_SIZE;
	return 0;
}

static struct fake *
fake_new(const struct arch *arch)
{
	struct fake *f = calloc(1, sizeof(*f));
	if (!f)
		abort();
	f->arch = arch;
	return f;
}

static struct mips_env
env_of(struct fake *f)
{
	struct mips_env e = {
		.arch = f->arch, .ctx = f, .read = f_read, .func = f_func,
		.code = f_code, .stack = f_stack,
	};
	return e;
}

/* Registers of an exact (innermost) frame, or a caller frame (no ra). */
static void
regs_init(struct arch_regs *r, uint64_t pc, uint64_t sp, bool exact, uint64_t ra)
{
	memset(r, 0, sizeof(*r));
	r->r[PC] = pc;
	r->r[SP] = sp;
	r->valid = UINT64_C(1) << PC | UINT64_C(1) << SP | UINT64_C(0xff) << 16 |
		   UINT64_C(1) << S8;
	if (exact) {
		r->r[RA] = ra;
		r->valid |= UINT64_C(1) << RA;
	}
}

/* One step that must succeed with caller (pc, sp). */
static void
expect_step(const char *what, struct fake *f, struct arch_regs *r,
	    uint64_t pc, uint64_t sp)
{
	struct mips_env e = env_of(f);
	enum unwind_stop stop = UNWIND_STOP_END;
	bool sig = false;
	int rc = unwind_mips_step(&e, r, &sig, &stop);
	CHECK(rc == 0, "%s: step failed (%s)", what, unwind_stop_reason(stop));
	if (rc == 0) {
		CHECK(r->r[PC] == pc, "%s: pc %#llx, want %#llx", what,
		      (unsigned long long)r->r[PC], (unsigned long long)pc);
		CHECK(r->r[SP] == sp, "%s: sp %#llx, want %#llx", what,
		      (unsigned long long)r->r[SP], (unsigned long long)sp);
		CHECK(!sig, "%s: not a signal frame", what);
		CHECK(!(r->valid & (UINT64_C(1) << RA)), "%s: caller's ra is unknown", what);
	}
}

static void
expect_stop(const char *what, struct fake *f, struct arch_regs *r,
	    enum unwind_stop want)
{
	struct mips_env e = env_of(f);
	enum unwind_stop stop = UNWIND_STOP_DEPTH;
	bool sig = false;
	int rc = unwind_mips_step(&e, r, &sig, &stop);
	CHECK(rc < 0 && stop == want, "%s: rc %d stop '%s', want '%s'", what, rc,
	      rc < 0 ? unwind_stop_reason(stop) : "-", unwind_stop_reason(want));
}

#define RET1 (OTHER_CODE + 0x100)
#define RET2 (OTHER_CODE + 0x200)
#define SP0  (STACK_BASE + 0x8000)

/* A standard non-PIC frame: body calls out, pc is its return address. */
static void
test_frame(const struct arch *arch)
{
	char what[64];
	snprintf(what, sizeof(what), "plain frame (%s)", arch->name);
	struct fake *f = fake_new(arch);
	const uint32_t fn[] = {
		ADDIU(SP, SP, -32),
		SW(RA, 28, SP),
		SW(S0, 24, SP),
		MOVE(S0, A0),
		JAL(OTHER_CODE),
		NOP,
		/* pc after the call: */
		LW(RA, 28, SP),
		LW(S0, 24, SP),
		JR_RA,
		ADDIU(SP, SP, 32),
	};
	uint64_t start = code_at(f, fn, 10);
	f->sym_start = start;
	stack_word(f, SP0 + 28, RET1);
	stack_word(f, SP0 + 24, 0x1234);

	struct arch_regs r;
	regs_init(&r, start + 24, SP0, false, 0);
	r.r[S0] = 0x9999;
	expect_step(what, f, &r, RET1, SP0 + 32);
	CHECK(r.r[S0] == 0x1234, "%s: s0 restored from its slot", what);

	/* Without the symbol: the backward scan finds the allocation. */
	f->sym_start = 0;
	regs_init(&r, start + 24, SP0, false, 0);
	expect_step("plain frame, no symbol", f, &r, RET1, SP0 + 32);

	/* The innermost frame at offset 0: nothing allocated, ra is live. */
	f->sym_start = start;
	regs_init(&r, start, SP0 + 32, true, RET2);
	expect_step("pc at offset 0", f, &r, RET2, SP0 + 32);

	/* Frame allocated, ra not stored yet. */
	regs_init(&r, start + 4, SP0, true, RET2);
	expect_step("pc before sw ra", f, &r, RET2, SP0 + 32);

	/* In the epilogue: ra loaded, sp not restored yet (at jr ra, whose
	 * delay slot pops the frame). */
	regs_init(&r, start + 32, SP0, true, RET2);
	expect_step("pc at jr ra, addiu in its delay slot", f, &r, RET2, SP0 + 32);
	regs_init(&r, start + 24, SP0, true, 0xdead);
	expect_step("pc at lw ra (exact)", f, &r, RET1, SP0 + 32);

	/* A caller frame must not take ra from the register. */
	free(f);
}

/* The epilogue after the stack is restored: addiu before jr ra. */
static void
test_epilogue_restored(void)
{
	struct fake *f = fake_new(&arch_mipsel);
	const uint32_t fn[] = {
		ADDIU(SP, SP, -40),
		SW(RA, 36, SP),
		JAL(OTHER_CODE),
		NOP,
		LW(RA, 36, SP),
		ADDIU(SP, SP, 40),
		JR_RA,
		NOP,
	};
	uint64_t start = code_at(f, fn, 8);
	f->sym_start = start;
	stack_word(f, SP0 + 36, RET1);
	struct arch_regs r;
	/* pc at jr ra: the frame is gone, sp is the caller's, ra is loaded. */
	regs_init(&r, start + 24, SP0 + 40, true, RET2);
	expect_step("epilogue, stack restored", f, &r, RET2, SP0 + 40);
	/* pc at the addiu: ra loaded, frame still there. */
	regs_init(&r, start + 20, SP0, true, RET2);
	expect_step("epilogue, at addiu sp", f, &r, RET2, SP0 + 40);
	free(f);
}

static void
test_leaf(void)
{
	struct fake *f = fake_new(&arch_mipsel);
	const uint32_t fn[] = {
		LW(V0, 0, A0),
		ADDIU(V0, V0, 1),
		SW(V0, 0, A0),
		JR_RA,
		NOP,
	};
	uint64_t start = code_at(f, fn, 5);
	f->sym_start = start;
	struct arch_regs r;
	regs_init(&r, start + 8, SP0, true, RET1);
	expect_step("leaf, innermost", f, &r, RET1, SP0);
	/* Only the innermost frame may use ra: as a caller it is garbage. */
	regs_init(&r, start + 8, SP0, false, 0);
	expect_stop("leaf, not innermost", f, &r, UNWIND_STOP_NOINFO);
	free(f);
}

static void
test_delay_slot_store(void)
{
	struct fake *f = fake_new(&arch_mipsel);
	const uint32_t fn[] = {
		ADDIU(SP, SP, -48),
		BEQ(A0, ZERO, 4),
		SW(RA, 44, SP),          /* ra saved in the branch delay slot */
		JALR_T9,
		NOP,
		/* pc */
		LW(RA, 44, SP),
		JR_RA,
		ADDIU(SP, SP, 48),
	};
	uint64_t start = code_at(f, fn, 8);
	f->sym_start = start;
	stack_word(f, SP0 + 44, RET1);
	struct arch_regs r;
	regs_init(&r, start + 20, SP0, false, 0);
	expect_step("sw ra in a delay slot", f, &r, RET1, SP0 + 48);
	/* The store has not run yet when pc is the branch: ra is live. */
	regs_init(&r, start + 4, SP0, true, RET2);
	expect_step("pc at the branch before the delay-slot store", f, &r, RET2, SP0 + 48);
	free(f);
}

/* PIC functions start with lui/addiu/addu gp, before the frame. */
static void
test_pic_preamble(void)
{
	struct fake *f = fake_new(&arch_mipsel);
	/* The function before ends in a noreturn call: no boundary there. */
	const uint32_t before[] = {
		ADDIU(SP, SP, -24),
		SW(RA, 20, SP),
		JAL(OTHER_CODE),
		NOP,
	};
	code_at(f, before, 4);
	const uint32_t fn[] = {
		LUI(GP, 2),
		ADDIU(GP, GP, -31452),
		ADDU(GP, GP, T9),
		ADDIU(SP, SP, -32),
		SW(RA, 28, SP),
		SW(GP, 16, SP),
		JALR_T9,
		NOP,
		/* pc */
		LW(RA, 28, SP),
		JR_RA,
		ADDIU(SP, SP, 32),
	};
	uint64_t start = code_at(f, fn, 11);
	f->sym_start = start;
	stack_word(f, SP0 + 28, RET1);
	struct arch_regs r;
	regs_init(&r, start + 32, SP0, false, 0);
	expect_step("PIC preamble", f, &r, RET1, SP0 + 32);
	/* Stopped inside the preamble: nothing allocated yet. */
	regs_init(&r, start + 8, SP0 + 32, true, RET2);
	expect_step("pc in the PIC preamble", f, &r, RET2, SP0 + 32);

	/* A leaf with a PIC preamble and no symbol: the backward scan must
	 * stop at lui gp, not run into the function before and take its
	 * frame of 24. */
	struct fake *g = fake_new(&arch_mipsel);
	code_at(g, before, 4);
	const uint32_t leaf[] = {
		LUI(GP, 2),
		ADDIU(GP, GP, -31452),
		ADDU(GP, GP, T9),
		LW(V0, 0, A0),
		SW(V0, 4, A0),
		JR_RA,
		NOP,
	};
	uint64_t ls = code_at(g, leaf, 7);
	regs_init(&r, ls + 16, SP0, true, RET1);
	/* pc at "sw v0" is followed by jr ra: try a pc whose epilogue scan
	 * is cut by a branch to force the backward scan. */
	const uint32_t leaf2[] = {
		LUI(GP, 2),
		ADDIU(GP, GP, -31452),
		ADDU(GP, GP, T9),
		LW(V0, 0, A0),
		BEQ(V0, ZERO, 2),
		NOP,
		SW(V0, 4, A0),
		JR_RA,
		NOP,
	};
	code_at(g, before, 4);
	uint64_t l2 = code_at(g, leaf2, 9);
	regs_init(&r, l2 + 12, SP0, true, RET1);
	expect_step("PIC leaf, no symbol: lui gp is a boundary", g, &r, RET1, SP0);
	(void)ls;
	free(g);
	free(f);
}

/* Backward scans stop at the end of the function before: a positive
 * addiu sp or jr ra; and never read below the code mapping. */
static void
test_backward_boundaries(void)
{
	struct fake *f = fake_new(&arch_mipsel);
	const uint32_t before[] = {
		ADDIU(SP, SP, -24),
		SW(RA, 20, SP),
		JAL(OTHER_CODE),
		NOP,
		LW(RA, 20, SP),
		JR_RA,
		ADDIU(SP, SP, 24),
	};
	code_at(f, before, 7);
	const uint32_t leaf[] = {
		LW(V0, 0, A0),
		BEQ(V0, ZERO, 2),
		NOP,
		SW(V0, 4, A0),
		JR_RA,
		NOP,
	};
	uint64_t ls = code_at(f, leaf, 6);
	struct arch_regs r;
	regs_init(&r, ls + 4, SP0, true, RET1);
	expect_step("no symbol: positive addiu sp ends the backward scan", f, &r, RET1, SP0);

	/* At the very start of the code mapping with no boundary at all. */
	struct fake *g = fake_new(&arch_mipsel);
	uint64_t gs = code_at(g, leaf, 6);
	regs_init(&r, gs + 4, SP0, true, RET1);
	expect_step("no symbol: start of the code mapping", g, &r, RET1, SP0);
	CHECK(g->bad_reads == 0, "read below the code mapping (%lu)", g->bad_reads);
	free(g);

	/* A long stretch of code without any boundary: the scan is bounded
	 * and gives up instead of guessing. */
	struct fake *h = fake_new(&arch_mipsel);
	static uint32_t filler[4000];
	for (size_t k = 0; k < 4000; k++)
		filler[k] = k % 7 == 3 ? BEQ(V0, ZERO, 2) : ADDU(V0, V0, A0);
	uint64_t hs = code_at(h, filler, 4000);
	regs_init(&r, hs + 4 * 3990, SP0, false, 0);
	h->reads = 0;
	expect_stop("no boundary within the scan limit", h, &r, UNWIND_STOP_NOINFO);
	CHECK(h->reads < 2200, "scan bounded (%lu reads)", h->reads);
	free(h);
	free(f);
}

/* alloca and -fno-omit-frame-pointer: the frame hangs off s8. */
static void
test_frame_pointer(void)
{
	struct fake *f = fake_new(&arch_mipsel);
	const uint32_t fn[] = {
		ADDIU(SP, SP, -40),
		SW(RA, 36, SP),
		SW(S8, 32, SP),
		MOVE(S8, SP),
		SW(S0, 28, SP),
		SUBU(SP, SP, V0),        /* alloca(n) */
		JALR_T9,
		NOP,
		/* pc */
		MOVE(SP, S8),
		LW(RA, 36, SP),
		LW(S8, 32, SP),
		LW(S0, 28, SP),
		JR_RA,
		ADDIU(SP, SP, 40),
	};
	uint64_t start = code_at(f, fn, 14);
	f->sym_start = start;
	uint64_t s8 = SP0;
	stack_word(f, s8 + 36, RET1);
	stack_word(f, s8 + 32, 0x7ff0abc0);
	stack_word(f, s8 + 28, 0x55);
	struct arch_regs r;
	regs_init(&r, start + 32, s8 - 256, false, 0);
	r.r[S8] = s8;
	expect_step("alloca frame (s8)", f, &r, RET1, s8 + 40);
	CHECK(r.r[S8] == 0x7ff0abc0, "s8 restored");
	CHECK(r.r[S0] == 0x55, "s0 restored");

	/* The -O0 move is addu s8,sp,zero. */
	struct fake *g = fake_new(&arch_mipsel);
	uint32_t fn2[14];
	memcpy(fn2, fn, sizeof(fn2));
	fn2[3] = MOVE_ADDU(S8, SP);
	uint64_t s2 = code_at(g, fn2, 14);
	g->sym_start = s2;
	stack_word(g, s8 + 36, RET1);
	regs_init(&r, s2 + 32, s8 - 64, false, 0);
	r.r[S8] = s8;
	expect_step("frame pointer (addu s8,sp,zero)", g, &r, RET1, s8 + 40);

	/* In the epilogue after move sp,s8 and lw s8 (s8 is the caller's
	 * again): the code ahead says where the frame is. */
	regs_init(&r, start + 44, s8, true, RET1);
	r.r[S8] = 0x7ff0abc0;
	expect_step("fp epilogue after lw s8", f, &r, RET1, s8 + 40);
	free(g);
	free(f);
}

/* Shrink-wrapping: an early return before the frame is set up. */
static void
test_early_return(void)
{
	struct fake *f = fake_new(&arch_mipsel);
	const uint32_t fn[] = {
		BEQ(A0, ZERO, 9),        /* -> the early return */
		NOP,
		ADDIU(SP, SP, -32),
		SW(RA, 28, SP),
		JAL(OTHER_CODE),
		NOP,
		/* pc1 */
		LW(RA, 28, SP),
		JR_RA,
		ADDIU(SP, SP, 32),
		NOP,
		/* early return, pc2: */
		JR_RA,
		NOP,
	};
	uint64_t start = code_at(f, fn, 12);
	f->sym_start = start;
	stack_word(f, SP0 + 28, RET1);
	struct arch_regs r;
	regs_init(&r, start + 24, SP0, false, 0);
	expect_step("frame set up after an early-return test", f, &r, RET1, SP0 + 32);
	regs_init(&r, start + 40, SP0 + 32, true, RET2);
	expect_step("in the early return path", f, &r, RET2, SP0 + 32);
	free(f);
}

/* Frames over 32 KiB: li t0,N; subu sp,sp,t0. */
static void
test_big_frame(void)
{
	struct fake *f = fake_new(&arch_mipsel);
	const uint32_t fn[] = {
		LUI(T0, 0),
		ORI(T0, T0, 0x1010),
		SUBU(SP, SP, T0),
		ADDU(T0, SP, T0),
		SW(RA, -4, T0),
		ADDIU(SP, SP, -16),
		SW(RA, 12, SP),
		JALR_T9,
		NOP,
	};
	uint64_t start = code_at(f, fn, 9);
	f->sym_start = start;
	uint64_t sp = STACK_BASE + 0x100;
	stack_word(f, sp + 12, RET1);
	struct arch_regs r;
	regs_init(&r, start + 36, sp, false, 0);
	expect_step("frame from li/subu plus addiu", f, &r, RET1, sp + 0x1010 + 16);
	free(f);
}

static void
test_signal(const struct arch *arch)
{
	char what[80];
	struct fake *f = fake_new(arch);
	/* The interrupted function: a leaf. */
	const uint32_t leaf[] = { LW(V0, 0, A0), SW(V0, 4, A0), JR_RA, NOP };
	uint64_t ls = code_at(f, leaf, 4);
	const uint32_t rt_tramp[] = { ADDIU(V0, ZERO, 4193), SYSCALL };
	uint64_t rt = code_at(f, rt_tramp, 2);
	const uint32_t tramp[] = { ADDIU(V0, ZERO, 4119), SYSCALL };
	uint64_t old = code_at(f, tramp, 2);

	for (int kind = 0; kind < 2; kind++) {
		uint64_t sp = SP0, sc = sp + (kind ? 176 : 24);
		memset(f->stack, 0, sizeof(f->stack));
		for (int k = 0; k < 32; k++)
			put(f->stack + (sc + 16 + 8 * (uint64_t)k - STACK_BASE),
			    0x1000 + (uint64_t)k, 8, arch->big_endian);
		put(f->stack + (sc + 16 + 8 * SP - STACK_BASE), SP0 + 0x400, 8, arch->big_endian);
		put(f->stack + (sc + 16 + 8 * RA - STACK_BASE), RET1, 8, arch->big_endian);
		put(f->stack + (sc + 8 - STACK_BASE), ls + 4, 8, arch->big_endian);
		struct arch_regs r;
		regs_init(&r, kind ? rt : old, sp, false, 0);
		struct mips_env e = env_of(f);
		enum unwind_stop stop;
		bool sig = false;
		snprintf(what, sizeof(what), "%s trampoline (%s)", kind ? "rt_sigreturn" : "sigreturn",
			 arch->name);
		int rc = unwind_mips_step(&e, &r, &sig, &stop);
		CHECK(rc == 0 && sig, "%s: recognized", what);
		CHECK(r.r[PC] == ls + 4, "%s: pc from sc_pc", what);
		CHECK(r.r[SP] == SP0 + 0x400, "%s: sp from sc_regs", what);
		CHECK(r.r[S1] == 0x1000 + S1, "%s: s1 from sc_regs", what);
		CHECK(r.valid & (UINT64_C(1) << RA), "%s: ra known", what);
		/* The interrupted leaf: its ra comes from the sigcontext. */
		f->sym_start = 0;
		snprintf(what, sizeof(what), "signal in a leaf (%s)", arch->name);
		expect_step(what, f, &r, RET1, SP0 + 0x400);
	}
	free(f);
}

static void
test_odd_pc_and_end(void)
{
	struct fake *f = fake_new(&arch_mipsel);
	struct arch_regs r;
	regs_init(&r, CODE_BASE + 0x41, SP0, true, RET1);
	expect_stop("microMIPS/MIPS16 pc", f, &r, UNWIND_STOP_ISA);

	/* glibc's __start saves no ra: the end of the stack, not an error. */
	const uint32_t start_code[] = {
		MOVE(RA, ZERO),
		ADDIU(SP, SP, -32),
		JALR_T9,
		NOP,
		NOP,
	};
	uint64_t s = code_at(f, start_code, 5);
	f->sym_start = s;
	f->sym_name = "__start";
	regs_init(&r, s + 16, SP0, false, 0);
	expect_stop("__start", f, &r, UNWIND_STOP_END);

	/* A saved ra of 0 ends the stack too. */
	struct fake *g = fake_new(&arch_mipsel);
	const uint32_t fn[] = { ADDIU(SP, SP, -32), SW(RA, 28, SP), JALR_T9, NOP, NOP };
	uint64_t gs = code_at(g, fn, 5);
	g->sym_start = gs;
	regs_init(&r, gs + 16, SP0, false, 0);
	expect_stop("saved ra is 0", g, &r, UNWIND_STOP_END);
	/* A saved ra pointing at no code is an implausible frame. */
	stack_word(g, SP0 + 28, 0x12345678);
	regs_init(&r, gs + 16, SP0, false, 0);
	expect_stop("saved ra outside code", g, &r, UNWIND_STOP_BAD_FRAME);
	/* A pc in no mapping with ra live (a call through a bad pointer). */
	regs_init(&r, 0x10, SP0, true, RET1);
	expect_step("pc unmapped, ra live", g, &r, RET1, SP0);
	free(g);
	free(f);
}

/* 64-bit code: daddiu / sd. */
static const struct arch arch_mips64el_test = {
	.name = "mips64el (test)", .e_machine = EM_MIPS, .elf_class = ELFCLASS64,
	.word_size = 8, .big_endian = false,
	.reg_ip = 32, .reg_sp = 29, .reg_fp = 30, .reg_ra = 31, .reg_zero = 0,
	.invalid_mask = UINT64_C(3) << 26,
};

static void
test_64bit(void)
{
	struct fake *f = fake_new(&arch_mips64el_test);
	const uint32_t fn[] = {
		DADDIU(SP, SP, -48),
		SD(RA, 40, SP),
		SD(S0, 32, SP),
		JALR_T9,
		NOP,
	};
	uint64_t start = code_at(f, fn, 5);
	f->sym_start = start;
	stack_word(f, SP0 + 40, RET1);
	stack_word(f, SP0 + 32, UINT64_C(0x123456789a));
	struct arch_regs r;
	regs_init(&r, start + 20, SP0, false, 0);
	expect_step("daddiu/sd", f, &r, RET1, SP0 + 48);
	CHECK(r.r[S0] == UINT64_C(0x123456789a), "64-bit s0 restored");
	free(f);
}

/* The o32 pr_reg layout: 6 pad words, r0..r31, lo, hi, epc, ... */
static void
test_prstatus(const struct arch *arch)
{
	unsigned char raw[45 * 4];
	memset(raw, 0xee, sizeof(raw));
	for (int k = 0; k < 32; k++)
		put(raw + 4 * (6 + k), 0x100 + (uint64_t)k, 4, arch->big_endian);
	put(raw + 4 * 40, 0x400123, 4, arch->big_endian);
	struct arch_regs r;
	CHECK(arch_regs_from_prstatus(arch, raw, sizeof(raw), &r) == 0, "prstatus (%s)", arch->name);
	CHECK(r.r[arch->reg_sp] == 0x100 + 29, "sp from pr_reg[35] (%s)", arch->name);
	CHECK(r.r[arch->reg_ra] == 0x100 + 31, "ra from pr_reg[37] (%s)", arch->name);
	CHECK(r.r[arch->reg_ip] == 0x400123, "pc from pr_reg[40] (%s)", arch->name);
	CHECK(r.r[0] == 0, "zero is zero");
	CHECK(arch_regs_from_prstatus(arch, raw, 40 * 4, &r) == -EINVAL, "short pr_reg refused");
}

/* Random code and stacks: every walk must end within its bound. */
static void
test_garbage(void)
{
	uint64_t seed = 0x9e3779b97f4a7c15u;
	struct fake *f = fake_new(&arch_mipsel);
	long total_steps = 0;
	for (int round = 0; round < 300; round++) {
		f->ncode = 0;
		for (size_t k = 0; k < 512; k++) {
			seed = seed * 6364136223846793005u + 1442695040888963407u;
			uint32_t w = (uint32_t)(seed >> 32);
			/* Mix in plausible prologue/epilogue pieces. */
			switch (w % 9) {
			case 0: w = ADDIU(SP, SP, (int)(w >> 8) % 64 - 32); break;
			case 1: w = SW(RA, (w >> 8) % 64, SP); break;
			case 2: w = JR_RA; break;
			case 3: w = MOVE(S8, SP); break;
			default: break;
			}
			code_at(f, &w, 1);
		}
		for (size_t k = 0; k < STACK_SIZE; k += 4) {
			seed = seed * 6364136223846793005u + 1442695040888963407u;
			uint32_t v = (uint32_t)(seed >> 32);
			if (v % 3 == 0)
				v = (uint32_t)(CODE_BASE + (v % 512) * 4);
			put(f->stack + k, v, 4, false);
		}
		f->sym_start = round % 2 ? CODE_BASE : 0;
		struct arch_regs r;
		regs_init(&r, CODE_BASE + 4 * (uint64_t)(round % 512), STACK_BASE + 0x100, true,
			  CODE_BASE + 64);
		r.r[S8] = STACK_BASE + 0x200;
		struct mips_env e = env_of(f);
		int steps = 0;
		for (; steps < 10000; steps++) {
			enum unwind_stop stop;
			bool sig;
			uint64_t pc = r.r[PC], sp = r.r[SP];
			bool exact = r.valid & (UINT64_C(1) << RA);
			if (unwind_mips_step(&e, &r, &sig, &stop) < 0)
				break;
			if (!sig && !(r.r[SP] > sp || (exact && r.r[SP] == sp))) {
				CHECK(0, "round %d: sp went from %#llx to %#llx", round,
				      (unsigned long long)sp, (unsigned long long)r.r[SP]);
				break;
			}
			if (r.r[PC] == pc && r.r[SP] == sp)
				break;
		}
		CHECK(steps < 10000, "round %d: walk ended (%d steps)", round, steps);
		total_steps += steps;
	}
	CHECK(total_steps > 0, "some garbage unwound at all");
	free(f);
}

int
main(void)
{
	test_frame(&arch_mipsel);
	test_frame(&arch_mips_be);
	test_epilogue_restored();
	test_leaf();
	test_delay_slot_store();
	test_pic_preamble();
	test_backward_boundaries();
	test_frame_pointer();
	test_early_return();
	test_big_frame();
	test_signal(&arch_mipsel);
	test_signal(&arch_mips_be);
	test_odd_pc_and_end();
	test_64bit();
	test_prstatus(&arch_mipsel);
	test_prstatus(&arch_mips_be);
	test_garbage();
	return check_exit_status("unit-mips");
}
