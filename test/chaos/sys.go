package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/tcs-robotics/tcs/coordinator/native"
)

// threadCPU is the calling thread's CPU clock, ns.
func threadCPU() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return ts.Nano()
}

// sink keeps the busy loops from being optimised away.
var sink float64

// burn computes until the calling thread has used d of CPU.
func burn(d time.Duration) {
	for end := threadCPU() + int64(d); threadCPU() < end; {
		for range 1000 {
			sink = sink*1.0000001 + 1
		}
	}
}

// spin computes forever.
func spin() {
	for {
		for range 1 << 20 {
			sink = sink*1.0000001 + 1
		}
	}
}

// nativeFds are the client's fds of the native connection from
// native.EnvVar: the shared memory, the request pipe's write end and the
// reply pipe's read end.
func nativeFds() (shm, req, rep int, err error) {
	v := os.Getenv(native.EnvVar)
	parts := strings.Split(v, ",")
	if len(parts) != 3 {
		return 0, 0, 0, fmt.Errorf("%s=%q: want three fds", native.EnvVar, v)
	}
	var fds [3]int
	for i, p := range parts {
		if fds[i], err = strconv.Atoi(p); err != nil {
			return 0, 0, 0, fmt.Errorf("%s=%q: %w", native.EnvVar, v, err)
		}
	}
	return fds[0], fds[1], fds[2], nil
}

// writeAll writes b to fd, whatever it takes.
func writeAll(fd int, b []byte) error {
	for len(b) > 0 {
		n, err := unix.Write(fd, b)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}

// request writes one request record to fd without waiting for its reply.
func request(fd int, op native.Op, ch uint32, arg int64) error {
	var b [native.RecordSize]byte
	native.EncodeRequest(b[:], native.Request{Op: op, Ch: ch, Arg: arg})
	return writeAll(fd, b[:])
}

// call writes one request to fd req and reads its reply from fd rep.
func call(req, rep int, op native.Op, ch uint32, arg int64) (native.Reply, error) {
	if err := request(req, op, ch, arg); err != nil {
		return native.Reply{}, err
	}
	var b [native.RecordSize]byte
	for got := 0; got < len(b); {
		n, err := unix.Read(rep, b[got:])
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return native.Reply{}, err
		case n == 0:
			return native.Reply{}, fmt.Errorf("read reply: the coordinator closed the pipe")
		}
		got += n
	}
	return native.DecodeReply(b[:])
}

// segv dies of a real segmentation fault, as a C program does. Go's
// runtime turns a fault into a panic (exit status 2): its handler is put
// back to the default action first (an all-zero struct sigaction is
// SIG_DFL whatever the architecture's layout), then the process writes to
// a page it may not write.
func segv() {
	var act [4]uint64
	_, _, e := unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(unix.SIGSEGV), uintptr(unsafe.Pointer(&act)), 0, 8, 0, 0)
	if e != 0 {
		fmt.Fprintf(os.Stderr, "chaos: rt_sigaction SIGSEGV: %v\n", e)
		os.Exit(1)
	}
	page, err := unix.Mmap(-1, 0, os.Getpagesize(), unix.PROT_NONE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		fmt.Fprintf(os.Stderr, "chaos: mmap: %v\n", err)
		os.Exit(1)
	}
	page[0] = 1
	fmt.Fprintln(os.Stderr, "chaos: survived a write to a PROT_NONE page")
	os.Exit(1)
}

// execSleep replaces the process with `sleep 30`, a program that never
// speaks the native protocol (its fds stay open across the exec).
func execSleep() {
	path := "/bin/sleep"
	if _, err := os.Stat(path); err != nil {
		path = "/usr/bin/sleep"
	}
	err := unix.Exec(path, []string{"sleep", "30"}, os.Environ())
	fmt.Fprintf(os.Stderr, "chaos: exec %s: %v\n", path, err)
	os.Exit(1)
}

// errnoName is the name of the errno in err ("EPERM"), or "ok".
func errnoName(err error) string {
	if err == nil {
		return "ok"
	}
	if e, ok := err.(unix.Errno); ok {
		if name := unix.ErrnoName(e); name != "" {
			return name
		}
		return strconv.Itoa(int(e))
	}
	return strings.ReplaceAll(err.Error(), " ", "_")
}

// schedParam is struct sched_param.
type schedParam struct{ prio int32 }

// setFIFO is sched_setscheduler(tid, SCHED_FIFO, {prio}).
func setFIFO(tid, prio int) error {
	p := schedParam{int32(prio)}
	_, _, e := unix.RawSyscall(unix.SYS_SCHED_SETSCHEDULER, uintptr(tid), 1, uintptr(unsafe.Pointer(&p)))
	if e != 0 {
		return e
	}
	return nil
}

// policy is the policy and real-time priority of thread tid (0: the
// calling one), as "policy/prio".
func policy(tid int) string {
	pol, _, e := unix.RawSyscall(unix.SYS_SCHED_GETSCHEDULER, uintptr(tid), 0, 0)
	if e != 0 {
		return errnoName(e)
	}
	var p schedParam
	if _, _, e := unix.RawSyscall(unix.SYS_SCHED_GETPARAM, uintptr(tid), uintptr(unsafe.Pointer(&p)), 0); e != 0 {
		return errnoName(e)
	}
	return fmt.Sprintf("%d/%d", pol, p.prio)
}

// statusField is field name of /proc/self/status ("" if absent).
func statusField(name string) string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
