//go:build ros2

package ros2

import (
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tcs-robotics/tcs/dynamics"
	"github.com/tcs-robotics/tcs/dynamics/sensor"
	"github.com/tcs-robotics/tcs/msgs/cdr"
	rmsgs "github.com/tcs-robotics/tcs/msgs/ros2"
	"github.com/tcs-robotics/tcs/simcontrol"
)

func init() { dynamics.Register(dynamics.ModelSimulationInterfaces, newSimWorld) }

var _ interface {
	dynamics.World
	dynamics.JointNamer
	dynamics.Sensorer
	dynamics.Process
	dynamics.Failer
	dynamics.Closer
} = (*SimWorld)(nil)

// worldCount numbers the SimWorlds of this process.
var worldCount atomic.Int64

// SimWorldConf configures a SimWorld: where the simulator is and which of
// its topics are each body's joint states and commands.
type SimWorldConf struct {
	// Domain is the simulator's ROS_DOMAIN_ID; default this process's
	// ($ROS_DOMAIN_ID, else 0). A simulator that publishes /clock must
	// not share the run's domain: the run's nodes would see two clocks.
	Domain int
	// Services is the namespace of its simulation_interfaces services
	// (<Services>/step_simulation, ...); default "/tcs".
	Services string
	// Bodies names each body's topics, robot j of the run driving body j.
	Bodies []SimBody
	// Timeout bounds each exchange with the simulator (a step, its joint
	// states, a command's acknowledgement, the start); default 10 s.
	Timeout time.Duration
}

// SimBody is one body of an external simulator: the sensor_msgs/JointState
// it publishes and the std_msgs/Float64MultiArray commands it takes (a
// ros2_control forward command controller's layout).
type SimBody struct {
	JointStates string // e.g. /joint_states
	Commands    string // e.g. /forward_effort_controller/commands
	// CommandLen is how many values a command has; default one per joint.
	CommandLen int
	// Sensors are the body's sensor topics whose readings follow the
	// joints in its observation and which the run publishes as its own
	// (/<robot>/<name>, dynamics.Sensorer).
	Sensors []SimSensor
}

// SimSensor is one sensor topic of a simulator's body.
type SimSensor struct {
	Topic string
	Kind  sensor.Kind // IMU (sensor_msgs/Imu), Wrench, Touch (geometry_msgs/WrenchStamped), Range
	// Name is the sensor's name in the run; default the topic's last part.
	Name string
}

// SimWorld is an external simulator as tcs's world, stepped through ROS 2's
// simulation_interfaces (the services Gazebo, Isaac Sim and O3DE serve, and
// `tcs world MODEL --ros2`). The simulator stays paused: each step of the
// scenario's dynamics.step is one StepSimulation {steps: 1}, after the
// commands that changed since the last step were sent and acknowledged;
// the step's answer is followed by each body's joint states at the new
// instant, which are the bodies' observations ([positions, velocities]).
//
// The simulator can only make whole steps: partial steps (at a client's
// wake, or at a command's instant with actuation: exact) are added up, and
// a command acts from the next whole step on, as with actuation: hold; the
// observation is the one at the last whole step.
//
// Step, SetCommand and Observe do not allocate. A failure (a timeout, a
// refused step) is kept (Err): the world then keeps its time and no longer
// moves, and the run ends with it.
type SimWorld struct {
	conf   SimWorldConf
	n      *Node
	step   int64
	bodies []*simBody
	stepc  *svcCall
	efd    []unix.PollFd

	now, acc int64 // virtual time; the part of a step not made yet
	t0       int64 // the simulator's time at the start (its stamps)
	steps    int64 // whole steps made
	wallNs   int64 // wall time the steps took, from the command to the last joint states
	err      error
	pub      Guid
}

// simBody is one body's topics and state.
type simBody struct {
	conf    SimBody
	js      [2]*Reader // volatile (any writer) and transient-local (a latched writer's last sample)
	cmd     *Writer
	names   []string
	pos     []float64
	vel     []float64
	stamp   int64 // of pos, vel
	command []float64
	dirty   bool // command changed since it was last sent
	acked   bool // a command of cmd's was acknowledged: the simulator's reader has cmd
	buf     []byte
	out     []byte
	sensors []*simSensor
	groups  []sensor.Sensor // the sensors' places in the observation
}

// simSensor is one sensor topic and its latest reading, laid out as its
// part of the observation (see sensor.Kind: an IMU's w x y z, angular
// velocity, linear acceleration; a wrench's force, torque; a range, −1
// when nothing is in reach; a touch's force).
type simSensor struct {
	conf    SimSensor
	rd      [2]*Reader
	stamp   int64
	vals    []float64
	seen    bool
	frame   string  // of the first reading
	unknown [3]bool // of the first reading: an IMU's parts with covariance −1
}

// decode reads a sample of s's kind into s.vals without allocating (but
// for the first reading's frame). A reading older than s's is skipped.
func (s *simSensor) decode(sample []byte) error {
	var r cdr.Reader
	r.Reset(sample)
	stamp := r.Time()
	frame := r.StringBytes()
	if r.Err() == nil && s.seen && stamp < s.stamp {
		return nil
	}
	vec := func(dst []float64) {
		for i := range 3 {
			dst[i] = r.Float64()
		}
	}
	cov := func() bool {
		first := r.Float64()
		for range 8 {
			r.Float64()
		}
		return first == -1
	}
	var unknown [3]bool
	v := s.vals
	switch s.conf.Kind {
	case sensor.IMU:
		x, y, z, qw := r.Float64(), r.Float64(), r.Float64(), r.Float64()
		v[0], v[1], v[2], v[3] = qw, x, y, z
		unknown[0] = cov()
		vec(v[4:7])
		unknown[1] = cov()
		vec(v[7:10])
		unknown[2] = cov()
	case sensor.Wrench:
		vec(v[0:3])
		vec(v[3:6])
	case sensor.Touch:
		var f, t [3]float64
		vec(f[:])
		vec(t[:])
		v[0] = f[2]
	case sensor.Range:
		r.Uint8()   // radiation_type
		r.Float32() // field_of_view
		r.Float32() // min_range
		r.Float32() // max_range
		d := float64(r.Float32())
		if math.IsInf(d, 1) {
			d = -1 // nothing in reach (REP 117)
		}
		v[0] = d
	}
	if err := r.Err(); err != nil {
		return fmt.Errorf("%s: %w", s.conf.Topic, err)
	}
	if !s.seen {
		s.seen, s.frame, s.unknown = true, string(frame), unknown
	}
	s.stamp = stamp
	return nil
}

// svcCall is a client of one service as rmw_cyclonedds makes it: a request
// writer and a reply reader, both with USER_DATA clientid=...;, whose
// replies echo the request's header.
type svcCall struct {
	name string
	w    *Writer
	r    *Reader
	seq  int64
	req  []byte
	rep  []byte
}

// newSimWorld is the Maker of the model simulation_interfaces: params
// {domain, services, bodies: [{joint_states, commands, command_len}],
// timeout}.
func newSimWorld(bodies int, step int64, params map[string]any) (dynamics.World, error) {
	conf, err := simWorldParams(bodies, params)
	if err != nil {
		return nil, err
	}
	w, err := NewSimWorld(conf, step)
	if err != nil {
		return nil, fmt.Errorf("dynamics: %s: %w", dynamics.ModelSimulationInterfaces, err)
	}
	return w, nil
}

func simWorldParams(bodies int, params map[string]any) (SimWorldConf, error) {
	bad := func(f string, a ...any) error {
		return fmt.Errorf("dynamics: %s: %w: %s", dynamics.ModelSimulationInterfaces, dynamics.ErrBadParam, fmt.Sprintf(f, a...))
	}
	var conf SimWorldConf
	for k, v := range params {
		switch k {
		case "domain":
			d, ok := wholeNumber(v)
			if !ok || d < 0 || d > 232 {
				return conf, bad("parameter \"domain\" must be the simulator's ROS_DOMAIN_ID, 0-232, got %v", v)
			}
			conf.Domain = int(d)
		case "services":
			s, ok := v.(string)
			if !ok || len(s) < 2 || s[0] != '/' {
				return conf, bad("parameter \"services\" must be the namespace of the simulator's simulation_interfaces services, like /gzserver, got %v", v)
			}
			conf.Services = s
		case "timeout":
			s, _ := v.(string)
			d, err := time.ParseDuration(s)
			if err != nil || d <= 0 {
				return conf, bad("parameter \"timeout\" must be a duration like 10s, got %v", v)
			}
			conf.Timeout = d
		case "bodies":
			list, ok := v.([]any)
			if !ok {
				return conf, bad("parameter \"bodies\" must be a list of {joint_states: TOPIC, commands: TOPIC}, got %T", v)
			}
			for i, e := range list {
				m, ok := e.(map[string]any)
				if !ok {
					return conf, bad("bodies[%d] must be {joint_states: TOPIC, commands: TOPIC}, got %T", i, e)
				}
				var b SimBody
				for bk, bv := range m {
					s, isStr := bv.(string)
					switch bk {
					case "joint_states", "commands":
						if _, err := rmsgs.TopicName(s); !isStr || err != nil {
							return conf, bad("bodies[%d].%s must be an absolute topic like /joint_states, got %v", i, bk, bv)
						}
						if bk == "joint_states" {
							b.JointStates = s
						} else {
							b.Commands = s
						}
					case "sensors":
						ss, err := sensorParams(i, bv)
						if err != nil {
							return conf, bad("%s", err)
						}
						b.Sensors = ss
					case "command_len":
						n, ok := wholeNumber(bv)
						if !ok || n < 1 || n > MaxCommand {
							return conf, bad("bodies[%d].command_len must be 1-%d, got %v", i, MaxCommand, bv)
						}
						b.CommandLen = int(n)
					default:
						return conf, bad("bodies[%d]: unknown key %q (valid: joint_states, commands, command_len, sensors)", i, bk)
					}
				}
				if b.JointStates == "" || b.Commands == "" {
					return conf, bad("bodies[%d] needs joint_states and commands (the simulator's topics)", i)
				}
				conf.Bodies = append(conf.Bodies, b)
			}
		default:
			return conf, bad("unknown parameter %q (valid: bodies, domain, services, timeout)", k)
		}
	}
	if len(conf.Bodies) != bodies {
		return conf, bad("the scenario has %d robots and parameter \"bodies\" names %d; give each robot its simulator topics ({joint_states: /joint_states, commands: /effort_controller/commands})", bodies, len(conf.Bodies))
	}
	return conf, nil
}

// sensorParams reads bodies[i].sensors: a list of {topic, kind, name}.
func sensorParams(i int, v any) ([]SimSensor, error) {
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("bodies[%d].sensors must be a list of {topic: /imu, kind: imu}, got %T", i, v)
	}
	kinds := map[string]sensor.Kind{"imu": sensor.IMU, "wrench": sensor.Wrench, "range": sensor.Range, "touch": sensor.Touch}
	var out []SimSensor
	for k, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("bodies[%d].sensors[%d] must be {topic: /imu, kind: imu}, got %T", i, k, e)
		}
		var s SimSensor
		for key, val := range m {
			str, _ := val.(string)
			switch key {
			case "topic":
				if _, err := rmsgs.TopicName(str); err != nil {
					return nil, fmt.Errorf("bodies[%d].sensors[%d].topic must be an absolute topic like /imu, got %v", i, k, val)
				}
				s.Topic = str
			case "kind":
				kd, ok := kinds[str]
				if !ok {
					return nil, fmt.Errorf("bodies[%d].sensors[%d].kind must be imu, wrench, range or touch, got %v", i, k, val)
				}
				s.Kind = kd
			case "name":
				if str == "" {
					return nil, fmt.Errorf("bodies[%d].sensors[%d].name must be a word, got %v", i, k, val)
				}
				s.Name = str
			default:
				return nil, fmt.Errorf("bodies[%d].sensors[%d]: unknown key %q (valid: topic, kind, name)", i, k, key)
			}
		}
		if s.Topic == "" || s.Kind == 0 {
			return nil, fmt.Errorf("bodies[%d].sensors[%d] needs topic and kind", i, k)
		}
		out = append(out, s)
	}
	return out, nil
}

// wholeNumber reads a YAML number that is a whole number.
func wholeNumber(v any) (int64, bool) {
	switch x := v.(type) {
	case int:
		return int64(x), true
	case int64:
		return x, true
	case uint64:
		return int64(x), x <= math.MaxInt64
	case float64:
		return int64(x), x == math.Trunc(x) && math.Abs(x) < 1<<53
	}
	return 0, false
}

// NewSimWorld joins the simulator's domain, finds its services and each
// body's joint states, and pauses it if it plays. step is the scenario's
// dynamics.step, which must be the simulator's own.
func NewSimWorld(conf SimWorldConf, step int64) (_ *SimWorld, err error) {
	if conf.Services == "" {
		conf.Services = "/tcs"
	}
	if conf.Timeout <= 0 {
		conf.Timeout = 10 * time.Second
	}
	if len(conf.Bodies) == 0 {
		return nil, errors.New("no bodies")
	}
	n, err := NewNode(NodeConf{Domain: conf.Domain, Name: "tcs_world_client", Distro: rmsgs.Iron})
	if err != nil {
		return nil, err
	}
	w := &SimWorld{conf: conf, n: n, step: step, efd: []unix.PollFd{{Fd: int32(n.Fd()), Events: unix.POLLIN}}}
	defer func() {
		if err != nil {
			w.Close()
		}
	}()
	// rmw_cyclonedds pairs a client's request writer and reply reader by
	// a clientid; each world gets its own.
	id := strconv.FormatInt(int64(os.Getpid()), 16) + "." + strconv.FormatInt(worldCount.Add(1), 16)
	if w.stepc, err = w.newCall(conf.Services+"/"+SrvStepSimulation, rmsgs.StepSimulation, id); err != nil {
		return nil, err
	}
	getc, err := w.newCall(conf.Services+"/"+SrvGetSimulationState, rmsgs.GetSimulationState, id)
	if err != nil {
		return nil, err
	}
	setc, err := w.newCall(conf.Services+"/"+SrvSetSimulationState, rmsgs.SetSimulationState, id)
	if err != nil {
		return nil, err
	}
	for _, bc := range conf.Bodies {
		b := &simBody{conf: bc, buf: make([]byte, 64<<10)}
		// A volatile reader matches every writer; only a transient-local
		// one gets a latched writer's sample from before it joined.
		for k, q := range []QoS{{Reliable: true, Depth: 16}, {Reliable: true, TransientLocal: true, Depth: 16}} {
			if b.js[k], err = n.Reader(bc.JointStates, rmsgs.JointState, q, true); err != nil {
				return nil, err
			}
		}
		if b.cmd, err = n.Writer(bc.Commands, rmsgs.Float64MultiArray, QoS{Reliable: true, Depth: 16}); err != nil {
			return nil, err
		}
		for _, sc := range bc.Sensors {
			s := &simSensor{conf: sc, vals: make([]float64, sensorLen(sc.Kind))}
			for k, q := range []QoS{{Reliable: true, Depth: 16}, {Reliable: true, TransientLocal: true, Depth: 16}} {
				if s.rd[k], err = n.Reader(sc.Topic, sc.Kind.String(), q, true); err != nil {
					return nil, err
				}
			}
			b.sensors = append(b.sensors, s)
		}
		w.bodies = append(w.bodies, b)
	}
	if err := n.Announce(); err != nil {
		return nil, err
	}
	for _, c := range []*svcCall{w.stepc, getc, setc} {
		if err := w.waitService(c, time.Now().Add(conf.Timeout)); err != nil {
			return nil, err
		}
	}
	if err := w.pause(getc, setc, time.Now().Add(conf.Timeout)); err != nil {
		return nil, err
	}
	if err := w.firstStates(); err != nil {
		return nil, err
	}
	w.commandsMatched(time.Now().Add(conf.Timeout / 4))
	for _, b := range w.bodies {
		cl := commandLen(b)
		b.command = make([]float64, cl)
		b.out = make([]byte, 0, 64+8*cl)
		if err := w.firstSensors(b); err != nil {
			return nil, err
		}
	}
	return w, nil
}

// commandsMatched waits until each body's command writer has matched a
// reader (the simulator's), or until deadline: a command written before
// its writer has matched is lost, and the first step would run without
// it. A simulator that takes no commands on a body never matches; the
// wait then ends at deadline, once, at start-up.
func (w *SimWorld) commandsMatched(deadline time.Time) {
	for _, b := range w.bodies {
		for {
			if m, err := b.cmd.Matched(); err != nil || len(m) > 0 || time.Now().After(deadline) {
				break
			}
			time.Sleep(time.Millisecond)
		}
	}
}

// sensorLen is how many observation values a sensor of kind k takes.
func sensorLen(k sensor.Kind) int {
	n := 0
	for p := range 3 {
		n += sensor.Len(k, p)
	}
	return n
}

// firstSensors reads the sensors' first readings (a latched sample; a
// sensor that has published none yet reads zero until it does) and lays
// them out in the observation after the joints; an IMU part its first
// reading says it does not measure (covariance −1) is left out.
func (w *SimWorld) firstSensors(b *simBody) error {
	at := 2 * len(b.names)
	deadline := time.Now().Add(w.conf.Timeout / 4)
	for _, s := range b.sensors {
		for !s.seen {
			w.n.Reset()
			if err := w.takeSensor(b, s); err != nil {
				return err
			}
			if !s.seen && !w.wait(deadline) {
				break
			}
		}
		name := s.conf.Name
		if name == "" {
			name = s.conf.Topic[strings.LastIndex(s.conf.Topic, "/")+1:]
		}
		g := sensor.Sensor{Name: name, Frame: name, Kind: s.conf.Kind, At: [3]int{-1, -1, -1}}
		if s.seen {
			g.Frame = s.frame
		}
		off := at
		for p := range 3 {
			if l := sensor.Len(s.conf.Kind, p); l > 0 {
				if !s.unknown[p] {
					g.At[p] = off
				}
				off += l
			}
		}
		b.groups = append(b.groups, g)
		at = off
	}
	return nil
}

// takeSensor takes sensor s's readings that arrived; the newest wins.
func (w *SimWorld) takeSensor(b *simBody, s *simSensor) error {
	return w.takeAll(s.rd, b.buf, s.decode)
}

// takeAll hands every sample that arrived on either reader to decode, in
// buf (a sample too big for it is lost). It does not allocate.
func (w *SimWorld) takeAll(rds [2]*Reader, buf []byte, decode func([]byte) error) error {
	for _, rd := range rds {
		for {
			n, ok, err := rd.Take(buf, &w.pub)
			if err != nil {
				return err
			}
			if !ok {
				break
			}
			if n > len(buf) {
				continue
			}
			if err := decode(buf[:n]); err != nil {
				return err
			}
		}
	}
	return nil
}

// commandLen is body b's command length.
func commandLen(b *simBody) int {
	if b.conf.CommandLen > 0 {
		return b.conf.CommandLen
	}
	return len(b.names)
}

func (w *SimWorld) newCall(service, typ, id string) (*svcCall, error) {
	rq, rr, err := rmsgs.ServiceTopics(service)
	if err != nil {
		return nil, err
	}
	ud := "clientid=" + id + ";"
	c := &svcCall{name: service, req: make([]byte, 0, 64), rep: make([]byte, 4096)}
	if c.w, err = w.n.writer(endpointConf{dds: rq, label: service, rosType: rmsgs.Request(typ), userData: ud, q: QoS{Reliable: true, Depth: 16}}); err != nil {
		return nil, err
	}
	if c.r, err = w.n.reader(endpointConf{dds: rr, label: service, rosType: rmsgs.Response(typ), userData: ud, q: QoS{Reliable: true, Depth: 16}, notify: true, efd: w.n.efd}); err != nil {
		return nil, err
	}
	return c, nil
}

// waitService waits until c's request writer and reply reader are matched
// with the server's, as a client's wait_for_service does.
func (w *SimWorld) waitService(c *svcCall, deadline time.Time) error {
	for {
		ws, _ := c.w.Matched()
		rs, _ := c.r.Matched()
		if len(ws) > 0 && len(rs) > 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no simulator serves %s in ROS_DOMAIN_ID %d within %v (is it running, in that domain, with its services there?)",
				c.name, w.n.Domain(), w.conf.Timeout)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// pause puts the simulator in the paused state unless it is.
func (w *SimWorld) pause(getc, setc *svcCall, deadline time.Time) error {
	rep, err := w.call(getc, func(h rmsgs.ServiceHeader) []byte { return rmsgs.AppendEmptyRequest(getc.req[:0], h) }, deadline)
	if err != nil {
		return err
	}
	_, state, res, err := rmsgs.DecodeStateResponse(rep)
	if err != nil {
		return fmt.Errorf("%s: %w", getc.name, err)
	}
	if res.Code != uint8(simcontrol.OK) {
		return fmt.Errorf("%s: %s (code %d)", getc.name, res.Message, res.Code)
	}
	if simcontrol.State(state) == simcontrol.Paused {
		return nil
	}
	rep, err = w.call(setc, func(h rmsgs.ServiceHeader) []byte {
		return rmsgs.AppendUint8Request(setc.req[:0], h, uint8(simcontrol.Paused))
	}, deadline)
	if err != nil {
		return err
	}
	if _, res, err = rmsgs.DecodeResultResponse(rep); err != nil {
		return fmt.Errorf("%s: %w", setc.name, err)
	}
	if res.Code != uint8(simcontrol.OK) && res.Code != uint8(simcontrol.AlreadyInTargetState) {
		return fmt.Errorf("pause the simulator (%s, state %d): %s (code %d)", setc.name, state, res.Message, res.Code)
	}
	return nil
}

// firstStates learns each body's joints and state from its first joint
// states: a latched sample of the simulator's, or, from a simulator that
// publishes none while paused, those after one step it is asked to make
// (the world's time 0 is then that step's end).
func (w *SimWorld) firstStates() error {
	deadline := time.Now().Add(w.conf.Timeout / 2)
	for i, b := range w.bodies {
		for b.names == nil {
			w.n.Reset()
			if err := w.takeFirst(b); err != nil {
				return fmt.Errorf("bodies[%d]: %w", i, err)
			}
			if b.names == nil && !w.wait(deadline) {
				break
			}
		}
	}
	var missing []string
	for _, b := range w.bodies {
		if b.names == nil {
			missing = append(missing, b.conf.JointStates)
		}
	}
	if missing != nil {
		c := w.stepc
		rep, err := w.call(c, func(h rmsgs.ServiceHeader) []byte { return rmsgs.AppendUint64Request(c.req[:0], h, 1) }, time.Now().Add(w.conf.Timeout))
		if err != nil {
			return err
		}
		if _, res, err := rmsgs.DecodeResultResponse(rep); err != nil || res.Code != uint8(simcontrol.OK) {
			return fmt.Errorf("no joint states on %s while paused, and the first step failed: %v %s", strings.Join(missing, ", "), err, res.Message)
		}
		deadline = time.Now().Add(w.conf.Timeout)
		for i, b := range w.bodies {
			for b.names == nil {
				w.n.Reset()
				if err := w.takeFirst(b); err != nil {
					return fmt.Errorf("bodies[%d]: %w", i, err)
				}
				if b.names == nil && !w.wait(deadline) {
					return fmt.Errorf("no joint states on %s in ROS_DOMAIN_ID %d within %v, before or after a step",
						b.conf.JointStates, w.n.Domain(), w.conf.Timeout)
				}
			}
		}
	}
	w.t0 = w.bodies[0].stamp
	for i, b := range w.bodies {
		if b.stamp != w.t0 {
			return fmt.Errorf("bodies[%d]: %s stamped %d ns, %s %d ns: the bodies' joint states must come from one simulator's instant",
				i, b.conf.JointStates, b.stamp, w.bodies[0].conf.JointStates, w.t0)
		}
	}
	return nil
}

// takeFirst takes body b's joint states that arrived, learning its joints
// from them; the newest wins.
func (w *SimWorld) takeFirst(b *simBody) error {
	for _, rd := range b.js {
		for {
			n, ok, err := rd.Take(b.buf, &w.pub)
			if err != nil {
				return err
			}
			if !ok {
				break
			}
			if n > len(b.buf) {
				continue
			}
			m, err := rmsgs.DecodeJointState(b.buf[:n])
			if err != nil {
				return fmt.Errorf("%s: %w", b.conf.JointStates, err)
			}
			if len(m.Name) == 0 || len(m.Position) != len(m.Name) || len(m.Velocity) != len(m.Name) {
				return fmt.Errorf("%s: %d joints with %d positions and %d velocities: want a position and a velocity per joint",
					b.conf.JointStates, len(m.Name), len(m.Position), len(m.Velocity))
			}
			if b.names == nil || m.Header.Stamp >= b.stamp {
				b.names, b.pos, b.vel, b.stamp = m.Name, m.Position, m.Velocity, m.Header.Stamp
			}
		}
	}
	return nil
}

// wait waits for a sample on any of the world's readers, until deadline;
// false when it passed. Callers clear the node's signal (n.Reset) before
// they take what arrived, not here: a sample that arrives between their
// take and this wait must still end it.
func (w *SimWorld) wait(deadline time.Time) bool {
	left := time.Until(deadline)
	if left <= 0 {
		return false
	}
	ms := int(min(left, time.Second) / time.Millisecond)
	_, err := unix.Poll(w.efd, max(ms, 1))
	return err == nil || errors.Is(err, unix.EINTR)
}

// call sends the request req builds and returns the reply that echoes its
// header (valid until c's next call).
func (w *SimWorld) call(c *svcCall, req func(rmsgs.ServiceHeader) []byte, deadline time.Time) ([]byte, error) {
	c.seq++
	h := rmsgs.ServiceHeader{Writer: uint64(c.seq) << 16, Seq: c.seq}
	c.req = req(h)
	if err := c.w.Write(c.req); err != nil {
		return nil, err
	}
	for {
		w.n.Reset()
		for {
			n, ok, err := c.r.Take(c.rep, &w.pub)
			if err != nil {
				return nil, err
			}
			if !ok {
				break
			}
			if n > len(c.rep) {
				continue
			}
			if got, err := rmsgs.DecodeEmptyRequest(c.rep[:n]); err == nil && got == h {
				return c.rep[:n], nil
			}
		}
		if !w.wait(deadline) {
			return nil, fmt.Errorf("%s: no reply within %v", c.name, w.conf.Timeout)
		}
	}
}

// Bodies is the number of bodies the scenario named.
func (w *SimWorld) Bodies() int { return len(w.bodies) }

// CommandLen is body b's command length (its joints, or command_len).
func (w *SimWorld) CommandLen(b int) int { return len(w.bodies[b].command) }

// ObservationLen is a position and a velocity per joint of body b.
func (w *SimWorld) ObservationLen(b int) int {
	n := 2 * len(w.bodies[b].names)
	for _, s := range w.bodies[b].sensors {
		n += len(s.vals)
	}
	return n
}

// SensorGroups are body b's sensors, after its joints in the observation.
func (w *SimWorld) SensorGroups(b int) []sensor.Sensor { return w.bodies[b].groups }

// JointNames are the joints of body b's joint states.
func (w *SimWorld) JointNames(b int) []string { return w.bodies[b].names }

// SetCommand keeps body b's command; it is sent before the next step when
// it changed.
func (w *SimWorld) SetCommand(b int, cmd []float64) {
	if b < 0 || b >= len(w.bodies) {
		return
	}
	bd := w.bodies[b]
	for i := range bd.command {
		v := 0.0
		if i < len(cmd) {
			v = cmd[i]
		}
		if v != bd.command[i] || math.IsNaN(v) {
			bd.command[i] = v
			bd.dirty = true
		}
	}
}

// Observe copies body b's joint positions, then velocities, then its
// sensors' newest readings into dst.
func (w *SimWorld) Observe(b int, dst []float64) int {
	if b < 0 || b >= len(w.bodies) {
		return 0
	}
	bd := w.bodies[b]
	n := copy(dst, bd.pos)
	n += copy(dst[n:], bd.vel)
	for _, s := range bd.sensors {
		n += copy(dst[n:], s.vals)
	}
	return n
}

// Now is the world's virtual time.
func (w *SimWorld) Now() int64 { return w.now }

// Pid is 0: the simulator is another process, which tcs did not start
// (dynamics.Process: the run's steps wait for it).
func (w *SimWorld) Pid() int { return 0 }

// Err is the failure that stopped the world, or nil.
func (w *SimWorld) Err() error { return w.err }

// Steps reports the whole steps the simulator made and the wall time they
// took (commands, step, joint states): the external path's cost per step.
func (w *SimWorld) Steps() (steps, wallNs int64) { return w.steps, w.wallNs }

// Step advances the world by h: the simulator makes every whole step that
// completes.
func (w *SimWorld) Step(h int64) {
	w.now += h
	if w.err != nil {
		return
	}
	w.acc += h
	for w.acc >= w.step {
		w.acc -= w.step
		if err := w.stepOnce(); err != nil {
			w.err = err
			return
		}
	}
}

// stepOnce sends the commands that changed (and waits for the simulator to
// have them), makes one step and waits for every body's joint states at
// its end.
func (w *SimWorld) stepOnce() error {
	t0 := time.Now()
	deadline := t0.Add(w.conf.Timeout)
	for _, b := range w.bodies {
		if !b.dirty {
			continue
		}
		b.out = rmsgs.AppendFloat64MultiArray(b.out[:0], nil, 0, b.command)
		// Sent before the step request, from the same participant to the
		// same one: Cyclone's one receive thread delivers them in that
		// order, so the simulator has the command when it steps.
		if err := b.cmd.Write(b.out); err != nil {
			return err
		}
		b.dirty = false
		if !b.acked {
			// That the writer has matched the simulator's reader
			// (commandsMatched) does not mean the reader has matched the
			// writer: a sample that arrives before it has is dropped and
			// comes again only after a heartbeat round, after the step it
			// was sent for. A Cyclone reader acknowledges a writer's
			// samples from the first on: once one is acknowledged, every
			// later command arrives before the step request after it.
			if err := b.cmd.WaitAcks(w.conf.Timeout); err != nil {
				return fmt.Errorf("%s: the simulator did not acknowledge the first command within %v: %w", b.conf.Commands, w.conf.Timeout, err)
			}
			b.acked = true
		}
	}
	c := w.stepc
	rep, err := w.call(c, func(h rmsgs.ServiceHeader) []byte { return rmsgs.AppendUint64Request(c.req[:0], h, 1) }, deadline)
	if err != nil {
		return err
	}
	_, res, err := rmsgs.DecodeResultResponse(rep)
	if err != nil {
		return fmt.Errorf("%s: %w", c.name, err)
	}
	if res.Code != uint8(simcontrol.OK) {
		return fmt.Errorf("%s refused step %d: %s (code %d)", c.name, w.steps+1, res.Message, res.Code)
	}
	w.steps++
	want := w.t0 + w.steps*w.step
	for _, b := range w.bodies {
		if err := w.statesAt(b, want, deadline); err != nil {
			return err
		}
		// The sensors' readings of the step came before its joint states
		// from a simulator that publishes them first (tcs world --ros2);
		// one whose sensors publish at their own rates gives the newest.
		for _, s := range b.sensors {
			if err := w.takeSensor(b, s); err != nil {
				return err
			}
		}
	}
	w.wallNs += time.Since(t0).Nanoseconds()
	return nil
}

// statesAt takes body b's joint states until those of the step's end
// arrive (the simulator published them before it answered the step), which
// must be stamped want: the simulator's time after the step.
func (w *SimWorld) statesAt(b *simBody, want int64, deadline time.Time) error {
	prev := b.stamp
	for {
		w.n.Reset()
		if err := w.takeAll(b.js, b.buf, b.decode); err != nil {
			return err
		}
		if b.stamp > prev {
			break
		}
		if !w.wait(deadline) {
			return fmt.Errorf("%s: no joint states at the end of step %d within %v", b.conf.JointStates, w.steps, w.conf.Timeout)
		}
	}
	if b.stamp != want {
		return fmt.Errorf("%s: a step of the simulator moved its joint states by %v, the scenario's dynamics.step is %v: make them equal",
			b.conf.JointStates, time.Duration(b.stamp-prev), time.Duration(w.step))
	}
	return nil
}

// decode reads a JointState sample into b without allocating: its stamp,
// positions and velocities (as many as b's joints). A sample older than
// b's is skipped (the other reader's copy of one taken before).
func (b *simBody) decode(sample []byte) error {
	var r cdr.Reader
	r.Reset(sample)
	stamp := r.Time()
	if r.Err() == nil && stamp < b.stamp {
		return nil
	}
	r.StringBytes() // frame_id
	n := r.Len(5)
	for i := 0; i < n && r.Err() == nil; i++ {
		r.StringBytes()
	}
	if n != len(b.names) {
		return fmt.Errorf("%s: %d joints, first %d", b.conf.JointStates, n, len(b.names))
	}
	if p := r.Float64s(b.pos[:0]); len(p) != n {
		return fmt.Errorf("%s: %d positions for %d joints", b.conf.JointStates, len(p), n)
	}
	if v := r.Float64s(b.vel[:0]); len(v) != n {
		return fmt.Errorf("%s: %d velocities for %d joints", b.conf.JointStates, len(v), n)
	}
	if err := r.Err(); err != nil {
		return fmt.Errorf("%s: %w", b.conf.JointStates, err)
	}
	b.stamp = stamp
	return nil
}

// Close leaves the simulator's domain (the simulator stays paused where
// the run left it).
func (w *SimWorld) Close() {
	if w.n != nil {
		w.n.Close()
		w.n = nil
	}
}
