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
	size_t k = collapse_utf8_char(s, avail);
	uint32_t cp;

	if (k <= 1)
		return k;
	/* Valid and shortest form: decode it. */
	cp = s[0] & (k == 2 ? 0x1f : k == 3 ? 0x0f : 0x07);
	for (size_t i = 1; i < k; i++)
		cp = cp << 6 | (s[i] & 0x3f);
	return collapse_text_safe_cp(cp) ? k : 0;
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
			/* One byte at a time: a bad sequence's first byte, or
			 * each byte of a control or bidi character. */
			size_t bytes = 1;
			if (p[i] >= 0xc2) {
				size_t v = collapse_utf8_char(p + i, n - i);
				if (!v && p[i] == 0xc2 && i + 1 < n && p[i + 1] >= 0x80 && p[i + 1] < 0xa0)
					v = 2;          /* C1, refused by utf8_char too */
				bytes = v ? v : 1;
			}
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
	char buf[1024];
	size_t n = strlen(s);

	/* In pieces that end at a character boundary: a name can be long. */
	while (n) {
		size_t take = 0, k;
		while (take < n && take < 200) {
			k = collapse_text_char((const unsigned char *)s + take, n - take);
			take += k ? k : 1;
		}
		char piece[256];
		memcpy(piece, s, take);
		piece[take] = '\0';
		collapse_text_escape(buf, sizeof(buf), piece);
		fputs(buf, out);
		s += take;
		n -= take;
	}
}
