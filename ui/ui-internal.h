/* ui/ui-internal.h - pieces of the screen that need no terminal, shared by
 * draw.c and tests/unit-uimodel.c. */
#ifndef STACKSPY_UI_INTERNAL_H
#define STACKSPY_UI_INTERNAL_H

#include <stddef.h>
#include <wchar.h>

/*
 * Converts the UTF-8 string s into at most `width` terminal columns of wide
 * characters in out[0..cap-1], NUL terminated.  Characters are escaped by
 * the rule of every output (collapse_text_escape_char(): "\\", "\xNN"),
 * and so are those this terminal cannot show (no wcwidth(), or not ASCII
 * in a locale of single bytes).  If s is wider than width it is cut and
 * ends with an ellipsis: U+2026 when the locale can show it, else "...".
 * Columns are counted with wcwidth(), so double-width characters count two
 * and neither a character nor an escape is ever cut in half.  Returns the
 * columns used.
 */
int ui_text_fit(const char *s, int width, wchar_t *out, size_t cap);

/* Columns s takes on the terminal (same rules as ui_text_fit). */
int ui_text_width(const char *s);

/* The bytes of s (at most max_bytes) whose shown characters (same rules)
 * fit in width columns, whole characters only: where to cut s to wrap it. */
size_t ui_text_take(const char *s, int width, size_t max_bytes);

/* A duration in at most 7 columns: "0.00s", "12.3s", "999s", "16m40s",
 * "27h46m". */
void ui_format_seconds(double s, char *buf, size_t len);

#endif
