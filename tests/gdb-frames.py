# gdb-frames.py: run by `gdb -p PID -batch -x gdb-frames.py`
# (tests/gdb-compare.test).  Prints one line per thread,
#   GDBTHREAD TID PC PC ...
# innermost first, one pc per physical frame: inline frames (gdb shows them
# with their caller's pc) and tail-call frames (synthesized from DWARF call
# site information, with no return address on the stack) are skipped, and
# so is a last frame at pc 0.
import gdb

gdb.execute("set pagination off")
gdb.execute("set backtrace past-main on")
gdb.execute("set backtrace past-entry on")

SKIP = (gdb.INLINE_FRAME, gdb.TAILCALL_FRAME)

for inferior in gdb.inferiors():
    for thread in sorted(inferior.threads(), key=lambda t: t.ptid[1]):
        thread.switch()
        pcs = []
        frame = gdb.newest_frame()
        while frame is not None and len(pcs) < 1000:
            if frame.type() not in SKIP:
                pcs.append("0x%x" % frame.pc())
            try:
                frame = frame.older()
            except gdb.error:
                break
        # A return address of 0 ends the stack (Go's runtime.clone and
        # runtime.goexit leave one): gdb shows "0x0 in ??", stackspy stops.
        while pcs and pcs[-1] == "0x0":
            pcs.pop()
        print("GDBTHREAD %d %s" % (thread.ptid[1], " ".join(pcs)))
