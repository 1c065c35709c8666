/* tests/fuzz/fuzz-cfi.c - libFuzzer target for the CFI reader
 * (unwind/cfi-read.c: entries, CIEs and FDEs, pointer encodings, the
 * .eh_frame_hdr search), the interpreter (unwind/cfi-exec.c:
 * unwind_cfi_rules_at, unwind_cfi_apply, unwind_cfi_expr_eval) and the x86-64 decoder of the
 * heuristics (unwind/engine-x86.c), all of which read a target's bytes as
 * root (issue 32).  Built by tests/fuzz/fuzz.sh; seeds of real sections
 * by tests/fuzz/make-seeds.py.
 *
 * The input (little-endian fields):
 *   0  flags: 1 big-endian, 2 4-byte addresses, 4 .debug_frame (else
 *      .eh_frame), 8 aarch64's registers (else x86-64's)
 *   4  hdr_len, 8 sec_len (u32)
 *  16  hdr_vaddr, 24 sec_vaddr, 32 pc (u64)
 *  40  hdr_len bytes of .eh_frame_hdr, sec_len bytes of the section, and
 *      the rest: the target's memory at MEM (the stack the rules read,
 *      an expression, code for the decoder).
 */
#include "config.h"

#include <elf.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "arch/arch.h"
#include "unwind/cfi.h"
#include "unwind/elf-image.h"
#include "unwind/x86-code.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define HEAD 40
#define MEM  UINT64_C(0x7ffd00000000)
#define MAX_ENTRIES 2048

struct fake {
	const unsigned char *mem;
	size_t len;
};

static int
fake_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	const struct fake *f = ctx;
	if (addr < MEM || addr - MEM > f->len || len > f->len - (addr - MEM))
		return -EFAULT;
	memcpy(buf, f->mem + (addr - MEM), len);
	return 0;
}

static int
fake_reg(void *ctx, uint64_t reg, uint64_t *val)
{
	(void)ctx;
	if (reg >= 32)
		return -EINVAL;
	*val = MEM + 8 * reg;
	return 0;
}

static uint64_t
le(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/* The rows of f at a few pcs, and one step by each. */
static void
run_fde(const struct cfi_fde *f, uint64_t pc, unsigned addr_size, bool be,
	const struct cfi_env *env, const struct arch *a)
{
	const uint64_t pcs[] = { f->start, f->start + f->range / 2, f->start + f->range - 1, pc };
	struct cfi_rules rs;
	struct arch_regs in, out;

	(void)unwind_cfi_fde_ra_undefined(f);
	memset(&in, 0, sizeof(in));
	for (unsigned i = 0; i < a->nregs && i < ARCH_NREGS; i++) {
		in.r[i] = MEM + 8 * i;
		in.valid |= UINT64_C(1) << i;
	}
	for (size_t i = 0; i < sizeof(pcs) / sizeof(pcs[0]); i++) {
		int r = unwind_cfi_rules_at(f, pcs[i], addr_size, be, &rs);
		if (r == 0)
			(void)unwind_cfi_apply(&rs, env, a, &in, &out);
	}
}

/* Every entry of s: CIEs and FDEs parsed, each FDE run. */
static void
walk_section(const struct cfi_section *s, uint64_t pc, const struct cfi_env *env,
	     const struct arch *a)
{
	struct cfi_entry e, ce;
	size_t off = 0;
	for (unsigned n = 0; n < MAX_ENTRIES && unwind_cfi_next_entry(s, &off, &e) > 0; n++) {
		struct cfi_fde f;
		size_t o;
		memset(&f, 0, sizeof(f));
		if (e.is_cie) {
			(void)unwind_cfi_cie_parse(s, &e, &f.cie);
			continue;
		}
		if (e.cie_off == UINT64_MAX || e.cie_off >= s->len)
			continue;
		o = (size_t)e.cie_off;
		if (unwind_cfi_next_entry(s, &o, &ce) <= 0 ||
		    !unwind_cfi_cie_parse(s, &ce, &f.cie) ||
		    !unwind_cfi_fde_parse(s, &e, &f.cie, &f) || f.range == 0)
			continue;
		run_fde(&f, pc, s->addr_size, s->be, env, a);
	}
}

/* The same bytes as an ELF image's: .eh_frame_hdr at hdr_vaddr and the
 * section at sec_vaddr, each a PT_LOAD; unwind_cfi_find through the header. */
static void
find_in_image(const uint8_t *hdr, size_t hdr_len, uint64_t hdr_vaddr, const uint8_t *sec,
	      size_t sec_len, uint64_t sec_vaddr, bool be, unsigned addr_size, uint64_t pc,
	      const struct cfi_env *env, const struct arch *a)
{
	struct elf_segment segs[2];
	struct elf_image img;
	unsigned char *buf = calloc(1, 64 + hdr_len + sec_len);
	if (!buf)
		return;
	memcpy(buf, ELFMAG, SELFMAG);
	buf[EI_CLASS] = addr_size == 8 ? ELFCLASS64 : ELFCLASS32;
	buf[EI_DATA] = be ? ELFDATA2MSB : ELFDATA2LSB;
	memcpy(buf + 64, hdr, hdr_len);
	memcpy(buf + 64 + hdr_len, sec, sec_len);
	memset(segs, 0, sizeof(segs));
	segs[0] = (struct elf_segment){ .vaddr = hdr_vaddr, .memsz = hdr_len, .offset = 64,
					.filesz = hdr_len, .flags = PF_R };
	segs[1] = (struct elf_segment){ .vaddr = sec_vaddr, .memsz = sec_len,
					.offset = 64 + hdr_len, .filesz = sec_len,
					.flags = PF_R };
	memset(&img, 0, sizeof(img));
	img.path = (char *)"fuzz";
	img.data = buf;
	img.size = 64 + hdr_len + sec_len;
	img.segs = segs;
	img.nsegs = 2;
	img.eh_frame_hdr_vaddr = hdr_len ? hdr_vaddr : 0;
	img.eh_frame_hdr_size = hdr_len;

	struct cfi_hdr h;
	struct cfi_fde f;
	if (unwind_cfi_hdr_read(&img, &h)) {
		/* Each start the table names (a few), and pc. */
		for (uint64_t i = 0; i < h.count && i < 64; i++) {
			uint64_t at = h.hdr_vaddr + (uint64_t)(int64_t)(int32_t)arch_get_uint(
							    h.table + 8 * i, 4, be);
			if (unwind_cfi_find(&img, at, &f) == 0)
				run_fde(&f, at, addr_size, be, env, a);
		}
	}
	if (unwind_cfi_find(&img, pc, &f) == 0)
		run_fde(&f, pc, addr_size, be, env, a);
	unwind_cfi_index_free(img.cfi_index);
	free(buf);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < HEAD)
		return 0;
	unsigned flags = data[0];
	size_t hdr_len = (size_t)le(data + 4, 4), sec_len = (size_t)le(data + 8, 4);
	uint64_t hdr_vaddr = le(data + 16, 8), sec_vaddr = le(data + 24, 8), pc = le(data + 32, 8);
	const uint8_t *rest = data + HEAD;
	size_t left = size - HEAD;
	bool be = flags & 1;
	unsigned addr_size = flags & 2 ? 4 : 8;
	const struct arch *a = flags & 8 ? &arch_aarch64 : &arch_x86_64;

	if (hdr_len > left)
		hdr_len = left;
	if (sec_len > left - hdr_len)
		sec_len = left - hdr_len;
	/* Copies of their exact size: a read past one is AddressSanitizer's. */
	uint8_t *hdr = malloc(hdr_len + 1), *sec = malloc(sec_len + 1);
	size_t mem_len = left - hdr_len - sec_len;
	uint8_t *mem = malloc(mem_len + 1);
	if (!hdr || !sec || !mem)
		goto out;
	memcpy(hdr, rest, hdr_len);
	memcpy(sec, rest + hdr_len, sec_len);
	memcpy(mem, rest + hdr_len + sec_len, mem_len);

	struct fake fk = { mem, mem_len };
	struct cfi_env env = { .ctx = &fk, .word_size = addr_size, .big_endian = be,
			       .read = fake_read, .reg = fake_reg };
	struct cfi_section s = { .p = sec, .len = sec_len, .vaddr = sec_vaddr,
				 .eh = !(flags & 4), .be = be, .addr_size = addr_size,
				 .datarel = hdr_len ? hdr_vaddr : 0 };
	walk_section(&s, pc, &env, a);
	if (s.eh)
		find_in_image(hdr, hdr_len, hdr_vaddr, sec, sec_len, sec_vaddr, be, addr_size, pc,
			      &env, a);

	/* The memory as one expression, with either word size. */
	uint64_t v;
	(void)unwind_cfi_expr_eval(mem, mem_len, pc, &env, &v);
	env.word_size = 12 - addr_size;
	(void)unwind_cfi_expr_eval(mem, mem_len, pc, &env, &v);

	/* The memory as x86-64 code: an instruction at each offset, in a
	 * window of 64 bytes as scan_epilogue_forward reads it, and up to
	 * the end. */
	for (size_t i = 0; i < mem_len && i < 4096; i++) {
		size_t w = mem_len - i < 64 ? mem_len - i : 64;
		(void)unwind_x86_insn_len(mem + i, w, MEM + i);
	}
out:
	free(hdr);
	free(sec);
	free(mem);
	return 0;
}
