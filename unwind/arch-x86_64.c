/* unwind/arch-x86_64.c - NT_PRSTATUS to DWARF register numbers. */
#include "config.h"

#include <elf.h>
#include <errno.h>
#include <string.h>
#if defined(__x86_64__)
#include <sys/user.h>
#endif

#include "unwind/unwind-internal.h"

const int arch_reg_ip = 16, arch_reg_sp = 7, arch_reg_fp = 6;

int
arch_regs_from_prstatus(const unsigned char *raw, size_t len, struct unwind_regs *out)
{
	memset(out, 0, sizeof(*out));
#if defined(__x86_64__)
	struct user_regs_struct r;
	if (len < sizeof(r))
		return -EINVAL;
	memcpy(&r, raw, sizeof(r));
	/* DWARF order: rax rdx rcx rbx rsi rdi rbp rsp r8..r15 rip. */
	const unsigned long long v[17] = {
		r.rax, r.rdx, r.rcx, r.rbx, r.rsi, r.rdi, r.rbp, r.rsp,
		r.r8, r.r9, r.r10, r.r11, r.r12, r.r13, r.r14, r.r15, r.rip,
	};
	for (int i = 0; i < 17; i++)
		out->r[i] = v[i];
	out->valid = (1u << 17) - 1;
	return 0;
#else
	(void)raw; (void)len;
	return -ENOTSUP;
#endif
}

const struct arch_ops arch_x86_64 = {
	.name = "x86-64",
	.e_machine = EM_X86_64,
	.word_size = 8,
	.big_endian = false,
	.reg_ip = 16, .reg_sp = 7, .reg_fp = 6, .reg_ra = -1,
	.regs_from_prstatus = arch_regs_from_prstatus,
};
