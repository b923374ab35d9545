package rosnode

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bluenviron/goroslib/v2"
	"github.com/bluenviron/goroslib/v2/pkg/msgs/sensor_msgs"
	"github.com/bluenviron/goroslib/v2/pkg/msgs/std_msgs"

	"github.com/tcs-robotics/tcs/controllers"
)

// Defaults of the PD node's private parameters.
const (
	DefaultRate   = 1000.0  // ~rate, Hz
	DefaultTarget = math.Pi // ~target, rad (upright)
)

// maxRate keeps the period at 1 ns or more.
const maxRate = 1e9

// jointState is θ and θ̇ from the newest joint_states message.
type jointState struct{ theta, thetadot float64 }

// RunPD runs the pendulum PD controller as the ROS 1 node "pd" until ctx is
// done (it then returns nil) or the master stops answering (it then returns
// an error; on sim time the master is asked only once the joint states
// stop coming, masterWatch). args is a ROS command line: __name:=, __ns:=,
// __master:=, __ip:=, __hostname:=, private parameters such as _rate:=100,
// and remaps such as /clock:=/tcs/pd/clock; ROS_MASTER_URI, ROS_NAMESPACE,
// ROS_HOSTNAME and ROS_IP come from the environment. goroslib applies a
// /clock remap only from os.Args, so RunPD returns an error when args
// remaps /clock differently from os.Args (see the package comment). Log
// lines go to logw (nil: nowhere) and to /rosout.
//
// The node subscribes to joint_states (sensor_msgs/JointState; position[0]
// is θ, velocity[0] θ̇) and keeps the newest message; at ~rate Hz (default
// 1000) of ROS time (sim time when /use_sim_time is true) it publishes on
// command (std_msgs/Float64) the torque of controllers.DefaultPD's law
// toward ~target rad (default π), or 0 before the first joint state.
func RunPD(ctx context.Context, args []string, logw io.Writer) error {
	cl, err := parseCommandLine(args, os.Getenv, "pd")
	if err != nil {
		return fmt.Errorf("pd: command line: %w", err)
	}
	if err := cl.checkGoroslib(os.Args, os.Getenv("ROS_NAMESPACE")); err != nil {
		return fmt.Errorf("node %s: %w", cl.fullName(), err)
	}
	jsTopic, err := cl.topic("joint_states")
	if err != nil {
		return fmt.Errorf("node %s: %w", cl.fullName(), err)
	}
	cmdTopic, err := cl.topic("command")
	if err != nil {
		return fmt.Errorf("node %s: %w", cl.fullName(), err)
	}

	n, err := cl.startNode(logw)
	if err != nil {
		return err
	}
	defer n.Close()

	if err := setParams(n, cl.params); err != nil {
		return fmt.Errorf("node %s: %w", cl.fullName(), err)
	}
	rateKey, targetKey := cl.fullName()+"/rate", cl.fullName()+"/target"
	hz, err := paramFloat(n, rateKey, DefaultRate)
	if err != nil {
		return fmt.Errorf("node %s: %w", cl.fullName(), err)
	}
	if !(hz > 0 && hz <= maxRate) {
		return fmt.Errorf("node %s: parameter %s = %g: want a rate in (0, %g] Hz", cl.fullName(), rateKey, hz, maxRate)
	}
	target, err := paramFloat(n, targetKey, DefaultTarget)
	if err != nil {
		return fmt.Errorf("node %s: %w", cl.fullName(), err)
	}
	if math.IsNaN(target) || math.IsInf(target, 0) {
		return fmt.Errorf("node %s: parameter %s = %g: want a finite angle", cl.fullName(), targetKey, target)
	}

	watch, err := newMasterWatch(n)
	if err != nil {
		return fmt.Errorf("node %s: %w", cl.fullName(), err)
	}
	var latest atomic.Pointer[jointState]
	sub, err := goroslib.NewSubscriber(goroslib.SubscriberConf{
		Node:  n,
		Topic: jsTopic,
		Callback: func(m *sensor_msgs.JointState) {
			if len(m.Position) < 1 || len(m.Velocity) < 1 {
				return // not a pendulum's state: keep the last one
			}
			latest.Store(&jointState{m.Position[0], m.Velocity[0]})
			watch.alive()
		},
	})
	if err != nil {
		return fmt.Errorf("node %s: subscribe to %s: %w", cl.fullName(), jsTopic, err)
	}
	defer sub.Close()
	pub, err := goroslib.NewPublisher(goroslib.PublisherConf{Node: n, Topic: cmdTopic, Msg: &std_msgs.Float64{}})
	if err != nil {
		return fmt.Errorf("node %s: advertise %s: %w", cl.fullName(), cmdTopic, err)
	}
	defer pub.Close()

	clock, _ := cl.topic("/clock") // checkGoroslib resolved it already
	n.Log(goroslib.LogLevelInfo, "%g Hz on ROS time (clock %s when /use_sim_time is true), target %g rad, %s -> %s",
		hz, clock, target, jsTopic, cmdTopic)

	gone := make(chan error, 1)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		watch.run(n, cl.master, stop, gone)
	}()
	defer func() {
		close(stop)
		wg.Wait()
	}()

	law := controllers.DefaultPD()
	rate := n.TimeRate(time.Duration(1e9 / hz))
	for ctx.Err() == nil {
		u := 0.0
		if js := latest.Load(); js != nil {
			u = law.Torque(js.theta, js.thetadot, target)
		}
		// Write hands the message to goroslib's per-subscriber writers
		// (asynchronous), so each call needs its own message.
		pub.Write(&std_msgs.Float64{Data: u})
		select {
		case <-rate.SleepChan():
		case <-ctx.Done():
		case err := <-gone:
			return fmt.Errorf("node %s: %w", cl.fullName(), err)
		}
	}
	return nil
}

// setParams sets the command line's private parameters on the parameter
// server, as roscpp and rospy do at start-up.
func setParams(n *goroslib.Node, params []param) error {
	for _, p := range params {
		var err error
		switch v := p.value.(type) {
		case int:
			err = n.ParamSetInt(p.key, v)
		case float64:
			err = n.ParamSetFloat64(p.key, v)
		case bool:
			err = n.ParamSetBool(p.key, v)
		case string:
			err = n.ParamSetString(p.key, v)
		}
		if err != nil {
			return fmt.Errorf("set parameter %s: %w", p.key, err)
		}
	}
	return nil
}

// paramFloat reads a numeric parameter (an XML-RPC double or int), or def
// when it is not set.
func paramFloat(n *goroslib.Node, key string, def float64) (float64, error) {
	set, err := n.ParamIsSet(key)
	if err != nil {
		return 0, fmt.Errorf("look up parameter %s: %w", key, err)
	}
	if !set {
		return def, nil
	}
	f, errF := n.ParamGetFloat64(key)
	if errF == nil {
		return f, nil
	}
	i, errI := n.ParamGetInt(key)
	if errI == nil {
		return float64(i), nil
	}
	return 0, fmt.Errorf("read parameter %s as a number: as a double: %v; as an int: %w", key, errF, errI)
}

// logTo returns a goroslib log callback that writes one line per message
// to w, serialized (goroslib logs from several goroutines).
func logTo(w io.Writer) func(goroslib.LogLevel, string) {
	if w == nil {
		return nil
	}
	var mu sync.Mutex
	names := map[goroslib.LogLevel]string{
		goroslib.LogLevelDebug: "DEBUG", goroslib.LogLevelInfo: "INFO", goroslib.LogLevelWarn: "WARN",
		goroslib.LogLevelError: "ERROR", goroslib.LogLevelFatal: "FATAL",
	}
	return func(l goroslib.LogLevel, msg string) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(w, "[%s] %s\n", names[l], msg)
	}
}

// startNode starts the goroslib node the command line describes (master,
// namespace, name, host), logging to /rosout and to logw.
func (cl *commandLine) startNode(logw io.Writer) (*goroslib.Node, error) {
	n, err := goroslib.NewNode(goroslib.NodeConf{
		MasterAddress:   cl.master,
		Namespace:       cl.namespace,
		Name:            cl.name,
		Host:            cl.host,
		LogDestinations: goroslib.LogDestinationRosout | goroslib.LogDestinationCallback,
		OnLog:           logTo(logw),
	})
	if err != nil {
		return nil, fmt.Errorf("start node %s (master %s): %w", cl.fullName(), cl.master, err)
	}
	return n, nil
}
