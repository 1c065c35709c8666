/* unwind/cfi-exec.c - stackspy's own interpreter of DWARF call frame
 * instructions and of the DWARF expressions they hold, for any
 * architecture on any host.
 *
 * unwind_cfi_rules_at() runs an FDE's CIE and FDE instructions up to a pc and
 * gives the rule of the CFA and of each register column; unwind_cfi_apply() turns
 * the registers of a frame into its caller's by those rules, reading the
 * target through a callback.  Register columns are the DWARF numbers,
 * which are the arch/ table's slots (arch/arch.h).  It computes every
 * row engine-dwarf.c walks: live processes and cores, every
 * architecture, on any host.
 *
 * The instructions and expressions are the target's bytes, read by root:
 * every read is bounded by its entry, and the work by counts (cfi.h,
 * CFI_MAX_*): a rule that breaks one is refused with its own error code
 * (engine-dwarf.c stops the walk there: "unwind table rejected"), never
 * a signal, an undefined operation or a hang.
 * tests/unit-cfi.c, tests/security-cfi.test, tests/fuzz/fuzz-cfi.c.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "arch/arch.h"
#include "unwind/cfi.h"

/* The call frame instructions beyond cfi.h's (DWARF 5, 6.4.2, and the GNU
 * extensions GCC emits). */
enum {
	OP_set_loc = 0x01,
	OP_advance_loc1 = 0x02,
	OP_advance_loc2 = 0x03,
	OP_advance_loc4 = 0x04,
	OP_restore_extended = 0x06,
	OP_remember_state = 0x0a,
	OP_restore_state = 0x0b,
	OP_def_cfa_expression = 0x0f,
	OP_expression = 0x10,
	OP_offset_extended_sf = 0x11,
	OP_def_cfa_sf = 0x12,
	OP_def_cfa_offset_sf = 0x13,
	OP_val_offset = 0x14,
	OP_val_offset_sf = 0x15,
	OP_val_expression = 0x16,
	/* DW_CFA_GNU_window_save, which aarch64 reuses as
	 * DW_CFA_AARCH64_negate_ra_state: the return address is signed from
	 * here on (pac-ret: after paciasp), or no longer (after autiasp);
	 * SPARC's register windows are not followed. */
	OP_GNU_window_save = 0x2d,
	OP_GNU_args_size = 0x2e,
	OP_GNU_negative_offset_extended = 0x2f,
	OP_advance_loc = 0x40,
	OP_restore = 0xc0,
};

struct reader {
	const unsigned char *p, *end;
	bool be;
	bool bad;
};

/* A LEB128 number (enc: CFI_PE_uleb128 or CFI_PE_sleb128), through the
 * one reader of encodings (cfi-read.c). */
static uint64_t
rd_leb(struct reader *r, unsigned enc)
{
	static const struct cfi_section none = { .eh = true };
	uint64_t v = 0;
	size_t n = unwind_cfi_read_encoded(&none, r->p, r->end, enc, 0, false, &v);
	if (!n) {
		r->bad = true;
		r->p = r->end;
		return 0;
	}
	r->p += n;
	return v;
}

static uint64_t
rd_uleb(struct reader *r)
{
	return rd_leb(r, CFI_PE_uleb128);
}

static int64_t
rd_sleb(struct reader *r)
{
	return (int64_t)rd_leb(r, CFI_PE_sleb128);
}

static uint64_t
rd_fixed(struct reader *r, unsigned size)
{
	if ((size_t)(r->end - r->p) < size) {
		r->bad = true;
		r->p = r->end;
		return 0;
	}
	uint64_t v = arch_get_uint(r->p, size, r->be);
	r->p += size;
	return v;
}

/* A block (DW_FORM_block: uleb length, then the bytes). */
static void
rd_block(struct reader *r, const unsigned char **p, size_t *len)
{
	uint64_t n = rd_uleb(r);
	if (r->bad || n > (uint64_t)(r->end - r->p)) {
		r->bad = true;
		return;
	}
	*p = r->p;
	*len = (size_t)n;
	r->p += n;
}

static struct cfi_rule *
column(struct cfi_rules *rs, uint64_t reg)
{
	/* Columns beyond the table's registers (vector and floating-point
	 * registers, 0xffffffff) are not needed to find a caller: written
	 * to a scratch rule, one per thread (unwinder threads run rows at
	 * once). */
	static _Thread_local struct cfi_rule ignored;
	return reg < CFI_MAX_COLUMNS ? &rs->reg[reg] : &ignored;
}

/* off * factor, wrapping as the target's arithmetic would (an offset of
 * hostile bytes times the data alignment must not overflow in C). */
static int64_t
factored(int64_t off, int64_t factor)
{
	return (int64_t)((uint64_t)off * (uint64_t)factor);
}

/* DW_CFA_offset_extended and its kin: a register, then its offset
 * (unsigned, or signed: sf) times factor. */
static void
rule_offset(struct cfi_rules *rs, struct reader *r, enum cfi_rule_kind kind, bool sf,
	    int64_t factor)
{
	struct cfi_rule *c = column(rs, rd_uleb(r));
	int64_t off = sf ? rd_sleb(r) : (int64_t)rd_uleb(r);
	c->kind = kind;
	c->off = factored(off, factor);
}

/* DW_CFA_register: a column held in another register. */
static void
rule_register(struct cfi_rules *rs, struct reader *r)
{
	struct cfi_rule *c = column(rs, rd_uleb(r));
	c->kind = CFI_RULE_REGISTER;
	c->reg = rd_uleb(r);
}

/* DW_CFA_expression, DW_CFA_val_expression: a column's rule is a DWARF
 * expression (kind says which). */
static void
rule_expr(struct cfi_rules *rs, struct reader *r, enum cfi_rule_kind kind)
{
	struct cfi_rule *c = column(rs, rd_uleb(r));
	c->kind = kind;
	rd_block(r, &c->expr, &c->expr_len);
}

/* DW_CFA_def_cfa and its _sf form: the CFA is a register plus an offset. */
static void
def_cfa(struct cfi_rules *rs, struct reader *r, bool sf, int64_t da)
{
	rs->cfa.kind = CFI_RULE_REGISTER;
	rs->cfa.reg = rd_uleb(r);
	rs->cfa.off = sf ? factored(rd_sleb(r), da) : (int64_t)rd_uleb(r);
}

/* DW_CFA_restore and its _extended form: column col back to the CIE's
 * rule (init; NULL while the CIE runs, where it is invalid). */
static int
restore(struct cfi_rules *rs, const struct cfi_rules *init, uint64_t col)
{
	if (!init)
		return -EINVAL;
	*column(rs, col) = *column((struct cfi_rules *)init, col);
	return 0;
}

/* DW_CFA_set_loc: 0 with *loc moved, 1 when the new location is past pc
 * (the rules hold), -EINVAL unless the FDE's addresses are absolute. */
static int
set_loc(struct reader *r, const struct cfi_fde *f, unsigned addr_size, uint64_t pc,
	uint64_t *loc)
{
	if (f->cie.fde_enc != CFI_PE_absptr)
		return -EINVAL;
	uint64_t to = rd_fixed(r, addr_size);
	if (to > pc)
		return 1;
	*loc = to;
	return 0;
}

/* DW_CFA_remember_state, DW_CFA_restore_state: a row pushed on, or popped
 * off, saved[] (*nsaved deep), each copy charged to *budget.  0, or the
 * negative code of unwind_cfi_rules_at. */
static int
state_op(struct cfi_rules *rs, bool remember, struct cfi_rules *saved, unsigned *nsaved,
	 unsigned long *budget)
{
	if (remember ? *nsaved == CFI_MAX_STATES : *nsaved == 0)
		return remember ? -EOVERFLOW : -EINVAL;
	if (*budget < CFI_STATE_COST)
		return -E2BIG;
	*budget -= CFI_STATE_COST;
	if (remember)
		saved[(*nsaved)++] = *rs;
	else
		/* The whole row, the CFA's rule too, as libgcc, libunwind
		 * and libdw do: GCC's epilogues rely on it (def_cfa sp
		 * before the ret, restore_state after). */
		*rs = saved[--*nsaved];
	return 0;
}

/* Run the instructions [p, end) on *rs, from location *loc, stopping
 * before the first row that starts past pc.  init: the CIE's rules, for
 * DW_CFA_restore (NULL while running the CIE itself).  *budget: the
 * instructions left to run for this row.  Returns 0, 1 when pc was
 * passed (the rules hold), or a negative code of unwind_cfi_rules_at.
 *
 * Each row runs the FDE from its start: a stream of remember_state/
 * restore_state pairs (each copies a row) or of nops costs its length at
 * every sample, hence the budget.  DW_CFA_set_loc: absolute addresses
 * only (DW_EH_PE_absptr, what .debug_frame has); pc-relative ones are
 * not written by the toolchains stackspy meets.  One switch for every
 * instruction: the interpreter is a third of an unwind's instructions,
 * and a second dispatch for the rules cost 5 % of them
 * (bench/unwind-cost.sh under callgrind). */
static int
run(const unsigned char *p, const unsigned char *end, const struct cfi_fde *f,
    unsigned addr_size, bool be, uint64_t pc, uint64_t *loc, struct cfi_rules *rs,
    const struct cfi_rules *init, unsigned long *budget)
{
	/* DW_CFA_remember_state's stack: GCC nests them one or two deep. */
	struct cfi_rules saved[CFI_MAX_STATES];
	unsigned nsaved = 0;
	struct reader r = { .p = p, .end = end, .be = be };
	const uint64_t ca = f->cie.code_align;
	const int64_t da = f->cie.data_align;

	if ((size_t)(end - p) > CFI_MAX_INSN_BYTES)
		return -E2BIG;
	while (r.p < r.end && !r.bad) {
		unsigned op = *r.p++;
		if (*budget == 0)
			return -E2BIG;
		--*budget;
		uint64_t adv = 0;
		struct cfi_rule *c;
		int rc = 0;
		switch (op & 0xc0) {
		case OP_advance_loc:
			adv = (op & 0x3f) * ca;
			goto advance;
		case CFI_OP_offset:
			c = column(rs, op & 0x3f);
			c->kind = CFI_RULE_OFFSET;
			c->off = factored((int64_t)rd_uleb(&r), da);
			continue;
		case OP_restore:
			if ((rc = restore(rs, init, op & 0x3f)) < 0)
				return rc;
			continue;
		}
		switch (op) {
		case CFI_OP_nop:
			continue;
		case OP_GNU_window_save:
			rs->ra_signed = !rs->ra_signed;
			continue;
		case OP_set_loc:
			if ((rc = set_loc(&r, f, addr_size, pc, loc)) != 0)
				return rc;
			continue;
		case OP_advance_loc1:
			adv = rd_fixed(&r, 1) * ca;
			goto advance;
		case OP_advance_loc2:
			adv = rd_fixed(&r, 2) * ca;
			goto advance;
		case OP_advance_loc4:
			adv = rd_fixed(&r, 4) * ca;
			goto advance;
		case OP_remember_state:
		case OP_restore_state:
			if ((rc = state_op(rs, op == OP_remember_state, saved, &nsaved, budget)) < 0)
				return rc;
			continue;
		case CFI_OP_offset_extended:
		case OP_offset_extended_sf:
			rule_offset(rs, &r, CFI_RULE_OFFSET, op == OP_offset_extended_sf, da);
			continue;
		case OP_GNU_negative_offset_extended:
			rule_offset(rs, &r, CFI_RULE_OFFSET, false, -da);
			continue;
		case OP_val_offset:
		case OP_val_offset_sf:
			rule_offset(rs, &r, CFI_RULE_VAL_OFFSET, op == OP_val_offset_sf, da);
			continue;
		case OP_restore_extended:
			if ((rc = restore(rs, init, rd_uleb(&r))) < 0)
				return rc;
			continue;
		case CFI_OP_undefined:
		case CFI_OP_same_value:
			column(rs, rd_uleb(&r))->kind =
				op == CFI_OP_undefined ? CFI_RULE_UNDEFINED : CFI_RULE_SAME;
			continue;
		case CFI_OP_register:
			rule_register(rs, &r);
			continue;
		case CFI_OP_def_cfa:
		case OP_def_cfa_sf:
			def_cfa(rs, &r, op == OP_def_cfa_sf, da);
			continue;
		case CFI_OP_def_cfa_register:
			rs->cfa.kind = CFI_RULE_REGISTER;
			rs->cfa.reg = rd_uleb(&r);
			continue;
		case CFI_OP_def_cfa_offset:
			rs->cfa.off = (int64_t)rd_uleb(&r);
			continue;
		case OP_def_cfa_offset_sf:
			rs->cfa.off = factored(rd_sleb(&r), da);
			continue;
		case OP_def_cfa_expression:
			rs->cfa.kind = CFI_RULE_VAL_EXPR;
			rd_block(&r, &rs->cfa.expr, &rs->cfa.expr_len);
			continue;
		case OP_expression:
		case OP_val_expression:
			rule_expr(rs, &r, op == OP_expression ? CFI_RULE_EXPR : CFI_RULE_VAL_EXPR);
			continue;
		case OP_GNU_args_size:
			rd_uleb(&r);
			continue;
		default:
			return -EINVAL;
		}
advance:
		if (r.bad)
			break;
		if (adv > pc - *loc)    /* *loc <= pc: past pc has returned */
			return 1;
		*loc += adv;
	}
	return r.bad ? -EINVAL : 0;
}

int
unwind_cfi_rules_at(const struct cfi_fde *f, uint64_t pc, unsigned addr_size, bool be,
	     struct cfi_rules *out)
{
	struct cfi_rules init;
	uint64_t loc = f->start;
	unsigned long budget = CFI_MAX_INSNS;
	int r;

	if (pc < f->start || pc - f->start >= f->range)
		return -ENOENT;
	memset(&init, 0, sizeof(init));   /* CFI_RULE_SAME, no CFA */
	init.cfa.kind = CFI_RULE_UNDEFINED;
	/* The CIE's instructions describe the first instruction: they do not
	 * advance (and where one did, the location would not matter). */
	if ((r = run(f->cie.ins, f->cie.end, f, addr_size, be, UINT64_MAX, &loc, &init, NULL,
		     &budget)) < 0)
		return r;
	loc = f->start;
	*out = init;
	if ((r = run(f->ins, f->end, f, addr_size, be, pc, &loc, out, &init, &budget)) < 0)
		return r;
	out->ra_column = f->cie.ra_column;
	out->signal = f->cie.signal;
	return 0;
}

/* ---- DWARF expressions (the subset CFI uses) ---------------------------- */

enum {
	DW_OP_addr = 0x03, DW_OP_deref = 0x06,
	DW_OP_const1u = 0x08, DW_OP_const1s, DW_OP_const2u, DW_OP_const2s,
	DW_OP_const4u, DW_OP_const4s, DW_OP_const8u, DW_OP_const8s,
	DW_OP_constu, DW_OP_consts, DW_OP_dup, DW_OP_drop, DW_OP_over,
	DW_OP_pick, DW_OP_swap, DW_OP_rot, DW_OP_xderef, DW_OP_abs,
	DW_OP_and, DW_OP_div, DW_OP_minus, DW_OP_mod, DW_OP_mul, DW_OP_neg,
	DW_OP_not, DW_OP_or, DW_OP_plus, DW_OP_plus_uconst, DW_OP_shl,
	DW_OP_shr, DW_OP_shra, DW_OP_xor, DW_OP_bra, DW_OP_eq, DW_OP_ge,
	DW_OP_gt, DW_OP_le, DW_OP_lt, DW_OP_ne, DW_OP_skip,
	DW_OP_lit0 = 0x30, DW_OP_lit31 = 0x4f,
	DW_OP_reg0 = 0x50, DW_OP_reg31 = 0x6f,
	DW_OP_breg0 = 0x70, DW_OP_breg31 = 0x8f,
	DW_OP_regx = 0x90, DW_OP_fbreg, DW_OP_bregx, DW_OP_piece,
	DW_OP_deref_size, DW_OP_xderef_size, DW_OP_nop,
};

/* The stack holds words of the target's size; SX: one as a signed number. */
#define SX(v) (env->word_size == 8 ? (int64_t)(v) : (int64_t)(int32_t)(uint32_t)(v))

/* The operand of DW_OP_addr and DW_OP_const* (op), at r: the number it
 * pushes. */
static uint64_t
const_operand(unsigned op, struct reader *r, unsigned word_size)
{
	switch (op) {
	case DW_OP_addr: return rd_fixed(r, word_size);
	case DW_OP_const1u: return rd_fixed(r, 1);
	case DW_OP_const1s: return (uint64_t)(int64_t)(int8_t)rd_fixed(r, 1);
	case DW_OP_const2u: return rd_fixed(r, 2);
	case DW_OP_const2s: return (uint64_t)(int64_t)(int16_t)rd_fixed(r, 2);
	case DW_OP_const4u: return rd_fixed(r, 4);
	case DW_OP_const4s: return (uint64_t)(int64_t)(int32_t)rd_fixed(r, 4);
	case DW_OP_const8u:
	case DW_OP_const8s: return rd_fixed(r, 8);
	case DW_OP_constu: return rd_uleb(r);
	default: return (uint64_t)rd_sleb(r);   /* DW_OP_consts */
	}
}

/* A binary operation (op) on the two top words a (below) and b, into *v
 * (not yet masked to the word).  Returns 0, or -EDOM for a division the
 * host cannot do. */
static int
binary_op(unsigned op, uint64_t a, uint64_t b, const struct cfi_env *env, uint64_t *v)
{
	switch (op) {
	case DW_OP_and: *v = a & b; break;
	case DW_OP_div:
		/* Signed (DWARF 5, 2.5.1.4).  INT64_MIN / -1
		 * overflows (SIGFPE on x86-64): refused as the
		 * division by 0 is. */
		if (b == 0 || (SX(a) == INT64_MIN && SX(b) == -1))
			return -EDOM;
		*v = (uint64_t)(SX(a) / SX(b));
		break;
	case DW_OP_minus: *v = a - b; break;
	case DW_OP_mod:
		if (b == 0)
			return -EDOM;
		*v = a % b;
		break;
	case DW_OP_mul: *v = a * b; break;
	case DW_OP_or: *v = a | b; break;
	case DW_OP_plus: *v = a + b; break;
	case DW_OP_shl: *v = b < 64 ? a << b : 0; break;
	case DW_OP_shr: *v = b < 64 ? a >> b : 0; break;
	case DW_OP_shra: *v = (uint64_t)(SX(a) >> (b < 63 ? b : 63)); break;
	case DW_OP_xor: *v = a ^ b; break;
	case DW_OP_eq: *v = a == b; break;
	case DW_OP_ge: *v = SX(a) >= SX(b); break;
	case DW_OP_gt: *v = SX(a) > SX(b); break;
	case DW_OP_le: *v = SX(a) <= SX(b); break;
	case DW_OP_lt: *v = SX(a) < SX(b); break;
	default: *v = a != b; break;
	}
	return 0;
}

/* DW_OP_deref and DW_OP_deref_size: the word of size bytes (at most the
 * target's word) at addr, into *v.  Returns 0 or -EFAULT. */
static int
deref(const struct cfi_env *env, uint64_t addr, unsigned size, uint64_t *v)
{
	unsigned char buf[8];
	if (size == 0 || size > env->word_size || env->read(env->ctx, addr, buf, size) < 0)
		return -EFAULT;
	*v = arch_get_uint(buf, size, env->big_endian);
	return 0;
}

/* unwind_cfi_expr_eval with *steps the operations it may run (what it ran is
 * taken from it): one step of unwind_cfi_apply shares one count among its
 * expressions (up to 41: the CFA and each column). */
static int
expr_eval(const unsigned char *expr, size_t len, uint64_t push, const struct cfi_env *env,
	  uint64_t *out, unsigned *steps)
{
	uint64_t st[CFI_MAX_EXPR_DEPTH];
	unsigned sp = 0;
	struct reader r = { .p = expr, .end = expr + len, .be = env->big_endian };
	const uint64_t wmask = env->word_size == 8 ? ~UINT64_C(0) : UINT32_MAX;

	if (env->word_size != 4 && env->word_size != 8)
		return -EINVAL;
	if (len > CFI_MAX_EXPR_BYTES)
		return -E2BIG;
/* The stack holds words of the target's size. */
#define PUSH(v) do { uint64_t v_ = (v); \
		     if (sp == CFI_MAX_EXPR_DEPTH) \
			     return -EOVERFLOW; \
		     st[sp++] = v_ & wmask; } while (0)
#define NEED(n) do { if (sp < (n)) return -EINVAL; } while (0)
	PUSH(push);
	for (; r.p < r.end; --*steps) {
		if (*steps == 0)
			return -ELOOP;   /* a DW_OP_skip or DW_OP_bra loop */
		unsigned op = *r.p++;
		uint64_t a, b, v;
		if (op >= DW_OP_lit0 && op <= DW_OP_lit31) {
			PUSH(op - DW_OP_lit0);
			continue;
		}
		if ((op >= DW_OP_breg0 && op <= DW_OP_breg31) || op == DW_OP_bregx) {
			a = op == DW_OP_bregx ? rd_uleb(&r) : op - DW_OP_breg0;
			int64_t off = rd_sleb(&r);
			if (env->reg(env->ctx, a, &v) < 0)
				return -EINVAL;
			PUSH(v + (uint64_t)off);
			continue;
		}
		switch (op) {
		case DW_OP_addr: case DW_OP_const1u: case DW_OP_const1s: case DW_OP_const2u:
		case DW_OP_const2s: case DW_OP_const4u: case DW_OP_const4s: case DW_OP_const8u:
		case DW_OP_const8s: case DW_OP_constu: case DW_OP_consts:
			PUSH(const_operand(op, &r, env->word_size));
			break;
		case DW_OP_dup: NEED(1); PUSH(st[sp - 1]); break;
		case DW_OP_drop: NEED(1); sp--; break;
		case DW_OP_over: NEED(2); PUSH(st[sp - 2]); break;
		case DW_OP_pick:
			a = rd_fixed(&r, 1);
			NEED(a + 1);
			PUSH(st[sp - 1 - a]);
			break;
		case DW_OP_swap: NEED(2); v = st[sp - 1]; st[sp - 1] = st[sp - 2]; st[sp - 2] = v; break;
		case DW_OP_rot:
			NEED(3);
			v = st[sp - 1];
			st[sp - 1] = st[sp - 2];
			st[sp - 2] = st[sp - 3];
			st[sp - 3] = v;
			break;
		case DW_OP_deref:
		case DW_OP_deref_size: {
			unsigned size = op == DW_OP_deref ? env->word_size : (unsigned)rd_fixed(&r, 1);
			NEED(1);
			if (deref(env, st[sp - 1], size, &st[sp - 1]) < 0)
				return -EFAULT;
			break;
		}
		case DW_OP_abs:
			NEED(1);
			if (SX(st[sp - 1]) < 0)
				st[sp - 1] = (0 - st[sp - 1]) & wmask;
			break;
		case DW_OP_neg: NEED(1); st[sp - 1] = (0 - st[sp - 1]) & wmask; break;
		case DW_OP_not: NEED(1); st[sp - 1] = ~st[sp - 1] & wmask; break;
		case DW_OP_plus_uconst: NEED(1); st[sp - 1] = (st[sp - 1] + rd_uleb(&r)) & wmask; break;
		case DW_OP_and: case DW_OP_div: case DW_OP_minus: case DW_OP_mod:
		case DW_OP_mul: case DW_OP_or: case DW_OP_plus: case DW_OP_shl:
		case DW_OP_shr: case DW_OP_shra: case DW_OP_xor: case DW_OP_eq:
		case DW_OP_ge: case DW_OP_gt: case DW_OP_le: case DW_OP_lt: case DW_OP_ne:
			NEED(2);
			b = st[--sp];
			a = st[sp - 1];
			if (binary_op(op, a, b, env, &v) < 0)
				return -EDOM;
			st[sp - 1] = v & wmask;
			break;
		case DW_OP_skip:
		case DW_OP_bra: {
			int64_t off = (int16_t)rd_fixed(&r, 2);
			if (op == DW_OP_bra) {
				NEED(1);
				if (st[--sp] == 0)
					break;
			}
			if (off < expr - r.p || off > r.end - r.p)
				return -EINVAL;
			r.p += off;
			break;
		}
		case DW_OP_nop:
			break;
		default:
			return -ENOTSUP;   /* DW_OP_reg*, pieces, TLS...: not CFI's */
		}
		if (r.bad)
			return -EINVAL;
	}
#undef PUSH
#undef NEED
#undef SX
	if (r.bad || sp == 0)
		return -EINVAL;
	*out = st[sp - 1];
	return 0;
}

int
unwind_cfi_expr_eval(const unsigned char *expr, size_t len, uint64_t push,
	      const struct cfi_env *env, uint64_t *out)
{
	unsigned steps = CFI_MAX_EXPR_STEPS;
	return expr_eval(expr, len, push, env, out, &steps);
}

/* ---- one step ------------------------------------------------------------ */

static int
env_word(const struct cfi_env *env, uint64_t addr, uint64_t *v)
{
	unsigned char buf[8];
	if (env->read(env->ctx, addr, buf, env->word_size) < 0)
		return -EFAULT;
	*v = arch_get_uint(buf, env->word_size, env->big_endian);
	return 0;
}

int
unwind_cfi_apply(const struct cfi_rules *rs, const struct cfi_env *env, const struct arch *a,
	  const struct arch_regs *in, struct arch_regs *out)
{
	const uint64_t wmask = env->word_size == 8 ? ~UINT64_C(0) : UINT32_MAX;
	unsigned steps = CFI_MAX_EXPR_STEPS;   /* for all the step's expressions */
	uint64_t cfa;
	int r;

	switch (rs->cfa.kind) {
	case CFI_RULE_REGISTER:
		if (rs->cfa.reg >= a->nregs || !(in->valid & (UINT64_C(1) << rs->cfa.reg)))
			return -EINVAL;
		cfa = (in->r[rs->cfa.reg] + (uint64_t)rs->cfa.off) & wmask;
		break;
	case CFI_RULE_VAL_EXPR:
		if ((r = expr_eval(rs->cfa.expr, rs->cfa.expr_len, 0, env, &cfa, &steps)) < 0)
			return r;
		break;
	default:
		return -EINVAL;
	}
	*out = *in;
	/* The caller's registers: columns 0 .. nregs of the table (the pc
	 * slot is not a DWARF column where it is not the return address
	 * column: aarch64 and MIPS number their pc outside DWARF's). */
	for (unsigned i = 0; i < a->nregs && i < CFI_MAX_COLUMNS; i++) {
		const struct cfi_rule *c = &rs->reg[i];
		uint64_t v = 0;
		if ((int)i == a->reg_ip && (uint64_t)i != rs->ra_column)
			continue;
		switch (c->kind) {
		case CFI_RULE_SAME:
			continue;
		case CFI_RULE_UNDEFINED:
			out->valid &= ~(UINT64_C(1) << i);
			continue;
		case CFI_RULE_OFFSET:
			if ((r = env_word(env, (cfa + (uint64_t)c->off) & wmask, &v)) < 0)
				return r;
			break;
		case CFI_RULE_VAL_OFFSET:
			v = (cfa + (uint64_t)c->off) & wmask;
			break;
		case CFI_RULE_REGISTER:
			if (c->reg >= a->nregs || !(in->valid & (UINT64_C(1) << c->reg)))
				return -EINVAL;
			v = in->r[c->reg];
			break;
		case CFI_RULE_EXPR:
			if ((r = expr_eval(c->expr, c->expr_len, cfa, env, &v, &steps)) < 0 ||
			    (r = env_word(env, v, &v)) < 0)
				return r;
			break;
		case CFI_RULE_VAL_EXPR:
			if ((r = expr_eval(c->expr, c->expr_len, cfa, env, &v, &steps)) < 0)
				return r;
			break;
		}
		out->r[i] = v;
		out->valid |= UINT64_C(1) << i;
	}
	/* The CFA is the caller's sp (on x86-64, aarch64 and MIPS), unless a
	 * rule of the sp column says otherwise (signal frames). */
	if (a->reg_sp >= 0 && a->reg_sp < ARCH_NREGS &&
	    (a->reg_sp >= CFI_MAX_COLUMNS || rs->reg[a->reg_sp].kind == CFI_RULE_SAME)) {
		out->r[a->reg_sp] = cfa;
		out->valid |= UINT64_C(1) << a->reg_sp;
	}
	/* The caller's pc is the return address column. */
	if (a->reg_ip >= 0 && (uint64_t)a->reg_ip != rs->ra_column) {
		if (rs->ra_column >= a->nregs || rs->ra_column >= CFI_MAX_COLUMNS ||
		    !(out->valid & (UINT64_C(1) << rs->ra_column)) ||
		    rs->reg[rs->ra_column].kind == CFI_RULE_UNDEFINED) {
			out->valid &= ~(UINT64_C(1) << a->reg_ip);
			return 0;
		}
		out->r[a->reg_ip] = out->r[rs->ra_column];
		out->valid |= UINT64_C(1) << a->reg_ip;
	} else if (rs->ra_column < CFI_MAX_COLUMNS &&
		   rs->reg[rs->ra_column].kind == CFI_RULE_UNDEFINED) {
		out->valid &= ~(UINT64_C(1) << a->reg_ip);
	}
	return 0;
}
