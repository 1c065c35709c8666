/* sampler/output.h - what dump prints: one process's threads, their
 * frames, their kernel stacks and the locks they wait for, as text or
 * JSON.  Defined in sampler/output.c (printing) and sampler/locks.c (the
 * wait-for analysis).
 *
 * For the files of the dump command (sampler/dump-internal.h).
 */
#ifndef STACKSPY_SAMPLER_OUTPUT_H
#define STACKSPY_SAMPLER_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "unwind/unwind.h"

struct kernel_frame;

enum output_format { OUTPUT_TEXT, OUTPUT_JSON };

/* What a blocked thread waits on (sampler/waits.c), and who is at the
 * other end: the owner of a mutex, the processes that hold the other end
 * of a pipe or a socket, the children a waitpid waits for. */
#define WAIT_MAX_PEERS 8
struct wait_peer {
	pid_t pid;
	pid_t tid;                /* 0: the process, no one thread of it */
};
struct dump_wait {
	const char *kind;         /* "mutex", "rwlock", "condvar", "futex",
				     "pipe", "socket", "child", "epoll", "io",
				     or NULL: nothing known */
	const char *verb;         /* "reads", "writes", "accepts on", "waits
				     for", "waits on": the text's words */
	const char *role;         /* the peers': "owned by", "written by",
				     "read by", "peer", "child", ... */
	char object[96];          /* "pipe:[4471]", "socket:[5520]",
				     "mutex 0x55..", "child 901" */
	struct wait_peer peers[WAIT_MAX_PEERS];
	int npeers;
	bool more_peers;          /* more than WAIT_MAX_PEERS */
};

/* One thread's dump, as printed. */
struct dump_thread {
	pid_t tid;
	char name[64];
	char state;
	bool need_info;           /* seized without reading its name and state
				     (ATTACH_NO_PROCINFO): read after
				     its sample, '?' and "" until then */
	const char *error;        /* why it could not be sampled, or NULL */
	double pause_us;
	struct unwind_frame *frames;
	int nframes;
	enum unwind_stop stop;
	bool sampled;
	/* A thread blocked where it cannot stop (D) is read
	 * without stopping it (ptrace_snapshot_blocked); its kernel stack
	 * (also for every thread with dump --kernel) and wchan. */
	bool unstopped;
	char wchan[64];           /* "" when unknown */
	struct kernel_frame *kframes;  /* kernel frames, innermost first */
	int nkframes;
	bool in_syscall;          /* blocked in system call syscall_nr ... */
	int64_t syscall_nr;
	uint64_t syscall_arg0;    /* ... whose first argument was this */
	uint64_t sample_sp;       /* where the registers of its stop do not
				     say its system call (not x86-64): its sp
				     then, to recognise the call in /proc
				     (sampler/locks.c); 0 otherwise */
	/* What it waits for (sampler/locks.c): a mutex, rwlock or condition
	 * variable at wait_addr (0: nothing known), held by wait_owner (0:
	 * unknown or not a mutex). */
	const char *wait_kind;    /* "mutex", "rwlock", "cond", or NULL */
	uint64_t wait_addr;
	pid_t wait_owner;
	char wait_symbol[128];    /* the object's symbol when it is a global */
	struct dump_wait waits_on;  /* sampler/waits.c */
};

struct dump_process {
	pid_t pid;
	char comm[64];
	enum unwind_engine engine;
	struct dump_thread *threads;
	size_t nthreads;
	pid_t only_tid;           /* a TID was given where a PID was expected */
	/* Its CPython (unwind/python.c): Py_Version (0: none found), why its
	 * frames are not shown (NULL: they are), who holds the GIL (0: no
	 * one, or not known). */
	uint32_t python_version;
	char python_note[200];    /* "": none */
	pid_t gil_holder;
	size_t nunstopped;        /* threads read without stopping them */
	/* Deadlock cycles (sampler/locks.c): cycles[k] lists ncycle[k] thread
	 * indices, each waiting for a mutex the next one holds. */
	size_t **cycles;
	size_t *ncycle;
	size_t ncycles;
};

/* sampler/locks.c: for each thread blocked in a futex wait under
 * pthread_mutex_lock & co., fill its wait_* fields (the mutex and its owner
 * read from the target's memory); then find the wait-for cycles. */
void dump_find_locks(struct dump_process *p, struct unwind_target *t);
void dump_free_locks(struct dump_process *p);
/* sampler/waits.c: for each blocked thread, what it waits on and who is at
 * the other end (after the locks: a mutex's owner is theirs), from
 * /proc/TID/syscall, /proc/PID/fd, fdinfo, the socket tables and the
 * process tree, after the detach (nothing stopped). */
void dump_find_waits(struct dump_process *p, struct unwind_target *t);
/* The /proc scans behind it (every process's descriptors), kept between
 * the processes of one dump; freed here. */
void dump_waits_done(void);

/* dump --group: print each distinct stack once (sampler/output.c). */
#define OUTPUT_GROUP 0x20000

/* In dump_output's sym_flags, above the UNWIND_SYM_* bits: add source
 * file:line and the inlined frames (dump --source, unwind_source()). */
#define OUTPUT_SOURCE 0x10000

/* p's CPython facts from t (found, read, or why not; the GIL's holder
 * now), for dump_output. */
void dump_python_facts(struct dump_process *p, struct unwind_target *t);

/* Print one process.  Names through unwind_symbolize(t, ..., sym_flags).
 * Returns 0 or -errno (write error). */
int dump_output(FILE *out, enum output_format f, const struct dump_process *p,
		struct unwind_target *t, unsigned sym_flags);

#endif
