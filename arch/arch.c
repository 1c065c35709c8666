/* arch/arch.c - the host's table, the table of an ELF file, and pr_reg
 * decoding driven by the tables. */
#include "config.h"

#include <elf.h>
#include <errno.h>
#include <string.h>

#include "arch/arch.h"

const struct arch *
arch_host(void)
{
#if defined(__x86_64__) && defined(__LP64__)
	return &arch_x86_64;
#elif defined(__aarch64__) && defined(__LP64__)
	return &arch_aarch64;
#elif defined(__mips__) && defined(_ABIO32) && _MIPS_SIM == _ABIO32
# if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	return &arch_mips_be;
# else
	return &arch_mipsel;
# endif
#else
	/* x32, i386, n32/n64 MIPS, arm, riscv...: no table, so no guess. */
	return NULL;
#endif
}

const struct arch *
arch_from_elf(unsigned e_machine, int ei_class, bool big_endian)
{
	static const struct arch *const all[] = {
		&arch_x86_64, &arch_aarch64, &arch_mipsel, &arch_mips_be,
	};
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		const struct arch *a = all[i];
		if (a->e_machine == e_machine && a->elf_class == ei_class &&
		    a->big_endian == big_endian)
			return a;
	}
	return NULL;
}

int
arch_pr_word(const struct arch *a, const unsigned char *pr_reg, size_t len,
	     int index, uint64_t *out)
{
	if (index < 0 || (size_t)index >= len / a->word_size)
		return -EINVAL;
	*out = arch_get_uint(pr_reg + (size_t)index * a->word_size, a->word_size,
			     a->big_endian);
	return 0;
}

int
arch_regs_from_prstatus(const struct arch *a, const unsigned char *pr_reg,
			size_t len, struct arch_regs *out)
{
	memset(out, 0, sizeof(*out));
	if (len < a->pr_reg_min)
		return -EINVAL;
	for (unsigned i = 0; i < a->nregs; i++) {
		if (a->pr_index[i] < 0 ||
		    arch_pr_word(a, pr_reg, len, a->pr_index[i], &out->r[i]) < 0)
			continue;
		out->valid |= UINT64_C(1) << i;
	}
	if (a->reg_zero >= 0) {
		out->r[a->reg_zero] = 0;
		out->valid |= UINT64_C(1) << a->reg_zero;
	}
	out->valid &= ~a->invalid_mask;
	return 0;
}

/* Register slot `slot` of pr_reg, or 0 (no such slot, pr_reg too short). */
static uint64_t
pr_slot(const struct arch *a, const unsigned char *pr_reg, size_t len, int slot)
{
	uint64_t v;
	if (slot < 0 || arch_pr_word(a, pr_reg, len, a->pr_index[slot], &v) < 0)
		return 0;
	return v;
}

uint64_t
arch_pr_pc(const struct arch *a, const unsigned char *pr_reg, size_t len)
{
	return pr_slot(a, pr_reg, len, a->reg_ip);
}

uint64_t
arch_pr_sp(const struct arch *a, const unsigned char *pr_reg, size_t len)
{
	return pr_slot(a, pr_reg, len, a->reg_sp);
}

int
arch_pr_syscall(const struct arch *a, const unsigned char *pr_reg, size_t len,
		struct arch_syscall *out)
{
	uint64_t nr, ret, err = 0;

	out->in_syscall = false;
	out->nr = out->ret = -1;
	if (a->pr_syscall_nr < 0 || a->pr_syscall_ret < 0)
		return -ENOTSUP;
	if (arch_pr_word(a, pr_reg, len, a->pr_syscall_nr, &nr) < 0 ||
	    arch_pr_word(a, pr_reg, len, a->pr_syscall_ret, &ret) < 0 ||
	    (a->pr_syscall_err >= 0 &&
	     arch_pr_word(a, pr_reg, len, a->pr_syscall_err, &err) < 0))
		return -EINVAL;
	/* Words narrower than 64 bits are signed values of their width. */
	if (a->word_size == 4) {
		nr = (uint64_t)(int64_t)(int32_t)nr;
		ret = (uint64_t)(int64_t)(int32_t)ret;
	}
	if ((int64_t)nr == a->syscall_nr_none)
		return 0;
	out->in_syscall = true;
	out->nr = (int64_t)nr;
	/* MIPS returns a positive errno and flags it in a3. */
	out->ret = a->pr_syscall_err >= 0 && err ? -(int64_t)ret : (int64_t)ret;
	return 0;
}

int
arch_code_syscall(const struct arch *a, const unsigned char *pr_reg, size_t len,
		  const unsigned char *code, size_t code_len, struct arch_syscall *out)
{
	const struct arch_insn_pattern *sc = &a->syscall_insn;
	uint64_t ret;

	out->in_syscall = false;
	out->nr = out->ret = -1;
	if (!sc->mask || !a->insn_size || (code_len != a->insn_size && code_len != 2 * a->insn_size) ||
	    arch_pr_word(a, pr_reg, len, a->pr_syscall_ret, &ret) < 0)
		return -EINVAL;
	const unsigned char *at = code + code_len - a->insn_size;
	uint32_t insn = (uint32_t)arch_get_uint(at, a->insn_size, a->big_endian);
	if (a->syscall_pc_back && (insn & sc->mask) == sc->value) {
		/* Back on the call: to be restarted (which restart code
		 * the kernel had is gone with the call's number). */
		out->in_syscall = true;
		out->ret = -ERESTARTSYS;
		return 0;
	}
	if (code_len == a->insn_size)
		return 0;
	insn = (uint32_t)arch_get_uint(code, a->insn_size, a->big_endian);
	if ((insn & sc->mask) == sc->value) {
		uint64_t err = 0;
		if (a->pr_syscall_err >= 0 &&
		    arch_pr_word(a, pr_reg, len, a->pr_syscall_err, &err) < 0)
			return -EINVAL;
		int64_t v = a->word_size == 4 ? (int64_t)(int32_t)ret : (int64_t)ret;
		out->in_syscall = true;
		out->ret = err ? -v : v;
	}
	return 0;
}
