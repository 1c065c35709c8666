/* unwind/python.h - CPython's frames inside the native stacks: finding
 * the interpreter in a target, reading a thread's Python frame chain
 * during its stop, and splicing the chain where the eval loop's native
 * frame runs it.  Defined in unwind/python.c (the interpreter, the
 * chain, the splice) and unwind/py-code.c (code objects: names, files,
 * the line table).
 *
 * Everything here is read from the target, which is hostile: every
 * pointer is checked for alignment and read through bounded reads, every
 * chain and list has a bound, and an interpreter that does not check out
 * costs a note (unwind_python_note), never the native frames.
 *
 * Private to unwind/ (and its unit tests); the public face is the
 * unwind_python_* part of unwind/unwind.h.
 */
#ifndef STACKSPY_UNWIND_PYTHON_H
#define STACKSPY_UNWIND_PYTHON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/base.h"

struct name_pool;
struct unwind_target;

/* Where the fields are, for one CPython minor version: from per-version
 * tables (3.11, 3.12) or from the _Py_DebugOffsets at the start of
 * _PyRuntime (3.13).  Offsets in bytes; NONE where the version has no
 * such field. */
#define PY_NONE 0xffffffffu
struct py_layout {
	unsigned minor;           /* 11, 12, 13 */
	uint32_t rt_interp_head;  /* _PyRuntime.interpreters.head */
	uint32_t rt_gil;          /* 3.11: _PyRuntime.ceval.gil (a struct) */
	uint32_t in_next, in_threads_head;
	uint32_t in_gil_ptr;      /* 3.12: interp->ceval.gil (a pointer) */
	uint32_t ts_next, ts_native_tid;
	uint32_t ts_cframe;       /* 3.11, 3.12: tstate->cframe */
	uint32_t cf_current;      /* ... ->current_frame */
	uint32_t ts_current;      /* 3.13: tstate->current_frame */
	uint32_t ts_chunk, ts_top;  /* datastack_chunk, datastack_top */
	uint32_t ts_size;         /* bytes of a thread state read at once */
	uint32_t fr_code, fr_previous, fr_instr, fr_entry, fr_owner, fr_size;
	bool instr_is_prev;       /* 3.11, 3.12: prev_instr (the last one
				     started); 3.13: instr_ptr (the next) */
	uint32_t co_filename, co_qualname, co_linetable, co_firstlineno, co_code;
	uint32_t co_size;         /* bytes of a code object read at once */
	uint32_t ob_type;
	uint32_t str_length, str_state, str_ascii, str_compact;
	uint32_t bytes_size, bytes_sval;
};

/* A frame of a chain as the stop read it, before it is named. */
#define PY_RAW_ENTRY 0x1          /* 3.11: the first frame an eval call ran */
#define PY_RAW_SHIM  0x2          /* 3.12+: the C stack's entry frame */
struct py_raw_frame {
	uint64_t code;            /* the code object (3.13: the executable) */
	uint64_t instr;           /* prev_instr / instr_ptr */
	uint32_t flags;
	uint32_t pad;
};

/* The chain in a snapshot's interp buffer: this head, then n frames,
 * innermost first. */
#define PY_CHAIN_MAGIC 0x31435950u  /* "PYC1" */
enum py_chain_status {
	PY_CHAIN_OK,              /* read to its end */
	PY_CHAIN_NO_THREAD,       /* the thread runs no Python */
	PY_CHAIN_CUT,             /* a read failed or a bound was reached */
};
struct py_chain_head {
	uint32_t magic;
	uint16_t n;
	uint8_t status;
	uint8_t pad;
	uint64_t tstate;
};

/* At most this many frames of one chain, threads of one interpreter,
 * interpreters. */
#define PY_MAX_FRAMES   256
#define PY_MAX_THREADS  4096
#define PY_MAX_INTERPS  64

/* One code object, named (py-code.c). */
struct py_code {
	uint64_t addr;
	const char *qualname;     /* "?" when unreadable */
	const char *file;
	int firstlineno;
	uint64_t code_start;      /* its first instruction */
	unsigned char *linetable; /* a copy of co_linetable, or NULL */
	uint32_t linetable_len;
	uint64_t checked_ns;      /* when last found the same object */
	uint64_t qualname_ptr, file_ptr;  /* its fields then */
};

/* Code objects named, per target (py-code.c). */
struct py_codes {
	struct base_map index;    /* address -> position in v */
	struct py_code *v;
	size_t n, cap;
	size_t linetable_bytes;
	struct name_pool *names;  /* qualnames and file names */
	struct py_code scratch;   /* one not kept (a bound): for one frame */
	unsigned replaced;        /* cached objects found to be others since */
};
/* Bounds on what the code cache keeps of the target's code objects. */
#define PY_MAX_CODES          (256u * 1024)
#define PY_MAX_LINETABLE      (64u * 1024)   /* one code object's table */
#define PY_MAX_LINETABLES     (64u << 20)    /* all of them */
#define PY_MAX_NAME_BYTES     (16u << 20)
#define PY_MAX_STRING         1024           /* code points of a name kept */
#define PY_MAX_STRING_SEEN    4096           /* ... and of one believed */

/* Reads len bytes of the target at addr: its own memory (a core's), then
 * the live process.  0 or -EFAULT.  No map lookup, no reload: it runs
 * during stops (py-code.c, the lowest of the three files). */
int unwind_py_read(struct unwind_target *t, uint64_t addr, void *buf, size_t len);

/* The code object at addr named through c (cached; a cached entry is
 * checked again against the target at most once a second), or NULL when
 * it is not a code object of this interpreter (py-code.c). */
const struct py_code *unwind_py_code(struct unwind_target *t, struct py_codes *c,
				     const struct py_layout *L, uint64_t code_type,
				     uint64_t unicode_type, uint64_t bytes_type, uint64_t addr,
				     uint64_t now_ns);
/* The line of code unit lasti of a code object, from its 3.11+ location
 * table (tab, len) and co_firstlineno; -1 when no entry covers it (or the
 * table is malformed); lasti -1 (a frame not started): firstlineno. */
int unwind_py_line(const unsigned char *tab, size_t len, int firstlineno, long lasti);
void unwind_py_codes_free(struct py_codes *c);

/* 3.13: the layout from the _Py_DebugOffsets at the start of _PyRuntime
 * (at runtime), checked against Py_Version (version).  false with a
 * reason in why when they are not there or do not check out
 * (python-debug.c). */
bool unwind_py_debug_offsets(struct unwind_target *t, uint64_t runtime, uint32_t version,
			     struct py_layout *L, char *why, size_t whylen);

#endif
