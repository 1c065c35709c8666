/* sampler/push.c - record --push: every --push-every seconds, the
 * interval's samples as a pprof profile POSTed to a Pyroscope-compatible
 * /ingest (Grafana Pyroscope, Alloy's pyroscope.receive_http).
 *
 * The sampling thread encodes each interval (the difference of the
 * aggregated counts since the last one: struct collapse belongs to that
 * thread) and queues it; a thread of its own sends, so a slow or dead
 * server never delays a tick.  A profile that fails PUSH_ATTEMPTS times,
 * or that finds the queue full, is dropped and counted. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef HAVE_LIBCURL
#include <curl/curl.h>
#include <dlfcn.h>
#endif

#include "collapse/collapse.h"
#include "ptrace/clock.h"
#include "sampler/error.h"
#include "sampler/profiler-internal.h"
#include "sampler/profiler.h"
#include "sampler/push.h"

#define AUTH_MAX      1024      /* bytes of "user:password" */

/* "user:password" for basic auth: the first line of po->auth_file, else
 * $STACKSPY_PUSH_AUTH, else none (the URL's own, if it has any).  Never
 * from the command line, where every user reads it (ps). */
int
sampler_push_load_auth(struct push_options *po)
{
	char **out = &po->userpwd;

	*out = NULL;
	if (po->auth_file) {
		FILE *f = fopen(po->auth_file, "re");
		if (!f) {
			int e = -errno;
			perror_msg(e, "--push-auth-file: cannot read '%s'", po->auth_file);
			return e;
		}
		char line[AUTH_MAX + 2];
		bool got = fgets(line, sizeof(line), f) != NULL;
		fclose(f);
		line[got ? strcspn(line, "\r\n") : 0] = '\0';
		if (!got || !strchr(line, ':')) {
			error_msg("--push-auth-file: '%s' does not start with a line USER:PASSWORD",
				  po->auth_file);
			return -EINVAL;
		}
		return (*out = strdup(line)) ? 0 : -ENOMEM;
	}
	const char *env = getenv("STACKSPY_PUSH_AUTH");
	if (env && *env) {
		if (!strchr(env, ':')) {
			error_msg("STACKSPY_PUSH_AUTH is not USER:PASSWORD");
			return -EINVAL;
		}
		return (*out = strdup(env)) ? 0 : -ENOMEM;
	}
	return 0;
}

#ifndef HAVE_LIBCURL

int
sampler_push_record(struct profiler *p, const struct profiler_config *cfg,
	    const struct push_options *po, double duration)
{
	error_msg("--push needs libcurl: stackspy was built without it");
	return -ENOTSUP;
}

#else

#define PUSH_QUEUE     8        /* intervals waiting; more: the oldest is dropped */
#define PUSH_ATTEMPTS  3        /* per interval */
#define PUSH_CONNECT_S 5        /* a connection's part of --push-timeout */
#define REPLY_TEXT    200       /* bytes of a failed reply's body kept to show */
#define REPLY_MAX     (1 << 20) /* bytes of a reply read at most, then the
				   transfer is cut: the body is the server's
				   to choose, never ours to keep or print */

struct push_item {
	void *buf;
	size_t len;
	int64_t from, until;    /* Unix seconds */
};

struct push {
	const struct push_options *po;
	char *url_base;         /* URL + "/ingest?" */
	char *name;             /* APP{k=v,...}, URL-escaped */
	double rate;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct push_item q[PUSH_QUEUE];
	size_t head, n;
	bool busy;              /* the thread is sending one */
	bool closing;
	bool give_up;           /* at exit, after --push-timeout */
	/* counted under lock */
	uint64_t sent, dropped, retries;
	/* the last failure, for the summary (the sender's; read after join) */
	long fail_code;
	char fail_text[REPLY_TEXT + 1];
	char fail_curl[CURL_ERROR_SIZE];
	/* The intervals' encoder (the unwinder's: push_interval) */
	const struct profiler_config *cfg;
	uint64_t *base;         /* the counts at the last interval's end */
	size_t nbase;
	int encode_error;
	uint64_t encoded;       /* intervals given to the sender */
};

/* A reply's body: read and thrown away, but for its first REPLY_TEXT
 * bytes (shown, escaped, when the push failed); a body longer than
 * REPLY_MAX ends the transfer. */
struct reply {
	char text[REPLY_TEXT + 1];
	size_t len, total;
};

static size_t
reply_write(char *data, size_t size, size_t n, void *arg)
{
	struct reply *r = arg;
	size_t bytes = size * n;

	if (r->len < REPLY_TEXT) {
		size_t k = bytes < REPLY_TEXT - r->len ? bytes : REPLY_TEXT - r->len;
		memcpy(r->text + r->len, data, k);
		r->len += k;
		r->text[r->len] = '\0';
	}
	r->total += bytes;
	return r->total > REPLY_MAX ? 0 : bytes;
}

static void
item_free(struct push_item *it)
{
	free(it->buf);
	it->buf = NULL;
}

static void
sleep_ms(long ms)
{
	struct timespec ts = ns_to_timespec((uint64_t)ms * NS_PER_MS);
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* libcurl is loaded by --push, not at every start of stackspy: linked, it
 * and its TLS libraries cost each start some 5 ms (bench/startup.sh). */
static struct {
	__typeof__(&curl_global_init) global_init;
	__typeof__(&curl_global_cleanup) global_cleanup;
	__typeof__(&curl_easy_init) easy_init;
	__typeof__(&curl_easy_cleanup) easy_cleanup;
	__typeof__(&curl_easy_reset) easy_reset;
	__typeof__(&curl_easy_setopt) easy_setopt;
	__typeof__(&curl_easy_perform) easy_perform;
	__typeof__(&curl_easy_getinfo) easy_getinfo;
	__typeof__(&curl_easy_escape) easy_escape;
	__typeof__(&curl_free) free;
	__typeof__(&curl_slist_append) slist_append;
	__typeof__(&curl_slist_free_all) slist_free_all;
	__typeof__(&curl_easy_strerror) easy_strerror;
} lc;

/* POSIX's way to take a function from dlsym (see dlsym(3)). */
#define LC_SYM(h, f) (*(void **)&lc.f = dlsym(h, "curl_" #f))

static const char *
curl_load(void)
{
	void *h = dlopen(LIBCURL_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return dlerror();
	if (LC_SYM(h, global_init) && LC_SYM(h, global_cleanup) && LC_SYM(h, easy_init) &&
	    LC_SYM(h, easy_cleanup) && LC_SYM(h, easy_reset) && LC_SYM(h, easy_setopt) &&
	    LC_SYM(h, easy_perform) && LC_SYM(h, easy_getinfo) && LC_SYM(h, easy_escape) &&
	    LC_SYM(h, free) && LC_SYM(h, slist_append) && LC_SYM(h, slist_free_all) &&
	    LC_SYM(h, easy_strerror))
		return NULL;
	const char *e = dlerror();
	dlclose(h);
	return e;
}

/* libcurl's progress callback: a transfer still running when the
 * recording gives up on the server (--push-timeout) is aborted, so the
 * sender's thread ends at once. */
static int
give_up_progress(void *arg, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
		 curl_off_t ulnow)
{
	struct push *ps = arg;
	(void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
	return __atomic_load_n(&ps->give_up, __ATOMIC_RELAXED) ? 1 : 0;
}

/* One POST; true when the server took it (2xx). */
static bool
post_once(struct push *ps, CURL *curl, const struct push_item *it)
{
	char *url;
	if (asprintf(&url, "%sname=%s&from=%lld&until=%lld&sampleRate=%.0f"
		     "&spyName=stackspy&format=pprof", ps->url_base, ps->name,
		     (long long)it->from, (long long)it->until, ps->rate) < 0)
		return false;
	struct curl_slist *hdr = lc.slist_append(NULL, "Content-Type: application/octet-stream");
	struct reply reply = { .len = 0 };
	lc.easy_reset(curl);
	lc.easy_setopt(curl, CURLOPT_WRITEFUNCTION, reply_write);
	lc.easy_setopt(curl, CURLOPT_WRITEDATA, &reply);
	if (ps->po->userpwd) {
		lc.easy_setopt(curl, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
		lc.easy_setopt(curl, CURLOPT_USERPWD, ps->po->userpwd);
	}
	lc.easy_setopt(curl, CURLOPT_URL, url);
	lc.easy_setopt(curl, CURLOPT_POST, 1L);
	lc.easy_setopt(curl, CURLOPT_POSTFIELDS, it->buf);
	lc.easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)it->len);
	lc.easy_setopt(curl, CURLOPT_HTTPHEADER, hdr);
	lc.easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	long timeout = (long)ps->po->timeout;
	lc.easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, timeout < PUSH_CONNECT_S ? timeout : PUSH_CONNECT_S);
	lc.easy_setopt(curl, CURLOPT_TIMEOUT, timeout);
	lc.easy_setopt(curl, CURLOPT_USERAGENT, "stackspy/" PACKAGE_VERSION);
	lc.easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
	lc.easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, give_up_progress);
	lc.easy_setopt(curl, CURLOPT_XFERINFODATA, ps);
	CURLcode cr = lc.easy_perform(curl);
	long code = 0;
	lc.easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &code);
	lc.slist_free_all(hdr);
	free(url);
	/* A server that took the profile and then sent too much is still
	 * a server that took it. */
	bool ok = (cr == CURLE_OK || cr == CURLE_WRITE_ERROR) && code >= 200 && code < 300;
	if (!ok) {
		ps->fail_code = code;
		memcpy(ps->fail_text, reply.text, sizeof(ps->fail_text));
		/* A write error is ours: the reply cut at REPLY_MAX. */
		snprintf(ps->fail_curl, sizeof(ps->fail_curl), "%s",
			 cr == CURLE_OK || cr == CURLE_WRITE_ERROR ? "" :
			 cr == CURLE_ABORTED_BY_CALLBACK ? "no answer when the recording ended "
							   "(given up after the final wait)" :
			 lc.easy_strerror(cr));
	}
	return ok;
}

static void *
push_thread(void *arg)
{
	struct push *ps = arg;
	CURL *curl = lc.easy_init();

	pthread_mutex_lock(&ps->lock);
	for (;;) {
		while (!ps->n && !ps->closing)
			pthread_cond_wait(&ps->cond, &ps->lock);
		if (!ps->n || ps->give_up)
			break;
		struct push_item it = ps->q[ps->head];
		ps->q[ps->head].buf = NULL;
		ps->head = (ps->head + 1) % PUSH_QUEUE;
		ps->n--;
		ps->busy = true;
		pthread_mutex_unlock(&ps->lock);

		bool ok = false;
		unsigned retries = 0;
		for (int a = 0; curl && a < PUSH_ATTEMPTS && !ok &&
				!__atomic_load_n(&ps->give_up, __ATOMIC_RELAXED); a++) {
			if (a) {
				retries++;
				sleep_ms(250L << a);    /* 0.5 s, 1 s */
			}
			ok = post_once(ps, curl, &it);
		}
		item_free(&it);

		pthread_mutex_lock(&ps->lock);
		ps->busy = false;
		ps->retries += retries;
		if (ok)
			ps->sent++;
		else
			ps->dropped++;
		pthread_cond_broadcast(&ps->cond);
	}
	/* Left after giving up: dropped too. */
	while (ps->n) {
		item_free(&ps->q[ps->head]);
		ps->head = (ps->head + 1) % PUSH_QUEUE;
		ps->n--;
		ps->dropped++;
	}
	pthread_mutex_unlock(&ps->lock);
	if (curl)
		lc.easy_cleanup(curl);
	return NULL;
}

static void
push_enqueue(struct push *ps, void *buf, size_t len, int64_t from, int64_t until)
{
	pthread_mutex_lock(&ps->lock);
	if (ps->n == PUSH_QUEUE) {
		/* The server is behind: the oldest goes, never the sampler's time. */
		item_free(&ps->q[ps->head]);
		ps->head = (ps->head + 1) % PUSH_QUEUE;
		ps->n--;
		ps->dropped++;
	}
	struct push_item *it = &ps->q[(ps->head + ps->n) % PUSH_QUEUE];
	it->buf = buf;
	it->len = len;
	it->from = from;
	it->until = until;
	ps->n++;
	pthread_cond_broadcast(&ps->cond);
	pthread_mutex_unlock(&ps->lock);
}

/* name=APP{k=v,...}, escaped for the query string.  app NULL: the
 * process's name, with what a name cannot hold as '_'. */
static char *
push_name(CURL *curl, const struct push_options *po, const char *comm)
{
	char app[64];
	if (po->app) {
		snprintf(app, sizeof(app), "%s", po->app);
	} else {
		snprintf(app, sizeof(app), "%s", *comm ? comm : "stackspy");
		for (char *c = app; *c; c++)
			if (!(((*c | 0x20) >= 'a' && (*c | 0x20) <= 'z') ||
			      (*c >= '0' && *c <= '9') || *c == '.' || *c == '-'))
				*c = '_';
	}
	size_t len = strlen(app) + 3;
	for (size_t i = 0; i < po->nlabels; i++)
		len += strlen(po->labels[i]) + 1;
	char *s = malloc(len);
	if (!s)
		return NULL;
	strcpy(s, app);
	strcat(s, "{");
	for (size_t i = 0; i < po->nlabels; i++) {
		if (i)
			strcat(s, ",");
		strcat(s, po->labels[i]);
	}
	strcat(s, "}");
	char *e = lc.easy_escape(curl, s, 0);
	free(s);
	if (!e)
		return NULL;
	char *r = strdup(e);
	lc.free(e);
	return r;
}

/* The counts of every stack so far, in collapse_next() order: what the
 * next interval subtracts. */
static int
snapshot_counts(struct profiler *p, uint64_t **base, size_t *nbase)
{
	size_t n = collapse_distinct_stacks(p->stacks), cursor = 0, i = 0;
	uint64_t *v = realloc(*base, (n ? n : 1) * sizeof(*v));
	struct collapse_stack st;
	if (!v)
		return -ENOMEM;
	while (i < n && collapse_next(p->stacks, &cursor, &st))
		v[i++] = st.count;
	*base = v;
	*nbase = i;
	return 0;
}

/* One interval [from, until) (Unix seconds) of --push. */
struct push_interval {
	struct push *ps;
	int64_t from, until;
};

/* The unwinder's (profiler_call_in_unwinder): every sample of the
 * interval is in the stacks; its profile goes to the sender. */
static void
push_interval(struct profiler *p, void *arg)
{
	struct push_interval *iv = arg;
	struct push *ps = iv->ps;
	if (!ps->encode_error) {
		void *buf;
		size_t len;
		profiler_stacks_lock(p);
		int r = profiler_encode_pprof(p, ps->cfg, ps->base, ps->nbase,
					      iv->from * (int64_t)NS_PER_SEC,
					      (iv->until - iv->from) * (int64_t)NS_PER_SEC, &buf, &len);
		if (r == 0 && (r = snapshot_counts(p, &ps->base, &ps->nbase)) < 0)
			free(buf);
		profiler_stacks_unlock(p);
		if (r < 0) {
			perror_msg(r, "--push: cannot encode the profile");
			ps->encode_error = r;
		} else {
			push_enqueue(ps, buf, len, iv->from, iv->until);
			ps->encoded++;
		}
	}
	free(iv);
}

/* libcurl loaded and initialized, and what every request of ps says:
 * the profile's name (app and labels, escaped) and the ingest URL.
 * Returns 0, or a negative code with the message said. */
static int
push_prepare(struct push *ps, struct profiler *p, const struct push_options *po)
{
	CURL *tmp;
	const char *why = curl_load();
	if (why) {
		error_msg("--push: cannot load %s (%s): install libcurl4", LIBCURL_SONAME, why);
		return -ENOENT;
	}
	if (lc.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK || !(tmp = lc.easy_init())) {
		error_msg("--push: cannot initialize libcurl");
		return -ENOMEM;
	}
	ps->name = push_name(tmp, po, profiler_comm(p));
	lc.easy_cleanup(tmp);
	size_t ul = strlen(po->url);
	bool has_ingest = ul >= 7 && strcmp(po->url + ul - 7, "/ingest") == 0;
	if (!ps->name || asprintf(&ps->url_base, "%.*s%s?", (int)(ul - (po->url[ul - 1] == '/')),
				  po->url, has_ingest ? "" : "/ingest") < 0) {
		free(ps->name);
		return -ENOMEM;
	}
	return 0;
}

/* The recording, one --push-every interval at a time, each handed to
 * the unwinder to encode (*asked: how many).  Intervals follow the
 * profiler's own clock (profiler_run's deadlines count from its start)
 * and are contiguous in Unix seconds: each one's until is the next
 * one's from.  Returns 0 at the end (duration, a signal, the command's
 * exit), or -ENOMEM. */
static int
push_intervals(struct profiler *p, struct push *ps, const struct push_options *po,
	       double duration, uint64_t *asked)
{
	int64_t mono0 = (int64_t)p->tr.ticks.start_ns;
	int64_t wall0 = (int64_t)ptrace_clock_realtime_ns() -
			((int64_t)ptrace_clock_monotonic_ns() - mono0);
	int64_t from = wall0 / (int64_t)NS_PER_SEC;
	for (unsigned k = 1;; k++) {
		double until_s = (double)k * po->every;
		bool last = duration > 0 && until_s >= duration;
		if (last)
			until_s = duration;
		profiler_run(p, until_s);
		int64_t now = (int64_t)ptrace_clock_monotonic_ns();
		/* Stopped early: a signal, or the command's exit. */
		if (now < mono0 + (int64_t)(until_s * (double)NS_PER_SEC) - (int64_t)NS_PER_MS)
			last = true;
		int64_t until = last ? (wall0 + (now - mono0) + (int64_t)NS_PER_SEC - 1) / (int64_t)NS_PER_SEC
				     : from + po->every;
		if (until <= from)
			until = from + 1;
		/* Encoded where the stacks are made, once every sample of
		 * the interval is in them; the tracer goes on. */
		struct push_interval *iv = malloc(sizeof(*iv));
		if (iv)
			*iv = (struct push_interval){ ps, from, until };
		if (!iv || profiler_call_in_unwinder(p, push_interval, iv) < 0) {
			free(iv);
			perror_msg(-ENOMEM, "--push: cannot encode the profile");
			return -ENOMEM;
		}
		(*asked)++;
		from = until;
		if (last)
			return 0;
	}
}

/* The summary on stderr: what was sent and dropped, and the server's
 * last failure. */
static void
push_summary(const struct push *ps)
{
	error_msg("push: %llu profiles sent, %llu dropped, %llu retries",
		  (unsigned long long)ps->sent, (unsigned long long)ps->dropped,
		  (unsigned long long)ps->retries);
	/* The server's words, bounded and made safe by error_msg. */
	if (ps->dropped && (ps->fail_code || ps->fail_curl[0])) {
		char code[32] = "";
		if (ps->fail_code)
			snprintf(code, sizeof(code), "%sHTTP %ld", ps->fail_curl[0] ? ", " : "",
				 ps->fail_code);
		error_msg("push: the last failure: %s%s%s%s", ps->fail_curl, code,
			  ps->fail_text[0] ? ": " : "", ps->fail_text);
	}
}

int
sampler_push_record(struct profiler *p, const struct profiler_config *cfg,
	    const struct push_options *po, double duration)
{
	struct push ps = { .po = po, .rate = cfg->rate_hz, .cfg = cfg };
	uint64_t asked = 0;
	int r = push_prepare(&ps, p, po);
	if (r < 0)
		return r;
	pthread_mutex_init(&ps.lock, NULL);
	pthread_cond_init(&ps.cond, NULL);

	/* The sender takes no signals: SIGINT is the sampling loop's. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	pthread_t th;
	int tr = pthread_create(&th, NULL, push_thread, &ps);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (tr) {
		error_msg("--push: cannot start its thread");
		free(ps.name);
		free(ps.url_base);
		return -tr;
	}

	r = push_intervals(p, &ps, po, duration, &asked);

	/* The targets go first: nothing of them waits on the server (a
	 * server that never answers held them traced until the watchdog
	 * killed stackspy, its output lost).  The intervals still queued are
	 * encoded as profiler_stop lets the unwinder finish. */
	profiler_stop(p);
	free(ps.base);
	if (ps.encode_error && r == 0)
		r = ps.encode_error;

	/* What is queued goes out, within a bound. */
	pthread_mutex_lock(&ps.lock);
	ps.closing = true;
	pthread_cond_broadcast(&ps.cond);
	struct timespec dl = ptrace_clock_realtime_deadline((uint64_t)po->timeout * NS_PER_SEC);
	while ((ps.n || ps.busy) && pthread_cond_timedwait(&ps.cond, &ps.lock, &dl) == 0)
		;
	__atomic_store_n(&ps.give_up, true, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&ps.lock);
	pthread_join(th, NULL);
	/* Intervals the unwinder did not get to (it was stuck at the end). */
	if (!ps.encode_error && asked > ps.encoded)
		ps.dropped += asked - ps.encoded;
	push_summary(&ps);
	pthread_mutex_destroy(&ps.lock);
	pthread_cond_destroy(&ps.cond);
	free(ps.name);
	free(ps.url_base);
	lc.global_cleanup();
	/* Profiles the server never got: partial (the local output, if any,
	 * is whole). */
	if (r == 0 && ps.dropped)
		r = 1;
	return r;
}

#endif /* HAVE_LIBCURL */
