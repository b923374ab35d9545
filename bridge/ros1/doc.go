// Package ros1 is the bridge's ROS 1 side, built on goroslib v2's protocol
// packages (apislave, apimaster, protocommon) rather than on its Node,
// because gated delivery must know when a message's bytes are in the
// receiver's socket and goroslib's Publisher.Write queues and may drop.
//
// A Node is the bridge's identity on the ROS graph: a slave API server, a
// TCPROS listener and its registrations with the master. The control plane
// (XML-RPC calls, TCPROS handshakes) runs in ordinary goroutines; once a
// connection is established its socket is handed over as a raw descriptor:
//
//   - a Publisher writes frames to each subscriber's socket with one
//     non-blocking send (SendAll): when Write returns, the bytes are in the
//     subscriber's socket, or the subscriber was dropped with a logged
//     reason; nothing is queued.
//   - a Subscriber connects to every publisher of its topic and hands each
//     connection (an InConn) to its owner, which waits on the descriptor and
//     reads whole frames without blocking.
//
// Both are meant to be driven from the coordinator's dispatch thread, on the
// simulation CPU, so that a client's publication wakes the coordinator at
// once and is stamped with the client's CPU clock read there.
//
// The same TCPROS listener serves the node's services (service.go): each
// client connection in its own goroutine, one call after another. The
// run's control services under /tcs (control.go, std_srvs types) hand
// their requests to the dispatch loop through a simcontrol.Controller, and
// the run's live status goes out on /tcs/status as
// diagnostic_msgs/DiagnosticStatus (status.go, bridge/livestatus): standard
// types, so that rosservice and rostopic work with nothing of tcs installed.
package ros1
