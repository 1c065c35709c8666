/* collapse/text.c - names made safe for a terminal.
 *
 * Every string the target controls (its comm and thread names, file and
 * symbol names, a tracer's name, a server's reply) can hold escape
 * sequences that set a terminal's title, clear its screen or redefine its
 * keys, C1 controls (0x9b is CSI on terminals that read 8-bit controls)
 * and bidirectional overrides that show text in another order than it is
 * (CVE-2021-42574, "Trojan Source").  Text for people (messages, hints,
 * the start line, dump's text output, top) goes through these; JSON,
 * folded and SVG output keep their own escaping (json.c, frame-names.c,
 * svg.c). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collapse/collapse.h"

bool
collapse_text_safe_cp(uint32_t cp)
{
	if (cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp < 0xa0))
		return false;
	/* Bidirectional marks, embeddings, overrides and isolates. */
	return !(cp == 0x061c || cp == 0x200e || cp == 0x200f ||
		 (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069));
}

size_t
collapse_text_char(const unsigned char *s, size_t avail)
{
	uint32_t cp;
	size_t k = collapse_utf8_decode(s, avail, &cp);

	return k && collapse_text_safe_cp(cp) ? k : 0;
}

size_t
collapse_text_escape(char *buf, size_t len, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), o = 0;

	if (!len)
		return 0;
	for (size_t i = 0; i < n;) {
		size_t k = collapse_text_char(p + i, n - i);

		if (k) {
			if (o + k >= len)
				break;
			memcpy(buf + o, p + i, k);
			o += k;
			i += k;
		} else {
			/* Every byte of a control or bidi character, or a bad
			 * sequence's first byte. */
			uint32_t cp;
			size_t bytes = collapse_utf8_decode(p + i, n - i, &cp);
			if (!bytes)
				bytes = 1;
			if (o + 4 * bytes >= len)
				break;
			for (size_t b = 0; b < bytes; b++) {
				buf[o++] = '\\';
				buf[o++] = 'x';
				buf[o++] = hex[p[i + b] >> 4];
				buf[o++] = hex[p[i + b] & 15];
			}
			i += bytes;
		}
	}
	buf[o] = '\0';
	return o;
}

void
collapse_text_write(FILE *out, const char *s)
{
	char small[1024], *buf = small;
	size_t len = 4 * strlen(s) + 1;

	/* Names are short; a C++ template may not be. */
	if (len > sizeof(small) && !(buf = malloc(len))) {
		fputs("?", out);
		return;
	}
	collapse_text_escape(buf, buf == small ? sizeof(small) : len, s);
	fputs(buf, out);
	if (buf != small)
		free(buf);
}
