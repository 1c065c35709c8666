/* unwind/python-debug.c - the layout of CPython 3.13 from the
 * _Py_DebugOffsets the interpreter keeps at the start of _PyRuntime
 * (cookie "xdebugpy", its version, then groups of 64-bit offsets, each
 * group beginning with its struct's size), so that a patch release
 * needs no table of ours.  The structure itself changes between minor
 * versions (3.14 inserts fields): the positions below are 3.13's.
 * Every offset is checked against its group's size and against what one
 * read of stackspy's takes. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "unwind/python.h"
#include "unwind/target.h"

/* Positions (in 64-bit words after the cookie) of 3.13's fields. */
enum {
	D_VERSION = 0, D_FREE_THREADED = 1,
	D_RT_SIZE = 2, D_RT_INTERP_HEAD = 4,
	D_IN_SIZE = 5, D_IN_NEXT = 7, D_IN_THREADS_HEAD = 8, D_IN_CEVAL_GIL = 13,
	D_TS_SIZE = 18, D_TS_NEXT = 20, D_TS_INTERP = 21, D_TS_CURRENT = 22,
	D_TS_NATIVE_TID = 24, D_TS_CHUNK = 25,
	D_FR_SIZE = 27, D_FR_PREVIOUS = 28, D_FR_EXECUTABLE = 29, D_FR_INSTR = 30,
	D_FR_OWNER = 32,
	D_CO_SIZE = 33, D_CO_FILENAME = 34, D_CO_QUALNAME = 36, D_CO_LINETABLE = 37,
	D_CO_FIRSTLINENO = 38, D_CO_CODE = 42,
	D_OB_SIZE = 43, D_OB_TYPE = 44,
	D_BYTES_SIZE = 63, D_BYTES_OB_SIZE = 64, D_BYTES_SVAL = 65,
	D_STR_SIZE = 66, D_STR_STATE = 67, D_STR_LENGTH = 68, D_STR_ASCII = 69,
	D_WORDS = 72,
};

/* Field at position f of group g (whose size is at position g): true
 * when it lies inside the group and its value fits `room` bytes of one
 * read; *out set. */
static bool
field(const uint64_t *w, int g, int f, uint64_t room, uint32_t *out)
{
	if (w[g] == 0 || w[g] > (1u << 20) || w[f] >= w[g] || w[f] + 8 > room)
		return false;
	*out = (uint32_t)w[f];
	return true;
}

bool
unwind_py_debug_offsets(struct unwind_target *t, uint64_t runtime, uint32_t version,
			struct py_layout *L, char *why, size_t whylen)
{
	unsigned char raw[8 + D_WORDS * 8];
	uint64_t w[D_WORDS];
	if (unwind_py_read(t, runtime, raw, sizeof(raw)) < 0) {
		snprintf(why, whylen, "_PyRuntime could not be read");
		return false;
	}
	if (memcmp(raw, "xdebugpy", 8) != 0) {
		snprintf(why, whylen, "no debug offsets at _PyRuntime");
		return false;
	}
	memcpy(w, raw + 8, sizeof(w));
	if ((w[D_VERSION] >> 16) != (version >> 16)) {
		snprintf(why, whylen, "debug offsets of version 0x%llx in a 0x%x interpreter",
			 (unsigned long long)w[D_VERSION], (unsigned)version);
		return false;
	}
	if (((version >> 16) & 0xff) != 13) {
		snprintf(why, whylen, "no reader for this version's debug offsets (3.13's are known)");
		return false;
	}
	if (w[D_FREE_THREADED]) {
		snprintf(why, whylen, "a free-threaded build is not supported");
		return false;
	}
	memset(L, 0, sizeof(*L));
	L->minor = 13;
	L->rt_gil = PY_NONE;
	L->ts_cframe = PY_NONE;
	L->cf_current = PY_NONE;
	L->fr_entry = PY_NONE;
	L->instr_is_prev = false;
	L->ts_size = 4096;
	L->fr_size = 256;
	L->co_size = 256;
	bool ok =
		field(w, D_RT_SIZE, D_RT_INTERP_HEAD, UINT32_MAX, &L->rt_interp_head) &&
		field(w, D_IN_SIZE, D_IN_NEXT, UINT32_MAX, &L->in_next) &&
		field(w, D_IN_SIZE, D_IN_THREADS_HEAD, UINT32_MAX, &L->in_threads_head) &&
		field(w, D_IN_SIZE, D_IN_CEVAL_GIL, UINT32_MAX, &L->in_gil_ptr) &&
		field(w, D_TS_SIZE, D_TS_NEXT, L->ts_size, &L->ts_next) &&
		field(w, D_TS_SIZE, D_TS_CURRENT, L->ts_size, &L->ts_current) &&
		field(w, D_TS_SIZE, D_TS_NATIVE_TID, L->ts_size, &L->ts_native_tid) &&
		field(w, D_TS_SIZE, D_TS_CHUNK, L->ts_size - 8, &L->ts_chunk) &&
		field(w, D_FR_SIZE, D_FR_PREVIOUS, L->fr_size, &L->fr_previous) &&
		field(w, D_FR_SIZE, D_FR_EXECUTABLE, L->fr_size, &L->fr_code) &&
		field(w, D_FR_SIZE, D_FR_INSTR, L->fr_size, &L->fr_instr) &&
		field(w, D_FR_SIZE, D_FR_OWNER, L->fr_size, &L->fr_owner) &&
		field(w, D_CO_SIZE, D_CO_FILENAME, L->co_size, &L->co_filename) &&
		field(w, D_CO_SIZE, D_CO_QUALNAME, L->co_size, &L->co_qualname) &&
		field(w, D_CO_SIZE, D_CO_LINETABLE, L->co_size, &L->co_linetable) &&
		field(w, D_CO_SIZE, D_CO_FIRSTLINENO, L->co_size, &L->co_firstlineno) &&
		field(w, D_CO_SIZE, D_CO_CODE, UINT32_MAX, &L->co_code) &&
		field(w, D_OB_SIZE, D_OB_TYPE, 64, &L->ob_type) &&
		field(w, D_BYTES_SIZE, D_BYTES_OB_SIZE, 64, &L->bytes_size) &&
		field(w, D_BYTES_SIZE, D_BYTES_SVAL, 64, &L->bytes_sval) &&
		field(w, D_STR_SIZE, D_STR_STATE, 64, &L->str_state) &&
		field(w, D_STR_SIZE, D_STR_LENGTH, 64, &L->str_length) &&
		w[D_STR_ASCII] > 0 && w[D_STR_ASCII] + 16 <= 64;
	if (!ok) {
		snprintf(why, whylen, "its debug offsets do not check out");
		return false;
	}
	/* The thread state's ts_interp is where 3.11 and 3.12 have it too
	 * (walk_threads checks each state's interpreter there). */
	if (w[D_TS_INTERP] != 16) {
		snprintf(why, whylen, "its debug offsets do not check out");
		return false;
	}
	/* Read the fields at once: to the last one needed. */
	uint32_t ts_end = L->ts_chunk + 16, fr_end = 0, co_end = 0;
	uint32_t tsf[] = { L->ts_next, L->ts_current, L->ts_native_tid };
	for (size_t i = 0; i < sizeof(tsf) / sizeof(tsf[0]); i++)
		if (tsf[i] + 8 > ts_end)
			ts_end = tsf[i] + 8;
	uint32_t frf[] = { L->fr_previous, L->fr_code, L->fr_instr, L->fr_owner };
	for (size_t i = 0; i < sizeof(frf) / sizeof(frf[0]); i++)
		if (frf[i] + 8 > fr_end)
			fr_end = frf[i] + 8;
	uint32_t cof[] = { L->co_filename, L->co_qualname, L->co_linetable, L->co_firstlineno,
			   L->ob_type };
	for (size_t i = 0; i < sizeof(cof) / sizeof(cof[0]); i++)
		if (cof[i] + 8 > co_end)
			co_end = cof[i] + 8;
	L->ts_size = ts_end;
	L->fr_size = fr_end;
	L->co_size = co_end;
	/* datastack_top follows datastack_chunk (3.11 to 3.13). */
	L->ts_top = L->ts_chunk + 8;
	L->str_ascii = (uint32_t)w[D_STR_ASCII];
	/* PyCompactUnicodeObject: utf8_length and utf8 after the ASCII head. */
	L->str_compact = L->str_ascii + 16;
	return true;
}
