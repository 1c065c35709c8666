/* sampler/cmd-top.c - `stackspy top`: a live view of the hottest functions.
 *
 * One thread, one poll loop over: the profiler's tick timer, the keyboard,
 * and a self-pipe that the SIGWINCH handler writes to.  Ticks
 * come first: a redraw happens only once no tick is due, so the screen never
 * delays a sample by more than one redraw (bench/top-rate.sh measures the
 * achieved rate against `record`).  Every exit path detaches (profiler_stop)
 * before it gives the terminal back (endwin), and the terminal is back
 * before any message is printed (sampler_cleanup_set_terminal).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ptrace/clock.h"
#include "ptrace/ptrace.h"
#include "ptrace/sample.h"
#include "ptrace/watchdog.h"
#include "sampler/error.h"
#include "sampler/feedback.h"
#include "sampler/options.h"
#include "sampler/profiler.h"
#include "sampler/sampler.h"
#include "sampler/signals.h"
#include "ui/ui.h"
#include "unwind/unwind.h"

#define TOP_WINDOW_S   10    /* default --window */

struct top_options {
	struct profiler_config cfg;
	double delay;             /* seconds between refreshes */
	long iterations;          /* 0: until q */
	long window;              /* seconds of the rolling window */
	bool split_threads;       /* --threads */
	bool quiet;               /* --quiet: no hints */
};

struct top {
	struct top_options *o;
	struct profiler *p;
	struct ui_model *model;
	struct ui_screen *ui;
	double start;
	bool paused, ended;
	char ended_why[96];
	/* the achieved rate leaves pauses out, and restarts at a reset */
	uint64_t ticks_base;
	double active_before;     /* seconds sampled before active_since */
	double active_since;
};

static int sig_pipe[2] = { -1, -1 };

/* ptrace_clock_monotonic_ns() in seconds: the profiler's clock. */
static double
now_s(void)
{
	return (double)ptrace_clock_monotonic_ns() / (double)NS_PER_SEC;
}

static void
top_usage(FILE *f)
{
	fputs("Usage: stackspy top (-p PID[,PID...] | PID... | -- COMMAND [ARG...]) [OPTIONS]\n"
	      "A live view of the functions where the threads of a process spend their\n"
	      "time (like perf top), sampled from outside with ptrace.\n"
	      "\n"
	      "Target:\n"
	      "  -p, --pid PID[,PID...]  process(es) to sample\n"
	      "  PID...                  the same: arguments that start with a digit are PIDs\n"
	      "                          (comma lists too, any number), options may follow\n"
	      "  -- COMMAND [ARG...]     run COMMAND and sample it (it shares the terminal);\n"
	      "                          on q (or a signal) it gets SIGTERM, and SIGKILL 2 s\n"
	      "                          later if it still runs\n"
	      "      --keep-running      leave COMMAND running when top ends\n"
	      "      --subprocesses      also the child processes of the targets, existing and\n"
	      "                          new, until they exit (the PROCESS column says whose)\n"
	      "\n"
	      "Sampling:\n"
	      "  -r, --rate HZ           samples per second per thread (default 99, at most\n"
	      "                          10000; -F HZ, as in perf top, is the same)\n"
	      "      --idle              wall-clock: sample sleeping threads too\n"
	      "                          (default: on-CPU, only running threads)\n"
	      "  -e, --engine ENGINE     auto (default), cfi, fp, mips\n"
	      "      --python=MODE       CPython 3.11+ frames (file:line) where the eval\n"
	      "                          loop runs them: on (default), beside, off\n"
	      "\n"
	      "View:\n"
	      "  -d, --delay SECONDS     refresh every SECONDS (default 1; 0.5, 500ms, 2s)\n"
	      "      --iterations N      exit after N refreshes (for scripts and tests)\n"
	      "      --threads           a row per (thread, function), with a Thread column\n"
	      "      --window SECONDS    length of the rolling window of the w key (default 10)\n"
	      "  -q, --quiet             no hints on standard error at the end\n"
	      "  -h, --help              show this help\n"
	      "  -V, --version           show the version\n"
	      "\n"
	      "Columns: %Self (the function was on top of the stack), %Total (it was\n"
	      "anywhere in the stack), the same as time (samples / achieved rate), Function,\n"
	      "Module.  The header shows the achieved rate and stackspy's own cost: the mean\n"
	      "time a thread is stopped per sample.\n"
	      "\n"
	      "Keys: q quit, p pause/resume, s next sort column, t choose a thread, / filter\n"
	      "by name, r reset counters, w cumulative / rolling window, arrows PgUp PgDn\n"
	      "Home End move, Enter callers and callees (and the full name), ? help.\n"
	      "\n"
	      "Standard output must be a terminal.  q, SIGINT or SIGTERM detach from the\n"
	      "process (it runs on; a COMMAND started here is ended, see above) and\n"
	      "restore the terminal.  When the process exits the last view stays until q.\n"
	      "\n"
	      "Exit status: 0 success, 2 fatal error (no terminal, a TERM that cannot move\n"
	      "the cursor, nothing attached, or top not built in), 64 usage error.\n"
	      "\n"
	      "Examples:\n"
	      "  stackspy top -p PID                      the hottest functions of a process\n"
	      "  stackspy top -p $(pidof nginx) --subprocesses  a server and its workers\n"
	      "  stackspy top -p PID --idle --threads     where each thread is, sleeping too\n"
	      "  stackspy top -- ./prog ARG               start ./prog and watch it\n", f);
}

static void
parse_options(int argc, char **argv, struct top_options *o)
{
	enum { OPT_THREADS = OPT_COMMAND_FIRST, OPT_ITERATIONS, OPT_WINDOW };
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "rate", required_argument, NULL, 'r' },
		{ "engine", required_argument, NULL, 'e' },
		{ "delay", required_argument, NULL, 'd' },
		{ "iterations", required_argument, NULL, OPT_ITERATIONS },
		{ "window", required_argument, NULL, OPT_WINDOW },
		{ "threads", no_argument, NULL, OPT_THREADS },
		{ "idle", no_argument, NULL, OPT_IDLE },
		{ "subprocesses", no_argument, NULL, OPT_SUBPROCESSES },
		{ "python", required_argument, NULL, OPT_PYTHON },
		{ "keep-running", no_argument, NULL, OPT_KEEP_RUNNING },
		{ "quiet", no_argument, NULL, 'q' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct common_options co = { .cmd = "top" };
	int c;

	sampler_common_options_init(&o->cfg);
	o->delay = 1.0;
	o->window = TOP_WINDOW_S;
	while ((c = sampler_target_getopt("top", argc, argv, "+:p:r:F:e:d:qVh", longopts,
					  &o->cfg)) != -1) {
		if (sampler_common_option(&co, c, optarg, &o->cfg))
			continue;
		switch (c) {
		case 'd':
			if (sampler_parse_seconds(optarg, 0.05, 3600, &o->delay) < 0)
				error_msg_and_help("top", "invalid --delay argument: '%s' (0.05 to 3600 seconds)",
						   optarg);
			break;
		case OPT_ITERATIONS:
			if (sampler_parse_long(optarg, 1, 1000000000, &o->iterations) < 0)
				error_msg_and_help("top", "invalid --iterations argument: '%s'", optarg);
			break;
		case OPT_WINDOW:
			if (sampler_parse_long(optarg, 1, 3600, &o->window) < 0)
				error_msg_and_help("top", "invalid --window argument: '%s' (1 to 3600 seconds)",
						   optarg);
			break;
		case OPT_THREADS:
			o->split_threads = true;
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'h':
			top_usage(stdout);
			exit(0);
		default:
			sampler_option_error_and_help("top", c, argv, longopts);
		}
	}
	sampler_parse_target_or_help("top", "watch", argc, argv, &o->cfg);
	sampler_keep_running_or_help("top", &o->cfg);
	sampler_check_engine_or_help("top", o->cfg.engine);
}

/* ---- signals: SIGWINCH through a self-pipe; SIGTSTP ignored ------------- */

static void
on_signal_byte(int sig)
{
	int saved = errno;
	char c = 'w';
	if (write(sig_pipe[1], &c, 1) < 0) {
		/* the pipe is full: a byte is already waiting */
	}
	errno = saved;
}

static int
signals_setup(void)
{
	if (pipe2(sig_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
		return -errno;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal_byte;
	sigemptyset(&sa.sa_mask);
	/* Installed before curses starts, which then leaves them alone.
	 * Ctrl-Z is ignored: a stopped top would still trace the target, and
	 * every signal sent to it would park the receiving thread until fg.
	 * p pauses sampling, q quits. */
	sigaction(SIGWINCH, &sa, NULL);
	signal(SIGTSTP, SIG_IGN);
	return 0;
}

static void
signals_teardown(void)
{
	signal(SIGWINCH, SIG_DFL);
	signal(SIGTSTP, SIG_DFL);
	if (sig_pipe[0] >= 0)
		close(sig_pipe[0]);
	if (sig_pipe[1] >= 0)
		close(sig_pipe[1]);
	sig_pipe[0] = sig_pipe[1] = -1;
}

/* ---- the header ----------------------------------------------------------- */

static const char *
module_of(void *arg, uint32_t id)
{
	return profiler_frame_module(arg, id);
}

static void
fill_header(struct top *t, struct ui_header *h)
{
	const struct profiler_stats *st = profiler_stats(t->p);
	double now = now_s();
	double active = t->active_before + (t->paused || t->ended ? 0 : now - t->active_since);
	memset(h, 0, sizeof(*h));
	h->pid = profiler_pid(t->p);
	h->comm = profiler_comm(t->p);
	h->npids = t->o->cfg.argv ? 1 : (size_t)t->o->cfg.npids;
	if (t->o->cfg.subprocesses)
		h->npids = st->processes_seen;
	h->threads_sampled = ui_model_thread_count(t->model);
	h->threads_seen = st->threads_seen;
	h->rate_hz = t->o->cfg.rate_hz;
	h->achieved_hz = active > 0.05 ? (double)(st->ticks - t->ticks_base) / active : 0;
	h->samples = ui_model_samples(t->model);
	h->elapsed_s = st->elapsed_s;
	h->engine = unwind_engine_name(t->o->cfg.engine);
	h->pause_mean_us = st->pause_mean_us;
	h->oncpu = !t->o->cfg.idle;
	h->not_oncpu = profiler_stats_not_oncpu(st);
	h->skipped = st->skipped;
	h->paused = t->paused;
	h->ended = t->ended ? t->ended_why : NULL;
}

static void
mark_ended(struct top *t)
{
	double now = now_s();
	if (!t->paused)
		t->active_before += now - t->active_since;
	t->ended = true;
	profiler_stop(t->p);
	int st = profiler_command_status(t->p);
	if (st != -1)
		profiler_command_status_text(st, t->ended_why, sizeof(t->ended_why));
	else
		snprintf(t->ended_why, sizeof(t->ended_why), "exited");
}

static void
toggle_pause(struct top *t)
{
	double now = now_s();
	if (t->ended)
		return;
	if (t->paused)
		t->active_since = now;
	else
		t->active_before += now - t->active_since;
	t->paused = !t->paused;
}

static void
reset_counts(struct top *t)
{
	ui_model_reset(t->model);
	t->ticks_base = profiler_stats(t->p)->ticks;
	t->active_before = 0;
	t->active_since = now_s();
}

/* ---- the loop ---------------------------------------------------------------- */

/* Returns when q was pressed, a stop signal came, or --iterations ran out. */
static void
run(struct top *t)
{
	struct ui_header h;
	long refreshes = 0;
	bool keys = isatty(STDIN_FILENO);
	double next_draw = t->start + t->o->delay;

	profiler_stacks_lock(t->p);
	fill_header(t, &h);
	ui_screen_draw(t->ui, &h);
	profiler_stacks_unlock(t->p);
	while (!stop_signal) {
		struct pollfd pfd[3] = {
			/* Paused, the targets are still traced: their
			 * signals must still be handed on at once. */
			{ .fd = t->ended ? -1 : t->paused ? ptrace_event_fd() : profiler_fd(t->p),
			  .events = POLLIN },
			{ .fd = keys ? STDIN_FILENO : -1, .events = POLLIN },
			{ .fd = sig_pipe[0], .events = POLLIN },
		};
		double now = now_s();
		int timeout = next_draw > now ? (int)((next_draw - now) * (double)MS_PER_SEC) + 1 : 0;
		/* Wait for the tick real-time, as record does (sampler/ticks.c);
		 * keys and drawing run at the normal priority. */
		ptrace_hold_realtime(!t->paused && !t->ended);
		ptrace_watchdog_alive(ptrace_clock_monotonic_ns() + (uint64_t)timeout * NS_PER_MS);
		int r = poll(pfd, 3, timeout);
		if (!(r > 0 && (pfd[0].revents & POLLIN)))
			ptrace_hold_realtime(false);
		if (r < 0 && errno != EINTR)
			break;
		if (stop_signal)
			break;
		if (r > 0 && (pfd[0].revents & POLLIN) && t->paused) {
			profiler_poll_events(t->p);
			continue;
		}
		if (r > 0 && (pfd[0].revents & POLLIN)) {
			profiler_stacks_lock(t->p);
			ui_model_set_time(t->model, now_s() - t->start);
			profiler_stacks_unlock(t->p);
			if (profiler_tick(t->p) == 0) {
				mark_ended(t);
				next_draw = 0;  /* say so at once */
			}
			/* A tick that is due again goes before keys and drawing. */
			continue;
		}
		if (r > 0 && (pfd[2].revents & POLLIN)) {
			char buf[16];
			ssize_t n = read(sig_pipe[0], buf, sizeof(buf));
			bool winch = false;
			for (ssize_t i = 0; i < n; i++)
				winch |= buf[i] == 'w';
			profiler_stacks_lock(t->p);
			fill_header(t, &h);
			if (winch)
				ui_screen_resize(t->ui, &h);
			profiler_stacks_unlock(t->p);
		}
		if (r > 0 && (pfd[1].revents & (POLLIN | POLLHUP | POLLERR))) {
			if (!(pfd[1].revents & POLLIN)) {
				keys = false;  /* the terminal went away */
				continue;
			}
			profiler_stacks_lock(t->p);
			fill_header(t, &h);
			enum ui_action a = ui_screen_input(t->ui, &h);
			if (a == UI_ACTION_PAUSE)
				toggle_pause(t);
			else if (a == UI_ACTION_RESET)
				reset_counts(t);
			if (a != UI_ACTION_NONE && a != UI_ACTION_QUIT) {
				fill_header(t, &h);
				ui_screen_draw(t->ui, &h);
			}
			profiler_stacks_unlock(t->p);
			if (a == UI_ACTION_QUIT)
				return;
		}
		now = now_s();
		if (now >= next_draw) {
			profiler_stacks_lock(t->p);
			ui_model_set_time(t->model, now - t->start);
			if (t->o->cfg.argv)
				ui_screen_invalidate(t->ui);  /* the command may write */
			fill_header(t, &h);
			ui_screen_draw(t->ui, &h);
			profiler_stacks_unlock(t->p);
			if (t->o->iterations && ++refreshes >= t->o->iterations)
				return;
			/* Fixed cadence; after a stall, the next one from now. */
			next_draw = next_draw + t->o->delay > now ? next_draw + t->o->delay :
				    now + t->o->delay;
		}
	}
	ptrace_hold_realtime(false);
}

int
sampler_cmd_top(int argc, char **argv)
{
	struct top_options o;
	memset(&o, 0, sizeof(o));
	parse_options(argc, argv, &o);

	if (!ui_available()) {
		error_msg("top is not built in: stackspy was configured without ncursesw");
		sampler_hint_msg("install libncurses-dev (ncursesw) and rebuild; "
				 "'stackspy record' works without it");
		free(o.cfg.pids);
		return EXIT_FATAL;
	}
	/* Before attaching: no terminal must not cost the target anything. */
	if (!isatty(STDOUT_FILENO)) {
		error_msg("top needs a terminal: standard output is not a terminal");
		sampler_hint_msg("to write samples to a file or a pipe use 'stackspy record'");
		free(o.cfg.pids);
		return EXIT_FATAL;
	}
	int tr = ui_terminal_check();
	if (tr < 0) {
		const char *term = getenv("TERM") ? getenv("TERM") : "(unset)";
		if (tr == -EOPNOTSUPP)
			error_msg("cannot use the terminal: TERM=%s cannot move the cursor, and top "
				  "draws a full screen", term);
		else
			error_msg("cannot use the terminal: TERM=%s is not known to curses", term);
		sampler_hint_msg("run it with TERM=xterm-256color (or your terminal's name), "
				 "or use 'stackspy record'");
		free(o.cfg.pids);
		return EXIT_FATAL;
	}
	if (signals_setup() < 0) {
		perror_msg(errno, "pipe");
		free(o.cfg.pids);
		return EXIT_FATAL;
	}

	struct top t;
	memset(&t, 0, sizeof(t));
	t.o = &o;
	int r = profiler_start(&o.cfg, &t.p);
	if (r < 0) {
		signals_teardown();
		free(o.cfg.pids);
		return EXIT_FATAL;
	}
	t.model = ui_model_new(profiler_stacks(t.p), (unsigned)o.window, module_of, t.p);
	if (!t.model) {
		profiler_free(t.p);
		signals_teardown();
		error_msg("out of memory");
		free(o.cfg.pids);
		return EXIT_FATAL;
	}
	profiler_set_hook(t.p, ui_model_hook, t.model);
	/* The tracer thread only traces: the model is fed by the unwinder's
	 * thread, and read here under the stacks' lock. */
	r = profiler_unwind_in_background(t.p);
	if (r < 0)
		perror_msg(r, "warning: cannot start the unwinder's thread: unwinding between ticks");
	r = ui_screen_open(t.model, o.split_threads,
			   o.cfg.subprocesses || o.cfg.npids > 1, &t.ui);
	if (r < 0) {
		profiler_stop(t.p);
		if (r == -EINVAL)
			error_msg("cannot use the terminal: TERM=%s is not known to curses",
				  getenv("TERM") ? getenv("TERM") : "(unset)");
		else
			perror_msg(r, "cannot use the terminal");
		profiler_free(t.p);
		ui_model_free(t.model);
		signals_teardown();
		free(o.cfg.pids);
		return EXIT_FATAL;
	}
	sampler_cleanup_set_terminal(ui_screen_restore_terminal);
	sampler_info_init(o.quiet);
	sampler_feedback_sampling_started(t.p);
	t.start = now_s();
	t.active_since = t.start;

	run(&t);

	/* Detach, then the terminal, then messages; then a command started
	 * here is ended (SIGTERM), detached so that it gets the signal. */
	sampler_feedback_sampling_ended(t.p);
	profiler_stop(t.p);
	ui_screen_close(t.ui);
	sampler_cleanup_set_terminal(NULL);
	signals_teardown();
	profiler_end_command(t.p);
	profiler_print_summary(t.p, &o.cfg);
	if (o.cfg.argv)
		profiler_report_command(t.p);
	else if (t.ended)
		error_msg("%s (%d) %s", profiler_comm(t.p), (int)profiler_pid(t.p), t.ended_why);
	sampler_feedback_hints(t.p, &o.cfg);
	profiler_free(t.p);
	ui_model_free(t.model);
	free(o.cfg.pids);
	if (stop_signal)
		sampler_signals_reraise();
	return 0;
}
