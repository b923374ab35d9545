package bench

import (
	"errors"
	"fmt"
	"io"
	"strconv"
)

// ROS2Delivery is the ROS 2 part of Delivery, in ns: the same
// sensor_msgs/JointState (same joints, rate, fan-out and count) published
// through bridge/ros2's Gate.Sample to o.Subscribers DDS readers.
//
// Gated, for ROS 2, means: when Gate.Sample returns, the sample has been
// encoded as CDR and handed to Cyclone DDS's dds_writecdr, which sent it
// (one RTPS DATA datagram per matched reader's unicast locator, no
// batching, from the calling thread) before returning; on loopback each
// datagram is then in the reader's UDP socket, the same "bytes in the
// receiver's socket" as ROS 1's gated publisher. The call reports the
// clients it reached: those whose reader the gate has seen matched
// (refreshed every 20 ms). It does not wait for the readers to take the
// sample or acknowledge it: a client's DDS threads run only when it is
// dispatched, so an acknowledgment could never gate it. GatedAll is the
// time until the last reader has taken it.
type ROS2Delivery struct {
	// GatedCall is the wall time of Gate.Sample (encoding included).
	GatedCall Stats
	// GatedAll runs from the call to the last reader's take.
	GatedAll Stats
	// GatedLost counts messages some reader never got.
	GatedLost int
	// Bytes is the size of one sample (CDR, encapsulation header
	// included).
	Bytes int
	// Readers says who read (vendor, processes).
	Readers string
}

// deliveryROS2 measures the ROS 2 part of Delivery. It is set by
// delivery_ros2.go, in binaries built with the ros2 tag (cgo, Cyclone DDS);
// nil otherwise.
var deliveryROS2 func(o DeliveryOpts) (*ROS2Delivery, error)

// withDefaults fills DeliveryOpts' zero values.
func (o DeliveryOpts) withDefaults() DeliveryOpts {
	if o.Subscribers <= 0 {
		o.Subscribers = 8
	}
	if o.Rate <= 0 {
		o.Rate = 1000
	}
	if o.Messages <= 0 {
		o.Messages = 2000
	}
	if o.Joints <= 0 {
		o.Joints = 6
	}
	return o
}

// Delivery measures the wall-clock cost of one gated delivery of a
// sensor_msgs/JointState fanned out to o.Subscribers goroslib nodes, against
// goroslib's own Publisher.Write to the same nodes, in one run on an
// embedded master (no ROS installation needed); the messages of both
// publishers alternate, paced at o.Rate. In a binary built with the ros2
// tag it then measures, in the same run, the same delivery over ROS 2
// (bridge/ros2's gate to as many Fast DDS readers in another process; see
// ROS2Delivery) and prints both side by side; without the tag it says
// that ROS 2 was not built in.
func Delivery(w io.Writer, o DeliveryOpts) (DeliveryResult, error) {
	o = o.withDefaults()
	res, err := deliveryROS1(w, o)
	if err != nil {
		return res, err
	}
	if deliveryROS2 == nil {
		fmt.Fprintln(w, "ros2: not built in (build tcs with -tags ros2, Cyclone DDS 0.10 and Fast DDS 2.9, to compare)")
		return res, nil
	}
	r2, err := deliveryROS2(o)
	if err != nil {
		return res, fmt.Errorf("bench delivery: ros2: %w", err)
	}
	res.ROS2 = r2
	writeComparison(w, o, res)
	if r2.GatedLost > 0 {
		return res, errors.New("bench delivery: the ROS 2 gate lost messages")
	}
	return res, nil
}

// writeComparison prints the gated figures of ROS 1 and ROS 2 side by side.
func writeComparison(w io.Writer, o DeliveryOpts, res DeliveryResult) {
	r2 := res.ROS2
	us := func(v int64) string { return strconv.FormatFloat(float64(v)/1e3, 'f', 2, 64) }
	ratio := func(a, b int64) string {
		if b <= 0 {
			return "-"
		}
		return strconv.FormatFloat(float64(a)/float64(b), 'f', 2, 64)
	}
	fmt.Fprintf(w, "ros2: the same JointState through bridge/ros2's Gate.Sample (Cyclone DDS) to %s, %d messages at %d Hz\n",
		r2.Readers, o.Messages, o.Rate)
	fmt.Fprintf(w, "%-46s  %12s %10s %14s %12s %6s %6s\n", fmt.Sprintf("gated delivery, %d subscribers (µs)", o.Subscribers),
		"call median", "call p99", "to-last med", "to-last p99", "lost", "bytes")
	row := func(name string, call, all Stats, lost, bytes int) {
		fmt.Fprintf(w, "  %-44s  %12s %10s %14s %12s %6d %6d\n", name, us(call.Med), us(call.P99), us(all.Med), us(all.P99), lost, bytes)
	}
	row("ROS 1 (bridge/ros1 gated publisher, TCPROS)", res.GatedCall, res.GatedAll, res.GatedLost, res.Bytes)
	row("ROS 2 (bridge/ros2 Gate.Sample, RTPS/UDP)", r2.GatedCall, r2.GatedAll, r2.GatedLost, r2.Bytes)
	fmt.Fprintf(w, "  %-44s  %12s %10s %14s %12s\n", "ratio ROS2/ROS1",
		ratio(r2.GatedCall.Med, res.GatedCall.Med), ratio(r2.GatedCall.P99, res.GatedCall.P99),
		ratio(r2.GatedAll.Med, res.GatedAll.Med), ratio(r2.GatedAll.P99, res.GatedAll.P99))
	fmt.Fprintln(w, "  (call: the gated call, on return in every subscriber's socket; to-last: from the call to the last subscriber's callback or take)")
}
