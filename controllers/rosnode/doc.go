// Package rosnode holds the pendulum PD controller as an ordinary ROS 1
// node on goroslib v2: the Go counterpart of test/controllers/rospy/pd.py
// and test/controllers/roscpp/pd.cpp, with the same contract (see
// test/controllers/README.md). It knows nothing of tcs: it subscribes to
// joint_states, publishes the torque on command, and paces itself with
// goroslib's TimeRate on ROS time, which is sim time when /use_sim_time is
// true.
//
// goroslib v2.1.5 leaves most of the ROS command line to its caller, so
// RunPD parses it: __name, __ns, __master, __ip, __hostname, private
// parameters (_key:=value, set on the parameter server like roscpp does)
// and topic remaps (from:=to, both sides resolved in the node's namespace,
// as in roscpp and rospy). It passes goroslib resolved absolute topic
// names. Two things goroslib does on its own, which RunPD has to live with:
//
//   - With /use_sim_time true, NewNode subscribes to "/clock" itself. The
//     only remap it applies to that name comes from os.Args (NodeConf's
//     args field is unexported and NewNode sets it to os.Args), matching the
//     literal string "/clock:=..." (the first such argument wins). A
//     /clock remap given to RunPD therefore takes effect only when os.Args
//     carries the same remap, which is the case when RunPD runs a process's
//     own command line (os.Args[1:]). RunPD returns an error rather than
//     follow the wrong clock when they disagree.
//   - A non-empty ROS_NAMESPACE in the environment replaces
//     NodeConf.Namespace, so __ns:= cannot override it as it does in
//     roscpp and rospy. RunPD returns an error when they disagree.
//
// goroslib's TimeRate on sim time wakes from the /clock callback. Unlike
// rospy's and roscpp's Rate it never resets after the clock jumps ahead: it
// then runs one period per /clock message until it has caught up.
package rosnode
