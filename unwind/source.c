/* unwind/source.c - source file:line and inlined functions of an address,
 * from DWARF through libdw (dump --source).
 *
 * The DWARF of an image is opened on the first lookup in it, from the file
 * itself, else from its separate debug file (found as symtab.c finds it,
 * by build-id then .gnu_debuglink), and kept for the target's lifetime.
 * libdw reads the image's mmap through elf_memory: nothing is opened again.
 *
 * One physical frame can stand for several source-level frames: the
 * compiler may have inlined g into f at this address.  The DIEs containing
 * the address in the concrete tree (dwarf_getscopes_die on the innermost
 * scope, as eu-stack -i does) are [inlined g, ..., subprogram f, CU]; the
 * line table gives the position inside g, and each inlined instance's
 * DW_AT_call_file/DW_AT_call_line gives the position in the function it
 * was inlined into.
 */
#include "config.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "unwind/elf-image.h"
#include "unwind/maps.h"
#include "unwind/symbols.h"
#include "unwind/target.h"
#include "unwind/unwind.h"

/* A copy of a file with compressed sections larger than this is not made
 * (only when it cannot be mapped copy-on-write). */
#define COPY_MAX (256u << 20)

struct source_dwarf {
	const struct elf_image *img;  /* the key (images live as long as t) */
	struct elf_cache debug;   /* the separate debug file DWARF came from */
	void *view;               /* writable view libelf works in, or NULL */
	size_t view_len;
	bool view_mmapped;
	Elf *elf;
	Dwarf *dw;                /* NULL: this image has no DWARF */
	struct source_dwarf *next;
};

/* Demangled names handed out, so they live as long as the target. */
struct source_name {
	const char *mangled;      /* in the DWARF string table: stable */
	unsigned flags;
	char *demangled;          /* NULL: not mangled, mangled is the name */
	struct source_name *next;
};

struct source_cache {
	struct source_dwarf *dwarfs;
	struct source_name *names;
};

static bool has_compressed_section(Elf *e)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(e, scn)) != NULL)
		if (gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_COMPRESSED))
			return true;
	return false;
}

/* A private writable view of img's file: libdw decompresses compressed
 * sections in place (elf_compress writes the section headers), and the
 * image's own mapping is read-only.  Copy-on-write from the file when it
 * is still the image's (dev, inode), else a copy.  0 or -errno. */
static int make_view(struct source_dwarf *sd, const struct elf_image *img)
{
	/* Only the regular file: something else put in its place must not
	 * hang us (the (dev, inode) check then rejects another file). */
	int fd = img->path ? unwind_elf_open_regular(img->path) : -1;
	struct stat st;

	if (fd >= 0) {
		if (fstat(fd, &st) == 0 && st.st_dev == img->dev &&
		    st.st_ino == img->ino && (uint64_t)st.st_size == img->size) {
			void *p = unwind_file_map(fd, img->size, PROT_READ | PROT_WRITE);

			if (p != MAP_FAILED) {
				close(fd);
				sd->view = p;
				sd->view_len = img->size;
				sd->view_mmapped = true;
				return 0;
			}
		}
		close(fd);
	}
	if (img->size > COPY_MAX)
		return -EFBIG;
	sd->view = malloc(img->size);
	if (!sd->view)
		return -ENOMEM;
	memcpy(sd->view, img->data, img->size);
	sd->view_len = img->size;
	return 0;
}

static void drop_view(struct source_dwarf *sd)
{
	if (sd->view_mmapped)
		unwind_file_unmap(sd->view, sd->view_len);
	else
		free(sd->view);
	sd->view = NULL;
	sd->view_mmapped = false;
}

/* libdw's handle on img, in sd->dw (and sd->elf), if it has DWARF libdw
 * can read; else sd->dw stays NULL. */
static void open_dwarf(struct source_dwarf *sd, const struct elf_image *img)
{
	Elf *e;

	if (img->size < EI_NIDENT || memcmp(img->data, ELFMAG, SELFMAG) != 0)
		return;
	elf_version(EV_CURRENT);
	e = elf_memory((char *)(uintptr_t)img->data, img->size);
	if (!e)
		return;
	if (has_compressed_section(e)) {
		elf_end(e);
		if (make_view(sd, img) < 0)
			return;
		e = elf_memory(sd->view, sd->view_len);
		if (!e) {
			drop_view(sd);
			return;
		}
	}
	sd->dw = dwarf_begin_elf(e, DWARF_C_READ, NULL);
	if (!sd->dw) {
		elf_end(e);
		drop_view(sd);
		return;
	}
	sd->elf = e;
}

/* unwind_elf_debug_file_search: keep the first debug file libdw can read. */
static long take_debug(void *arg, struct elf_cache *file, struct elf_image *dbg)
{
	struct source_dwarf *sd = arg;

	open_dwarf(sd, dbg);
	if (!sd->dw)
		return 0;
	sd->debug = *file;
	return 1;
}

/* The DWARF of img, opened on first use.  NULL only when out of memory;
 * sd->dw is NULL when the image has no debug information. */
static struct source_dwarf *source_dwarf_get(struct unwind_target *t,
					     const struct elf_image *img)
{
	struct source_dwarf *sd;

	if (!t->source) {
		t->source = calloc(1, sizeof(*t->source));
		if (!t->source)
			return NULL;
	}
	for (sd = t->source->dwarfs; sd; sd = sd->next)
		if (sd->img == img)
			return sd;
	sd = calloc(1, sizeof(*sd));
	if (!sd)
		return NULL;
	sd->img = img;
	open_dwarf(sd, img);
	/* A stripped file may still carry .debug_frame-only sections, and
	 * libdw then fails: look for the real debug file either way. */
	if (!sd->dw && unwind_elf_debug_file_search(img, take_debug, sd) < 0) {
		free(sd);
		return NULL;
	}
	sd->next = t->source->dwarfs;
	t->source->dwarfs = sd;
	return sd;
}

void unwind_source_cache_free(struct source_cache *c)
{
	if (!c)
		return;
	for (struct source_dwarf *sd = c->dwarfs, *next; sd; sd = next) {
		next = sd->next;
		if (sd->dw)
			dwarf_end(sd->dw);
		if (sd->elf)
			elf_end(sd->elf);
		drop_view(sd);
		unwind_elf_cache_free(&sd->debug);
		free(sd);
	}
	for (struct source_name *n = c->names, *next; n; n = next) {
		next = n->next;
		free(n->demangled);
		free(n);
	}
	free(c);
}

/* The name of a subprogram or inlined instance: its linkage name
 * demangled as flags ask (UNWIND_SYM_*), else DW_AT_name (through
 * DW_AT_abstract_origin/specification).  NULL if it has neither. */
static const char *die_name(struct source_cache *c, Dwarf_Die *die,
			    unsigned flags)
{
	Dwarf_Attribute attr;
	const char *name;
	struct source_name *n;

	name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &attr));
	if (!name)
		name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name,
							     &attr));
	if (!name)
		return dwarf_diename(die);
	if (flags & UNWIND_SYM_NO_DEMANGLE)
		return name;
	for (n = c->names; n; n = n->next)
		if (n->mangled == name && n->flags == flags)
			return n->demangled ? n->demangled : name;
	n = calloc(1, sizeof(*n));
	if (!n)
		return name;
	n->mangled = name;
	n->flags = flags;
	n->demangled = unwind_symbol_demangle(name, !(flags & UNWIND_SYM_NO_PARAMS));
	n->next = c->names;
	c->names = n;
	return n->demangled ? n->demangled : name;
}

/* The compilation unit covering vaddr.  .debug_aranges first; GCC leaves
 * it out at times (and libdw then has nothing), so walk the units. */
static bool cu_of(Dwarf *dw, uint64_t vaddr, Dwarf_Die *cu)
{
	Dwarf_Off off = 0, next;
	size_t hsize;

	if (dwarf_addrdie(dw, vaddr, cu))
		return true;
	while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		if (dwarf_offdie(dw, off + hsize, cu) && dwarf_haspc(cu, vaddr) > 0)
			return true;
		off = next;
	}
	return false;
}

/* vaddr - start of the range of die that holds it; 0 if none does. */
static uint64_t range_offset(Dwarf_Die *die, uint64_t vaddr)
{
	Dwarf_Addr base, start, end;
	ptrdiff_t off = 0;

	while ((off = dwarf_ranges(die, off, &base, &start, &end)) > 0)
		if (vaddr >= start && vaddr < end)
			return vaddr - start;
	return 0;
}

static int source_lookup(struct unwind_target *t, uint64_t ip, bool caller,
			 unsigned flags, struct unwind_source_frame *out, int max)
{
	uint64_t look = caller && ip > 0 ? ip - 1 : ip;
	struct mapping *m;
	struct source_dwarf *sd;
	Dwarf_Die cu, *scopes = NULL;
	Dwarf_Files *files = NULL;
	Dwarf_Line *line;
	size_t nfiles = 0;
	const char *file = NULL;
	int lineno = 0, nscopes, n = 0;
	uint64_t vaddr;

	if (max < 1)
		return -EINVAL;
	m = unwind_target_mapping(t, look);
	if (!m || !m->image || !m->bias_known)
		return 0;
	sd = source_dwarf_get(t, m->image);
	if (!sd)
		return -ENOMEM;
	if (!sd->dw)
		return 0;
	vaddr = look - m->bias;
	if (!cu_of(sd->dw, vaddr, &cu))
		return 0;

	line = dwarf_getsrc_die(&cu, vaddr);
	if (line) {
		file = dwarf_linesrc(line, NULL, NULL);
		if (dwarf_lineno(line, &lineno) != 0 || lineno < 0)
			lineno = 0;
	}
	if (dwarf_getsrcfiles(&cu, &files, &nfiles) != 0)
		files = NULL;

	/* The innermost scope from dwarf_getscopes; its containing DIEs from
	 * dwarf_getscopes_die, which (unlike the former past an inlined
	 * instance) follows the concrete tree: the functions it was inlined
	 * into, not its abstract definition's scopes. */
	nscopes = dwarf_getscopes(&cu, vaddr, &scopes);
	if (nscopes > 0) {
		Dwarf_Die *chain = NULL;
		int nchain = dwarf_getscopes_die(&scopes[0], &chain);

		free(scopes);
		scopes = chain;
		nscopes = nchain;
	}
	for (int i = 0; i < nscopes; i++) {
		Dwarf_Die *s = &scopes[i];
		int tag = dwarf_tag(s);
		Dwarf_Attribute attr;
		Dwarf_Word v;

		if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram &&
		    tag != DW_TAG_entry_point)
			continue;
		/* The physical function always gets the last entry: inlined
		 * frames past max - 1 are left out, their call sites still
		 * followed. */
		if (tag != DW_TAG_inlined_subroutine || n < max - 1) {
			out[n].function = die_name(t->source, s, flags);
			out[n].offset = range_offset(s, vaddr) + (ip - look);
			out[n].file = file;
			out[n].line = (unsigned)lineno;
			out[n].inlined = tag == DW_TAG_inlined_subroutine;
			n++;
		}
		if (tag != DW_TAG_inlined_subroutine)
			break;
		/* Where the caller stands: the call site of this instance. */
		file = NULL;
		lineno = 0;
		if (files && dwarf_formudata(dwarf_attr(s, DW_AT_call_file, &attr), &v) == 0)
			file = dwarf_filesrc(files, v, NULL, NULL);
		if (dwarf_formudata(dwarf_attr(s, DW_AT_call_line, &attr), &v) == 0 &&
		    v <= 0x7fffffff)
			lineno = (int)v;
	}
	free(scopes);
	/* Code the line table covers outside any subprogram (assembly). */
	if (n == 0 && file) {
		out[0].function = NULL;
		out[0].offset = 0;
		out[0].file = file;
		out[0].line = (unsigned)lineno;
		out[0].inlined = false;
		n = 1;
	}
	return n;
}

int unwind_source(struct unwind_target *t, uint64_t ip, bool caller,
		  unsigned flags, struct unwind_source_frame *out, int max)
{
	unwind_target_enter(t);
	int r = source_lookup(t, ip, caller, flags, out, max);
	unwind_target_leave(t);
	return r;
}
