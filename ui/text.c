/* ui/text.c - fitting names into terminal columns.  Names come from symbol
 * tables: C++ templates hundreds of columns wide, Rust paths, and now and
 * then bytes that are not UTF-8 at all, controls and bidi overrides; none
 * of it may break the layout or reach the terminal raw (the escaping rule
 * of every output, collapse/text.c). */
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

/*
 * The character at *p (< end) as the screen shows it, by the rule of every
 * output (collapse/text.c): itself, or its escape ("\\", "\xNN" per byte),
 * also for a character this terminal cannot show (no width in the locale,
 * or not ASCII in a locale of single bytes).  Fills wc[] (no NUL), sets
 * *cols to the columns they take, advances *p; returns how many.
 */
static size_t
next_shown(const char **p, const char *end, wchar_t wc[COLLAPSE_ESC_MAX], int *cols)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)*p;
	size_t avail = (size_t)(end - *p), used, n;
	char esc[COLLAPSE_ESC_MAX];
	uint32_t cp = 0;

	n = collapse_text_escape_char(s, avail, &used, esc);
	if (!n) {
		int w = -1;

		collapse_utf8_decode(s, avail, &cp);
		if (cp < 0x80 || MB_CUR_MAX > 1)
			w = wcwidth((wchar_t)cp);
		if (w >= 0) {
			*p += used;
			wc[0] = (wchar_t)cp;
			*cols = w;
			return 1;
		}
		for (size_t b = 0; b < used; b++) {
			esc[n++] = '\\';
			esc[n++] = 'x';
			esc[n++] = hex[s[b] >> 4];
			esc[n++] = hex[s[b] & 15];
		}
	}
	for (size_t i = 0; i < n; i++)
		wc[i] = (wchar_t)(unsigned char)esc[i];
	*p += used;
	*cols = (int)n;
	return n;
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
	int w = 0, cols;
	wchar_t wc[COLLAPSE_ESC_MAX];

	while (p < end && w < INT_MAX / 2) {
		next_shown(&p, end, wc, &cols);
		w += cols;
	}
	return w;
}

size_t
ui_text_take(const char *s, int width, size_t max_bytes)
{
	const char *p = s, *end = s + strlen(s);
	int used = 0, cols;
	wchar_t wc[COLLAPSE_ESC_MAX];

	while (p < end) {
		const char *before = p;

		next_shown(&p, end, wc, &cols);
		if (used + cols > width || (size_t)(p - s) > max_bytes)
			return (size_t)(before - s);
		used += cols;
	}
	return (size_t)(p - s);
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
	int used = 0;
	size_t k = 0;
	while (p < end) {
		wchar_t wc[COLLAPSE_ESC_MAX];
		int cols;
		/* An escape is shown whole or not at all. */
		size_t n = next_shown(&p, end, wc, &cols);
		if (used + cols > width - ell || k + n + 1 > cap)
			break;
		memcpy(out + k, wc, n * sizeof(*wc));
		k += n;
		used += cols;
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
