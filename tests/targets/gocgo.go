// gocgo: the cgo target of tests/go-cgo.test, built at test time by the go
// command with a C compiler (cgo).  Two goroutines locked to their own
// threads call C, which runs on the thread's system stack (g0), entered
// through runtime.asmcgocall:
//
//	cread   blocks in read(2) of a pipe nobody writes, inside c_read
//	cspin   computes in c_spin for ever, calling nothing
//
// Protocol (tests/targets/target.h): "thread NAME TID" for each, then
// "ready"; end of file on stdin exits.  It dies with its parent and after
// 600 s.
package main

/*
#include <unistd.h>

static int c_read(int fd) { char c; return (int)read(fd, &c, 1); }

static long c_spin(long n) {
	volatile long s = 0;
	for (;;)
		for (long i = 0; i < n; i++)
			s += i;
	return s;
}
*/
import "C"

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"syscall"
	"time"
)

//go:noinline
func cRead(fd int) { C.c_read(C.int(fd)) }

//go:noinline
func cSpin() { C.c_spin(1000000) }

func thread(name string, ready chan<- string, f func()) {
	go func() {
		runtime.LockOSThread()
		ready <- fmt.Sprintf("thread %s %d", name, syscall.Gettid())
		f()
	}()
}

func main() {
	syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_PDEATHSIG,
		uintptr(syscall.SIGKILL), 0)
	time.AfterFunc(600*time.Second, func() { os.Exit(3) })
	var p [2]int
	if err := syscall.Pipe(p[:]); err != nil {
		fmt.Fprintln(os.Stderr, "target: pipe:", err)
		os.Exit(3)
	}
	ready := make(chan string)
	thread("cread", ready, func() { cRead(p[0]) })
	thread("cspin", ready, cSpin)
	for i := 0; i < 2; i++ {
		fmt.Println(<-ready)
	}
	fmt.Println("ready")
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
	}
}
