/* sampler/out-file.h - an output file (-o FILE) that is complete or
 * absent, written without following another user's symlink.  Defined in
 * sampler/out-file.c.
 *
 * For the commands that write files (record -o, dump -o).
 */
#ifndef STACKSPY_SAMPLER_OUT_FILE_H
#define STACKSPY_SAMPLER_OUT_FILE_H

#include <stdbool.h>
#include <stdio.h>

/* -o FILE: written to a temporary file in FILE's directory (unnamed with
 * O_TMPFILE where possible, else ".FILE.XXXXXX"), renamed over FILE by
 * sampler_out_file_commit: a stackspy killed before that leaves FILE as it was.  A
 * FILE that exists and is a FIFO, a terminal or /dev/null is written in
 * place.  The path is walked by stackspy itself: another user's symlink or
 * file in a shared sticky directory, block devices and other character
 * devices are refused; a file replaced keeps its owner and mode
 * (sampler/out-file.c).  Without a path: stdout. */
struct out_file {
	FILE *f;                  /* write here */
	char *path;               /* as given; NULL: stdout */
	int dfd;                  /* O_PATH fd of the directory FILE is in */
	char *base;               /* FILE's name in it (symlinks resolved) */
	char *tmp;                /* the temporary's name in dfd, while it has one */
	bool in_place;            /* not a regular file: no temporary */
};

/* Create the temporary (or open the special file, or take stdout).  Done
 * before attaching: a path that cannot be written costs the target
 * nothing.  Returns 0 or -errno (of is then empty); -EPERM for a path
 * refused by the rules above, with the reason in why (whylen bytes; why
 * may be NULL). */
int sampler_out_file_open(struct out_file *of, const char *path, char *why, size_t whylen);
/* sampler_out_file_open for a command, before it attaches: a closed stdout
 * (path NULL and stdout_needed) or a path that cannot be opened is said
 * on stderr.  Returns 0 or -1. */
int sampler_out_file_open_or_say(struct out_file *of, const char *path, bool stdout_needed);
/* Flush, close and rename over the final name.  Returns 0 or -errno (a
 * write error: the temporary is removed, FILE left as it was).  of is
 * empty afterwards in both cases. */
int sampler_out_file_commit(struct out_file *of);
/* Say that writing to path (NULL: standard output) failed with errno
 * err, in the words a user can act on (a closed standard output, a pipe
 * whose reader has gone). */
void sampler_out_file_write_error(int err, const char *path);
/* Give up: remove the temporary, FILE left as it was.  Idempotent. */
void sampler_out_file_discard(struct out_file *of);

#endif
