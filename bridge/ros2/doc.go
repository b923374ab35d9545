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
//
// The C part (shim.c) uses Cyclone's 0.10 ddsi headers (sertype/serdata),
// renamed in 0.11: it is pinned to the 0.10 line.
package ros2
