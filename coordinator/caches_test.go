package coordinator

import "fmt"

// checkCaches compares what the policy keeps instead of scanning its
// clients (each robot's count of runnable clients, maxR, minWake, maxRP)
// with what the scans find now. The script, fake-machine and property
// tests call it after every decision and report, so that a change of state
// that forgets its bookkeeping fails where it happens.
func (p *Policy) checkCaches() error {
	for j := range p.robots {
		rb := &p.robots[j]
		n := 0
		for _, i := range rb.clients {
			if p.clients[i].st == stRunnable {
				n++
			}
		}
		if n != rb.nrun {
			return fmt.Errorf("robot %d: %d runnable clients, nrun %d", j, n, rb.nrun)
		}
		if rb.r > p.maxR {
			return fmt.Errorf("robot %d: clock %d past maxR %d", j, rb.r, p.maxR)
		}
	}
	wake, rp := int64(1<<63-1), p.t
	for i := range p.clients {
		c := &p.clients[i]
		if w := c.waiting(); w == stIdle || w == stReading {
			wake = min(wake, c.wake)
		}
		if c.st != stRunnable && c.st != stExited {
			rp = max(rp, c.rp)
		}
	}
	if p.wakeOK && wake != p.minWake {
		return fmt.Errorf("earliest wait %d, minWake %d", wake, p.minWake)
	}
	if p.rpOK && max(p.t, p.maxRP) != rp {
		return fmt.Errorf("latest real progress of the clients not runnable %d, maxRP %d (T %d)", rp, p.maxRP, p.t)
	}
	return nil
}
