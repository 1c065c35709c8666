/*
 * ui/ui.h - ui/'s public entry: the `stackspy top` view.
 *
 * ui/ owns the terminal while top runs (ncursesw).  It may call collapse/,
 * base/ and libc; sampler/cmd-top.c and tests/unit-uimodel.c use it.
 *
 * Two halves.  The model (model.c) is plain C and always built: it takes
 * every sample the profiler adds (through profiler_set_hook), keeps its own
 * per-thread stack counts, cumulative and in a rolling window of per-second
 * buckets, and answers "which functions, how much self and total time, for
 * this thread / this window / this name filter" and "who calls F, whom does
 * F call".  The screen (draw.c) owns ncursesw: it renders a model and the
 * header the command fills in, and turns keys into view changes or into
 * actions for the command (quit, pause, reset).  Without ncursesw the screen
 * half is compiled out and the static inline stubs below say so, so that
 * callers carry no #ifdef.
 */
#ifndef STACKSPY_UI_H
#define STACKSPY_UI_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct collapse;

/* ---- model.c --------------------------------------------------------------- */

struct ui_model;

/* Module of frame id (a basename such as "libc.so.6"), or NULL if unknown. */
typedef const char *(*ui_module_fn)(void *arg, uint32_t id);

/*
 * Returns a new, empty model, or NULL (ENOMEM).  names holds the frame
 * names the ids refer to; it stays the caller's and must outlive the model.
 * window_s (1-3600) is the length of the rolling window.  module (may be
 * NULL) names a frame's module.
 */
struct ui_model *ui_model_new(const struct collapse *names, unsigned window_s,
			      ui_module_fn module, void *module_arg);
void ui_model_free(struct ui_model *m);

/* The current time in seconds (any origin, never going back): samples
 * added from now on belong to this second's bucket of the window. */
void ui_model_set_time(struct ui_model *m, double now_s);

/* Adds one sample of thread tid of process pid, named thread_name (its
 * comm; may be NULL): ids are the frames, root first, without root frames,
 * as the profiler passes them to its hook.  The thread keeps the name of
 * its first sample.  Samples with no frame (n == 0) are ignored.  Returns
 * 0 or -ENOMEM (the sample is dropped). */
int ui_model_add(struct ui_model *m, pid_t pid, pid_t tid,
		 const char *thread_name, const uint32_t *ids, size_t n);

/* A profiler_hook: arg is the model. */
void ui_model_hook(void *arg, pid_t pid, pid_t tid, const char *thread_name,
		   const uint32_t *ids, size_t n);

/* Forgets every count (cumulative and window); threads stay listed. */
void ui_model_reset(struct ui_model *m);

unsigned ui_model_window(const struct ui_model *m);

/* Samples added since the last reset (cumulative). */
uint64_t ui_model_samples(const struct ui_model *m);

/* Threads that produced a sample, in first-seen order. */
size_t ui_model_thread_count(const struct ui_model *m);
/* Thread i: its tid, and its name ("comm-PID/TID", as --threads names its
 * root frames; owned by the model; NULL if i is out of range).  *samples:
 * cumulative count. */
/* The label of process pid: "comm-PID" (the comm of its main thread, as
 * the root frames of several processes are named), or "PID" when its main
 * thread has no sample yet.  Returns buf. */
char *ui_model_process_label(const struct ui_model *m, pid_t pid, char *buf, size_t len);
const char *ui_model_thread(const struct ui_model *m, size_t i, pid_t *tid,
			    uint64_t *samples);

const char *ui_model_function_name(const struct ui_model *m, uint32_t id);
/* Basename of the module, or "" when unknown. */
const char *ui_model_function_module(const struct ui_model *m, uint32_t id);

enum ui_sort { UI_SORT_SELF, UI_SORT_TOTAL, UI_SORT_NAME, UI_SORT_MODULE,
	       UI_SORT_MAX };

/* What to aggregate. */
struct ui_query {
	long thread;          /* index from ui_model_thread(), or -1: all */
	bool window;          /* the rolling window, else cumulative */
	const char *filter;   /* substring of the function name (case
			       * insensitive), NULL or "": all */
	bool split_threads;   /* one row per (thread, function) */
	bool split_procs;     /* one row per (process, function) (several
			       * processes: --subprocesses, several PIDs) */
	enum ui_sort sort;
};

struct ui_row {
	uint32_t function;    /* frame id */
	long thread;          /* thread index, -1 when not split */
	pid_t pid;            /* its process when split by process or
			       * thread, else 0 */
	uint64_t self;        /* samples with the function as the leaf */
	uint64_t total;       /* samples with the function anywhere, counted
			       * once per sample even when it recurses */
};

struct ui_table {
	struct ui_row *rows;  /* sorted per the query; the model's until the
			       * next ui_model_query() or ui_model_free() */
	size_t nrows;
	uint64_t samples;     /* every sample in scope (thread, window),
			       * before the name filter: the 100% */
};

/* Aggregates per the query.  Returns 0 or -ENOMEM. */
int ui_model_query(struct ui_model *m, const struct ui_query *q,
		   struct ui_table *out);

/* Callers or callees of a function, in the query's scope. */
struct ui_edge {
	uint32_t function;
	uint64_t count;       /* samples in which this edge appears */
};

struct ui_detail {
	uint32_t function;
	uint64_t self, total, samples;
	struct ui_edge *callers;  /* sorted by count, descending */
	size_t ncallers;
	struct ui_edge *callees;
	size_t ncallees;
};

/* Fills d for function (thread and window from q; q->filter is ignored).
 * d's arrays are malloc'd: release them with ui_detail_release().
 * Returns 0 or -ENOMEM. */
int ui_model_detail(struct ui_model *m, const struct ui_query *q,
		    uint32_t function, struct ui_detail *d);
void ui_detail_release(struct ui_detail *d);

/* Sorts rows in place (ties: more total, then by name, so that equal
 * counts do not reshuffle the screen between refreshes). */
void ui_model_sort(const struct ui_model *m, struct ui_row *rows, size_t n,
		   enum ui_sort key);

/* ---- draw.c: the screen ---------------------------------------------------------- */

/* What the header shows; filled by the command before each draw. */
struct ui_header {
	pid_t pid;
	const char *comm;
	size_t npids;             /* > 1: "pid" is the first of several */
	size_t threads_sampled;
	size_t threads_seen;
	double rate_hz;           /* asked for */
	double achieved_hz;       /* ticks per second of sampling (pauses
				   * left out) */
	uint64_t samples;         /* since the last reset */
	double elapsed_s;
	const char *engine;
	double pause_mean_us;     /* per stopped thread-sample */
	bool oncpu;               /* on-CPU mode: the two below mean something */
	uint64_t not_oncpu;       /* stops the on-CPU rule did not count */
	uint64_t skipped;         /* thread-samples not stopped by a tick's
				   * deadline */
	bool paused;
	const char *ended;        /* "exited with status 0", ...; NULL while
				   * the target runs */
};

/* What a key asks of the command. */
enum ui_action {
	UI_ACTION_NONE,
	UI_ACTION_QUIT,
	UI_ACTION_PAUSE,          /* toggle */
	UI_ACTION_RESET,
};

struct ui_screen;

#ifdef HAVE_NCURSES

static inline bool
ui_available(void)
{
	return true;
}

/*
 * Can the terminal of TERM draw the view: 0; -EINVAL when curses does not
 * know TERM; -EOPNOTSUPP when it cannot move the cursor (TERM=dumb: the
 * view would be a blank screen).  Touches nothing: for before attaching.
 */
int ui_terminal_check(void);

/*
 * Takes over the terminal (setlocale from the environment, curses mode,
 * keys without echo): stdout must be a terminal.  m stays the caller's.
 * split_threads: start with a row per (thread, function); split_procs: a
 * row per (process, function), with a Process column (comm-PID), when
 * not split by thread.  Returns 0 with *out set, or -ENOTTY / -ENOMEM /
 * -EIO.
 */
int ui_screen_open(struct ui_model *m, bool split_threads, bool split_procs,
		   struct ui_screen **out);

/* Gives the terminal back (endwin) and frees s; NULL is accepted.  Safe
 * to call from the exit path of an error printer: see
 * ui_screen_restore_terminal(). */
void ui_screen_close(struct ui_screen *s);

/* endwin() if curses mode is on: for error printers and signal paths that
 * must restore the terminal before writing to it.  Idempotent. */
void ui_screen_restore_terminal(void);

/* Re-reads the terminal size (after SIGWINCH) and redraws. */
void ui_screen_resize(struct ui_screen *s, const struct ui_header *h);

/* Draws everything from the model now. */
void ui_screen_draw(struct ui_screen *s, const struct ui_header *h);

/* Forces the next draw to repaint every cell (something else wrote to the
 * terminal, e.g. a launched command). */
void ui_screen_invalidate(struct ui_screen *s);

/* Reads the keys that are waiting (never blocks), applies those that only
 * change the view (and redraws), and returns the first that needs the
 * command. */
enum ui_action ui_screen_input(struct ui_screen *s, const struct ui_header *h);

#else /* !HAVE_NCURSES */

static inline bool
ui_available(void)
{
	return false;
}

static inline int
ui_screen_open(struct ui_model *m, bool split_threads, bool split_procs,
	       struct ui_screen **out)
{
	(void)m;
	(void)split_threads;
	(void)split_procs;
	*out = NULL;
	return -ENOTSUP;
}

static inline int ui_terminal_check(void) { return -ENOTSUP; }
static inline void ui_screen_close(struct ui_screen *s) { (void)s; }
static inline void ui_screen_restore_terminal(void) { }
static inline void
ui_screen_resize(struct ui_screen *s, const struct ui_header *h)
{
	(void)s;
	(void)h;
}
static inline void
ui_screen_draw(struct ui_screen *s, const struct ui_header *h)
{
	(void)s;
	(void)h;
}
static inline void ui_screen_invalidate(struct ui_screen *s) { (void)s; }
static inline enum ui_action
ui_screen_input(struct ui_screen *s, const struct ui_header *h)
{
	(void)s;
	(void)h;
	return UI_ACTION_QUIT;
}

#endif /* HAVE_NCURSES */

#endif /* STACKSPY_UI_H */
