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
	size_t len;

	if (!s) {
		fputs("null", out);
		return;
	}
	len = strlen(s);
	putc('"', out);
	for (size_t i = 0; i < len;) {
		size_t k = collapse_utf8_char(p + i, len - i);

		if (k && p[i] != '"' && p[i] != '\\') {
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
			} while (i < len && p[i] != '"' && p[i] != '\\' &&
				 (k = collapse_utf8_char(p + i, len - i)) != 0);
			fwrite(p + run, 1, i - run, out);
		} else if (k) {
			putc('\\', out);
			putc(p[i], out);
			i += k;
		} else if (p[i] < 0x20 || p[i] == 0x7f) {
			/* C0 controls and DEL */
			fprintf(out, "\\u%04x", p[i]);
			i++;
		} else if (p[i] == 0xc2 && i + 1 < len &&
			   p[i + 1] >= 0x80 && p[i + 1] < 0xa0) {
			/* C1 controls: valid UTF-8, which collapse_utf8_char()
			 * refuses only because they may drive a terminal;
			 * escaped, so the character survives and no reader
			 * sees it raw. */
			fprintf(out, "\\u%04x", p[i + 1]);
			i += 2;
		} else {
			fputs("\\ufffd", out);
			i++;
		}
	}
	putc('"', out);
}
