// gowork: the Go target of tests/go-dump.test, tests/go-gdb.test and
// bench/accuracy.sh, built at test time by the go command (standard
// library only).  Go binaries keep their CFI in a compressed .debug_frame
// and have no .eh_frame.
//
// Four goroutines are locked to their own threads (runtime.LockOSThread),
// so a thread's stack is a known goroutine's:
//
//	hash  hashes a buffer for ever: crypto/sha256.block is assembly
//	leaf  calls main.leaf for ever, a leaf that builds no frame
//	read  blocks in read(2) on a pipe nobody writes
//	chan  blocks on a channel nobody sends on (its thread sleeps in futex)
//
// and more goroutines sort and fill maps on whatever thread, which keeps
// the garbage collector and the runtime's stack switches busy.
//
// Protocol (tests/targets/target.h): "thread NAME TID" for the locked
// threads, then "ready"; then "ping" on stdin answers "pong N", end of
// file exits.  It dies with its parent and after 600 s.
package main

import (
	"bufio"
	"crypto/sha256"
	"fmt"
	"os"
	"runtime"
	"sort"
	"syscall"
	"time"
)

//go:noinline
func hashLoop(buf []byte) {
	for {
		sum := sha256.Sum256(buf)
		buf[0] ^= sum[0]
	}
}

// leaf has no locals and calls nothing: the compiler gives it no frame
// (no saved frame pointer), so a frame-pointer walk from inside it misses
// leafLoop.
//
//go:noinline
func leaf(x uint64) uint64 {
	for i := 0; i < 100000; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	return x
}

var sink uint64

//go:noinline
func leafLoop() {
	var x uint64
	for {
		x = leaf(x)
		sink = x
	}
}

//go:noinline
func blockedRead(fd int) {
	var b [1]byte
	syscall.Read(fd, b[:])
}

//go:noinline
func blockedChan(c chan int) {
	<-c
}

//go:noinline
func churn(seed int) {
	for {
		m := make(map[int][]int)
		for i := 0; i < 5000; i++ {
			k := (i*7919 + seed) % 1000
			m[k] = append(m[k], i)
		}
		v := make([]int, 0, len(m))
		for k := range m {
			v = append(v, k)
		}
		sort.Ints(v)
		seed += v[len(v)/2]
	}
}

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
	runtime.GOMAXPROCS(8)
	var p [2]int
	if err := syscall.Pipe(p[:]); err != nil {
		fmt.Fprintln(os.Stderr, "target: pipe:", err)
		os.Exit(3)
	}
	ready := make(chan string)
	never := make(chan int)
	buf := make([]byte, 4096)
	thread("hash", ready, func() { hashLoop(buf) })
	thread("leaf", ready, leafLoop)
	thread("read", ready, func() { blockedRead(p[0]) })
	thread("chan", ready, func() { blockedChan(never) })
	for i := 0; i < 4; i++ {
		fmt.Println(<-ready)
	}
	for i := 0; i < 2; i++ {
		go churn(i)
	}
	fmt.Println("ready")
	in := bufio.NewScanner(os.Stdin)
	n := 0
	for in.Scan() {
		if in.Text() == "ping" {
			n++
			fmt.Printf("pong %d\n", n)
		}
	}
}
