package ros1

import (
	"strconv"
	"sync"

	"github.com/tcs-robotics/tcs/msgs"
	"github.com/tcs-robotics/tcs/simcontrol"
)

// TopicStatus is the run's live status on the ROS graph:
// diagnostic_msgs/DiagnosticStatus, latched, so that `rostopic echo
// /tcs/status` works with nothing to install and shows the last status at
// once, also while the run is paused. (The recording's full-rate series
// of the same figures is tcs_msgs/RunStatus on record.TopicRunStatus: one
// name, one type.)
//
// The status is named "tcs"; its message is the run's state; its level is
// WARN once a client missed a deadline. Its values, in this order:
//
//	state               playing, paused, stopped or quitting
//	virtual_s           the world's virtual time
//	wall_s              wall time since virtual time began
//	real_time_factor    virtual_s / wall_s
//	drift_s             Δ at the last dispatch decision
//	drift_max_recent_s  max Δ since the previous /tcs/status
//	drift_max_s         max Δ over the run
//	overhead_fraction   the coordinator's share of the CPU the run used
//	deadline_misses     all clients' misses
//	dispatches          dispatch decisions so far
const TopicStatus = "/tcs/status"

// Live status publication period: at most one per statusEveryVirtual of
// virtual time and one per statusEveryWall of wall time, whichever is
// less often (a fast run is not flooded, a slow one not chatty).
const (
	statusEveryVirtual = 100_000_000
	statusEveryWall    = 500_000_000
)

// liveStatus publishes /tcs/status. The dispatch loop hands it every
// status it makes (PublishStatus) and the control services a new state;
// both may come at once, hence the lock.
type liveStatus struct {
	pub *Publisher

	mu        sync.Mutex
	last      simcontrol.Status
	have      bool
	lastT     int64 // virtual and wall time of the last publication
	lastWall  int64
	pubState  simcontrol.State // the state last published
	driftMax  int64            // max Δ since the last publication
	published int64
	w         msgs.DiagWriter
	num       []byte
}

func newLiveStatus(n *Node) (*liveStatus, error) {
	p, err := n.Advertise(TopicStatus, msgs.DiagnosticStatus, true)
	if err != nil {
		return nil, err
	}
	return &liveStatus{pub: p}, nil
}

// update takes the loop's status st and publishes it when due, or at
// once when the state changed.
func (s *liveStatus) update(st *simcontrol.Status) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.driftMax = max(s.driftMax, st.DriftMaxNs)
	s.last = *st
	if s.have && st.State == s.pubState && (st.TimeNs-s.lastT < statusEveryVirtual || st.WallNs-s.lastWall < statusEveryWall) {
		return
	}
	s.have = true
	s.publishLocked()
}

// setState publishes the state a control request left the run in, at
// virtual time t, at once: while the run is paused the loop makes no
// status, and a user who paused it must see so.
func (s *liveStatus) setState(state simcontrol.State, t int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.last.State = state
	s.last.TimeNs = max(s.last.TimeNs, t)
	s.publishLocked()
}

func (s *liveStatus) publishLocked() {
	st := &s.last
	s.lastT, s.lastWall, s.pubState = st.TimeNs, st.WallNs, st.State
	level, msg := msgs.DiagOK, st.State.String()
	if st.Misses > 0 {
		level, msg = msgs.DiagWarn, msg+", deadline misses"
	}
	w := &s.w
	w.BeginStatus()
	w.Status(level, "tcs", msg, "", 10)
	s.num = append(s.num[:0], st.State.String()...)
	w.KV("state", s.num)
	s.seconds("virtual_s", st.TimeNs)
	s.seconds("wall_s", st.WallNs)
	s.float("real_time_factor", st.RealTimeFactor())
	s.seconds("drift_s", st.DriftNs)
	s.seconds("drift_max_recent_s", s.driftMax)
	s.seconds("drift_max_s", st.DriftMaxRunNs)
	s.float("overhead_fraction", st.OverheadFraction())
	s.int("deadline_misses", st.Misses)
	s.int("dispatches", st.Dispatches)
	s.pub.Write(w.End())
	s.driftMax = 0
	s.published++
}

func (s *liveStatus) seconds(k string, ns int64) { s.float(k, float64(ns)/1e9) }

func (s *liveStatus) float(k string, v float64) {
	s.num = strconv.AppendFloat(s.num[:0], v, 'g', 9, 64)
	s.w.KV(k, s.num)
}

func (s *liveStatus) int(k string, v int64) {
	s.num = strconv.AppendInt(s.num[:0], v, 10)
	s.w.KV(k, s.num)
}

// count is how many statuses were published.
func (s *liveStatus) count() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.published
}
