/*
 * collapse/collapse.h - collapse/'s public entry: stack aggregation, the
 * store behind `record` and `top`.
 *
 * collapse/ owns the rules of a folded line (frame names, root frames,
 * suffixes) and the writers (folded, SVG, speedscope, pprof).  It
 * may call base/ and libc (and protobuf-c for pprof); sampler/, ui/ and
 * the tests use it.
 *
 * Frame names are interned (one copy each) and a stack is an array of frame
 * ids, root first; each distinct stack is kept once with its sample count.
 * Memory therefore grows with the number of distinct frames and stacks, not
 * with the number of samples: a long recording of a steady program stays
 * small.
 *
 * Not thread-safe: one struct collapse belongs to one thread (the sampler's
 * loop), or the caller locks.
 */
#ifndef STACKSPY_COLLAPSE_H
#define STACKSPY_COLLAPSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

struct collapse;

/* One distinct stack as seen through collapse_next(). */
struct collapse_stack {
	const uint32_t *ids;	/* frame ids, root first */
	size_t n;		/* number of frames, at least 1 */
	uint64_t count;		/* samples added for this stack */
};

/*
 * Returns a new, empty store, or NULL with errno = ENOMEM.
 * The caller owns it and releases it with collapse_free().
 */
struct collapse *collapse_new(void);

/* Releases c and every name and stack it holds; NULL is accepted. */
void collapse_free(struct collapse *c);

/*
 * Returns the id (>= 0) of the frame called name, copying name into c the
 * first time it is seen; the same string always gives the same id, and ids
 * are dense (0, 1, 2, ... in first-seen order). The caller keeps ownership of
 * name. Returns -EINVAL for a NULL name, -ENOMEM, or -EOVERFLOW past
 * INT32_MAX frames; c is unchanged on error.
 */
int collapse_intern(struct collapse *c, const char *name);

/* Returns the id of name if it was interned, else -ENOENT. Never allocates. */
int collapse_lookup(const struct collapse *c, const char *name);

/*
 * Returns the name of frame id, owned by c and valid until collapse_free(),
 * or NULL if no frame has that id. The name is stored as given: see
 * collapse_sanitize_frame() for what the folded writer changes.
 */
const char *collapse_frame_name(const struct collapse *c, uint32_t id);

/*
 * Adds count samples of the stack ids[0..n-1] (root first; ids from
 * collapse_intern()). ids is copied on first sight and stays the caller's.
 * A count of 0 adds nothing. Returns 0, -EINVAL (n == 0, an unknown id),
 * -EOVERFLOW (the total would pass UINT64_MAX, or too many stacks), or
 * -ENOMEM; c is unchanged on error.
 */
int collapse_add(struct collapse *c, const uint32_t *ids, size_t n,
		 uint64_t count);

/* Returns the samples added so far for ids[0..n-1]; 0 if never added. */
uint64_t collapse_count(const struct collapse *c, const uint32_t *ids,
			size_t n);

/*
 * Iterates the distinct stacks in first-seen order. Start with *cursor = 0;
 * each call returns true and fills *out, then false at the end. out->ids is
 * owned by c and valid until the next collapse_add() or collapse_free().
 */
bool collapse_next(const struct collapse *c, size_t *cursor,
		   struct collapse_stack *out);

/*
 * A copy of c without the frame at depth level (0: the root) of each stack
 * (stacks no deeper keep all their frames), equal stacks merged: the
 * profile with one level of roots left out.  NULL when out of memory.
 */
struct collapse *collapse_without_level(const struct collapse *c, size_t level);

/* Returns the sum of all counts added. */
uint64_t collapse_total_samples(const struct collapse *c);

/* Returns the number of distinct stacks. */
size_t collapse_distinct_stacks(const struct collapse *c);

/* Returns the number of distinct frame names. */
size_t collapse_distinct_frames(const struct collapse *c);

/*
 * Returns the bytes c has requested from malloc (tables, names, stacks),
 * without the allocator's own overhead. For tests and --verbose statistics.
 */
size_t collapse_memory_bytes(const struct collapse *c);

/*
 * Writes the folded format of DESIGN.md to out: one line per distinct stack,
 * the frames root first joined by ';', a space, the count. Names are
 * escaped (collapse_text_escape()), then go through
 * collapse_sanitize_frame() on the way out (c is not changed); stacks that
 * become equal by it are merged into one line. Lines are sorted bytewise, so
 * the output equals `LC_ALL=C sort` of itself and two runs over the same
 * samples give the same file. Does not close out.
 * Returns 0, -ENOMEM, or -errno (-EIO if unknown) of a failed write.
 */
int collapse_write_folded(const struct collapse *c, FILE *out);

/* Options of collapse_write_svg(); collapse_svg_options_init() sets the
 * defaults, then change what you need. */
struct collapse_svg_options {
	const char *title;	/* heading; NULL: "Flame Graph" */
	const char *subtitle;	/* second line, e.g. "12,345 samples, 99 Hz,
				 * 10 s, pid 123"; NULL or "": none */
	unsigned int width;	/* of the image in pixels, 200-1000000;
				 * default 1200 */
	unsigned int frame_height;	/* pixels per stack level, 1-1000;
					 * default 16 */
	double min_width;	/* frames narrower than this (pixels) are left
				 * out with all frames above them; 0 keeps
				 * all; default 0.1 */
};

/* Fills opts with the defaults above. The strings are not copied. */
void collapse_svg_options_init(struct collapse_svg_options *opts);

/*
 * Writes c to out as a self-contained interactive flamegraph (SVG with
 * embedded JavaScript, no external resources): the layout of flamegraph.pl
 * (root "all" at the bottom, width proportional to samples, frames merged
 * by prefix and sorted by name per level, so the same samples always give
 * the same bytes); click to zoom, Ctrl-F to search with a regular expression
 * (the URL parameter ?s=REGEX too), tooltips with samples and percentage.
 * Names are escaped by the rule of every output (collapse_text_escape(),
 * no collapse_sanitize_frame()), then for XML. opts NULL means the
 * defaults. An empty c gives a valid SVG that says "No samples". Does not
 * close out. Returns 0, -EINVAL (an option out of range), -ENOMEM, or the
 * -errno (-EIO if unknown) of a failed write.
 */
int collapse_write_svg(const struct collapse *c,
		       const struct collapse_svg_options *opts, FILE *out);

/*
 * Writes c to out in speedscope's file format
 * (https://www.speedscope.app/file-format-schema.json): every frame of c in
 * "shared.frames" (index = frame id), one "sampled" profile called name
 * (NULL: "stackspy") whose samples are the distinct stacks, root first, in
 * the order of collapse_write_svg(), weighted by their counts. Strings are
 * written by collapse_json_string(). Does not close
 * out. Returns 0, -ENOMEM, or the -errno (-EIO if unknown) of a failed
 * write.
 */
int collapse_write_speedscope(const struct collapse *c, const char *name,
			      FILE *out);

/* The length (1-4) of the valid, shortest-form UTF-8 character at
 * s[0..avail-1] (any code point but surrogates, controls included), its
 * code point in *cp; 0 for a byte that starts none. */
size_t collapse_utf8_decode(const unsigned char *s, size_t avail, uint32_t *cp);

/* ---- text.c: the one escaping rule of every output ------------------------ */

/* May code point cp be written as it is?  Not C0, DEL, C1, U+FFFE/U+FFFF,
 * or a bidirectional mark, embedding, override or isolate (U+061C,
 * U+200E/F, U+202A-202E, U+2066-2069): the one rule of every output
 * (text for people, folded, SVG, pprof, top; JSON writes the others as
 * \uXXXX). */
bool collapse_text_safe_cp(uint32_t cp);
/* The length (1-4) of the character at s[0..avail-1] if every output
 * writes it as it is: valid UTF-8, collapse_text_safe_cp(), and not the
 * escape character '\\'; 0 otherwise. */
size_t collapse_text_char(const unsigned char *s, size_t avail);

/* The longest escape of one character: 4 bytes, "\xNN" each. */
#define COLLAPSE_ESC_MAX 16
/*
 * The rule for the character at s[0..avail-1]: sets *used to the bytes it
 * takes and returns 0 when it is written as it is; else writes its escape
 * to esc (no NUL) and returns its length: "\\" for a backslash, "\xNN" for
 * each byte of a character collapse_text_safe_cp() refuses, "\xNN" for a
 * byte that starts no valid UTF-8 character (*used 1).  The output thus
 * reads one way: a backslash in it always starts an escape.
 */
size_t collapse_text_escape_char(const unsigned char *s, size_t avail,
				 size_t *used, char esc[COLLAPSE_ESC_MAX]);
/* The length of s escaped (at most 4 times strlen(s)). */
size_t collapse_text_escaped_len(const char *s);
/* s escaped into buf (len bytes, NUL-terminated, cut between characters).
 * Returns the length written.  Output is at most 4 times as long as s. */
size_t collapse_text_escape(char *buf, size_t len, const char *s);
/* s escaped in a new string the caller frees; NULL when out of memory. */
char *collapse_text_dup(const char *s);
/* s escaped to out, whatever its length.  Errors show in ferror(out). */
void collapse_text_write(FILE *out, const char *s);

/* ---- frame-names.c: the rules of a folded line (DESIGN.md) ---------------- */

/*
 * The name of a frame: function (demangled, as given) when there is one,
 * else "[module-basename]", else "[unknown]". Returns function, buf (filled,
 * cut to len) or a static string; never NULL.
 */
const char *collapse_name_frame(char *buf, size_t len, const char *function,
				const char *module);

/* "function_[i]": a function inlined into the frame below it (in buf, cut
 * to len). Returns buf. */
const char *collapse_name_inline(char *buf, size_t len, const char *function);
/* A Python frame: "function (dir/file.py:line)", the file cut to its last
 * two path components (line 0: without ":line"), in buf, cut to len.
 * Returns buf. */
const char *collapse_name_python(char *buf, size_t len, const char *function,
				 const char *file, unsigned line);
/* A kernel frame: function_[k] (record --idle of a thread in D). */
const char *collapse_name_kernel(char *buf, size_t len, const char *function);

/*
 * A root frame: "comm-PID/TID" for a thread (tid > 0), "comm-PID" for a
 * process (tid 0), with spaces and control characters of comm as '_' (as
 * perf's stackcollapse writes thread names). Written to buf, cut to len;
 * returns buf.
 */
const char *collapse_name_root(char *buf, size_t len, const char *comm,
			       pid_t pid, pid_t tid);

/* The part of module after its last '/' (a pointer into module). */
const char *collapse_module_basename(const char *module);

/*
 * Rewrites name in place so it is one valid frame of a folded line: ';'
 * (the frame separator) becomes ':', and newlines and other control bytes
 * become a space. Spaces are kept: readers of folded text (flamegraph.pl,
 * inferno, speedscope) split the count off at the last space. Returns the
 * number of bytes replaced. collapse_write_folded() applies it.
 */
size_t collapse_sanitize_frame(char *name);

/*
 * Writes s to out as a JSON string, quotes included, or null when s is
 * NULL: the one JSON escaper of stackspy (speedscope files, dump's JSON).
 * The output is valid JSON whatever s holds: quote and backslash are
 * escaped, the characters collapse_text_safe_cp() refuses (controls, bidi
 * marks and overrides) written as \uXXXX of their code point, and each
 * byte that starts no valid UTF-8 character as \ufffd (JSON text must be
 * Unicode). Errors show in ferror(out).
 */
void collapse_json_string(FILE *out, const char *s);

/* ---- pprof.c: profile.proto (HAVE_PROTOBUF_C) ------------------------------ */

/* Where a frame's code lives, for the Mapping and Location of a pprof
 * profile; what the caller knows (collapse keeps names only). */
struct collapse_pprof_frame {
	const char *module;	/* path of the mapped file; NULL: unknown */
	const char *build_id;	/* hex; NULL or "": unknown */
	uint64_t address;	/* module-relative (ip minus load bias) */
	const char *file;	/* source file; NULL: unknown */
	unsigned line;		/* 0: unknown */
};

struct collapse_pprof_options {
	bool wall;		/* wall/nanoseconds (--idle), else cpu/nanoseconds */
	uint64_t period_ns;	/* one sample stands for this long */
	int64_t time_ns;	/* start, Unix time */
	int64_t duration_ns;
	/* Root frames at the start of every stack that name a process
	 * ("comm-PID") or a thread ("comm-PID/TID", collapse_name_root()):
	 * they become the labels "process_name", "pid", "thread_name" and
	 * "tid" of the sample instead of frames. */
	size_t roots;
	const char *process_name;	/* the label when no root names it */
	/* The executable: its mapping comes first, where pprof readers look
	 * for the main binary. NULL: mappings in first-seen order. */
	const char *main_module;
	/* Fills *out for frame id; false or NULL: nothing known. */
	bool (*frame_info)(void *arg, uint32_t id, struct collapse_pprof_frame *out);
	void *arg;
	/* If set, base[i] samples of the i-th stack of collapse_next() were
	 * sent before: only the difference is written (one interval of a
	 * longer recording); stacks past nbase count in full. */
	const uint64_t *base;
	size_t nbase;
};

/*
 * Encodes c as a gzip-compressed pprof profile (profile.proto, as
 * go tool pprof, Pyroscope and Parca read it) into a new buffer (*buf,
 * *len; the caller frees it). Values: samples/count and cpu or wall
 * nanoseconds (count times the period). A frame named name_[i]
 * (collapse_name_inline()) is a Line of the location of the frame below it,
 * as pprof models inlining; file and line, where
 * frame_info knows them, go to the Function and the Line. Returns 0, -EINVAL, -ENOMEM, or -ENOTSUP when
 * stackspy was built without protobuf-c.
 */
int collapse_encode_pprof(const struct collapse *c,
			  const struct collapse_pprof_options *o,
			  void **buf, size_t *len);

/* collapse_encode_pprof() written to out. Returns 0, its errors, or the
 * -errno of a failed write. */
int collapse_write_pprof(const struct collapse *c,
			 const struct collapse_pprof_options *o, FILE *out);

#endif /* STACKSPY_COLLAPSE_H */
