#!/usr/bin/python3.11
"""pyframes.py: a CPython process with threads in known Python states, for
stackspy's Python frames (tests/pyframes-compare.py compares a dump of it
with gdb's py-bt).  Runs under Debian's /usr/bin/python3.11.

Protocol (tests/targets/target.h, tests/init.sh): a line "thread NAME TID"
for every thread (TID = threading.get_native_id(), NAME its kernel name,
the main thread's TID is the pid), then "ready" once every thread is in its
state (wait_line matches the line "ready" exactly); then the stdin thread
answers "ping" with "pong N" and the process exits at end of file.  It
dies with its parent (PR_SET_PDEATHSIG) and after TARGET_LIFETIME_S.

  pyframes.py            the threads below
  pyframes.py shares [SECONDS [N]]
                         one thread, py-shares, alternates heavy() and
                         light(), pure Python that burns CPU (a loop of N
                         iterations in light(), default 100000, some 5 ms),
                         3/4 of its CPU time in heavy() (steered); on
                         SIGTERM, at end of file on stdin, or after SECONDS
                         (default: 5 s before its lifetime ends, the
                         alarm of TARGET_LIFETIME_S) it prints the CPU time
                         each took (time.thread_time around each call) as
                         "share heavy 0.750", "share light 0.250", and "cpu
                         heavy S", "cpu light S" (seconds), then exits.
                         The rest of py-shares' time is its loop in
                         alternate(), mostly the clock_gettime system call
                         of time.thread_time: a preemption point, where the
                         thread waits when the CPUs are busy (on a loaded
                         host a stop catches it there far more often than
                         its CPU time says; on-CPU samples do not).

Threads (kernel names), Python frames outermost first; a thread started
with a target runs Thread._bootstrap, Thread._bootstrap_inner, Thread.run
(threading.py) before its function:
  pyframes   (main) <module>, main, main_threads, Thread.join,
             Thread._wait_for_tstate_lock: lock.acquire in C (a futex)
  py-deep    busy in pure Python on BUSY_LINE, 31 Python frames down:
             Thread._bootstrap, Thread._bootstrap_inner, DeepWorker.run,
             DeepWorker.descend x12, Chain.step (classmethod), Chain.hop
             (staticmethod), outer, outer.<locals>.inner,
             outer.<locals>.inner.<locals>.innermost, gen_outer (for ...
             in: C resumes the generator), gen_inner (`yield from`: C
             again), gen_inner.<locals>.<lambda> (the key of sorted(), from
             C's list sort), Spinner.__call__ (C's slot_tp_call),
             Spinner.value (a property: C again), traced.<locals>.wrapper
             (a decorator; its f(*args) is a call from C again),
             into_spin, spin_more x3, spin.  Seven runs of the interpreter
             (seven _PyEval_EvalFrameDefault frames in the native stack).
  py-sleep   sleeper, doze, nap: time.sleep (SLEEP_LINE)
  py-holder  holder (holds LOCK), Event.wait, Condition.wait: a futex
  py-lock    locker, want_lock: LOCK.acquire() (LOCK_LINE), a futex
  py-hash    hasher, digest_forever (HASH_LINE): in C, OpenSSL's sha256 of
             a 16 MiB buffer, the GIL released (busy)
  py-stdin   stdin_thread, serve: a read(2) of stdin in the io module

Each *_LINE below is a line this file marks with a comment "# <NAME>".
"""
import ctypes
import hashlib
import os
import signal
import sys
import threading
import time

TARGET_LIFETIME_S = 600
READY_TIMEOUT_S = 20
PR_SET_PDEATHSIG = 1
PR_SET_NAME = 15
DEEP_DESCEND = 12

try:
    _libc = ctypes.CDLL(None, use_errno=True)
except OSError:
    _libc = None

tids = {}             # kernel name -> native id
blocking = {}         # kernel name -> True once about to block for good
progress = {'deep': 0, 'hash': 0}
LOCK = threading.Lock()
HOLDER_EVENT = threading.Event()     # never set


def say(line):
    sys.stdout.write(line + '\n')
    sys.stdout.flush()


def set_kernel_name(name):
    """The thread's comm (Python 3.11 does not set it)."""
    if _libc is not None:
        _libc.prctl(PR_SET_NAME, ctypes.c_char_p(name.encode()[:15]), 0, 0, 0)


def register(name):
    set_kernel_name(name)
    tids[name] = threading.get_native_id()


def die_with_parent():
    if _libc is not None:
        _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() == 1:
        os._exit(3)
    signal.alarm(TARGET_LIFETIME_S)


# ---- py-deep: pure Python, 31 frames, C calls in between -------------------

def spin():
    while True: progress['deep'] += 1  # BUSY_LINE


def spin_more(n):
    if n:
        return spin_more(n - 1)  # SPIN_MORE_LINE
    return spin()  # SPIN_CALL_LINE


def traced(func):
    def wrapper(*args):
        return func(*args)  # WRAPPER_LINE
    return wrapper


@traced
def into_spin(n):
    return spin_more(n)  # INTO_SPIN_LINE


class Spinner:
    @property
    def value(self):
        return into_spin(2)  # PROPERTY_LINE

    def __call__(self, v):
        return self.value  # CALL_LINE


def gen_inner():
    yield sorted([2, 1], key=lambda v: Spinner()(v))  # LAMBDA_LINE


def gen_outer():
    yield from gen_inner()  # YIELD_FROM_LINE


def outer():
    def inner():
        def innermost():
            for x in gen_outer():  # FOR_GEN_LINE
                return x
        return innermost()  # INNERMOST_CALL_LINE
    return inner()  # INNER_CALL_LINE


class Chain:
    @staticmethod
    def hop():
        return outer()  # HOP_LINE

    @classmethod
    def step(cls):
        return cls.hop()  # STEP_LINE


class DeepWorker(threading.Thread):
    def run(self):
        register(self.name)
        self.descend(DEEP_DESCEND)  # DEEP_RUN_LINE

    def descend(self, n):
        if n > 1:
            return self.descend(n - 1)  # DESCEND_LINE
        return Chain.step()  # DESCEND_STEP_LINE


# ---- the blocked ones ------------------------------------------------------

def nap():
    blocking['py-sleep'] = True
    while True:
        time.sleep(1000)  # SLEEP_LINE


def doze():
    nap()  # DOZE_LINE


def sleeper():
    register('py-sleep')
    doze()


def holder():
    register('py-holder')
    LOCK.acquire()
    blocking['py-holder'] = True
    HOLDER_EVENT.wait()  # HOLDER_LINE


def want_lock():
    blocking['py-lock'] = True
    LOCK.acquire()  # LOCK_LINE


def locker():
    register('py-lock')
    want_lock()


def digest_forever(h, buf):
    while True: h.update(buf); progress['hash'] += 1  # HASH_LINE


def hasher():
    register('py-hash')
    buf = b'\x5a' * (16 << 20)
    digest_forever(hashlib.sha256(), buf)


def serve(on_eof):
    pongs = 0
    blocking['py-stdin'] = True
    while True:
        line = sys.stdin.buffer.readline()  # STDIN_LINE
        if not line:
            return on_eof()
        if line.startswith(b'ping'):
            pongs += 1
            say('pong %d' % pongs)


def stdin_thread(on_eof):
    register('py-stdin')
    serve(on_eof)


# ---- waiting for the threads -----------------------------------------------

def exit_now():
    os._exit(0)


def deadline_passed(start, what):
    if time.monotonic() - start > READY_TIMEOUT_S:
        sys.stderr.write('target: %s\n' % what)
        sys.stderr.flush()
        os._exit(3)


def syscall_line(tid):
    """(state letter, /proc/self/task/TID/syscall) or None."""
    try:
        with open('/proc/self/task/%d/syscall' % tid) as f:
            sc = f.read().strip()
        with open('/proc/self/task/%d/stat' % tid) as f:
            stat = f.read()
    except OSError:
        return None
    return stat[stat.rindex(')') + 2], sc


def wait_blocked(name):
    """Until NAME is asleep in the same system call, with the same
    arguments, 6 times in a row 20 ms apart: after its blocking[] flag,
    a wait for the GIL (a futex with a 5 ms timeout, a thread that gets
    it goes on) is not its state for good."""
    start = time.monotonic()
    while not blocking.get(name):
        deadline_passed(start, 'thread %s did not start' % name)
        time.sleep(0.005)
    same, last = 0, None
    while same < 6:
        deadline_passed(start, 'thread %s did not block' % name)
        cur = syscall_line(tids[name])
        ok = (cur is not None and cur[0] == 'S'
              and cur[1].split()[0] not in ('running', '-1'))
        same = same + 1 if ok and cur == last else (1 if ok else 0)
        last = cur
        time.sleep(0.02)


def wait_progress(key, name):
    start = time.monotonic()
    before = progress[key]
    while progress[key] <= before + 1:
        deadline_passed(start, 'thread %s made no progress' % name)
        time.sleep(0.005)


def start(name, target, *args):
    t = threading.Thread(target=target, args=args, name=name, daemon=True)
    t.start()
    return t


def announce(names):
    start_t = time.monotonic()
    while not all(n in tids for n in names):
        deadline_passed(start_t, 'threads did not start')
        time.sleep(0.005)
    for n in names:
        say('thread %s %d' % (n, tids[n]))


def main_threads():
    register('pyframes')
    DeepWorker(name='py-deep', daemon=True).start()
    start('py-sleep', sleeper)
    start('py-holder', holder)
    wait_blocked('py-holder')          # LOCK is held before py-lock wants it
    start('py-lock', locker)
    start('py-hash', hasher)
    reader = start('py-stdin', stdin_thread, exit_now)
    names = ['pyframes', 'py-deep', 'py-sleep', 'py-holder', 'py-lock',
             'py-hash', 'py-stdin']
    announce(names)
    for n in ('py-sleep', 'py-lock', 'py-stdin'):
        wait_blocked(n)
    wait_progress('deep', 'py-deep')
    wait_progress('hash', 'py-hash')
    say('ready')
    reader.join()  # JOIN_LINE
    os._exit(0)


# ---- shares ----------------------------------------------------------------

cpu = {'heavy': 0.0, 'light': 0.0}
SHARES = {'stop': False}
FINISH = threading.Lock()
LIGHT_N = 100000


def heavy(n):
    x = 0
    for i in range(n):
        x += i
    return x


def light(n):
    x = 0
    for i in range(n):
        x += i
    return x


def alternate():
    register('py-shares')
    blocking['py-shares'] = True
    heavy_n = 3 * LIGHT_N
    rounds = 0
    clock = time.thread_time
    while not SHARES['stop']:
        t0 = clock()
        heavy(heavy_n)
        t1 = clock()
        light(LIGHT_N)
        t2 = clock()
        cpu['heavy'] += t1 - t0
        cpu['light'] += t2 - t1
        rounds += 1
        # Steer the iterations of heavy() to 3/4 of the CPU time: each
        # call costs a little besides its loop.
        if rounds % 20 == 0 and cpu['light'] > 0 and cpu['heavy'] > 0:
            ratio = cpu['heavy'] / cpu['light']
            heavy_n = max(LIGHT_N, min(10 * LIGHT_N,
                                       int(heavy_n * (3.0 / ratio) ** 0.5)))


def report_shares():
    h, l = cpu['heavy'], cpu['light']
    total = h + l
    if total <= 0:
        total = 1.0
    say('share heavy %.3f' % (h / total))
    say('share light %.3f' % (l / total))
    say('cpu heavy %.6f' % h)
    say('cpu light %.6f' % l)


def finish_shares(*_):
    """Once, from the main thread (SIGTERM, the time is up) or the stdin
    thread (end of file): a second caller waits for the first's exit."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if not FINISH.acquire(blocking=False):
        while True:
            time.sleep(60)
    SHARES['stop'] = True
    report_shares()
    os._exit(0)


def main_shares(seconds, light_n):
    global LIGHT_N
    LIGHT_N = light_n
    register('pyframes')
    stop = threading.Event()
    signal.signal(signal.SIGTERM, finish_shares)
    start('py-shares', alternate)
    start('py-stdin', stdin_thread, finish_shares)
    announce(['pyframes', 'py-shares', 'py-stdin'])
    wait_blocked('py-stdin')
    start_t = time.monotonic()
    while not blocking.get('py-shares') or cpu['light'] == 0:
        deadline_passed(start_t, 'thread py-shares made no progress')
        time.sleep(0.005)
    say('ready')
    stop.wait(seconds)  # SHARES_WAIT_LINE
    finish_shares()


def main(argv):
    die_with_parent()
    if len(argv) >= 1 and argv[0] == 'shares':
        seconds = float(argv[1]) if len(argv) >= 2 else TARGET_LIFETIME_S - 5
        main_shares(seconds, int(argv[2]) if len(argv) >= 3 else LIGHT_N)
    elif not argv:
        main_threads()
    else:
        sys.stderr.write('usage: pyframes.py [shares [SECONDS [N]]]\n')
        sys.exit(2)


if __name__ == '__main__':
    main(sys.argv[1:])
