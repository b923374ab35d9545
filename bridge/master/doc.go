// Package master is an embedded ROS 1 master: the ROS Master API and the
// Parameter Server API over XML-RPC
// (http://wiki.ros.org/ROS/Master_API,
// http://wiki.ros.org/ROS/Parameter_Server_API), so tcs runs its ROS 1
// scenarios where no ROS is installed. Debian's rospy, roscpp, rostopic,
// rosparam, rosnode, rosbag and roslaunch work against it.
//
// tcs starts one when no master answers at ROS_MASTER_URI:
//
//	hostport, err := master.ParseURI(os.Getenv("ROS_MASTER_URI"))
//	...
//	if !master.Running(hostport, time.Second) {
//		m, err := master.New(master.Conf{Addr: hostport})
//		...
//		defer m.Close()
//	}
//
// The package has three layers. The state (state.go, params.go) holds
// registrations, topic types, the parameter tree and parameter
// subscriptions; it does no I/O and keeps rosmaster's rules (name
// resolution against the caller ID, return codes, status messages, which
// subscribers hear of a change). Each call returns its reply and the slave
// API calls the master must make (publisherUpdate, paramUpdate, shutdown).
// The XML-RPC codec (xmlrpc.go) turns documents into plain Go values and
// back, escaping strings the way XmlRpc++ can read. The Master (master.go,
// notify.go) serves HTTP, runs one call at a time on the state, and makes
// the slave calls asynchronously: one ordered queue per node, each call
// bounded by Conf.CallTimeout.
//
// Differences from rosmaster: listings (getSystemState, getParamNames, ...)
// are sorted; a node replaced by another with its name also makes the
// subscribers of its topics hear of the change; a service's previous
// provider no longer counts as registered for it; unsubscribeParam reports
// whether a subscription was removed; shutdown is refused.
package master
