/* ui/draw.c - the ncursesw screen of `stackspy top`.
 *
 * Everything is drawn from the model on each refresh (erase, then the whole
 * view): curses sends only the cells that changed, so a steady profile
 * costs almost nothing on the wire.  Names go through ui_text_fit(): cut by
 * display width with an ellipsis, never mid-character; the detail view
 * (Enter) shows the full name.  Any terminal size works: sections that do
 * not fit are left out, top to bottom.
 */
#include "config.h"

#include <curses.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <wchar.h>

#include "ui/screen.h"

/* For ui_screen_restore_terminal(): error printers may run anywhere. */
static bool curses_on;

static const char *const sort_names[UI_SORT_MAX] = {
	[UI_SORT_SELF] = "%Self",
	[UI_SORT_TOTAL] = "%Total",
	[UI_SORT_NAME] = "Function",
	[UI_SORT_MODULE] = "Module",
};

/* ---- primitives --------------------------------------------------------- */

/* Text at (y, x) in at most width columns, padded with spaces to exactly
 * width when pad. */
static void
put(struct ui_screen *s, int y, int x, int width, const char *text, bool pad)
{
	if (y < 0 || y >= LINES || x >= COLS || width <= 0)
		return;
	if (x + width > COLS)
		width = COLS - x;
	int used = ui_text_fit(text, width, s->wbuf, WBUF);
	mvaddnwstr(y, x, s->wbuf, -1);
	if (pad)
		for (int i = used; i < width; i++)
			mvaddch(y, x + i, ' ');
}

/* Right-aligned ASCII in a field of width columns. */
static void
put_right(struct ui_screen *s, int y, int x, int width, const char *text)
{
	int len = (int)strlen(text);
	if (len > width)
		len = width;
	char pad[64];
	snprintf(pad, sizeof(pad), "%*s", width - len, "");
	put(s, y, x, width - len, pad, false);
	put(s, y, x + width - len, len, text, false);
}

static void
fmt_pct(char *buf, size_t len, uint64_t n, uint64_t of)
{
	snprintf(buf, len, "%.1f%%", of ? 100.0 * (double)n / (double)of : 0.0);
}

static void
fmt_time(char *buf, size_t len, uint64_t n, double hz)
{
	if (hz > 0)
		ui_format_seconds((double)n / hz, buf, len);
	else
		snprintf(buf, len, "-");
}

static void
fmt_count(char *buf, size_t len, uint64_t n)
{
	/* 1234567 -> 1,234,567 without the locale's LC_NUMERIC */
	char tmp[32];
	int k = snprintf(tmp, sizeof(tmp), "%" PRIu64, n), j = 0;
	for (int i = 0; i < k && (size_t)j + 2 < len; i++) {
		if (i && (k - i) % 3 == 0)
			buf[j++] = ',';
		buf[j++] = tmp[i];
	}
	buf[j] = '\0';
}

static void
fmt_elapsed(char *buf, size_t len, double s)
{
	long t = (long)s;
	if (t >= 3600)
		snprintf(buf, len, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
	else
		snprintf(buf, len, "%ld:%02ld", t / 60, t % 60);
}

static const char *
thread_label(struct ui_screen *s, long thread)
{
	if (thread < 0)
		return "all";
	const char *n = ui_model_thread(s->m, (size_t)thread, NULL, NULL);
	return n ? n : "?";
}

/* ---- header ---------------------------------------------------------------- */

static int
header_lines(void)
{
	return LINES >= 12 ? 4 : LINES >= 6 ? 1 : 0;
}

static void
draw_header(struct ui_screen *s, const struct ui_header *h)
{
	char line[1024], cnt[32], el[32], more[32] = "", state[160] = "";
	int n = header_lines();
	if (n == 0)
		return;
	if (h->npids > 1)
		snprintf(more, sizeof(more), " (+%zu more)", h->npids - 1);
	if (h->ended)
		snprintf(state, sizeof(state), "  [target %s; q quits]", h->ended);
	else if (h->paused)
		snprintf(state, sizeof(state), "  [paused; p resumes]");
	snprintf(line, sizeof(line), "PID %d %s%s%s  Threads: %zu sampled, %zu seen  Engine: %s",
		 (int)h->pid, h->comm ? h->comm : "", more, state, h->threads_sampled,
		 h->threads_seen, h->engine ? h->engine : "?");
	attron(A_BOLD);
	put(s, 0, 0, COLS, line, true);
	attroff(A_BOLD);
	if (n < 4)
		return;
	fmt_count(cnt, sizeof(cnt), h->samples);
	fmt_elapsed(el, sizeof(el), h->elapsed_s);
	snprintf(line, sizeof(line), "Rate: %.0f Hz asked, %.1f Hz achieved  Samples: %s  Elapsed: %s",
		 h->rate_hz, h->achieved_hz, cnt, el);
	put(s, 1, 0, COLS, line, true);
	char oncpu[96] = "";
	if (h->oncpu)
		snprintf(oncpu, sizeof(oncpu), "  Not on-CPU: %llu stops  Skipped: %llu",
			 (unsigned long long)h->not_oncpu, (unsigned long long)h->skipped);
	snprintf(line, sizeof(line), "Cost: %.1f us mean pause per thread-sample%s", h->pause_mean_us,
		 oncpu);
	put(s, 2, 0, COLS, line, true);
	char view[32];
	if (s->q.window)
		snprintf(view, sizeof(view), "last %us", ui_model_window(s->m));
	else
		snprintf(view, sizeof(view), "cumulative");
	snprintf(line, sizeof(line), "View: %s  Sort: %s  Thread: %s%s%s%s", view,
		 sort_names[s->q.sort], thread_label(s, s->q.thread),
		 s->filter[0] ? "  Filter: '" : "", s->filter, s->filter[0] ? "'" : "");
	put(s, 3, 0, COLS, line, true);
}

static void
draw_status(struct ui_screen *s)
{
	if (LINES < 2 && s->mode == MODE_TABLE && !s->editing)
		return;
	char line[512];
	const char *text;
	if (s->editing) {
		snprintf(line, sizeof(line), "Filter: %s_   (Enter: keep, Esc: clear)", s->filter);
		text = line;
	} else if (s->mode == MODE_DETAIL) {
		text = "Esc back  Up/Down choose  Enter go to  p pause  q quit  ? help";
	} else if (s->mode == MODE_THREADS) {
		text = "Up/Down choose  Enter select  Esc cancel";
	} else if (s->mode == MODE_HELP) {
		text = "Press any key to return";
	} else {
		text = "q quit  p pause  s sort  t thread  / filter  r reset  w window  "
		       "Enter callers/callees  ? help";
	}
	attron(A_REVERSE);
	put(s, LINES - 1, 0, COLS, text, true);
	attroff(A_REVERSE);
}

/* ---- table ------------------------------------------------------------------- */

struct columns {
	bool times, module, thread, proc;
	int func_x, func_w, mod_x, mod_w, thr_x, thr_w;  /* thr_*: the Thread
							    or Process column */
};

static void
layout(struct ui_screen *s, struct columns *c)
{
	memset(c, 0, sizeof(*c));
	int x = 16;                       /* %Self %Total */
	c->times = COLS >= 50;
	if (c->times)
		x += 18;
	c->thread = s->q.split_threads && COLS >= 70;
	c->proc = !c->thread && s->q.split_procs && COLS >= 70;
	if (c->thread || c->proc) {
		c->thr_x = x;
		c->thr_w = COLS >= 120 ? 24 : 16;
		x += c->thr_w + 1;
	}
	c->module = COLS >= 60;
	if (c->module) {
		c->mod_w = COLS / 5 > 24 ? 24 : COLS / 5;
		c->mod_x = COLS - c->mod_w;
	}
	c->func_x = x;
	c->func_w = (c->module ? c->mod_x - 1 : COLS) - x;
}

static void
sync_selection(struct ui_screen *s)
{
	size_t n = s->table.nrows;
	if (s->sel_valid) {
		for (size_t i = 0; i < n; i++)
			if (s->table.rows[i].function == s->sel_function &&
			    s->table.rows[i].thread == s->sel_thread) {
				s->sel = i;
				break;
			}
	}
	if (s->sel >= n)
		s->sel = n ? n - 1 : 0;
	if (n) {
		s->sel_valid = true;
		s->sel_function = s->table.rows[s->sel].function;
		s->sel_thread = s->table.rows[s->sel].thread;
	}
}

static void
draw_table(struct ui_screen *s, const struct ui_header *h, int y0)
{
	struct columns c;
	char a[32], b[32];
	if (y0 >= LINES - 1)
		return;
	layout(s, &c);
	attron(A_REVERSE);
	put(s, y0, 0, COLS, "", true);
	put_right(s, y0, 0, 7, s->q.sort == UI_SORT_SELF ? "%Self*" : "%Self");
	put_right(s, y0, 8, 7, s->q.sort == UI_SORT_TOTAL ? "%Total*" : "%Total");
	if (c.times) {
		put_right(s, y0, 16, 8, "Self");
		put_right(s, y0, 25, 8, "Total");
	}
	if (c.thread || c.proc)
		put(s, y0, c.thr_x, c.thr_w, c.thread ? "Thread" : "Process", false);
	put(s, y0, c.func_x, c.func_w, s->q.sort == UI_SORT_NAME ? "Function*" : "Function", false);
	if (c.module)
		put(s, y0, c.mod_x, c.mod_w, s->q.sort == UI_SORT_MODULE ? "Module*" : "Module", false);
	attroff(A_REVERSE);

	int rows = LINES - 1 - (y0 + 1);
	s->body_rows = rows > 0 ? rows : 0;
	if (rows <= 0)
		return;
	if (s->table.nrows == 0) {
		put(s, y0 + 1, 0, COLS,
		    s->filter[0] ? "(no function matches the filter)" :
		    s->q.window ? "(no samples in the window yet)" : "(no samples yet: "
		    "only threads that run are sampled; --idle samples sleeping ones too)", true);
		return;
	}
	if (s->sel < s->top)
		s->top = s->sel;
	if (s->sel >= s->top + (size_t)rows)
		s->top = s->sel - (size_t)rows + 1;
	if (s->top + (size_t)rows > s->table.nrows)
		s->top = s->table.nrows > (size_t)rows ? s->table.nrows - (size_t)rows : 0;
	for (int i = 0; i < rows && s->top + (size_t)i < s->table.nrows; i++) {
		const struct ui_row *r = &s->table.rows[s->top + (size_t)i];
		int y = y0 + 1 + i;
		bool sel = s->top + (size_t)i == s->sel;
		if (sel)
			attron(A_REVERSE);
		put(s, y, 0, COLS, "", true);
		fmt_pct(a, sizeof(a), r->self, s->table.samples);
		put_right(s, y, 0, 7, a);
		fmt_pct(a, sizeof(a), r->total, s->table.samples);
		put_right(s, y, 8, 7, a);
		if (c.times) {
			fmt_time(a, sizeof(a), r->self, h->achieved_hz);
			fmt_time(b, sizeof(b), r->total, h->achieved_hz);
			put_right(s, y, 16, 8, a);
			put_right(s, y, 25, 8, b);
		}
		if (c.thread)
			put(s, y, c.thr_x, c.thr_w, thread_label(s, r->thread), false);
		if (c.proc)
			put(s, y, c.thr_x, c.thr_w,
			    ui_model_process_label(s->m, r->pid, a, sizeof(a)), false);
		put(s, y, c.func_x, c.func_w, ui_model_function_name(s->m, r->function), false);
		if (c.module)
			put(s, y, c.mod_x, c.mod_w, ui_model_function_module(s->m, r->function), false);
		if (sel)
			attroff(A_REVERSE);
	}
}

/* ---- detail: callers and callees ------------------------------------------- */

static void
draw_edges(struct ui_screen *s, const struct ui_header *h, int *y, int ymax, const char *title,
	   const struct ui_edge *e, size_t n, size_t sel_base)
{
	char line[128], a[32], b[32];
	if (*y >= ymax)
		return;
	snprintf(line, sizeof(line), "%s (%zu):  %%of function  time", title, n);
	attron(A_BOLD);
	put(s, (*y)++, 0, COLS, line, true);
	attroff(A_BOLD);
	if (n == 0 && *y < ymax)
		put(s, (*y)++, 2, COLS - 2, "(none)", true);
	for (size_t i = 0; i < n && *y < ymax; i++) {
		if (*y == ymax - 1 && i + 1 < n) {
			snprintf(line, sizeof(line), "  ... %zu more", n - i);
			put(s, (*y)++, 0, COLS, line, true);
			break;
		}
		bool sel = s->detail_sel == sel_base + i;
		if (sel)
			attron(A_REVERSE);
		put(s, *y, 0, COLS, "", true);
		fmt_pct(a, sizeof(a), e[i].count, s->detail.total);
		put_right(s, *y, 2, 7, a);
		fmt_time(b, sizeof(b), e[i].count, h->achieved_hz);
		put_right(s, *y, 10, 8, b);
		put(s, *y, 20, COLS - 20, ui_model_function_name(s->m, e[i].function), false);
		if (sel)
			attroff(A_REVERSE);
		(*y)++;
	}
}

static void
draw_detail(struct ui_screen *s, const struct ui_header *h, int y)
{
	int ymax = LINES - 1;
	char line[256], a[32], b[32], c[32], d[32];
	ui_detail_release(&s->detail);
	if (ui_model_detail(s->m, &s->q, s->detail_function, &s->detail) < 0) {
		put(s, y, 0, COLS, "(out of memory)", true);
		return;
	}
	struct ui_detail *dt = &s->detail;
	size_t nsel = dt->ncallers + dt->ncallees;
	if (s->detail_sel >= nsel)
		s->detail_sel = nsel ? nsel - 1 : 0;
	/* The full name, wrapped over up to 6 lines, cut by columns. */
	const char *name = ui_model_function_name(s->m, s->detail_function);
	attron(A_BOLD);
	if (y < ymax)
		put(s, y++, 0, COLS, "Function:", true);
	attroff(A_BOLD);
	const char *p = name;
	for (int k = 0; *p && y < ymax && k < 6; k++) {
		/* As many characters as fit in COLS - 2 columns, escaped as
		 * put() shows them. */
		char chunk[1024];
		size_t len = ui_text_take(p, COLS - 2, sizeof(chunk) - 1);
		if (len == 0)
			break;
		memcpy(chunk, p, len);
		chunk[len] = '\0';
		p += len;
		put(s, y++, 2, COLS - 2, chunk, true);
	}
	const char *mod = ui_model_function_module(s->m, s->detail_function);
	fmt_pct(a, sizeof(a), dt->self, dt->samples);
	fmt_time(b, sizeof(b), dt->self, h->achieved_hz);
	fmt_pct(c, sizeof(c), dt->total, dt->samples);
	fmt_time(d, sizeof(d), dt->total, h->achieved_hz);
	snprintf(line, sizeof(line), "Module: %s  Self: %s (%s)  Total: %s (%s)",
		 mod[0] ? mod : "?", a, b, c, d);
	if (y < ymax)
		put(s, y++, 0, COLS, line, true);
	if (y < ymax)
		put(s, y++, 0, COLS, "", true);
	int left = ymax - y;
	int half = left / 2 > 2 ? left / 2 : 2;
	int callers_end = y + half < ymax ? y + half : ymax;
	draw_edges(s, h, &y, callers_end, "Callers", dt->callers, dt->ncallers, 0);
	draw_edges(s, h, &y, ymax, "Callees", dt->callees, dt->ncallees, dt->ncallers);
}

/* ---- threads chooser, help ------------------------------------------------------ */

static void
draw_threads(struct ui_screen *s, int y0)
{
	size_t n = ui_model_thread_count(s->m) + 1;
	int rows = LINES - 1 - (y0 + 1);
	char line[512], cnt[32];
	if (rows <= 0 || y0 >= LINES - 1)
		return;
	attron(A_REVERSE);
	put(s, y0, 0, COLS, "Choose a thread:        Samples", true);
	attroff(A_REVERSE);
	if (s->thread_sel >= n)
		s->thread_sel = n - 1;
	if (s->thread_sel < s->thread_top)
		s->thread_top = s->thread_sel;
	if (s->thread_sel >= s->thread_top + (size_t)rows)
		s->thread_top = s->thread_sel - (size_t)rows + 1;
	for (int i = 0; i < rows && s->thread_top + (size_t)i < n; i++) {
		size_t k = s->thread_top + (size_t)i;
		uint64_t samples;
		const char *name;
		if (k == 0) {
			name = "all threads";
			samples = ui_model_samples(s->m);
		} else {
			name = ui_model_thread(s->m, k - 1, NULL, &samples);
		}
		fmt_count(cnt, sizeof(cnt), samples);
		snprintf(line, sizeof(line), "%c %-30s %12s", k == (size_t)(s->q.thread + 1) ? '*' : ' ',
			 name, cnt);
		if (k == s->thread_sel)
			attron(A_REVERSE);
		put(s, y0 + 1 + i, 0, COLS, line, true);
		if (k == s->thread_sel)
			attroff(A_REVERSE);
	}
}

static const char *const help_text[] = {
	"stackspy top: the functions where the sampled threads spend their time",
	"",
	"  %Self   samples with the function on top of the stack (it was running)",
	"  %Total  samples with the function anywhere in the stack (it or its callees)",
	"  Self, Total   the same as time: samples / achieved rate",
	"",
	"  q          quit (stackspy detaches; the program runs on)",
	"  p          pause / resume sampling",
	"  s          sort by the next column: %Self, %Total, Function, Module",
	"  t          show one thread, or all",
	"  /          filter by function name (substring, any case); Esc clears",
	"  r          reset the counters",
	"  w          cumulative / rolling window (--window seconds)",
	"  Up, Down, PgUp, PgDn, Home, End   move",
	"  Enter      callers and callees of the selected function, full name",
	"  Ctrl-L     repaint the screen",
	"  ?          this help",
	"",
	"Cost: the mean time one thread is stopped per sample.",
};

static void
draw_help(struct ui_screen *s, int y0)
{
	for (size_t i = 0; i < sizeof(help_text) / sizeof(help_text[0]); i++)
		if (y0 + (int)i < LINES - 1)
			put(s, y0 + (int)i, 0, COLS, help_text[i], true);
}

/* ---- the screen -------------------------------------------------------------------- */

static void
requery(struct ui_screen *s)
{
	s->q.filter = s->filter;
	if (ui_model_query(s->m, &s->q, &s->table) < 0)
		memset(&s->table, 0, sizeof(s->table));
	sync_selection(s);
}

void
ui_screen_draw(struct ui_screen *s, const struct ui_header *h)
{
	s->last = h;
	erase();
	draw_header(s, h);
	int y0 = header_lines();
	switch (s->mode) {
	case MODE_TABLE:
		requery(s);
		draw_table(s, h, y0);
		break;
	case MODE_DETAIL:
		draw_detail(s, h, y0);
		break;
	case MODE_THREADS:
		draw_threads(s, y0);
		break;
	case MODE_HELP:
		draw_help(s, y0);
		break;
	}
	draw_status(s);
	if (s->repaint) {
		clearok(curscr, TRUE);
		s->repaint = false;
	}
	refresh();
}

void
ui_screen_invalidate(struct ui_screen *s)
{
	s->repaint = true;
}

int
ui_screen_open(struct ui_model *m, bool split_threads, bool split_procs,
	       struct ui_screen **out)
{
	*out = NULL;
	if (!isatty(STDOUT_FILENO))
		return -ENOTTY;
	struct ui_screen *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->m = m;
	s->q.thread = -1;
	s->q.split_threads = split_threads;
	s->q.split_procs = split_procs;
	s->q.sort = UI_SORT_SELF;
	s->q.filter = s->filter;
	/* Only the character type: numbers in messages stay "12.5", not
	 * "12,5". */
	setlocale(LC_CTYPE, "");
	s->scr = newterm(NULL, stdout, stdin);
	if (!s->scr) {
		free(s);
		return -EINVAL;  /* TERM unknown */
	}
	curses_on = true;
	cbreak();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	set_escdelay(50);
	curs_set(0);
	*out = s;
	return 0;
}

void
ui_screen_restore_terminal(void)
{
	if (!curses_on)
		return;
	curses_on = false;
	curs_set(1);
	endwin();
	fflush(stdout);
}

void
ui_screen_close(struct ui_screen *s)
{
	if (!s)
		return;
	ui_screen_restore_terminal();
	ui_detail_release(&s->detail);
	delscreen(s->scr);
	free(s);
}

void
ui_screen_resize(struct ui_screen *s, const struct ui_header *h)
{
	struct winsize ws;
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0 && ws.ws_col > 0)
		resizeterm(ws.ws_row, ws.ws_col);
	s->repaint = true;
	ui_screen_draw(s, h);
}

