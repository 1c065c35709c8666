/* sampler/waits.c - what each blocked thread of a dump waits on, and who
 * is at the other end (DESIGN.md, "waits_on"): from the system call it
 * sleeps in (/proc/TID/syscall, read after the detach: a thread released
 * from its stop goes back into the same call) and its arguments:
 *
 *   futex        the mutex, rwlock or condition variable sampler/locks.c
 *                found (a mutex's owner may be a thread of another
 *                process: a process-shared mutex), else a futex in
 *                shared memory and the processes that map the same page
 *   read, write  on a pipe: the processes that hold its other end; on a
 *   and kin      socket: the process that holds its peer (Unix sockets
 *                by sock_diag, TCP on this host by the connection table)
 *   wait4 ...    the children it waits for (a vfork parent in D too)
 *   epoll_wait   the descriptors the epoll instance watches, each as above;
 *   poll, ppoll  the same for the descriptors of its pollfd array
 *
 * Everything here is read from /proc and the kernel's socket tables,
 * written by the targets and whoever else runs: every scan is bounded
 * (processes, descriptors, lines, time) and what does not parse is left
 * out, never trusted.
 */
#include "config.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "base/base.h"
#include "ptrace/clock.h"
#include "ptrace/procfs.h"
#include "sampler/output.h"
#include "unwind/unwind.h"

/* Bounds of the scans of every process's descriptors. */
#define SCAN_MAX_PROCS   65536
#define SCAN_MAX_FDS     (1u << 20)
#define SCAN_BUDGET_NS   (500 * NS_PER_MS)
#define UNIX_MAX_SOCKETS (1u << 20)
#define EPOLL_MAX_FDS    64
#define NET_MAX_LINES    (1u << 20)

enum fd_kind { FD_PIPE = 1, FD_SOCKET = 2 };

struct fd_entry {
	uint64_t ino;
	pid_t pid;
	int fd;
	unsigned char kind;       /* enum fd_kind */
	unsigned char mode;       /* O_RDONLY, O_WRONLY, O_RDWR (pipes) */
};

/* Every process's pipes and sockets, by inode (scanned once a dump). */
static struct {
	bool built;
	struct fd_entry *v;
	size_t n, cap;
	bool cut;                 /* a bound was reached */
} fds;

/* Unix sockets: inode -> the peer's inode (sock_diag, once a dump). */
static struct {
	bool built;
	struct base_map peer;     /* ino -> index in ino */
	uint64_t *ino;
	size_t n, cap;
} unix_peers;

/* "pipe:[123]" or "socket:[123]": its kind and inode, else 0. */
static enum fd_kind
parse_link(const char *link, uint64_t *ino)
{
	const char *p;
	enum fd_kind k;
	if (strncmp(link, "pipe:[", 6) == 0) {
		p = link + 6;
		k = FD_PIPE;
	} else if (strncmp(link, "socket:[", 8) == 0) {
		p = link + 8;
		k = FD_SOCKET;
	} else {
		return 0;
	}
	char *end;
	errno = 0;
	unsigned long long v = strtoull(p, &end, 10);
	if (errno || end == p || *end != ']' || end[1])
		return 0;
	*ino = v;
	return k;
}

/* The access mode of descriptor fd of pid (fdinfo's "flags:", octal). */
static int
fd_mode(int fdinfo_dir, const char *name)
{
	int f = openat(fdinfo_dir, name, O_RDONLY | O_CLOEXEC);
	if (f < 0)
		return -1;
	char buf[512];
	ssize_t r = read(f, buf, sizeof(buf) - 1);
	close(f);
	if (r <= 0)
		return -1;
	buf[r] = '\0';
	const char *p = strstr(buf, "flags:");
	if (!p)
		return -1;
	unsigned long flags = strtoul(p + 6, NULL, 8);
	return (int)(flags & O_ACCMODE);
}

static int
cmp_fd_entry(const void *a, const void *b)
{
	const struct fd_entry *x = a, *y = b;
	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static void
scan_process_fds(pid_t pid, uint64_t deadline)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	DIR *dir = opendir(path);
	if (!dir)
		return;
	snprintf(path, sizeof(path), "/proc/%d/fdinfo", (int)pid);
	int info = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct dirent *e;
	while ((e = readdir(dir)) != NULL) {
		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		if (fds.n >= SCAN_MAX_FDS || ptrace_clock_monotonic_ns() > deadline) {
			fds.cut = true;
			break;
		}
		char link[64];
		ssize_t len = readlinkat(dirfd(dir), e->d_name, link, sizeof(link) - 1);
		if (len <= 0)
			continue;
		link[len] = '\0';
		uint64_t ino;
		enum fd_kind k = parse_link(link, &ino);
		if (!k || BASE_GROW(fds.v, fds.cap, fds.n + 1, 256) < 0)
			continue;
		int mode = k == FD_PIPE && info >= 0 ? fd_mode(info, e->d_name) : O_RDWR;
		fds.v[fds.n++] = (struct fd_entry){ .ino = ino, .pid = pid,
						    .fd = atoi(e->d_name), .kind = (unsigned char)k,
						    .mode = (unsigned char)(mode < 0 ? O_RDWR : mode) };
	}
	if (info >= 0)
		close(info);
	closedir(dir);
}

static void
build_fd_index(void)
{
	if (fds.built)
		return;
	fds.built = true;
	DIR *proc = opendir("/proc");
	if (!proc)
		return;
	uint64_t deadline = ptrace_clock_monotonic_ns() + SCAN_BUDGET_NS;
	struct dirent *e;
	size_t nprocs = 0;
	while ((e = readdir(proc)) != NULL && !fds.cut) {
		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		if (++nprocs > SCAN_MAX_PROCS) {
			fds.cut = true;
			break;
		}
		scan_process_fds((pid_t)atoi(e->d_name), deadline);
	}
	closedir(proc);
	qsort(fds.v, fds.n, sizeof(*fds.v), cmp_fd_entry);
}

/* The holders of inode ino: [*first, *first + return). */
static size_t
holders(uint64_t ino, size_t *first)
{
	build_fd_index();
	size_t lo = 0, hi = fds.n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (fds.v[mid].ino < ino)
			lo = mid + 1;
		else
			hi = mid;
	}
	size_t n = 0;
	while (lo + n < fds.n && fds.v[lo + n].ino == ino)
		n++;
	*first = lo;
	return n;
}

static void
add_peer(struct dump_wait *w, pid_t pid, pid_t tid)
{
	for (int i = 0; i < w->npeers; i++)
		if (w->peers[i].pid == pid && w->peers[i].tid == tid)
			return;
	if (w->npeers == WAIT_MAX_PEERS) {
		w->more_peers = true;
		return;
	}
	w->peers[w->npeers++] = (struct wait_peer){ pid, tid };
}

/* ---- Unix sockets' peers: sock_diag ------------------------------------ */

static void
unix_add(uint64_t ino, uint64_t peer)
{
	if (unix_peers.n >= UNIX_MAX_SOCKETS ||
	    BASE_GROW(unix_peers.ino, unix_peers.cap, unix_peers.n + 1, 256) < 0)
		return;
	unix_peers.ino[unix_peers.n] = peer;
	if (base_map_put(&unix_peers.peer, ino, (uint32_t)unix_peers.n) == 0)
		unix_peers.n++;
}

/* One netlink reply of the dump; false at its end (or an error). */
static bool
unix_reply(const unsigned char *buf, ssize_t len)
{
	for (const struct nlmsghdr *h = (const void *)buf; NLMSG_OK(h, (size_t)len);
	     h = NLMSG_NEXT(h, len)) {
		if (h->nlmsg_type == NLMSG_DONE || h->nlmsg_type == NLMSG_ERROR)
			return false;
		if (h->nlmsg_len < NLMSG_LENGTH(sizeof(struct unix_diag_msg)))
			continue;
		const struct unix_diag_msg *m = NLMSG_DATA(h);
		size_t rlen = h->nlmsg_len - NLMSG_LENGTH(sizeof(*m));
		const struct nlattr *a = (const void *)(m + 1);
		while (rlen >= sizeof(*a) && a->nla_len >= sizeof(*a) && a->nla_len <= rlen) {
			if ((a->nla_type & NLA_TYPE_MASK) == UNIX_DIAG_PEER &&
			    a->nla_len >= NLA_HDRLEN + sizeof(uint32_t)) {
				uint32_t peer;
				memcpy(&peer, (const char *)a + NLA_HDRLEN, sizeof(peer));
				unix_add(m->udiag_ino, peer);
			}
			size_t step = NLA_ALIGN(a->nla_len);
			if (step > rlen)
				break;
			rlen -= step;
			a = (const void *)((const char *)a + step);
		}
	}
	return true;
}

static void
build_unix_peers(void)
{
	if (unix_peers.built)
		return;
	unix_peers.built = true;
	int s = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (s < 0)
		return;
	struct timeval tv = { .tv_sec = 0, .tv_usec = 200000 };
	setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	struct {
		struct nlmsghdr h;
		struct unix_diag_req r;
	} req = {
		.h = { .nlmsg_len = sizeof(req), .nlmsg_type = SOCK_DIAG_BY_FAMILY,
		       .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP },
		.r = { .sdiag_family = AF_UNIX, .udiag_states = ~0u,
		       .udiag_show = UDIAG_SHOW_PEER },
	};
	if (send(s, &req, sizeof(req), 0) == (ssize_t)sizeof(req)) {
		static unsigned char buf[32768] __attribute__((aligned(8)));
		uint64_t deadline = ptrace_clock_monotonic_ns() + SCAN_BUDGET_NS;
		for (;;) {
			ssize_t r = recv(s, buf, sizeof(buf), 0);
			if (r <= 0 || !unix_reply(buf, r) || ptrace_clock_monotonic_ns() > deadline)
				break;
		}
	}
	close(s);
}

/* ---- TCP on this host: the connection's other end ---------------------- */

/* In /proc/PID/net/tcp (tcp6): the inode of the socket whose local
 * address is ino's remote one and whose remote is ino's local, 0 if none. */
static uint64_t
tcp_peer(pid_t pid, uint64_t ino)
{
	static const char *const files[] = { "tcp", "tcp6" };
	for (int f = 0; f < 2; f++) {
		char path[64], line[512], mine_l[64] = "", mine_r[64] = "";
		snprintf(path, sizeof(path), "/proc/%d/net/%s", (int)pid, files[f]);
		for (int pass = 0; pass < 2; pass++) {
			FILE *fp = fopen(path, "re");
			if (!fp)
				break;
			size_t lines = 0;
			while (fgets(line, sizeof(line), fp) && lines++ < NET_MAX_LINES) {
				char l[64], r[64];
				unsigned long long inode;
				if (sscanf(line, " %*[^:]: %63s %63s %*s %*s %*s %*s %*s %*s %llu",
					   l, r, &inode) != 3)
					continue;
				if (pass == 0 && inode == ino) {
					snprintf(mine_l, sizeof(mine_l), "%s", l);
					snprintf(mine_r, sizeof(mine_r), "%s", r);
					break;
				}
				if (pass == 1 && inode && strcmp(l, mine_r) == 0 &&
				    strcmp(r, mine_l) == 0) {
					fclose(fp);
					return inode;
				}
			}
			fclose(fp);
			if (!mine_l[0])
				break;
		}
	}
	return 0;
}

/* ---- one descriptor ---------------------------------------------------- */

/* The link of descriptor fd of pid ("pipe:[12]"), "" if none. */
static void
fd_link(pid_t pid, long fd, char *buf, size_t len)
{
	char path[64];
	buf[0] = '\0';
	if (fd < 0 || fd > INT32_MAX)
		return;
	snprintf(path, sizeof(path), "/proc/%d/fd/%ld", (int)pid, fd);
	ssize_t r = readlink(path, buf, len - 1);
	buf[r > 0 ? r : 0] = '\0';
}

/* The peers of descriptor fd of process pid (reading: dir 0; writing: 1;
 * either: 2) into w, and w's kind and object when unset. */
static void
fd_peers(pid_t pid, long fd, int dir, struct dump_wait *w)
{
	char link[128];
	uint64_t ino;
	fd_link(pid, fd, link, sizeof(link));
	enum fd_kind k = parse_link(link, &ino);
	if (!w->kind) {
		w->kind = k == FD_PIPE ? "pipe" : k == FD_SOCKET ? "socket" : "io";
		snprintf(w->object, sizeof(w->object), "%s", link[0] ? link : "?");
	}
	size_t first, n;
	if (k == FD_PIPE) {
		/* A reader waits for the writers, a writer for the readers. */
		int want = dir == 0 ? O_WRONLY : O_RDONLY;
		n = holders(ino, &first);
		for (size_t i = first; i < first + n; i++) {
			const struct fd_entry *e = &fds.v[i];
			if ((e->pid == pid && e->fd == fd) ||
			    (dir != 2 && e->mode != want && e->mode != O_RDWR))
				continue;
			add_peer(w, e->pid, 0);
		}
		if (!w->role)
			w->role = dir == 0 ? "written by" : dir == 1 ? "read by" : "held by";
	} else if (k == FD_SOCKET) {
		build_unix_peers();
		uint32_t at;
		uint64_t peer = base_map_get(&unix_peers.peer, ino, &at) ? unix_peers.ino[at] : 0;
		if (!peer)
			peer = tcp_peer(pid, ino);
		n = peer ? holders(peer, &first) : 0;
		for (size_t i = first; i < first + n; i++)
			add_peer(w, fds.v[i].pid, 0);
		if (!w->role)
			w->role = "peer";
	}
}

/* ---- one thread ---------------------------------------------------------- */

enum { DIR_READ, DIR_WRITE, DIR_ANY };

struct call {
	long nr;
	const char *verb;
	int dir;
};

/* The calls that wait on their first argument, a descriptor. */
static const struct call fd_calls[] = {
#ifdef SYS_read
	{ SYS_read, "reads", DIR_READ },
#endif
	{ SYS_readv, "reads", DIR_READ },
	{ SYS_pread64, "reads", DIR_READ },
	{ SYS_recvfrom, "reads", DIR_READ },
	{ SYS_recvmsg, "reads", DIR_READ },
	{ SYS_recvmmsg, "reads", DIR_READ },
	{ SYS_accept4, "accepts on", DIR_ANY },
#ifdef SYS_accept
	{ SYS_accept, "accepts on", DIR_ANY },
#endif
	{ SYS_write, "writes", DIR_WRITE },
	{ SYS_writev, "writes", DIR_WRITE },
	{ SYS_pwrite64, "writes", DIR_WRITE },
	{ SYS_sendto, "writes", DIR_WRITE },
	{ SYS_sendmsg, "writes", DIR_WRITE },
	{ SYS_sendmmsg, "writes", DIR_WRITE },
	{ SYS_connect, "connects", DIR_ANY },
};

/* The children of pid that wait4(which, ...) waits for. */
static void
child_peers(pid_t pid, long which, struct dump_wait *w)
{
	pid_t *kids = NULL;
	int n = ptrace_children(pid, &kids);
	w->kind = "child";
	w->verb = "waits for";
	w->role = "child";
	if (which > 0)
		snprintf(w->object, sizeof(w->object), "child %ld", which);
	else
		snprintf(w->object, sizeof(w->object), "any child");
	for (int i = 0; i < n; i++)
		if (which <= 0 || kids[i] == which)
			add_peer(w, kids[i], 0);
	free(kids);
}

/* One descriptor among several a thread waits on (epoll's, poll's): its
 * peers into w, and " FD (what)" onto w's object at *k. */
static void
add_watched(pid_t pid, long fd, int dir, struct dump_wait *w, int *k)
{
	struct dump_wait one;
	memset(&one, 0, sizeof(one));
	fd_peers(pid, fd, dir, &one);
	if (*k > 0 && (size_t)*k < sizeof(w->object))
		*k += snprintf(w->object + *k, sizeof(w->object) - (size_t)*k, " %ld (%s)", fd,
			       one.object);
	for (int i = 0; i < one.npeers; i++)
		add_peer(w, one.peers[i].pid, one.peers[i].tid);
}

/* poll/ppoll on nfds struct pollfd at addr: one descriptor is that
 * descriptor's wait ("polls"), several an epoll-like one. */
static void
poll_peers(pid_t pid, uint64_t addr, uint64_t nfds, struct dump_wait *w)
{
	struct { int fd; short events, revents; } fds_[EPOLL_MAX_FDS];
	if (!nfds || nfds > EPOLL_MAX_FDS ||
	    ptrace_read_memory(pid, addr, fds_, (size_t)nfds * sizeof(fds_[0])) < 0)
		return;
	size_t live = 0, last = 0;
	for (size_t i = 0; i < nfds; i++)
		if (fds_[i].fd >= 0) {
			live++;
			last = i;
		}
	if (live == 1) {
		w->verb = "polls";
		fd_peers(pid, fds_[last].fd, (fds_[last].events & 4 /* POLLOUT */) ? DIR_WRITE : DIR_READ, w);
		return;
	}
	w->kind = "epoll";
	w->verb = "waits on";
	w->role = "from";
	int k = snprintf(w->object, sizeof(w->object), "poll of %zu fds:", live);
	for (size_t i = 0; i < nfds; i++)
		if (fds_[i].fd >= 0)
			add_watched(pid, fds_[i].fd, (fds_[i].events & 4) ? DIR_WRITE : DIR_READ, w, &k);
}

/* epoll_wait on epfd: the descriptors it watches (fdinfo's "tfd:"). */
static void
epoll_peers(pid_t pid, long epfd, struct dump_wait *w)
{
	char path[64], line[256];
	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%ld", (int)pid, epfd);
	w->kind = "epoll";
	w->verb = "waits on";
	w->role = "from";
	FILE *fp = epfd >= 0 && epfd <= INT32_MAX ? fopen(path, "re") : NULL;
	int k = snprintf(w->object, sizeof(w->object), "epoll fd %ld:", epfd);
	if (!fp)
		return;
	int nfd = 0;
	while (fgets(line, sizeof(line), fp) && nfd < EPOLL_MAX_FDS) {
		long tfd;
		if (sscanf(line, "tfd: %ld", &tfd) != 1)
			continue;
		nfd++;
		add_watched(pid, tfd, DIR_READ, w, &k);
	}
	fclose(fp);
}

/* A maps line: its range, offset, device and inode, whether shared, and
 * the path (into line). */
struct map_line {
	uint64_t start, end, offset, inode;
	unsigned dmaj, dmin;
	bool shared;
	const char *path;
};

static bool
parse_map_line(char *line, struct map_line *m)
{
	char perms[8];
	unsigned long long s, e, off, ino;
	int n = 0;
	if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &s, &e, perms, &off, &m->dmaj, &m->dmin,
		   &ino, &n) < 7)
		return false;
	m->start = s;
	m->end = e;
	m->offset = off;
	m->inode = ino;
	m->shared = perms[3] == 's';
	char *nl = strchr(line + n, '\n');
	if (nl)
		*nl = '\0';
	m->path = line + n;
	return true;
}

/* The processes that map the page of shared memory the futex at addr of
 * pid is in (same device, inode and offset), other than pid: a futex
 * another process wakes. */
static void
futex_peers(pid_t pid, uint64_t addr, struct dump_wait *w)
{
	char path[64], line[512];
	struct map_line m, mine = { 0 };
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	FILE *fp = fopen(path, "re");
	size_t lines = 0;
	bool found = false;
	while (fp && !found && fgets(line, sizeof(line), fp) && lines++ < NET_MAX_LINES)
		if (parse_map_line(line, &m) && addr >= m.start && addr < m.end) {
			mine = m;
			found = true;
		}
	if (fp)
		fclose(fp);
	if (!found || !mine.shared || !mine.inode)
		return;
	uint64_t at = mine.offset + (addr - mine.start);
	w->kind = "futex";
	w->verb = "waits for";
	w->role = "shared with";
	snprintf(w->object, sizeof(w->object), "futex 0x%" PRIx64 " (%.40s+0x%" PRIx64 ")", addr,
		 line[0] ? mine.path : "?", at);
	DIR *proc = opendir("/proc");
	struct dirent *e;
	size_t nprocs = 0;
	uint64_t deadline = ptrace_clock_monotonic_ns() + SCAN_BUDGET_NS;
	while (proc && (e = readdir(proc)) != NULL && nprocs++ < SCAN_MAX_PROCS &&
	       ptrace_clock_monotonic_ns() < deadline) {
		pid_t other = (pid_t)atoi(e->d_name);
		if (other <= 0 || other == pid)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/maps", (int)other);
		if (!(fp = fopen(path, "re")))
			continue;
		lines = 0;
		while (fgets(line, sizeof(line), fp) && lines++ < NET_MAX_LINES) {
			if (parse_map_line(line, &m) && m.shared && m.inode == mine.inode &&
			    m.dmaj == mine.dmaj && m.dmin == mine.dmin && at >= m.offset &&
			    at - m.offset < m.end - m.start) {
				add_peer(w, other, 0);
				break;
			}
		}
		fclose(fp);
	}
	if (proc)
		closedir(proc);
}

/* glibc's pthread_rwlock_t (nptl's struct __pthread_rwlock_arch_t, the
 * same first words on x86-64 and aarch64): __readers (count << 3, and
 * state bits), __writers, __wrphase_futex, __writers_futex, two pads,
 * __cur_writer (the writer's tid), __shared.  A waiter sleeps on
 * __readers, __wrphase_futex or __writers_futex: the object starts 0, 8
 * or 12 bytes before the futex; the start is the one whose fields check
 * out (no writer, or a writer that is a thread of pid). */
#define RWLOCK_READERS_SHIFT 3
struct rwlock_head {
	uint32_t readers, writers, wrphase_futex, writers_futex, pad3, pad4;
	int32_t cur_writer, shared;
};

static void
rwlock_holders(pid_t pid, uint64_t futex, struct dump_wait *w, size_t at)
{
	static const unsigned back[] = { 0, 8, 12 };
	for (size_t i = 0; i < sizeof(back) / sizeof(back[0]); i++) {
		struct rwlock_head h;
		pid_t tgid;
		if (futex < back[i] || ptrace_read_memory(pid, futex - back[i], &h, sizeof(h)) < 0 ||
		    (h.shared != 0 && h.shared != 1))
			continue;
		if (h.cur_writer > 0 && ptrace_thread_tgid(h.cur_writer, &tgid) == 0 &&
		    (tgid == pid || h.shared)) {
			w->role = "written by";
			add_peer(w, tgid, h.cur_writer);
			return;
		}
		unsigned readers = h.readers >> RWLOCK_READERS_SHIFT;
		if (!h.cur_writer && readers > 0 && readers < (1u << 20)) {
			if (at < sizeof(w->object))
				snprintf(w->object + at, sizeof(w->object) - at, ", held by %u reader%s",
					 readers, readers == 1 ? "" : "s");
			return;
		}
	}
}

/* What locks.c found: a mutex (its owner, maybe in another process), an
 * rwlock (its writer, or how many read it), a condition variable. */
static void
lock_wait(pid_t pid, const struct dump_thread *d, struct dump_wait *w)
{
	bool mutex = strcmp(d->wait_kind, "mutex") == 0;
	w->kind = mutex ? "mutex" : strcmp(d->wait_kind, "cond") == 0 ? "condvar" : "rwlock";
	w->verb = "waits for";
	snprintf(w->object, sizeof(w->object), "%s 0x%" PRIx64 "%s%.60s%s", w->kind, d->wait_addr,
		 d->wait_symbol[0] ? " (" : "", d->wait_symbol, d->wait_symbol[0] ? ")" : "");
	pid_t tgid;
	if (mutex && d->wait_owner > 0 && ptrace_thread_tgid(d->wait_owner, &tgid) == 0) {
		w->role = "owned by";
		add_peer(w, tgid, d->wait_owner);
	}
	if (strcmp(w->kind, "rwlock") == 0)
		rwlock_holders(pid, d->wait_addr, w, strlen(w->object));
}

/* The system call the innermost frame of d makes, by its function's
 * name (libc's wrappers), or -1. */
static long
call_of_frame(const struct dump_thread *d, struct unwind_target *t)
{
	static const struct { const char *fn; long nr; } wrappers[] = {
#ifdef SYS_poll
		{ "__poll", SYS_poll }, { "poll", SYS_poll },
#endif
		{ "ppoll", SYS_ppoll }, { "__ppoll", SYS_ppoll },
		{ "epoll_pwait", SYS_epoll_pwait },
#ifdef SYS_epoll_wait
		{ "epoll_wait", SYS_epoll_wait },
#endif
	};
	struct unwind_symbol sym;
	if (!t || d->nframes < 1 ||
	    unwind_symbolize(t, d->frames[0].ip, false, UNWIND_SYM_NO_DEMANGLE, &sym) < 0 ||
	    !sym.function)
		return -1;
	for (size_t i = 0; i < sizeof(wrappers) / sizeof(wrappers[0]); i++)
		if (strcmp(sym.function, wrappers[i].fn) == 0)
			return wrappers[i].nr;
	return -1;
}

/* The call d sleeps in, with its arguments: /proc/TID/syscall, read
 * after the detach.  A thread let go from its stop restarts its call
 * (epoll_wait too, since no handler ran): read again while it is on its
 * way back (a few ms at most), and the stop's own registers (x86-64)
 * must name the same call. */
static bool
blocked_call(pid_t pid, const struct dump_thread *d, struct unwind_target *t,
	     struct task_syscall *sc)
{
	for (int tries = 0; tries < 20; tries++) {
		int r = ptrace_read_syscall(pid, d->tid, sc);
		if (r < 0 && r != -EAGAIN)
			return false;
		/* poll, nanosleep, a futex wait with a timeout resume
		 * through restart_syscall, their arguments still in the
		 * registers: the call is the one the stop saw, or, when the
		 * stop came in restart_syscall itself, the one its
		 * innermost frame makes. */
		if (r == 0 && sc->nr == SYS_restart_syscall)
			sc->nr = d->in_syscall && d->syscall_nr != SYS_restart_syscall
				 ? d->syscall_nr : call_of_frame(d, t);
		if (r == 0 && !sc->running && sc->nr >= 0 && sc->nargs == 6)
			return !d->in_syscall || d->syscall_nr == sc->nr ||
			       d->syscall_nr == SYS_restart_syscall;
		struct timespec ts = { 0, 500000 };
		nanosleep(&ts, NULL);
	}
	return false;
}

static void
thread_wait(pid_t pid, struct dump_thread *d, struct unwind_target *t)
{
	struct dump_wait *w = &d->waits_on;
	memset(w, 0, sizeof(*w));
	if (d->wait_kind) {
		lock_wait(pid, d, w);
		return;
	}
	struct task_syscall sc;
	/* Running, or stopped (a job-control stop, a tracer's): it waits
	 * for no one, whatever call it was in. */
	if (d->state == 'R' || d->state == 'T' || d->state == 't' || !blocked_call(pid, d, t, &sc))
		return;
	for (size_t i = 0; i < sizeof(fd_calls) / sizeof(fd_calls[0]); i++) {
		if (sc.nr != fd_calls[i].nr)
			continue;
		w->verb = fd_calls[i].verb;
		fd_peers(pid, (long)sc.args[0], fd_calls[i].dir, w);
		return;
	}
	if (sc.nr == SYS_wait4)
		child_peers(pid, (long)(int)sc.args[0], w);
	else if (sc.nr == SYS_waitid)
		child_peers(pid, sc.args[0] == 1 /* P_PID */ ? (long)(int)sc.args[1] : -1, w);
#ifdef SYS_vfork
	else if (sc.nr == SYS_vfork)
		child_peers(pid, -1, w);
#endif
	/* A vfork parent waits in D for its child (clone3 with
	 * CLONE_VFORK, or where there is no vfork call). */
	else if (d->state == 'D' && strstr(d->wchan, "vfork"))
		child_peers(pid, -1, w);
#ifdef SYS_epoll_wait
	else if (sc.nr == SYS_epoll_wait)
		epoll_peers(pid, (long)sc.args[0], w);
#endif
	else if (sc.nr == SYS_epoll_pwait)
		epoll_peers(pid, (long)sc.args[0], w);
	else if (sc.nr == SYS_futex)
		futex_peers(pid, sc.args[0], w);
#ifdef SYS_poll
	else if (sc.nr == SYS_poll)
		poll_peers(pid, sc.args[0], sc.args[1], w);
#endif
	else if (sc.nr == SYS_ppoll)
		poll_peers(pid, sc.args[0], sc.args[1], w);
	if (!w->kind && d->state == 'D') {
		w->kind = "io";
		w->verb = "waits in";
		snprintf(w->object, sizeof(w->object), "%s", d->wchan[0] ? d->wchan : "the kernel");
	}
}

void
dump_find_waits(struct dump_process *p, struct unwind_target *t)
{
	for (size_t i = 0; i < p->nthreads; i++) {
		struct dump_thread *d = &p->threads[i];
		if (d->tid && (d->sampled || d->unstopped))
			thread_wait(p->pid, d, t);
	}
}

void
dump_waits_done(void)
{
	free(fds.v);
	memset(&fds, 0, sizeof(fds));
	base_map_free(&unix_peers.peer);
	free(unix_peers.ino);
	memset(&unix_peers, 0, sizeof(unix_peers));
}
