/* ui/screen.h - the curses screen of `stackspy top`, shared by its
 * drawing (draw.c) and its keys (input.c); private to ui/. */
#ifndef STACKSPY_UI_SCREEN_H
#define STACKSPY_UI_SCREEN_H

#include <curses.h>
#include <stdbool.h>
#include <stdint.h>
#include <wchar.h>

#include "ui/ui-internal.h"
#include "ui/ui.h"

#define WBUF 4096
#define FILTER_MAX 256
#define KEY_CTRL(c) ((c) & 0x1f)
#define KEY_ESC 27

enum mode { MODE_TABLE, MODE_DETAIL, MODE_THREADS, MODE_HELP };

struct ui_screen {
	struct ui_model *m;
	SCREEN *scr;
	struct ui_query q;
	enum mode mode;
	bool editing;             /* typing after '/' */
	char filter[FILTER_MAX];  /* multibyte, as typed */
	struct ui_table table;
	size_t sel, top;          /* selected row, first row shown */
	bool sel_valid;           /* sel_function/thread name the selection */
	uint32_t sel_function;
	long sel_thread;
	int body_rows;            /* rows of the table at the last draw */
	uint32_t detail_function;
	struct ui_detail detail;
	size_t detail_sel;        /* over callers, then callees */
	size_t thread_sel, thread_top;  /* 0 = all, i + 1 = thread i */
	bool repaint;
	const struct ui_header *last;
	wchar_t wbuf[WBUF];
};

#endif
