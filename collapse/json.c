/*
 * collapse/json.c - JSON strings: the one escaper of every JSON stackspy
 * writes (speedscope files here, `dump --format json` in sampler/).
 */
#include "config.h"

#include "collapse/collapse.h"

#include <string.h>

void collapse_json_string(FILE *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	uint32_t cp;
	size_t len;

	if (!s) {
		fputs("null", out);
		return;
	}
	len = strlen(s);
	putc('"', out);
	for (size_t i = 0; i < len;) {
		size_t k = collapse_text_char(p + i, len - i);

		if (k && p[i] != '"') {
			/* A run of characters that need no escape, in one
			 * call: one fwrite per character was ~6% of the CPU
			 * time of a 1000-thread dump (perf: _IO_fwrite). */
			size_t run = i;

			do {
				i += k;
				/* Printable ASCII needs no decoding (names are
				 * mostly that: the call per byte was a fifth of
				 * a 1000-thread dump's JSON). */
				while (i < len && p[i] >= 0x20 && p[i] < 0x7f && p[i] != '"' &&
				       p[i] != '\\')
					i++;
			} while (i < len && p[i] != '"' &&
				 (k = collapse_text_char(p + i, len - i)) != 0);
			fwrite(p + run, 1, i - run, out);
		} else if (p[i] == '"' || p[i] == '\\') {
			putc('\\', out);
			putc(p[i], out);
			i++;
		} else if ((k = collapse_utf8_decode(p + i, len - i, &cp)) != 0) {
			/* Controls and bidi characters (text.c's rule): kept,
			 * in JSON's own escape (all are in the BMP), so no
			 * reader of the file meets them raw. */
			fprintf(out, "\\u%04x", (unsigned)cp);
			i += k;
		} else {
			fputs("\\ufffd", out);
			i++;
		}
	}
	putc('"', out);
}
