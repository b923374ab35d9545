package driver

import "github.com/tcs-robotics/tcs/coordinator/linux"

// Runnable reports whether any thread of p is running or runnable (state R
// in /proc/PID/task/TID/stat): a blocked client that woke up on its own, for
// example when a wall-clock timeout expired. Used by the policy's probes.
func (m *Mechanism) Runnable(p *Proc) bool {
	if p.reaped || p.exited {
		return false
	}
	if tids, err := p.tasks.List(p.tids); err == nil {
		p.tids = tids
	}
	for _, tid := range p.tids {
		st, err := linux.ReadStat(p.Pid, tid)
		if err == nil && st.State == 'R' {
			return true
		}
	}
	return false
}

// DetectorPid is the block detector's process id (0 when it is not running).
func (m *Mechanism) DetectorPid() int {
	if m.det == nil || m.det.cmd == nil || m.det.cmd.Process == nil {
		return 0
	}
	return m.det.cmd.Process.Pid
}

// DetectorCPU is the CPU time (ns) the block detector's spinning thread
// has used on the simulation CPU: it spins whenever nothing else there may
// run, and that is coordination overhead. (Its process's other Go runtime
// threads live on the other CPUs and are not counted.)
func (m *Mechanism) DetectorCPU() int64 {
	if m.det == nil || m.det.runtime == nil {
		return 0
	}
	ns, err := m.det.runtime.Ns()
	if err != nil {
		return 0
	}
	return ns
}
