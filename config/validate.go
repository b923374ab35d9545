package config

import (
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

var (
	namePattern     = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)
	scenarioPattern = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)
	modelPattern    = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)
)

// Validate checks every rule of the schema and returns all problems as an
// Errors (nil when there are none). It is pure: it reads only s, so facts
// of the machine (online CPUs, the dynamics model's bodies, directories)
// are the runner's to check.
func (s *Scenario) Validate() error {
	es := s.validate()
	es.sortByLine()
	return es.orNil()
}

// checker collects problems with their lines.
type checker struct {
	s    *Scenario
	errs Errors
}

func (c *checker) add(field, format string, args ...any) {
	c.errs = append(c.errs, &FieldError{File: c.s.File, Line: c.s.Line(field), Field: field, Msg: fmt.Sprintf(format, args...)})
}

func (s *Scenario) validate() Errors {
	c := &checker{s: s}
	switch {
	case s.Name == "":
		c.add("name", "is empty; write a short word like name: pendulum, or leave the field out to use the file's name")
	case !scenarioPattern.MatchString(s.Name):
		c.add("name", "%q may hold only letters, digits, _, . and -; it names the run's output", s.Name)
	}
	if !validEnum(modeNames, int(s.Mode)) {
		c.add("mode", "%d is not a mode; use one of %s", int(s.Mode), validNames(modeNames))
	}
	if s.Duration <= 0 {
		c.add("duration", "is required and must be > 0: the virtual time to simulate, like duration: 10s")
	}
	if s.Quantum < MinQuantum || s.Quantum > MaxQuantum {
		c.add("quantum", "%s is outside %s..%s; the quantum is the longest CPU slice a client gets and its lead over the world: 1ms is a good start", s.Quantum, MinQuantum, MaxQuantum)
	}
	if s.CPU < -1 {
		c.add("cpu", "%d is not a CPU; write -1 for the last online CPU, or a CPU number ≥ 0", s.CPU)
	}
	if s.BasePriority < MinBasePriority || s.BasePriority > MaxBasePriority {
		c.add("base_priority", "%d is outside %d..%d; tcs uses the SCHED_FIFO levels B, B-1, B-2, B-3 (80 is the default)", s.BasePriority, MinBasePriority, MaxBasePriority)
	}
	if !validEnum(actuationNames, int(s.Actuation)) {
		c.add("actuation", "%d is not an actuation; use one of %s", int(s.Actuation), validNames(actuationNames))
	}
	if s.StallTimeout < 0 {
		c.add("stall_timeout", "%s is negative; write a wall time like 10s, or 0 for the default (10 s)", s.StallTimeout)
	}
	if s.WallLimit < 0 {
		c.add("wall_limit", "%s is negative; write a wall time like 5m, or 0 for 20 × duration + 30 s", s.WallLimit)
	}
	if !validEnum(onExitNames, int(s.OnExit)) {
		c.add("on_exit", "%d is not an on_exit policy; use one of %s", int(s.OnExit), validNames(onExitNames))
	}
	if s.ROS.DiagnosticsPeriod < 0 {
		c.add("ros.diagnostics_period", "%v must be ≥ 0 (0: the default 1s)", s.ROS.DiagnosticsPeriod)
	}
	if s.ROS.StartupTimeout < 0 {
		c.add("ros.startup_timeout", "%v must be ≥ 0 (0: the default 30s)", s.ROS.StartupTimeout)
	}
	seen := map[string]bool{}
	for i, r := range s.ROS.Relay {
		path := fmt.Sprintf("ros.relay[%d]", i)
		switch {
		case !strings.HasPrefix(r.Topic, "/") || strings.ContainsAny(r.Topic, " \t:=~") || strings.HasSuffix(r.Topic, "/"):
			c.add(path+".topic", "%q is not an absolute topic name; write it like /arm/plan", r.Topic)
		case seen[r.Topic]:
			c.add(path+".topic", "%s is relayed twice", r.Topic)
		case strings.HasPrefix(r.Topic, "/tcs/") || r.Topic == "/clock" || r.Topic == "/diagnostics":
			c.add(path+".topic", "%s is a topic of tcs itself; relay a topic between your nodes", r.Topic)
		}
		seen[r.Topic] = true
		from, ok := s.FindClient(r.From)
		switch {
		case r.From == "":
			c.add(path+".from", "is required; name the ROS client that publishes %s", r.Topic)
		case !ok:
			var names []string
			for _, cr := range s.Clients() {
				names = append(names, cr.Client.Name)
			}
			c.add(path+".from", "%q is not a client of this scenario; clients: %s", r.From, strings.Join(names, ", "))
		case from.Client.API != APIROS:
			c.add(path+".from", "client %q is not a ROS node (api: ros)", r.From)
		}
	}
	if len(s.ROS.Relay) > 0 && s.ClientCount() > 64 {
		c.add("ros.relay", "relays serve at most 64 clients; this scenario has %d", s.ClientCount())
	}
	if !validEnum(transportNames, int(s.ROS.Transport)) {
		c.add("ros.transport", "%d is not a transport; use one of %s", int(s.ROS.Transport), validNames(transportNames))
	}
	switch {
	case s.ROS.Distro == "":
	case s.ROS.Transport != TransportROS2:
		c.add("ros.distro", "is for ROS 2 (ros.transport: ros2)")
	case !slices.Contains(ROS2Distros, s.ROS.Distro):
		c.add("ros.distro", "%q is not a ROS 2 distribution; use one of %s", s.ROS.Distro, strings.Join(ROS2Distros, ", "))
	}
	if s.ROS.Transport == TransportROS2 && s.ROS.Master != "" {
		c.add("ros.master", "is for ROS 1; ROS 2 (ros.transport: ros2) has no master")
	}
	if m := s.ROS.Master; m != "" && !strings.HasPrefix(m, "http://") {
		c.add("ros.master", "%q is not a master URI; write it like http://127.0.0.1:11311", m)
	}
	if !(s.MaxRTF >= 0) || math.IsInf(s.MaxRTF, 0) {
		c.add("max_rtf", "%v is not a real-time factor; write a number ≥ 0 like 1.0 (0: no ceiling)", s.MaxRTF)
	}
	if !(s.Free.RTF >= 0) || math.IsInf(s.Free.RTF, 0) {
		c.add("free.rtf", "%v is not a real-time factor; write a number ≥ 0 like 1.0 (0: as fast as possible)", s.Free.RTF)
	}

	switch {
	case s.Dynamics.Model == "":
		c.add("dynamics.model", "is required; name the embedded world model, like model: pendulum")
	case !modelPattern.MatchString(s.Dynamics.Model):
		c.add("dynamics.model", "%q is not a model name; model names are words like pendulum", s.Dynamics.Model)
	}
	if s.Dynamics.Step <= 0 {
		c.add("dynamics.step", "is required and must be > 0: the world's integration step, like step: 1ms")
	}
	if s.Dynamics.Model == ModelSimulator && s.Actuation == ActuationExact {
		c.add("actuation", "exact is not possible with dynamics.model %s: the simulator makes whole steps, so a command acts from the next one; write actuation: hold (the default with this model)", ModelSimulator)
	}

	if len(s.Robots) == 0 {
		c.add("robots", "needs at least one robot (- name: arm, with its clients); robot j controls dynamics body j")
	}
	robotNames := map[string]string{}
	commands := map[string]string{}    // command topic → robot
	clientNames := map[string]string{} // name → its field path
	logs := map[string]string{}        // cleaned log path relative to the output folder → client
	for _, ref := range s.Clients() {
		cl := ref.Client
		if cl.Name != "" && cl.Log == "" {
			logs[defaultLog(cl)] = cl.Name
		}
	}
	for ri := range s.Robots {
		r := &s.Robots[ri]
		rp := index("robots", ri)
		c.name(rp, r.Name, "robot", "arm", "", robotNames)
		if !(r.CPUScale > 0) || math.IsInf(r.CPUScale, 0) {
			c.add(join(rp, "cpu_scale"), "%v must be a number > 0: 1.0 is this machine's speed, 2.0 a CPU half as fast", r.CPUScale)
		}
		if len(r.Clients) == 0 {
			c.add(join(rp, "clients"), "needs at least one client (- name: pd, cmd: [...], class: periodic, period: 1ms)")
		}
		if t := r.CommandTopic; t != "" {
			switch full := r.Command(); {
			case commands[full] != "":
				c.add(join(rp, "command_topic"), "%s is also the command topic of robot %s; each robot needs its own", full, commands[full])
			case !topicPattern.MatchString(full):
				c.add(join(rp, "command_topic"), "%q is not a topic name; write it like /forward_position_controller/commands", t)
			case strings.HasPrefix(full, "/tcs/") || full == "/clock" || full == "/diagnostics":
				c.add(join(rp, "command_topic"), "%s is a topic of tcs itself; name your controller's command topic", full)
			}
		}
		commands[r.Command()] = r.Name
		priorities := map[int]string{}
		for ci := range r.Clients {
			c.client(&r.Clients[ci], index(join(rp, "clients"), ci), clientNames, priorities, logs)
		}
	}
	return c.errs
}

// topicPattern is an absolute ROS topic name: segments of letters, digits
// and _, not beginning with a digit.
var topicPattern = regexp.MustCompile(`^(/[A-Za-z_][A-Za-z0-9_]*)+$`)

// name checks the name of the robot or client at path p: required, of the
// allowed characters, unique among seen (name → path of the first).
func (c *checker) name(p, name, what, example, scope string, seen map[string]string) {
	switch {
	case name == "":
		c.add(join(p, "name"), "is required; name the %s, like name: %s", what, example)
	case !namePattern.MatchString(name):
		c.add(join(p, "name"), "%q may hold only letters, digits, _ and -", name)
	default:
		if other, dup := seen[name]; dup {
			c.add(join(p, "name"), "%q is also the name of %s; %s names must be unique%s", name, other, what, scope)
		} else {
			seen[name] = p
		}
	}
}

func defaultLog(cl *Client) string { return filepath.Join("logs", cl.Name+".log") }

func (c *checker) client(cl *Client, p string, names map[string]string, priorities map[int]string, logs map[string]string) {
	c.name(p, cl.Name, "client", "pd", " in the scenario", names)

	switch {
	case cl.Attach && len(cl.Cmd) > 0:
		c.add(join(p, "cmd"), "is for clients tcs starts; an attached client (attach: true) is started by its launcher through tcs attach: remove one of the two")
	case cl.Attach && cl.API != APIROS:
		c.add(join(p, "attach"), "is for ROS nodes (api: ros)")
	case cl.Attach:
	case len(cl.Cmd) == 0:
		c.add(join(p, "cmd"), "is required: the program and its arguments, like cmd: [tcs, client, pd] (or attach: true for a ROS node started by roslaunch through tcs attach)")
	case cl.Cmd[0] == "":
		c.add(index(join(p, "cmd"), 0), "is empty; the first item is the program to run")
	}
	for i, a := range cl.Cmd {
		if strings.IndexByte(a, 0) >= 0 {
			c.add(index(join(p, "cmd"), i), "contains a NUL byte, which no program argument can hold")
		}
	}

	if !validEnum(apiNames, int(cl.API)) {
		c.add(join(p, "api"), "%d is not an api; use one of %s", int(cl.API), validNames(apiNames))
	}
	switch cl.Class {
	case ClassPeriodic:
		if cl.Period <= 0 {
			c.add(join(p, "period"), "is required for a periodic client and must be > 0, like period: 1ms")
		}
	case ClassBestEffort:
		if cl.Period != 0 {
			c.add(join(p, "period"), "is only for periodic clients; remove it, or set class: periodic")
		}
	case ClassUnset:
		c.add(join(p, "class"), "is required; use periodic (with a period, for controllers) or best-effort (planners, perception)")
	default:
		c.add(join(p, "class"), "%d is not a class; use one of %s", int(cl.Class), validNames(classNames))
	}

	if other, dup := priorities[cl.Priority]; dup {
		c.add(join(p, "priority"), "%d is also the priority of client %q in this robot; priorities must be unique within a robot (higher runs first)", cl.Priority, other)
	} else {
		priorities[cl.Priority] = cl.Name
	}

	lockstepZero := cl.CPUScale == 0 && c.s.Mode == ModeLockstep
	if !lockstepZero && (!(cl.CPUScale > 0) || math.IsInf(cl.CPUScale, 0)) {
		c.add(join(p, "cpu_scale"), "%v must be a number > 0: 1.0 is this machine's speed, 2.0 a CPU half as fast", cl.CPUScale)
	}

	switch {
	case !validEnum(samplesNames, int(cl.Samples)):
		c.add(join(p, "samples"), "%d is not a samples setting; use one of %s", int(cl.Samples), validNames(samplesNames))
	case cl.Samples != SamplesAtActivation:
	case cl.API != APIROS:
		c.add(join(p, "samples"), "at_activation is for ROS nodes (api: ros); a %s client reads its sample when it asks", cl.API)
	case cl.Class != ClassPeriodic:
		c.add(join(p, "samples"), "at_activation is for periodic clients: a best-effort node has no activation to receive its samples at; remove it")
	case c.s.Dynamics.Step > 0 && cl.Period > 0 && cl.Period%c.s.Dynamics.Step != 0:
		c.add(join(p, "samples"), "at_activation needs a period (%v) that is a multiple of dynamics.step (%v): the newest sample at an activation is the one at its instant", cl.Period, c.s.Dynamics.Step)
	}

	if len(cl.Subscribes) > 0 && (cl.API == APIPlain || cl.API == APIROS) {
		c.add(join(p, "subscribes"), "is for native clients (api: native); a %s client subscribes to topics itself", cl.API)
	}
	seen := map[int]bool{}
	for i, ch := range cl.Subscribes {
		f := index(join(p, "subscribes"), i)
		switch {
		case ch < 1:
			c.add(f, "channel %d is not a message channel; channels are numbered from 1 (0 is the robot's actuator command)", ch)
		case seen[ch]:
			c.add(f, "channel %d is listed twice; list each channel once", ch)
		}
		seen[ch] = true
	}

	if cl.Log != "" {
		switch {
		case strings.IndexByte(cl.Log, 0) >= 0:
			c.add(join(p, "log"), "contains a NUL byte")
		case strings.HasSuffix(cl.Log, "/") || filepath.Clean(cl.Log) == ".":
			c.add(join(p, "log"), "%q is a folder; name a file, like log: %s.log", cl.Log, cl.Name)
		default:
			key := filepath.Clean(cl.Log)
			if other, dup := logs[key]; dup && other != cl.Name {
				c.add(join(p, "log"), "%q is also the log of client %q; give each client its own log file", cl.Log, other)
			} else {
				logs[key] = cl.Name
			}
		}
	}

	keys := make([]string, 0, len(cl.Env))
	for k := range cl.Env {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		f := join(join(p, "env"), k)
		switch {
		case k == "" || strings.ContainsAny(k, "=\x00"):
			c.add(join(p, "env"), "variable name %q is not valid; names may not be empty or hold = or NUL", k)
		case strings.IndexByte(cl.Env[k], 0) >= 0:
			c.add(f, "contains a NUL byte, which no environment value can hold")
		}
	}

	if strings.IndexByte(cl.Dir, 0) >= 0 {
		c.add(join(p, "dir"), "contains a NUL byte")
	}
}
