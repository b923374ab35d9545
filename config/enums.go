package config

import (
	"fmt"
	"strings"
)

// Mode is how a run relates computation to virtual time (DESIGN §2).
type Mode int

const (
	// ModeConsistent charges every client's CPU time to virtual time (the
	// default).
	ModeConsistent Mode = iota
	// ModeLockstep is the callback model of today's simulators: computation
	// costs no virtual time and the world waits for every client to go idle.
	ModeLockstep
	// ModeFree does not gate clients: the world steps at its own speed,
	// optionally held to a real-time factor (Free.RTF).
	ModeFree
)

var modeNames = []string{"consistent", "lockstep", "free"}

// String returns the name used in scenario files and summary.json.
func (m Mode) String() string { return enumString(modeNames, int(m), "Mode") }

// ParseMode parses a mode name as written in a scenario file.
func ParseMode(s string) (Mode, error) {
	i, err := parseEnum(modeNames, s, "mode")
	return Mode(i), err
}

// MarshalText implements encoding.TextMarshaler.
func (m Mode) MarshalText() ([]byte, error) { return []byte(m.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (m *Mode) UnmarshalText(b []byte) error {
	v, err := ParseMode(string(b))
	if err == nil {
		*m = v
	}
	return err
}

// Class is a client's scheduling class (DESIGN §2, client classes).
type Class int

const (
	// ClassUnset is the zero value: the class is required, so a Client with
	// it does not validate.
	ClassUnset Class = iota
	// ClassPeriodic clients declare a period P; activation k is due at k·P.
	ClassPeriodic
	// ClassBestEffort clients run whenever nothing above them in their robot
	// is runnable.
	ClassBestEffort
)

var classNames = []string{"", "periodic", "best-effort"}

// String returns the name used in scenario files and summary.json ("" for
// ClassUnset).
func (c Class) String() string { return enumString(classNames, int(c), "Class") }

// ParseClass parses a class name as written in a scenario file.
func ParseClass(s string) (Class, error) {
	i, err := parseEnum(classNames, s, "class")
	return Class(i), err
}

// MarshalText implements encoding.TextMarshaler.
func (c Class) MarshalText() ([]byte, error) { return []byte(c.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (c *Class) UnmarshalText(b []byte) error {
	v, err := ParseClass(string(b))
	if err == nil {
		*c = v
	}
	return err
}

// API is how a client talks to tcs.
type API int

const (
	// APINative clients use the native protocol (coordinator/native): pipes
	// and shared memory, no state inference needed. The default.
	APINative API = iota
	// APIPlain clients are unmodified programs that are not ROS nodes; the
	// coordinator infers their state.
	APIPlain
	// APIROS clients are unmodified ROS 1 nodes: tcs starts them with
	// /use_sim_time set and their clock remapped to a private one, delivers
	// their robot's sensor topic and reads its actuator topic.
	APIROS
)

var apiNames = []string{"native", "plain", "ros"}

// String returns the name used in scenario files.
func (a API) String() string { return enumString(apiNames, int(a), "API") }

// ParseAPI parses an api name as written in a scenario file.
func ParseAPI(s string) (API, error) {
	i, err := parseEnum(apiNames, s, "api")
	return API(i), err
}

// MarshalText implements encoding.TextMarshaler.
func (a API) MarshalText() ([]byte, error) { return []byte(a.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (a *API) UnmarshalText(b []byte) error {
	v, err := ParseAPI(string(b))
	if err == nil {
		*a = v
	}
	return err
}

// ModelSimulator is the dynamics model of an external simulator stepped
// over ROS 2 (dynamics.ModelSimulationInterfaces): its actuation is hold.
const ModelSimulator = "simulation_interfaces"

// Actuation is when an actuator command takes effect in the world
// (DESIGN §2, messages).
type Actuation int

const (
	// ActuationExact applies a command at exactly its publish instant: the
	// coordinator makes a partial dynamics step to reach it. The default.
	ActuationExact Actuation = iota
	// ActuationHold applies a command at the next dynamics step boundary.
	ActuationHold
)

var actuationNames = []string{"exact", "hold"}

// String returns the name used in scenario files.
func (a Actuation) String() string { return enumString(actuationNames, int(a), "Actuation") }

// ParseActuation parses an actuation name as written in a scenario file.
func ParseActuation(s string) (Actuation, error) {
	i, err := parseEnum(actuationNames, s, "actuation")
	return Actuation(i), err
}

// MarshalText implements encoding.TextMarshaler.
func (a Actuation) MarshalText() ([]byte, error) { return []byte(a.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (a *Actuation) UnmarshalText(b []byte) error {
	v, err := ParseActuation(string(b))
	if err == nil {
		*a = v
	}
	return err
}

// Samples is when a ROS client receives the world's sensor samples (its
// robot's joint states and world sensors).
type Samples int

const (
	// SamplesEach delivers every sample at its instant (DESIGN §2): a
	// client that waits wakes for each, as a callback. The default.
	SamplesEach Samples = iota
	// SamplesAtActivation holds the samples a periodic client would get
	// while it waits for its next activation and gives it the newest at
	// that activation's instant, before its clock: one dispatch per
	// activation instead of one per sample, for nodes whose sensor
	// callbacks only keep the newest value.
	SamplesAtActivation
)

var samplesNames = []string{"each", "at_activation"}

// String returns the name used in scenario files.
func (s Samples) String() string { return enumString(samplesNames, int(s), "Samples") }

// ParseSamples parses a samples name as written in a scenario file.
func ParseSamples(s string) (Samples, error) {
	i, err := parseEnum(samplesNames, s, "samples")
	return Samples(i), err
}

// MarshalText implements encoding.TextMarshaler.
func (s Samples) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (s *Samples) UnmarshalText(b []byte) error {
	v, err := ParseSamples(string(b))
	if err == nil {
		*s = v
	}
	return err
}

// Transport is the ROS transport of the bridge.
type Transport int

const (
	// TransportROS1 speaks ROS 1 (TCPROS, a master). The default.
	TransportROS1 Transport = iota
	// TransportROS2 speaks ROS 2 (DDS-RTPS through Cyclone DDS).
	TransportROS2
)

var transportNames = []string{"ros1", "ros2"}

// String returns the name used in scenario files.
func (t Transport) String() string { return enumString(transportNames, int(t), "Transport") }

// ParseTransport parses a ros.transport value as written in a scenario
// file.
func ParseTransport(s string) (Transport, error) {
	i, err := parseEnum(transportNames, s, "transport")
	return Transport(i), err
}

// MarshalText implements encoding.TextMarshaler.
func (t Transport) MarshalText() ([]byte, error) { return []byte(t.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (t *Transport) UnmarshalText(b []byte) error {
	v, err := ParseTransport(string(b))
	if err == nil {
		*t = v
	}
	return err
}

// ROS2Distros are the ros.distro values.
var ROS2Distros = []string{"foxy", "galactic", "humble", "iron", "jazzy", "kilted", "rolling"}

// OnExit is what a client's exit does to the run (DESIGN §7).
type OnExit int

const (
	// OnExitStop ends the run cleanly when any client exits. The default.
	OnExitStop OnExit = iota
	// OnExitContinue reports the exit and lets the other clients go on.
	OnExitContinue
)

var onExitNames = []string{"stop", "continue"}

// String returns the name used in scenario files.
func (o OnExit) String() string { return enumString(onExitNames, int(o), "OnExit") }

// ParseOnExit parses an on_exit value as written in a scenario file.
func ParseOnExit(s string) (OnExit, error) {
	i, err := parseEnum(onExitNames, s, "on_exit")
	return OnExit(i), err
}

// MarshalText implements encoding.TextMarshaler.
func (o OnExit) MarshalText() ([]byte, error) { return []byte(o.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (o *OnExit) UnmarshalText(b []byte) error {
	v, err := ParseOnExit(string(b))
	if err == nil {
		*o = v
	}
	return err
}

func enumString(names []string, i int, typ string) string {
	if i < 0 || i >= len(names) {
		return fmt.Sprintf("%s(%d)", typ, i)
	}
	return names[i]
}

func validNames(names []string) string {
	var b strings.Builder
	n := 0
	for _, s := range names {
		if s == "" {
			continue
		}
		if n > 0 {
			b.WriteString(", ")
		}
		b.WriteString(s)
		n++
	}
	return b.String()
}

func parseEnum(names []string, s, what string) (int, error) {
	if s != "" {
		for i, n := range names {
			if n == s {
				return i, nil
			}
		}
	}
	return 0, fmt.Errorf("%q is not a valid %s; use one of %s", s, what, validNames(names))
}

func validEnum(names []string, i int) bool {
	return i >= 0 && i < len(names) && names[i] != ""
}
