// Package ros2 holds the ROS 2 wire conventions tcs needs and allocation-free
// CDR codecs (built on msgs/cdr) of the ROS 2 messages tcs reads or writes
// itself: rosgraph_msgs/Clock, std_msgs/Float64 and Float64MultiArray,
// sensor_msgs/JointState and LaserScan, geometry_msgs/Twist, nav_msgs/Odometry,
// a world's sensors as sensor_msgs/Imu and Range and
// geometry_msgs/WrenchStamped (sensors.go), diagnostic_msgs/DiagnosticArray and DiagnosticStatus, and
// rmw_dds_common/ParticipantEntitiesInfo (the ros_discovery_info topic that
// makes a participant's nodes visible to `ros2 node list`); the requests and responses of the simulation_interfaces
// services tcs serves and of its SimulateSteps action, with rmw_cyclonedds's
// request header (simulation.go); and the RIHS01 type hashes of all these
// types, which an endpoint carries in its USER_DATA from Iron on
// (typehash.go).
//
// A sample is the whole serialized payload as DDS carries it: the 4-byte
// encapsulation header 00 01 00 00 (little-endian plain CDR, XCDR1) followed
// by the fields, each aligned to its size counted from after the header —
// what Fast DDS's fastcdr and Cyclone DDS write for ROS 2 types (the golden
// tests compare against fastcdr byte for byte). Decoders take a sample as
// received, tolerate the up to 3 padding bytes an RTPS DATA submessage may
// append, and never panic on hostile input (see the fuzz tests).
//
// Naming: topic /a/b is DDS topic rt/a/b; type pkg/msg/Name is DDS type
// pkg::msg::dds_::Name_ (TopicName, DDSType).
package ros2
