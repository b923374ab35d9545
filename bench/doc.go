// Package bench holds the benchmarks `tcs bench ...` runs on the real
// mechanism: Dispatch measures the dispatch cycle of coordinator/driver
// against the same cycle written in C, the C reference of a computing
// client's slice under a private clock (a priority swap and a socket write
// per slice: the floor of a planner's slices), and how late a busy client
// is taken back at the end of its quantum; Delivery measures a gated ROS delivery
// against goroslib's own publisher (and, with the ros2 tag, over ROS 2);
// Decision measures the pure policy's cost per scheduling decision as the
// client count grows; Activation runs whole scenarios (tcs run) with every
// kind of client tcs supports and measures the coordinator's CPU per
// activation and per dispatch of each, against native C; Soak runs one
// long scenario of mixed clients and watches the coordinator's process
// (RSS, open fds, goroutines, threads) and Δ per minute for a trend.
package bench
