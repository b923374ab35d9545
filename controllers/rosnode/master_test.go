package rosnode

import (
	"testing"
	"time"
)

// The master is asked while the node is on wall time, and on sim time
// only once its inputs stopped for masterProbe.
func TestMasterWatchQuiet(t *testing.T) {
	wall := &masterWatch{epoch: time.Now()}
	wall.alive()
	if !wall.quiet() {
		t.Errorf("on wall time: not quiet after an input; the master must be asked")
	}
	sim := &masterWatch{simTime: true, epoch: time.Now()}
	if !sim.quiet() {
		t.Errorf("on sim time before any input: not quiet")
	}
	sim.alive()
	if sim.quiet() {
		t.Errorf("on sim time right after an input: quiet")
	}
	sim.epoch = sim.epoch.Add(-masterProbe) // the input is masterProbe old
	if !sim.quiet() {
		t.Errorf("on sim time %v after the last input: not quiet", masterProbe)
	}
}
