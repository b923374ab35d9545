package driver

import "github.com/tcs-robotics/tcs/coordinator/linux"

// The Go runtime's monitor thread (sysmon) of a client written in Go.
//
// Every Go program has a thread, sysmon, that runs outside its scheduler:
// while any of the program's threads is busy it sleeps 20 µs at a time
// (the delay grows only after 50 idle rounds), and a program that makes a
// system call while sysmon sleeps deeply wakes it (entersyscall), which
// restarts the 20 µs rounds. Raised and lowered with its client, it arms a
// 20 µs timer at nearly every dispatch, and the timer expires after the
// client's dispatch has ended: the interrupt lands on what runs then on the
// simulation CPU, mostly the dispatch thread or the detector, and the
// thread it wakes cannot run until its client's next dispatch.
//
// On one CPU under SCHED_FIFO, sysmon does little of its work anyway: at
// its client's level it cannot preempt the thread that computes (threads
// of one FIFO level do not share the CPU), so it runs only once that thread
// has blocked. So the mechanism keeps a Go client's sysmon (a ROS client's:
// Proc.SysmonTurns; a native client waits for replies to its requests, and
// a probe must not take its sysmon for it waking) at ℓ3, whatever
// the level of its client, and raises it for one dispatch of its client per
// sysmonTurn of wall time and sysmonRuns dispatches (startTurn, endTurn): it
// still hands on a P held by a blocking system call, forces the periodic
// collection and wakes the scavenger, with that much more delay. A turn in
// which the client started a thread or woke a dormant one (sysmon handed a
// P on: a goroutine could run again) is followed by sysmonChain more, at
// the client's next dispatches: sysmon needs two looks at a system call to
// hand its P on, and a program that blocks one goroutine after another in
// system calls (a thread per blocking call) needs it at each. The CPU
// it uses in its turns is the client's, charged as such. Waiting at ℓ3 it
// is often runnable: the hold-over rule's scan (workTids) and wakeNeeded
// leave it out, since that says nothing about what its client waits for,
// and the probes (Runnable) count it only when its turn is due.
//
// Finding it: sysmon is the first thread a Go program creates
// (runtime.main starts it before any package is initialised), and it
// sleeps in one of two ways no other thread of a Go program, nor glibc,
// uses (ThreadSyscall.GoSysmonSleep). A client whose executable carries
// Go's build information is looked at after each of its blocks until its
// first created thread is seen in such a sleep, at most sysmonLooks times
// (a Go program whose sysmon never sleeps so is never found, and needs
// not be).

// sysmonTurn is the wall time (CLOCK_MONOTONIC ns) between two dispatches
// of a client in which its sysmon thread is raised with it: sysmon's own
// longest sleep. sysmonRuns is how many dispatches or probes of the client
// come between two turns at least: with many clients, or clients that
// compute much, a client's dispatches are more than sysmonTurn apart, and
// every one would be a turn.
const (
	sysmonTurn = 10_000_000
	sysmonRuns = 8
)

// sysmonChain is how many turns follow, at the client's next dispatches,
// one in which sysmon handed a P on.
const sysmonChain = 2

// sysmonLooks bounds the blocks after which a Go client's sysmon thread is
// looked for.
const sysmonLooks = 256

// sysmonSearch is where the search for a client's sysmon thread stands.
type sysmonSearch uint8

const (
	sysmonUnknown   sysmonSearch = iota // its program not looked at yet
	sysmonSearching                     // a Go program: looking
	sysmonFound                         // sysmonThread.tid is the thread
	sysmonNone                          // not a Go program, or not found
)

// sysmonThread is what the mechanism knows of a client's sysmon thread.
type sysmonThread struct {
	tid    int // valid when st is sysmonFound
	st     sysmonSearch
	looks  int                // looks left while searching
	cand   int                // the thread looked at
	file   *linux.SyscallFile // its syscall file, while searching
	up     bool               // not at ℓ3: raised for a turn, or released
	inTurn bool               // raised by startTurn for this dispatch
	turnAt int64              // CLOCK_MONOTONIC of its last turn
	turns  int64
	chain  int   // turns owed at the next dispatches (sysmonChain)
	runs   int   // dispatches and probes since the last turn
	chains int64 // turns given for a chain
	count  int   // the client's thread count when the turn began
	work   []int // the client's threads without it (workTids)
}

// findSysmon looks once for the sysmon thread of p, which has just blocked.
func (m *Mechanism) findSysmon(p *Proc) {
	s := &p.sm
	switch s.st {
	case sysmonFound, sysmonNone:
		return
	case sysmonUnknown:
		if p.execFd >= 0 || p.exited || p.reaped || p.released {
			return // not running its own program yet
		}
		if !p.SysmonTurns || !linux.GoProgram(p.Pid) {
			s.st = sysmonNone
			return
		}
		s.st, s.looks = sysmonSearching, sysmonLooks
	}
	if s.looks--; s.looks < 0 {
		s.drop()
		s.st = sysmonNone
		return
	}
	tid := firstCreated(p.Pid, p.tids)
	if tid == 0 {
		return
	}
	if tid != s.cand {
		s.drop()
		f, err := linux.OpenSyscall(p.Pid, tid)
		if err != nil {
			return // gone, or p's list is stale: the next look
		}
		s.cand, s.file = tid, f
	}
	sc, err := s.file.Read()
	if err != nil {
		s.drop()
		return
	}
	if sc.GoSysmonSleep() {
		s.drop()
		s.tid, s.st = tid, sysmonFound
	}
}

// drop closes the candidate's file.
func (s *sysmonThread) drop() {
	if s.file != nil {
		s.file.Close()
		s.file = nil
	}
	s.cand = 0
}

// startTurn raises p's sysmon thread for this dispatch of p (Run, after
// p was raised) when its turn is due (now is CLOCK_MONOTONIC).
func (m *Mechanism) startTurn(p *Proc, now int64) error {
	s := &p.sm
	if s.st != sysmonFound {
		return nil
	}
	if s.runs++; !s.due(now) {
		return nil
	}
	if s.chain > 0 {
		s.chain--
		s.chains++
	}
	s.turnAt, s.up, s.inTurn, s.runs = now, true, true, 0
	s.turns++
	s.count, _ = p.tasks.Count()
	_, err := m.setThread(p, s.tid, m.conf.Base-1)
	return err
}

// due reports whether sysmon's turn is due at the client's next dispatch
// (now is CLOCK_MONOTONIC).
func (s *sysmonThread) due(now int64) bool {
	return s.chain > 0 || now-s.turnAt >= sysmonTurn && s.runs >= sysmonRuns
}

// probed is asked by a probe (Runnable) that found p's sysmon runnable:
// it counts the client woken when sysmon's turn is due, since its runtime
// has work (a P to hand on) that only a turn does.
func (s *sysmonThread) probed(now int64) bool {
	s.runs++
	return s.due(now)
}

// endTurn puts p's sysmon thread back at ℓ3 after a turn or a release
// (Run, after the wait; woke: a dormant thread of p was raised meanwhile);
// while it is searched for, it looks once after each block of p.
func (m *Mechanism) endTurn(p *Proc, blocked, woke bool) error {
	s := &p.sm
	switch s.st {
	case sysmonUnknown, sysmonSearching:
		if !blocked {
			return nil
		}
		if m.findSysmon(p); s.st != sysmonFound {
			return nil
		}
		s.up = true // it moved with p until now
	case sysmonNone:
		return nil
	}
	if !s.up || p.released {
		return nil
	}
	if s.inTurn {
		if n, err := p.tasks.Count(); woke || err == nil && n != s.count {
			s.chain = sysmonChain
		}
	}
	s.up, s.inTurn = false, false
	_, err := m.setThread(p, s.tid, m.conf.Base-3)
	return err
}

// released notes that p's threads, sysmon's among them, were released.
func (s *sysmonThread) released() { s.up = s.st == sysmonFound }

// lowerNow reports whether setLevel moves p's sysmon thread with the
// others: only when it lowers p while sysmon is not at ℓ3 (after a
// release); turns move it themselves (startTurn, endTurn).
func (s *sysmonThread) lowerNow(raise bool) bool {
	if raise || !s.up {
		return false
	}
	s.up = false
	return true
}

// isSysmon reports whether tid is p's sysmon thread, found.
func (p *Proc) isSysmon(tid int) bool { return p.sm.st == sysmonFound && tid == p.sm.tid }

// workTids returns p's threads without its sysmon thread (p.tids itself
// when it has none found): those whose waits say what p waits for.
func (p *Proc) workTids() []int {
	if p.sm.st != sysmonFound {
		return p.tids
	}
	w := p.sm.work[:0]
	for _, t := range p.tids {
		if t != p.sm.tid {
			w = append(w, t)
		}
	}
	p.sm.work = w
	return w
}

// Sysmon returns the tid of p's Go runtime sysmon thread that the
// mechanism keeps at ℓ3 (0: none), and how many turns it was given.
func (p *Proc) Sysmon() (tid int, turns int64) {
	if p.sm.st != sysmonFound {
		return 0, 0
	}
	return p.sm.tid, p.sm.turns
}

// firstCreated returns the thread of process pid, among tids, created
// first after its main thread: the kernel hands out ids in increasing
// order, wrapping at pid_max, so it is the one at the least distance above
// pid (one that wrapped counts as further). 0 when tids has no other.
func firstCreated(pid int, tids []int) int {
	best, bestD := 0, uint32(0)
	for _, t := range tids {
		if t == pid {
			continue
		}
		if d := uint32(t - pid); best == 0 || d < bestD {
			best, bestD = t, d
		}
	}
	return best
}
