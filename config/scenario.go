package config

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Defaults and limits of the schema.
const (
	DefaultMode         = ModeConsistent
	DefaultQuantum      = Millisecond
	MinQuantum          = 50 * Microsecond
	MaxQuantum          = 100 * Millisecond
	DefaultCPU          = -1 // the last online CPU
	DefaultBasePriority = 80
	MinBasePriority     = 4 // the four levels B..B-3 must all be ≥ 1
	MaxBasePriority     = 99
	DefaultRTF          = 1.0
	// DefaultPeriodicPriority and DefaultBestEffortPriority are a client's
	// priority when the file gives none: controllers above planners.
	DefaultPeriodicPriority   = 10
	DefaultBestEffortPriority = 0
)

// Scenario is one simulation run as described by a scenario file, with
// every default filled in. Build it with Load or Parse.
type Scenario struct {
	// Name names the run (output folder, summary); default: the file's base
	// name without .yaml/.yml.
	Name string `yaml:"name"`
	// Mode: consistent (default), lockstep or free. The runner may override
	// it (tcs run --mode); set the field and call Validate again.
	Mode Mode `yaml:"mode"`
	// Duration is the virtual time to simulate. Required, > 0.
	Duration Duration `yaml:"duration"`
	// Quantum is the longest CPU slice a client gets, and how far a runnable
	// client may run ahead of the world. Default 1ms; 50us..100ms.
	Quantum Duration `yaml:"quantum"`
	// CPU is the simulation CPU; -1 (default) means the last online CPU.
	CPU int `yaml:"cpu"`
	// BasePriority is the SCHED_FIFO base B (default 80; 4..99).
	BasePriority int `yaml:"base_priority"`
	// User is whom the clients tcs starts run as: a user name or uid.
	// Default: the user who invoked tcs (through sudo: SUDO_UID). Clients
	// run without real-time privileges or capabilities unless this names
	// root.
	User string `yaml:"user"`
	// Actuation: exact (default) or hold.
	Actuation Actuation `yaml:"actuation"`
	// Compensation turns on timer error compensation (paper 004 §3.8).
	// Default true.
	Compensation bool `yaml:"compensation"`
	// WallLimit stops the run after this much wall time; 0 (default) means
	// 20 × Duration + 30 s (see EffectiveWallLimit).
	WallLimit Duration `yaml:"wall_limit"`
	// StallTimeout ends the run with a diagnosis when virtual time has not
	// moved for this much wall time (a client that never blocks in
	// lockstep, one that escaped the coordinator's priorities); 0 (default)
	// means 10 s.
	StallTimeout Duration `yaml:"stall_timeout"`
	// MaxRTF caps the real-time factor of consistent and lockstep runs:
	// at each world step the run waits (clients held) until wall time has
	// caught up with virtual time / MaxRTF, so a recorder (rosbag) or a
	// viewer keeps up. 0 (default): as fast as the clients allow.
	MaxRTF float64 `yaml:"max_rtf"`
	// OnExit is what a client's exit does to the run: stop (default) or
	// continue.
	OnExit OnExit `yaml:"on_exit"`
	// Free holds the settings of free mode.
	Free Free `yaml:"free"`
	// ROS holds the settings of the ROS 1 bridge (used when a client has
	// api: ros).
	ROS ROS `yaml:"ros"`
	// Dynamics is the simulated world.
	Dynamics Dynamics `yaml:"dynamics"`
	// Robots are the onboard computers, in file order; robot j controls
	// dynamics body j. At least one.
	Robots []Robot `yaml:"robots"`

	// File is the path the scenario was read from, as given (used in error
	// messages); empty when parsed from bytes without a path.
	File string `yaml:"-"`
	// Dir is the directory of File (absolute after Load); clients' Dir are
	// resolved against it.
	Dir string `yaml:"-"`

	// lines maps field paths ("robots[0].clients[1].period") to the line
	// they are on in File.
	lines map[string]int
}

// Free is the free-mode section.
type Free struct {
	// RTF is the real-time factor the world is held to; 0 means as fast as
	// possible. Default 1.0.
	RTF float64 `yaml:"rtf"`
}

// ROS is the ros section: how the bridge meets its ROS 1 nodes.
type ROS struct {
	// Master is the ROS master's URI. Default: $ROS_MASTER_URI, else
	// http://127.0.0.1:11311; when nothing answers there and the host is a
	// loopback address, tcs starts its own master.
	Master string `yaml:"master"`
	// StartupTimeout bounds how long the nodes may take to start and
	// connect before virtual time begins. Default 30s.
	StartupTimeout Duration `yaml:"startup_timeout"`
	// DiagnosticsPeriod is the virtual time between two /diagnostics
	// messages. Default 1s.
	DiagnosticsPeriod Duration `yaml:"diagnostics_period"`
	// Relay lists the topics between clients (a planner's plans to its
	// controller) that tcs carries: each is delivered to the clients that
	// read it when their progress reaches the publish time.
	Relay []Relay `yaml:"relay"`
	// Transport is how the bridge speaks ROS: ros1 (default; goroslib, a
	// master) or ros2 (DDS through Cyclone DDS; needs a tcs built with the
	// ros2 tag).
	Transport Transport `yaml:"transport"`
	// Distro is the ROS 2 distribution the nodes run (ros2 only): jazzy
	// (default; also iron, kilted, rolling) or humble (also foxy,
	// galactic) — the layout of ros_discovery_info differs (Gid of 16
	// bytes from Iron on, 24 up to Humble).
	Distro string `yaml:"distro"`
}

// DefaultROS2Distro is the ROS 2 distribution of a ros2 scenario without
// ros.distro.
const DefaultROS2Distro = "jazzy"

// ROS2Distro is the ROS 2 distribution the run's nodes use: Distro, or
// DefaultROS2Distro when it is unset; "" when Transport is not ros2.
func (r *ROS) ROS2Distro() string {
	switch {
	case r.Transport != TransportROS2:
		return ""
	case r.Distro == "":
		return DefaultROS2Distro
	}
	return r.Distro
}

// Relay is one topic between ROS clients.
type Relay struct {
	// Topic is the topic's absolute name, like /arm/plan.
	Topic string `yaml:"topic"`
	// From names the one client that publishes it; every other ROS client
	// reading it gets it through tcs.
	From string `yaml:"from"`
}

// HasROS reports whether any client is a ROS node.
func (s *Scenario) HasROS() bool {
	for _, r := range s.Robots {
		for _, c := range r.Clients {
			if c.API == APIROS {
				return true
			}
		}
	}
	return false
}

// Dynamics selects and configures the embedded world model.
type Dynamics struct {
	// Model names the model (pendulum, ...). Required.
	Model string `yaml:"model"`
	// Step is the model's integration step. Required, > 0.
	Step Duration `yaml:"step"`
	// Params are model-specific settings, passed through unchecked (nested
	// mappings are map[string]any, lists []any, numbers int or float64),
	// except that a model's file paths (mujoco's mjcf) are made relative
	// to the scenario's folder.
	Params map[string]any `yaml:"params"`
}

// Robot is one onboard computer: a virtual CPU shared by its clients.
type Robot struct {
	// Name is unique among robots, [A-Za-z0-9_-]+.
	Name string `yaml:"name"`
	// CPUScale is the default cpu_scale of its clients (default 1.0).
	CPUScale float64 `yaml:"cpu_scale"`
	// CommandTopic is the topic its actuator command arrives on (ROS
	// clients); empty: /<name>/command, a std_msgs/Float64 for one value
	// and a Float64MultiArray for more. Set, it is the topic of a
	// ros2_control forward command controller (/<controller>/commands),
	// always a std_msgs/Float64MultiArray whose data[i] is actuator i; a
	// name without a leading / is in the robot's namespace.
	CommandTopic string `yaml:"command_topic"`
	// Clients in file order. At least one.
	Clients []Client `yaml:"clients"`
}

// Command is the robot's command topic, resolved (see CommandTopic).
func (r *Robot) Command() string {
	switch {
	case r.CommandTopic == "":
		return "/" + r.Name + "/command"
	case strings.HasPrefix(r.CommandTopic, "/"):
		return r.CommandTopic
	}
	return "/" + r.Name + "/" + r.CommandTopic
}

// Client is one process the coordinator runs.
type Client struct {
	// Name is unique across the scenario, [A-Za-z0-9_-]+.
	Name string `yaml:"name"`
	// Cmd is the argv; Cmd[0] == "tcs" means the tcs binary. Required
	// unless Attach.
	Cmd []string `yaml:"cmd"`
	// Attach: tcs does not start this client; it joins the run through
	// `tcs attach --name <name> -- CMD...` (a roslaunch launch-prefix)
	// before virtual time begins. A ROS node only.
	Attach bool `yaml:"attach"`
	// API: native (default), plain or ros.
	API API `yaml:"api"`
	// Class: periodic or best-effort. Required.
	Class Class `yaml:"class"`
	// Period is the declared period: required (> 0) for periodic clients,
	// 0 for best-effort ones.
	Period Duration `yaml:"period"`
	// Priority orders clients within a robot, higher first; unique within
	// the robot. Default 10 for periodic, 0 for best-effort clients.
	Priority int `yaml:"priority"`
	// CPUScale multiplies the CPU time the client uses before it is charged
	// (2.0 models a CPU half as fast). Default the robot's CPUScale; > 0.
	// It is never 0 in a parsed scenario, also in lockstep mode: lockstep
	// charges nothing to virtual time but Δ is measured with this scale.
	CPUScale float64 `yaml:"cpu_scale"`
	// Samples is when a ROS client receives its robot's sensor samples:
	// each (default: every sample at its instant) or at_activation (a
	// periodic client gets the newest at each activation's instant, before
	// its clock, and none while it waits: for nodes whose sensor callbacks
	// only keep the newest value). at_activation needs api: ros, class:
	// periodic and a period that is a multiple of dynamics.step.
	Samples Samples `yaml:"samples"`
	// Subscribes lists the native message channels (≥ 1) the client
	// receives. Native clients only.
	Subscribes []int `yaml:"subscribes"`
	// Log is the file for the client's stdout and stderr as written in the
	// file; "" means <out>/logs/<name>.log. Use LogPath.
	Log string `yaml:"log"`
	// Env is extra environment, added to tcs's own.
	Env map[string]string `yaml:"env"`
	// Dir is the working directory, resolved against Scenario.Dir (so
	// absolute after Load); default Scenario.Dir.
	Dir string `yaml:"dir"`
}

// Load reads, parses and validates the scenario file at path. Scenario.Dir
// is absolute. The error is an Errors listing every problem, or a
// *os.PathError-wrapping error when the file cannot be read.
func Load(path string) (*Scenario, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load scenario: %w", err)
	}
	s, err := parse(data, path, true)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// Parse parses and validates a scenario held in data; path is used for
// error messages, the default name and Scenario.Dir ("" is allowed: the
// current directory). It never panics. On failure it returns nil and an
// Errors listing every problem.
func Parse(data []byte, path string) (*Scenario, error) {
	return parse(data, path, false)
}

func parse(data []byte, path string, abs bool) (*Scenario, error) {
	s, errs, dropped := decode(data, path, abs)
	if s != nil {
		// Validation problems on a field that already failed to decode
		// would only repeat it ("duration: is required" after
		// "duration: "abc" is not a duration").
		for _, e := range s.validate() {
			if !errs.covers(e.Field) {
				errs = append(errs, e)
			}
		}
	}
	if len(errs) > 0 {
		errs.sortByLine()
		if len(errs) > maxErrors {
			dropped += len(errs) - maxErrors
			errs = errs[:maxErrors]
		}
		if dropped > 0 {
			errs = append(errs, &FieldError{File: path, Msg: fmt.Sprintf("and %d more problems; fix these first", dropped)})
		}
		return nil, errs
	}
	return s, nil
}

// covers reports whether es has a problem at field or at one of its parents.
func (es Errors) covers(field string) bool {
	for _, e := range es {
		if e.Field == "" {
			continue
		}
		if field == e.Field || strings.HasPrefix(field, e.Field+".") || strings.HasPrefix(field, e.Field+"[") {
			return true
		}
	}
	return false
}

// EffectiveStallTimeout is StallTimeout, or 10 s when it is 0.
func (s *Scenario) EffectiveStallTimeout() Duration {
	if s.StallTimeout > 0 {
		return s.StallTimeout
	}
	return 10 * Second
}

// EffectiveWallLimit is WallLimit, or 20 × Duration + 30 s when WallLimit is
// 0 (saturating instead of overflowing).
func (s *Scenario) EffectiveWallLimit() Duration {
	if s.WallLimit > 0 {
		return s.WallLimit
	}
	const maxD = Duration(1<<63 - 1)
	if s.Duration > (maxD-30*Second)/20 {
		return maxD
	}
	return 20*s.Duration + 30*Second
}

// ClientCount is the number of clients over all robots.
func (s *Scenario) ClientCount() int {
	n := 0
	for i := range s.Robots {
		n += len(s.Robots[i].Clients)
	}
	return n
}

// ClientRef is a client in scenario order.
type ClientRef struct {
	// Index is the client's position in scenario order (robots in file
	// order, then each robot's clients in file order), 0-based.
	Index int
	// RobotIndex is the robot's position in Robots (and the dynamics body it
	// controls).
	RobotIndex int
	Robot      *Robot
	Client     *Client
}

// Clients lists every client in scenario order: robots in file order, then
// each robot's clients in file order (not priority order). The pointers
// point into s.
func (s *Scenario) Clients() []ClientRef {
	out := make([]ClientRef, 0, s.ClientCount())
	for ri := range s.Robots {
		r := &s.Robots[ri]
		for ci := range r.Clients {
			out = append(out, ClientRef{Index: len(out), RobotIndex: ri, Robot: r, Client: &r.Clients[ci]})
		}
	}
	return out
}

// FindClient returns the client called name, in scenario order.
func (s *Scenario) FindClient(name string) (ClientRef, bool) {
	for _, c := range s.Clients() {
		if c.Client.Name == name {
			return c, true
		}
	}
	return ClientRef{}, false
}

// Line is the line of field (a path like "robots[0].clients[1].period") in
// the scenario file, or of its nearest parent that has one; 0 if unknown.
func (s *Scenario) Line(field string) int {
	for field != "" {
		if l, ok := s.lines[field]; ok {
			return l
		}
		field = parentPath(field)
	}
	return 0
}

// parentPath drops the last element of a field path:
// "a.b[2].c" → "a.b[2]" → "a.b" → "a" → "".
func parentPath(p string) string {
	i := strings.LastIndexAny(p, ".[")
	if i < 0 {
		return ""
	}
	return p[:i]
}

// IsPeriodic reports whether c is of class periodic.
func (c *Client) IsPeriodic() bool { return c.Class == ClassPeriodic }

// LogPath is where the client's stdout and stderr go for a run whose
// output folder is outDir: Log resolved against outDir, or
// <outDir>/logs/<name>.log when Log is empty.
func (c *Client) LogPath(outDir string) string {
	if c.Log == "" {
		return filepath.Join(outDir, "logs", c.Name+".log")
	}
	if filepath.IsAbs(c.Log) {
		return filepath.Clean(c.Log)
	}
	return filepath.Join(outDir, c.Log)
}

// Environ is Env as KEY=VALUE strings, sorted by key (for exec).
func (c *Client) Environ() []string {
	keys := make([]string, 0, len(c.Env))
	for k := range c.Env {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = k + "=" + c.Env[k]
	}
	return out
}
