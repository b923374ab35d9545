package rosnode

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/bluenviron/goroslib/v2"
)

// masterProbe is how often (wall time) a node checks that the master is
// still there.
const masterProbe = time.Second

// masterWatch finds that a node's master went away: it asks the master for
// a parameter every masterProbe of wall time, but not while the node runs
// on sim time and its joint states keep coming (alive within the last
// masterProbe): whatever publishes them and the clock (tcs) then still
// runs. Under tcs each call holds the world until the master has answered,
// the block detector spinning meanwhile: a check per second per node costs
// the coordinator in proportion to the number of nodes.
type masterWatch struct {
	simTime bool
	epoch   time.Time
	beat    atomic.Int64 // ns since epoch of the last alive; 0: none yet
}

// newMasterWatch reads /use_sim_time as goroslib does when it starts a
// node (unset is false).
func newMasterWatch(n *goroslib.Node) (*masterWatch, error) {
	w := &masterWatch{epoch: time.Now()}
	set, err := n.ParamIsSet("/use_sim_time")
	if err != nil {
		return nil, fmt.Errorf("look up parameter /use_sim_time: %w", err)
	}
	if set {
		if w.simTime, err = n.ParamGetBool("/use_sim_time"); err != nil {
			return nil, fmt.Errorf("read parameter /use_sim_time: %w", err)
		}
	}
	return w, nil
}

// alive notes that the node's inputs arrived (a joint_states message).
func (w *masterWatch) alive() {
	if w.simTime {
		w.beat.Store(max(int64(time.Since(w.epoch)), 1))
	}
}

// quiet reports whether the master must be asked: the node is on wall
// time, or no input arrived for masterProbe.
func (w *masterWatch) quiet() bool {
	b := w.beat.Load()
	return b == 0 || time.Since(w.epoch)-time.Duration(b) >= masterProbe
}

// run asks the master every masterProbe while quiet, until stop is closed;
// when the master does not answer it sends the error on gone and returns.
func (w *masterWatch) run(n *goroslib.Node, master string, stop <-chan struct{}, gone chan<- error) {
	t := time.NewTicker(masterProbe)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			if !w.quiet() {
				continue
			}
			if _, err := n.ParamIsSet("/use_sim_time"); err != nil {
				gone <- fmt.Errorf("master %s went away: %w", master, err)
				return
			}
		}
	}
}
