/* collapse/text.c - the one escaping rule of every output.
 *
 * Every string the target controls (its comm and thread names, file and
 * symbol names: symbol tables come from its ELF files; a tracer's name, a
 * server's reply) can hold escape sequences that set a terminal's title,
 * clear its screen or redefine its keys, C1 controls (0x9b is CSI on
 * terminals that read 8-bit controls), bidirectional overrides that show
 * text in another order than it is (CVE-2021-42574, "Trojan Source"), and
 * bytes that are not UTF-8 at all.  Every writer (dump's text, messages,
 * folded, SVG, pprof strings, top; JSON in its own notation, json.c) keeps
 * the characters collapse_text_char() accepts and escapes the others with
 * collapse_text_escape_char(): "\xNN" for each byte, and "\\" for the
 * backslash, so that an escape in the output always reads one way
 * ("b\\\xcac" is b, a backslash, the byte 0xca, c). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collapse/collapse.h"

size_t collapse_utf8_decode(const unsigned char *s, size_t avail, uint32_t *cp)
{
	size_t len;

	if (!avail)
		return 0;
	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		len = 2;
		*cp = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		len = 3;
		*cp = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		len = 4;
		*cp = s[0] & 0x07;
	} else {
		return 0;	/* a continuation byte, or 0xc0/0xc1/0xf5.. */
	}
	if (avail < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		*cp = *cp << 6 | (s[i] & 0x3f);
	}
	if ((len == 3 && *cp < 0x800) || (len == 4 && *cp < 0x10000) ||
	    *cp > 0x10ffff || (*cp >= 0xd800 && *cp <= 0xdfff))
		return 0;
	return len;
}

bool
collapse_text_safe_cp(uint32_t cp)
{
	if (cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp < 0xa0))
		return false;
	/* Not characters for XML 1.0 (SVG), and no reader wants them. */
	if (cp == 0xfffe || cp == 0xffff)
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

	return k && cp != '\\' && collapse_text_safe_cp(cp) ? k : 0;
}

size_t
collapse_text_escape_char(const unsigned char *s, size_t avail, size_t *used,
			  char esc[COLLAPSE_ESC_MAX])
{
	static const char hex[] = "0123456789abcdef";
	uint32_t cp;
	size_t k, o = 0;

	if (!avail) {
		*used = 0;
		return 0;
	}
	if (s[0] == '\\') {
		*used = 1;
		esc[0] = '\\';
		esc[1] = '\\';
		return 2;
	}
	k = collapse_utf8_decode(s, avail, &cp);
	if (k && collapse_text_safe_cp(cp)) {
		*used = k;
		return 0;
	}
	/* Every byte of a control or bidi character, or a bad sequence's
	 * first byte (the next starts over at the byte after it). */
	if (!k)
		k = 1;
	for (size_t b = 0; b < k; b++) {
		esc[o++] = '\\';
		esc[o++] = 'x';
		esc[o++] = hex[s[b] >> 4];
		esc[o++] = hex[s[b] & 15];
	}
	*used = k;
	return o;
}

size_t
collapse_text_escaped_len(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), o = 0;
	char esc[COLLAPSE_ESC_MAX];

	for (size_t i = 0, used; i < n; i += used) {
		size_t e = collapse_text_escape_char(p + i, n - i, &used, esc);

		o += e ? e : used;
	}
	return o;
}

size_t
collapse_text_escape(char *buf, size_t len, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), o = 0;
	char esc[COLLAPSE_ESC_MAX];

	if (!len)
		return 0;
	for (size_t i = 0, used; i < n; i += used) {
		size_t e = collapse_text_escape_char(p + i, n - i, &used, esc);
		const char *from = e ? esc : (const char *)p + i;
		size_t k = e ? e : used;

		if (o + k >= len)
			break;
		memcpy(buf + o, from, k);
		o += k;
	}
	buf[o] = '\0';
	return o;
}

char *
collapse_text_dup(const char *s)
{
	size_t len = collapse_text_escaped_len(s) + 1;
	char *buf = malloc(len);

	if (buf)
		collapse_text_escape(buf, len, s);
	return buf;
}

void
collapse_text_write(FILE *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), run = 0;
	char esc[COLLAPSE_ESC_MAX];

	/* Runs of characters kept as they are in one call. */
	for (size_t i = 0, used; i < n; i += used) {
		/* Printable ASCII needs no decoding (a dump's text is mostly
		 * that: the call per byte was most of its output's time). */
		if (p[i] >= 0x20 && p[i] < 0x7f && p[i] != '\\') {
			used = 1;
			continue;
		}
		size_t e = collapse_text_escape_char(p + i, n - i, &used, esc);

		if (!e)
			continue;
		fwrite(p + run, 1, i - run, out);
		fwrite(esc, 1, e, out);
		run = i + used;
	}
	fwrite(p + run, 1, n - run, out);
}
