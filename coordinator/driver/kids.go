package driver

import (
	"cmp"
	"errors"
	"slices"

	"github.com/tcs-robotics/tcs/coordinator/linux"
	"golang.org/x/sys/unix"
)

// kid is a process a client started (a fork of the client or of one of
// its kids), adopted into it (DESIGN §3: new children of a client are
// found and adopted): its threads are at the client's level, raised and
// lowered with it, and the CPU it uses is charged to the client. A child
// left at the level of the thread that forked it would otherwise run
// beside whichever client is dispatched next, uncharged, and one that
// computes would hold the simulation CPU from it.
type kid struct {
	pid   int
	tasks *linux.TaskDir
	tids  []int
	clk   int32
	last  int64 // its CPU clock when last charged
	ran   int64 // its client's Run (Proc.runs) in which it last used CPU
}

// Adopted is how many processes the clients started that the run adopted.
func (m *Mechanism) Adopted() int { return m.adopted }

// TakeStarted reports whether p started a process that was adopted since
// it was last asked (the policy is told: Policy.Started).
func (p *Proc) TakeStarted() bool {
	s := p.started
	p.started = false
	return s
}

// EventsLost is how many times the kernel dropped process events (a fork
// may then have gone unseen and its process not adopted).
func (m *Mechanism) EventsLost() int { return m.eventsLost }

// procEvents reads the machine's process events: a process forked by a
// client or a kid is adopted into that client, a kid that exited is let go.
func (m *Mechanism) procEvents() {
	evs, err := m.pev.Read(m.pevBuf)
	m.pevBuf = evs[:0]
	if errors.Is(err, linux.ErrEventsLost) {
		m.eventsLost++
		m.findKids()
	}
	for _, e := range evs {
		if e.Pid != e.Tgid {
			continue // a thread: found with its process's others
		}
		if e.Fork {
			if p := m.owner(e.ParentTgid); p != nil {
				m.adopt(p, e.Pid)
			}
			continue
		}
		if p := m.owner(e.Pid); p != nil && p.Pid != e.Pid {
			m.letGo(p, e.Pid)
		}
	}
}

// findKids adopts the children of the clients and their kids that are
// not kids yet: the forks whose events the kernel dropped (a child that
// already left its parent is found by no one, and ends with the run's
// cgroups).
func (m *Mechanism) findKids() {
	for _, p := range m.procs {
		if p == nil || p.reaped || p.exited {
			continue
		}
		for i := 0; i <= len(p.kids); i++ { // p's kids grow as it goes
			pid, tids := p.Pid, p.tids
			if i > 0 {
				pid, tids = p.kids[i-1].pid, p.kids[i-1].tids
			}
			for _, tid := range tids {
				kids, err := linux.Children(pid, tid)
				if err != nil {
					continue
				}
				for _, k := range kids {
					if m.owner(k) == nil {
						m.adopt(p, k)
					}
				}
			}
		}
	}
}

// owner is the client that process pid is or belongs to, or nil.
func (m *Mechanism) owner(pid int) *Proc {
	for _, p := range m.procs {
		if p == nil || p.reaped {
			continue
		}
		if p.Pid == pid {
			return p
		}
		for _, k := range p.kids {
			if k.pid == pid {
				return p
			}
		}
	}
	return nil
}

// adopt makes process pid a kid of p, at p's level. Its CPU from its start
// is charged to p.
func (m *Mechanism) adopt(p *Proc, pid int) {
	tasks, err := linux.OpenTaskDir(pid)
	if err != nil {
		return // gone already
	}
	k := &kid{pid: pid, tasks: tasks, clk: linux.ProcessCPUClock(pid)}
	k.tids, _ = tasks.List(nil)
	p.kids = append(p.kids, k)
	p.started = true
	m.adopted++
	m.levelKid(p, k)
}

// letGo forgets kid pid of p, which exited: the CPU it used since it was
// last charged is charged with p's next Run (its clock is still readable
// until its parent reaps it).
func (m *Mechanism) letGo(p *Proc, pid int) {
	i := slices.IndexFunc(p.kids, func(k *kid) bool { return k.pid == pid })
	if i < 0 {
		return
	}
	k := p.kids[i]
	if ns, err := p.clock.Ns(k.clk); err == nil && ns > k.last {
		p.extra += ns - k.last
	}
	k.tasks.Close()
	p.kids = slices.Delete(p.kids, i, i+1)
}

// kidsCPU returns the CPU p's kids used since it was last charged, at the
// end of each of p's Runs.
func (p *Proc) kidsCPU() int64 {
	p.runs++
	var d int64
	for _, k := range p.kids {
		if ns, err := p.clock.Ns(k.clk); err == nil && ns > k.last {
			d += ns - k.last
			k.last = ns
			k.ran = p.runs
		}
	}
	return d
}

// levelKids puts every thread of p's kids at p's level. Raised threads
// join the back of ℓ1's queue in the order they are raised, and SCHED_FIFO
// runs the first of equals until it blocks: the kids are raised the one
// that used CPU longest ago first, so that one that computes does not hold
// p's turns from the others (one CPU shares itself among its processes).
func (m *Mechanism) levelKids(p *Proc) {
	if p.level == m.conf.Base-1 && len(p.kids) > 1 {
		slices.SortStableFunc(p.kids, func(a, b *kid) int { return cmp.Compare(a.ran, b.ran) })
	}
	for i := 0; i < len(p.kids); {
		if m.levelKid(p, p.kids[i]) {
			i++
			continue
		}
		p.kids[i].tasks.Close()
		p.kids = slices.Delete(p.kids, i, i+1)
	}
}

// levelKid puts every thread of kid k at p's level (p.level; 0: released,
// SCHED_OTHER), re-listing them when they changed. It reports false once
// k is gone.
func (m *Mechanism) levelKid(p *Proc, k *kid) bool {
	for pass := 0; pass < 3; pass++ {
		stale := false
		for _, tid := range k.tids {
			var err error
			if p.level == 0 {
				err = linux.SetOther(tid)
			} else if err = m.prio.SetPriority(tid, p.level); errors.Is(err, unix.EINVAL) {
				err = linux.SetFIFO(tid, p.level)
			}
			stale = stale || errors.Is(err, unix.ESRCH)
		}
		n, err := k.tasks.Count()
		if err != nil {
			return false
		}
		if !stale && n == len(k.tids) {
			return true
		}
		if k.tids, err = k.tasks.List(k.tids); err != nil {
			return false
		}
	}
	return true
}

// closeKids forgets p's kids (p is gone): during the run they are lowered
// to ℓ3, where they wait for its end unless they end first (its cgroups
// end them); as the run closes, to SCHED_OTHER.
func (m *Mechanism) closeKids(p *Proc) {
	p.level = m.conf.Base - 3
	if m.closed {
		p.level = 0
	}
	m.levelKids(p)
	for _, k := range p.kids {
		k.tasks.Close()
	}
	p.kids = nil
}
