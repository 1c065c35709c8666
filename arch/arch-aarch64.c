/* arch/arch-aarch64.c - AArch64 (LP64, little-endian).
 *
 * pr_reg is struct user_pt_regs (the kernel's asm/ptrace.h): x0..x30, sp,
 * pc, pstate, 34 words.  Slots: x0..x30 = 0..30 and sp = 31 as in the
 * DWARF for the Arm 64-bit architecture, pc = 32, which DWARF does not
 * number but libunwind does (UNW_AARCH64_PC).  x29 is the frame pointer,
 * x30 the link register; a frame record is {x29, x30} at x29.
 *
 * Pointer authentication (-mbranch-protection=pac-ret, or standard;
 * enabled by the CPU, e.g. qemu's -cpu max, and the kernel): a function
 * signs x30 with paciasp before it saves it, so return addresses on the
 * stack carry a signature in their top bits (from bit 48 up to bit 54, and
 * bits 56-63 too, since Linux leaves instruction addresses without top-byte
 * ignore).  The kernel reports its mask (GENMASK(54, vabits): the
 * machine's, the same for every process) in the NT_ARM_PAC_MASK regset,
 * which ptrace/ reads once, and in a core's note of that type; where it
 * is not known, Linux gives user space 48-bit addresses (a 52-bit address
 * space only to mmap hints above 2^48, never to code), so keeping the low
 * 48 bits strips the signature.
 *
 * Signal frames: see struct arch_sigtramp.  sizeof(struct rt_sigframe)
 * is 4688 (siginfo 128, ucontext: 176 up to uc_mcontext, sigcontext 288
 * up to __reserved[4096]); the frame record sits right above it (both
 * 16-byte aligned) while the records in __reserved fit in it, which holds
 * unless the thread used SVE or SME registers: the fp engine checks that
 * the x29 and x30 in the sigcontext are the record's before it trusts it.
 */
#include "config.h"

#include <elf.h>

#include "arch/arch.h"

#ifndef EM_AARCH64
# define EM_AARCH64 183
#endif
#ifndef NT_ARM_PAC_MASK
# define NT_ARM_PAC_MASK 0x406
#endif

enum { PR_SP = 31, PR_PC = 32, PR_PSTATE = 33, PR_NWORDS = 34 };

static const int8_t aarch64_pr_index[33] = {
	0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
	16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30,
	PR_SP, PR_PC,
};

static const struct arch_sigtramp aarch64_sigtramp = {
	/* mov x8, #139 (__NR_rt_sigreturn); svc #0 */
	.code = { 0x68, 0x11, 0x80, 0xd2, 0x01, 0x00, 0x00, 0xd4 },
	.code_len = 8,
	/* The record at rt_sigframe + 4688, regs[0] at + 128 + 176 + 8. */
	.record_to_regs = 4688 - (128 + 176 + 8),
	.nregs = 31,
};

/* BL imm26; BLR Xn; BLRAA, BLRAAZ, BLRAB, BLRABZ (pointer authentication:
 * -mbranch-protection builds call through signed pointers). */
static const struct arch_insn_pattern aarch64_calls[] = {
	{ 0xfc000000, 0x94000000 },
	{ 0xfffffc1f, 0xd63f0000 },
	{ 0xfefff800, 0xd63f0800 },
};

const struct arch arch_aarch64 = {
	.name = "aarch64",
	.e_machine = EM_AARCH64,
	.elf_class = ELFCLASS64,
	.word_size = 8,
	.big_endian = false,
	.reg_ip = 32, .reg_sp = 31, .reg_fp = 29, .reg_ra = 30,
	.reg_zero = -1,
	.fp_chain = true,
	.ra_pac_mask = ~((UINT64_C(1) << 48) - 1),
	.pac_mask_note = NT_ARM_PAC_MASK,
	.sigtramp = &aarch64_sigtramp,
	.calls = aarch64_calls,
	.ncalls = sizeof(aarch64_calls) / sizeof(aarch64_calls[0]),
	.insn_size = 4,
	.syscall_args = { 0, 1, 2, 3, 4, 5 },   /* x0-x5 */
	.nsyscall_args = 6,
	.pr_reg_size = PR_NWORDS * 8,
	.pr_reg_min = PR_NWORDS * 8,
	.prstatus_size = 392,   /* 112 + 272 + pr_fpvalid, padded to 8 */
	.pr_index = aarch64_pr_index,
	.nregs = 33,
	.invalid_mask = 0,
	/* At a syscall stop, x8 holds the number the program asked for,
	 * but the kernel reads the one it runs from the NT_ARM_SYSTEM_CALL
	 * regset (a tracer may change it there), and x0 is both the first
	 * argument at entry and the return value at exit. */
	.pr_syscall_nr = -1,
	.syscall_nr_none = -1,
	.nr_futex = 98,
	.pr_syscall_ret = 0,
	.pr_syscall_err = -1,
	/* svc #0; the kernel's do_signal forgets the call's number before a
	 * stop (forget_syscall), so at a stop the code says. */
	.syscall_insn = { 0xffffffff, 0xd4000001 },
	.syscall_pc_back = true,
	.syscall_note = "the number is not in user_pt_regs: read the "
			"NT_ARM_SYSTEM_CALL regset (x8 holds what the program "
			"asked for); x0 is the first argument at entry and the "
			"return value, -errno on failure, at exit",
	/* __kernel_rt_sigreturn's CFI in the vdso restores only x29 and x30,
	 * from the frame record: .sigtramp is read instead. */
	.sigframe = NULL,
	.plt_header = 32, .plt_entry = 16,
};
