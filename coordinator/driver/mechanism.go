package driver

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tcs-robotics/tcs/coordinator/linux"
)

// ErrNoRT means this process may not use SCHED_FIFO (see linux.ErrNoRT).
var ErrNoRT = linux.ErrNoRT

// ErrOneCPU means fewer than two CPUs are online (see linux.ErrOneCPU).
var ErrOneCPU = linux.ErrOneCPU

// ErrDetector means the block detector ended; the mechanism cannot tell
// blocked clients from running ones any more.
var ErrDetector = errors.New("block detector ended")

// Conf configures the mechanism. Zero values take the documented defaults.
type Conf struct {
	// CPU is the simulation CPU; -1 means the last online CPU. It must not
	// be the only online CPU.
	CPU int
	// Base is the SCHED_FIFO base priority B: ℓ0=B coordinator, ℓ1=B-1
	// dispatched client, ℓ2=B-2 block detector, ℓ3=B-3 waiting clients.
	// Default 80; must be in [4, 99].
	Base int
	// LogDir receives per-client logs when a SpawnSpec gives no LogPath.
	// Default os.TempDir().
	LogDir string
	// SelfExe is the tcs binary, which must dispatch `__spawn` to
	// SpawnMain. Default os.Executable().
	SelfExe string
	// LockTimeout is how long New waits for another holder of the CPU lock.
	// Default 0: fail at once, naming the holder's PID.
	LockTimeout time.Duration
	// KillGrace is how long Close waits after SIGTERM before SIGKILL.
	// Default 2 s.
	KillGrace time.Duration
	// User is whom spawned clients run as, and whether they keep root's
	// privileges (see Spawn). Nil: as tcs itself, with its privileges.
	User *ClientUser
}

// CgroupNotes says what of the clients' cgroups could not be set up, and
// what the run loses by it (for the log, at start).
// So does a missing process events connector: then what the clients start
// is not adopted.
func (m *Mechanism) CgroupNotes() []string {
	if m.pevNote != "" {
		return append(m.cg.Notes(), m.pevNote)
	}
	return m.cg.Notes()
}

// Leftovers is how many processes Close found, and killed, in the run's
// cgroups once the clients had ended.
func (m *Mechanism) Leftovers() int { return m.leftovers }

// Tags at or above TagReserved are the mechanism's own.
const TagReserved = uint64(1) << 32

const (
	tagTimer        = TagReserved + 1
	tagDetector     = TagReserved + 2
	tagDetectorExit = TagReserved + 3
	tagProc         = uint64(1) << 33 // | index in m.procs
	tagExec         = uint64(1) << 34 // | index in m.procs: its exec ended
	tagProcEvents   = TagReserved + 4
)

// Wake says why Run or Poll returned.
type Wake struct {
	Timer   bool  // the timer fired (budget or Poll timeout elapsed)
	Blocked bool  // the detector ran: the dispatched client blocked
	CPU     int64 // CPU ns the dispatched client used during this Run, Extra included
	Extra   int64 // of CPU: ns it used still raised after its previous Run, while the coordinator was away
	From    int64 // the client's process CPU clock where CPU begins (its posts are stamped from it)
	Late    int64 // ns from the slice's end to the coordinator running (if Timer)
	// Polled: the client's held-back poller (Proc.HoldBack), raised with
	// its poll due once the other threads had blocked, ran and blocked
	// again: it has looked at the clock the others were given.
	Polled bool
	Exited *Proc // a child exited; call Reap for its exit code
	N      int   // number of ready tagged fds
	Tags   [16]uint64
}

// Mechanism owns the Linux objects of one simulation CPU: the coordinator
// thread's priority, the wait set, the timer, the block detector and the
// client processes. It makes no scheduling decision. Its methods must be
// called from the goroutine (locked to its OS thread) that called New.
type Mechanism struct {
	conf   Conf
	tid    int
	others []int // the non-simulation online CPUs
	lock   *linux.CPULock
	// cg holds the spawned clients and all they start (Spawn, Close).
	cg *linux.RunCgroups
	// leftovers counts the processes Close found in cg after the clients
	// had ended: descendants that had left their process groups.
	leftovers int
	// zombies are the clients Reap left for Close to reap.
	zombies []int

	ep    *linux.Epoll
	timer *linux.Timer
	clock linux.Clock
	prio  linux.Prio

	// afterRaise, when set (tests), runs right after a client is raised.
	afterRaise func()

	det    *detector
	procs  []*Proc
	cur    *Proc
	armed  bool
	expiry int64 // the timer's instant, when armed
	// due is the dispatched slice's end: expiry, except when Run kept an
	// earlier slice's timer that expires before it (wait then arms the
	// timer for due when it fires) or parks the slice (the timer is armed
	// for due once the goroutine is back).
	due        int64
	earlyFires int64 // kept timers that expired before their slice's end
	spawnReq   chan spawnReq
	closed     bool

	lastWake  int64 // CLOCK_MONOTONIC when the last wait returned
	lastYield int64 // ... when the dispatch goroutine last yielded
	yields    int64 // how many times it yielded (Yields)
	yieldNs   int64 // the dispatch thread's CPU those yields took (Yields)
	parks     int64 // how many of those yields were parks (Yields)
	parkNs    int64 // the dispatch thread's CPU those parks took (Yields)

	// parkCh hands the parked dispatch goroutine back (see park); noteFd,
	// a non-blocking eventfd, tells the waker that it is parking (noteBuf:
	// the dispatch goroutine's buffer, wakeBuf the waker's), or, once
	// wakerStop is set, to end; the waker reads it as noteFile, through
	// Go's poller.
	parkCh    chan struct{}
	noteFd    int
	noteFile  *os.File
	noteBuf   [8]byte
	wakeBuf   [8]byte
	wakerStop atomic.Bool
	parkEnd   atomic.Int64  // the parked goroutine's slice end (0: not parked)
	wakerDone chan struct{} // closed when the waker has ended
	wakerErr  error         // why it ended before Close (set before wakerDone closes)
	endTS     unix.Timespec
	endCPU    int64 // the dispatched client's CPU clock read at the last wake

	// pev reports the machine's forks and exits: what a client starts is
	// adopted into it (see kid). pevNote says why it is missing.
	pev        *linux.ProcEvents
	pevBuf     []linux.ProcEvent
	pevNote    string
	adopted    int
	eventsLost int
}

// Proc is a client process started by Spawn.
type Proc struct {
	Pid      int
	Name     string
	LogPath  string
	ExitCode int // valid after Reap

	idx      int
	pidfd    int
	clk      int32
	clock    linux.Clock
	tasks    *linux.TaskDir
	tids     []int
	cmd      *exec.Cmd
	exited   bool // its pidfd reported the exit
	reaped   bool
	released bool // SCHED_OTHER (Release)
	// execFd reads the end of the trampoline's stream, which its exec
	// closes; -1 once the exec is over (or for an adopted process). Until
	// then Run never preempts p (see Spawn).
	execFd int

	// Requeue: raise p's threads newest first, and at a dispatch that
	// follows one of p move its main thread behind the others
	// (requeueMain).
	// Threads of one SCHED_FIFO priority do not share the CPU: the one that
	// computes keeps it until it blocks, and a thread woken meanwhile (a
	// node's clock or message thread) waits behind it. Raised newest first,
	// the woken threads run before the one that computes (which is the
	// oldest, a node's main thread), as they would under the normal
	// scheduler. For nodes that compute without blocking (best-effort).
	Requeue bool

	// HoldBack is a thread of p that polls for time in a short wall-clock
	// sleep (roscpp's timer thread, found by the scan of a hold; 0: none).
	// Raising p leaves it at ℓ3 until p's other threads have blocked (see
	// Run): raised with them while its poll is due, it would run before
	// the thread that applies the clock just delivered (woken later, it
	// queues behind it at ℓ1), see the old time, and sleep a whole poll
	// more while the world is held for it.
	HoldBack int
	// heldBack is the HoldBack thread the last raise left at ℓ3 (0 once
	// raised or lowered).
	heldBack int

	adopted bool // tcs attach: not tcs's child (no exit status), not its group

	// complete: p was last lowered with every one of its threads in tids
	// (the count checked), so raising it needs no count.
	complete bool

	// computes: its last Run ended by the timer (it used its whole slice)
	// or after at least half a yieldSlice of CPU (a request of a client
	// that computes, such as a planner publishing), so the next one likely
	// lasts long enough to hide a yield in (see Run).
	computes bool

	// seen is the CPU clock read at the last wake while it was raised
	// (valid if hasSeen); extra is the CPU it used after that reading while
	// still raised, charged with its next Run.
	seen, extra int64
	hasSeen     bool

	// atRequest: the last Run of p ended at its native request (set by
	// the run), and p was lowered without having run since: the thread
	// that wrote the request was preempted there, runnable, by the
	// dispatch thread's wake, and stays so at ℓ3 while p waits for the
	// reply. That is not p waking (Runnable). While it is set, p's CPU
	// clock stood at seen when p was lowered: a probe that finds it moved
	// knows p ran since (the requester may have blocked in its read, and
	// a runnable thread is then p waking).
	atRequest bool

	// Dormancy: leave p's dormant threads lowered (see look). Set it
	// before p's first Run; for clients whose threads other than the one
	// that computes are runtime threads (native clients).
	Dormancy bool
	watch    []threadWatch // p's threads as look saw them, in tids order
	states   []threadState // p's threads' stat files (Runnable), in tids order
	kids     []*kid        // the processes it started (see kid)
	started  bool          // a kid was adopted since TakeStarted last looked
	runs     int64         // Runs that charged its kids (kid.ran)
	level    int           // the SCHED_FIFO priority setLevel last gave it (0: released)
	lookAt   int64         // CLOCK_MONOTONIC of the last look
	raises   int           // times Run raised it since the last look
	recheck  bool          // look again after dormantRecheck raises (see look)

	// SysmonTurns: should p run a Go program, keep its runtime's sysmon
	// thread at ℓ3 but for its turns (sysmon.go). Set it before p's
	// first Run; for ROS clients, which wait for messages, not for
	// replies to their requests.
	SysmonTurns bool
	sm          sysmonThread
}

// threadWatch is what look knows of one thread of a client.
type threadWatch struct {
	tid     int
	rt      *linux.RuntimeFile // its CPU time
	last    int64              // that CPU time at the last look
	looked  bool               // last is valid
	ran     bool               // it used CPU between the last two looks
	dormant bool
}

// watch records what a look read of t's CPU time (ns) and reports whether
// t should be looked at again soon: it ran since the last look after an
// interval without CPU, so something of its program woke it, and it is
// likely idle again after a few of its client's raises (see look).
func (t *threadWatch) watch(ns int64) (recheck bool) {
	ran := t.looked && ns != t.last
	recheck = ran && !t.ran
	t.dormant = t.looked && !ran
	t.ran = ran
	t.last, t.looked = ns, true
	return recheck
}

// CPU returns the process CPU clock (ns) read now; exact when read on the
// simulation CPU while the client is not running; 0 once the process is
// gone.
func (p *Proc) CPU() int64 {
	v, err := p.clock.Ns(p.clk)
	if err != nil {
		return 0
	}
	return v
}

// Tids returns the thread ids the mechanism knows for p (a copy).
func (p *Proc) Tids() []int { return append([]int(nil), p.tids...) }

// New must be called on a goroutine that has called runtime.LockOSThread and
// will run the dispatch loop. It takes the CPU lock, moves every other
// thread of this process off the simulation CPU, pins the calling thread to
// it at SCHED_FIFO ℓ0, creates the epoll set, the timerfd and the block
// detector's thread (ℓ2, pinned) and returns.
func New(conf Conf) (m *Mechanism, err error) {
	online, err := linux.OnlineCPUs()
	if err != nil {
		return nil, err
	}
	if conf.CPU < 0 && len(online) > 0 {
		conf.CPU = online[len(online)-1]
	}
	if conf.Base == 0 {
		conf.Base = 80
	}
	if conf.Base < 4 || conf.Base > 99 {
		return nil, fmt.Errorf("mechanism: base priority %d out of range [4, 99]", conf.Base)
	}
	if conf.LogDir == "" {
		conf.LogDir = os.TempDir()
	}
	if conf.SelfExe == "" {
		if conf.SelfExe, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("mechanism: find the tcs binary: %w", err)
		}
	}
	if conf.KillGrace == 0 {
		conf.KillGrace = 2 * time.Second
	}
	if err := linux.RequireCPUs(conf.CPU); err != nil {
		return nil, fmt.Errorf("mechanism: %w", err)
	}
	if err := linux.CheckFIFO(conf.Base); err != nil {
		return nil, fmt.Errorf("mechanism: %w", err)
	}
	m = &Mechanism{conf: conf, tid: unix.Gettid(), noteFd: -1}
	for _, c := range online {
		if c != conf.CPU {
			m.others = append(m.others, c)
		}
	}
	if m.lock, err = linux.LockCPU(conf.CPU, conf.LockTimeout); err != nil {
		return nil, fmt.Errorf("mechanism: %w", err)
	}
	defer func() {
		if err != nil {
			m.Close()
		}
	}()
	m.cg = linux.NewRunCgroups(os.Getpid(), conf.CPU)
	// A P must always be free when the dispatch thread returns from a
	// syscall (notes/linux-limits.md, hazards 2 and 4).
	runtime.GOMAXPROCS(max(4, len(online)))
	if err = m.isolate(); err != nil {
		return nil, err
	}
	if m.ep, err = linux.NewEpoll(); err != nil {
		return nil, fmt.Errorf("mechanism: %w", err)
	}
	if m.timer, err = linux.NewTimer(); err != nil {
		return nil, fmt.Errorf("mechanism: %w", err)
	}
	if err = m.ep.Add(m.timer.Fd(), tagTimer); err != nil {
		return nil, fmt.Errorf("mechanism: %w", err)
	}
	if m.pev, err = linux.OpenProcEvents(); err != nil {
		m.pev, err = nil, nil
		m.pevNote = "processes the clients start are not adopted (their threads keep the priority they were born with, their CPU is not charged): " + err.Error()
	} else if err = m.ep.Add(m.pev.Fd(), tagProcEvents); err != nil {
		return nil, fmt.Errorf("mechanism: %w", err)
	}
	m.pevBuf = make([]linux.ProcEvent, 0, 256)
	m.spawnReq = make(chan spawnReq)
	go spawner(m.spawnReq, m.others)
	if m.noteFd, err = linux.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK); err != nil {
		return nil, fmt.Errorf("mechanism: %w", err)
	}
	m.noteFile = os.NewFile(uintptr(m.noteFd), "waker-note")
	m.parkCh, m.wakerDone = make(chan struct{}), make(chan struct{})
	go m.waker()
	if m.det, err = m.startDetector(); err != nil {
		return nil, fmt.Errorf("mechanism: start block detector: %w", err)
	}
	return m, nil
}

// isolate moves every thread of this process but the caller to the other
// CPUs and pins the caller to the simulation CPU at ℓ0. Threads created
// later are created by those threads (a locked thread creates through the
// runtime's template thread), so they stay off the simulation CPU.
func (m *Mechanism) isolate() error {
	if err := linux.SetAffinity(0, m.others...); err != nil { // inherited by nothing, but keeps the caller off while we work
		return fmt.Errorf("mechanism: move coordinator threads: %w", err)
	}
	tids, err := linux.Tasks(os.Getpid())
	if err != nil {
		return fmt.Errorf("mechanism: %w", err)
	}
	for _, tid := range tids {
		if tid == m.tid {
			continue
		}
		if err := linux.SetAffinity(tid, m.others...); err != nil && !errors.Is(err, unix.ESRCH) {
			return fmt.Errorf("mechanism: move runtime thread %d off CPU %d: %w", tid, m.conf.CPU, err)
		}
	}
	if err := linux.SetFIFO(0, m.conf.Base); err != nil {
		return fmt.Errorf("mechanism: coordinator thread to SCHED_FIFO %d: %w", m.conf.Base, err)
	}
	if err := linux.SetAffinity(0, m.conf.CPU); err != nil {
		return fmt.Errorf("mechanism: pin coordinator thread to CPU %d: %w", m.conf.CPU, err)
	}
	return nil
}

// KeepOff moves every thread of process pid (one tcs started that is not
// a client: a world's process) to the other CPUs; the threads it creates
// later inherit that.
func (m *Mechanism) KeepOff(pid int) error {
	tids, err := linux.Tasks(pid)
	if err != nil {
		return fmt.Errorf("mechanism: %w", err)
	}
	for _, tid := range tids {
		if err := linux.SetAffinity(tid, m.others...); err != nil && !errors.Is(err, unix.ESRCH) {
			return fmt.Errorf("mechanism: move thread %d of process %d off CPU %d: %w", tid, pid, m.conf.CPU, err)
		}
	}
	return nil
}

// CPU returns the simulation CPU.
func (m *Mechanism) CPU() int { return m.conf.CPU }

// Base returns the base priority B.
func (m *Mechanism) Base() int { return m.conf.Base }

// AddFd registers fd (a native client's request pipe, a signalfd, an
// eventfd) in the wait set under tag; tags ≥ TagReserved are refused.
func (m *Mechanism) AddFd(fd int, tag uint64) error {
	if tag >= TagReserved {
		return fmt.Errorf("add fd %d: tag %#x is reserved (must be < 1<<32)", fd, tag)
	}
	return m.ep.Add(fd, tag)
}

// AddFdEdge registers fd in the wait set under tag, edge-triggered: a wait
// reports it once per arrival (a listener's connection), which the caller
// notes; it is never read here.
func (m *Mechanism) AddFdEdge(fd int, tag uint64) error {
	if tag >= TagReserved {
		return fmt.Errorf("add fd %d: tag %#x is reserved (must be < 1<<32)", fd, tag)
	}
	return m.ep.AddEdge(fd, tag)
}

// RemoveFd takes fd out of the wait set.
func (m *Mechanism) RemoveFd(fd int) error { return m.ep.Del(fd) }

// Run dispatches p: raise all its threads to ℓ1 (lower the previously
// dispatched one to ℓ3), read its CPU clock, arm the timer for budget ns (0:
// no timer), arm the detector, block in epoll_wait. It returns when anything
// is ready. It does not allocate.
func (m *Mechanism) Run(p *Proc, budget int64) (Wake, error) {
	var w Wake
	// The goroutine must pass through the Go scheduler at least every
	// 10 ms (see yieldEvery). A slice of at least yieldSlice ns, given to a
	// client that computes (see Proc.computes), hides that yield: the
	// goroutine parks after raising p, p computes meanwhile, and the
	// waker hands the goroutine back before the slice's end (see park):
	// one such slice once yieldHidden has passed since the last yield,
	// or one in which a yield would fall due (a park costs
	// the dispatch thread less than a Gosched, and the Gosched would come
	// at the next dispatch of a client that blocks quickly, such as a
	// controller under a busy planner). (A client that blocks within µs,
	// such as a controller whose budget is a whole quantum, would leave
	// the detector spinning through the park.) Past yieldEvery with no
	// such slice, the goroutine yields (runtime.Gosched) before raising p,
	// so that only the spinning detector runs during the handoff.
	// (A Run that lasts past sysmon's 10 ms still gets the goroutine
	// preempted, after the wake, while p is raised: p runs on until the
	// goroutine is back. That CPU is counted from the clock read at the
	// wake (p.seen) and charged with p's next Run, as Wake.Extra. Yielding
	// before every Run that could last that long cost more: tried, 1.8-2.2 %
	// overhead instead of 1.5 %.)
	since := m.lastWake - m.lastYield
	execing := p.execFd >= 0
	hide := !execing && budget >= yieldSlice && p.computes && (since > yieldHidden || since+budget > yieldEvery)
	must := !hide && since > yieldEvery
	raise := p != m.cur || must
	// A Requeue client raised since its last Run needs only its main
	// thread moved behind the threads woken meanwhile (requeueMain): the
	// others are at ℓ1 already, in the order they woke.
	requeue := !raise && p.Requeue
	if raise {
		if err := m.lower(); err != nil {
			return w, err
		}
		if must {
			m.yield()
		}
		if p.raises++; p.Dormancy && (m.lastWake-p.lookAt >= dormantAfter || p.raises >= dormantRaises || p.recheck && p.raises >= dormantRecheck) {
			m.look(p)
		}
	}
	// The clock is read before p is raised: should the goroutine lose its
	// thread between the raise and the wait (sysmon's preemption after a
	// host stall of over 10 ms), p runs meanwhile, and that CPU must be
	// charged to this dispatch, not leak. A p that stayed raised since a
	// wake under freshWake ago needs no reading (a process CPU clock sums
	// every thread: about a µs here): it runs only while the goroutine
	// waits, so its clock is still the one read at that wake, or is past
	// it by under freshWake if the thread lost the CPU meanwhile, which is
	// charged with this slice as Split would charge it as Away.
	var start int64
	if !raise && p.hasSeen && m.clock.Monotonic()-m.lastWake < freshWake {
		start = p.seen
	} else {
		start, _ = p.clock.Ns(p.clk)
	}
	if raise {
		if err := m.setLevel(p, m.conf.Base-1); err != nil {
			return w, err
		}
		m.cur = p
		if m.afterRaise != nil {
			m.afterRaise()
		}
	} else if requeue {
		if err := m.requeueMain(p); err != nil {
			return w, err
		}
	}
	if err := m.startTurn(p, m.lastWake); err != nil {
		return w, err
	}
	// A client that stayed raised since its last wake ran on if the
	// goroutine was preempted meanwhile (sysmon, past 10 ms without a
	// yield): that CPU was dispatched, so it is charged now.
	if p.hasSeen && start > p.seen {
		p.extra += start - p.seen
	}
	p.hasSeen, p.atRequest = false, false
	w.Extra, p.extra = p.extra, 0
	switch {
	case execing:
		// Inside its exec: no timer; the exec's end (tagExec) returns.
		if m.armed {
			if err := m.disarm(); err != nil {
				return w, err
			}
		}
	case hide:
		// No timer during the park: an expiry would hand the goroutine
		// back at once. It is armed once the goroutine is back.
		m.due = m.clock.Monotonic() + budget
		if m.armed {
			if err := m.disarm(); err != nil {
				return w, err
			}
		}
	case budget > 0:
		// Programming a timer costs about 10 µs of CPU in this kind of VM
		// (the deadline register write traps to the host), so a timer
		// still armed for up to rearmSlack before the wanted instant is
		// kept: the slice ends at most that much early, never late. A
		// client that blocks within its slices (not p.computes) keeps one
		// armed up to half the budget early too: its slices end by a block
		// long before, and should one run on, the expiry is only a check
		// (wait arms the timer again for the slice's end) that costs a
		// wake-up, where arming at every dispatch costs a system call.
		want := m.clock.Monotonic() + budget
		switch {
		case m.armed && m.expiry <= want && want-m.expiry <= rearmSlack:
			m.due = m.expiry
		case m.armed && m.expiry <= want && !p.computes && want-m.expiry <= budget/2:
			m.due = want
		default:
			m.expiry = want
			if err := m.timer.ArmAt(m.expiry); err != nil {
				return w, err
			}
			m.armed, m.due = true, m.expiry
		}
	case m.armed:
		if err := m.disarm(); err != nil {
			return w, err
		}
	}
	gen := atomic.AddUint64(m.det.gen, 1)
	m.endCPU = -1
	if hide {
		m.park(m.due)
		// Handed back parkLead before the end, or for something ready:
		// the timer ends the slice.
		m.expiry = m.due
		if err := m.timer.ArmAt(m.expiry); err != nil {
			return w, err
		}
		m.armed = true
	}
	var err error
	if execing {
		err = m.waitExec(p, &w)
	} else {
		err = m.wait(&w, -1, gen)
	}
	woke, polled := false, false
	for err == nil && w.Blocked && !w.Timer && w.N == 0 && w.Exited == nil {
		if p.wakeNeeded() {
			woke = true
			// Every raised thread of p blocked, and a dormant one is not
			// asleep (wakeNeeded has made them all awake): it may be what
			// the others wait for. Raise them all and wait on.
			if err = m.setLevel(p, m.conf.Base-1); err != nil {
				return w, err
			}
		} else if tid := p.heldBack; tid != 0 {
			// Every raised thread of p blocked: what a delivery woke has
			// been done. Now the held-back poller: raised whether its
			// poll is due or not (a hold waits for its wake at ℓ1), and
			// waited for only if it is due.
			p.heldBack = 0
			due := !p.asleep(tid)
			if _, err = m.setThread(p, tid, m.conf.Base-1); err != nil || !due {
				break
			}
			polled = true
		} else {
			break
		}
		w.Blocked = false
		gen = atomic.AddUint64(m.det.gen, 1)
		err = m.wait(&w, -1, gen)
	}
	w.Polled = polled && err == nil && w.Blocked
	if err == nil {
		err = m.endTurn(p, w.Blocked, woke)
	}
	// A client that used its whole slice, or computed for a while before a
	// request (a planner publishing), likely uses the next one whole too.
	p.computes = !w.Blocked && w.Exited == nil && (w.Timer && w.N == 0 || m.endCPU-start >= yieldSlice/2)
	if m.endCPU >= start {
		w.CPU = m.endCPU - start
		p.seen, p.hasSeen = m.endCPU, true
	}
	w.From = start - w.Extra
	w.CPU += w.Extra
	if len(p.kids) > 0 {
		// What its kids used, raised with it (charged, not timed: the
		// slice's budget is p's own CPU).
		w.CPU += p.kidsCPU()
	}
	return w, err
}

// EarlyFires is how many timers kept from an earlier slice (see Run)
// expired before the slice's end and were armed again.
func (m *Mechanism) EarlyFires() int64 { return m.earlyFires }

// Yields returns how many times the dispatch goroutine has passed through
// the Go scheduler on purpose (see yieldEvery) and the CPU time (ns) of the
// dispatch thread that took; parks and parkCPU are the part of those that
// were parks (see park).
func (m *Mechanism) Yields() (n, cpu, parks, parkCPU int64) {
	return m.yields, m.yieldNs, m.parks, m.parkNs
}

// Hold continues the dispatch of p, which just blocked in a short
// wall-clock sleep, until it has run again and blocked again (or the timer
// fires after budget ns, or anything else is ready): the detector keeps
// waiting clients off the CPU meanwhile but reports the block only once
// p's CPU clock has moved. p must be the client the last Run dispatched.
func (m *Mechanism) Hold(p *Proc, budget int64) (Wake, error) {
	if p != m.cur {
		return Wake{}, fmt.Errorf("hold %q: not the dispatched client", p.Name)
	}
	cpu, err := p.clock.Ns(p.clk)
	if err != nil {
		return Wake{}, fmt.Errorf("hold %q: %w", p.Name, err)
	}
	d := m.det
	atomic.StoreUint32(d.holdClk, uint32(p.clk))
	atomic.StoreUint64(d.holdCPU, uint64(cpu))
	atomic.StoreUint64(d.holdGen, atomic.LoadUint64(d.gen)+1)
	w, err := m.Run(p, budget)
	atomic.StoreUint64(d.holdGen, 0)
	return w, err
}

// Unsettled returns the CPU p used while raised after its last wake that
// no Run has charged yet (see Run): at the end of a run it is dispatched
// CPU that will never be charged.
func (m *Mechanism) Unsettled(p *Proc) int64 {
	v := p.extra
	if p.hasSeen && m.cur == p {
		if now, err := p.clock.Ns(p.clk); err == nil && now > p.seen {
			v += now - p.seen
		}
	}
	return v
}

// ThreadState is one thread of a client as the kernel sees it.
type ThreadState struct {
	Tid       int
	Comm      string
	Policy    int   // SCHED_* (0 OTHER, 1 FIFO)
	Prio      int   // real-time priority
	CPUs      []int // affinity
	RuntimeNs int64 // CPU used since the thread began
}

// Threads lists p's threads with their policy, priority, affinity and CPU,
// for the log when p's CPU does not add up. It allocates.
func (m *Mechanism) Threads(p *Proc) []ThreadState {
	if p.exited || p.reaped {
		return nil
	}
	tids, err := linux.Tasks(p.Pid)
	if err != nil {
		return nil
	}
	out := make([]ThreadState, 0, len(tids))
	for _, tid := range tids {
		t := ThreadState{Tid: tid, Policy: -1}
		t.Policy, t.Prio, _ = linux.Policy(tid)
		t.CPUs, _ = linux.Affinity(tid)
		t.RuntimeNs, _ = linux.ThreadRuntime(p.Pid, tid)
		t.Comm = linux.ThreadComm(p.Pid, tid)
		out = append(out, t)
	}
	return out
}

// lower puts the raised client, if any, back to ℓ3 and keeps the CPU it
// used since its last wake (see Run) for its next Run.
func (m *Mechanism) lower() error {
	p := m.cur
	if p == nil {
		return nil
	}
	if err := m.setLevel(p, m.conf.Base-3); err != nil {
		return err
	}
	m.cur = nil
	ran := true
	if p.hasSeen {
		if now, err := p.clock.Ns(p.clk); err == nil {
			if ran = now > p.seen; ran {
				p.extra += now - p.seen
			}
		}
		p.hasSeen = false
	}
	p.atRequest = p.atRequest && !ran
	return nil
}

// Poll waits up to timeout ns (0: just look, <0: forever) on the same set
// with no client raised (the last dispatched one is lowered to ℓ3). The
// spinning detector keeps waiting clients from running meanwhile unless it
// is parked.
func (m *Mechanism) Poll(timeout int64) (Wake, error) {
	var w Wake
	if err := m.lower(); err != nil {
		return w, err
	}
	if m.lastWake-m.lastYield > yieldEvery {
		m.yield()
	}
	ms := -1
	switch {
	case timeout == 0:
		ms = 0
		if m.armed {
			if err := m.disarm(); err != nil {
				return w, err
			}
		}
	case timeout > 0:
		m.expiry = m.clock.Monotonic() + timeout
		if err := m.timer.ArmAt(m.expiry); err != nil {
			return w, err
		}
		m.armed, m.due = true, m.expiry
	default:
		if m.armed {
			if err := m.disarm(); err != nil {
				return w, err
			}
		}
	}
	return w, m.wait(&w, ms, 0)
}

// yieldEvery is how often the dispatch goroutine passes through the Go
// scheduler on purpose. A goroutine that has not been scheduled for 10 ms is
// preempted by sysmon at its next function call; a preempted locked
// goroutine sleeps until another thread hands it back (tens of µs), and a
// raised client runs on meanwhile, past its slice (Wake.Extra charges it
// later). A yield at a moment of its choosing resets that clock: a park in
// a computing client's slice (see park), else a Gosched while no client is
// raised (only the spinning detector can run).
//
// Measured here: a locked goroutine's Gosched takes 85 µs (p50) to 190 µs
// (p99) to come back, because another thread on another, often idle, CPU
// must hand it back; so the yield comes as late as is safe before sysmon's
// 10 ms. It also costs the dispatch thread tens of µs of CPU (futex wakes
// across CPUs; measured below), at least ~100 times a second.
//
// yieldHidden and yieldSlice: a yield is hidden in a slice of at least
// yieldSlice (see Run, park), once yieldHidden has passed since the last
// one. Measured here (two-robots, interleaved runs; tcs.log, "overhead":
// yields, yield_ns, parks, park_ns): a park cost the dispatch thread
// 15-23 µs, a Gosched 32-40 µs plus the detector spinning through the
// handoff; overhead 1.36-1.47 % with Gosched alone, 0.96-1.16 % with
// parks.
//
// parkLead: the waker hands the goroutine back that long before a parked
// slice's end (it takes 50-200 µs to arrive; 60 µs before got it there
// 40-200 µs after the end).
//
// freshWake: a Run this soon after a wake, of the client that stayed
// raised, takes the wake's clock reading as its start (see Run). It is
// below the policy's default LateCap, under which CPU used while the
// coordinator was away is charged whole anyway.
const (
	freshWake   = 100_000
	rearmSlack  = 20_000
	yieldEvery  = 8_000_000
	yieldHidden = 4_000_000
	yieldSlice  = 2_000_000
	parkLead    = 300_000
)

// yield passes the dispatch goroutine through the Go scheduler by
// runtime.Gosched (see yieldEvery).
func (m *Mechanism) yield() { m.pass(0) }

// park is the yield hidden in a slice (see Run): the goroutine parks on
// parkCh with p raised and no timer armed, and the waker, a goroutine on
// the other CPUs, hands it back parkLead before end (CLOCK_MONOTONIC), or
// at once when anything in the wait set is ready; Run's wait then goes on,
// with the timer armed for the slice's end. The yield thus happens while
// p computes, instead of as a Gosched at the next dispatch.
//
// On this kind of VM a wake-up by an interrupt (the timer's, or another
// CPU's) costs the woken thread 15-30 µs of its CPU, one by a client on
// the same CPU (a pipe write) about 4 µs (small C programs, a FIFO thread
// woken while a FIFO process computes on its CPU: by a timerfd 12-28 µs
// of its CPU, by a futex from the other CPU 22 µs, arriving 46-57 µs late
// (p50)).
func (m *Mechanism) park(end int64) { m.pass(end) }

// pass is yield (end 0) or park (end > 0), counted with the dispatch
// thread's CPU it took (Yields). A park tells the waker through noteFd,
// which the kernel reports to the runtime's polling thread on the other
// CPUs: the waker's goroutine is made ready there, not on this thread's
// P, so the park's hand-off of the P has no goroutine of the waker's to
// start a thread for.
func (m *Mechanism) pass(end int64) {
	c0, _ := m.clock.Ns(threadCPUClock)
	if end > 0 {
		m.parkEnd.Store(end)
		parked := false
		// Without the note (not a valid eventfd), or once the waker has
		// ended on an error of its read, nothing would hand the goroutine
		// back: the pass is a yield.
		if err := linux.WriteU64(m.noteFd, &m.noteBuf, 1); err == nil {
			select {
			case <-m.parkCh:
				parked = true
			case <-m.wakerDone:
			}
		}
		if !parked {
			m.parkEnd.Store(0)
			end = 0
		}
	}
	if end == 0 {
		runtime.Gosched()
	}
	c1, _ := m.clock.Ns(threadCPUClock)
	m.yields++
	m.yieldNs += c1 - c0
	if end > 0 {
		m.parks++
		m.parkNs += c1 - c0
	}
	m.lastYield = m.clock.Monotonic()
}

// waker runs on the other CPUs from New until Close. It waits for the
// dispatch goroutine to park (noteFd: looking for a park at intervals
// would cost the other CPU a timer wake-up every few hundred µs whether a
// park came or not), watches the wait set until parkLead before the
// slice's end, and hands the goroutine back (see park).
//
// It waits for the note parked in Go's poller, not in a blocking read: the
// hand-back makes the dispatch goroutine ready on the waker's P, and the
// waker parking right after lets its thread hand that P to the dispatch
// thread at once. (A yield instead would queue the waker, and a thread
// woken on the other CPU would have to run it again only for it to block:
// more wake-ups there at every park.) The note is seen by the runtime's
// thread blocked in the poller, when one is (one is whenever the other
// CPUs have nothing to run), else by the next thread to run out of work,
// or at the latest by sysmon's poll every 10 ms: tcs's other goroutines
// work in bursts, and a burst delays the note by its length.
func (m *Mechanism) waker() {
	defer close(m.wakerDone)
	for {
		n, err := m.noteFile.Read(m.wakeBuf[:])
		if m.wakerStop.Load() {
			return
		}
		if err == nil && n != 8 {
			err = fmt.Errorf("read %d bytes of 8", n)
		}
		if err != nil {
			m.wakerErr = fmt.Errorf("mechanism: the waker's note: %w", err)
			return
		}
		end := m.parkEnd.Load()
		if end == 0 {
			continue // a park already handed back
		}
		// Anything ready hands the goroutine back at once (an error, none
		// is expected, too: the goroutine's own wait will see it); else
		// parkLead before the end, and the goroutine's own wait, with the
		// timer armed, ends the slice.
		_, _ = m.ep.Watch(end - parkLead)
		m.parkEnd.Store(0)
		// end is published a few ns before the goroutine parks: offer the
		// hand-back until it is taken (a blocking send would let the
		// goroutine take it without parking, and wake this one).
		for handed := false; !handed; {
			select {
			case m.parkCh <- struct{}{}:
				handed = true
			default:
				runtime.Gosched()
			}
		}
	}
}

// WakerErr is why the waker ended before Close, nil while it runs or if
// Close ended it. From then on every park was a yield (see pass).
func (m *Mechanism) WakerErr() error {
	if m.wakerDone == nil {
		return nil
	}
	select {
	case <-m.wakerDone:
		return m.wakerErr
	default:
		return nil
	}
}

// ThreadClock is the dispatch thread's CPU clock, readable from any
// thread.
func (m *Mechanism) ThreadClock() int32 { return linux.ThreadCPUClock(m.tid) }

func (m *Mechanism) disarm() error {
	m.armed = false
	if err := m.timer.Disarm(); err != nil {
		return err
	}
	_, err := m.timer.Expirations()
	return err
}

// wait blocks in epoll_wait until something reportable is ready (or once,
// when timeoutMs >= 0). gen is the detector generation armed for the
// dispatched client (0: none).
func (m *Mechanism) wait(w *Wake, timeoutMs int, gen uint64) error {
	for {
		var n int
		var err error
		if gen != 0 && m.cur != nil {
			// The dispatched client's clock is read at the wake itself.
			var e unix.Errno
			n, e = m.ep.WaitCPU(timeoutMs, m.cur.clk, &m.endTS)
			if e != 0 {
				err = fmt.Errorf("epoll_wait: %w", e)
			}
			m.endCPU = m.endTS.Sec*1e9 + m.endTS.Nsec
		} else {
			n, err = m.ep.Wait(timeoutMs)
		}
		if err != nil {
			return err
		}
		now := m.clock.Monotonic()
		m.lastWake = now
		any := false
		for i := 0; i < n; i++ {
			tag := m.ep.Tag(i)
			switch {
			case tag == tagTimer:
				x, err := m.timer.Expirations()
				if err != nil {
					return err
				}
				if x > 0 && m.expiry < m.due && now < m.due-rearmSlack {
					// A kept timer's early expiry (Run): the slice goes on
					// until its own end.
					m.expiry = m.due
					if err := m.timer.ArmAt(m.expiry); err != nil {
						return err
					}
					m.earlyFires++
				} else if x > 0 {
					w.Timer, w.Late, any = true, now-m.due, true
					m.armed = false
				}
			case tag == tagDetector:
				// A notification for an older generation (the client was
				// preempted by the timer, then the detector ran while the
				// coordinator was busy elsewhere) is stale: ignore it.
				if gen != 0 && atomic.LoadUint64(m.det.ack) == gen {
					w.Blocked, any = true, true
				}
			case tag == tagDetectorExit:
				return ErrDetector
			case tag == tagProcEvents:
				m.procEvents()
			case tag&tagExec != 0:
				idx := int(tag &^ tagExec)
				if idx < len(m.procs) && m.procs[idx] != nil {
					if err := m.execEnded(m.procs[idx]); err != nil {
						return err
					}
				}
				any = true
			case tag&tagProc != 0:
				idx := int(tag &^ tagProc)
				if idx < len(m.procs) && m.procs[idx] != nil && !m.procs[idx].exited {
					p := m.procs[idx]
					p.exited = true
					if err := m.ep.Del(p.pidfd); err != nil {
						return err
					}
					if w.Exited == nil {
						w.Exited, any = p, true
					}
				}
			default:
				if w.N < len(w.Tags) {
					w.Tags[w.N] = tag
					w.N++
				}
				any = true
			}
		}
		if any || timeoutMs >= 0 {
			return nil
		}
	}
}

// waitExec waits, p dispatched inside its exec, until the exec is over or
// p has exited: nothing else ends that dispatch, not even p sleeping (the
// exec waits for the trampoline's other threads to end), since lowered
// inside its exec p would hold the exec's locks. Whatever else becomes
// ready meanwhile stays in the wait set for the next wait. An exec that
// does not end in execWait ends the run with an error (the watchdog ends
// every client before that).
func (m *Mechanism) waitExec(p *Proc, w *Wake) error {
	fds := []int{p.execFd, p.pidfd}
	var ready [2]bool
	deadline := m.clock.Monotonic() + int64(execWait)
	for {
		if err := linux.PollIn(fds, 100, ready[:]); err != nil {
			return err
		}
		now := m.clock.Monotonic()
		m.lastWake = now
		if ready[0] || ready[1] {
			if cpu, err := p.clock.Ns(p.clk); err == nil {
				m.endCPU = cpu
			}
			if err := m.execEnded(p); err != nil {
				return err
			}
			if ready[1] && !p.exited {
				p.exited = true
				if err := m.ep.Del(p.pidfd); err != nil {
					return err
				}
				w.Exited = p
			}
			return nil
		}
		if now > deadline {
			return fmt.Errorf("client %q (pid %d): its exec did not end in %v of wall time", p.Name, p.Pid, execWait)
		}
	}
}

// execWait bounds an exec's wall time (see waitExec).
const execWait = 60 * time.Second

// execEnded forgets p's exec stream once its exec is over (or p is gone).
func (m *Mechanism) execEnded(p *Proc) error {
	if p.execFd < 0 {
		return nil
	}
	if err := m.ep.Del(p.execFd); err != nil {
		return err
	}
	unix.Close(p.execFd)
	p.execFd = -1
	p.complete = false // the exec's threads are listed at the next lowering
	return nil
}

// dormantAfter is how long (CLOCK_MONOTONIC ns) a client's thread must
// use no CPU before look leaves it lowered, and dormantRaises after how
// many raises of its client it may be so sooner: a run much faster than
// real time (a bench of a few seconds at an rtf of 30 takes a tenth of a
// second) would otherwise raise and lower a Go client's idle runtime
// threads at every dispatch of it. A look costs a read per thread, so
// once per dormantRaises raises costs a fraction of a µs per dispatch.
// dormantRecheck: after a look that found a thread running again (or
// after wake), the next look comes this many raises later (see look).
const (
	dormantAfter   = 1_000_000_000
	dormantRaises  = 50
	dormantRecheck = 5
)

// look reads the CPU time of every thread of p, which is lowered, once
// per dormantAfter or dormantRaises (Run, before it raises p). A thread
// that used none since the last look is dormant: setLevel leaves it
// lowered, where it cannot run. A Go client has four threads, two of
// them the runtime's idle threads parked for good: raising and lowering
// those was a quarter of the dispatch thread's CPU. Should every raised
// thread of p block while a dormant one is not asleep, Run raises the
// dormant ones (wakeNeeded) before it reports a block: that one may be
// what the others wait for. A dormant thread that ran is awake again.
//
// A thread that ran in an interval after one without CPU was woken by
// something of its program that comes now and then, not at every
// dispatch (a Go client's sysmon and an idle runtime thread, woken when
// the client's read of a reply blocks), and is likely idle again soon.
// Awake, it would be raised and lowered at every raise until the next
// look, dormantRaises later: so the next look comes dormantRecheck raises
// later instead.
func (m *Mechanism) look(p *Proc) {
	p.lookAt, p.raises, p.recheck = m.lastWake, 0, false
	if p.exited || p.reaped || p.released {
		return
	}
	if !p.syncWatch() {
		return
	}
	for k := range p.watch {
		t := &p.watch[k]
		ns, err := t.rt.Ns()
		if err != nil {
			t.dormant, t.looked = false, false
			continue
		}
		if t.watch(ns) {
			p.recheck = true
		}
	}
}

// syncWatch makes p.watch follow p.tids (it allocates when they changed).
// It reports false when a thread's file cannot be opened: no thread is
// then dormant.
func (p *Proc) syncWatch() bool {
	same := len(p.watch) == len(p.tids)
	for k := 0; same && k < len(p.tids); k++ {
		same = p.watch[k].tid == p.tids[k]
	}
	if same {
		return true
	}
	old := p.watch
	p.watch = make([]threadWatch, len(p.tids))
	ok := true
	for k, tid := range p.tids {
		t := &p.watch[k]
		t.tid = tid
		for j := range old {
			if old[j].tid == tid && old[j].rt != nil {
				*t, old[j].rt = old[j], nil
				t.dormant = false
			}
		}
		if t.rt == nil {
			rt, err := linux.OpenRuntime(p.Pid, tid)
			if err != nil {
				ok = false
				continue
			}
			t.rt = rt
		}
	}
	closeWatch(old)
	if !ok {
		closeWatch(p.watch)
		p.watch = nil
	}
	return ok
}

// wake makes every thread of p awake (setLevel raises them all again) and
// reports whether one was dormant. The next look comes soon (recheck):
// what woke them is likely over by then.
func (p *Proc) wake() bool {
	was := false
	for k := range p.watch {
		was = was || p.watch[k].dormant
		p.watch[k].dormant = false
	}
	p.recheck = p.recheck || was
	return was
}

// wakeNeeded is asked when every raised thread of p blocked. A dormant
// thread that is not asleep (state S) may be what they wait for: woken by
// one of them, it is runnable at ℓ3, where it cannot run. Then every
// thread of p is made awake (wake) and wakeNeeded reports true. Dormant
// threads that sleep stay dormant: the block is real, and raising them
// would only make the next blocks cost a raise and a wait more each.
func (p *Proc) wakeNeeded() bool {
	for k := range p.watch {
		if p.watch[k].dormant && !p.isSysmon(p.watch[k].tid) && !p.asleep(p.watch[k].tid) {
			return p.wake()
		}
	}
	return false
}

// asleep reports whether thread tid of p is in an interruptible sleep
// (state S), read from its stat file kept open (syncStates). Any other
// state, or a file that cannot be read, is not asleep.
func (p *Proc) asleep(tid int) bool {
	p.syncStates()
	for k := range p.states {
		if p.states[k].tid == tid {
			st, err := p.states[k].f.State()
			return err == nil && st == 'S'
		}
	}
	return false
}

func closeWatch(w []threadWatch) {
	for k := range w {
		if w[k].rt != nil {
			w[k].rt.Close()
			w[k].rt = nil
		}
	}
}

// isDormant reports whether p's k-th thread, tid, is dormant.
func (p *Proc) isDormant(k, tid int) bool {
	return k < len(p.watch) && p.watch[k].tid == tid && p.watch[k].dormant
}

// setLevel puts every thread of p at SCHED_FIFO prio, re-listing p's
// threads when one is gone or, when it lowers p, the count changed (a
// thread created while p was dispatched inherited ℓ1 and must come down
// with it).
func (m *Mechanism) setLevel(p *Proc, prio int) error {
	if p.exited || p.reaped {
		return nil
	}
	p.level = prio
	err := m.setOwnLevel(p, prio)
	if len(p.kids) > 0 {
		m.levelKids(p)
	}
	return err
}

// setOwnLevel is setLevel for p's own threads.
func (m *Mechanism) setOwnLevel(p *Proc, prio int) error {
	raise := prio == m.conf.Base-1
	if p.execFd >= 0 {
		// Until its exec is over p's one thread under control is the one
		// that execs (gate); the trampoline's others end with the exec
		// where they are, off the simulation CPU. The exec's new threads
		// are listed at the first lowering after it (execEnded).
		for _, tid := range p.tids {
			if _, err := m.setThread(p, tid, prio); err != nil {
				return err
			}
		}
		p.released = false
		return nil
	}
	newestFirst := p.Requeue && raise
	p.heldBack = 0
	for pass := 0; pass < 3; pass++ {
		stale := false
		for k := range p.tids {
			i := k
			if newestFirst {
				i = len(p.tids) - 1 - k
			}
			tid := p.tids[i]
			if p.isDormant(i, tid) || p.isSysmon(tid) && !p.sm.lowerNow(raise) {
				continue // sysmon moves in its turns (sysmon.go)
			}
			if raise && tid == p.HoldBack {
				p.heldBack = tid // raised once the others block (Run)
				continue
			}
			gone, err := m.setThread(p, tid, prio)
			if err != nil {
				return err
			}
			stale = stale || gone
		}
		if !stale && raise && p.complete {
			// Threads are created only by running threads, and p has
			// not run since it was lowered with its list complete. Once
			// raised it runs: the next raise counts again unless a
			// lowering checked the list meanwhile.
			p.complete = false
			return nil
		}
		n, err := p.tasks.Count()
		if err != nil {
			return nil // gone: its exit will show on the pidfd
		}
		if !stale && n == len(p.tids) {
			p.released = false
			p.complete = !raise
			return nil
		}
		if p.tids, err = p.tasks.List(p.tids); err != nil {
			return nil
		}
		// The threads changed: none is dormant until the next look. Their
		// stat files (Runnable) follow the list now, once, rather than
		// at the first probe of p, whenever in the run that comes.
		p.wake()
		p.syncStates()
	}
	p.released = false
	p.complete = false
	return nil
}

// requeueMain moves p's main thread, which a best-effort node computes in,
// to the tail of ℓ1 (lowered and raised again: setting a thread's level to
// the one it has does not move it), behind the threads of p woken while
// it computed. Preempted at the end of a slice, a SCHED_FIFO thread stays
// at the head of its level, and they would wait for it until it blocks.
// Two priority changes, where lowering and raising all of p's threads
// (setLevel, newest first) takes two per thread.
func (m *Mechanism) requeueMain(p *Proc) error {
	if p.exited || p.reaped || p.execFd >= 0 || p.heldBack == p.Pid {
		return nil
	}
	for k, tid := range p.tids {
		if tid != p.Pid {
			continue
		}
		if p.isDormant(k, tid) || p.isSysmon(tid) {
			return nil // left at ℓ3 by setLevel: it stays there
		}
		if gone, err := m.setThread(p, tid, m.conf.Base-3); err != nil || gone {
			return err
		}
		_, err := m.setThread(p, tid, m.conf.Base-1)
		return err
	}
	return nil
}

// setThread puts thread tid of p at SCHED_FIFO prio; gone reports that
// the thread no longer exists.
func (m *Mechanism) setThread(p *Proc, tid, prio int) (gone bool, err error) {
	if tid <= 0 {
		// 0 would name the calling thread, the dispatch thread.
		return false, fmt.Errorf("client %q: no thread %d", p.Name, tid)
	}
	err = m.prio.SetPriority(tid, prio)
	switch {
	case err == nil:
	case errors.Is(err, unix.ESRCH):
		return true, nil
	case errors.Is(err, unix.EINVAL):
		// Not a real-time thread (released, or it changed its own
		// policy): put it back under control.
		if err := linux.SetFIFO(tid, prio); err != nil && !errors.Is(err, unix.ESRCH) {
			return false, fmt.Errorf("client %q thread %d: %w", p.Name, tid, err)
		}
	default:
		return false, fmt.Errorf("client %q thread %d: %w", p.Name, tid, err)
	}
	return false, nil
}

// UnknownExit is the exit code of an attached client, whose status goes to
// its own parent.
const UnknownExit = -1

// signal sends sig to p: to its process group when tcs started it, to the
// process alone when it was attached.
func (p *Proc) signal(sig unix.Signal) error {
	if p.adopted {
		return linux.PidfdSignal(p.pidfd, sig)
	}
	return linux.KillGroup(p.Pid, sig)
}

// Reap collects the exit code of p after a Wake reported it exited (or
// after Kill), blocking until it has exited.
func (m *Mechanism) Reap(p *Proc) (code int, err error) {
	if p.reaped {
		return p.ExitCode, nil
	}
	if p.adopted {
		// Its parent (roslaunch) collects its status, not tcs.
		m.forget(p, UnknownExit)
		return UnknownExit, nil
	}
	// The status is read but the zombie left to Close, which reaps it at
	// the normal scheduler's level: reaping makes the kernel invalidate
	// its /proc entries, which spins while another task shrinks the same
	// ones, and from this thread at ℓ0 on the simulation CPU it kept that
	// task, below it there, from ever running (seen: waitid spinning in
	// d_walk for over 15 min, tcs unkillable even by SIGKILL, its
	// detector and clients left at their real-time priorities).
	code, err = linux.ExitPidfd(p.pidfd)
	if err != nil {
		return 0, fmt.Errorf("reap client %q (pid %d): %w", p.Name, p.Pid, err)
	}
	m.zombies = append(m.zombies, p.Pid)
	m.forget(p, code)
	return code, nil
}

func (m *Mechanism) forget(p *Proc, code int) {
	if !p.exited {
		_ = m.ep.Del(p.pidfd)
	}
	_ = m.execEnded(p)
	p.exited, p.reaped, p.ExitCode = true, true, code
	unix.Close(p.pidfd)
	p.pidfd = -1
	p.tasks.Close()
	closeWatch(p.watch)
	p.watch = nil
	closeStates(p.states)
	p.states = nil
	p.sm.drop()
	m.closeKids(p)
	if p.cmd != nil && p.cmd.Process != nil {
		p.cmd.Process.Release()
	}
	if m.cur == p {
		m.cur = nil
	}
	m.procs[p.idx] = nil
}

// Kill sends SIGKILL to p's process group and raises p to ℓ1 so the kernel
// can finish it (a gated process cannot even die). Reap it afterwards.
func (m *Mechanism) Kill(p *Proc) error {
	if p.reaped {
		return nil
	}
	if err := p.signal(unix.SIGKILL); err != nil && !errors.Is(err, unix.ESRCH) {
		return fmt.Errorf("kill client %q: %w", p.Name, err)
	}
	for _, tid := range p.tids {
		_ = linux.SetFIFO(tid, m.conf.Base-1)
	}
	return nil
}

// Release drops every thread of p to SCHED_OTHER (free mode, end of run).
// A later Run puts it back under SCHED_FIFO.
func (m *Mechanism) Release(p *Proc) error {
	if p.reaped {
		return nil
	}
	if p.execFd < 0 { // before its exec, its one thread under control (gate)
		p.relist()
	}
	for _, tid := range p.tids {
		if err := linux.SetOther(tid); err != nil && !errors.Is(err, unix.ESRCH) {
			return fmt.Errorf("release client %q thread %d: %w", p.Name, tid, err)
		}
	}
	p.released = true
	p.complete = false
	p.hasSeen, p.atRequest = false, false
	p.sm.released()
	p.level = 0
	m.levelKids(p)
	if m.cur == p {
		m.cur = nil
	}
	return nil
}

// Restrain puts every thread of p at ℓ3 (a Released client back under
// control, not dispatched).
func (m *Mechanism) Restrain(p *Proc) error { return m.setLevel(p, m.conf.Base-3) }

// ParkDetector parks (true) or resumes (false) the block detector. Parked,
// it costs no CPU and reports nothing, so waiting clients can run whenever
// the coordinator waits: use it in free mode with Released clients.
func (m *Mechanism) ParkDetector(park bool) error {
	v := uint32(0)
	if park {
		v = 1
	}
	return linux.StoreWake(m.det.park, v)
}

// Close kills the detector, ends every remaining child (SIGTERM, then
// SIGKILL after KillGrace), returns this thread to SCHED_OTHER on every
// online CPU and frees the CPU lock.
func (m *Mechanism) Close() error {
	if m.closed {
		return nil
	}
	m.closed = true
	var errs []error
	if m.wakerDone != nil && m.WakerErr() == nil {
		// It must not watch the wait set once it is closed.
		m.wakerStop.Store(true)
		var b [8]byte
		if err := linux.WriteU64(m.noteFd, &b, 1); err != nil {
			errs = append(errs, fmt.Errorf("mechanism: end the waker: %w", err))
		} else {
			<-m.wakerDone
		}
	}
	if m.noteFile != nil {
		if err := m.noteFile.Close(); err != nil {
			errs = append(errs, fmt.Errorf("mechanism: close the waker's eventfd: %w", err))
		}
		m.noteFile, m.noteFd = nil, -1
	}
	// A raised client would keep the detector (ℓ2) from ever running its
	// exit: lower it first.
	if m.cur != nil {
		errs = append(errs, m.setLevel(m.cur, m.conf.Base-3))
		m.cur = nil
	}
	if m.det != nil {
		errs = append(errs, m.det.stop())
	}
	var live []*Proc
	for _, p := range m.procs {
		if p == nil || p.reaped {
			continue
		}
		live = append(live, p)
		if err := m.Release(p); err != nil {
			errs = append(errs, err)
		}
		_ = p.signal(unix.SIGTERM)
	}
	// The children end and are reaped at the normal scheduler's level:
	// reaping one makes the kernel invalidate its /proc entries, which
	// spins while another task is shrinking the same ones; at ℓ0 this
	// thread kept that task (on the simulation CPU, below it) from ever
	// finishing (seen once: waitid spinning in d_walk for minutes, the
	// process unkillable).
	if err := linux.SetOther(0); err != nil {
		errs = append(errs, fmt.Errorf("close: coordinator thread to SCHED_OTHER: %w", err))
	}
	for _, pid := range m.zombies { // left by Reap
		if err := linux.Reap(pid); err != nil {
			errs = append(errs, fmt.Errorf("close: reap %d: %w", pid, err))
		}
	}
	m.zombies = nil
	deadline := time.Now().Add(m.conf.KillGrace)
	for len(live) > 0 {
		rest := live[:0]
		for _, p := range live {
			if p.adopted {
				if linux.PidfdExited(p.pidfd) {
					m.forget(p, UnknownExit)
					continue
				}
			} else if code, done, err := linux.WaitPidfd(p.pidfd, false); err != nil || done {
				m.forget(p, code)
				continue
			}
			rest = append(rest, p)
		}
		live = rest
		if len(live) == 0 {
			break
		}
		if time.Now().After(deadline) {
			for _, p := range live {
				_ = p.signal(unix.SIGKILL)
				code := UnknownExit
				if !p.adopted {
					code, _, _ = linux.WaitPidfd(p.pidfd, true)
				}
				m.forget(p, code)
			}
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	// What is left descends from a client and left its process group
	// (a daemon, a setsid'd grandchild of roslaunch): the cgroups end it.
	n, err := m.cg.Kill()
	m.leftovers = n
	errs = append(errs, err, m.cg.Remove())
	all := append([]int{m.conf.CPU}, m.others...)
	if err := linux.SetAffinity(0, all...); err != nil {
		errs = append(errs, fmt.Errorf("close: unpin coordinator thread: %w", err))
	}
	if tids, err := linux.Tasks(os.Getpid()); err == nil {
		for _, tid := range tids {
			_ = linux.SetAffinity(tid, all...)
		}
	}
	if m.spawnReq != nil {
		close(m.spawnReq)
	}
	if m.timer != nil {
		errs = append(errs, m.timer.Close())
	}
	if m.ep != nil {
		errs = append(errs, m.ep.Close())
	}
	errs = append(errs, m.pev.Close())
	errs = append(errs, m.lock.Unlock())
	return errors.Join(errs...)
}
