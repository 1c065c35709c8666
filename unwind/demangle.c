/* unwind/demangle.c - C++ and Rust names through libiberty. */
#include "config.h"

#include <stdbool.h>
#include <stddef.h>

#ifdef HAVE_DEMANGLE
# include <libiberty/demangle.h>
#endif

#include "unwind/symbols.h"

char *unwind_symbol_demangle(const char *name, bool with_params)
{
#ifdef HAVE_DEMANGLE
	/* DMGL_AUTO tries Rust (legacy and v0) before the C++ ABI, as legacy
	 * Rust names are valid C++ ones; without DMGL_VERBOSE the Rust hash
	 * suffix is dropped. */
	if (!name || !*name)
		return NULL;
	return cplus_demangle(name, DMGL_AUTO | DMGL_ANSI |
			      (with_params ? DMGL_PARAMS : 0));
#else
	(void)name;
	(void)with_params;
	return NULL;
#endif
}
