// Package msgs holds the ROS 1 message types tcs itself produces and consumes
// (rosgraph_msgs/Clock, std_msgs/Float64, sensor_msgs/JointState) with
// allocation-free codecs for the dispatch loop: frames are appended to
// caller-owned buffers and decoded in place. Their names, MD5 sums and
// definitions are goroslib's (which match genpy's), and the tests check the
// bytes against goroslib's reflection encoder.
package msgs
