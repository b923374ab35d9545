package linux

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

func TestSleepParseSyscall(t *testing.T) {
	for _, tc := range []struct {
		name, line string
		want       ThreadSyscall
		err        bool
	}{
		{"running", "running\n", ThreadSyscall{Running: true}, false},
		{"clock_nanosleep", "230 0x0 0x0 0x7ffc8e9234e0 0x7ffc8e923520 0x0 0x0 0x7ffc8e9234c8 0x7fb4f61b2503\n",
			ThreadSyscall{Nr: 230, Args: [6]uint64{0, 0, 0x7ffc8e9234e0, 0x7ffc8e923520, 0, 0}, SP: 0x7ffc8e9234c8, PC: 0x7fb4f61b2503}, false},
		{"futex, all bits", "202 0x7f0000000010 0x189 0x0 0x7f0000000020 0x0 0xffffffffffffffff 0x7f0000001000 0x7f0000002000",
			ThreadSyscall{Nr: 202, Args: [6]uint64{0x7f0000000010, 0x189, 0, 0x7f0000000020, 0, 1<<64 - 1}, SP: 0x7f0000001000, PC: 0x7f0000002000}, false},
		{"outside a syscall", "-1 0x7ffd1000 0x401000\n", ThreadSyscall{Nr: -1, SP: 0x7ffd1000, PC: 0x401000}, false},
		{"zombie", "-1 0x0 0x0\n", ThreadSyscall{Nr: -1}, false},
		{"empty", "", ThreadSyscall{}, true},
		{"run", "run", ThreadSyscall{}, true},
		{"short", "230 0x0 0x0 0x1", ThreadSyscall{}, true},
		{"too long", "230 0x0 0x0 0x0 0x0 0x0 0x0 0x0 0x0 0x0", ThreadSyscall{}, true},
		{"not hex", "230 0 0x0 0x0 0x0 0x0 0x0 0x0 0x0", ThreadSyscall{}, true},
		{"bad hex", "230 0xg 0x0 0x0 0x0 0x0 0x0 0x0 0x0", ThreadSyscall{}, true},
		{"17 hex digits", "-1 0x10000000000000000 0x0", ThreadSyscall{}, true},
		{"two spaces", "-1  0x0 0x0", ThreadSyscall{}, true},
		{"minus only", "- 0x0 0x0", ThreadSyscall{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseSyscall([]byte(tc.line))
			if (err != nil) != tc.err {
				t.Fatalf("err = %v, want error %v", err, tc.err)
			}
			if !tc.err && got != tc.want {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
	line := []byte("202 0x7f0000000010 0x189 0x0 0x7f0000000020 0x0 0xffffffff 0x7f0000001000 0x7f0000002000\n")
	if a := testing.AllocsPerRun(100, func() { _, _ = ParseSyscall(line) }); a != 0 {
		t.Errorf("ParseSyscall allocates %v times", a)
	}
}

func FuzzSleepParseSyscall(f *testing.F) {
	f.Add([]byte("230 0x0 0x0 0x7ffc8e9234e0 0x7ffc8e923520 0x0 0x0 0x7ffc8e9234c8 0x7fb4f61b2503\n"))
	f.Add([]byte("-1 0x0 0x0\n"))
	f.Add([]byte("running\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		sc, err := ParseSyscall(b)
		if err == nil {
			_ = timeoutOf(&sc)
		}
	})
}

func TestSleepTimeoutOf(t *testing.T) {
	const p = 0x7f00_0000_1000 // a pointer argument
	sc := func(nr int, args ...uint64) ThreadSyscall {
		s := ThreadSyscall{Nr: nr}
		copy(s.Args[:], args)
		return s
	}
	none := sleepTimeout{}
	rel := sleepTimeout{kind: relTimespec, addr: p}
	abs := func(clock int32) sleepTimeout { return sleepTimeout{kind: absTimespec, addr: p, clock: clock} }
	ms := func(n int64) sleepTimeout { return sleepTimeout{kind: relNs, ns: n * 1e6} }
	for _, tc := range []struct {
		name string
		sc   ThreadSyscall
		want sleepTimeout
	}{
		{"running", ThreadSyscall{Running: true}, none},
		{"outside a syscall", ThreadSyscall{Nr: -1}, none},
		{"read", sc(0, 3, p, 1), none},
		{"nanosleep", sc(nrNanosleep, p, 0), rel},
		{"nanosleep NULL", sc(nrNanosleep, 0, 0), none},
		{"clock_nanosleep realtime rel (glibc nanosleep)", sc(nrClockNanosleep, 0, 0, p, 0), rel},
		{"clock_nanosleep monotonic abs", sc(nrClockNanosleep, 1, 1, p, 0), abs(clockMonotonic)},
		{"clock_nanosleep boottime alarm abs", sc(nrClockNanosleep, 9, 1, p, 0), abs(clockBoottime)},
		{"clock_nanosleep tai abs", sc(nrClockNanosleep, 11, 1, p, 0), abs(clockTAI)},
		{"clock_nanosleep upper bits of flags ignored", sc(nrClockNanosleep, 0xdead_0000_0000, 0xffff_ffff_0000_0001, p), abs(clockRealtime)},
		{"clock_nanosleep process CPU clock", sc(nrClockNanosleep, 2, 0, p, 0), none},
		{"clock_nanosleep other process's CPU clock", sc(nrClockNanosleep, uint64(uint32(ProcessCPUClock(1234))), 1, p, 0), none},
		{"futex wait untimed", sc(nrFutex, p, 128, 0, 0), none},
		{"futex wait private", sc(nrFutex, p, 128, 0, p), rel},
		{"futex wait_bitset", sc(nrFutex, p, 9, 0, p, 0, 0xffffffff), abs(clockMonotonic)},
		{"futex wait_bitset private realtime (pthread_cond_timedwait)", sc(nrFutex, p, 9|128|256, 0, p, 0, 0xffffffff), abs(clockRealtime)},
		{"futex wait_bitset untimed", sc(nrFutex, p, 9|128, 0, 0, 0, 0xffffffff), none},
		{"futex wait_requeue_pi", sc(nrFutex, p, 11, 0, p), abs(clockMonotonic)},
		{"futex lock_pi", sc(nrFutex, p, 6|128, 0, p), abs(clockRealtime)},
		{"futex lock_pi2 realtime", sc(nrFutex, p, 13|256, 0, p), abs(clockRealtime)},
		{"futex wake", sc(nrFutex, p, 1, 1, 0), none},
		{"futex_waitv monotonic", sc(nrFutexWaitv, p, 1, 0, p, 1), abs(clockMonotonic)},
		{"futex_waitv untimed", sc(nrFutexWaitv, p, 1, 0, 0, 1), none},
		{"poll 100 ms", sc(nrPoll, p, 1, 100), ms(100)},
		{"poll forever", sc(nrPoll, p, 1, 0xffffffff), none},
		{"poll forever, 64-bit -1", sc(nrPoll, p, 1, 1<<64-1), none},
		{"epoll_wait 100 ms, garbage upper bits", sc(nrEpollWait, 4, p, 16, 0xabcd_0000_0000_0064), ms(100)},
		{"epoll_wait forever", sc(nrEpollWait, 4, p, 16, 0xffffffff), none},
		{"epoll_pwait 0 ms", sc(nrEpollPwait, 4, p, 16, 0, 0, 8), ms(0)},
		{"epoll_pwait2", sc(nrEpollPwait2, 4, p, 16, p, 0, 8), rel},
		{"epoll_pwait2 forever", sc(nrEpollPwait2, 4, p, 16, 0, 0, 8), none},
		{"select", sc(nrSelect, 0, 0, 0, 0, p), sleepTimeout{kind: relTimeval, addr: p}},
		{"select forever", sc(nrSelect, 1, p, 0, 0, 0), none},
		{"pselect6", sc(nrPselect6, 0, 0, 0, 0, p, 0), rel},
		{"ppoll", sc(nrPpoll, p, 1, p, 0, 8), rel},
		{"rt_sigtimedwait", sc(nrRtSigtimedwait, p, 0, p, 8), rel},
		{"restart_syscall", sc(219), none},
	} {
		if got := timeoutOf(&tc.sc); got != tc.want {
			t.Errorf("%s: got %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

// sleeperC is the helper the tests run: one thread (or more) in the sleep
// argv[1] names, for argv[2] ms, in a loop. alarm() bounds its life.
const sleeperC = `
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static long ms;

static struct timespec rel(void) {
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
	return ts;
}

static struct timespec deadline(clockid_t clk) {
	struct timespec ts;
	clock_gettime(clk, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (ms % 1000) * 1000000;
	if (ts.tv_nsec >= 1000000000) { ts.tv_sec++; ts.tv_nsec -= 1000000000; }
	return ts;
}

struct waitv { uint64_t val, uaddr; uint32_t flags, reserved; };

static uint32_t word, owner;

static void *cond_loop(void *arg) {
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	pthread_cond_t c = PTHREAD_COND_INITIALIZER;
	pthread_mutex_lock(&m);
	for (;;) {
		struct timespec ts = deadline(CLOCK_REALTIME);
		pthread_cond_timedwait(&c, &m, &ts);
	}
	return arg;
}

static void *lockpi_loop(void *arg) {
	for (;;) {
		struct timespec ts = deadline(CLOCK_REALTIME);
		syscall(SYS_futex, &owner, FUTEX_LOCK_PI_PRIVATE, 0, &ts, NULL, 0);
	}
	return arg;
}

static void *untimed(void *arg) {
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	pthread_cond_t c = PTHREAD_COND_INITIALIZER;
	pthread_mutex_lock(&m);
	for (;;) pthread_cond_wait(&c, &m);
	return arg;
}

static void *epoll_loop(void *arg) {
	int ep = epoll_create1(0);
	struct epoll_event ev;
	for (;;) epoll_wait(ep, &ev, 1, (int)(long)arg);
	return arg;
}

static void start(void *(*fn)(void *), void *arg) {
	pthread_t t;
	if (pthread_create(&t, NULL, fn, arg)) { perror("pthread_create"); exit(2); }
}

int main(int argc, char **argv) {
	if (argc < 3) { fprintf(stderr, "usage: sleeper MODE MS\n"); return 2; }
	const char *mode = argv[1];
	ms = atol(argv[2]);
	alarm(60);
	int ep = epoll_create1(0);
	struct epoll_event ev;
	char buf[1];
	for (;;) {
		struct timespec ts = rel();
		if (!strcmp(mode, "nanosleep")) { /* glibc: clock_nanosleep(CLOCK_REALTIME, 0, ...) */
			nanosleep(&ts, NULL);
		} else if (!strcmp(mode, "sys_nanosleep")) {
			syscall(SYS_nanosleep, &ts, NULL);
		} else if (!strcmp(mode, "abs_monotonic")) {
			ts = deadline(CLOCK_MONOTONIC);
			while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {}
		} else if (!strcmp(mode, "futex_wait")) {
			syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 0, &ts, NULL, 0);
		} else if (!strcmp(mode, "futex_waitv")) {
			struct waitv w = {0, (uintptr_t)&word, 2 | 128, 0}; /* FUTEX2_SIZE_U32 | FUTEX2_PRIVATE */
			ts = deadline(CLOCK_MONOTONIC);
			syscall(449, &w, 1, 0, &ts, CLOCK_MONOTONIC);
		} else if (!strcmp(mode, "poll")) {
			poll(NULL, 0, (int)ms);
		} else if (!strcmp(mode, "ppoll")) {
			syscall(SYS_ppoll, NULL, 0, &ts, NULL, 8);
		} else if (!strcmp(mode, "select")) {
			struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
			syscall(SYS_select, 0, NULL, NULL, NULL, &tv);
		} else if (!strcmp(mode, "pselect6")) {
			syscall(SYS_pselect6, 0, NULL, NULL, NULL, &ts, NULL);
		} else if (!strcmp(mode, "epoll_wait")) {
			syscall(SYS_epoll_wait, ep, &ev, 1, (int)ms);
		} else if (!strcmp(mode, "epoll_pwait")) {
			syscall(SYS_epoll_pwait, ep, &ev, 1, (int)ms, NULL, 8);
		} else if (!strcmp(mode, "epoll_pwait2")) {
			syscall(441, ep, &ev, 1, &ts, NULL, 8);
		} else if (!strcmp(mode, "sigtimedwait")) {
			sigset_t set;
			sigemptyset(&set);
			sigaddset(&set, SIGUSR1);
			sigprocmask(SIG_BLOCK, &set, NULL);
			sigtimedwait(&set, NULL, &ts);
		} else if (!strcmp(mode, "pipe")) { /* untimed */
			if (read(0, buf, 1) <= 0) return 0;
		} else if (!strcmp(mode, "vfork")) { /* uninterruptible (D) while the child sleeps */
			if (vfork() == 0) {
				nanosleep(&ts, NULL);
				_exit(0);
			}
		} else if (!strcmp(mode, "busy")) {
			for (volatile unsigned long i = 0;; i++) {}
		} else if (!strcmp(mode, "cond")) { /* a thread in pthread_cond_timedwait; main untimed */
			start(cond_loop, NULL);
			for (;;) pause();
		} else if (!strcmp(mode, "lock_pi")) { /* a thread in FUTEX_LOCK_PI on a lock main holds */
			owner = (uint32_t)gettid();
			start(lockpi_loop, NULL);
			for (;;) pause();
		} else if (!strcmp(mode, "ten")) { /* 10 threads, like a ROS node: main in a nanosleep loop */
			for (int i = 0; i < 3; i++) start(cond_loop, NULL);
			for (int i = 0; i < 3; i++) start(epoll_loop, (void *)100L);
			for (int i = 0; i < 3; i++) start(untimed, NULL);
			for (;;) { struct timespec r = {0, 1000000}; nanosleep(&r, NULL); }
		} else {
			fprintf(stderr, "unknown mode %s\n", mode);
			return 2;
		}
	}
}
`

// buildSleeper compiles sleeperC into dir and returns the binary's path; it
// skips when gcc is missing.
func buildSleeper(tb testing.TB, dir string) string {
	tb.Helper()
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		tb.Skipf("needs gcc to build the sleeping helper: %v", err)
	}
	src := filepath.Join(dir, "sleeper.c")
	bin := filepath.Join(dir, "sleeper")
	if err := os.WriteFile(src, []byte(sleeperC), 0o644); err != nil {
		tb.Fatal(err)
	}
	if out, err := exec.Command(gcc, "-O1", "-pthread", "-o", bin, src).CombinedOutput(); err != nil {
		tb.Fatalf("gcc: %v\n%s", err, out)
	}
	return bin
}

// startSleeper starts the helper in mode for ms and kills it (by PID) at the
// end of the test; its stdin is a pipe nobody writes to.
func startSleeper(tb testing.TB, bin, mode string, ms int) *exec.Cmd {
	tb.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command(bin, mode, strconv.Itoa(ms))
	cmd.Stdin = r
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	r.Close()
	tb.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		w.Close()
	})
	return cmd
}

// sampleUntil scans pid until cond holds, for at most 3 s, and returns the
// last scan.
func sampleUntil(t *testing.T, s *SleepScanner, pid int, what string, cond func(SleepScan) bool) SleepScan {
	t.Helper()
	var r SleepScan
	var err error
	for end := time.Now().Add(3 * time.Second); time.Now().Before(end); time.Sleep(time.Millisecond) {
		if r, err = s.Scan(pid, nil); err != nil {
			t.Fatalf("Scan: %v", err)
		}
		if cond(r) {
			return r
		}
	}
	t.Fatalf("%s: not seen in 3 s; last scan %+v", what, r)
	return r
}

func newScanner(t testing.TB) *SleepScanner {
	s, err := NewSleepScanner()
	if err != nil {
		t.Skip(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s
}

func TestSleepScanner(t *testing.T) {
	bin := buildSleeper(t, t.TempDir())
	const ms = int64(time.Millisecond)

	t.Run("nanosleep 1 ms loop", func(t *testing.T) {
		s := newScanner(t)
		pid := startSleeper(t, bin, "nanosleep", 1).Process.Pid
		// The loop is mostly asleep: sample until it is seen asleep.
		r := sampleUntil(t, s, pid, "timed sleep", func(r SleepScan) bool { return r.Timed == 1 })
		if r.Threads != 1 || r.Shortest != 1*ms || r.ShortestExact || r.ShortestNr != nrClockNanosleep || r.ShortestTid != pid {
			t.Errorf("scan %+v, want clock_nanosleep (230) of 1 ms, relative", r)
		}
		rem, ok, err := s.Shortest(pid, []int{pid})
		for i := 0; !ok && err == nil && i < 1000; i++ {
			rem, ok, err = s.Shortest(pid, []int{pid})
		}
		if err != nil || !ok || rem != 1*ms {
			t.Errorf("Shortest = %d, %v, %v; want 1 ms", rem, ok, err)
		}
	})

	t.Run("10 s relative", func(t *testing.T) {
		s := newScanner(t)
		pid := startSleeper(t, bin, "nanosleep", 10_000).Process.Pid
		r := sampleUntil(t, s, pid, "timed sleep", func(r SleepScan) bool { return r.Timed == 1 })
		if r.Shortest != 10_000*ms || r.ShortestExact {
			t.Errorf("scan %+v, want 10 s (the request)", r)
		}
	})

	t.Run("10 s absolute", func(t *testing.T) {
		s := newScanner(t)
		pid := startSleeper(t, bin, "abs_monotonic", 10_000).Process.Pid
		r := sampleUntil(t, s, pid, "timed sleep", func(r SleepScan) bool { return r.Timed == 1 })
		time.Sleep(100 * time.Millisecond)
		r2, err := s.Scan(pid, nil)
		if err != nil {
			t.Fatal(err)
		}
		// A slow machine may take a while to start the helper and sample it;
		// the deadline cannot be more than 10 s away nor (within this
		// test's 3 s of sampling) less than 5 s.
		if !r.ShortestExact || r.ShortestNr != nrClockNanosleep || r.Shortest > 10_000*ms || r.Shortest < 5_000*ms {
			t.Errorf("scan %+v, want about 10 s, exact", r)
		}
		if d := r.Shortest - r2.Shortest; r2.Timed != 1 || d < 100*ms {
			t.Errorf("100 ms later: scan %+v, %d ns less", r2, d)
		}
	})

	t.Run("untimed read on a pipe", func(t *testing.T) {
		s := newScanner(t)
		pid := startSleeper(t, bin, "pipe", 0).Process.Pid
		r := sampleUntil(t, s, pid, "blocked", func(r SleepScan) bool { return r.Blocked == 1 })
		if r.Timed != 0 || r.Running != 0 {
			t.Errorf("scan %+v, want one blocked thread", r)
		}
		if _, ok, err := s.Shortest(pid, nil); ok || err != nil {
			t.Errorf("Shortest: ok %v, %v; want false, nil", ok, err)
		}
	})

	t.Run("uninterruptible: vfork", func(t *testing.T) {
		s := newScanner(t)
		pid := startSleeper(t, bin, "vfork", 10_000).Process.Pid
		r := sampleUntil(t, s, pid, "uninterruptible", func(r SleepScan) bool { return r.Host == 1 })
		if r.Threads != 1 || r.Timed != 0 || r.Blocked != 0 || r.Running != 0 {
			t.Errorf("scan %+v, want one thread waiting on the host", r)
		}
	})

	t.Run("pthread_cond_timedwait 2 ms", func(t *testing.T) {
		s := newScanner(t)
		pid := startSleeper(t, bin, "cond", 2).Process.Pid
		r := sampleUntil(t, s, pid, "timed wait", func(r SleepScan) bool { return r.Threads == 2 && r.Timed == 1 && r.Blocked == 1 })
		if !r.ShortestExact || r.ShortestNr != nrFutex || r.ShortestTid == pid || r.Shortest > 2*ms || r.Shortest < 0 {
			t.Errorf("scan %+v, want futex (202) on the second thread, exact, <= 2 ms", r)
		}
	})

	t.Run("busy", func(t *testing.T) {
		s := newScanner(t)
		cmd := startSleeper(t, bin, "busy", 0)
		pid := cmd.Process.Pid
		r := sampleUntil(t, s, pid, "running", func(r SleepScan) bool { return r.Running == 1 })
		if r.Threads != 1 || r.Timed != 0 || r.Blocked != 0 {
			t.Errorf("scan %+v, want one running thread", r)
		}
		// Stopped, it is blocked outside a system call.
		if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		r = sampleUntil(t, s, pid, "stopped", func(r SleepScan) bool { return r.Blocked == 1 })
		if r.Running != 0 || r.Timed != 0 {
			t.Errorf("stopped: scan %+v, want one blocked thread", r)
		}
	})

	t.Run("states only", func(t *testing.T) {
		s := newScanner(t)
		for _, tc := range []struct {
			mode string
			ms   int
			want func(SleepScan) bool
		}{
			{"pipe", 0, func(r SleepScan) bool { return r.Blocked == 1 && r.Host == 0 && r.Running == 0 }},
			{"vfork", 10_000, func(r SleepScan) bool { return r.Host == 1 && r.Blocked == 0 && r.Running == 0 }},
			{"busy", 0, func(r SleepScan) bool { return r.Running == 1 && r.Host == 0 && r.Blocked == 0 }},
		} {
			pid := startSleeper(t, bin, tc.mode, tc.ms).Process.Pid
			var r SleepScan
			var err error
			ok := false
			for end := time.Now().Add(3 * time.Second); !ok && time.Now().Before(end); time.Sleep(time.Millisecond) {
				if r, err = s.States(pid, []int{pid}); err != nil {
					t.Fatalf("%s: States: %v", tc.mode, err)
				}
				ok = tc.want(r)
			}
			if !ok || r.Threads != 1 || r.Timed != 0 || r.Shortest != 0 {
				t.Errorf("%s: States %+v", tc.mode, r)
			}
		}
	})

	t.Run("vanished", func(t *testing.T) {
		s := newScanner(t)
		cmd := startSleeper(t, bin, "pipe", 0)
		pid := cmd.Process.Pid
		gone := startSleeper(t, bin, "pipe", 0)
		goneTid := gone.Process.Pid
		_ = gone.Process.Kill()
		_ = gone.Wait()
		// A tid that is not (or no longer) the process's is skipped.
		r, err := s.Scan(pid, []int{pid, goneTid})
		if err != nil || r.Threads != 1 {
			t.Errorf("scan with a gone tid: %+v, %v", r, err)
		}
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if _, err := s.Scan(pid, nil); !errors.Is(err, ErrGone) {
			t.Errorf("exited process: %v, want ErrGone", err)
		}
		if _, err := s.Scan(pid, []int{pid}); !errors.Is(err, ErrGone) {
			t.Errorf("exited process, tids given: %v, want ErrGone", err)
		}
		if len(s.procs) != 0 {
			t.Errorf("scanner keeps %d processes, want 0", len(s.procs))
		}
	})

	t.Run("ten threads, no allocation", func(t *testing.T) {
		s := newScanner(t)
		pid := startSleeper(t, bin, "ten", 0).Process.Pid
		r := sampleUntil(t, s, pid, "10 threads, 7 timed", func(r SleepScan) bool { return r.Threads == 10 && r.Timed == 7 })
		if r.Shortest > 100*ms {
			t.Errorf("scan %+v: shortest > 100 ms", r)
		}
		tids, err := Tasks(pid)
		if err != nil {
			t.Fatal(err)
		}
		for name, list := range map[string][]int{"tids given": tids, "tids read": nil} {
			if a := testing.AllocsPerRun(100, func() {
				if _, err := s.Scan(pid, list); err != nil {
					t.Fatal(err)
				}
			}); a != 0 {
				t.Errorf("%s: Scan allocates %v times", name, a)
			}
		}
		if got := len(s.procs[pid].threads); got != 10 {
			t.Errorf("scanner keeps %d threads, want 10", got)
		}
	})
}

// TestSleepScannerSyscalls checks each recognised sleep on a real thread
// sleeping 3 s in a loop.
func TestSleepScannerSyscalls(t *testing.T) {
	bin := buildSleeper(t, t.TempDir())
	const req = int64(3 * time.Second)
	for _, tc := range []struct {
		mode  string
		nr    int
		exact bool // a deadline: remaining in (0, 3 s]; else exactly 3 s
		other bool // the sleeping thread is not the main one, which is blocked
	}{
		{"sys_nanosleep", nrNanosleep, false, false},
		{"nanosleep", nrClockNanosleep, false, false},
		{"abs_monotonic", nrClockNanosleep, true, false},
		{"futex_wait", nrFutex, false, false},
		{"futex_waitv", nrFutexWaitv, true, false},
		{"lock_pi", nrFutex, true, true},
		{"cond", nrFutex, true, true},
		{"poll", nrPoll, false, false},
		{"ppoll", nrPpoll, false, false},
		{"select", nrSelect, false, false},
		{"pselect6", nrPselect6, false, false},
		{"epoll_wait", nrEpollWait, false, false},
		{"epoll_pwait", nrEpollPwait, false, false},
		{"epoll_pwait2", nrEpollPwait2, false, false},
		{"sigtimedwait", nrRtSigtimedwait, false, false},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			t.Parallel()
			s := newScanner(t)
			pid := startSleeper(t, bin, tc.mode, int(req/1e6)).Process.Pid
			r := sampleUntil(t, s, pid, "timed sleep", func(r SleepScan) bool { return r.Timed == 1 })
			t.Logf("pid %d: %+v", pid, r)
			if r.ShortestNr != tc.nr || r.ShortestExact != tc.exact || (r.ShortestTid != pid) == !tc.other {
				t.Errorf("scan %+v, want system call %d, exact %v, other thread %v", r, tc.nr, tc.exact, tc.other)
			}
			if tc.exact && (r.Shortest <= 0 || r.Shortest > req) || !tc.exact && r.Shortest != req {
				t.Errorf("remaining %d ns, want 3 s (exact %v)", r.Shortest, tc.exact)
			}
		})
	}
}

// BenchmarkSleepShortest scans a 10-thread process (a main thread in a
// nanosleep(1 ms) loop, 3 in pthread_cond_timedwait, 3 in epoll_wait(100
// ms), 3 in pthread_cond_wait).
func BenchmarkSleepShortest(b *testing.B) {
	bin := buildSleeper(b, b.TempDir())
	s := newScanner(b)
	pid := startSleeper(b, bin, "ten", 0).Process.Pid
	var tids []int
	for end := time.Now().Add(3 * time.Second); len(tids) != 10; time.Sleep(time.Millisecond) {
		if time.Now().After(end) {
			b.Fatalf("helper has threads %v, want 10", tids)
		}
		tids, _ = Tasks(pid)
	}
	for _, bc := range []struct {
		name string
		tids []int
	}{{"tids", tids}, {"nil", nil}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := s.Shortest(pid, bc.tids); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
