// Package livestatus is the run's live status on the ROS graph, /tcs/status,
// whatever the transport: what it says and how often, decided once, so that
// `rostopic echo /tcs/status` and `ros2 topic echo /tcs/status` show the
// same thing. A bridge gives a Publisher the function that sends a status
// on its transport (bridge/ros1 as is, bridge/ros2 transcoded to CDR).
//
// The status is diagnostic_msgs/DiagnosticStatus, latched, so that a
// viewer shows the last status at once, also while the run is paused, with
// nothing to install. (The recording's full-rate series of the same
// figures is tcs_msgs/RunStatus on record.TopicRunStatus: one name, one
// type.)
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
//	overhead_fraction   tcs's share of the CPU the run used (all its threads)
//	deadline_misses     all clients' misses
//	dispatches          dispatch decisions so far
//
// It must not block or allocate on the dispatch thread (Update runs there;
// the transport's write must not either) and it does no I/O of its own:
// the bridge that owns the connection sends the frame.
package livestatus
