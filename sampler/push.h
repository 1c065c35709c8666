/* sampler/push.h - record --push: profiles sent to a Pyroscope server
 * from a thread of their own while recording.  Defined in sampler/push.c.
 *
 * For cmd-record.c.
 */
#ifndef STACKSPY_SAMPLER_PUSH_H
#define STACKSPY_SAMPLER_PUSH_H

#include <stddef.h>

struct profiler;
struct profiler_config;

/* push.c: record --push. */
struct push_options {
	const char *url;          /* base URL of Pyroscope (or its /ingest) */
	unsigned every;           /* seconds per profile sent */
	unsigned timeout;         /* seconds a send may take, and the end of
				     the recording waits for the server */
	const char *app;          /* the name's application part; NULL: the
				     process's name */
	const char **labels;      /* KEY=VALUE, checked */
	size_t nlabels;
	const char *auth_file;    /* --push-auth-file: "USER:PASSWORD" inside;
				     NULL: $STACKSPY_PUSH_AUTH, if set */
	char *url_copy;           /* url when it was copied out of argv (to
				     wipe the credentials it held there) */
	char *userpwd;            /* what sampler_push_load_auth() found, or NULL */
};

/* push.c: the basic-auth credentials into po->userpwd (malloc'd, or NULL
 * for none): the first line of po->auth_file, else $STACKSPY_PUSH_AUTH;
 * never the command line, where every user reads them (ps).  Called
 * before attaching.  Returns 0 or -errno after saying why. */
int sampler_push_load_auth(struct push_options *po);

/* Samples like profiler_run(p, duration) (0: until a signal or the
 * command's exit), and sends each po->every seconds of samples to po->url
 * from a thread of its own; the last, partial interval too, once the
 * targets are let go (profiler_stop: nothing of them waits on the
 * server).  Prints what was sent and dropped.  Returns 0, 1 when profiles
 * were dropped (exit status 1: partial), or -errno (nothing to sample
 * with). */
int sampler_push_record(struct profiler *p, const struct profiler_config *cfg,
		const struct push_options *po, double duration);

#endif
