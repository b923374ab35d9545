//go:build ros2

package ros2

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tcs-robotics/tcs/dynamics"
	"github.com/tcs-robotics/tcs/dynamics/sensor"
	"github.com/tcs-robotics/tcs/msgs"
	rmsgs "github.com/tcs-robotics/tcs/msgs/ros2"
	"github.com/tcs-robotics/tcs/simcontrol"
)

// ServeWorld serves conf.World as a simulator does over ROS 2, in this
// process's ROS_DOMAIN_ID, until a SetSimulationState STOPPED or ctx ends:
// simulation_interfaces (GetSimulationState, SetSimulationState,
// StepSimulation, SimulateSteps; ResetSimulation when the world resets),
// each body's sensor_msgs/JointState on /<robot>/joint_states and its
// sensors (dynamics.Sensors) on /<robot>/<sensor> (latched, stamped with
// the world's time), std_msgs/Float64MultiArray commands on
// /<robot>/commands (reliable; the newest before a step acts for the whole
// step), and /clock. It starts paused at 0; playing, it steps at the
// wall clock's pace. It is the peer a run's world simulation_interfaces
// steps (`tcs world MODEL --ros2`), standing in for Gazebo.
func ServeWorld(ctx context.Context, conf WorldServerConf) (err error) {
	w := conf.World
	if len(conf.Robots) != w.Bodies() {
		return fmt.Errorf("ros2: serve the world: %d robot names for %d bodies", len(conf.Robots), w.Bodies())
	}
	if conf.Step <= 0 {
		return errors.New("ros2: serve the world: the step must be > 0")
	}
	n, err := NewNode(NodeConf{Name: "tcs_world", Distro: rmsgs.Iron})
	if err != nil {
		return err
	}
	defer n.Close()
	ctl := simcontrol.New()
	defer ctl.Close()
	srv, err := NewSimServer(SimConf{Node: n, Control: ctl, Resettable: dynamics.CanReset(w), Namespace: conf.Namespace, Log: conf.Log})
	if err != nil {
		return err
	}
	defer srv.Close()
	s := &worldServer{conf: conf, w: w}
	for j := range w.Bodies() {
		s.obs = make([]float64, max(len(s.obs), w.ObservationLen(j)))
	}
	if s.clock, err = n.Writer("/clock", rmsgs.Clock, Latched); err != nil {
		return err
	}
	for j, name := range conf.Robots {
		b := worldBody{names: dynamics.JointNames(w, conf.Model, j), in: make([]byte, 64<<10)}
		if b.js, err = n.Writer("/"+name+"/joint_states", rmsgs.JointState, Latched); err != nil {
			return err
		}
		if b.cmd, err = n.Reader("/"+name+"/commands", rmsgs.Float64MultiArray, QoS{Reliable: true, Depth: 64}, false); err != nil {
			return err
		}
		b.sensors = dynamics.Sensors(w, j)
		for _, sn := range b.sensors {
			sw, err := n.Writer("/"+name+"/"+sn.Name, sn.Kind.String(), Latched)
			if err != nil {
				return err
			}
			b.sensorW = append(b.sensorW, sw)
		}
		s.bodies = append(s.bodies, b)
	}
	if err := n.Announce(); err != nil {
		return err
	}
	if err := s.publish(); err != nil {
		return err
	}
	return s.loop(ctx, ctl)
}

type worldServer struct {
	conf    WorldServerConf
	w       dynamics.World
	bodies  []worldBody
	clock   *Writer
	state   simcontrol.State
	steps   uint64
	obs     []float64
	out     []byte
	cmd     []float64
	pub     Guid
	msg     sensor.Message
	warned  bool
	playing *time.Ticker
}

type worldBody struct {
	names   []string
	js      *Writer
	cmd     *Reader
	in      []byte
	sensors []sensor.Sensor
	sensorW []*Writer
}

func (s *worldServer) now() int64 { return s.w.Now() }

// loop serves the controller's requests, and steps at the wall clock's
// pace while playing.
func (s *worldServer) loop(ctx context.Context, ctl *simcontrol.Controller) error {
	s.state = simcontrol.Paused
	var tick <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick:
			if err := s.stepOnce(); err != nil {
				return err
			}
		case req := <-ctl.Requests():
			rep, stop, err := s.serve(req)
			req.Answer(rep)
			if err != nil {
				return err
			}
			if stop {
				return nil
			}
		}
		switch {
		case s.state == simcontrol.Playing && s.playing == nil:
			s.playing = time.NewTicker(time.Duration(s.conf.Step))
			tick = s.playing.C
		case s.state != simcontrol.Playing && s.playing != nil:
			s.playing.Stop()
			s.playing, tick = nil, nil
		}
	}
}

// serve answers one request; stop is true after a stop.
func (s *worldServer) serve(req *simcontrol.Request) (rep simcontrol.Reply, stop bool, err error) {
	rep.Code = simcontrol.OK
	switch req.Op {
	case simcontrol.Play, simcontrol.Pause:
		to := simcontrol.Playing
		if req.Op == simcontrol.Pause {
			to = simcontrol.Paused
		}
		if s.state == to {
			rep.Code = simcontrol.AlreadyInTargetState
		}
		s.state = to
	case simcontrol.Stop:
		s.state, stop = simcontrol.Stopped, true
	case simcontrol.Reset:
		r, ok := s.w.(dynamics.Resetter)
		if !ok || !dynamics.CanReset(s.w) {
			rep = simcontrol.Reply{Code: simcontrol.FeatureUnsupported, Message: "this world cannot be reset"}
			break
		}
		r.Reset()
		err = s.publish()
	case simcontrol.Step:
		if s.state != simcontrol.Paused {
			rep = simcontrol.Reply{Code: simcontrol.IncorrectState, Message: "step a paused simulation (it plays)"}
			break
		}
	steps:
		for k := uint64(1); k <= req.Steps; k++ {
			select {
			case <-req.Cancel:
				rep.Message = "canceled"
				break steps
			default:
			}
			if err = s.stepOnce(); err != nil {
				rep = simcontrol.Reply{Code: simcontrol.OperationFailed, Message: err.Error()}
				break steps
			}
			rep.Steps = k
			if req.Progress != nil {
				req.Progress(k, req.Steps-k)
			}
		}
	}
	rep.State, rep.Time = s.state, s.now()
	return rep, stop, err
}

// stepOnce applies the newest command of each body, steps the world and
// publishes its state.
func (s *worldServer) stepOnce() error {
	for j := range s.bodies {
		s.takeCommand(j)
	}
	s.w.Step(s.conf.Step)
	s.steps++
	if f, ok := s.w.(dynamics.Failer); ok && f.Err() != nil {
		return fmt.Errorf("the world failed at step %d: %w", s.steps, f.Err())
	}
	return s.publish()
}

// takeCommand applies the newest command body j was sent, if any.
func (s *worldServer) takeCommand(j int) {
	b := &s.bodies[j]
	got := false
	for {
		n, ok, err := b.cmd.Take(b.in, &s.pub)
		if err != nil || !ok {
			break
		}
		if n > len(b.in) {
			continue
		}
		v, err := rmsgs.DecodeFloat64MultiArray(b.in[:n], s.cmd[:0])
		if err != nil {
			if !s.warned {
				s.warned = true
				s.conf.Log.Warn().Err(err).Str("topic", b.cmd.Topic).Msg("a malformed command is ignored (the others are too, unlogged)")
			}
			continue
		}
		s.cmd, got = v, true
	}
	if got {
		s.w.SetCommand(j, s.cmd)
	}
}

// publish sends every body's sensors, then its joint states, then /clock,
// at the world's time: a client that has the joint states of a step has
// its sensors' readings too.
func (s *worldServer) publish() error {
	t := s.now()
	stamp := msgs.Epoch + t
	for j := range s.bodies {
		b := &s.bodies[j]
		n := s.w.Observe(j, s.obs)
		for k := range b.sensors {
			b.sensors[k].Message(s.obs[:n], &s.msg)
			s.out = rmsgs.AppendSensor(s.out[:0], stamp, &s.msg)
			if err := b.sensorW[k].Write(s.out); err != nil {
				return err
			}
		}
		pos, vel := dynamics.SplitState(s.obs[:n], len(b.names))
		s.out = rmsgs.AppendJointState(s.out[:0], stamp, "", b.names, pos, vel, nil)
		if err := b.js.Write(s.out); err != nil {
			return err
		}
	}
	s.out = rmsgs.AppendClock(s.out[:0], stamp)
	return s.clock.Write(s.out)
}
