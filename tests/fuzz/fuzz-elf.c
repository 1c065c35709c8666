/* tests/fuzz/fuzz-elf.c - libFuzzer target for the ELF and symbol reader
 * (unwind/elf-image.c, unwind/symtab.c) and the maps parser (maps.c).
 * Built by tests/fuzz/fuzz.sh.
 *
 * The input is an ELF file: it is wrapped as an in-memory image (the
 * vdso path: headers, segments, build-id), its load bias computed against
 * a few mappings, and symbols looked up across its segments (builds the
 * symbol table: .symtab, .dynsym, .gnu_debugdata, demangling).  The same
 * bytes are also parsed as /proc/PID/maps text. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "unwind/elf-image.h"
#include "unwind/maps.h"
#include "unwind/symbols.h"
#include "unwind/unwind.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct elf_cache cache = { NULL };
	struct module_map mm;
	char *text;
	void *copy;

	/* maps text: NUL-terminated copy. */
	text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	if (unwind_module_map_parse(text, &mm) == 0) {
		for (size_t i = 0; i < mm.n; i++)
			unwind_module_map_find(&mm, mm.v[i].start);
		unwind_module_map_find(&mm, 0);
		unwind_module_map_find(&mm, UINT64_MAX);
		unwind_module_map_free(&mm);
	}
	free(text);

	copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	struct elf_image *img = unwind_elf_image_from_memory(&cache, copy, size, "fuzz");
	if (img) {
		static const unsigned flags[] = { 0, UNWIND_SYM_NO_PARAMS, UNWIND_SYM_NO_DEMANGLE };

		for (size_t i = 0; i < img->nsegs && i < 16; i++) {
			const struct elf_segment *s = &img->segs[i];
			struct mapping m = { .start = 0x10000000, .end = 0x10000000 + 0x100000,
					     .offset = s->offset & ~(uint64_t)4095,
					     .perms = MAPPING_R | MAPPING_X };
			uint64_t bias, off;

			unwind_elf_image_bias(img, &m, &bias);
			for (uint64_t k = 0; k < 8; k++) {
				uint64_t a = s->vaddr + (s->memsz / 8) * k;
				unwind_elf_image_lookup(img, a, flags[k % 3], &off);
			}
		}
		uint64_t off0;
		unwind_elf_image_lookup(img, 0, 0, &off0);
	}
	unwind_elf_cache_free(&cache);
	return 0;
}
