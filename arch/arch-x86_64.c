/* arch/arch-x86_64.c - x86-64 (LP64, little-endian).
 *
 * pr_reg is struct user_regs_struct (glibc sys/user.h; the kernel's
 * asm/ptrace.h struct pt_regs order): r15 r14 r13 r12 rbp rbx r11 r10 r9
 * r8 rax rcx rdx rsi rdi orig_rax rip cs eflags rsp ss fs_base gs_base ds
 * es fs gs, 27 words.  Slots are the DWARF numbers of the psABI: rax rdx
 * rcx rbx rsi rdi rbp rsp r8..r15, then 16 = the return address column,
 * which holds rip.
 */
#include "config.h"

#include <elf.h>

#include "arch/arch.h"

enum {
	PR_R15, PR_R14, PR_R13, PR_R12, PR_RBP, PR_RBX, PR_R11, PR_R10,
	PR_R9, PR_R8, PR_RAX, PR_RCX, PR_RDX, PR_RSI, PR_RDI, PR_ORIG_RAX,
	PR_RIP, PR_CS, PR_EFLAGS, PR_RSP, PR_SS, PR_FS_BASE, PR_GS_BASE,
	PR_DS, PR_ES, PR_FS, PR_GS,
	PR_NWORDS
};

static const int8_t x86_64_pr_index[17] = {
	PR_RAX, PR_RDX, PR_RCX, PR_RBX, PR_RSI, PR_RDI, PR_RBP, PR_RSP,
	PR_R8, PR_R9, PR_R10, PR_R11, PR_R12, PR_R13, PR_R14, PR_R15,
	PR_RIP,
};

/* mov $15, %rax; syscall.  gregs run REG_R8 ... REG_RIP, 40 bytes into
 * the ucontext; the slots are libunwind's x86-64 numbers (ours). */
static const struct arch_sigreturn x86_64_sigreturn = {
	.code = { 0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05 },
	.code_len = 9,
	.regs_off = 40,
	.nregs = 17,
	.slots = { 8, 9, 10, 11, 12, 13, 14, 15, 5, 4, 6, 3, 1, 0, 2, 7, 16 },
};

const struct arch arch_x86_64 = {
	.name = "x86-64",
	.e_machine = EM_X86_64,
	.elf_class = ELFCLASS64,
	.word_size = 8,
	.big_endian = false,
	.reg_ip = 16, .reg_sp = 7, .reg_fp = 6, .reg_ra = -1,
	.reg_zero = -1,
	.fp_chain = true,
	.pr_reg_size = PR_NWORDS * 8,
	.pr_reg_min = PR_NWORDS * 8,
	.prstatus_size = 336,
	.pr_index = x86_64_pr_index,
	.nregs = 17,
	.invalid_mask = 0,
	.pr_syscall_nr = PR_ORIG_RAX,
	.syscall_nr_none = -1,
	.nr_futex = 202,
	.pr_syscall_ret = PR_RAX,
	.pr_syscall_err = -1,
	.syscall_note = "orig_rax holds the number (-1 outside a system "
			"call); rax the return value, -errno on failure: "
			"-EINTR or -ERESTART* when a stop interrupted the call "
			"(at a syscall-entry stop rax is -ENOSYS)",
	/* __restore_rt has CFI (glibc's 'S' augmentation): libunwind reads
	 * the ucontext from it. */
	.sigframe = NULL,
	.sigreturn = &x86_64_sigreturn,
	/* rdi rsi rdx r10 r8 r9 */
	.syscall_args = { 5, 4, 1, 10, 8, 9 },
	.nsyscall_args = 6,
	.plt_header = 16, .plt_entry = 16,
};
