/* sampler/locks.c - who waits for whom (dump): the mutex, read-write lock
 * or condition variable a blocked thread waits on, the mutex's owner, and
 * the wait-for cycles among them (deadlocks).
 *
 * glibc.  A thread blocked in pthread_mutex_lock sits in futex(2) with
 * the address of the mutex's __data.__lock as first argument: the mutex's
 * own address, since __lock is its first field.  The owner is
 * __data.__owner, the int at offset 8 (nptl's struct __pthread_mutex_s
 * begins int __lock, unsigned __count, int __owner on every architecture),
 * read from the target's memory with process_vm_readv: no thread needs to
 * be stopped.  The call comes from the stopped thread's registers on
 * x86-64 (dump-live.c); on aarch64 and MIPS, from /proc/TID/syscall once
 * the thread runs again: released from its stop, it goes straight back
 * into the same wait with the same sp.
 * Read-write locks and condition variables wait on a futex inside the
 * object; they are named (address, symbol) but have no single owner.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arch/arch.h"
#include "base/base.h"
#include "ptrace/procfs.h"
#include "sampler/error.h"
#include "sampler/output.h"
#include "unwind/unwind.h"

#define MUTEX_OWNER_OFFSET 8
/* Frames from the innermost looked at for the locking function. */
#define LOCK_FRAMES 6

struct lock_fn {
	const char *name;
	const char *kind;
};

/* Entry points and the internal functions that do the waiting, as glibc
 * 2.3x names them (with and without its symbol versions' underscores). */
static const struct lock_fn lock_fns[] = {
	{ "pthread_mutex_lock", "mutex" },
	{ "__pthread_mutex_lock", "mutex" },
	{ "___pthread_mutex_lock", "mutex" },
	{ "__pthread_mutex_lock_full", "mutex" },
	{ "pthread_mutex_timedlock", "mutex" },
	{ "__pthread_mutex_timedlock", "mutex" },
	{ "___pthread_mutex_timedlock", "mutex" },
	{ "__pthread_mutex_clocklock_common", "mutex" },
	{ "pthread_mutex_clocklock", "mutex" },
	{ "__lll_lock_wait", "mutex" },
	{ "lll_lock_wait", "mutex" },
	{ "__lll_lock_wait_private", NULL },  /* glibc-internal locks: not a mutex */
	{ "pthread_rwlock_rdlock", "rwlock" },
	{ "pthread_rwlock_wrlock", "rwlock" },
	{ "__pthread_rwlock_rdlock", "rwlock" },
	{ "__pthread_rwlock_wrlock", "rwlock" },
	{ "___pthread_rwlock_rdlock", "rwlock" },
	{ "___pthread_rwlock_wrlock", "rwlock" },
	{ "__pthread_rwlock_rdlock_full64", "rwlock" },
	{ "__pthread_rwlock_wrlock_full64", "rwlock" },
	{ "pthread_rwlock_timedrdlock", "rwlock" },
	{ "pthread_rwlock_timedwrlock", "rwlock" },
	{ "pthread_cond_wait", "cond" },
	{ "__pthread_cond_wait", "cond" },
	{ "___pthread_cond_wait", "cond" },
	{ "__pthread_cond_wait_common", "cond" },
	{ "pthread_cond_timedwait", "cond" },
	{ "__pthread_cond_timedwait", "cond" },
	{ "___pthread_cond_timedwait", "cond" },
	{ "pthread_cond_clockwait", "cond" },
};

/* What lock_function found at an address (ip << 1 | caller), for the
 * threads after the first: 1000 workers parked in one place were 6000
 * symbol lookups, a tenth of the dump's time after the detach.  Direct
 * mapped, per dump of a process (the same address is another function in
 * another process). */
#define LOCK_CACHE 64
struct lock_cache {
	uint64_t key[LOCK_CACHE];            /* 0: empty */
	const struct lock_fn *fn[LOCK_CACHE];   /* NULL: none there */
};

/* The lock function at frame i of d, or NULL. */
static const struct lock_fn *
lock_function_at(const struct dump_thread *d, int i, struct unwind_target *t,
		 struct lock_cache *c)
{
	bool caller = unwind_frame_is_caller(d->frames, i);
	uint64_t key = d->frames[i].ip << 1 | (caller ? 1 : 0);
	size_t slot = (size_t)(base_mix64(key) % LOCK_CACHE);
	if (key && c->key[slot] == key)
		return c->fn[slot];
	struct unwind_symbol sym;
	const struct lock_fn *f = NULL;
	unwind_symbolize(t, d->frames[i].ip, caller, UNWIND_SYM_NO_DEMANGLE, &sym);
	for (size_t k = 0; sym.function && k < sizeof(lock_fns) / sizeof(lock_fns[0]); k++)
		if (strcmp(sym.function, lock_fns[k].name) == 0) {
			f = &lock_fns[k];
			break;
		}
	c->key[slot] = key;
	c->fn[slot] = f;
	return f;
}

/* The lock function among the first frames of d, or NULL. */
static const struct lock_fn *
lock_function(const struct dump_thread *d, struct unwind_target *t, struct lock_cache *c)
{
	for (int i = 0; i < d->nframes && i < LOCK_FRAMES; i++) {
		const struct lock_fn *f = lock_function_at(d, i, t, c);
		if (f)
			return f;
	}
	return NULL;
}

/* The data symbol (STT_OBJECT) of module path covering vaddr: a global
 * mutex is named as gdb would name it.  unwind/ keeps only function
 * symbols, so the module's .symtab (or .dynsym) is read here, once per
 * lock: a dump has few. */
static bool
object_symbol(const char *path, uint64_t vaddr, char *out, size_t len, uint64_t *start)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	bool found = false;
	elf_version(EV_CURRENT);
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	for (int pass = 0; e && pass < 2 && !found; pass++) {
		Elf_Scn *scn = NULL;
		while (!found && (scn = elf_nextscn(e, scn)) != NULL) {
			GElf_Shdr sh;
			if (!gelf_getshdr(scn, &sh) ||
			    sh.sh_type != (pass == 0 ? SHT_SYMTAB : SHT_DYNSYM) || !sh.sh_entsize)
				continue;
			Elf_Data *data = elf_getdata(scn, NULL);
			size_t n = data ? sh.sh_size / sh.sh_entsize : 0;
			for (size_t i = 0; i < n; i++) {
				GElf_Sym s;
				if (!gelf_getsym(data, (int)i, &s) ||
				    GELF_ST_TYPE(s.st_info) != STT_OBJECT ||
				    vaddr < s.st_value || vaddr >= s.st_value + (s.st_size ? s.st_size : 1))
					continue;
				const char *name = elf_strptr(e, sh.sh_link, s.st_name);
				if (!name || !*name)
					continue;
				if (vaddr == s.st_value)
					snprintf(out, len, "%s", name);
				else
					snprintf(out, len, "%s+0x%" PRIx64, name, vaddr - s.st_value);
				*start = s.st_value;
				found = true;
				break;
			}
		}
	}
	if (e)
		elf_end(e);
	close(fd);
	return found;
}

static void
name_object(struct dump_thread *d, struct unwind_target *t)
{
	struct unwind_symbol sym;
	uint64_t start;
	if (unwind_symbolize(t, d->wait_addr, false, UNWIND_SYM_DATA, &sym) == 0 && sym.module &&
	    sym.module[0] == '/' &&
	    object_symbol(sym.module, sym.module_offset, d->wait_symbol,
			  sizeof(d->wait_symbol), &start) &&
	    strcmp(d->wait_kind, "mutex") != 0 && start <= sym.module_offset) {
		/* A rwlock or condvar waits on a futex inside itself: name
		 * the object by where it starts.  The symbol may hold several
		 * (pthread_cond_t conds[3], a struct of locks): the object is
		 * the one of its size the futex is in, not the symbol's start,
		 * which would give three threads on three condition
		 * variables one address (tests/cli-newcomer.test). */
		uint64_t size = strcmp(d->wait_kind, "cond") == 0 ? sizeof(pthread_cond_t)
								  : sizeof(pthread_rwlock_t);
		uint64_t into = sym.module_offset - start, object = into / size * size;
		d->wait_addr -= into - object;
		char *plus = strchr(d->wait_symbol, '+');
		if (plus && object)
			snprintf(plus, sizeof(d->wait_symbol) - (size_t)(plus - d->wait_symbol),
				 "+0x%" PRIx64, object);
		else if (plus)
			*plus = '\0';
	}
}

static size_t
thread_index(const struct dump_process *p, pid_t tid)
{
	for (size_t i = 0; i < p->nthreads; i++)
		if (p->threads[i].tid == tid)
			return i;
	return SIZE_MAX;
}

static void
add_cycle(struct dump_process *p, const size_t *path, size_t n)
{
	size_t **nc = realloc(p->cycles, (p->ncycles + 1) * sizeof(*nc));
	size_t *nn = nc ? realloc(p->ncycle, (p->ncycles + 1) * sizeof(*nn)) : NULL;
	size_t *c = malloc(n * sizeof(*c));
	if (!nc || !nn || !c)
		error_msg_and_die("out of memory");
	p->cycles = nc;
	p->ncycle = nn;
	/* Start the cycle at its lowest index: one printing per cycle. */
	size_t lo = 0;
	for (size_t k = 1; k < n; k++)
		if (path[k] < path[lo])
			lo = k;
	for (size_t k = 0; k < n; k++)
		c[k] = path[(lo + k) % n];
	p->cycles[p->ncycles] = c;
	p->ncycle[p->ncycles++] = n;
}

/* Each thread waits for at most one owner: the wait-for graph is a
 * functional graph, and each cycle is found once by walking from every
 * thread with a colour per walk. */
static void
find_cycles(struct dump_process *p)
{
	size_t n = p->nthreads;
	size_t *next = malloc(n * sizeof(*next));
	size_t *walk = malloc(n * sizeof(*walk));
	size_t *path = malloc(n * sizeof(*path));
	if (!next || !walk || !path)
		error_msg_and_die("out of memory");
	for (size_t i = 0; i < n; i++) {
		const struct dump_thread *d = &p->threads[i];
		next[i] = d->wait_owner > 0 && d->wait_kind && strcmp(d->wait_kind, "mutex") == 0
			  ? thread_index(p, d->wait_owner) : SIZE_MAX;
		walk[i] = SIZE_MAX;
	}
	for (size_t s = 0; s < n; s++) {
		size_t len = 0, i = s;
		while (i != SIZE_MAX && walk[i] == SIZE_MAX) {
			walk[i] = s;
			path[len++] = i;
			i = next[i];
		}
		if (i == SIZE_MAX || walk[i] != s)
			continue;     /* ends, or joins an earlier walk */
		size_t k = 0;
		while (path[k] != i)
			k++;
		add_cycle(p, path + k, len - k);
	}
	free(next);
	free(walk);
	free(path);
}

#define NAMED_CACHE 16

/* Thread d's registers at its stop did not say which system call it was
 * blocked in (d->sample_sp set): the call it is blocked in now, if that is
 * where it was stopped (same sp; a thread that moved on is not named). */
static void
syscall_from_proc(pid_t pid, struct dump_thread *d)
{
	struct task_syscall sc;
	if (ptrace_read_syscall(pid, d->tid, &sc) < 0 || sc.nr < 0 || sc.nargs < 1 ||
	    sc.sp != d->sample_sp)
		return;
	d->in_syscall = true;
	d->syscall_nr = sc.nr;
	d->syscall_arg0 = sc.args[0];
}

static bool
in_futex(const struct dump_thread *d, const struct arch *a)
{
	return d->in_syscall && d->syscall_nr == a->nr_futex && d->syscall_arg0;
}

void
dump_find_locks(struct dump_process *p, struct unwind_target *t)
{
	const struct arch *a = arch_host();
	if (!a || a->nr_futex <= 0)
		return;
	bool any = false;
	/* Threads that wait on the same object (1000 workers on one condition
	 * variable) have it named once: object_symbol reads the module's
	 * symbol table. */
	const struct dump_thread *named[NAMED_CACHE];
	size_t nnamed = 0, replace = 0;
	struct lock_cache *cache = calloc(1, sizeof(*cache));
	if (!cache)
		error_msg_and_die("out of memory");
	for (size_t i = 0; i < p->nthreads; i++) {
		struct dump_thread *d = &p->threads[i];
		/* Stopped threads on aarch64 and MIPS (sample_sp): the call
		 * is read from /proc, for those in a lock function only. */
		if (!d->sampled || (!d->sample_sp && !in_futex(d, a)))
			continue;
		const struct lock_fn *f = lock_function(d, t, cache);
		if (!f || !f->kind)
			continue;
		if (d->sample_sp)
			syscall_from_proc(p->pid, d);
		if (!in_futex(d, a))
			continue;
		d->wait_kind = f->kind;
		d->wait_addr = d->syscall_arg0;
		if (strcmp(f->kind, "mutex") == 0) {
			int owner = 0;
			/* 0: released meanwhile; robust mutexes whose owner
			 * died read PTHREAD_MUTEX_INCONSISTENT (0x7fffffff). */
			if (ptrace_read_memory(d->tid, d->wait_addr + MUTEX_OWNER_OFFSET,
					       &owner, sizeof(owner)) == 0 &&
			    owner > 0 && owner < 0x40000000)
				d->wait_owner = owner;
			any = true;
		}
		size_t k = 0;
		while (k < nnamed && (named[k]->syscall_arg0 != d->syscall_arg0 ||
				      named[k]->wait_kind != d->wait_kind))
			k++;
		if (k < nnamed) {
			d->wait_addr = named[k]->wait_addr;
			memcpy(d->wait_symbol, named[k]->wait_symbol, sizeof(d->wait_symbol));
			continue;
		}
		name_object(d, t);
		if (nnamed < NAMED_CACHE)
			named[nnamed++] = d;
		else
			named[replace++ % NAMED_CACHE] = d;
	}
	free(cache);
	if (any)
		find_cycles(p);
}

void
dump_free_locks(struct dump_process *p)
{
	for (size_t k = 0; k < p->ncycles; k++)
		free(p->cycles[k]);
	free(p->cycles);
	free(p->ncycle);
	p->cycles = NULL;
	p->ncycle = NULL;
	p->ncycles = 0;
}
