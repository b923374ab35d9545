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
// bounded by Conf.CallTimeout. Each call has its own connection (no
// keep-alive), so Busy sees a call as soon as its node has connected: tcs
// lets the master answer before a ROS node's block counts (a node waiting
// for its master waits for tcs, not for time), and WatchUnsubscribes tells
// it which node ended its clock subscription (rospy's shutdown does so
// first).
//
// Differences from rosmaster: listings (getSystemState, getParamNames, ...)
// are sorted; a node replaced by another with its name also makes the
// subscribers of its topics hear of the change; a service's previous
// provider no longer counts as registered for it; unsubscribeParam reports
// whether a subscription was removed; shutdown is refused.
//
// # Why not goroslib's XML-RPC codec
//
// goroslib v2.1.5 (pinned) ships pkg/xmlrpc, written for a node's slave
// API and its calls to a master, where every method's parameter and reply
// types are known in advance. A master, and above all its parameter
// server, must take and give back values of any type, and goroslib's codec
// cannot, as its source shows and as calling its Server confirms:
//
//   - It decodes only into fixed Go types: a parameter declared as
//     interface{} takes a scalar, but an <array> into it fails ("cannot
//     decode an array into a <nil>"), and <struct>, <nil/> and <i8> are not
//     handled at all ("unhandled value type"). setParam of a dictionary
//     (roslaunch's <rosparam>, `rosparam set /ns "{a: 1}"`) or of a list
//     is therefore undecodable, and <int> is limited to 32 bits.
//   - Its encoder writes strings unescaped, as untyped <value>text</value>:
//     a parameter holding '<' or '&' (any robot_description URDF) makes a
//     reply that is not XML. It cannot encode a map either, so getParam of
//     a namespace (a <struct>) cannot be answered; a failed encoding
//     leaves a truncated reply with status 200.
//   - Its Server answers every error (an unknown method, wrong parameters,
//     a malformed document) with HTTP 400 and an empty body, not an
//     XML-RPC fault, so a client reports a transport error (rospy: a
//     ProtocolError) instead of the master's message. It also rejects
//     white space around a typed value.
//   - Its client reads only the ROS reply shape [code, status, value] into
//     a fixed struct and takes a fault for a syntax error, while the
//     master's paramUpdate carries arbitrary values to the nodes.
//
// Using it for the fixed-shape slave calls alone would keep two codecs for
// one protocol, so the master keeps its own: any value type both ways,
// faults, nesting limits, XmlRpc++-safe escaping. It is tested on
// documents as rospy and XmlRpc++ write them (testdata/), by fuzzing, and
// against Debian's rospy, roscpp, rostopic, rosparam, rosnode, rosbag and
// roslaunch (interop_test.go).
package master
