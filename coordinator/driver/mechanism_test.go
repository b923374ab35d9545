package driver

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tcs-robotics/tcs/coordinator/linux"
)

// TestMain lets the test binary play `tcs`: the trampoline and the helper
// processes some tests need.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "__spawn":
			os.Exit(SpawnMain(os.Args[2:]))
		}
	}
	switch os.Getenv("TCS_TEST_HELPER") {
	case "":
	case "mech":
		os.Exit(helperMech())
	case "threads":
		os.Exit(helperThreads())
	case "threads-later":
		os.Exit(helperThreadsLater())
	case "dormant":
		os.Exit(helperDormant())
	case "dormant-naps":
		os.Exit(helperDormantNaps())
	case "sysmon":
		os.Exit(helperSysmon())
	default:
		fmt.Fprintln(os.Stderr, "unknown TCS_TEST_HELPER")
		os.Exit(2)
	}
	os.Exit(m.Run())
}

func testConf(t testing.TB) Conf {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := os.TempDir()
	if t != nil {
		dir = t.TempDir()
	}
	return Conf{CPU: -1, SelfExe: exe, LogDir: dir, LockTimeout: 60 * time.Second, KillGrace: 500 * time.Millisecond}
}

// needRT skips the test when SCHED_FIFO or a second CPU is missing.
func needRT(t *testing.T) {
	t.Helper()
	cpus, err := linux.OnlineCPUs()
	if err != nil || len(cpus) < 2 {
		t.Skipf("needs 2 online CPUs: %v %v", cpus, err)
	}
	if err := linux.CheckFIFO(80); err != nil {
		t.Skipf("needs SCHED_FIFO: %v", err)
	}
}

// newMech locks the test goroutine to its thread and creates a Mechanism;
// the returned function closes it and checks nothing is left at RT
// priority.
func newMech(t *testing.T) (*Mechanism, func()) {
	t.Helper()
	needRT(t)
	runtime.LockOSThread()
	m, err := New(testConf(t))
	if err != nil {
		runtime.UnlockOSThread()
		t.Fatal(err)
	}
	return m, func() {
		if err := m.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if pol, _, err := linux.Policy(0); err != nil || pol != linux.SchedOther {
			t.Errorf("coordinator thread policy %d after Close (%v)", pol, err)
		}
		runtime.UnlockOSThread()
	}
}

func spawn(t *testing.T, m *Mechanism, name string, argv ...string) *Proc {
	t.Helper()
	p, err := m.Spawn(SpawnSpec{Name: name, Argv: argv})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// spawnHelper starts this test binary as a client playing helper name
// (TCS_TEST_HELPER, see TestMain).
func spawnHelper(t *testing.T, m *Mechanism, name string) *Proc {
	t.Helper()
	p, err := m.Spawn(SpawnSpec{Name: name, Argv: []string{"tcs"}, Env: []string{"TCS_TEST_HELPER=" + name}})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// busyPair starts two clients that compute without end.
//
// Each has computed through a whole slice before busyPair returns: a shell
// starting up may block (a page fault that reads the disk), and the tests
// that use the pair count every block as a failure.
func busyPair(t *testing.T, m *Mechanism) [2]*Proc {
	t.Helper()
	pair := [2]*Proc{
		spawn(t, m, "busyA", "sh", "-c", "while :; do :; done"),
		spawn(t, m, "busyB", "sh", "-c", "while :; do :; done"),
	}
	for _, p := range pair {
		runUntil(t, m, p, int64(time.Millisecond), func(w Wake) bool { return w.Timer && !w.Blocked })
	}
	return pair
}

// runUntil dispatches p until cond(wake) holds or the time is up.
func runUntil(t *testing.T, m *Mechanism, p *Proc, budget int64, cond func(Wake) bool) Wake {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		w, err := m.Run(p, budget)
		if err != nil {
			t.Fatal(err)
		}
		if cond(w) {
			return w
		}
	}
	t.Fatalf("client %q: condition not met after 5 s", p.Name)
	return Wake{}
}

func TestSpawnedClientWaitsForDispatch(t *testing.T) {
	m, done := newMech(t)
	defer done()
	mark := filepath.Join(t.TempDir(), "ran")
	p := spawn(t, m, "marker", "sh", "-c", "echo ran > "+mark+"; exec sleep 100")
	// The gated thread, the one that execs the client, does not run; the
	// trampoline's Go runtime threads, off the simulation CPU, may (see
	// gate), which is CPU before the client's first dispatch.
	c0 := p.CPU()
	r0, err := linux.ThreadRuntime(p.Pid, p.tids[0])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Poll(int64(200 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(mark); err == nil {
		t.Fatal("client ran before it was dispatched")
	}
	if r1, err := linux.ThreadRuntime(p.Pid, p.tids[0]); err != nil || r1 != r0 {
		t.Fatalf("the gated thread ran %d ns before it was dispatched (%v)", r1-r0, err)
	}
	t.Logf("the trampoline's other threads used %d ns meanwhile", p.CPU()-c0)
	for _, tid := range p.tids {
		pol, prio, err := linux.Policy(tid)
		if err != nil || pol != linux.SchedFIFO || prio != m.Base()-3 {
			t.Fatalf("waiting client thread %d: policy %d prio %d (%v), want FIFO %d", tid, pol, prio, err, m.Base()-3)
		}
	}
	var cpu int64
	runUntil(t, m, p, int64(50*time.Millisecond), func(w Wake) bool {
		cpu += w.CPU
		if w.Exited != nil {
			t.Fatalf("client exited, see %s", p.LogPath)
		}
		_, err := os.Stat(mark)
		return w.Blocked && err == nil && !strings.HasPrefix(commOf(p.Pid), "driver") // exec'd sleep
	})
	t.Logf("start-up of sh+sleep charged %v of CPU", time.Duration(cpu))
	if tids, _ := linux.Tasks(p.Pid); len(tids) != 1 || tids[0] != p.Pid {
		t.Errorf("threads after exec: %v", tids)
	}
}

func commOf(pid int) string {
	st, err := linux.ReadStat(pid, 0)
	if err != nil {
		return ""
	}
	return st.Comm
}

func TestLeakIsZero(t *testing.T) {
	m, done := newMech(t)
	defer done()
	procs := busyPair(t, m)
	a, b := procs[0], procs[1]
	const quanta = 400
	var late []int64
	var used [2]int64
	for i := 0; i < quanta; i++ {
		run, wait := procs[i%2], procs[1-i%2]
		before := wait.CPU()
		w, err := m.Run(run, int64(time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		if after := wait.CPU(); after != before {
			t.Fatalf("quantum %d: waiting client %q used %d ns while %q was dispatched", i, wait.Name, after-before, run.Name)
		}
		if w.Blocked || w.Exited != nil {
			t.Fatalf("quantum %d: busy client %+v", i, w)
		}
		if w.Timer {
			late = append(late, w.Late)
		}
		used[i%2] += w.CPU
	}
	// Both wait while the coordinator waits for something else.
	ca, cb := a.CPU(), b.CPU()
	if _, err := m.Poll(int64(20 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if a.CPU() != ca || b.CPU() != cb {
		t.Fatalf("clients ran during Poll: %d, %d ns", a.CPU()-ca, b.CPU()-cb)
	}
	sort.Slice(late, func(i, j int) bool { return late[i] < late[j] })
	t.Logf("%d quanta of 1 ms: CPU used %v / %v; late p50 %v p99 %v max %v; leak 0",
		quanta, time.Duration(used[0]), time.Duration(used[1]),
		time.Duration(late[len(late)/2]), time.Duration(late[len(late)*99/100]), time.Duration(late[len(late)-1]))
	if used[0] < quanta/2*800_000 || used[1] < quanta/2*800_000 {
		t.Errorf("clients used less than 80 %% of their quanta: %v %v", used[0], used[1])
	}
}

// The dispatch goroutine can lose its thread right after raising a client
// (sysmon preempts a goroutine that looks as if it ran over 10 ms, which a
// host stall makes happen anywhere): the raised client runs meanwhile, and
// that CPU is the dispatch's. Every ns the busy clients use is charged to a
// Run (or is still unsettled at the end).
func TestCPUWhileGoroutineAwayIsCharged(t *testing.T) {
	m, done := newMech(t)
	defer done()
	procs := busyPair(t, m)
	a, b := procs[0], procs[1]
	m.afterRaise = func() { time.Sleep(300 * time.Microsecond) }
	defer func() { m.afterRaise = nil }()
	cpu0 := [2]int64{a.CPU(), b.CPU()}
	var charged [2]int64
	for i := 0; i < 100; i++ {
		w, err := m.Run(procs[i%2], int64(time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		charged[i%2] += w.CPU
	}
	if _, err := m.Poll(0); err != nil {
		t.Fatal(err)
	}
	for k, p := range procs {
		used := p.CPU() - cpu0[k]
		got := charged[k] + m.Unsettled(p)
		t.Logf("%s: used %v, charged %v", p.Name, time.Duration(used), time.Duration(got))
		if got != used {
			t.Errorf("%s used %d ns, %d ns charged: %d ns leaked", p.Name, used, got, used-got)
		}
	}
}

// A client that computes through whole slices hides the dispatch
// goroutine's yields: the goroutine parks in its slice and the waker's
// hand-back, timed to arrive at the slice's end, ends that slice on time;
// the CPU stays exactly charged.
func TestParkedSliceEndsOnTime(t *testing.T) {
	m, done := newMech(t)
	defer done()
	procs := busyPair(t, m)
	a, b := procs[0], procs[1]
	cpu0 := [2]int64{a.CPU(), b.CPU()}
	var charged [2]int64
	var late []int64
	yields0, _, parks0, parkNs0 := m.Yields()
	const slices = 120
	for i := 0; i < slices; i++ {
		before := m.parks
		w, err := m.Run(procs[i%2], int64(5*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		if !w.Timer || w.Blocked {
			t.Fatalf("slice %d: busy client not preempted by the timer: %+v", i, w)
		}
		charged[i%2] += w.CPU
		if m.parks > before {
			late = append(late, w.Late)
		}
	}
	if _, err := m.Poll(0); err != nil {
		t.Fatal(err)
	}
	yields, _, parks, parkNs := m.Yields()
	yields, parks, parkNs = yields-yields0, parks-parks0, parkNs-parkNs0
	for k, p := range procs {
		used := p.CPU() - cpu0[k]
		if got := charged[k] + m.Unsettled(p); got != used {
			t.Errorf("%s used %d ns, %d ns charged", p.Name, used, got)
		}
	}
	// 600 ms of slices: a yield at least every 10 ms, one park every other
	// slice once both clients have used a whole slice.
	if parks < slices/4 {
		t.Fatalf("%d parks in %d slices of 5 ms (%d yields): want at least %d", parks, slices, yields, slices/4)
	}
	if g := yields - parks; g > 3 {
		t.Errorf("%d yields were not hidden in a slice (Gosched), want ≤ 3", g)
	}
	sort.Slice(late, func(i, j int) bool { return late[i] < late[j] })
	p50 := late[len(late)/2]
	t.Logf("%d parks (%v of the dispatch thread each), %d other yields; timer lateness of parked slices p50 %v max %v",
		parks, time.Duration(parkNs/max(parks, 1)), yields-parks, time.Duration(p50), time.Duration(late[len(late)-1]))
	if p50 > 100_000 {
		t.Errorf("parked slices end %v late (p50): the goroutine is handed back too late", time.Duration(p50))
	}
}

// Should the waker end (its read failed), a slice that would hide a yield
// in a park yields instead: nothing could hand a parked goroutine back.
func TestParkWithoutWakerYields(t *testing.T) {
	m, done := newMech(t)
	defer done()
	procs := busyPair(t, m)
	m.wakerStop.Store(true)
	var b [8]byte
	if err := linux.WriteU64(m.noteFd, &b, 1); err != nil {
		t.Fatal(err)
	}
	<-m.wakerDone
	if err := m.WakerErr(); err != nil {
		t.Errorf("waker told to stop reports %v", err)
	}
	yields0, _, parks0, _ := m.Yields()
	const slices = 40
	for i := 0; i < slices; i++ {
		w, err := m.Run(procs[i%2], int64(5*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		if !w.Timer || w.Blocked {
			t.Fatalf("slice %d: busy client not preempted by the timer: %+v", i, w)
		}
	}
	yields, _, parks, _ := m.Yields()
	if parks != parks0 {
		t.Errorf("%d parks counted with no waker", parks-parks0)
	}
	// 200 ms of slices: a yield at least every 10 ms.
	if yields-yields0 < slices/4 {
		t.Errorf("%d yields in %d slices of 5 ms, want at least %d", yields-yields0, slices, slices/4)
	}
}

// A waker that ends on an error of its note's read says why (the run logs
// it: its parks are yields from then on), and Close does not count that
// end as a failure of its own.
func TestWakerErrorIsReported(t *testing.T) {
	m, done := newMech(t)
	defer done()
	if err := m.WakerErr(); err != nil {
		t.Fatalf("running waker reports %v", err)
	}
	if err := m.noteFile.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-m.wakerDone:
	case <-time.After(5 * time.Second):
		t.Fatal("waker still running 5 s after its note was closed")
	}
	err := m.WakerErr()
	if err == nil || !strings.Contains(err.Error(), "waker's note") {
		t.Fatalf("WakerErr = %v, want the note's read error", err)
	}
	m.noteFile, m.noteFd = nil, -1 // closed above
}

// A timer kept from an earlier slice that expires before the slice's end
// (Run keeps one up to half the budget early for a client that blocks in
// its slices) does not end the slice: it is armed again for the slice's
// own end. The slice must last its whole budget of wall time (host steal
// would show in its CPU, not in its wall time).
func TestKeptTimerEndsSliceAtItsEnd(t *testing.T) {
	m, done := newMech(t)
	defer done()
	sleeper := spawn(t, m, "sleeper", "sleep", "100")
	busy := spawn(t, m, "busy", "sh", "-c", "while :; do :; done")
	// Past its exec (a dispatch of its own) and computing.
	runUntil(t, m, busy, int64(time.Millisecond), func(w Wake) bool { return w.Timer && !w.Blocked })
	const budget = int64(20 * time.Millisecond)
	// The timer is kept only if the busy client's slice begins less than
	// half a budget after the sleeper's: a host that holds this thread for
	// several ms between the two makes a round that tries nothing, so
	// rounds are repeated until three kept the timer (at most 20).
	kept := 0
	for round := 0; round < 20 && kept < 3; round++ {
		runUntil(t, m, sleeper, budget, func(w Wake) bool { return w.Blocked })
		time.Sleep(6 * time.Millisecond) // the timer stays armed meanwhile
		// As a client that blocks within its slices: the one that keeps a
		// timer armed early.
		busy.computes = false
		fires := m.EarlyFires()
		t0 := m.clock.Monotonic()
		w, err := m.Run(busy, budget)
		wall := m.clock.Monotonic() - t0
		if err != nil {
			t.Fatal(err)
		}
		if !w.Timer || w.Blocked {
			t.Fatalf("round %d: busy client not preempted by the timer: %+v", round, w)
		}
		if m.EarlyFires() == fires {
			t.Logf("round %d: the timer was armed anew, not kept (the host held this thread): again", round)
			continue
		}
		kept++
		if wall < budget-rearmSlack {
			t.Fatalf("round %d: the slice lasted %v of its %v: it ended at the kept timer's expiry", round, time.Duration(wall), time.Duration(budget))
		}
	}
	if kept < 3 {
		t.Fatalf("the timer was kept in %d of 20 rounds, want 3: the test tried too little", kept)
	}
}

// sleeperAndBusy starts a client that blocks at once and one that computes
// without end, and dispatches the first until it is seen blocked.
func sleeperAndBusy(t *testing.T, m *Mechanism) (sleeper, busy *Proc) {
	t.Helper()
	sleeper = spawn(t, m, "sleeper", "sleep", "100")
	busy = spawn(t, m, "busy", "sh", "-c", "while :; do :; done")
	runUntil(t, m, sleeper, int64(50*time.Millisecond), func(w Wake) bool { return w.Blocked })
	return sleeper, busy
}

func TestRunDoesNotAllocate(t *testing.T) {
	m, done := newMech(t)
	defer done()
	s, busy := sleeperAndBusy(t, m)
	var err error
	allocs := testing.AllocsPerRun(200, func() {
		var w Wake
		if w, err = m.Run(s, 0); err == nil && !w.Blocked {
			err = fmt.Errorf("sleeper not blocked: %+v", w)
		}
		if err == nil {
			w, err = m.Run(busy, int64(100*time.Microsecond))
		}
		if err == nil && !w.Timer {
			err = fmt.Errorf("busy client not preempted: %+v", w)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if allocs != 0 {
		t.Errorf("Run allocates %v times per two dispatches", allocs)
	}
}

// The detector is a thread of this process that Go's runtime sees in a
// blocking system call while it spins: garbage collections (which stop
// every goroutine that holds a P) go on beside it, and it keeps reporting
// blocks, and keeping waiting clients off the CPU, meanwhile.
func TestDetectorSpinsThroughGC(t *testing.T) {
	m, done := newMech(t)
	defer done()
	s, busy := sleeperAndBusy(t, m)
	runUntil(t, m, busy, int64(200*time.Microsecond), func(w Wake) bool { return w.Timer })
	var gcs atomic.Int64
	stop := make(chan struct{})
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		for {
			select {
			case <-stop:
				return
			default:
			}
			runtime.GC()
			gcs.Add(1)
		}
	}()
	rounds := 0
	for end := time.Now().Add(time.Second); time.Now().Before(end); rounds++ {
		// Lowered first: a garbage collection may take this goroutine off
		// its thread at any function call, and a client still raised
		// after its Run runs meanwhile (charged as Wake.Extra). Lowered,
		// it may not run at all.
		if _, err := m.Poll(0); err != nil {
			t.Fatal(err)
		}
		before := busy.CPU()
		w, err := m.Run(s, 0)
		if err != nil {
			t.Fatal(err)
		}
		if !w.Blocked {
			t.Fatalf("round %d: the sleeper was not reported blocked: %+v", rounds, w)
		}
		if after := busy.CPU(); after != before {
			t.Fatalf("round %d: the waiting client ran %d ns while the sleeper was dispatched", rounds, after-before)
		}
		if w, err = m.Run(busy, int64(200*time.Microsecond)); err != nil || !w.Timer {
			t.Fatalf("round %d: busy client not preempted: %+v, %v", rounds, w, err)
		}
	}
	close(stop)
	<-ended
	t.Logf("%d rounds, %d garbage collections beside the detector", rounds, gcs.Load())
	if gcs.Load() < 5 {
		t.Fatalf("%d garbage collections in 1 s: the runtime waits for the spinning detector", gcs.Load())
	}
}

func TestExitIsReported(t *testing.T) {
	m, done := newMech(t)
	defer done()
	p := spawn(t, m, "exit7", "sh", "-c", "exit 7")
	w := runUntil(t, m, p, int64(50*time.Millisecond), func(w Wake) bool { return w.Exited != nil })
	if w.Exited != p {
		t.Fatalf("Exited = %v, want %v", w.Exited, p)
	}
	code, err := m.Reap(p)
	if err != nil || code != 7 {
		t.Fatalf("Reap = %d, %v; want 7", code, err)
	}
	_, err = m.Spawn(SpawnSpec{Name: "missing", Argv: []string{"/nonexistent/client"}})
	if err == nil || !strings.Contains(err.Error(), "/nonexistent/client") {
		t.Errorf("spawn of a missing program: %v", err)
	}
}

func TestKillGatedClient(t *testing.T) {
	m, done := newMech(t)
	defer done()
	p := spawn(t, m, "busy", "sh", "-c", "while :; do :; done")
	if _, err := m.Run(p, int64(time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Poll(0); err != nil { // p is now waiting at ℓ3
		t.Fatal(err)
	}
	if err := m.Kill(p); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(3 * time.Second)
	for {
		w, err := m.Poll(int64(50 * time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		if w.Exited == p {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("killed client did not exit")
		}
	}
	if code, err := m.Reap(p); err != nil || code != 128+int(unix.SIGKILL) {
		t.Fatalf("Reap = %d, %v", code, err)
	}
}

// helperThreadsLater says it waits, sleeps 100 ms, then starts 4 more
// threads and blocks.
func helperThreadsLater() int {
	os.Stdout.WriteString("waiting\n")
	time.Sleep(100 * time.Millisecond)
	return helperThreads()
}

// helperThreads is a client that starts 4 more threads, then blocks.
func helperThreads() int {
	for i := 0; i < 4; i++ {
		go func() {
			runtime.LockOSThread()
			select {}
		}()
	}
	time.Sleep(20 * time.Millisecond)
	os.Stdout.WriteString("threads started\n")
	select {}
}

func TestThreadsCreatedWhileDispatchedAreLowered(t *testing.T) {
	m, done := newMech(t)
	defer done()
	p := spawnHelper(t, m, "threads")
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, err := m.Run(p, int64(5*time.Millisecond)); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(p.LogPath); strings.Contains(string(b), "threads started") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("helper did not start its threads")
		}
	}
	if _, err := m.Poll(0); err != nil {
		t.Fatal(err)
	}
	tids, err := linux.Tasks(p.Pid)
	if err != nil || len(tids) < 5 {
		t.Fatalf("threads: %v %v", tids, err)
	}
	for _, tid := range tids {
		pol, prio, err := linux.Policy(tid)
		if err != nil || pol != linux.SchedFIFO || prio != m.Base()-3 {
			t.Errorf("thread %d: policy %d prio %d (%v), want FIFO %d", tid, pol, prio, err, m.Base()-3)
		}
		if cpus, _ := linux.Affinity(tid); len(cpus) != 1 || cpus[0] != m.CPU() {
			t.Errorf("thread %d on CPUs %v", tid, cpus)
		}
	}
	// Raised again (without counting its threads: the lowering listed
	// them), every thread is at ℓ1, those it created while it ran too.
	if wrong := notRaised(t, m, p, tids); len(wrong) > 0 {
		t.Errorf("raised again, want every thread FIFO %d: %v", m.Base()-1, wrong)
	}
}

// helperDormant is a client with a thread (the sleeper) blocked in a read
// of a pipe. After 3 s it writes that pipe and waits for the sleeper's
// answer on another; then it computes without end.
func helperDormant() int {
	var ask, answer [2]int
	if unix.Pipe2(ask[:], 0) != nil || unix.Pipe2(answer[:], 0) != nil {
		return 1
	}
	tid := make(chan int)
	go func() {
		runtime.LockOSThread()
		tid <- unix.Gettid()
		var b [1]byte
		unix.Read(ask[0], b[:])
		unix.Write(answer[1], b[:])
		select {}
	}()
	fmt.Printf("sleeper %d\n", <-tid)
	x := 1.0
	for start := time.Now(); time.Since(start) < 3*time.Second; {
		x = x*1.0000001 + 1
	}
	os.Stdout.WriteString("asking\n")
	b := []byte{1}
	if _, err := unix.Write(ask[1], b); err != nil {
		return 1
	}
	if _, err := unix.Read(answer[0], b); err != nil {
		return 1
	}
	os.Stdout.WriteString("answered\n")
	for {
		x = x*1.0000001 + 1
	}
}

// A thread that uses no CPU for a second is dormant: the client is raised
// without it. When every raised thread of the client blocks waiting for it
// (here the client asks its sleeping thread and waits for the answer), Run
// raises the dormant ones and waits on, instead of reporting a block.
func TestDormantThreadIsRaisedWhenNeeded(t *testing.T) {
	m, done := newMech(t)
	defer done()
	p := spawnHelper(t, m, "dormant")
	p.Dormancy = true
	busy := spawn(t, m, "busy", "sh", "-c", "while :; do :; done")
	sleeper := 0
	var leftLowered, blocks int
	m.afterRaise = func() {
		if sleeper == 0 || m.cur != p {
			return
		}
		if _, prio, err := linux.Policy(sleeper); err == nil && prio == m.Base()-3 {
			leftLowered++
		}
	}
	defer func() { m.afterRaise = nil }()
	log := func() string { b, _ := os.ReadFile(p.LogPath); return string(b) }
	deadline := time.Now().Add(15 * time.Second)
	for !strings.Contains(log(), "answered") {
		if time.Now().After(deadline) {
			t.Fatalf("no answer within 15 s (sleeper %d left lowered at %d raises, %d blocks reported); log:\n%s", sleeper, leftLowered, blocks, log())
		}
		if sleeper == 0 {
			fmt.Sscanf(log(), "sleeper %d", &sleeper)
		}
		asked := strings.Contains(log(), "asking")
		w, err := m.Run(p, int64(2*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		if w.Blocked && asked {
			blocks++
		}
		if _, err := m.Run(busy, int64(2*time.Millisecond)); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("sleeper %d left lowered at %d raises; %d blocks reported after the question", sleeper, leftLowered, blocks)
	if leftLowered == 0 {
		t.Errorf("the sleeping thread was raised with its client every time: never dormant")
	}
	if blocks != 0 {
		t.Errorf("%d blocks reported while the client waited for its dormant thread, want 0", blocks)
	}
}

// helperDormantNaps has a thread that sleeps for good and a main thread
// that computes, then naps 1 ms (a block) and computes 1 ms, forever.
func helperDormantNaps() int {
	tid := make(chan int)
	go func() {
		runtime.LockOSThread()
		tid <- unix.Gettid()
		select {}
	}()
	fmt.Printf("sleeper %d\n", <-tid)
	x := 1.0
	for {
		for start := time.Now(); time.Since(start) < time.Millisecond; {
			x = x*1.0000001 + 1
		}
		time.Sleep(time.Millisecond)
	}
}

// A block of a client whose dormant thread sleeps is real: Run reports it
// and the thread stays dormant, left lowered at the client's next raises
// (raising it at every raise until the next look would cost two
// sched_setparam calls per dispatch for a thread that never runs).
func TestDormantThreadAsleepStaysDormant(t *testing.T) {
	m, done := newMech(t)
	defer done()
	p := spawnHelper(t, m, "dormant-naps")
	p.Dormancy = true
	busy := spawn(t, m, "busy", "sh", "-c", "while :; do :; done")
	sleeper := 0
	var raises, leftLowered, blocks int
	m.afterRaise = func() {
		if sleeper == 0 || m.cur != p || blocks == 0 {
			return
		}
		raises++
		if _, prio, err := linux.Policy(sleeper); err == nil && prio == m.Base()-3 {
			leftLowered++
		}
	}
	defer func() { m.afterRaise = nil }()
	log := func() string { b, _ := os.ReadFile(p.LogPath); return string(b) }
	// Long enough for a look to find the sleeper dormant (dormantAfter)
	// and for a few hundred dispatches after that.
	for end := time.Now().Add(4 * time.Second); time.Now().Before(end); {
		if sleeper == 0 {
			fmt.Sscanf(log(), "sleeper %d", &sleeper)
		}
		w, err := m.Run(p, int64(2*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		if w.Blocked && sleeper != 0 && p.isDormantTid(sleeper) {
			blocks++
		}
		if _, err := m.Run(busy, int64(time.Millisecond)); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("sleeper %d: %d blocks reported while it was dormant; left lowered at %d of the %d raises after the first", sleeper, blocks, leftLowered, raises)
	if blocks < 10 {
		t.Fatalf("%d blocks reported while the sleeper was dormant, want ≥ 10 (the client naps every 2 ms)", blocks)
	}
	if leftLowered < raises*9/10 {
		t.Errorf("the sleeper was left lowered at %d of %d raises after a block, want ≥ 90 %%: a block woke it though it slept", leftLowered, raises)
	}
}

// A client lowered right after a dispatch that ended at its request, and
// not run since, has the thread that wrote the request runnable at ℓ3: a
// probe passes over it (Proc.atRequest); once the client's CPU clock has
// moved, or without the mark, the same runnable thread is the client
// waking.
func TestProbePassesOverRequester(t *testing.T) {
	m, done := newMech(t)
	defer done()
	busy := spawn(t, m, "busy", "sh", "-c", "while :; do :; done")
	other := spawn(t, m, "other", "sleep", "100")
	if _, err := m.Run(busy, int64(time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	busy.atRequest = true // as the run marks a dispatch ended at a request
	if _, err := m.Run(other, int64(time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if !busy.atRequest {
		t.Fatal("lowering cleared the mark though the client had not run since its wake")
	}
	if m.Runnable(busy) {
		t.Error("the probe took the preempted requester for the client waking")
	}
	busy.seen-- // as if it ran at ℓ3 since it was lowered
	if !m.Runnable(busy) {
		t.Error("the probe passed over a runnable thread of a client that ran since its request")
	}
	busy.atRequest = false
	if !m.Runnable(busy) {
		t.Error("the probe missed a runnable client")
	}
}

// The look's rule for one thread, on scripted CPU readings: dormant after
// an interval without CPU, awake after one with; a look that finds it
// running again after an idle interval asks for the next look soon, one
// that finds it running in two intervals in a row (a thread that runs at
// every dispatch) does not.
func TestThreadWatchRule(t *testing.T) {
	steps := []struct {
		ns            int64
		dormant, soon bool
	}{
		{100, false, false}, // first reading: nothing to compare
		{100, true, false},  // no CPU since: dormant
		{100, true, false},
		{130, false, true}, // woken now and then: look again soon
		{130, true, false}, // idle again by then
		{150, false, true},
		{170, false, false}, // runs at every look: no hurry
		{190, false, false},
		{190, true, false},
	}
	var w threadWatch
	for i, st := range steps {
		soon := w.watch(st.ns)
		if w.dormant != st.dormant || soon != st.soon {
			t.Fatalf("step %d (cpu %d): dormant %v, recheck %v; want %v, %v", i, st.ns, w.dormant, soon, st.dormant, st.soon)
		}
	}
}

// notRaised dispatches p for 1 ms and lists those of tids that were not
// at SCHED_FIFO ℓ1 right after the raise.
func notRaised(t *testing.T, m *Mechanism, p *Proc, tids []int) []string {
	t.Helper()
	var wrong []string
	m.afterRaise = func() {
		for _, tid := range tids {
			if pol, prio, err := linux.Policy(tid); err != nil || pol != linux.SchedFIFO || prio != m.Base()-1 {
				wrong = append(wrong, fmt.Sprintf("thread %d: policy %d prio %d (%v)", tid, pol, prio, err))
			}
		}
	}
	_, err := m.Run(p, int64(time.Millisecond))
	m.afterRaise = nil
	if err != nil {
		t.Fatal(err)
	}
	return wrong
}

// A released client (free mode, ROS start-up) creates threads while it runs
// ungated: its next raise must find them and put every one at ℓ1, though
// the list it was lowered and released with had no gone thread in it.
func TestReleasedClientIsRaisedWhole(t *testing.T) {
	m, done := newMech(t)
	defer done()
	p := spawnHelper(t, m, "threads-later")
	waitLog := func(what string, step func() error) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for {
			if err := step(); err != nil {
				t.Fatal(err)
			}
			if b, _ := os.ReadFile(p.LogPath); strings.Contains(string(b), what) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("helper did not print %q", what)
			}
		}
	}
	// Dispatched until it waits, then lowered and released: its list is
	// complete and current.
	waitLog("waiting", func() error { _, err := m.Run(p, int64(5*time.Millisecond)); return err })
	if _, err := m.Poll(0); err != nil {
		t.Fatal(err)
	}
	if err := m.Release(p); err != nil {
		t.Fatal(err)
	}
	// Ungated, it starts four more threads.
	if err := m.ParkDetector(true); err != nil {
		t.Fatal(err)
	}
	waitLog("threads started", func() error { _, err := m.Poll(int64(10 * time.Millisecond)); return err })
	if err := m.ParkDetector(false); err != nil {
		t.Fatal(err)
	}
	tids, err := linux.Tasks(p.Pid)
	if err != nil || len(tids) < 5 {
		t.Fatalf("threads: %v %v", tids, err)
	}
	if wrong := notRaised(t, m, p, tids); len(wrong) > 0 {
		t.Errorf("raised after running released, want every thread FIFO %d: %v", m.Base()-1, wrong)
	}
}

// helperMech creates a Mechanism, spawns a client, prints the pids, and
// waits to be killed.
func helperMech() int {
	runtime.LockOSThread()
	m, err := New(testConf(nil))
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	p, err := m.Spawn(SpawnSpec{Name: "orphan", Argv: []string{"sh", "-c", "while :; do :; done"}})
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	if _, err := m.Run(p, int64(time.Millisecond)); err != nil {
		fmt.Println("error", err)
		return 1
	}
	fmt.Println("pids", p.Pid)
	for {
		if _, err := m.Run(p, int64(time.Millisecond)); err != nil {
			return 1
		}
	}
}

func TestSIGKILLLeavesNoChildren(t *testing.T) {
	needRT(t)
	exe, _ := os.Executable()
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), "TCS_TEST_HELPER=mech")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "pids ") {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("helper: %q %v", line, err)
	}
	var pids []int
	for _, f := range strings.Fields(line)[1:] {
		n, _ := strconv.Atoi(f)
		pids = append(pids, n)
	}
	cmd.Process.Kill()
	cmd.Wait()
	deadline := time.Now().Add(3 * time.Second)
	for _, pid := range pids {
		for {
			st, err := linux.ReadStat(pid, 0)
			if err != nil || st.State == 'Z' || st.State == 'X' {
				break
			}
			if time.Now().After(deadline) {
				unix.Kill(pid, unix.SIGKILL)
				t.Fatalf("pid %d (%s) survived the coordinator's SIGKILL: state %c policy %d", pid, st.Comm, st.State, st.Policy)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

func TestCPULockNamesHolder(t *testing.T) {
	needRT(t)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	conf := testConf(t)
	m, err := New(conf)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	conf.LockTimeout = 50 * time.Millisecond
	_, err = linux.LockCPU(m.CPU(), conf.LockTimeout)
	if !errors.Is(err, linux.ErrCPUBusy) || !strings.Contains(err.Error(), "PID "+strconv.Itoa(os.Getpid())) {
		t.Fatalf("second lock: %v", err)
	}
}

// isDormantTid reports whether thread tid of p is dormant now.
func (p *Proc) isDormantTid(tid int) bool {
	for k := range p.watch {
		if p.watch[k].tid == tid {
			return p.watch[k].dormant
		}
	}
	return false
}
