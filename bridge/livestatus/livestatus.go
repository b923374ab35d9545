package livestatus

import (
	"sync"

	"github.com/tcs-robotics/tcs/msgs"
	"github.com/tcs-robotics/tcs/simcontrol"
)

// Topic is the live status's ROS topic.
const Topic = "/tcs/status"

// Name is the status's name (DiagnosticStatus.name).
const Name = "tcs"

// Publication period: at most one per EveryVirtual of virtual time and
// one per EveryWall of wall time, whichever is less often (a fast run is
// not flooded, a slow one not chatty); a change of state goes out at once.
const (
	EveryVirtual = 100_000_000 // ns
	EveryWall    = 500_000_000 // ns
)

// values is how many key/value pairs a status carries.
const values = 10

// Publisher decides when the live status is due and builds it. The
// dispatch loop hands it every status it makes (Update) and the control
// services a new state (SetState); both may come at once, hence the lock,
// under which write is called.
type Publisher struct {
	write func(frame []byte)

	mu        sync.Mutex
	last      simcontrol.Status
	have      bool
	lastT     int64 // virtual and wall time of the last publication
	lastWall  int64
	pubState  simcontrol.State // the state last published
	driftMax  int64            // max Δ since the last publication
	published int64
	w         msgs.DiagWriter
}

// New returns a Publisher that sends each status with write: a ROS 1
// diagnostic_msgs/DiagnosticStatus frame (msgs.DiagWriter's, length prefix
// included), valid during the call. write runs on the dispatch thread: it
// must neither block nor allocate.
func New(write func(frame []byte)) *Publisher {
	return &Publisher{write: write}
}

// Update takes the loop's status st and publishes it when due, or at once
// when the state changed. It does not allocate once its buffers have
// grown.
func (p *Publisher) Update(st *simcontrol.Status) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.driftMax = max(p.driftMax, st.DriftMaxNs)
	p.last = *st
	if p.have && st.State == p.pubState && (st.TimeNs-p.lastT < EveryVirtual || st.WallNs-p.lastWall < EveryWall) {
		return
	}
	p.have = true
	p.publishLocked()
}

// SetState publishes the state a control request left the run in, at
// virtual time t, at once: while the run is paused the loop makes no
// status, and a user who paused it must see so.
func (p *Publisher) SetState(state simcontrol.State, t int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.last.State = state
	p.last.TimeNs = max(p.last.TimeNs, t)
	p.publishLocked()
}

func (p *Publisher) publishLocked() {
	st := &p.last
	p.lastT, p.lastWall, p.pubState = st.TimeNs, st.WallNs, st.State
	level, msg := msgs.DiagOK, st.State.String()
	if st.Misses > 0 {
		level, msg = msgs.DiagWarn, msg+", deadline misses"
	}
	w := &p.w
	w.BeginStatus()
	w.Status(level, Name, msg, "", values)
	w.KVString("state", st.State.String())
	w.KVSeconds("virtual_s", st.TimeNs)
	w.KVSeconds("wall_s", st.WallNs)
	w.KVFloat("real_time_factor", st.RealTimeFactor())
	w.KVSeconds("drift_s", st.DriftNs)
	w.KVSeconds("drift_max_recent_s", p.driftMax)
	w.KVSeconds("drift_max_s", st.DriftMaxRunNs)
	w.KVFloat("overhead_fraction", st.OverheadFraction())
	w.KVInt("deadline_misses", st.Misses)
	w.KVInt("dispatches", st.Dispatches)
	p.write(w.End())
	p.driftMax = 0
	p.published++
}

// Count is how many statuses were published.
func (p *Publisher) Count() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.published
}
