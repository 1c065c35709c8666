/* tests/unit-arch.c - the arch/ tables: each NT_PRSTATUS layout decoded
 * from a pr_reg built by hand after the kernel's struct (so a wrong index
 * in a table fails here, on any host), the byte-order reader, the table
 * of an ELF header, and the host's table against the compiler's own idea
 * of the host.
 */
#include "config.h"

#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#if defined(__x86_64__) || defined(__aarch64__)
#include <sys/user.h>
#endif

#include "arch/arch.h"

#ifndef EM_AARCH64
# define EM_AARCH64 183
#endif

static int failures;

#define CHECK(cond, ...) do { \
	if (!(cond)) { \
		failures++; \
		printf("FAIL %s:%d: ", __FILE__, __LINE__); \
		printf(__VA_ARGS__); \
		printf("\n"); \
	} \
} while (0)

static void
put(unsigned char *p, uint64_t v, size_t size, bool be)
{
	for (size_t k = 0; k < size; k++)
		p[be ? size - 1 - k : k] = (unsigned char)(v >> 8 * k);
}

static void
test_get_uint(void)
{
	const unsigned char b[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	CHECK(arch_get_uint(b, 4, false) == 0x04030201u, "le32");
	CHECK(arch_get_uint(b, 4, true) == 0x01020304u, "be32");
	CHECK(arch_get_uint(b, 8, false) == UINT64_C(0x0807060504030201), "le64");
	CHECK(arch_get_uint(b, 2, true) == 0x0102u, "be16");
}

/* user_regs_struct: r15 r14 r13 r12 rbp rbx r11 r10 r9 r8 rax rcx rdx rsi
 * rdi orig_rax rip cs eflags rsp ss fs_base gs_base ds es fs gs. */
static void
test_x86_64(void)
{
	const struct arch *a = &arch_x86_64;
	unsigned char raw[27 * 8];
	struct arch_regs r;

	CHECK(a->pr_reg_size == sizeof(raw), "x86-64 pr_reg is 216 bytes");
	for (int k = 0; k < 27; k++)
		put(raw + 8 * k, 0x1000 + (uint64_t)k, 8, false);
	CHECK(arch_regs_from_prstatus(a, raw, sizeof(raw), &r) == 0, "x86-64 decodes");
	CHECK(r.r[a->reg_ip] == 0x1000 + 16, "x86-64 rip");
	CHECK(r.r[a->reg_sp] == 0x1000 + 19, "x86-64 rsp");
	CHECK(r.r[a->reg_fp] == 0x1000 + 4, "x86-64 rbp");
	CHECK(r.r[0] == 0x1000 + 10, "x86-64 rax is DWARF 0");
	CHECK(r.r[3] == 0x1000 + 5, "x86-64 rbx is DWARF 3");
	CHECK(r.r[15] == 0x1000 + 0, "x86-64 r15 is DWARF 15");
	CHECK(r.valid == (UINT64_C(1) << 17) - 1, "x86-64 17 registers");
	CHECK(arch_pr_sp(a, raw, sizeof(raw)) == 0x1000 + 19, "x86-64 sp");
	uint64_t v;
	CHECK(arch_pr_word(a, raw, sizeof(raw), a->pr_syscall_nr, &v) == 0 &&
	      v == 0x1000 + 15, "x86-64 orig_rax");
	CHECK(arch_pr_word(a, raw, sizeof(raw), a->pr_syscall_ret, &v) == 0 &&
	      v == 0x1000 + 10, "x86-64 rax");
	CHECK(arch_regs_from_prstatus(a, raw, sizeof(raw) - 8, &r) == -EINVAL,
	      "x86-64 short pr_reg refused");
#if defined(__x86_64__)
	struct user_regs_struct u;
	memcpy(&u, raw, sizeof(u));
	CHECK(sizeof(u) == a->pr_reg_size, "x86-64 size matches sys/user.h");
	CHECK(u.rsp == 0x1000 + 19 && u.rip == 0x1000 + 16 &&
	      u.rbp == 0x1000 + 4 && u.rax == 0x1000 + 10 &&
	      u.orig_rax == 0x1000 + 15,
	      "x86-64 table matches sys/user.h");
#endif
}

/* user_pt_regs: x0..x30, sp, pc, pstate. */
static void
test_aarch64(void)
{
	const struct arch *a = &arch_aarch64;
	unsigned char raw[34 * 8];
	struct arch_regs r;

	CHECK(a->pr_reg_size == sizeof(raw), "aarch64 pr_reg is 272 bytes");
	for (int k = 0; k < 34; k++)
		put(raw + 8 * k, 0x2000 + (uint64_t)k, 8, false);
	CHECK(arch_regs_from_prstatus(a, raw, sizeof(raw), &r) == 0, "aarch64 decodes");
	CHECK(r.r[a->reg_ip] == 0x2000 + 32, "aarch64 pc");
	CHECK(r.r[a->reg_sp] == 0x2000 + 31 && a->reg_sp == 31, "aarch64 sp is DWARF 31");
	CHECK(r.r[a->reg_fp] == 0x2000 + 29 && a->reg_fp == 29, "aarch64 fp is x29");
	CHECK(r.r[a->reg_ra] == 0x2000 + 30 && a->reg_ra == 30, "aarch64 lr is x30");
	CHECK(a->pr_syscall_nr < 0, "aarch64: the number is not in user_pt_regs");
	CHECK(arch_pr_sp(a, raw, sizeof(raw)) == 0x2000 + 31, "aarch64 sp");
#if defined(__aarch64__)
	/* glibc's name for user_pt_regs. */
	struct user_regs_struct u;
	memcpy(&u, raw, sizeof(u));
	CHECK(sizeof(u) == a->pr_reg_size, "aarch64 size matches sys/user.h");
	CHECK(u.sp == 0x2000 + 31 && u.pc == 0x2000 + 32 && u.regs[29] == 0x2000 + 29,
	      "aarch64 table matches sys/user.h");
#endif
}

/* o32: 6 pad words, r0..r31, lo, hi, epc, badvaddr, status, cause. */
static void
test_mips(const struct arch *a)
{
	unsigned char raw[45 * 4];
	struct arch_regs r;

	for (int k = 0; k < 45; k++)
		put(raw + 4 * k, 0x3000 + (uint64_t)k, 4, a->big_endian);
	CHECK(arch_regs_from_prstatus(a, raw, sizeof(raw), &r) == 0, "%s decodes", a->name);
	CHECK(r.r[a->reg_sp] == 0x3000 + 35, "%s sp", a->name);
	CHECK(r.r[a->reg_ip] == 0x3000 + 40, "%s pc is cp0_epc", a->name);
	CHECK(r.r[0] == 0, "%s r0 is zero", a->name);
	CHECK(!(r.valid & (UINT64_C(1) << 26)) && !(r.valid & (UINT64_C(1) << 27)),
	      "%s k0/k1 not valid", a->name);
	CHECK(arch_pr_sp(a, raw, sizeof(raw)) == 0x3000 + 35, "%s sp", a->name);
	CHECK(a->sigframe && a->sigframe->nr_rt_sigreturn == 4193, "%s sigframe", a->name);
}

/* A thread stopped while blocked in a system call: which call, and the
 * restart code it left with. */
static void
test_syscall(void)
{
	struct arch_syscall sc;
	unsigned char x[27 * 8] = { 0 }, m[45 * 4] = { 0 }, a64[34 * 8] = { 0 };

	put(x + 8 * 15, 230, 8, false);                 /* orig_rax */
	put(x + 8 * 10, (uint64_t)-516, 8, false);      /* rax */
	CHECK(arch_pr_syscall(&arch_x86_64, x, sizeof(x), &sc) == 0 && sc.in_syscall &&
	      sc.nr == 230 && sc.ret == -516, "x86-64 blocked in clock_nanosleep");
	put(x + 8 * 15, (uint64_t)-1, 8, false);
	CHECK(arch_pr_syscall(&arch_x86_64, x, sizeof(x), &sc) == 0 && !sc.in_syscall,
	      "x86-64 outside a call");
	CHECK(arch_pr_syscall(&arch_x86_64, x, 10 * 8, &sc) == -EINVAL, "x86-64 short");

	for (int be = 0; be < 2; be++) {
		const struct arch *a = be ? &arch_mips_be : &arch_mipsel;
		unsigned char code[8];
		/* NT_PRSTATUS has no r0 (the kernel keeps the number there,
		 * but never copies it out): the code before the pc says. */
		CHECK(arch_pr_syscall(a, m, sizeof(m), &sc) == -ENOTSUP,
		      "%s: the number is not in pr_reg", a->name);
		put(m + 4 * 8, 516, 4, be);             /* v0: ERESTART_RESTARTBLOCK */
		put(m + 4 * 13, 1, 4, be);              /* a3: v0 is an errno */
		put(code, 0x0000000c, 4, be);           /* syscall */
		put(code + 4, 0x14e00003, 4, be);       /* bnez a3, ... */
		CHECK(arch_code_syscall(a, m, sizeof(m), code, 8, &sc) == 0 && sc.in_syscall &&
		      sc.ret == -516, "%s blocked in nanosleep, to be restarted", a->name);
		put(m + 4 * 13, 0, 4, be);              /* a3 0: v0 a result */
		put(m + 4 * 8, 3, 4, be);
		CHECK(arch_code_syscall(a, m, sizeof(m), code, 8, &sc) == 0 && sc.in_syscall &&
		      sc.ret == 3, "%s just back from a call: its result", a->name);
		/* On the syscall, about to make it: a restart is put back
		 * there only after the stop, so it is not in one. */
		put(code, 0x8fbf001c, 4, be);           /* lw ra, 28(sp) */
		put(code + 4, 0x0000000c, 4, be);
		CHECK(arch_code_syscall(a, m, sizeof(m), code, 8, &sc) == 0 && !sc.in_syscall,
		      "%s on the syscall instruction: not in a call", a->name);
		put(code + 4, 0x0000000c | (5u << 6), 4, be);  /* syscall 5 */
		CHECK(arch_code_syscall(a, m, sizeof(m), code + 4, 4, &sc) == 0 && !sc.in_syscall,
		      "%s at the start of a mapping", a->name);
		put(code, 0x0000000c | (5u << 6), 4, be);
		put(code + 4, 0, 4, be);
		CHECK(arch_code_syscall(a, m, sizeof(m), code, 8, &sc) == 0 && sc.in_syscall,
		      "%s after a syscall with a code field", a->name);
		put(code, 0x0000000d, 4, be);           /* break */
		CHECK(arch_code_syscall(a, m, sizeof(m), code, 8, &sc) == 0 && !sc.in_syscall,
		      "%s after another instruction", a->name);
		memset(m, 0, sizeof(m));
	}
	{
		/* aarch64: a call to be restarted is back on its svc #0 at
		 * the stop (x0 the first argument again). */
		unsigned char code[8];
		put(code, 0xd2800000, 4, false);        /* mov x0, #0 */
		put(code + 4, 0xd4000001, 4, false);    /* svc #0 */
		CHECK(arch_code_syscall(&arch_aarch64, a64, sizeof(a64), code, 8, &sc) == 0 &&
		      sc.in_syscall && sc.ret == -ERESTARTSYS, "aarch64 back on its svc");
		put(code, 0xd4000001, 4, false);
		put(code + 4, 0xd65f03c0, 4, false);    /* ret */
		put(a64, (uint64_t)-4, 8, false);       /* x0: -EINTR */
		CHECK(arch_code_syscall(&arch_aarch64, a64, sizeof(a64), code, 8, &sc) == 0 &&
		      sc.in_syscall && sc.ret == -4, "aarch64 after a call cut short");
		memset(a64, 0, sizeof(a64));
	}
	CHECK(arch_pr_syscall(&arch_aarch64, a64, sizeof(a64), &sc) == -ENOTSUP,
	      "aarch64: the number is in another regset");
}

static void
test_from_elf(void)
{
	CHECK(arch_from_elf(EM_X86_64, ELFCLASS64, false) == &arch_x86_64, "elf x86-64");
	CHECK(arch_from_elf(EM_AARCH64, ELFCLASS64, false) == &arch_aarch64, "elf aarch64");
	CHECK(arch_from_elf(EM_MIPS, ELFCLASS32, true) == &arch_mips_be, "elf mips");
	CHECK(arch_from_elf(EM_MIPS, ELFCLASS32, false) == &arch_mipsel, "elf mipsel");
	CHECK(arch_from_elf(EM_MIPS, ELFCLASS64, false) == NULL, "elf mips64: none");
	CHECK(arch_from_elf(EM_386, ELFCLASS32, false) == NULL, "elf i386: none");
	CHECK(arch_from_elf(EM_X86_64, ELFCLASS64, true) == NULL, "elf big x86-64: none");
}

static void
test_host(void)
{
	const struct arch *h = arch_host();
#if defined(__x86_64__) && defined(__LP64__)
	CHECK(h == &arch_x86_64, "host is x86-64");
#elif defined(__aarch64__)
	CHECK(h == &arch_aarch64, "host is aarch64");
#elif defined(__mips__) && defined(_ABIO32) && _MIPS_SIM == _ABIO32
	CHECK(h && h->e_machine == EM_MIPS, "host is MIPS o32");
#else
	CHECK(h == NULL, "unknown host: no table, no guess");
#endif
	if (h) {
		unsigned one = 1;
		CHECK(h->big_endian == (*(unsigned char *)&one == 0), "host byte order");
		CHECK(h->word_size == sizeof(void *), "host word size");
	}
}

int
main(void)
{
	test_get_uint();
	test_x86_64();
	test_aarch64();
	test_mips(&arch_mipsel);
	test_mips(&arch_mips_be);
	test_syscall();
	test_from_elf();
	test_host();
	if (failures)
		return 1;
	printf("unit-arch: all passed\n");
	return 0;
}
