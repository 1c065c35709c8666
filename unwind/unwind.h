/* unwind/unwind.h - turn a stack snapshot into frames, and frames into names.
 *
 * A `struct unwind_target` holds what is known about one target process
 * (or core file): its memory map, the ELF files behind it (mmap'd once per
 * (dev, inode)), their symbol tables and unwind tables, a copy of its
 * vdso, and the walks kept by the cfi engine (target.c; opened and freed
 * by target-open.c).  Engines (auto, fp, cfi, mips: unwind.c
 * dispatches) walk a snapshot taken by ptrace/ after the thread has been
 * resumed.  Register facts come from arch/.
 *
 * Who owns what, and for how long:
 * - The caller owns the target (unwind_target_open*, unwind_target_free),
 *   the snapshots and the frame and symbol arrays it passes in.
 * - Every string handed out (function, module, file names, core warnings)
 *   belongs to the target and stays valid until unwind_target_free(), map
 *   reloads included.
 * - Addresses are only names of the moment: after a reload
 *   (unwind_target_generation() changed) the same address may belong to
 *   another module, so names cached by address must be dropped then.
 * - One thread at a time per target: nothing here locks.
 *
 * unwind/ owns the engines, the target object, ELF files, symbols, debug
 * files and core files.  It may call ptrace/ (snapshots, /proc readers,
 * the clock), arch/, base/ and its libraries (libelf, libdw,
 * liblzma); sampler/ and the tests use it, ptrace/ never does.  Its own
 * files share private headers, one per job: maps.h, elf-image.h,
 * symbols.h, perf-map.h, memory.h, core-file.h, target.h, cfi.h,
 * engines.h, yield.h.
 */
#ifndef STACKSPY_UNWIND_H
#define STACKSPY_UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ptrace/sample.h"

enum unwind_engine {
	UNWIND_ENGINE_AUTO,
	UNWIND_ENGINE_FP,
	UNWIND_ENGINE_CFI,
	UNWIND_ENGINE_MIPS,
};

/* How a frame was found. */
enum unwind_how {
	UNWIND_HOW_CFI,
	UNWIND_HOW_FP,
	UNWIND_HOW_MIPS,
	/* "fp?": by the frame-pointer chain from a frame stopped at an exact
	 * ip (frame 0, or the frame a signal interrupted) that may have no
	 * frame record of its own (a leaf, assembly, a prologue or epilogue):
	 * then this is its caller's caller, and its caller is missing. */
	UNWIND_HOW_FP_UNSURE,
	/* "prologue": x86-64 code without CFI, by decoding its prologue (or
	 * epilogue) from the function's start to the pc; also a pc outside
	 * executable memory (a call through NULL), taken from [sp] (x86-64)
	 * or the link register (aarch64). */
	UNWIND_HOW_PROLOGUE,
	/* "scan?": the first word up the stack that is a return address (in
	 * executable memory, right after a call): a guess. */
	UNWIND_HOW_SCAN,
	/* "python": a frame of CPython's interpreter (unwind/python.c), put
	 * where the eval loop's native frame that runs it was: ip is its
	 * code object's address, line its line (unwind_python_name). */
	UNWIND_HOW_PYTHON,
};

/* Why a walk ended. */
enum unwind_stop {
	UNWIND_STOP_END,          /* reached the outermost frame */
	UNWIND_STOP_DEPTH,        /* --max-depth reached */
	UNWIND_STOP_NOINFO,       /* no unwind information for a frame */
	UNWIND_STOP_BAD_FRAME,    /* frame outside the stack / not moving up */
	UNWIND_STOP_MEMORY,       /* a read failed */
	UNWIND_STOP_UNSUPPORTED,  /* engine not built in or not for this arch */
	UNWIND_STOP_ISA,          /* microMIPS/MIPS16 code (odd pc): not decoded */
	UNWIND_STOP_DEADLINE,     /* the thread's deadline passed (unwind_set_deadline) */
	/* The frame's unwind table breaks a bound of stackspy's CFI
	 * interpreter (unwind/cfi-exec.c): refused, never followed. */
	UNWIND_STOP_CFI_LOOP,     /* an expression that does not end */
	UNWIND_STOP_CFI_REJECTED, /* any other bound (sizes, depth, overflow) */
	/* The frame-pointer chain does not go on: the frame pointer below
	 * sp, misaligned or outside the stack, or its record returns outside
	 * code (where no CFI covered the frame). */
	UNWIND_STOP_FP_BROKEN,
};

struct unwind_frame {
	uint64_t ip;
	enum unwind_how how;
	uint32_t line;            /* UNWIND_HOW_PYTHON: its line (0: unknown) */
	bool signal_frame;        /* this frame is a signal trampoline: the next
				   (older) frame was interrupted, its ip is exact */
	uint32_t code_offset;     /* UNWIND_HOW_PYTHON: the byte offset of its
				     instruction in the code object's bytecode */
	bool swapped;             /* its code at the stop is no longer
				     where the map says (a library swapped
				     since, at the same address): named by
				     unwind_symbolize_swapped, never by a
				     name cached for the address */
};

/* Parse "auto|fp|cfi|mips".  Returns 0 or -EINVAL. */
int unwind_engine_parse(const char *s, enum unwind_engine *out);
const char *unwind_engine_name(enum unwind_engine e);
/* Is engine e built in and usable for live processes on this host? */
bool unwind_engine_available(enum unwind_engine e);
/* Why it is not (a phrase), or NULL when it is. */
const char *unwind_engine_unavailable_reason(enum unwind_engine e);
const char *unwind_how_name(enum unwind_how h);
/* A short phrase such as "no unwind information". */
const char *unwind_stop_reason(enum unwind_stop s);

/* The long loops of the unwinder (a symbol table, a perf map of hundreds
 * of megabytes) call fn(arg) every few thousand items, so that a tracer
 * can hand on its tracees' signals meanwhile instead of leaving them
 * parked in tracing stops until the file is read.  fn must not free
 * anything the unwinder uses.  Only the thread that set it calls it (the
 * tracer: ptrace's rule); loops on other threads go on without it.  NULL
 * removes it. */
void unwind_set_yield(void (*fn)(void *), void *arg);

/* Spends ns (CLOCK_MONOTONIC) as a long loop of the unwinder does,
 * offering the hook of unwind_set_yield every UNWIND_YIELD_EVERY steps,
 * about every 50 us.  For STACKSPY_TEST_SLOW_UNWIND (sampler/unwinder.c)
 * only: a slow unwind whose hook runs on the unwinder's thread. */
void unwind_busy_for(uint64_t ns);

/* A deadline (CLOCK_MONOTONIC ns, 0: none) for every thread's unwinding:
 * past it, unwind_walk returns the frames found so far with
 * UNWIND_STOP_DEADLINE and no more symbol tables are built (frames of
 * modules not read yet are named module+offset).  dump's time limit. */
void unwind_set_deadline(uint64_t ns);
/* How many walks and symbol tables the deadline cut short so far. */
unsigned long unwind_deadline_misses(void);

struct unwind_target;

/* Open a live process: reads /proc/PID/maps and copies the vdso.  Returns
 * NULL and sets *err (negative errno) on failure.  Free with
 * unwind_target_free(). */
struct unwind_target *unwind_target_open(pid_t pid, int *err);
void unwind_target_free(struct unwind_target *t);

/* Open a core file (kernel core or gcore output, ELFCLASS32/64, either byte
 * order).  Modules come from NT_FILE, else from the auxv and the r_debug
 * link_map in the core's memory; their files are opened under sysroot
 * (when not NULL), and exe (when not NULL) replaces the main executable.
 * Memory reads are served from the core's PT_LOAD segments, then from the
 * mapped files.  Returns NULL with *err (negative errno) and, when more
 * precise than strerror, a reason in why ("not a core file ...").  Files
 * that cannot be opened or whose build-id differs from the core's are left
 * out and reported by unwind_core_warning(). */
struct unwind_target *unwind_target_open_core(const char *core, const char *exe,
					      const char *sysroot, int *err,
					      char *why, size_t whylen);

struct unwind_core_info {
	pid_t pid;                /* NT_PRPSINFO pr_pid, else the first thread's */
	char comm[17];            /* NT_PRPSINFO pr_fname, "" if none */
	char state;               /* NT_PRPSINFO pr_sname, '?' if none */
	int signal;               /* pr_cursig of the first thread (what killed it) */
	unsigned machine;         /* e_machine */
	int elf_class;            /* 32 or 64 */
	bool big_endian;
	bool native;              /* of the host's architecture, with frame records */
	size_t nthreads;
};

/* Process facts of a core target.  Returns 0, or -EINVAL if t is live. */
int unwind_core_info(const struct unwind_target *t, struct unwind_core_info *info);
/* Thread i (0 <= i < nthreads, in the core's order) as a snapshot: tid and
 * the raw pr_reg bytes (the core's byte order), no stack (unwind_walk reads
 * the stack from the core).  Returns 0 or -EINVAL. */
int unwind_core_thread(const struct unwind_target *t, size_t i,
		       struct stack_snapshot *out);
/* The i-th warning collected while opening a core, NULL past the last. */
const char *unwind_core_warning(const struct unwind_target *t, size_t i);

/* Memory bounds on what the target writes.  /tmp/perf-PID.map is read
 * incrementally (only what was appended since the last look), a later line
 * replaces the entries its address range overlaps, and at most this many
 * entries and this many bytes of distinct names are kept: past the first,
 * the oldest lines go; past the second, lines with new names are left out. */
#define UNWIND_PERF_MAP_MAX_ENTRIES    (512u * 1024)
#define UNWIND_PERF_MAP_MAX_NAME_BYTES (32u << 20)
/* The module paths handed out take at most this much (a target can map
 * ever new files: a plugin host, memfds with fresh names); past it a frame
 * has no module name. */
#define UNWIND_MAX_MODULE_NAME_BYTES   (16u << 20)

/* What was left out of inputs the target controls, to keep stackspy's
 * memory bounded by what it samples, not by time or by what the target
 * writes.  Counts only grow; a summary prints them. */
struct unwind_dropped {
	uint64_t perf_map_lines;  /* perf map lines dropped at its caps */
	uint64_t perf_map_bad;    /* perf map lines not in perf's format */
	uint64_t perf_map_unread; /* bytes of it a look left to the next */
	uint64_t module_names;    /* frames left without a module name: the
				     pool of module paths is full */
	/* /tmp/perf-PID.map there, but not read: why (a static string:
	 * "it is a symlink", ...) and its owner; NULL when read or absent. */
	const char *perf_map_refused;
	long perf_map_owner;
};

/* t's counts so far. */
void unwind_target_dropped(const struct unwind_target *t, struct unwind_dropped *out);

/* The inputs not read because they were over a limit (a debug file far
 * larger than its module, a decompressed section that would be): one line
 * each ("debug file PATH (4.0 GiB) not read: ..."), from the first;
 * *iter starts at 0.  NULL after the last.  Frames there are named from
 * the next source (.dynsym, FDE ranges) or not at all. */
const char *unwind_skipped_next(size_t *iter);

/* Re-read /proc/PID/maps (after dlopen, or when an IP falls outside every
 * known mapping).  ELF files already opened stay cached.  Returns 0/-errno
 * (-ENOTSUP for a core file). */
int unwind_target_reload_maps(struct unwind_target *t);

/* Are the mappings that frames[0..n) lie in still the files they were when
 * the map was read?  A library dlclose()d and another dlopen()ed at the
 * same address has the old one's name, symbols and CFI until the map is
 * read again, and no address misses to tell.  sampled_ns: when the
 * frames were taken (CLOCK_MONOTONIC, a tick's time); each file mapping
 * is checked once per such time, by the identity of
 * /proc/PID/map_files/START-END; where that cannot be read (no
 * CAP_SYS_ADMIN), the map is re-read when it is a second old.  A frame in
 * no mapping re-reads a map older than sampled_ns.  When the map was
 * re-read here (the generation changes), the caller walks again.
 * Returns true when the frames stand. */
bool unwind_target_maps_current(struct unwind_target *t, const struct unwind_frame *frames,
				int n, uint64_t sampled_ns);

/* Changes whenever the memory map was re-read (a library may now live
 * where another was), the perf map's reading went on where a look had
 * stopped (an address named by no line read may be named now), or a
 * CPython code object was found replaced by another at its address:
 * names cached by address must be dropped then. */
unsigned unwind_target_generation(const struct unwind_target *t);

/* End address of the mapping that contains sp, or 0 if none is known.
 * Cheap (binary search); usable as a ptrace stack_end_fn. */
uint64_t unwind_target_stack_end(void *target, uint64_t sp);

/* Walk the stack in snapshot s with engine e.  Writes at most max frames,
 * innermost first, and returns how many (>= 1 when the registers are valid).
 * *stop says why the walk ended. */
int unwind_walk(struct unwind_target *t, enum unwind_engine e,
		const struct stack_snapshot *s, struct unwind_frame *frames,
		int max, enum unwind_stop *stop);

/* ---- CPython's frames (unwind/python.c) ----------------------------------
 * Where a target runs CPython 3.11 or later (the module that exports
 * _PyRuntime: python3.X, or libpython3.X.so in an embedder), each thread's
 * Python frames are read during its stop and unwind_walk puts them where
 * the eval loop's native frame (_PyEval_EvalFrameDefault) that runs them
 * was.  An interpreter that cannot be read leaves the native frames as
 * they are (unwind_python_note says why). */
enum unwind_python_mode {
	UNWIND_PYTHON_OFF,        /* native frames only */
	UNWIND_PYTHON_ON,         /* Python frames instead of the eval loop's */
	UNWIND_PYTHON_BESIDE,     /* ... and the eval loop's frame after them */
};
/* For every target (default UNWIND_PYTHON_ON). */
void unwind_set_python(enum unwind_python_mode m);
/* Find t's interpreter now (reads its files) and walk its thread lists
 * (again when a stop met a thread not in them, at most five times a
 * second), outside any stop: the stop's read (unwind_python_stop_read)
 * only uses what was found, one read of the thread state and one of its
 * data stack.  Cheap when there is nothing to do (the tracer calls it
 * each tick).  Returns 1 when one was found and can be read, else 0. */
int unwind_python_prepare(struct unwind_target *t);
/* Room a stop's read needs for chains of up to max_depth frames. */
size_t unwind_python_chain_bytes(int max_depth);
/* Reads the chain of Python frames of s's thread into buf (cap bytes)
 * while it is stopped, after its stack copy s: a few process_vm_readv (its
 * thread state, its data stack in one piece; what the stack copy holds is
 * taken from there).  target is t (a struct sample_opts interp_read hook).
 * Returns the bytes written, 0 when t runs no interpreter found by
 * unwind_python_prepare. */
size_t unwind_python_stop_read(void *target, const struct stack_snapshot *s, unsigned char *buf,
			       size_t cap);
/* unwind_walk's last step: the chain of s (read in its stop; for a core
 * or a snapshot without one, read now) spliced into frames[0, n) (at most
 * max).  Returns the new count. */
int unwind_python_splice(struct unwind_target *t, const struct stack_snapshot *s,
			 struct unwind_frame *frames, int n, int max, enum unwind_stop stop);
struct unwind_python_name {
	const char *function;     /* co_qualname ("?" if unreadable) */
	const char *file;         /* co_filename */
	unsigned line;            /* 0: unknown */
	uint64_t code;            /* the code object's address */
	uint32_t offset;          /* the instruction's in its bytecode */
};
/* The names of Python frame f (how UNWIND_HOW_PYTHON); false for any
 * other.  The strings belong to t. */
bool unwind_python_name(struct unwind_target *t, const struct unwind_frame *f,
			struct unwind_python_name *out);
/* The Py_Version (0x030b02f0: 3.11.2) of t's interpreter when one was
 * found (its frames are read, or unwind_python_note says why not), else 0. */
uint32_t unwind_python_version(const struct unwind_target *t);
/* The thread that holds the GIL now (0: none, or not known). */
pid_t unwind_python_gil_holder(struct unwind_target *t);
/* Why t's interpreter is not read ("Python 3.10 is not supported ..."),
 * NULL when it is or there is none. */
const char *unwind_python_note(const struct unwind_target *t);
/* Chains that did not pair with the native frames (left out). */
uint64_t unwind_python_mismatches(const struct unwind_target *t);

/* Is frames[i] to be named at ip - 1?  Frames after the first are return
 * addresses (the call may be the last instruction of a noreturn function),
 * except the frame a signal interrupted (its ip is exact) and the signal
 * trampoline itself (the handler returns to its first instruction). */
static inline bool
unwind_frame_is_caller(const struct unwind_frame *frames, int i)
{
	return i > 0 && !frames[i - 1].signal_frame && !frames[i].signal_frame;
}

struct unwind_symbol {
	const char *function;     /* NULL if no symbol covers the IP */
	uint64_t offset;          /* ip - symbol start */
	const char *module;       /* path of the mapped file, "[vdso]", or NULL */
	uint64_t module_offset;   /* ip relative to the module's load bias */
};

#define UNWIND_SYM_NO_DEMANGLE 0x1
#define UNWIND_SYM_NO_PARAMS   0x2  /* C++: drop the parameter list */
#define UNWIND_SYM_DATA        0x4  /* ip is a data address: anonymous memory
				       right after a file's mapping is that
				       file's .bss past its last file page
				       (a static executable's) */

/* Name the frame at ip.  `caller` means ip is a return address and is looked
 * up at ip - 1 (the offset printed is still from ip).  The strings belong to
 * the target's caches and stay valid until unwind_target_free().  Returns 0
 * when a module was found, -ENOENT otherwise (sym is still filled). */
int unwind_symbolize(struct unwind_target *t, uint64_t ip, bool caller,
		     unsigned flags, struct unwind_symbol *sym);
/* The same for a frame of the last unwind_walk on t marked swapped: named
 * from the library that was there at the stop, or not at all (-ENOENT,
 * sym empty: [unknown]).  Only until the next unwind_walk on t. */
int unwind_symbolize_swapped(struct unwind_target *t, uint64_t ip, bool caller,
			     unsigned flags, struct unwind_symbol *sym);

/* One source-level frame of a physical frame (source.c, libdw). */
struct unwind_source_frame {
	const char *function;     /* DWARF name (UNWIND_SYM_* flags apply), or NULL */
	uint64_t offset;          /* ip - start of the address range of this
				     function instance that holds the ip */
	const char *file;         /* source file as the line table names it
				     (may be relative to the compilation
				     directory, as gdb and eu-stack print
				     it), NULL if unknown */
	unsigned line;            /* 0 if unknown */
	bool inlined;             /* an inlined instance, not the real function */
};

/* Whether separate debug files may be fetched from the debuginfod servers
 * of DEBUGINFOD_URLS where no local file matches (default: yes, when
 * built with libdebuginfod). --no-debuginfod turns it off. */
void unwind_set_debuginfod(bool on);

/* The GNU build-id of the ELF file at path, as lowercase hex in hex[]
 * (NUL-terminated, cut to len). Returns its length in bytes (0: the file
 * has none), or -errno. */
int unwind_file_build_id(const char *path, char *hex, size_t len);

#ifdef HAVE_LIBDW
/* Source positions of the frame at ip (looked up at ip - 1 when `caller`,
 * like unwind_symbolize), from the DWARF of its module or of the module's
 * separate debug file (build-id, then .gnu_debuglink), opened once per
 * module.  Fills out[] innermost first, like gdb and eu-stack -i: each
 * function inlined at ip (inlined = true; file:line in it), then the
 * function that holds the code (inlined = false; file:line where the
 * outermost inlined call stands, or of ip itself), which is always the
 * last entry (inlined levels past max - 1, the outer ones, are left out).
 * Returns the count, 0 when no debug information
 * covers ip, -ENOMEM, or -EINVAL (max < 1).  The strings belong to t and
 * stay valid until unwind_target_free(). */
int unwind_source(struct unwind_target *t, uint64_t ip, bool caller,
		  unsigned flags, struct unwind_source_frame *out, int max);
/* Was unwind_source built in (configure --with-libdw)? */
static inline bool unwind_source_available(void) { return true; }
#else
static inline int
unwind_source(struct unwind_target *t, uint64_t ip, bool caller,
	      unsigned flags, struct unwind_source_frame *out, int max)
{
	(void)t; (void)ip; (void)caller; (void)flags; (void)out; (void)max;
	return 0;
}
static inline bool unwind_source_available(void) { return false; }
#endif

#endif
