package ros1

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"

	"github.com/bluenviron/goroslib/v2/pkg/msgs/std_srvs"

	"github.com/tcs-robotics/tcs/simcontrol"
)

// The run's control services on ROS 1, with std_srvs types so that
// rosservice, rospy and roscpp call them with nothing to install: the
// pause and unpause services have Gazebo's gazebo_ros types
// (/gazebo/pause_physics, /gazebo/unpause_physics are std_srvs/Empty), so a
// script written for Gazebo needs only the names changed.
//
// There is no service that steps N times: no standard ROS 1 service type
// carries a count (std_srvs has Empty, Trigger and SetBool), and a tcs type
// would need a package installed on every machine that calls it. Calling
// /tcs/step N times steps N times; each call is one round trip on a
// persistent connection (rospy.ServiceProxy(..., persistent=True), roscpp's
// persistent service client). ROS 2 has simulation_interfaces' StepSimulation,
// which takes a count.
const (
	// ServicePause (std_srvs/Empty) holds the world at its next step
	// boundary; the clients finish what they compute up to it. Pausing a
	// paused run succeeds.
	ServicePause = "/tcs/pause"
	// ServiceUnpause (std_srvs/Empty) lets the world run on. Unpausing a
	// running run succeeds.
	ServiceUnpause = "/tcs/unpause"
	// ServiceStep (std_srvs/Trigger) makes one world step of a paused run
	// and answers when every client is consistent with it; its message
	// gives the new virtual time ("virtual time 0.011 s (11000000 ns)").
	ServiceStep = "/tcs/step"
)

var (
	emptyType   = mustServiceType(std_srvs.Empty{})
	triggerType = mustServiceType(std_srvs.Trigger{})
)

func mustServiceType(srv any) ServiceType {
	t, err := ServiceTypeOf(srv)
	if err != nil {
		panic(err) // fixed at build time; every test catches it
	}
	return t
}

// serveControl advertises the control services on n, each call answered by
// ctl's dispatch loop. done, when not nil, is called with every reply of a
// request that took effect (or found the run in its target state).
func serveControl(n *Node, ctl *simcontrol.Controller, done func(simcontrol.Reply)) error {
	if ctl == nil {
		return errors.New("ros1 control services: no controller")
	}
	if done == nil {
		done = func(simcontrol.Reply) {}
	}
	if err := n.AdvertiseService(ServicePause, emptyType, emptyCall(ctl, simcontrol.Pause, done)); err != nil {
		return err
	}
	if err := n.AdvertiseService(ServiceUnpause, emptyType, emptyCall(ctl, simcontrol.Play, done)); err != nil {
		return err
	}
	return n.AdvertiseService(ServiceStep, triggerType, stepCall(ctl, done))
}

// emptyCall answers a std_srvs/Empty service by asking ctl for op. Empty
// has no field to say a failure in: a refused request is the service's
// error (rosservice prints it; roscpp's call returns false).
func emptyCall(ctl *simcontrol.Controller, op simcontrol.Op, done func(simcontrol.Reply)) ServiceHandler {
	return func(ctx context.Context, _ string, _ []byte) ([]byte, error) {
		rep := ctl.Do(ctx, simcontrol.Request{Op: op})
		if rep.TookEffect() {
			done(rep)
			return nil, nil
		}
		return nil, fmt.Errorf("%s refused: %s", op, replyText(rep))
	}
}

// stepCall answers /tcs/step (std_srvs/Trigger): one world step. A refused
// step (the run is playing or over) is success false with the reason, as
// Trigger allows.
func stepCall(ctl *simcontrol.Controller, done func(simcontrol.Reply)) ServiceHandler {
	return func(ctx context.Context, _ string, _ []byte) ([]byte, error) {
		rep := ctl.Do(ctx, simcontrol.Request{Op: simcontrol.Step, Steps: 1})
		if rep.Code != simcontrol.OK {
			return appendTriggerResponse(nil, false, "step refused: "+replyText(rep)), nil
		}
		done(rep)
		return appendTriggerResponse(nil, true, virtualTimeText(rep.Time)), nil
	}
}

// virtualTimeText is how the step service states virtual time t (ns).
func virtualTimeText(t int64) string {
	return "virtual time " + strconv.FormatFloat(float64(t)/1e9, 'f', -1, 64) + " s (" + strconv.FormatInt(t, 10) + " ns)"
}

// replyText describes a reply that is not OK.
func replyText(rep simcontrol.Reply) string {
	s := rep.Message
	if s == "" {
		s = fmt.Sprintf("code %d", rep.Code)
	}
	return fmt.Sprintf("%s (run %s at %s)", s, rep.State, virtualTimeText(rep.Time))
}

// appendTriggerResponse appends a serialized std_srvs/TriggerResponse
// (bool success, string message).
func appendTriggerResponse(dst []byte, success bool, message string) []byte {
	b := byte(0)
	if success {
		b = 1
	}
	dst = append(dst, b)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(message)))
	return append(dst, message...)
}
