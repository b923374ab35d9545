package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/tcs-robotics/tcs/coordinator/native"
)

// runSpin is `chaos spin`: hello, then a busy loop that never ends its
// first activation.
func runSpin(args []string) int {
	if code := parse(flags("spin"), args); code >= 0 {
		return code
	}
	connect()
	logf("spin", "pid", os.Getpid())
	spin()
	return 0
}

// runFlood is `chaos flood`: it writes messages on a channel at a rate per
// second of its own thread CPU (as fast as it can when a write costs more
// than the interval), each [π, sequence number, its CPU in s], and logs
// how many it wrote every --report messages. π: a controller that takes
// its target from the channel (tcs client pd --plan) keeps balancing.
func runFlood(args []string) int {
	fs := flags("flood")
	rate := fs.Float64("rate", 100_000, "messages per second of its own CPU")
	ch := fs.Int("channel", 1, "channel (≥ 1)")
	every := fs.Int64("report", 10_000, "log the count every this many messages")
	if code := parse(fs, args); code >= 0 {
		return code
	}
	if *rate <= 0 || *ch < 1 || *every < 1 {
		fmt.Fprintln(os.Stderr, "chaos flood: --rate must be > 0, --channel ≥ 1, --report ≥ 1")
		return 2
	}
	c := connect()
	interval := int64(1e9 / *rate)
	logf("flood", "rate", *rate, "channel", *ch, "interval_ns", interval)
	var msg [3]float64
	next := threadCPU()
	for seq := int64(1); ; seq++ {
		for threadCPU() < next {
		}
		next += interval
		msg[0], msg[1], msg[2] = math.Pi, float64(seq), float64(threadCPU())/1e9
		if err := c.Write(*ch, msg[:]); err != nil {
			logf("flooded", "sent", seq-1)
			return finish(err)
		}
		if seq%*every == 0 {
			logf("flooded", "sent", seq, "cpu_s", msg[2])
		}
	}
}

// runThreads is `chaos threads`: n threads, each blocked forever in a
// read of a pipe nobody writes, then a controller.
func runThreads(args []string) int {
	fs := flags("threads")
	n := fs.Int("n", 1000, "threads to start")
	if code := parse(fs, args); code >= 0 {
		return code
	}
	c := connect()
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		fmt.Fprintf(os.Stderr, "chaos: pipe: %v\n", err)
		return 1
	}
	started := make(chan int, *n)
	for range *n {
		go func() {
			// Locked and blocked in a system call: one OS thread each.
			runtime.LockOSThread()
			started <- unix.Gettid()
			var b [1]byte
			for {
				if _, err := unix.Read(p[0], b[:]); err != unix.EINTR {
					break
				}
			}
			select {} // keep the thread: a locked goroutine's end ends it
		}()
	}
	for range *n {
		<-started
	}
	// The threads exist; give them time to reach their read.
	time.Sleep(50 * time.Millisecond)
	logf("threads", "started", *n, "threads", statusField("Threads"))
	return newController(c).forever()
}

// runFork is `chaos fork`: after --after activations it forks a child that
// stays in its process group and, by a double fork and setsid, a
// grandchild in a session of its own. It logs the pid and scheduling
// policy at birth of the child and of the session's leader ("forked"),
// which it does not wait for. The child and the grandchild, when they get
// to run, log their pids and policy ("child"), compute for --spin of wall
// time and sleep --life. Then it runs on as a controller or exits 0.
func runFork(args []string) int {
	fs := flags("fork")
	then := fs.String("then", "stay", "after forking: stay (run on as a controller) or exit (status 0)")
	life := fs.Duration("life", 30*time.Second, "how long the children live")
	spinFor := fs.Duration("spin", 0, "how long (wall time) the children compute before they sleep")
	after := fs.Int("after", 3, "activations before forking")
	if code := parse(fs, args); code >= 0 {
		return code
	}
	if *then != "stay" && *then != "exit" {
		fmt.Fprintln(os.Stderr, "chaos fork: --then must be stay or exit")
		return 2
	}
	c := connect()
	t := newController(c)
	if err := t.run(*after); err != nil {
		return finish(err)
	}
	// The children are this program again, in mode child: Go cannot fork
	// without exec.
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(os.Stderr, "chaos: %v\n", err)
		return 1
	}
	// The group child: in this process group.
	pid, err := forkExec([]string{self, "__child", "group", life.String(), spinFor.String()}, &unix.SysProcAttr{})
	if err != nil {
		fmt.Fprintf(os.Stderr, "chaos: fork: %v\n", err)
		return 1
	}
	pgid, _ := unix.Getpgid(pid)
	logf("forked", "kind", "group", "pid", pid, "pgid", pgid, "policy", policy(pid))
	// The double fork: a child in a session (and process group) of its
	// own forks the grandchild and exits, so the grandchild is nobody's
	// child in the run. Not waited for: once it runs is up to tcs.
	leader, err := forkExec([]string{self, "__child", "session", life.String(), spinFor.String()}, &unix.SysProcAttr{Setsid: true})
	if err != nil {
		fmt.Fprintf(os.Stderr, "chaos: fork: %v\n", err)
		return 1
	}
	logf("forked", "kind", "leader", "pid", leader, "policy", policy(leader))
	if *then == "exit" {
		logf("exit", "code", 0)
		return 0
	}
	return t.forever()
}

// forkExec starts argv with attr, its stderr the log, and returns its
// pid.
func forkExec(argv []string, attr *unix.SysProcAttr) (int, error) {
	p, err := os.StartProcess(argv[0], argv, &os.ProcAttr{
		Files: []*os.File{nil, nil, os.Stderr},
		Sys:   attr,
	})
	if err != nil {
		return 0, err
	}
	pid := p.Pid
	_ = p.Release()
	return pid, nil
}

// runChild is `chaos __child KIND LIFE SPIN`, a child of chaos fork: a
// session child forks the grandchild and exits (a double fork); the last
// one logs itself, computes for SPIN of wall time and sleeps LIFE.
func runChild(args []string) int {
	if len(args) != 3 {
		return 2
	}
	kind := args[0]
	life, err1 := time.ParseDuration(args[1])
	spinFor, err2 := time.ParseDuration(args[2])
	if err1 != nil || err2 != nil {
		return 2
	}
	if kind == "session" {
		self, err := os.Executable()
		if err != nil {
			return 1
		}
		if _, err := forkExec([]string{self, "__child", "session-grandchild", args[1], args[2]}, &unix.SysProcAttr{}); err != nil {
			fmt.Fprintf(os.Stderr, "chaos: fork grandchild: %v\n", err)
			return 1
		}
		return 0
	}
	if kind == "session-grandchild" {
		kind = "session"
	}
	pid := os.Getpid()
	pgid, _ := unix.Getpgid(pid)
	sid, _ := unix.Getsid(pid)
	logf("child", "kind", kind, "pid", pid, "ppid", os.Getppid(), "pgid", pgid, "sid", sid, "policy", policy(0),
		"cpus", statusField("Cpus_allowed_list"))
	for end := time.Now().Add(spinFor); time.Now().Before(end); {
		for range 1000 {
			sink = sink*1.0000001 + 1
		}
	}
	time.Sleep(life)
	return 0
}

// runEscape is `chaos escape`: it tries to raise its thread to
// SCHED_FIFO 99 and to let it run on every CPU, logs what each call
// returned and what the thread's policy and CPUs are afterwards, and runs
// on as a controller.
func runEscape(args []string) int {
	if code := parse(flags("escape"), args); code >= 0 {
		return code
	}
	c := connect()
	t := newController(c)
	if err := t.run(1); err != nil {
		return finish(err)
	}
	before, cpusBefore := policy(0), statusField("Cpus_allowed_list")
	fifo := setFIFO(0, 99)
	// Every CPU the set can name: the kernel keeps those that exist.
	var all unix.CPUSet
	for cpu := range len(all) * 64 {
		all.Set(cpu)
	}
	aff := unix.SchedSetaffinity(0, &all)
	logf("escape", "pid", os.Getpid(), "tid", unix.Gettid(), "setscheduler_fifo_99", errnoName(fifo),
		"setaffinity_all", errnoName(aff), "policy_before", before, "policy_after", policy(0),
		"cpus_before", cpusBefore, "cpus_after", statusField("Cpus_allowed_list"))
	return t.forever()
}

// runDeaf is `chaos deaf`: after --after activations it never reads a
// reply again. requests: it sends requests (a Recv each) as fast as the
// pipe takes them; idle: it says it idles (WriteIdle) and computes on,
// again every 200 µs of its CPU.
func runDeaf(args []string) int {
	fs := flags("deaf")
	what := fs.String("what", "requests", "requests or idle")
	after := fs.Int("after", 3, "activations before going deaf")
	if code := parse(fs, args); code >= 0 {
		return code
	}
	if *what != "requests" && *what != "idle" {
		fmt.Fprintln(os.Stderr, "chaos deaf: --what must be requests or idle")
		return 2
	}
	c := connect()
	t := newController(c)
	if err := t.run(*after); err != nil {
		return finish(err)
	}
	_, req, _, err := nativeFds()
	if err != nil {
		fmt.Fprintf(os.Stderr, "chaos: %v\n", err)
		return 1
	}
	logf("deaf", "what", *what, "pid", os.Getpid())
	for n := int64(1); ; n++ {
		var err error
		if *what == "requests" {
			err = request(req, native.OpRecv, 1, 0)
		} else {
			burn(200 * time.Microsecond)
			err = request(req, native.OpWriteIdle, 0, (t.k+n)*t.period)
		}
		if err != nil {
			logf("deaf-error", "sent", n-1, "err", errnoName(err))
			return 1
		}
		if n%1000 == 0 {
			logf("deaf-sent", "sent", n)
		}
	}
}

// runGarbage is `chaos garbage`: after --after activations it writes
// garbage on its native connection (see the package doc), then carries on
// as a controller as far as the coordinator lets it.
func runGarbage(args []string) int {
	fs := flags("garbage")
	what := fs.String("what", "pipe", "pipe, partial or shm")
	after := fs.Int("after", 3, "activations before the garbage")
	seed := fs.Uint64("seed", 1, "seed of the random garbage")
	if code := parse(fs, args); code >= 0 {
		return code
	}
	if *what != "pipe" && *what != "partial" && *what != "shm" {
		fmt.Fprintln(os.Stderr, "chaos garbage: --what must be pipe, partial or shm")
		return 2
	}
	// The shared memory is mapped a second time, raw: Connect closes its
	// fd once it has mapped it.
	shmFd, req, _, err := nativeFds()
	if err != nil {
		fmt.Fprintf(os.Stderr, "chaos: %v\n", err)
		return 1
	}
	mem, err := unix.Mmap(shmFd, 0, int(unsafe.Sizeof(native.Shm{})), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		fmt.Fprintf(os.Stderr, "chaos: mmap shared memory: %v\n", err)
		return 1
	}
	c := connect()
	t := newController(c)
	if err := t.run(*after); err != nil {
		return finish(err)
	}
	rng := rand.New(rand.NewPCG(*seed, 19))
	switch *what {
	case "pipe":
		b := pipeGarbage(rng)
		logf("garbage", "what", "pipe", "bytes", len(b), "seed", *seed)
		if err := writeAll(req, b); err != nil {
			logf("garbage-error", "err", errnoName(err))
			return 1
		}
	case "partial":
		logf("garbage", "what", "partial", "bytes", 7)
		if err := writeAll(req, []byte{6, 0, 0, 0, 0, 0, 0}); err != nil {
			logf("garbage-error", "err", errnoName(err))
			return 1
		}
		// The coordinator never gets a whole record: wait for a reply
		// to it forever.
		var b [native.RecordSize]byte
		_, _, rep, _ := nativeFds()
		n, err := unix.Read(rep, b[:])
		logf("garbage-reply", "n", n, "err", errnoName(err))
		return 1
	case "shm":
		logf("garbage", "what", "shm", "bytes", len(mem), "seed", *seed)
		_, _, rep, _ := nativeFds()
		for refused := 0; ; {
			for i := range mem {
				mem[i] = byte(rng.Uint32())
			}
			// A raw request: WriteIdle would set OutLen itself. A
			// refusal (OutLen is garbage) is logged once; the client
			// carries on.
			t.k++
			r, err := call(req, rep, native.OpWriteIdle, 0, t.k*t.period)
			switch {
			case err != nil:
				return finish(err)
			case r.Status == native.StatusShutdown:
				return finish(native.ErrShutdown)
			case r.Status >= native.StatusErrorBase:
				if refused++; refused == 1 {
					logf("garbage-refused", "status", fmt.Sprintf("%#x", r.Status))
				}
			}
		}
	}
	return t.forever()
}

// pipeGarbage is what `chaos garbage --what pipe` writes: records of
// every op with bad arguments, then random bytes (an odd count, so the
// last record is cut).
func pipeGarbage(rng *rand.Rand) []byte {
	bad := []native.Request{
		{Op: 0, Ch: 0, Arg: 0},
		{Op: 99, Ch: 1, Arg: -1},
		{Op: native.OpHello, Arg: 12345},
		{Op: native.OpWrite, Ch: 0, Arg: 1 << 40},
		{Op: native.OpWrite, Ch: 7, Arg: -5},
		{Op: native.OpIdle, Arg: -1},
		{Op: native.OpIdle, Arg: math.MinInt64},
		{Op: native.OpRecv, Ch: math.MaxUint32},
		{Op: native.OpWriteIdle, Ch: math.MaxUint32, Arg: -3},
		{Op: native.Op(math.MaxUint32), Ch: math.MaxUint32, Arg: math.MaxInt64},
	}
	b := make([]byte, len(bad)*native.RecordSize, 4096+len(bad)*native.RecordSize)
	for i, r := range bad {
		native.EncodeRequest(b[i*native.RecordSize:], r)
	}
	for range 4093 {
		b = append(b, byte(rng.Uint32()))
	}
	return b
}
