package linux

import (
	"errors"
	"os"
	"os/exec"
	"reflect"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestParseStat(t *testing.T) {
	tail := func(state string, threads, cpu, rtprio, policy int) string {
		// fields 3..52 of proc(5)
		f := make([]string, 50)
		for i := range f {
			f[i] = "0"
		}
		f[0] = state
		f[1], f[2] = "1", "4242"      // ppid, pgrp
		f[11], f[12] = "17", "5"      // utime, stime
		f[17] = strconv.Itoa(threads) // num_threads (field 20)
		f[36] = strconv.Itoa(cpu)     // processor (field 39)
		f[37] = strconv.Itoa(rtprio)  // rt_priority (40)
		f[38] = strconv.Itoa(policy)  // policy (41)
		return strings.Join(f, " ")
	}
	for _, tc := range []struct {
		name, line string
		want       Stat
		err        bool
	}{
		{"plain", "4242 (sleep) " + tail("S", 1, 1, 77, 1) + "\n",
			Stat{Pid: 4242, Comm: "sleep", State: 'S', PPid: 1, PGrp: 4242, Utime: 17, Stime: 5, NumThreads: 1, Processor: 1, RTPriority: 77, Policy: 1}, false},
		{"comm with spaces and parens", "7 (a) b (c)) " + tail("R", 12, 0, 0, 0),
			Stat{Pid: 7, Comm: "a) b (c)", State: 'R', PPid: 1, PGrp: 4242, Utime: 17, Stime: 5, NumThreads: 12}, false},
		{"real line", "1234 (cat) R 1000 1234 1000 34816 1234 4194304 96 0 0 0 0 0 0 0 20 0 1 0 2837419 5677056 256 18446744073709551615 94612 94650 140733 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 94600 94610 94640 140736 140737 140738 140739 0\n",
			Stat{Pid: 1234, Comm: "cat", State: 'R', PPid: 1000, PGrp: 1234, NumThreads: 1, Processor: 1}, false},
		{"no comm", "1234 cat R 1", Stat{}, true},
		{"truncated", "1234 (cat) R 1 2 3", Stat{}, true},
		{"bad pid", "x (cat) " + tail("R", 1, 0, 0, 0), Stat{}, true},
		{"bad state", "1 (cat) RR " + tail("R", 1, 0, 0, 0)[2:], Stat{}, true},
		{"bad number", "1 (cat) " + strings.Replace(tail("R", 1, 0, 0, 0), "4242", "x", 1), Stat{}, true},
		{"empty", "", Stat{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseStat([]byte(tc.line))
			if (err != nil) != tc.err {
				t.Fatalf("err = %v, want error %v", err, tc.err)
			}
			if !tc.err && got != tc.want {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
			if s := StatState([]byte(tc.line)); !tc.err && s != tc.want.State {
				t.Errorf("StatState = %q, want %q", s, tc.want.State)
			}
		})
	}
}

func FuzzParseStat(f *testing.F) {
	f.Add([]byte("1 (a) R 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1"))
	f.Fuzz(func(t *testing.T, b []byte) { _, _ = ParseStat(b) })
}

func TestParseCPUList(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []int
		err  bool
	}{
		{"0-1\n", []int{0, 1}, false},
		{"0", []int{0}, false},
		{"0-3,5,7-8", []int{0, 1, 2, 3, 5, 7, 8}, false},
		{"", nil, false},
		{"3-1", nil, true},
		{"a", nil, true},
		{"1,", nil, true},
		{"-1", nil, true},
	} {
		got, err := ParseCPUList(tc.in)
		if (err != nil) != tc.err || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseCPUList(%q) = %v, %v; want %v (error %v)", tc.in, got, err, tc.want, tc.err)
		}
	}
}

func TestReadStatSelf(t *testing.T) {
	// This thread's own stat: it runs while it reads it. (The process's
	// stat is its main thread's, which may be asleep while the test runs
	// on another thread.)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	st, err := ReadStat(os.Getpid(), Gettid())
	if err != nil {
		t.Fatal(err)
	}
	tids, err := Tasks(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if st.Pid != Gettid() || st.State != 'R' || st.NumThreads < 1 {
		t.Errorf("stat of this thread: %+v", st)
	}
	d, err := OpenTaskDir(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	// The runtime may start threads meanwhile: compare a few times.
	for i := 0; ; i++ {
		n, err := d.Count()
		if err != nil {
			t.Fatal(err)
		}
		list, err := d.List(make([]int, 0, 64))
		if err != nil {
			t.Fatal(err)
		}
		if n == len(list) && len(list) >= len(tids)-1 {
			break
		}
		if i > 10 {
			t.Fatalf("Count %d, List %v, Tasks %v", n, list, tids)
		}
	}
	buf := make([]int, 0, 256)
	if a := testing.AllocsPerRun(100, func() {
		_, _ = d.Count()
		buf, _ = d.List(buf)
	}); a != 0 {
		t.Errorf("TaskDir allocates %v times", a)
	}
}

func TestHotPathDoesNotAllocate(t *testing.T) {
	var c Clock
	clk := ProcessCPUClock(os.Getpid())
	tm, err := NewTimer()
	if err != nil {
		t.Fatal(err)
	}
	defer tm.Close()
	ep, efd := epollWithEventfd(t, 1<<40|7)
	var buf [8]byte
	var pp Prio
	a := testing.AllocsPerRun(200, func() {
		if _, err := c.Ns(clk); err != nil {
			t.Fatal(err)
		}
		_ = MonotonicNs()
		if err := tm.ArmAt(c.Monotonic() + 1e9); err != nil {
			t.Fatal(err)
		}
		if err := WriteU64(efd, &buf, 1); err != nil {
			t.Fatal(err)
		}
		if n, err := ep.Wait(0); err != nil || n != 1 || ep.Tag(0) != 1<<40|7 {
			t.Fatalf("epoll: %d %v %x", n, err, ep.Tag(0))
		}
		if _, ok, err := ReadU64(efd, &buf); !ok || err != nil {
			t.Fatal(ok, err)
		}
		_ = pp.SetPriority(Gettid(), 0) // SCHED_OTHER accepts priority 0
	})
	if a != 0 {
		t.Errorf("hot path allocates %v times", a)
	}
	if err := tm.Disarm(); err != nil {
		t.Fatal(err)
	}
}

func TestProcessCPUClockMovesWhenBusy(t *testing.T) {
	var c Clock
	clk := ProcessCPUClock(os.Getpid())
	a, err := c.Ns(clk)
	if err != nil {
		t.Fatal(err)
	}
	// Spin until the clock has moved 4 ms: how much wall time that takes
	// depends on what else the CPU runs; 5 s bounds it.
	b := a
	for end := time.Now().Add(5 * time.Second); b-a < 4e6 && time.Now().Before(end); {
		b, _ = c.Ns(clk)
	}
	if b-a < 4e6 {
		t.Errorf("CPU clock moved %d ns in 5 s of spinning", b-a)
	}
	if _, err := c.Ns(ProcessCPUClock(1 << 22)); err == nil {
		t.Error("clock of a missing process: no error")
	}
}

func TestCPULock(t *testing.T) {
	const cpu = 4095 // no such CPU: the lock file is all this test touches
	l, err := LockCPU(cpu, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = LockCPU(cpu, 30*time.Millisecond)
	if !errors.Is(err, ErrCPUBusy) || !strings.Contains(err.Error(), "PID "+strconv.Itoa(os.Getpid())) {
		t.Fatalf("second LockCPU: %v", err)
	}
	done := make(chan error)
	go func() {
		l2, err := LockCPU(cpu, 2*time.Second)
		if err == nil {
			err = l2.Unlock()
		}
		done <- err
	}()
	time.Sleep(50 * time.Millisecond)
	if err := l.Unlock(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("waiting LockCPU: %v", err)
	}
}

func TestFIFOAndAffinity(t *testing.T) {
	if err := CheckFIFO(80); err != nil {
		t.Skipf("needs SCHED_FIFO: %v", err)
	}
	cpus, err := OnlineCPUs()
	if err != nil || len(cpus) < 2 {
		t.Skipf("needs 2 CPUs: %v", err)
	}
	l, err := LockCPU(cpus[len(cpus)-1], 60*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Unlock()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	before, _ := Affinity(0)
	defer SetAffinity(0, before...)
	if err := SetAffinity(0, cpus[0]); err != nil {
		t.Fatal(err)
	}
	if got, _ := Affinity(0); !reflect.DeepEqual(got, []int{cpus[0]}) {
		t.Errorf("affinity %v", got)
	}
	if err := SetFIFO(0, 10); err != nil {
		t.Fatal(err)
	}
	defer SetOther(0)
	var pp Prio
	if err := pp.SetPriority(Gettid(), 11); err != nil {
		t.Fatal(err)
	}
	if pol, prio, err := Policy(0); err != nil || pol != SchedFIFO || prio != 11 {
		t.Errorf("policy %d prio %d %v", pol, prio, err)
	}
	if err := SetOther(0); err != nil {
		t.Fatal(err)
	}
	if err := pp.SetPriority(1<<22, 1); !errors.Is(err, unix.ESRCH) || !strings.Contains(err.Error(), "sched_setparam") {
		t.Errorf("missing thread: %v", err)
	}
}

func TestMonotonicIsClockMonotonic(t *testing.T) {
	var ts unix.Timespec
	a := MonotonicNs()
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		t.Fatal(err)
	}
	b := MonotonicNs()
	if k := ts.Nano(); k < a || k > b {
		t.Errorf("CLOCK_MONOTONIC %d not within [%d, %d]", k, a, b)
	}
}

func TestParseSchedstat(t *testing.T) {
	for in, want := range map[string]int64{"123456 789 10\n": 123456, "0 0 0": 0} {
		got, err := ParseSchedstat([]byte(in))
		if err != nil || got != want {
			t.Errorf("%q: %d, %v", in, got, err)
		}
	}
	for _, in := range []string{"", "x 1 2", "\n", "12x 3", "99999999999999999999 1"} {
		if _, err := ParseSchedstat([]byte(in)); err == nil {
			t.Errorf("%q: no error", in)
		}
	}
}

func TestParseSteal(t *testing.T) {
	stat := []byte("cpu  97921 0 17082 231765 1296 0 125 122 0 0\ncpu0 29039 0 6139 137480 1063 0 21 72 0 0\ncpu1 68881 0 10942 94284 233 0 104 50 0 0\nintr 1 2\n")
	if ns, err := ParseSteal(stat, 1); err != nil || ns != 500_000_000 {
		t.Fatalf("cpu1: %d, %v", ns, err)
	}
	if _, err := ParseSteal(stat, 2); err == nil {
		t.Fatal("cpu2: no error")
	}
	if _, err := ParseSteal([]byte("cpu1 1 2 3\n"), 1); err == nil {
		t.Fatal("short line: no error")
	}
}

// RuntimeFile reads the same CPU time as ThreadRuntime, sees it grow, does
// not allocate, and reports ErrGone once the thread has exited.
func TestRuntimeFile(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	tid := unix.Gettid()
	f, err := OpenRuntime(os.Getpid(), tid)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	a, err := f.Ns()
	if err != nil || a <= 0 {
		t.Fatalf("Ns = %d, %v", a, err)
	}
	// Spin until 10 ms of this thread's CPU show (within 5 s of wall: the
	// CPU may be shared).
	b := a
	for end := time.Now().Add(5 * time.Second); err == nil && b < a+10_000_000 && time.Now().Before(end); {
		b, err = f.Ns()
	}
	if err != nil || b < a+10_000_000 {
		t.Fatalf("after 5 s of spinning: %d -> %d (%v)", a, b, err)
	}
	c, err := ThreadRuntime(os.Getpid(), tid)
	if err != nil || c < b {
		t.Fatalf("ThreadRuntime %d (%v) before RuntimeFile's %d", c, err, b)
	}
	if n := testing.AllocsPerRun(100, func() { _, _ = f.Ns() }); n != 0 {
		t.Errorf("Ns allocates %v times", n)
	}

	// A process that exits (and is reaped): its file reports ErrGone.
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	g, err := OpenRuntime(cmd.Process.Pid, cmd.Process.Pid)
	if err != nil {
		cmd.Process.Kill()
		t.Fatal(err)
	}
	defer g.Close()
	if _, err := g.Ns(); err != nil {
		t.Errorf("live process: %v", err)
	}
	cmd.Process.Kill()
	cmd.Wait()
	if _, err := g.Ns(); !errors.Is(err, ErrGone) {
		t.Fatalf("exited process: %v, want ErrGone", err)
	}
}

func TestPidsAndTasks(t *testing.T) {
	pids, err := Pids()
	if err != nil {
		t.Fatal(err)
	}
	if !sort.IntsAreSorted(pids) || !slices.Contains(pids, os.Getpid()) {
		t.Errorf("Pids: %d ids, sorted %v, this process %d among them %v", len(pids), sort.IntsAreSorted(pids), os.Getpid(), slices.Contains(pids, os.Getpid()))
	}
	tids, err := Tasks(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if !sort.IntsAreSorted(tids) || !slices.Contains(tids, os.Getpid()) {
		t.Errorf("Tasks: %v, want sorted and holding the main thread %d", tids, os.Getpid())
	}
}

func TestParseStatus(t *testing.T) {
	cat := "Name:\tcat\nUmask:\t0022\nState:\tR (running)\nVmPeak:\t    3060 kB\nVmHWM:\t    1780 kB\n" +
		"VmRSS:\t    1780 kB\nRssAnon:\t     112 kB\nRssFile:\t    1668 kB\nThreads:\t1\nSigQ:\t2/96364\n"
	for _, tc := range []struct {
		name, text string
		want       Status
		err        bool
	}{
		{"real", cat, Status{RSSKB: 1780, RSSAnonKB: 112, Threads: 1}, false},
		{"no RssAnon (Linux < 4.5)", "VmRSS:\t 20480 kB\nThreads:\t17\n", Status{RSSKB: 20480, Threads: 17}, false},
		{"zombie: no VmRSS", "Name:\tx\nState:\tZ (zombie)\nThreads:\t1\n", Status{}, true},
		{"no Threads", "VmRSS:\t 1 kB\n", Status{}, true},
		{"bad number", "VmRSS:\t 1x kB\nThreads:\t1\n", Status{}, true},
		{"bad unit", "VmRSS:\t 1 MB\nThreads:\t1\n", Status{}, true},
		{"negative", "VmRSS:\t 1 kB\nThreads:\t-1\n", Status{}, true},
		{"empty value", "VmRSS:\nThreads:\t1\n", Status{}, true},
		{"empty", "", Status{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseStatus([]byte(tc.text))
			if (err != nil) != tc.err {
				t.Fatalf("err = %v, want error %v", err, tc.err)
			}
			if got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestReadStatusAndOpenFdsSelf(t *testing.T) {
	st, err := ReadStatus(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if st.RSSKB <= 0 || st.Threads < 1 || st.RSSAnonKB > st.RSSKB {
		t.Errorf("this process: %+v", st)
	}
	n, err := OpenFds(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	m, err := OpenFds(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if n < 3 || m != n+2 {
		t.Errorf("open fds %d, then %d after a pipe: want ≥ 3 and 2 more", n, m)
	}
	if _, err := ReadStatus(-1); err == nil {
		t.Error("ReadStatus(-1): no error")
	}
}

// StateFile reads R for a thread that spins and S for one asleep, without
// allocating, and reports ErrGone once the thread has exited.
func TestStateFile(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	f, err := OpenState(os.Getpid(), unix.Gettid())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if st, err := f.State(); err != nil || st != 'R' {
		t.Fatalf("this thread, running: %q, %v", st, err)
	}
	if n := testing.AllocsPerRun(100, func() { _, _ = f.State() }); n != 0 {
		t.Errorf("State allocates %v times", n)
	}
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	g, err := OpenState(cmd.Process.Pid, cmd.Process.Pid)
	if err != nil {
		cmd.Process.Kill()
		t.Fatal(err)
	}
	defer g.Close()
	var st byte
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(time.Millisecond) {
		if st, err = g.State(); err != nil || st == 'S' {
			break
		}
	}
	if err != nil || st != 'S' {
		cmd.Process.Kill()
		t.Fatalf("sleep(1): %q, %v", st, err)
	}
	cmd.Process.Kill()
	cmd.Wait()
	if _, err := g.State(); !errors.Is(err, ErrGone) {
		t.Fatalf("exited process: %v, want ErrGone", err)
	}
}

// Children lists a child this thread started, and nothing once it is
// reaped.
func TestChildren(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	kids, err := Children(os.Getpid(), unix.Gettid())
	cmd.Process.Kill()
	cmd.Wait()
	if err != nil || !slices.Contains(kids, cmd.Process.Pid) {
		t.Fatalf("children %v (%v), want %d among them", kids, err, cmd.Process.Pid)
	}
	if kids, err := Children(os.Getpid(), unix.Gettid()); err != nil || slices.Contains(kids, cmd.Process.Pid) {
		t.Fatalf("after the reap: %v (%v)", kids, err)
	}
}

func TestFdKinds(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	k, err := FdKinds(os.Getpid())
	if err != nil || k["pipe"] < 2 {
		t.Fatalf("%v %v: want two pipes at least", k, err)
	}
	for target, want := range map[string]string{"socket:[12]": "socket", "anon_inode:[pidfd]": "pidfd",
		"anon_inode:[eventpoll]": "anon:eventpoll", "/proc/1/task/1/stat": "proc", "/tmp/x (deleted)": "deleted", "/dev/null": "file"} {
		if got := fdKind(target); got != want {
			t.Errorf("%s: %s, want %s", target, got, want)
		}
	}
}
