/* unwind/cfi.h - call frame information: the one reader of CIEs, FDEs
 * and pointer encodings (.eh_frame, .eh_frame_hdr, .debug_frame), and
 * stackspy's own interpreter of the rules (any architecture, any host),
 * the only one: every engine's rows come from it.  Defined in
 * unwind/cfi-read.c and unwind/cfi-exec.c.
 *
 * Private to unwind/ (and its unit tests); every engine reads CFI through it.
 */
#ifndef STACKSPY_UNWIND_CFI_H
#define STACKSPY_UNWIND_CFI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cfi_index;
struct elf_image;

/* ---- call frame information (cfi-read.c) -------------------------------- */

/* Pointer encodings (DW_EH_PE_*) and the call frame instructions read
 * here (DW_CFA_*); our own names: elfutils' <dwarf.h> has the DWARF ones. */
#define CFI_PE_absptr   0x00
#define CFI_PE_uleb128  0x01
#define CFI_PE_udata2   0x02
#define CFI_PE_udata4   0x03
#define CFI_PE_udata8   0x04
#define CFI_PE_sleb128  0x09
#define CFI_PE_sdata2   0x0a
#define CFI_PE_sdata4   0x0b
#define CFI_PE_sdata8   0x0c
#define CFI_PE_pcrel    0x10
#define CFI_PE_datarel  0x30
#define CFI_PE_omit     0xff
#define CFI_OP_nop              0x00
#define CFI_OP_offset_extended  0x05
#define CFI_OP_undefined        0x07
#define CFI_OP_same_value       0x08
#define CFI_OP_register         0x09
#define CFI_OP_def_cfa          0x0c
#define CFI_OP_def_cfa_register 0x0d
#define CFI_OP_def_cfa_offset   0x0e
#define CFI_OP_offset           0x80   /* high two bits; the register in the low six */

/* A section of CIEs and FDEs: .eh_frame (eh) or .debug_frame. */
struct cfi_section {
	const unsigned char *p;
	size_t len;
	uint64_t vaddr;           /* where it is mapped (sh_addr): .eh_frame's
				     pc-relative pointers count from there */
	bool eh;
	bool be;                  /* big-endian */
	unsigned addr_size;       /* 4 or 8 */
	uint64_t datarel;         /* base of datarel pointers (.eh_frame_hdr), 0:
				     none taken */
};

/* One entry of a section: its body (after the id) is [body, end). */
struct cfi_entry {
	size_t off;               /* of its length field in the section */
	const unsigned char *body, *end;
	uint64_t body_at;         /* the body's vaddr */
	bool is_cie;
	uint64_t cie_off;         /* an FDE's CIE, offset in the section
				     (UINT64_MAX: the pointer is bad) */
};

struct cfi_cie {
	unsigned version;
	const unsigned char *fields, *fields_end;  /* code and data alignment,
						      return address column,
						      as written */
	uint64_t code_align;
	int64_t data_align;
	uint64_t ra_column;
	unsigned fde_enc;         /* CFI_PE_*: its FDEs' addresses */
	bool aug_data;            /* its FDEs have augmentation data ('z') */
	bool signal;              /* 'S': a signal frame's */
	const unsigned char *ins, *end;  /* initial instructions */
};

struct cfi_fde {
	uint64_t start, range;    /* the code it covers (ELF vaddr) */
	const unsigned char *ins, *end;  /* its instructions */
	struct cfi_cie cie;       /* unwind_cfi_find: its CIE */
};

/* .eh_frame_hdr's search table, as linkers write it (datarel sdata4 pairs
 * of (start, FDE)). */
struct cfi_hdr {
	uint64_t hdr_vaddr, eh_frame_vaddr, table_vaddr, count;
	const unsigned char *table;
	bool be;
};

/* Bytes of the LEB128 number at p (0: it runs past end). */
size_t unwind_cfi_leb_len(const unsigned char *p, const unsigned char *end);
/* Decode the value encoded as enc at p (before end); at: p's vaddr, for
 * pc-relative values; relative: apply the pc- or data-relative part (not
 * for an FDE's range).  The bytes read, 0 when it cannot be read. */
size_t unwind_cfi_read_encoded(const struct cfi_section *s, const unsigned char *p,
			const unsigned char *end, unsigned enc, uint64_t at, bool relative,
			uint64_t *val);
/* The entry at *off into *e, *off moved past it: 1, or 0 at the end (a
 * terminator, or a length that does not fit). */
int unwind_cfi_next_entry(const struct cfi_section *s, size_t *off, struct cfi_entry *e);
/* A CIE's fields (versions 1 and 3, and 4 in .debug_frame; .eh_frame's
 * augmentations z, R, L, P, S, B, G).  false if it cannot be read. */
bool unwind_cfi_cie_parse(const struct cfi_section *s, const struct cfi_entry *e,
			  struct cfi_cie *c);
/* An FDE of CIE c: its code range and instructions. */
bool unwind_cfi_fde_parse(const struct cfi_section *s, const struct cfi_entry *e,
		   const struct cfi_cie *c, struct cfi_fde *f);
/* img's section `name` (.eh_frame or .debug_frame), decompressed into
 * *owned (the caller frees it) when compressed.  0, -ENOENT or -errno. */
int unwind_cfi_section_get(const struct elf_image *img, const char *name, struct cfi_section *out,
		    unsigned char **owned);
/* len bytes of img at ELF vaddr (*avail: how many there are from there
 * in its segment), or NULL. */
const unsigned char *unwind_cfi_image_at(const struct elf_image *img, uint64_t vaddr, size_t len,
				  size_t *avail);
/* img's .eh_frame_hdr, if it has a table stackspy takes. */
bool unwind_cfi_hdr_read(const struct elf_image *img, struct cfi_hdr *h);
/* The FDE covering vaddr and its CIE: through .eh_frame_hdr, else through
 * a table of .eh_frame built once per image.  0 or -ENOENT. */
int unwind_cfi_find(struct elf_image *img, uint64_t vaddr, struct cfi_fde *out);
/* The same from img's own .debug_frame (a table of it built once per
 * image): code built without .eh_frame (-fno-asynchronous-unwind-tables
 * -g).  0 or -ENOENT. */
int unwind_cfi_find_debug(struct elf_image *img, uint64_t vaddr, struct cfi_fde *out);
/* Does f say, before its first instruction that advances the location,
 * that the return address is undefined (the outermost frame: glibc's
 * _start and clone mark theirs so)? */
bool unwind_cfi_fde_ra_undefined(const struct cfi_fde *f);
void unwind_cfi_index_free(struct cfi_index *x);

/* ---- executing call frame information (cfi-exec.c) --------------------- */

struct arch;
struct arch_regs;

/* Register columns followed: the general registers of every arch/ table
 * (arch->nregs, up to 33); vector and floating-point columns are not. */
#define CFI_MAX_COLUMNS 40

enum cfi_rule_kind {
	CFI_RULE_SAME,            /* unchanged (also: no rule given) */
	CFI_RULE_UNDEFINED,
	CFI_RULE_OFFSET,          /* saved at CFA + off */
	CFI_RULE_VAL_OFFSET,      /* is CFA + off */
	CFI_RULE_REGISTER,        /* in register reg (the CFA: reg + off) */
	CFI_RULE_EXPR,            /* saved at the value of expr */
	CFI_RULE_VAL_EXPR,        /* is the value of expr (the CFA: the expr) */
};

struct cfi_rule {
	enum cfi_rule_kind kind;
	int64_t off;
	uint64_t reg;
	const unsigned char *expr;  /* inside the FDE or CIE */
	size_t expr_len;
};

/* The row of the CFI table at one pc. */
struct cfi_rules {
	struct cfi_rule cfa;
	struct cfi_rule reg[CFI_MAX_COLUMNS];
	uint64_t ra_column;
	bool signal;              /* the CIE's 'S': a signal trampoline's */
	/* aarch64's RA_SIGN_STATE: the return address is signed (pac-ret)
	 * here, toggled by DW_CFA_AARCH64_negate_ra_state (the opcode of
	 * DW_CFA_GNU_window_save), kept and restored with the row. */
	bool ra_signed;
};

/* The bounds of the interpreter: the instructions and expressions are
 * the target's bytes.  A rule that breaks one is refused with the error
 * code after it. */
#define CFI_MAX_INSN_BYTES  (1u << 20)  /* a CIE's or FDE's instructions: -E2BIG */
#define CFI_MAX_INSNS       (1u << 16)  /* run for one row, CIE and FDE: -E2BIG */
#define CFI_STATE_COST      32          /* what a remember_state or restore_state
					   counts in it (each copies a row of
					   1.7 KB): 2,048 of them at most */
#define CFI_MAX_STATES      8           /* DW_CFA_remember_state nesting: -EOVERFLOW */
#define CFI_MAX_EXPR_BYTES  (1u << 16)  /* an expression: -E2BIG */
#define CFI_MAX_EXPR_STEPS  10000       /* operations run by an expression, and by
					   all of one unwind_cfi_apply's: -ELOOP */
#define CFI_MAX_EXPR_DEPTH  64          /* the expression stack: -EOVERFLOW */

/* Run f's CIE and FDE instructions up to pc (an ELF vaddr f covers);
 * addr_size and be: the file's (DW_CFA_set_loc, DW_CFA_advance_loc2/4).
 * Returns 0, -ENOENT when f does not cover pc, -EINVAL for instructions
 * that cannot be read (a restore_state without remember_state too),
 * -ENOTSUP for one stackspy does not know, -E2BIG or -EOVERFLOW for a
 * bound above broken. */
int unwind_cfi_rules_at(const struct cfi_fde *f, uint64_t pc, unsigned addr_size, bool be,
		 struct cfi_rules *out);

/* What a DWARF expression and a step read: the target's memory and the
 * registers of the frame being stepped. */
struct cfi_env {
	void *ctx;
	unsigned word_size;
	bool big_endian;
	/* len bytes at addr.  0 or -EFAULT. */
	int (*read)(void *ctx, uint64_t addr, void *buf, size_t len);
	/* Register column reg of the frame.  0, or -EINVAL when unknown. */
	int (*reg)(void *ctx, uint64_t reg, uint64_t *val);
};

/* Evaluate a DWARF expression (the operations CFI uses: registers,
 * constants, arithmetic, comparisons, branches, dereferences) with push
 * on the stack first.  0 with the top of the stack in *out, or -ELOOP
 * (steps), -EOVERFLOW (stack depth), -E2BIG (length), -EDOM (a division
 * by 0 or INT64_MIN / -1), -EFAULT (a read failed), -ENOTSUP (an
 * operation not CFI's), -EINVAL (malformed, an unknown register). */
int unwind_cfi_expr_eval(const unsigned char *expr, size_t len, uint64_t push,
		  const struct cfi_env *env, uint64_t *out);

/* The caller's registers from in (the frame at the row rs) into out: the
 * CFA becomes its sp and the return address column its pc (not stripped
 * of pointer-authentication bits: the caller does that).  A pc whose rule
 * is undefined (the outermost frame) is left not valid in out.  Returns 0
 * or -errno (a register the rules need is unknown, a read failed, or an
 * expression's code of unwind_cfi_expr_eval). */
int unwind_cfi_apply(const struct cfi_rules *rs, const struct cfi_env *env, const struct arch *a,
	      const struct arch_regs *in, struct arch_regs *out);


#endif
