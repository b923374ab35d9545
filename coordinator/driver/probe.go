package driver

import "github.com/tcs-robotics/tcs/coordinator/linux"

// Runnable reports whether any thread of p is running or runnable (state R
// in /proc/PID/task/TID/stat): a blocked client that woke up on its own, for
// example when a wall-clock timeout expired. Used by the policy's probes;
// it reads each thread's state from a file kept open, and allocates only
// when p's threads changed.
//
// p's threads are listed again only when their count changed or one of
// them is gone (its stat file fails: a thread that exited while another
// was created leaves the count as it was): a listing reads the whole
// task directory, the count is one fstat.
//
// A client lowered right after its native request, without having run
// since, has the thread that wrote it runnable (see Proc.atRequest): one
// runnable thread of it is passed over while its CPU clock has not moved
// since. Counted, it would have every probe dispatch such a client for
// nothing: the dispatch would end with its read of the reply blocked.
func (m *Mechanism) Runnable(p *Proc) bool {
	if p.reaped || p.exited {
		return false
	}
	preempted := p.atRequest && m.cur != p
	if preempted {
		now, err := p.clock.Ns(p.clk)
		preempted = err == nil && now == p.seen
	}
	if n, err := p.tasks.Count(); err == nil && n != len(p.tids) {
		p.relist()
	}
	for pass := 0; pass < 2; pass++ {
		p.syncStates()
		gone := false
		for k := range p.states {
			st, err := p.states[k].f.State()
			if err != nil {
				gone = true
				continue
			}
			if st == 'R' {
				if p.isSysmon(p.states[k].tid) && !p.sm.probed(m.clock.Monotonic()) {
					continue // runnable at ℓ3 between its turns (sysmon.go)
				}
				if preempted {
					preempted = false
					continue
				}
				return true
			}
		}
		if !gone {
			break
		}
		p.relist()
	}
	// A process it started (a client waiting for its child to exit).
	for _, k := range p.kids {
		for _, tid := range k.tids {
			if st, err := linux.ReadStat(k.pid, tid); err == nil && st.State == 'R' {
				return true
			}
		}
	}
	return false
}

// relist lists p's threads again (kept as they were if the listing fails).
func (p *Proc) relist() {
	if tids, err := p.tasks.List(p.tids); err == nil {
		p.tids = tids
	}
}

// threadState is an open stat file of one thread of a client.
type threadState struct {
	tid int
	f   *linux.StateFile
}

// syncStates makes p.states follow p.tids: the files of threads gone are
// closed, those of new threads opened (a thread that cannot be opened has
// just exited and is left out).
func (p *Proc) syncStates() {
	same := len(p.states) == len(p.tids)
	for k := 0; same && k < len(p.tids); k++ {
		same = p.states[k].tid == p.tids[k]
	}
	if same {
		return
	}
	old := p.states
	p.states = make([]threadState, 0, len(p.tids))
	for _, tid := range p.tids {
		t := threadState{tid: tid}
		for j := range old {
			if old[j].tid == tid {
				t.f, old[j].f = old[j].f, nil
			}
		}
		if t.f == nil {
			f, err := linux.OpenState(p.Pid, tid)
			if err != nil {
				continue
			}
			t.f = f
		}
		p.states = append(p.states, t)
	}
	closeStates(old)
}

func closeStates(s []threadState) {
	for k := range s {
		if s[k].f != nil {
			s[k].f.Close()
			s[k].f = nil
		}
	}
}

// DetectorTid is the block detector's thread id (0 when it is not running).
func (m *Mechanism) DetectorTid() int {
	if m.det == nil {
		return 0
	}
	return m.det.tid
}

// DetectorCPU is the CPU time (ns) the block detector's thread has used on
// the simulation CPU: it spins whenever nothing else there may run, and
// that is coordination overhead.
func (m *Mechanism) DetectorCPU() int64 {
	if m.det == nil || m.det.tid == 0 {
		return 0
	}
	ns, err := m.det.clock.Ns(m.det.clk)
	if err != nil {
		return 0
	}
	return ns
}
