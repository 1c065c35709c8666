/* ui/text.c - fitting names into terminal columns.  Names come from symbol
 * tables: C++ templates hundreds of columns wide, Rust paths, and now and
 * then bytes that are not UTF-8 at all; none of it may break the layout. */
#include "config.h"

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "collapse/collapse.h"
#include "ui/ui-internal.h"

#define ELLIPSIS 0x2026

/* Decodes one character at *p (< end); advances *p.  Returns its width. */
static int
next_char(const char **p, const char *end, mbstate_t *st, wchar_t *wc)
{
	size_t r = mbrtowc(wc, *p, (size_t)(end - *p), st);
	if (r == (size_t)-1 || r == (size_t)-2 || r == 0) {
		memset(st, 0, sizeof(*st));
		*wc = L'?';
		*p += 1;
		return 1;
	}
	*p += r;
	int w = wcwidth(*wc);
	/* Controls and bidi overrides: the rule of every text for people. */
	if (w < 0 || !collapse_text_safe_cp((uint32_t)*wc)) {
		*wc = L'?';
		w = 1;
	}
	return w;
}

static bool
ellipsis_glyph(void)
{
	return MB_CUR_MAX > 1 && wcwidth(ELLIPSIS) == 1;
}

int
ui_text_width(const char *s)
{
	const char *p = s, *end = s + strlen(s);
	mbstate_t st;
	memset(&st, 0, sizeof(st));
	int w = 0;
	wchar_t wc;
	while (p < end && w < INT_MAX / 2)
		w += next_char(&p, end, &st, &wc);
	return w;
}

int
ui_text_fit(const char *s, int width, wchar_t *out, size_t cap)
{
	if (!cap)
		return 0;
	out[0] = L'\0';
	if (width <= 0 || cap < 2)
		return 0;
	const char *end = s + strlen(s);
	bool fits = ui_text_width(s) <= width;
	bool glyph = ellipsis_glyph();
	int ell = fits ? 0 : glyph ? 1 : 3;
	if (ell > width)
		ell = width;
	const char *p = s;
	mbstate_t st;
	memset(&st, 0, sizeof(st));
	int used = 0;
	size_t k = 0;
	while (p < end && k + 1 < cap) {
		wchar_t wc;
		const char *before = p;
		int w = next_char(&p, end, &st, &wc);
		if (used + w > width - ell) {
			p = before;
			break;
		}
		out[k++] = wc;
		used += w;
	}
	if (!fits) {
		for (int i = 0; i < ell && k + 1 < cap; i++, used++)
			out[k++] = glyph ? ELLIPSIS : L'.';
	}
	out[k] = L'\0';
	return used;
}

void
ui_format_seconds(double s, char *buf, size_t len)
{
	if (!(s >= 0))
		s = 0;
	if (s < 9.995)
		snprintf(buf, len, "%.2fs", s);
	else if (s < 99.95)
		snprintf(buf, len, "%.1fs", s);
	else if (s < 999.5)
		snprintf(buf, len, "%.0fs", s);
	else if (s < 100 * 60)
		snprintf(buf, len, "%dm%02ds", (int)(s / 60), (int)s % 60);
	else if (s < 100.0 * 3600)
		snprintf(buf, len, "%dh%02dm", (int)(s / 3600), (int)(s / 60) % 60);
	else
		snprintf(buf, len, "%dh", s < 1e7 ? (int)(s / 3600) : 9999);
}
