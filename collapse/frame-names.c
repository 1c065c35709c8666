/*
 * The rules of a folded line, in one place (DESIGN.md, "Folded output"):
 * how a frame is named when it is added (function, [module], [unknown],
 * name_[i], the root frames comm-PID/TID and comm-PID), and what the
 * folded writer changes on the way out (collapse_sanitize_frame()).
 */
#include "config.h"

#include "collapse/collapse.h"

#include <stdio.h>
#include <string.h>

#define INLINE_SUFFIX "_[i]"
#define KERNEL_SUFFIX "_[k]"

const char *collapse_module_basename(const char *module)
{
	const char *base = strrchr(module, '/');

	return base ? base + 1 : module;
}

const char *collapse_name_frame(char *buf, size_t len, const char *function,
				const char *module)
{
	if (function)
		return function;
	if (!module)
		return "[unknown]";
	snprintf(buf, len, "[%s]", collapse_module_basename(module));
	return buf;
}

const char *collapse_name_inline(char *buf, size_t len, const char *function)
{
	snprintf(buf, len, "%s" INLINE_SUFFIX, function);
	return buf;
}

const char *collapse_name_python(char *buf, size_t len, const char *function,
				 const char *file, unsigned line)
{
	const char *short_file = file, *slash = NULL;
	for (const char *s = file; *s; s++) {
		if (*s == '/') {
			short_file = slash ? slash + 1 : short_file;
			slash = s;
		}
	}
	if (line)
		snprintf(buf, len, "%s (%s:%u)", function, short_file, line);
	else
		snprintf(buf, len, "%s (%s)", function, short_file);
	return buf;
}

/* A kernel frame (a thread in D, record --idle; dump --kernel): perf's
 * marking, name_[k]. */
const char *collapse_name_kernel(char *buf, size_t len, const char *function)
{
	snprintf(buf, len, "%s" KERNEL_SUFFIX, function);
	return buf;
}

const char *collapse_name_root(char *buf, size_t len, const char *comm,
			       pid_t pid, pid_t tid)
{
	if (tid)
		snprintf(buf, len, "%s-%d/%d", comm, (int)pid, (int)tid);
	else
		snprintf(buf, len, "%s-%d", comm, (int)pid);
	/* perf's stackcollapse: spaces in thread names become underscores;
	 * so do control characters, which the folded writer would turn into
	 * spaces. */
	for (char *c = buf; *c; c++)
		if (*c == ' ' || (unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '_';
	return buf;
}

size_t collapse_sanitize_frame(char *name)
{
	size_t changed = 0;

	for (char *s = name; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == ';') {
			*s = ':';
			changed++;
		} else if (ch < 0x20 || ch == 0x7f) {
			*s = ' ';
			changed++;
		}
	}
	return changed;
}
