/* arch/arch-mips.c - MIPS o32, either byte order.
 *
 * The 32-bit pr_reg (elf_gregset_t, ELF_NGREG = 45; kernel asm/reg.h
 * MIPS32_EF_*, glibc sys/user.h) is 6 unused words, r0..r31 (words 6..37),
 * lo, hi, cp0_epc, cp0_badvaddr, cp0_status, cp0_cause, one unused word.
 * PTRACE_GETREGSET NT_PRSTATUS on a MIPS host gives the same block, so live
 * processes and core files share this table.  The words are in the
 * target's byte order: a big-endian core is read the same on any host.
 *
 * Slots: 0..31 the GPRs (as in DWARF), 32 the pc, which DWARF does not
 * number.  sp is r29, s8/fp r30, ra r31.
 */
#include "config.h"

#include <elf.h>

#include "arch/arch.h"

enum {
	PR_R0 = 6, PR_LO = 38, PR_HI = 39, PR_CP0_EPC = 40,
	PR_CP0_BADVADDR = 41, PR_CP0_STATUS = 42, PR_CP0_CAUSE = 43,
	PR_NWORDS = 45
};

#define R(n) (PR_R0 + (n))
static const int8_t mips_pr_index[33] = {
	R(0), R(1), R(2), R(3), R(4), R(5), R(6), R(7),
	R(8), R(9), R(10), R(11), R(12), R(13), R(14), R(15),
	R(16), R(17), R(18), R(19), R(20), R(21), R(22), R(23),
	R(24), R(25), R(26), R(27), R(28), R(29), R(30), R(31),
	PR_CP0_EPC,
};

/* Kernel arch/mips/kernel/signal.c; qemu's linux-user/mips/signal.c
 * matches.  struct sigframe { u32 sf_ass[4], sf_pad[2]; struct sigcontext
 * sf_sc; } and struct rt_sigframe { u32 rs_ass[4], rs_pad[2]; siginfo_t
 * rs_info (128); struct ucontext rs_uc; } whose uc_mcontext follows
 * uc_flags, uc_link and a 12-byte stack_t, 8-aligned: 24 + 128 + 24.
 * struct sigcontext: u32 sc_regmask, sc_status; u64 sc_pc; u64
 * sc_regs[32]. */
static const struct arch_sigframe o32_sigframe = {
	.nr_sigreturn = 4119,
	.nr_rt_sigreturn = 4193,
	.sigframe_sc = 24,
	.rt_sigframe_sc = 176,
	.sc_pc = 8,
	.sc_regs = 16,
};

/* o32 system calls (arch/mips/kernel/scall32-o32.S): v0 holds the number
 * (4000 + n) at entry and the value at exit, where a3 says whether it is
 * a positive errno (a3 != 0) or a result.  On an error return the kernel
 * keeps the number in pt_regs' r0 (and the first a3 in k0) for a restart,
 * which do_signal makes after the stop (get_signal): epc back on the
 * syscall instruction, v0 the number again.  But NT_PRSTATUS never shows
 * r0 (mips_dump_regs32 copies r1 to r31, k0 and k1 as zero), in cores
 * and through PTRACE_GETREGSET alike: a thread stopped while blocked in a
 * call has its pc just after the syscall, v0 the ERESTART* code or EINTR
 * and a3 = 1, which only the code before the pc tells from a thread that
 * stopped anywhere else (arch_code_syscall).  At a syscall-entry stop
 * (not what stackspy uses) the number is in v0. */
#define MIPS_SYSCALL_NOTE \
	"NT_PRSTATUS has no r0: at an interrupt stop after a syscall " \
	"instruction, v0 (r2) is the call's return, a positive errno when " \
	"a3 (r7) is nonzero (an ERESTART* code: to be restarted); the number " \
	"of the call is not there; at a syscall-entry stop it is in v0"

#define MIPS_O32(be) \
	.e_machine = EM_MIPS, \
	.elf_class = ELFCLASS32, \
	.word_size = 4, \
	.big_endian = (be), \
	.reg_ip = 32, .reg_sp = 29, .reg_fp = 30, .reg_ra = 31, \
	.reg_zero = 0, \
	.fp_chain = false, \
	.pr_reg_size = PR_NWORDS * 4, \
	.pr_reg_min = (PR_CP0_EPC + 1) * 4, \
	.prstatus_size = 256, \
	.pr_index = mips_pr_index, \
	.nregs = 33, \
	/* k0/k1 belong to the kernel and are garbage here; everything \
	 * else, ra included, is the innermost frame's real value. */ \
	.invalid_mask = UINT64_C(3) << 26, \
	.pr_syscall_nr = -1, \
	.syscall_nr_none = 0, \
	.nr_futex = 4238,  /* o32: 4000 + 238 */ \
	.pr_syscall_ret = R(2), \
	.pr_syscall_err = R(7), \
	.syscall_note = MIPS_SYSCALL_NOTE, \
	/* syscall (SPECIAL, funct 0x0c, any code field) */ \
	.syscall_insn = { 0xfc00003f, 0x0000000c }, \
	.insn_size = 4,  /* calls: engine-mips.c (ncalls 0) */ \
	.sigframe = &o32_sigframe

const struct arch arch_mipsel = {
	.name = "mipsel (o32)",
	MIPS_O32(false),
};

const struct arch arch_mips_be = {
	.name = "mips (o32, big-endian)",
	MIPS_O32(true),
};
