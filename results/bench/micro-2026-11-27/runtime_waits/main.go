// Command runtimewaits measures what Go's scheduler costs a goroutine
// locked to its thread that waits in a loop, as tcs's dispatch loop does:
// a 1 ms periodic timerfd read, then a little work, for -d of wall time.
// -mode raw: the read is a raw system call the runtime does not see (as
// tcs's waits); gosched: raw, plus runtime.Gosched every 8 ms; each: a
// Gosched after every wait; block / enter: the read between the runtime's
// entersyscallblock (or entersyscall) and exitsyscall, so that the
// runtime sees a blocking call. It prints the loop thread's CPU and the
// other threads' (sysmon, the scheduler's) per wait. Run on an otherwise
// idle CPU 1: go run . -mode raw -d 5s
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"
	"unsafe"
	_ "unsafe"

	"golang.org/x/sys/unix"
)

//go:linkname entersyscallblock runtime.entersyscallblock
func entersyscallblock()

//go:linkname entersyscall runtime.entersyscall
func entersyscall()

//go:linkname exitsyscall runtime.exitsyscall
func exitsyscall()

var sink float64

//go:noinline
func work(n int) {
	for i := 0; i < n; i++ {
		sink += float64(i) * 1.0001
	}
}

//go:nosplit
func waitRaw(fd int, buf *[8]byte) {
	unix.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&buf[0])), 8)
}

//go:nosplit
func waitBlock(fd int, buf *[8]byte) {
	entersyscallblock()
	unix.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&buf[0])), 8)
	exitsyscall()
}

//go:nosplit
func waitEnter(fd int, buf *[8]byte) {
	entersyscall()
	unix.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&buf[0])), 8)
	exitsyscall()
}

func cpu(clk int32) int64 {
	var ts unix.Timespec
	unix.ClockGettime(clk, &ts)
	return ts.Nano()
}

func ctxsw() string {
	ents, _ := os.ReadDir("/proc/self/task")
	var b strings.Builder
	for _, e := range ents {
		st, _ := os.ReadFile("/proc/self/task/" + e.Name() + "/status")
		var v, nv string
		for _, l := range strings.Split(string(st), "\n") {
			if strings.HasPrefix(l, "voluntary_ctxt_switches:") {
				v = strings.TrimSpace(l[len("voluntary_ctxt_switches:"):])
			}
			if strings.HasPrefix(l, "nonvoluntary_ctxt_switches:") {
				nv = strings.TrimSpace(l[len("nonvoluntary_ctxt_switches:"):])
			}
		}
		sched, _ := os.ReadFile("/proc/self/task/" + e.Name() + "/schedstat")
		fmt.Fprintf(&b, " %s:v%s/nv%s/rt%s", e.Name(), v, nv, strings.Fields(string(sched))[0])
	}
	return b.String()
}

func main() {
	mode := flag.String("mode", "raw", "raw, gosched, block, enter")
	dur := flag.Duration("d", 10*time.Second, "")
	period := flag.Duration("p", time.Millisecond, "")
	n := flag.Int("work", 2000, "")
	flag.Parse()
	runtime.GOMAXPROCS(4)
	runtime.LockOSThread()
	var set unix.CPUSet
	set.Set(1)
	unix.SchedSetaffinity(0, &set)
	// a background goroutine ticking like a bridge would, on other threads
	go func() {
		for {
			time.Sleep(5 * time.Millisecond)
		}
	}()
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, 0)
	if err != nil {
		panic(err)
	}
	its := unix.ItimerSpec{Interval: unix.NsecToTimespec(period.Nanoseconds()), Value: unix.NsecToTimespec(period.Nanoseconds())}
	unix.TimerfdSettime(fd, 0, &its, nil)
	var buf [8]byte
	tclk := int32(unix.CLOCK_THREAD_CPUTIME_ID)
	pclk := int32(unix.CLOCK_PROCESS_CPUTIME_ID)
	t0, p0 := cpu(tclk), cpu(pclk)
	start := time.Now()
	last := start
	waits := 0
	for time.Since(start) < *dur {
		switch *mode {
		case "raw", "gosched", "each":
			waitRaw(fd, &buf)
		case "block":
			waitBlock(fd, &buf)
		case "enter":
			waitEnter(fd, &buf)
		}
		waits++
		work(*n)
		if *mode == "each" {
			runtime.Gosched()
		}
		if *mode == "gosched" && time.Since(last) > 8*time.Millisecond {
			runtime.Gosched()
			last = time.Now()
		}
	}
	t1, p1 := cpu(tclk), cpu(pclk)
	fmt.Printf("%s: %d waits, loop thread %.1f µs/wait, others %.1f µs/wait\n", *mode, waits,
		float64(t1-t0)/1e3/float64(waits), float64((p1-p0)-(t1-t0))/1e3/float64(waits))
	fmt.Println(ctxsw())
}
