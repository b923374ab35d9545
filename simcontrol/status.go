package simcontrol

// Status is the run's live status as the dispatch loop hands it to the
// bridges, which publish it on /tcs/status (ROS 1 and ROS 2:
// diagnostic_msgs/DiagnosticStatus). Times are ns; CPU times are what the
// run charged so far. The loop fills it every status period of virtual
// time (coordinator/driver); a bridge decides how often to publish.
type Status struct {
	State         State
	TimeNs        int64 // the world's virtual time
	WallNs        int64 // wall time since virtual time began
	DriftNs       int64 // Δ at the last dispatch decision
	DriftMaxNs    int64 // max Δ since the previous Status
	DriftMaxRunNs int64 // max Δ over the run so far
	CoordinatorNs int64 // all of tcs's CPU, on every CPU
	ClientsNs     int64 // the clients' CPU
	DynamicsNs    int64 // the world's stepping
	Dispatches    int64
	Misses        int64 // deadline misses of all clients
}

// RealTimeFactor is virtual time over wall time since virtual time began
// (0 before any wall time passed).
func (s *Status) RealTimeFactor() float64 {
	if s.WallNs <= 0 {
		return 0
	}
	return float64(s.TimeNs) / float64(s.WallNs)
}

// OverheadFraction is tcs's share of the CPU the run used (tcs on every
// CPU, clients and dynamics), 0 when none was used.
func (s *Status) OverheadFraction() float64 {
	total := s.CoordinatorNs + s.ClientsNs + s.DynamicsNs
	if total <= 0 {
		return 0
	}
	return float64(s.CoordinatorNs) / float64(total)
}
