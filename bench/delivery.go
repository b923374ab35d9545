package bench

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/bluenviron/goroslib/v2"
	"github.com/bluenviron/goroslib/v2/pkg/msgs/sensor_msgs"
	"github.com/rs/zerolog"

	"github.com/tcs-robotics/tcs/bridge/master"
	"github.com/tcs-robotics/tcs/bridge/ros1"
	"github.com/tcs-robotics/tcs/msgs"
)

// DeliveryOpts configures Delivery. Zero values take the defaults.
type DeliveryOpts struct {
	// Subscribers is the fan-out. Default 8.
	Subscribers int
	// Rate is the publishing rate in Hz. Default 1000.
	Rate int
	// Messages is how many messages each publisher sends. Default 2000.
	Messages int
	// Joints is the JointState's size. Default 6.
	Joints int
}

// DeliveryResult is what Delivery measured, in ns.
type DeliveryResult struct {
	// GatedCall is the wall time of the bridge's gated Publisher.Write
	// (encoding included): when it returns the message is in every
	// subscriber's socket.
	GatedCall Stats
	// PlainCall is goroslib's Publisher.Write, which only queues.
	PlainCall Stats
	// GatedAll and PlainAll run from the call to the last of the
	// subscribers' callbacks.
	GatedAll, PlainAll Stats
	// Lost counts messages some subscriber never got.
	GatedLost, PlainLost int
	// Bytes is the size of one gated message (the TCPROS body).
	Bytes int
	// ROS2 is the same gated delivery over ROS 2 (bridge/ros2), measured
	// in the same run; nil when this binary was built without the ros2 tag.
	ROS2 *ROS2Delivery
}

// deliveryROS1 measures the wall-clock cost of one gated delivery of a
// sensor_msgs/JointState fanned out to o.Subscribers goroslib nodes, against
// goroslib's own Publisher.Write to the same nodes, in one run on an
// embedded master (no ROS installation needed). The messages of both
// publishers alternate, paced at o.Rate. Delivery runs it.
func deliveryROS1(w io.Writer, o DeliveryOpts) (DeliveryResult, error) {
	var res DeliveryResult
	o = o.withDefaults()
	m, err := master.New(master.Conf{Addr: "127.0.0.1:0"})
	if err != nil {
		return res, fmt.Errorf("bench delivery: %w", err)
	}
	defer m.Close()
	hp, err := master.ParseURI(m.URI())
	if err != nil {
		return res, err
	}
	bn, err := ros1.NewNode(ros1.NodeConf{Name: "/bench_bridge", MasterURI: m.URI(), Log: zerolog.Nop()})
	if err != nil {
		return res, fmt.Errorf("bench delivery: %w", err)
	}
	defer bn.Close()
	gated, err := bn.Advertise("/bench/gated", msgs.JointState, false)
	if err != nil {
		return res, fmt.Errorf("bench delivery: %w", err)
	}
	pn, err := goroslib.NewNode(goroslib.NodeConf{Name: "bench_plain", MasterAddress: hp, Host: "127.0.0.1", LogDestinations: 0})
	if err != nil {
		return res, fmt.Errorf("bench delivery: goroslib node: %w", err)
	}
	defer pn.Close()
	plain, err := goroslib.NewPublisher(goroslib.PublisherConf{Node: pn, Topic: "/bench/plain", Msg: &sensor_msgs.JointState{}})
	if err != nil {
		return res, fmt.Errorf("bench delivery: goroslib publisher: %w", err)
	}
	defer plain.Close()

	// arrivals[k][s]: when subscriber s got message k of each publisher.
	n := o.Messages
	var mu sync.Mutex
	gotG := make([][]int64, n)
	gotP := make([][]int64, n)
	for k := range n {
		gotG[k] = make([]int64, o.Subscribers)
		gotP[k] = make([]int64, o.Subscribers)
	}
	// warm-up: which subscriber has heard from which publisher, and how many
	// such pairs there are.
	warmG, warmP := make([]bool, o.Subscribers), make([]bool, o.Subscribers)
	nwarm := 0
	epoch := time.Now()
	since := func() int64 { return int64(time.Since(epoch)) }
	record := func(tab [][]int64, warm []bool, s int) func(*sensor_msgs.JointState) {
		return func(js *sensor_msgs.JointState) {
			k := int(js.Header.Seq)
			t := since()
			mu.Lock()
			defer mu.Unlock()
			if k >= n { // warm-up
				if !warm[s] {
					warm[s] = true
					nwarm++
				}
				return
			}
			tab[k][s] = t
		}
	}
	for s := range o.Subscribers {
		sn, err := goroslib.NewNode(goroslib.NodeConf{Name: fmt.Sprintf("bench_sub%d", s), MasterAddress: hp, Host: "127.0.0.1", LogDestinations: 0})
		if err != nil {
			return res, fmt.Errorf("bench delivery: subscriber node %d: %w", s, err)
		}
		defer sn.Close()
		for _, c := range []struct {
			topic string
			tab   [][]int64
			warm  []bool
		}{{"/bench/gated", gotG, warmG}, {"/bench/plain", gotP, warmP}} {
			sub, err := goroslib.NewSubscriber(goroslib.SubscriberConf{Node: sn, Topic: c.topic, Callback: record(c.tab, c.warm, s), QueueSize: uint(n)})
			if err != nil {
				return res, fmt.Errorf("bench delivery: subscriber %d of %s: %w", s, c.topic, err)
			}
			defer sub.Close()
		}
	}
	names := jointNames(o.Joints)
	pos := make([]float64, o.Joints)
	// Warm up until every subscriber is connected to both publishers and
	// has received from each.
	buf := make([]byte, 0, 1024)
	allWarm := func() bool {
		mu.Lock()
		defer mu.Unlock()
		return nwarm == 2*o.Subscribers
	}
	deadline := time.Now().Add(20 * time.Second)
	for !allWarm() {
		if time.Now().After(deadline) {
			return res, fmt.Errorf("bench delivery: subscribers not all connected after 20 s (gated: %d)", len(gated.Subscribers()))
		}
		gated.Write(msgs.AppendJointState(buf[:0], uint32(n), 0, "world", names, pos, pos, pos))
		js := plainJointState(names, pos)
		js.Header.Seq = uint32(n)
		plain.Write(js)
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond)

	callG := make([]int64, 0, n)
	callP := make([]int64, 0, n)
	sentG := make([]int64, n)
	sentP := make([]int64, n)
	period := time.Second / time.Duration(o.Rate)
	next := time.Now()
	for k := range n {
		next = next.Add(period)
		time.Sleep(time.Until(next))
		for j := range pos {
			pos[j] = float64(k) * 1e-3
		}
		t0 := since()
		buf = msgs.AppendJointState(buf[:0], uint32(k), t0, "world", names, pos, pos, pos)
		reached := gated.Write(buf)
		t1 := since()
		if reached != o.Subscribers {
			return res, fmt.Errorf("bench delivery: gated message %d reached %d of %d subscribers", k, reached, o.Subscribers)
		}
		callG = append(callG, t1-t0)
		sentG[k] = t0

		js := plainJointState(names, pos)
		js.Header.Seq = uint32(k)
		t2 := since()
		plain.Write(js)
		t3 := since()
		callP = append(callP, t3-t2)
		sentP[k] = t2
	}
	time.Sleep(500 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	dG, lostG := lastArrivals(gotG, sentG, 0)
	dP, lostP := lastArrivals(gotP, sentP, 0)
	res = DeliveryResult{GatedCall: stats(callG), PlainCall: stats(callP), GatedAll: stats(dG), PlainAll: stats(dP),
		GatedLost: lostG, PlainLost: lostP, Bytes: len(buf)}
	fmt.Fprintf(w, "delivery: sensor_msgs/JointState (%d joints) at %d Hz to %d goroslib subscribers, %d messages each (µs: median / p99 / max)\n",
		o.Joints, o.Rate, o.Subscribers, n)
	fmt.Fprintf(w, "  gated Publisher.Write (in every socket on return)  %s\n", res.GatedCall)
	fmt.Fprintf(w, "  goroslib Publisher.Write (queued only)              %s\n", res.PlainCall)
	fmt.Fprintf(w, "  gated, call to the last subscriber's callback       %s  lost %d\n", res.GatedAll, lostG)
	fmt.Fprintf(w, "  goroslib, call to the last subscriber's callback    %s  lost %d\n", res.PlainAll, lostP)
	if res.PlainCall.Med > 0 && res.PlainAll.Med > 0 {
		fmt.Fprintf(w, "  ratio gated/goroslib: call %.2f, to the last callback %.2f (medians)\n",
			float64(res.GatedCall.Med)/float64(res.PlainCall.Med), float64(res.GatedAll.Med)/float64(res.PlainAll.Med))
	}
	if lostG > 0 {
		return res, errors.New("bench delivery: the gated publisher lost messages")
	}
	return res, nil
}

// lastArrivals returns, for each message k that every subscriber got, the
// time from its sending (sent[k]) to its last arrival (tab[k][i] - base),
// and how many messages some subscriber never got (an arrival of 0).
func lastArrivals(tab [][]int64, sent []int64, base int64) ([]int64, int) {
	var d []int64
	lost := 0
	for k := range tab {
		last, ok := int64(0), true
		for _, t := range tab[k] {
			if t == 0 {
				ok = false
			}
			last = max(last, t)
		}
		if !ok {
			lost++
			continue
		}
		d = append(d, last-base-sent[k])
	}
	return d, lost
}

// jointNames names the bench's n joints joint0, joint1, ...
func jointNames(n int) []string {
	names := make([]string, n)
	for j := range names {
		names[j] = fmt.Sprintf("joint%d", j)
	}
	return names
}

// plainJointState is the message for goroslib's Publisher.Write, with
// joints of its own: Write only queues it, and its writer goroutines
// encode it later, while the bench already changes pos for the next one.
func plainJointState(names []string, pos []float64) *sensor_msgs.JointState {
	p := slices.Clone(pos)
	return &sensor_msgs.JointState{Name: names, Position: p, Velocity: p, Effort: p}
}
