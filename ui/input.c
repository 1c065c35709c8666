/* ui/input.c - the keys of `stackspy top`: one handler per view (the
 * table, the detail of a function, the thread chooser, the help, and the
 * filter line while it is typed), chosen by a table; keys every view
 * takes first (resize, Ctrl-L, q, p, r) before them.  Drawing is draw.c's.
 */
#include "config.h"

#include <limits.h>
#include <string.h>

#include "ui/screen.h"

static void
move_sel(size_t *sel, size_t n, long delta)
{
	if (n == 0) {
		*sel = 0;
		return;
	}
	long v = (long)*sel + delta;
	if (v < 0)
		v = 0;
	if (v >= (long)n)
		v = (long)n - 1;
	*sel = (size_t)v;
}

/* Up/Down/PgUp/PgDn/Home/End over n items; page is the visible rows. */
static bool
nav_key(int key, size_t *sel, size_t n, int page)
{
	if (page < 1)
		page = 1;
	switch (key) {
	case KEY_UP:
		move_sel(sel, n, -1);
		return true;
	case KEY_DOWN:
		move_sel(sel, n, 1);
		return true;
	case KEY_PPAGE:
		move_sel(sel, n, -page);
		return true;
	case KEY_NPAGE:
		move_sel(sel, n, page);
		return true;
	case KEY_HOME:
		*sel = 0;
		return true;
	case KEY_END:
		*sel = n ? n - 1 : 0;
		return true;
	}
	return false;
}

static void
filter_append(struct ui_screen *s, wchar_t wc)
{
	char mb[MB_LEN_MAX];
	mbstate_t st;
	memset(&st, 0, sizeof(st));
	size_t k = wcrtomb(mb, wc, &st);
	size_t len = strlen(s->filter);
	if (k == (size_t)-1 || len + k + 1 > sizeof(s->filter))
		return;
	memcpy(s->filter + len, mb, k);
	s->filter[len + k] = '\0';
}

static void
filter_backspace(struct ui_screen *s)
{
	size_t len = strlen(s->filter);
	/* Back over UTF-8 continuation bytes to the start of a character. */
	while (len > 0) {
		len--;
		if (((unsigned char)s->filter[len] & 0xc0) != 0x80)
			break;
	}
	s->filter[len] = '\0';
}

static bool
is_enter(bool fkey, int key)
{
	return fkey ? key == KEY_ENTER : key == '\n' || key == '\r';
}

static bool
is_backspace(bool fkey, int key)
{
	return fkey ? key == KEY_BACKSPACE : key == 127 || key == KEY_CTRL('h');
}

/* ---- the views' keys -------------------------------------------------------- */

/* Each returns the action for the command (NONE if the view took it). */
typedef enum ui_action (*key_fn)(struct ui_screen *s, bool fkey, int k);

/* Typing the filter after '/': Enter keeps it, Esc drops it. */
static enum ui_action
key_filter(struct ui_screen *s, bool fkey, int k)
{
	if (is_enter(fkey, k)) {
		s->editing = false;
	} else if (!fkey && k == KEY_ESC) {
		s->editing = false;
		s->filter[0] = '\0';
	} else if (is_backspace(fkey, k)) {
		filter_backspace(s);
	} else if (!fkey && k >= ' ') {
		filter_append(s, (wchar_t)k);
	}
	s->sel_valid = false;
	s->sel = s->top = 0;
	return UI_ACTION_NONE;
}

/* Any key leaves the help. */
static enum ui_action
key_help(struct ui_screen *s, bool fkey, int k)
{
	(void)fkey, (void)k;
	s->mode = MODE_TABLE;
	return UI_ACTION_NONE;
}

static enum ui_action
key_threads(struct ui_screen *s, bool fkey, int k)
{
	size_t n = ui_model_thread_count(s->m) + 1;
	if (fkey && nav_key(k, &s->thread_sel, n, LINES - 5))
		return UI_ACTION_NONE;
	if (is_enter(fkey, k)) {
		s->q.thread = (long)s->thread_sel - 1;
		s->mode = MODE_TABLE;
		s->sel_valid = false;
		s->sel = s->top = 0;
	} else if ((!fkey && (k == KEY_ESC || k == 't')) || is_backspace(fkey, k)) {
		s->mode = MODE_TABLE;
	}
	return UI_ACTION_NONE;
}

static enum ui_action
key_detail(struct ui_screen *s, bool fkey, int k)
{
	size_t n = s->detail.ncallers + s->detail.ncallees;
	if (fkey && nav_key(k, &s->detail_sel, n, LINES / 2))
		return UI_ACTION_NONE;
	if (is_enter(fkey, k) && n) {
		const struct ui_edge *e = s->detail_sel < s->detail.ncallers ?
			&s->detail.callers[s->detail_sel] :
			&s->detail.callees[s->detail_sel - s->detail.ncallers];
		s->detail_function = e->function;
		s->detail_sel = 0;
	} else if ((!fkey && k == KEY_ESC) || is_backspace(fkey, k) || (fkey && k == KEY_LEFT)) {
		s->mode = MODE_TABLE;
	} else if (!fkey && k == '?') {
		s->mode = MODE_HELP;
	}
	return UI_ACTION_NONE;
}

static enum ui_action
key_table(struct ui_screen *s, bool fkey, int k)
{
	if (fkey && nav_key(k, &s->sel, s->table.nrows, s->body_rows)) {
		if (s->table.nrows) {
			s->sel_function = s->table.rows[s->sel].function;
			s->sel_thread = s->table.rows[s->sel].thread;
			s->sel_valid = true;
		}
		return UI_ACTION_NONE;
	}
	if (is_enter(fkey, k) && s->table.nrows) {
		s->detail_function = s->table.rows[s->sel].function;
		s->detail_sel = 0;
		s->mode = MODE_DETAIL;
		return UI_ACTION_NONE;
	}
	if (fkey)
		return UI_ACTION_NONE;
	switch (k) {
	case 's':
		s->q.sort = (enum ui_sort)((s->q.sort + 1) % UI_SORT_MAX);
		s->sel = s->top = 0;
		s->sel_valid = false;
		break;
	case 't':
		s->thread_sel = (size_t)(s->q.thread + 1);
		s->mode = MODE_THREADS;
		break;
	case '/':
		s->filter[0] = '\0';
		s->editing = true;
		break;
	case KEY_ESC:
		s->filter[0] = '\0';  /* Esc in the table clears the filter */
		break;
	case 'w':
		s->q.window = !s->q.window;
		break;
	case '?':
	case 'h':
		s->mode = MODE_HELP;
		break;
	}
	return UI_ACTION_NONE;
}

static const key_fn view_keys[] = {
	[MODE_TABLE] = key_table,
	[MODE_DETAIL] = key_detail,
	[MODE_THREADS] = key_threads,
	[MODE_HELP] = key_help,
};

/* One key: what every view takes, then the view's own. */
static enum ui_action
key(struct ui_screen *s, bool fkey, int k)
{
	if ((fkey && k == KEY_RESIZE) || (!fkey && k == KEY_CTRL('l'))) {
		s->repaint = true;
		return UI_ACTION_NONE;
	}
	if (s->editing)
		return key_filter(s, fkey, k);
	if (!fkey && (k == 'q' || k == 'Q'))
		return UI_ACTION_QUIT;
	if (!fkey && k == 'p')
		return UI_ACTION_PAUSE;
	if (!fkey && k == 'r')
		return UI_ACTION_RESET;
	return view_keys[s->mode](s, fkey, k);
}

enum ui_action
ui_screen_input(struct ui_screen *s, const struct ui_header *h)
{
	enum ui_action act = UI_ACTION_NONE;
	bool any = false;
	for (;;) {
		wint_t wc;
		int r = wget_wch(stdscr, &wc);
		if (r == ERR)
			break;
		any = true;
		act = key(s, r == KEY_CODE_YES, (int)wc);
		if (act != UI_ACTION_NONE)
			break;
	}
	if (any && act != UI_ACTION_QUIT)
		ui_screen_draw(s, h);
	return act;
}
