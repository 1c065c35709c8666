/* arch/arch.h - what stackspy knows about a processor architecture.
 *
 * One table per architecture (arch-x86_64.c, arch-aarch64.c, arch-mips.c)
 * and nothing else anywhere: register numbers, which register is the stack
 * pointer, the pc, the frame pointer and the return address, word size and
 * byte order, the ELF e_machine, the layout of NT_PRSTATUS (what
 * PTRACE_GETREGSET NT_PRSTATUS returns and what a core file's note holds),
 * where a stopped system call keeps its number and return value, and the
 * signal frame.  arch/ owns these tables; it is the lowest module with
 * base/: it calls nothing else in stackspy (libc only), and ptrace/,
 * unwind/, sampler/ and the tests may use it.
 *
 * Registers are numbered as the DWARF of the architecture numbers them
 * (which is also libunwind's numbering on x86-64 and aarch64); where DWARF
 * has no number for the pc, the table says which slot holds it.
 */
#ifndef STACKSPY_ARCH_H
#define STACKSPY_ARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Slots in struct arch_regs: x86-64 uses 0..16, aarch64 0..32, MIPS 0..32. */
#define ARCH_NREGS 40

struct arch_regs {
	uint64_t r[ARCH_NREGS];
	uint64_t valid;           /* bit i: r[i] is known */
};

/* The o32 signal frames of MIPS (the kernel's arch/mips/kernel/signal.c):
 * the trampoline is `li v0, NR; syscall`, and the interrupted registers
 * lie in a struct sigcontext at a fixed distance above the sp the handler
 * was entered with. */
struct arch_sigframe {
	int nr_sigreturn;         /* syscall numbers of the trampolines, */
	int nr_rt_sigreturn;      /*   -1: none */
	uint64_t sigframe_sc;     /* sp to the sigcontext: sigreturn */
	uint64_t rt_sigframe_sc;  /*   and rt_sigreturn frames */
	uint64_t sc_pc;           /* offset of sc_pc in the sigcontext */
	uint64_t sc_regs;         /* offset of sc_regs[0] (8-byte slots) */
};

/* A signal trampoline that the frame-pointer chain reaches (aarch64).
 * The handler returns to the vdso's __kernel_rt_sigreturn, whose first
 * instructions are code[]; x29 in that frame points at a frame record
 * {interrupted x29, interrupted x30} that the kernel put just above the
 * struct rt_sigframe, and the rt_sigframe's sigcontext holds every
 * interrupted register: regs[0..nregs) as slots 0.., then sp, then pc
 * (arch/arm64/kernel/signal.c, get_sigframe and setup_sigframe).  The
 * record alone would give x30 as the return address and lose the
 * interrupted pc: the pc of a function interrupted before it saved x30
 * (a leaf, a system call) and so that function's frame. */
struct arch_sigtramp {
	unsigned char code[8];    /* the trampoline's first bytes */
	size_t code_len;
	uint64_t record_to_regs;  /* frame record - this = &sigcontext.regs[0] */
	unsigned nregs;           /* general registers before sp and pc */
};

/* A signal return without CFI, recognised by its code (x86-64: Go's
 * runtime.sigreturn__sigaction, the rt_sigreturn sequence `mov $15, %rax;
 * syscall`): at it, once the handler has returned, sp points at the
 * ucontext of the kernel's rt_sigframe, and the interrupted registers are
 * nregs 8-byte words regs_off bytes in (uc_mcontext.gregs), word i being
 * register slot slots[i]. */
struct arch_sigreturn {
	unsigned char code[16];
	size_t code_len;
	uint64_t regs_off;
	unsigned nregs;
	int8_t slots[32];
};

/* An instruction of a kind: insn & mask == value. */
struct arch_insn_pattern {
	uint32_t mask, value;
};

struct arch {
	const char *name;         /* "x86-64", "aarch64", "mipsel (o32)" ... */
	unsigned e_machine;       /* EM_X86_64, EM_AARCH64, EM_MIPS */
	int elf_class;            /* ELFCLASS32 or ELFCLASS64 */
	unsigned word_size;       /* 4 or 8 bytes */
	bool big_endian;

	/* Register slots (struct arch_regs) of the special registers, -1
	 * when the architecture has none (x86-64 has no link register). */
	int reg_ip, reg_sp, reg_fp, reg_ra;
	/* A register that always reads as zero (MIPS r0), or -1. */
	int reg_zero;
	/* The frame-pointer chain: at fp, the caller's fp and then the
	 * return address, one word each (x86-64 push %rbp; mov %rsp,%rbp,
	 * aarch64 stp x29, x30, [sp, #-N]!).  False where the ABI keeps no
	 * such record (MIPS: s8 points into the frame, not at a record). */
	bool fp_chain;
	/* Bits of a return address, as the stack or the link register holds
	 * it, that are not address, cleared before the address is used:
	 * aarch64's pointer-authentication code (-mbranch-protection=pac-ret
	 * signs x30 before it is saved).  0 where there are none. */
	uint64_t ra_pac_mask;
	/* The regset in which the kernel reports the pointer-authentication
	 * masks (aarch64's NT_ARM_PAC_MASK, struct user_pac_mask { data_mask,
	 * insn_mask }, the same as a core's note), which replace ra_pac_mask
	 * where they are known; 0: none. */
	unsigned pac_mask_note;
	const struct arch_sigtramp *sigtramp;  /* NULL: none the fp walk knows */
	/* Calls of a fixed-size instruction set (insn_size bytes, in the
	 * target's byte order): insn & mask == value for each pattern.  A
	 * return address follows one.  ncalls 0: not described here
	 * (x86-64's are decoded by unwind/engine-x86.c; MIPS's by
	 * engine-mips.c; MIPS has insn_size for arch_code_syscall). */
	const struct arch_insn_pattern *calls;
	unsigned ncalls, insn_size;

	/* NT_PRSTATUS.  pr_reg (elf_gregset_t) is pr_reg_size bytes of
	 * word_size words in the target's byte order; pr_index[slot] is the
	 * word holding register slot, -1 if pr_reg does not hold it.  A
	 * core note is struct elf_prstatus, prstatus_size bytes, whose pr_reg
	 * starts at ARCH_PR_REG_OFFSET(class). */
	size_t pr_reg_size;
	size_t pr_reg_min;        /* shortest pr_reg decoded (MIPS: up to
				     cp0_epc; a core cut short is refused) */
	size_t prstatus_size;
	const int8_t *pr_index;   /* nregs entries */
	unsigned nregs;           /* slots this architecture fills */
	/* Registers whose pr_reg value is not the program's (MIPS k0/k1,
	 * the kernel's scratch registers): decoded but never valid. */
	uint64_t invalid_mask;

	/* System calls, as stackspy stops threads (PTRACE_INTERRUPT or a
	 * group-stop, not syscall-stops): a thread stopped while blocked in
	 * a system call has left it with a restart code, and pr_reg tells
	 * which call and which code.  Words of pr_reg, -1 when pr_reg does
	 * not hold it (see syscall_note); arch_pr_syscall() reads them. */
	int pr_syscall_nr;        /* the call's number (x86-64 orig_rax) */
	int64_t syscall_nr_none;  /*   its value outside any call */
	int nr_futex;             /* futex(2)'s number (sampler/locks.c) */
	int pr_syscall_ret;       /* the return value (x86-64 rax) */
	int pr_syscall_err;       /* MIPS a3: nonzero when ret is a
				     positive errno; -1: ret is -errno */
	const char *syscall_note; /* how to read them, for the reader */
	/* Where pr_reg does not say (pr_syscall_nr -1), the code does: the
	 * system call instruction (aarch64's svc #0, MIPS's syscall), after
	 * which a stop leaves the pc of a call that returned or will be
	 * restarted (arch_code_syscall).  Mask 0: not known. */
	struct arch_insn_pattern syscall_insn;
	/* The kernel puts the pc of a call to be restarted back on the
	 * instruction before the stop (aarch64's do_signal, "so that a
	 * debugger will see the already changed PC"); false: after it, when
	 * the tracee runs again (MIPS's do_signal, after get_signal). */
	bool syscall_pc_back;

	const struct arch_sigframe *sigframe;  /* NULL: CFI describes them */
	const struct arch_sigreturn *sigreturn;  /* NULL: none known */

	/* The registers that carry the six system call arguments, as
	 * register slots: they still hold them while the call blocks (glibc's
	 * vfork keeps its return address in %rdi).  nsyscall_args 0: not
	 * described (sp and pc only). */
	int8_t syscall_args[6];
	unsigned nsyscall_args;

	/* The PLT: stubs of plt_entry bytes after a plt_header-byte header in
	 * .plt (none in .plt.sec), each jumping through its .rela.plt
	 * relocation in order.  plt_entry 0: stubs are not named. */
	unsigned plt_header, plt_entry;
};

/* Where pr_reg starts in struct elf_prstatus: after elf_siginfo,
 * pr_cursig, pr_sigpend, pr_sighold, pr_pid, ppid, pgrp, sid and four
 * timevals, the same on every Linux architecture of a class. */
#define ARCH_PR_REG_OFFSET(elf_class64) ((elf_class64) ? 112u : 72u)
/* ... and pr_pid, and pr_cursig (a short). */
#define ARCH_PR_PID_OFFSET(elf_class64) ((elf_class64) ? 32u : 24u)
#define ARCH_PR_CURSIG_OFFSET 12u

extern const struct arch arch_x86_64;                   /* arch-x86_64.c */
extern const struct arch arch_aarch64;                  /* arch-aarch64.c */
extern const struct arch arch_mipsel, arch_mips_be;     /* arch-mips.c: o32 */

/* The architecture of the processes on this host, chosen when stackspy
 * was compiled for it; NULL when stackspy has no table for it (every
 * caller then says "unsupported architecture", never guesses). */
const struct arch *arch_host(void);
/* The phrase for a host arch_host() does not know. */
#define ARCH_UNSUPPORTED_REASON "unsupported architecture (stackspy knows x86-64, aarch64 and MIPS o32)"

/* The table for an ELF e_machine, EI_CLASS (ELFCLASS32/64) and byte
 * order, or NULL if stackspy has none. */
const struct arch *arch_from_elf(unsigned e_machine, int ei_class, bool big_endian);

/* An unsigned integer of size bytes (1..8) at p, in either byte order: the
 * one byte-order reader of stackspy. */
static inline uint64_t
arch_get_uint(const void *p, size_t size, bool big_endian)
{
	const unsigned char *b = p;
	uint64_t v = 0;
	for (size_t k = 0; k < size; k++)
		v = v << 8 | b[big_endian ? k : size - 1 - k];
	return v;
}

/* Is the insn_size-byte instruction at p one of a's calls? */
static inline bool
arch_is_call(const struct arch *a, const void *p)
{
	uint32_t insn = (uint32_t)arch_get_uint(p, a->insn_size, a->big_endian);
	for (unsigned k = 0; k < a->ncalls; k++)
		if ((insn & a->calls[k].mask) == a->calls[k].value)
			return true;
	return false;
}

/* Word `index` of pr_reg (len bytes): 0 and the value in *out, or -EINVAL
 * when index < 0 or pr_reg is too short. */
int arch_pr_word(const struct arch *a, const unsigned char *pr_reg, size_t len,
		 int index, uint64_t *out);

/* pr_reg (len bytes) to register slots.  Returns 0, or -EINVAL when len
 * is below the table's pr_reg_min (a core cut short). */
int arch_regs_from_prstatus(const struct arch *a, const unsigned char *pr_reg,
			    size_t len, struct arch_regs *out);

/* The kernel's restart codes (include/linux/errno.h, not in the uapi): a
 * system call that was asleep returns one of them, or -EINTR, when a stop
 * or a signal wakes it. */
#define ERESTARTSYS           512
#define ERESTARTNOINTR        513
#define ERESTARTNOHAND        514
#define ERESTART_RESTARTBLOCK 516

/* What pr_reg says of the system call a stopped thread is in. */
struct arch_syscall {
	bool in_syscall;          /* the stop found it inside a system call */
	int64_t nr;               /* its number (the architecture's), or -1 */
	int64_t ret;              /* its return value as -errno: -EINTR, or
				     -512..-516 (ERESTARTSYS, ERESTARTNOINTR,
				     ERESTARTNOHAND, ERESTART_RESTARTBLOCK)
				     when it will be restarted */
};

/* Decode the system call state of pr_reg (len bytes).  Returns 0, -EINVAL
 * when pr_reg is too short, or -ENOTSUP when pr_reg does not hold it
 * (aarch64: the NT_ARM_SYSTEM_CALL regset has the number). */
int arch_pr_syscall(const struct arch *a, const unsigned char *pr_reg, size_t len,
		    struct arch_syscall *out);

/* arch_pr_syscall where pr_reg does not hold the call's number
 * (-ENOTSUP there) and a->syscall_insn is known: from the code around the
 * pc, code[0..insn_size) the instruction before it and code[insn_size..
 * 2 * insn_size) the one at it (code_len 2 * insn_size; insn_size: the
 * one at the pc only, at the start of a mapping).  A stop (PTRACE_INTERRUPT,
 * a group-stop) finds a thread of a blocking call that will be restarted
 * with its pc put back on the call instruction where a->syscall_pc_back
 * (aarch64), else right after it with the restart code as its return
 * (MIPS), and one whose call returned (or was cut short: -EINTR) right
 * after it, the return value in the first return register (MIPS: a
 * positive errno where a3 says so).  A thread stopped in user code just
 * there reads as in a call too.  Returns 0, or -EINVAL. */
int arch_code_syscall(const struct arch *a, const unsigned char *pr_reg, size_t len,
		      const unsigned char *code, size_t code_len, struct arch_syscall *out);
/* The pc in pr_reg, or 0 if pr_reg is too short. */
uint64_t arch_pr_pc(const struct arch *a, const unsigned char *pr_reg, size_t len);

/* The stack pointer in pr_reg, or 0 if pr_reg is too short. */
uint64_t arch_pr_sp(const struct arch *a, const unsigned char *pr_reg, size_t len);

#endif
