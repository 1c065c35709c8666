/* unwind/engine-mips.c - MIPS unwinding by prologue analysis (o32 first).
 *
 * MIPS code often has no usable CFI (Debian's mipsel GCC emits an empty
 * .eh_frame for C), so the frame of each function is read from its code:
 *
 *   addiu sp,sp,-N     frame size (daddiu on 64-bit; or lui/ori + subu for
 *                      frames over 32 KiB)
 *   sw ra,K(sp)        where the return address is saved (sd on 64-bit),
 *   sw s0..s8,K(sp)    and the callee-saved registers
 *   move s8,sp         a frame pointer (alloca, -fno-omit-frame-pointer):
 *                      the frame is then found from s8, not sp
 *
 * The scan runs forward from the function start (symbol table) to the pc.
 * Without a symbol it first scans backward from the pc to the frame
 * allocation or to a function boundary (a positive `addiu sp`, `jr ra`, or
 * the `lui gp` of a PIC preamble), never below the code mapping.  A frame
 * whose pc is exact (the innermost one, or one interrupted by a signal) may
 * be in an epilogue or a leaf: the code ahead of the pc tells how much of
 * the frame is still there, and `ra` comes from the register.  Caller
 * frames never use the `ra` register (the call overwrote it).
 *
 * Every scan is bounded (MIPS_SCAN_MAX instructions) and every step must
 * move the stack pointer up, so garbage ends the walk, it never loops.
 * unwind_mips_step() is pure code over callbacks (struct mips_env): the same code
 * unwinds a live MIPS process and a MIPS core file on an x86-64 host, and
 * tests/unit-mips.c feeds it hand-assembled instruction arrays.
 */
#include "config.h"

#include <elf.h>
#include <errno.h>
#include <string.h>

#include "arch/arch.h"
#include "unwind/cfi.h"
#include "unwind/engines.h"
#include "unwind/maps.h"
#include "unwind/memory.h"
#include "unwind/symbols.h"
#include "unwind/target.h"
#include "unwind/unwind.h"

#define MIPS_SCAN_MAX  1024   /* instructions per prologue scan */
#define MIPS_EPI_MAX   32     /* instructions looked at ahead of the pc */

/* Register numbers of the ISA, as instructions encode them (the arch/
 * table's slots 0..31 follow them; its reg_ip slot holds the pc). */
enum {
	R_ZERO = 0, R_V0 = 2, R_GP = 28, R_SP = 29, R_S8 = 30, R_RA = 31,
};

/* Opcodes (bits 31..26) and SPECIAL function codes. */
enum {
	OP_SPECIAL = 0x00, OP_REGIMM = 0x01, OP_J = 0x02, OP_JAL = 0x03,
	OP_BEQ = 0x04, OP_BGTZ = 0x07, OP_ADDIU = 0x09, OP_ORI = 0x0d,
	OP_LUI = 0x0f, OP_COP1 = 0x11, OP_BEQL = 0x14, OP_BGTZL = 0x17,
	OP_DADDIU = 0x19, OP_LW = 0x23, OP_SW = 0x2b, OP_LD = 0x37,
	OP_SD = 0x3f,
};
enum {
	FN_JR = 0x08, FN_JALR = 0x09, FN_SYSCALL = 0x0c, FN_ADDU = 0x21,
	FN_SUBU = 0x23, FN_OR = 0x25, FN_DADDU = 0x2d, FN_DSUBU = 0x2f,
};

#define OP(i)    ((i) >> 26)
#define RS(i)    (((i) >> 21) & 31)
#define RT(i)    (((i) >> 16) & 31)
#define RD(i)    (((i) >> 11) & 31)
#define FN(i)    ((i) & 63)
#define SIMM(i)  ((int64_t)(int16_t)((i) & 0xffff))

/* Registers a function saves in its frame and a caller may rely on. */
#define CALLEE_SAVED  (UINT64_C(0xff) << 16 | UINT64_C(1) << R_S8)

struct frame_info {
	int64_t size;             /* bytes allocated below the CFA at the pc */
	bool fp_based;            /* CFA = s8 + fp_cfa */
	int64_t fp_cfa;
	int64_t save[32];         /* slot of register i, relative to the CFA */
	uint32_t saved;           /* bit i: save[i] is known */
};

static bool
is_sp_adjust(uint32_t i, bool wide, int64_t *imm)
{
	if ((OP(i) == OP_ADDIU || (wide && OP(i) == OP_DADDIU)) &&
	    RS(i) == R_SP && RT(i) == R_SP) {
		*imm = SIMM(i);
		return true;
	}
	return false;
}

static bool
is_store_sp(uint32_t i, bool wide)
{
	return (OP(i) == OP_SW || (wide && OP(i) == OP_SD)) && RS(i) == R_SP;
}

static bool
is_load_sp(uint32_t i, bool wide)
{
	return (OP(i) == OP_LW || (wide && OP(i) == OP_LD)) && RS(i) == R_SP;
}

/* move rd,rs is addu/or/daddu rd,rs,zero (either operand order). */
static bool
is_move(uint32_t i, unsigned rd, unsigned rs)
{
	if (OP(i) != OP_SPECIAL || RD(i) != rd)
		return false;
	if (FN(i) != FN_ADDU && FN(i) != FN_OR && FN(i) != FN_DADDU)
		return false;
	return (RS(i) == rs && RT(i) == R_ZERO) || (RT(i) == rs && RS(i) == R_ZERO);
}

/* The register an ALU or load instruction writes, or -1. */
static int
dest_reg(uint32_t i)
{
	unsigned op = OP(i);
	if (op == OP_SPECIAL)
		return FN(i) == FN_JR || FN(i) == FN_SYSCALL ? -1 : (int)RD(i);
	if (op == OP_REGIMM || op == OP_J || (op >= OP_BEQ && op <= OP_BGTZ) ||
	    (op >= OP_BEQL && op <= OP_BGTZL) || (op >= 0x10 && op <= 0x13))
		return -1;
	if (op == OP_JAL)
		return R_RA;
	if ((op >= 0x28 && op <= 0x2f) || op >= 0x38)
		return -1;        /* stores */
	return (int)RT(i);
}

/* Does i (not a branch) write sp otherwise than addiu sp,sp,imm? */
static bool
writes_sp(uint32_t i)
{
	unsigned op = OP(i);
	if (op == OP_SPECIAL)
		return RD(i) == R_SP;
	bool store = (op >= 0x28 && op <= 0x2f) || op >= 0x38;
	bool cop = op >= 0x10 && op <= 0x13;
	return !store && !cop && RT(i) == R_SP;
}

static bool
is_jr_ra(uint32_t i)
{
	/* jr ra; release 6 encodes it as jalr zero,ra. */
	return OP(i) == OP_SPECIAL && RS(i) == R_RA &&
	       (FN(i) == FN_JR || (FN(i) == FN_JALR && RD(i) == R_ZERO));
}

/* Jumps and calls: after one of these (and its delay slot) the prologue is
 * over.  Conditional branches are not: shrink-wrapped functions test and
 * return early before they allocate their frame. */
static bool
is_jump(uint32_t i)
{
	if (OP(i) == OP_J || OP(i) == OP_JAL)
		return true;
	if (OP(i) == OP_SPECIAL && (FN(i) == FN_JR || FN(i) == FN_JALR))
		return true;
	/* bal/bltzal/bgezal */
	return OP(i) == OP_REGIMM && (RT(i) & 0x1e) == 0x10;
}

static bool
is_branch(uint32_t i)
{
	if (is_jump(i))
		return true;
	if ((OP(i) >= OP_BEQ && OP(i) <= OP_BGTZ) || (OP(i) >= OP_BEQL && OP(i) <= OP_BGTZL))
		return true;
	if (OP(i) == OP_REGIMM)
		return true;
	return OP(i) == OP_COP1 && RS(i) == 8;  /* bc1f/bc1t */
}

static int
read_insn(const struct mips_env *env, uint64_t addr, uint32_t *out)
{
	unsigned char b[4];
	if (env->read(env->ctx, addr, b, 4) < 0)
		return -EFAULT;
	*out = (uint32_t)arch_get_uint(b, 4, env->arch->big_endian);
	return 0;
}

static int
read_uint(const struct mips_env *env, uint64_t addr, unsigned size, uint64_t *out)
{
	unsigned char b[8];
	if (size > sizeof(b) || env->read(env->ctx, addr, b, size) < 0)
		return -EFAULT;
	*out = arch_get_uint(b, size, env->arch->big_endian);
	return 0;
}

static uint64_t
mask_word(const struct mips_env *env, uint64_t v)
{
	return env->arch->word_size == 4 ? (uint32_t)v : v;
}

/* The sigreturn trampoline: li v0,NR; syscall (the numbers and the
 * frame layout are the arch/ table's).  Returns the offset of the
 * sigcontext above sp, or 0 if pc is not a trampoline. */
static int64_t
sigtramp_sc(const struct mips_env *env, uint64_t pc)
{
	const struct arch_sigframe *sf = env->arch->sigframe;
	uint32_t i0, i1;
	if (!sf || (pc & 3) || read_insn(env, pc, &i0) < 0 || read_insn(env, pc + 4, &i1) < 0)
		return 0;
	if (OP(i1) != OP_SPECIAL || FN(i1) != FN_SYSCALL)
		return 0;
	if (OP(i0) != OP_ADDIU || RS(i0) != R_ZERO || RT(i0) != R_V0)
		return 0;
	if (SIMM(i0) == sf->nr_sigreturn)
		return (int64_t)sf->sigframe_sc;
	if (SIMM(i0) == sf->nr_rt_sigreturn)
		return (int64_t)sf->rt_sigframe_sc;
	return 0;
}

/* Start of the function containing pc when there is no symbol: scan back
 * to its frame allocation or to the end of the function before it. */
static int
scan_back(const struct mips_env *env, uint64_t pc, uint64_t *start)
{
	bool wide = env->arch->word_size == 8;
	uint64_t lo = 0, hi = 0;
	if (env->code(env->ctx, pc, &lo, &hi) < 0)
		lo = pc > 4 * MIPS_SCAN_MAX ? pc - 4 * MIPS_SCAN_MAX : 0;
	uint64_t a = pc;
	for (int n = 0; n < MIPS_SCAN_MAX && a >= lo + 4; n++) {
		a -= 4;
		uint32_t i;
		int64_t imm;
		if (read_insn(env, a, &i) < 0) {
			*start = a + 4;
			return 0;
		}
		if (is_sp_adjust(i, wide, &imm)) {
			/* Our own allocation, or the last instruction (usually a
			 * delay slot) of the function before. */
			*start = imm < 0 ? a : a + 4;
			return 0;
		}
		if (is_jr_ra(i)) {
			*start = a + 8;   /* past its delay slot */
			return 0;
		}
		if (OP(i) == OP_LUI && RT(i) == R_GP) {
			*start = a;       /* PIC preamble: lui gp,%hi(_gp_disp) */
			return 0;
		}
	}
	if (a <= lo && lo != 0) {
		*start = lo;
		return 0;
	}
	return -ENOENT;
}

/* A function found by scan_back() that shows no frame before pc, although
 * pc is a return address (so the function did save ra): scan_back()
 * stopped at an epilogue in the middle of the function, `jr ra` with
 * `addiu sp,sp,N` in its delay slot just before start, and pc is on
 * another path of the same body, where the frame is whole.  The loads of
 * that epilogue mirror the prologue's stores: the frame is N bytes, and
 * each `lw r,K(sp)` says r is saved at K.  Returns 0 with *fi filled, or
 * -ENOENT (no such epilogue, or one that does not load ra). */
static int
mirror_epilogue(const struct mips_env *env, uint64_t start, struct frame_info *fi)
{
	bool wide = env->arch->word_size == 8;
	uint32_t i;
	int64_t size;
	if (start < 8 || read_insn(env, start - 4, &i) < 0 ||
	    !is_sp_adjust(i, wide, &size) || size <= 0 ||
	    read_insn(env, start - 8, &i) < 0 || !is_jr_ra(i))
		return -ENOENT;
	memset(fi, 0, sizeof(*fi));
	fi->size = size;
	uint64_t a = start - 8;
	for (int n = 0; n < MIPS_EPI_MAX && a >= 4; n++) {
		a -= 4;
		if (read_insn(env, a, &i) < 0 || is_branch(i) || writes_sp(i))
			break;
		if (is_load_sp(i, wide)) {
			unsigned r = RT(i);
			if (((CALLEE_SAVED | UINT64_C(1) << R_RA) >> r & 1) &&
			    !(fi->saved & (1u << r)) && SIMM(i) >= 0 && SIMM(i) < size) {
				fi->save[r] = SIMM(i) - size;
				fi->saved |= 1u << r;
			}
		}
	}
	return fi->saved & (1u << R_RA) ? 0 : -ENOENT;
}

/* Scan [start, pc) for the frame set up so far. */
static int
scan_prologue(const struct mips_env *env, uint64_t start, uint64_t pc,
	      struct frame_info *fi)
{
	bool wide = env->arch->word_size == 8;
	int64_t konst[32];
	uint32_t known = 0;
	uint64_t stop_at = 0;
	bool allocated = false;

	memset(fi, 0, sizeof(*fi));
	uint64_t a = start;
	for (int n = 0; n < MIPS_SCAN_MAX && a < pc; n++, a += 4) {
		uint32_t i;
		int64_t imm;
		if (read_insn(env, a, &i) < 0)
			return -EFAULT;
		if (is_sp_adjust(i, wide, &imm)) {
			if (imm > 0)
				break;    /* an epilogue: the prologue is behind us */
			fi->size -= imm;
			allocated = true;
		} else if (OP(i) == OP_SPECIAL && RD(i) == R_SP && RS(i) == R_SP &&
			   (FN(i) == FN_SUBU || FN(i) == FN_DSUBU) &&
			   (known & (1u << RT(i)))) {
			/* Frames over 32 KiB: li t0,N; subu sp,sp,t0. */
			fi->size += konst[RT(i)];
			allocated = true;
		} else if (OP(i) == OP_SPECIAL && RD(i) == R_SP && RS(i) == R_SP &&
			   (FN(i) == FN_ADDU || FN(i) == FN_DADDU) &&
			   (known & (1u << RT(i))) && konst[RT(i)] < 0) {
			fi->size -= konst[RT(i)];
			allocated = true;
		} else if (is_store_sp(i, wide)) {
			unsigned r = RT(i);
			if (((CALLEE_SAVED | UINT64_C(1) << R_RA) >> r & 1) &&
			    !(fi->saved & (1u << r))) {
				fi->save[r] = SIMM(i) - fi->size;
				fi->saved |= 1u << r;
			}
		} else if (is_move(i, R_S8, R_SP)) {
			fi->fp_based = true;
			fi->fp_cfa = fi->size;
		} else if ((OP(i) == OP_ADDIU || (wide && OP(i) == OP_DADDIU)) &&
			   RT(i) == R_S8 && RS(i) == R_SP) {
			fi->fp_based = true;
			fi->fp_cfa = fi->size - SIMM(i);
		} else if (OP(i) == OP_LUI) {
			konst[RT(i)] = (int64_t)(int32_t)((i & 0xffff) << 16);
			known |= 1u << RT(i);
		} else if (OP(i) == OP_ORI && (known & (1u << RS(i)))) {
			konst[RT(i)] = konst[RS(i)] | (int64_t)(i & 0xffff);
			known |= 1u << RT(i);
		} else if (OP(i) == OP_ADDIU && RS(i) == R_ZERO) {
			konst[RT(i)] = SIMM(i);
			known |= 1u << RT(i);
		} else {
			/* Anything else written is no longer a known constant. */
			int d = dest_reg(i);
			if (d > 0)
				known &= ~(1u << d);
		}
		if (a == stop_at)
			break;            /* the delay slot of the first jump */
		if (allocated && !stop_at && is_jump(i))
			stop_at = a + 4;
	}
	if (fi->size < 0 || fi->size > (1 << 24))
		return -EINVAL;
	return 0;
}

/* What the code ahead of an exact pc says: returns 1 if pc is in an
 * epilogue whose sp is already (partly) restored, filling *fi relative to
 * the current sp (size = what is still to be popped; save = loads still to
 * come); 0 if not, or if the frame pointer is still to be moved into sp
 * (then the prologue scan knows better). */
static int
scan_epilogue(const struct mips_env *env, uint64_t pc, struct frame_info *fi)
{
	bool wide = env->arch->word_size == 8;
	memset(fi, 0, sizeof(*fi));
	uint64_t a = pc;
	for (int n = 0; n < MIPS_EPI_MAX; n++, a += 4) {
		uint32_t i;
		int64_t imm;
		if (read_insn(env, a, &i) < 0)
			return 0;
		if (is_jr_ra(i)) {
			uint32_t d;
			if (read_insn(env, a + 4, &d) < 0)
				return 0;
			if (is_sp_adjust(d, wide, &imm)) {
				if (imm < 0)
					return 0;
				fi->size += imm;
			}
			break;
		}
		if (is_branch(i))
			return 0;
		if (is_move(i, R_SP, R_S8))
			return 0;
		if (is_sp_adjust(i, wide, &imm)) {
			if (imm < 0)
				return 0;
			fi->size += imm;
		} else if (is_load_sp(i, wide)) {
			unsigned r = RT(i);
			if (((CALLEE_SAVED | UINT64_C(1) << R_RA) >> r & 1) &&
			    !(fi->saved & (1u << r))) {
				/* Offsets from the CFA, which is sp + the total
				 * still to pop: fixed up below. */
				fi->save[r] = SIMM(i) + fi->size;
				fi->saved |= 1u << r;
			}
		} else if (OP(i) == OP_SPECIAL && FN(i) == FN_SYSCALL) {
			return 0;
		} else if (writes_sp(i)) {
			return 0;         /* not an epilogue we know */
		}
		if (n == MIPS_EPI_MAX - 1)
			return 0;
	}
	for (unsigned r = 0; r < 32; r++)
		if (fi->saved & (1u << r))
			fi->save[r] -= fi->size;
	return 1;
}

static bool
code_ok(const struct mips_env *env, uint64_t pc)
{
	uint64_t lo, hi;
	if (env->code(env->ctx, pc & ~(uint64_t)1, &lo, &hi) == 0)
		return true;
	/* Older kernels and qemu put the trampoline on the stack. */
	return sigtramp_sc(env, pc) != 0;
}

static int
step_signal(const struct mips_env *env, struct arch_regs *regs, int64_t sc_off,
	    enum unwind_stop *stop)
{
	const struct arch_sigframe *sf = env->arch->sigframe;
	const int pc_slot = env->arch->reg_ip;
	uint64_t sc = mask_word(env, regs->r[R_SP] + (uint64_t)sc_off);
	uint64_t v[32], pc;
	for (int k = 0; k < 32; k++) {
		if (read_uint(env, sc + sf->sc_regs + 8 * (uint64_t)k, 8, &v[k]) < 0) {
			*stop = UNWIND_STOP_MEMORY;
			return -1;
		}
	}
	if (read_uint(env, sc + sf->sc_pc, 8, &pc) < 0) {
		*stop = UNWIND_STOP_MEMORY;
		return -1;
	}
	for (int k = 0; k < 32; k++)
		regs->r[k] = mask_word(env, v[k]);
	regs->r[pc_slot] = mask_word(env, pc);
	regs->r[R_ZERO] = 0;
	/* The interrupted frame is exact: ra too may be used if it is a
	 * leaf (tests/unit-mips.c "signal in a leaf"). */
	regs->valid = (((UINT64_C(1) << 32) - 1) | UINT64_C(1) << pc_slot) &
		      ~env->arch->invalid_mask;
	return 0;
}

/* The frame of the function at pc (exact: the innermost frame, or an
 * interrupted one, whose ra is live): from the instructions after pc
 * when they tear it down, else from its prologue, its start known by a
 * symbol (*name, when it has one) or found by scanning back.  Returns 1
 * with *fi, 0 when there is no frame to use (a call through a bad
 * pointer, or past the epilogue: *fi as the epilogue left it), -1 with
 * *stop. */
static int
find_frame(const struct mips_env *env, uint64_t pc, bool exact, struct frame_info *fi,
	   const char **name, enum unwind_stop *stop)
{
	uint32_t insn;
	if (read_insn(env, pc, &insn) < 0) {
		/* A call through a bad pointer: the caller is in ra. */
		if (!exact) {
			*stop = UNWIND_STOP_MEMORY;
			return -1;
		}
		memset(fi, 0, sizeof(*fi));
		return 0;
	}
	if (exact && scan_epilogue(env, pc, fi) == 1)
		return 0;   /* past the point where the frame is torn down (or a leaf) */
	/* A return address follows the call and its delay slot: the call
	 * itself is what belongs to the caller's function. */
	uint64_t look = exact ? pc : pc - 4, start;
	bool scanned = false;
	if (env->func(env->ctx, look, &start, name) < 0 || start > look) {
		*name = NULL;
		if (scan_back(env, exact ? pc + 4 : pc, &start) < 0) {
			*stop = UNWIND_STOP_NOINFO;
			return -1;
		}
		scanned = true;
	}
	if (scan_prologue(env, start, pc, fi) < 0) {
		*stop = UNWIND_STOP_NOINFO;
		return -1;
	}
	if (env->outermost && !exact && !(fi->saved & (1u << R_RA)) &&
	    env->outermost(env->ctx, pc, start)) {
		/* A stack's first function: it saves no ra, and nothing
		 * called it (a stripped program or libc has no name for it
		 * to be known by). */
		*stop = UNWIND_STOP_END;
		return -1;
	}
	if (scanned && !exact && !(fi->saved & (1u << R_RA)) && fi->size == 0)
		mirror_epilogue(env, start, fi);
	return 1;
}

/* The caller's pc: the ra saved in the frame (at cfa), or still in its
 * register in an exact frame.  Returns 0, or -1 with *stop (glibc's entry
 * points, by name, end the stack). */
static int
caller_ra(const struct mips_env *env, const struct arch_regs *regs,
	  const struct frame_info *fi, uint64_t cfa, bool exact, const char *name,
	  uint64_t *ra, enum unwind_stop *stop)
{
	if (fi->saved & (1u << R_RA)) {
		if (read_uint(env, cfa + (uint64_t)fi->save[R_RA], env->arch->word_size, ra) < 0) {
			*stop = UNWIND_STOP_MEMORY;
			return -1;
		}
	} else if (exact) {
		*ra = regs->r[R_RA];   /* a leaf, or ra not stored yet */
	} else if (name && (strcmp(name, "__start") == 0 || strcmp(name, "_start") == 0 ||
			    strcmp(name, "__thread_start") == 0)) {
		/* glibc's entry points never return and save no ra. */
		*stop = UNWIND_STOP_END;
		return -1;
	} else {
		*stop = UNWIND_STOP_NOINFO;
		return -1;
	}
	return 0;
}

/* The callee-saved registers (s0-s7, s8) the frame saved at cfa, into
 * regs: all read before any is written, so that a failed read leaves
 * regs as they were.  Returns the mask of those restored, or -1 with
 * *stop. */
static int64_t
restore_saved(const struct mips_env *env, struct arch_regs *regs,
	      const struct frame_info *fi, uint64_t cfa, enum unwind_stop *stop)
{
	uint64_t restored[32];
	uint32_t got = 0;
	for (unsigned r = 16; r <= R_S8; r++) {
		if (r > 23 && r != R_S8)
			continue;
		if (!(fi->saved & (1u << r)))
			continue;
		uint64_t v;
		if (read_uint(env, cfa + (uint64_t)fi->save[r], env->arch->word_size, &v) < 0) {
			*stop = UNWIND_STOP_MEMORY;
			return -1;
		}
		restored[r] = v;
		got |= 1u << r;
	}
	for (unsigned r = 16; r <= R_S8; r++)
		if (got & (1u << r))
			regs->r[r] = restored[r];
	return got;
}

int
unwind_mips_step(const struct mips_env *env, struct arch_regs *regs, bool *signal,
	  enum unwind_stop *stop)
{
	const uint64_t bit_ra = UINT64_C(1) << R_RA;
	const int pc_slot = env->arch->reg_ip;
	uint64_t pc = regs->r[pc_slot], sp = regs->r[R_SP];
	bool exact = regs->valid & bit_ra;   /* innermost, or interrupted */

	*signal = false;
	if (!(regs->valid & (UINT64_C(1) << pc_slot)) || !(regs->valid & (UINT64_C(1) << R_SP))) {
		*stop = UNWIND_STOP_NOINFO;
		return -1;
	}
	if (pc & 1) {
		/* microMIPS and MIPS16 code: other encodings, not decoded. */
		*stop = UNWIND_STOP_ISA;
		return -1;
	}
	if (pc & 3) {
		*stop = UNWIND_STOP_BAD_FRAME;
		return -1;
	}
	int64_t sc_off = sigtramp_sc(env, pc);
	if (sc_off) {
		if (step_signal(env, regs, sc_off, stop) < 0)
			return -1;
		*signal = true;
		return 0;
	}

	struct frame_info fi;
	uint64_t cfa, ra;
	const char *name = NULL;
	int have_frame = find_frame(env, pc, exact, &fi, &name, stop);
	if (have_frame < 0)
		return -1;

	if (have_frame && fi.fp_based) {
		if (!(regs->valid & (UINT64_C(1) << R_S8))) {
			*stop = UNWIND_STOP_NOINFO;
			return -1;
		}
		cfa = mask_word(env, regs->r[R_S8] + (uint64_t)fi.fp_cfa);
	} else {
		cfa = mask_word(env, sp + (uint64_t)fi.size);
	}

	if (caller_ra(env, regs, &fi, cfa, exact, name, &ra, stop) < 0)
		return -1;
	if (ra == 0) {
		*stop = UNWIND_STOP_END;
		return -1;
	}
	/* The stack grows down: a caller's frame is never below ours, and only
	 * a frameless exact frame may leave sp where it was. */
	if (cfa < sp || (cfa == sp && !exact) || (cfa & 3)) {
		*stop = UNWIND_STOP_BAD_FRAME;
		return -1;
	}
	uint64_t lo, hi;
	if (env->stack && env->stack(env->ctx, sp, &lo, &hi) == 0 && cfa > hi) {
		*stop = UNWIND_STOP_BAD_FRAME;
		return -1;
	}
	if (!code_ok(env, ra)) {
		*stop = UNWIND_STOP_BAD_FRAME;
		return -1;
	}

	int64_t got = restore_saved(env, regs, &fi, cfa, stop);
	if (got < 0)
		return -1;
	/* Caller-saved registers are unknown in the caller; so is its ra,
	 * which its call overwrote. */
	regs->valid &= CALLEE_SAVED;
	regs->valid |= (uint64_t)got | UINT64_C(1) << R_SP | UINT64_C(1) << pc_slot;
	regs->r[R_SP] = cfa;
	regs->r[pc_slot] = ra;
	return 0;
}

/* ---- over an unwind_target ----------------------------------------------- */

struct target_ctx {
	struct unwind_target *t;
	struct memory_reader *mr;
};

static int
tgt_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct target_ctx *c = ctx;
	return unwind_memory_read(c->mr, addr, buf, len);
}

static int
tgt_func(void *ctx, uint64_t addr, uint64_t *start, const char **name)
{
	struct target_ctx *c = ctx;
	struct mapping *m = unwind_target_mapping(c->t, addr);
	if (!m || !m->image || !m->bias_known)
		return -ENOENT;
	uint64_t off = 0;
	const char *s = unwind_elf_image_lookup(m->image, addr - m->bias,
						UNWIND_SYM_NO_DEMANGLE, &off);
	if (!s) {
		/* A stripped library: its FDEs' ranges are the function
		 * bounds (libc has them; mid-function epilogues otherwise
		 * stop the backward scan: tests/mips-core.test, dynamic
		 * abort). */
		struct cfi_fde f;
		if (unwind_cfi_find(m->image, addr - m->bias, &f) < 0)
			return -ENOENT;
		*start = f.start + m->bias;
		*name = NULL;
		return 0;
	}
	*start = addr - off;
	*name = s;
	return 0;
}

static bool
tgt_outermost(void *ctx, uint64_t pc, uint64_t start)
{
	struct target_ctx *c = ctx;
	struct mapping *m = unwind_target_mapping(c->t, pc);
	if (!m || !m->image || !m->bias_known)
		return false;
	/* The file's entry point (a program's _start, which nothing calls;
	 * a library's entry only runs when the library is run as one). */
	if (m->image->entry && m->image->entry + m->bias == start)
		return true;
	/* An FDE that marks the return address undefined from its start
	 * (glibc's __start and clone). */
	struct cfi_fde f;
	return unwind_cfi_find(m->image, pc - m->bias, &f) == 0 && unwind_cfi_fde_ra_undefined(&f);
}

static int
tgt_code(void *ctx, uint64_t addr, uint64_t *lo, uint64_t *hi)
{
	struct target_ctx *c = ctx;
	struct mapping *m = unwind_target_mapping(c->t, addr);
	if (!m || !(m->perms & MAPPING_X))
		return -ENOENT;
	*lo = m->start;
	*hi = m->end;
	return 0;
}

static int
tgt_stack(void *ctx, uint64_t addr, uint64_t *lo, uint64_t *hi)
{
	struct target_ctx *c = ctx;
	struct mapping *m = unwind_module_map_find(&c->t->maps, addr);
	if (!m || (m->perms & MAPPING_X))
		return -ENOENT;
	*lo = m->start;
	*hi = m->end;
	return 0;
}

static enum unwind_stop
mips_walk(struct unwind_target *t, struct memory_reader *mr, struct arch_regs *regs,
	  struct unwind_frame *frames, int *n, int max)
{
	struct target_ctx ctx = { .t = t, .mr = mr };
	const struct mips_env env = {
		.arch = unwind_target_arch(t),
		.ctx = &ctx,
		.read = tgt_read,
		.func = tgt_func,
		.code = tgt_code,
		.stack = tgt_stack,
		.outermost = tgt_outermost,
	};
	if (env.arch->e_machine != EM_MIPS)
		return UNWIND_STOP_UNSUPPORTED;
	while (*n < max) {
		enum unwind_stop stop;
		bool signal;
		uint64_t pc = regs->r[env.arch->reg_ip], sp = regs->r[R_SP];
		if (unwind_mips_step(&env, regs, &signal, &stop) < 0)
			return stop;
		/* A sigcontext pointing at itself must not repeat forever. */
		if (regs->r[env.arch->reg_ip] == pc && regs->r[R_SP] == sp)
			return UNWIND_STOP_BAD_FRAME;
		if (signal)
			frames[*n - 1].signal_frame = true;
		frames[*n].ip = regs->r[env.arch->reg_ip];
		frames[*n].how = UNWIND_HOW_MIPS;
		frames[*n].signal_frame = false;
		(*n)++;
	}
	return UNWIND_STOP_DEPTH;
}

const struct unwinder unwinder_mips = {
	.first_how = UNWIND_HOW_MIPS,
	.walk = mips_walk,
};
