// Package ros2 is the bridge's ROS 2 transport: a cgo binding to Eclipse
// Cyclone DDS 0.10 (Debian cyclonedds-dev) that carries opaque CDR samples
// under ROS 2 type names, and a Gate with the same contract as
// bridge/ros1.Gate (driver.Bridge): clocks, the robots' sensor and
// actuator topics, relays between clients and /diagnostics.
//
// The transport is behind the build tag ros2, so that the default build
// stays pure Go and needs no Cyclone:
//
//	apt-get install cyclonedds-dev
//	go build -tags ros2 ./cmd/tcs
//
// Without the tag the package only holds StartBridge, which returns
// ErrNotBuilt, and Built = false.
//
// The wire follows rmw_cyclonedds and rmw_fastrtps (see msgs/ros2): topic
// /a is DDS topic rt/a, type pkg/msg/T is pkg::msg::dds_::T_, keyless,
// XCDR1, no type information; the participant carries USER_DATA
// "enclave=/;" and publishes ros_discovery_info (Gid of 24 bytes up to
// Humble, 16 from Iron: NodeConf.Distro) so that `ros2 node list` shows
// the bridge as /tcs. Cyclone is bound to 127.0.0.1 with unicast discovery
// by default (LoopbackConfig), and clients are told ROS_LOCALHOST_ONLY=1 /
// ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST and, unless the user's environment
// has one, CYCLONEDDS_URI=ClientConfig: a Jazzy rmw_cyclonedds node with the
// LOCALHOST range alone advertises its default interface (eth0), which the
// loopback-bound bridge cannot reach, and never matches its clock. tcs run
// prints what another shell must export to see the run (Gate.ToolEnv).
// From Iron on every writer and reader carries its type's RIHS01 hash in
// its USER_DATA ("typehash=RIHS01_...;", as rmw_cyclonedds writes it): the
// table's (msgs/ros2.TypeHash) for the types tcs knows, the publisher's for
// a relayed type it does not.
//
// SimServer serves simulation_interfaces under /tcs on the same
// participant (GetSimulatorFeatures, Get/SetSimulationState,
// StepSimulation, ResetSimulation, the SimulateSteps action) as
// rmw_cyclonedds serves a service: request topic rq/<name>Request, reply
// topic rr/<name>Reply, a 16-byte request header echoed in the reply,
// serviceid=...; in both endpoints' USER_DATA, and a reply written only
// once the client's reply reader (its clientid=...;) is matched. Each
// request is served in its own goroutine, which carries it to the dispatch
// loop through simcontrol.Controller.Do; Cyclone's listener thread only
// writes to an eventfd. The run's live status goes out on /tcs/status
// (status.go) as on ROS 1 (bridge/livestatus): a latched
// diagnostic_msgs/msg/DiagnosticStatus, published at once when a service
// changed the run's state.
//
// SimWorld is the other side: an external simulator as the run's world
// (dynamics model simulation_interfaces, registered with dynamics by this
// package's init), stepped through those services in the simulator's own
// domain, its joint states the observations, its commands a
// std_msgs/Float64MultiArray topic. ServeWorld serves one of tcs's worlds
// that way (`tcs world MODEL --ros2`), the simulator the tests step.
//
// # Real ROS 2 nodes as the driver sees them (Jazzy, rmw_cyclonedds_cpp)
//
// Measured on the test nodes of test/controllers/ros2 (/proc/PID/task/*:
// comm, stat, syscall) while they ran as tcs clients; every thread is at
// the client's SCHED_FIFO level (ℓ3 waiting, ℓ1 dispatched) on the
// simulation CPU.
//
// An rclcpp node (Node::create_timer, rclcpp::spin) has 11 threads: the
// main thread, the executor, blocked in futex(FUTEX_WAIT_BITSET, with a
// timeout: rcl_wait → dds_waitset_wait_until); rclcpp's clock thread (the
// TimeSource's own executor for /clock, NodeOptions use_clock_thread) and
// its graph listener, both in an untimed futex; rclcpp's signal-handler
// thread (untimed futex); rcl_logging_spdlog's flusher (futex on
// CLOCK_MONOTONIC with a timeout of seconds); and Cyclone's gc, dq.builtins,
// dq.user (futex), tev (timed futex: the next heartbeat or lease event),
// recv (pselect6 on the node's sockets, no timeout) and recvUC (recvmsg).
// An rclpy node has the same Cyclone, logging and signal threads, and no
// clock thread: /clock is taken by the executor in the main thread.
//
// What follows for the driver: a tick of an rclcpp timer on ROS time is a
// chain across threads, all woken by futexes while the client is
// dispatched — recvUC takes the /clock datagram, the clock thread sets ROS
// time and its jump callback triggers the timer's guard condition, the
// executor runs the callback and publishes (sendmsg from the executor
// thread: the command is in tcs's socket when it returns). None of these
// threads sleeps on a short wall-clock timeout, so the block detector sees
// the activation end exactly when the last of them blocks; the few holds
// counted (a thread in a timed sleep ≤ 2 ms: tev, gc) cost µs of wall. The
// timed sleeps are Cyclone's and spdlog's, all ≥ ms, none is the node
// polling for time. Because the clock thread and the executor are two
// threads, the ROS time an rclcpp callback reads is the client's private
// clock as last delivered, k·P plus the µs of CPU it used before when tcs
// re-dispatched it within the activation (seen ≤ 0.34 ms; rclpy: k·P
// exactly); each period still has exactly one callback. A callback that
// reads now() in a joint_states callback races with the clock thread (it
// may see the previous instant): the callback pattern's ticks are counted
// per period, not compared with k·P.
//
// Commands: the bridge's Cyclone receive thread runs on another CPU; a
// command sent just before the client blocked may be in the bridge's socket
// before that thread woke, so Settle also waits until no datagram is
// unread in the bridge's sockets (FIONREAD), else the command is stamped
// late. Those threads run at SCHED_OTHER beside whatever else the host
// runs there, which can keep them off a CPU for milliseconds: Settle waits
// as long as it takes (up to 1 s, counted in settle_timeouts). It knows
// them by the names they give themselves once running, so New waits until
// they have.
//
// The C part (shim.c) uses Cyclone's 0.10 ddsi headers (sertype/serdata),
// renamed in 0.11: it is pinned to the 0.10 line.
package ros2
