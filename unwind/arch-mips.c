/* unwind/arch-mips.c - MIPS o32 registers from NT_PRSTATUS, either byte order.
 *
 * The 32-bit pr_reg (elf_gregset_t, ELF_NGREG = 45; kernel asm/reg.h
 * MIPS32_EF_*, glibc sys/user.h) is 6 unused words, r0..r31 (words 6..37),
 * lo, hi, cp0_epc, cp0_badvaddr, cp0_status, cp0_cause, one unused word.
 * PTRACE_GETREGSET NT_PRSTATUS on a MIPS host gives the same block, so live
 * processes and core files share this decoder.  The words are in the
 * target's byte order: a big-endian core is read the same on any host.
 *
 * Register numbers in struct unwind_regs: 0..31 the GPRs (as in DWARF),
 * MIPS_REG_PC (32) the pc, which DWARF does not number.
 */
#include "config.h"

#include <elf.h>
#include <errno.h>
#include <string.h>

#include "unwind/unwind-internal.h"

#define MIPS_REG_SP 29
#define MIPS_REG_FP 30   /* s8 */
#define MIPS_REG_RA 31
#define MIPS_REG_PC 32

#define MIPS32_EF_R0       6
#define MIPS32_EF_CP0_EPC  40

static uint32_t
get32(const unsigned char *p, bool be)
{
	return be ? (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]
		  : (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

static int
o32_regs(const unsigned char *raw, size_t len, bool be, struct unwind_regs *out)
{
	memset(out, 0, sizeof(*out));
	/* The epc word is the last one needed; a truncated note (a core cut
	 * short) is refused rather than read past. */
	if (len < 4 * (MIPS32_EF_CP0_EPC + 1))
		return -EINVAL;
	for (int i = 0; i < 32; i++)
		out->r[i] = get32(raw + 4 * (MIPS32_EF_R0 + i), be);
	out->r[MIPS_REG_PC] = get32(raw + 4 * MIPS32_EF_CP0_EPC, be);
	out->r[0] = 0;
	/* k0/k1 belong to the kernel and are garbage here; everything else,
	 * ra included, is the innermost frame's real value. */
	out->valid = ((UINT64_C(1) << 33) - 1) & ~(UINT64_C(3) << 26);
	return 0;
}

static int
mipsel_regs(const unsigned char *raw, size_t len, struct unwind_regs *out)
{
	return o32_regs(raw, len, false, out);
}

static int
mipsbe_regs(const unsigned char *raw, size_t len, struct unwind_regs *out)
{
	return o32_regs(raw, len, true, out);
}

const struct arch_ops arch_mipsel = {
	.name = "mipsel (o32)",
	.e_machine = EM_MIPS,
	.word_size = 4,
	.big_endian = false,
	.reg_ip = MIPS_REG_PC, .reg_sp = MIPS_REG_SP, .reg_fp = MIPS_REG_FP,
	.reg_ra = MIPS_REG_RA,
	.regs_from_prstatus = mipsel_regs,
};

const struct arch_ops arch_mips_be = {
	.name = "mips (o32, big-endian)",
	.e_machine = EM_MIPS,
	.word_size = 4,
	.big_endian = true,
	.reg_ip = MIPS_REG_PC, .reg_sp = MIPS_REG_SP, .reg_fp = MIPS_REG_FP,
	.reg_ra = MIPS_REG_RA,
	.regs_from_prstatus = mipsbe_regs,
};
