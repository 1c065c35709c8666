/* unwind/engines.h - the engines behind unwind_walk: the table every
 * engine fills (struct unwinder, with its per-target state hooks), the
 * engines (fp, cfi, auto, mips), and the single steps they share (frame
 * pointer, x86-64 heuristics, a bad pc, signal trampolines, MIPS
 * prologues, a CFI step).  Defined in unwind/engine-fp.c,
 * unwind/engine-dwarf.c, unwind/engine-x86.c and unwind/engine-mips.c; unwind/unwind.c
 * dispatches, unwind/target-open.c owns unwind_state_owners.
 *
 * Private to unwind/ (and its unit tests); a target's owner goes through
 * unwind_target_state_* (unwind/target.h), never an engine's own
 * functions.
 */
#ifndef STACKSPY_UNWIND_ENGINES_H
#define STACKSPY_UNWIND_ENGINES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/arch.h"
#include "unwind/target.h"
#include "unwind/unwind.h"


struct memory_reader;

struct unwinder {
	enum unwind_how first_how;  /* how frames[0] is labelled */
	/* Append frames after frames[0] (filled by the caller from regs, *n
	 * is 1) up to max; regs is the innermost frame's registers and is
	 * consumed.  Returns the stop reason. */
	enum unwind_stop (*walk)(struct unwind_target *t, struct memory_reader *mr,
				 struct arch_regs *regs, struct unwind_frame *frames,
				 int *n, int max);
	/* The engine's own state for a target, in t->state[slot] (strace's
	 * unwind_tcb_init/fin): made by init when the target is opened (NULL
	 * init: the engine keeps none), emptied by flush when its memory map
	 * is read again, freed by fini with the target.  Engines that share
	 * one state (cfi and auto) name the same slot; unwind_state_owners
	 * says whose hooks run. */
	enum unwind_state_slot slot;
	void *(*init)(struct unwind_target *t);
	void (*flush)(void *state);
	void (*fini)(void *state);
};

/* The unwinder whose hooks make and free each slot's state
 * (target-open.c). */
extern const struct unwinder *const unwind_state_owners[UNWIND_STATE_SLOTS];

extern const struct unwinder unwinder_fp;     /* engine-fp.c */
/* engine-dwarf.c: CFI by stackspy's own interpreter, every architecture. */
extern const struct unwinder unwinder_cfi;
/* engine-auto.c: the same with the engines' steps asked in turn where no
 * CFI covers the pc. */
extern const struct unwinder unwinder_auto;
extern const struct unwinder unwinder_mips;   /* engine-mips.c */

/* One frame without CFI as a walk hands it to the steps of its fallback
 * list in turn (engine-auto.c composes auto's): each starts from the
 * frame's registers, and the first that steps gives the caller's. */
struct frame_step {
	struct unwind_target *t;
	struct memory_reader *mr;
	struct arch_regs *regs;    /* the frame's; the caller's once stepped */
	struct arch_regs before;   /* the frame's, put back before each step */
	bool exact;                /* stopped anywhere (the innermost frame, or
				      one a signal interrupted), not at a
				      return address */
	enum unwind_how prev_how;  /* how the frame itself was found */
	enum unwind_how how;       /* out: how the caller was found */
	bool sig;                  /* out: the frame was a signal trampoline */
	enum unwind_stop stop;     /* out when no step steps */
	/* What an earlier step found of the frame, for a later one. */
	bool no_symbol;            /* no symbol gave the pc's function */
	int fp;                    /* the frame-pointer step's result, -1 if
				      it failed or was not tried */
	/* A scan up the stack (the last steps): where it starts (0: at the
	 * sp), and out, where it found what it took (0: no scan took). */
	uint64_t scan_from;
	uint64_t scan_found;
};
/* A step of a fallback list: 1 when it stepped (f->regs, f->how, f->sig),
 * 0 when it cannot here (f->regs as they were is not required). */
typedef int (*frame_step_fn)(struct frame_step *f);

/* The steps the engines offer to a composition, in auto's order
 * (engine-auto.c): a frame record in generated code (engine-fp.c), the
 * x86-64 heuristics (engine-x86.c), a bad pc and a leaf on link-register
 * architectures, the frame-pointer chain (engine-fp.c), one stack scan
 * (for a frame record in generated code, engine-fp.c; for a return
 * address, engine-x86.c). */
int unwind_fp_jit_record_frame_step(struct frame_step *f);
int unwind_x86_heur_frame_step(struct frame_step *f);
int unwind_lr_bad_pc_frame_step(struct frame_step *f);
int unwind_lr_leaf_frame_step(struct frame_step *f);
int unwind_fp_chain_frame_step(struct frame_step *f);
int unwind_fp_jit_record_scan_frame_step(struct frame_step *f);
int unwind_x86_scan_frame_step(struct frame_step *f);

/* go-stack.c: Go's switch to the system stack for a call of C, walked
 * back.  unwind_go_cgo_return: is vaddr (an address of the code of m's
 * image, which is not NULL) where
 * runtime.asmcgocall's call of C returns, in a Go binary?  0 no, else the
 * kind of switch.  unwind_go_cgo_step: regs at that return address (the
 * C function's caller, on the system stack) become asmcgocall's caller's,
 * on the goroutine's stack; 1, or 0 where the words do not hold. */
enum { GO_CGO_SWITCHED = 1, GO_CGO_UNSWITCHED = 2 };
int unwind_go_cgo_return(struct mapping *m, uint64_t vaddr);
int unwind_go_cgo_step(struct unwind_target *t, struct memory_reader *mr, struct arch_regs *regs,
		       int kind);

/* engine-dwarf.c: the CFI walk, with steps (NULL-ended; NULL: none) for
 * the frames no CFI covers: the walk of unwinder_cfi (no steps) and of
 * unwinder_auto (engine-auto.c). */
enum unwind_stop unwind_dwarf_walk_with(struct unwind_target *t, struct memory_reader *mr,
				 struct arch_regs *regs, struct unwind_frame *frames, int *n,
				 int max, const frame_step_fn *fallback);

/* engine-dwarf.c: one CFI step from regs (the frame's registers: ip, sp
 * and whatever its rules read), with the FDE of the pc (exact) or of
 * pc - 1 (a return address) from .eh_frame, else .debug_frame.  Returns
 * 1 when it stepped (regs are the caller's, its pc stripped of
 * pointer-authentication bits; *signal: the frame was a signal
 * trampoline, the caller's pc is exact; *switched: the caller is on
 * another stack, go-stack.c's), 0 when no CFI covers the pc, or -1 with
 * *stop (the return address is undefined: the outermost frame). */
int unwind_dwarf_step(struct unwind_target *t, struct memory_reader *mr, struct arch_regs *regs,
	       bool exact, bool *signal, bool *switched, enum unwind_stop *stop);
/* engine-fp.c: is addr in the first bytes of its file's entry point
 * (_start), which nothing calls? */
bool unwind_at_entry(struct unwind_target *t, uint64_t addr);

/* engine-mips.c: one step of the MIPS prologue-analysis unwinder, pure
 * code over callbacks so tests/unit-mips.c runs it on instruction arrays. */
struct mips_env {
	const struct arch *arch;
	void *ctx;
	/* Read len bytes at addr.  0 or -EFAULT. */
	int (*read)(void *ctx, uint64_t addr, void *buf, size_t len);
	/* Start (and name, may be NULL) of the function containing addr, from
	 * the symbol table.  0, or -ENOENT when no symbol covers addr. */
	int (*func)(void *ctx, uint64_t addr, uint64_t *start, const char **name);
	/* [lo, hi) of the executable mapping containing addr.  0 or -ENOENT. */
	int (*code)(void *ctx, uint64_t addr, uint64_t *lo, uint64_t *hi);
	/* [lo, hi) of the stack mapping containing addr.  0 or -ENOENT. */
	int (*stack)(void *ctx, uint64_t addr, uint64_t *lo, uint64_t *hi);
	/* Is the function starting at start (holding pc) where a stack
	 * begins: the program's entry point (ELF e_entry), or code whose
	 * CFI says the return address is undefined (glibc's thread start)?
	 * NULL: only the names __start, _start, __thread_start say so. */
	bool (*outermost)(void *ctx, uint64_t pc, uint64_t start);
};

/* Unwind one frame: regs (r0..r31 and the pc in slot env->arch->reg_ip;
 * the valid bits say which are known) become the caller's.  Returns 0, or -1 with *stop set.  Sets
 * *signal when the frame was a sigreturn trampoline (the caller's pc is
 * then exact, not a return address). */
int unwind_mips_step(const struct mips_env *env, struct arch_regs *regs,
	      bool *signal, enum unwind_stop *stop);

/* One frame-pointer step from regs (ip, sp, fp of the target's arch/ table
 * updated).  Returns 0, 1 when the frame at regs was the signal trampoline
 * (the new frame was interrupted: every register restored, its ip
 * exact), or -1 with the stop reason when the chain ends or is not
 * plausible. */
int unwind_fp_step(struct unwind_target *t, struct memory_reader *mr,
	    struct arch_regs *regs, enum unwind_stop *stop);
/* One frame-pointer step where the record validates: the frame pointer
 * in the stack, above sp; the saved one 0 or strictly further up the
 * same stack; the return address in executable memory, right after a
 * call (x86-64).  Returns 1 when it stepped (ip, sp, fp), else 0 with
 * regs unchanged. */
int unwind_fp_record_step(struct unwind_target *t, struct memory_reader *mr,
			  struct arch_regs *regs);
/* engine-x86.c: one step of x86-64 code without CFI, from regs (ip, sp,
 * rbp updated).  unwind_x86_heur_step: a pc outside executable memory (exact:
 * frames[0] or an interrupted frame) returns to [sp]; an epilogue or the
 * prologue decoded from the function's symbol gives the frame.  *how says
 * which.  unwind_x86_scan_step: the first return address up the stack.  Both
 * return 1 when they stepped, 0 when they cannot (other architectures
 * too); every return address they take is in executable memory right
 * after a call. */
int unwind_x86_heur_step(struct unwind_target *t, struct memory_reader *mr, struct arch_regs *regs,
		  bool exact, enum unwind_how *how, bool *no_symbol);
/* Is ra a return address: in executable memory, right after a call?
 * (true on other architectures: not checked there.)  *no_symbol above:
 * no symbol gave the pc's function (its code may keep no frame pointer). */
bool unwind_x86_plausible_ra(struct unwind_target *t, struct memory_reader *mr, uint64_t ra);
/* The scan starts at from (or the sp, if higher); *found: where it took
 * the return address. */
int unwind_x86_scan_step(struct unwind_target *t, struct memory_reader *mr, struct arch_regs *regs,
			 uint64_t from, uint64_t *found);

/* A pc outside executable memory (frames[0], or a frame a signal
 * interrupted: exact) on an architecture with a link register and calls
 * it knows (aarch64): the call went through a bad pointer, and the caller
 * goes on at the link register, if the instruction before it is a call.
 * Returns 1 when it stepped (only the pc changes), else 0. */
int unwind_lr_bad_pc_step(struct unwind_target *t, struct memory_reader *mr, struct arch_regs *regs,
		   bool exact);

/* At a frame stopped at an exact address on an architecture with a link
 * register and frame records (aarch64): when the link register returns
 * right after a call into another function than the pc's (by symbols),
 * and the record at fp does not return there, the function keeps no
 * record (a leaf, a prologue, an epilogue) and its caller is at the link
 * register.  Returns 1 when it stepped (only the pc changes), else 0. */
int unwind_lr_leaf_step(struct unwind_target *t, struct memory_reader *mr, struct arch_regs *regs);

/* The signal-trampoline part of unwind_fp_step alone (arch->sigtramp): 1 when
 * the frame at regs is the trampoline and regs now hold the interrupted
 * registers, 0 when it is not the trampoline, -1 when it is but its
 * sigframe is not as expected. */
int unwind_fp_sigtramp_step(struct unwind_target *t, struct memory_reader *mr,
		     struct arch_regs *regs);

#endif
