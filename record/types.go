package record

import (
	"fmt"
	"strings"

	"github.com/bluenviron/goroslib/v2/pkg/msg"
	"github.com/bluenviron/goroslib/v2/pkg/msgs/std_msgs"

	"github.com/tcs-robotics/tcs/dynamics/sensor"
	"github.com/tcs-robotics/tcs/msgs"
	"github.com/tcs-robotics/tcs/msgs/cdr"
	"github.com/tcs-robotics/tcs/msgs/ros2"
)

// ClientProgress is tcs_msgs/ClientProgress (ROS 2: tcs_msgs/msg/ClientProgress),
// recorded on TopicProgress: a client's progress at each status period
// (Event EventStatus), each activation it began (EventActivation) and each
// deadline miss (EventMiss). Times are virtual ns.
type ClientProgress struct {
	msg.Package     `ros:"tcs_msgs"`
	msg.Definitions `ros:"uint8 STATUS=0,uint8 ACTIVATION=1,uint8 DEADLINE_MISS=2"`
	Event           uint8
	Client          string
	Robot           string
	WorldNs         int64 // the world's time T when it was seen
	ProgressNs      int64 // the client's progress p_i
	CPUNs           int64 `rosname:"cpu_ns"` // CPU charged to it so far
	Activations     int64
	DeadlineMisses  int64
	DueNs           int64 // activation and miss: the activation's due time k·P
	BeginNs         int64 // activation: the virtual instant it began
	// DeadlineMissesHost counts the misses of DeadlineMisses that came
	// while its robot had lost CPU to the host (summary:
	// deadline_misses_host): a miss event is the host's when it raises it.
	DeadlineMissesHost int64
}

// ClientProgress events.
const (
	EventStatus     = 0
	EventActivation = 1
	EventMiss       = 2
)

// RunStatus is tcs_msgs/RunStatus (ROS 2: tcs_msgs/msg/RunStatus), recorded on
// TopicRunStatus every status period: the figures the summary is made of,
// so far. Times are virtual ns except the CPU times.
type RunStatus struct {
	msg.Package      `ros:"tcs_msgs"`
	WorldNs          int64
	DriftNs          int64 // Δ at the last dispatch decision
	DriftMaxNs       int64 // max Δ since the previous status
	DriftMaxRunNs    int64 // max Δ over the run so far
	CoordinatorNs    int64 // coordinator CPU so far
	ClientsNs        int64 // clients' CPU so far
	DynamicsNs       int64 // the world's stepping so far
	Dispatches       int64
	DeadlineMisses   int64
	RecordingDropped int64 // records the recording dropped so far
	WallNs           int64 // wall time since virtual time began
}

// The topics tcs records besides the run's own ROS topics.
//
// The run's status series is recorded on TopicRunStatus, not /tcs/status:
// on the ROS graph /tcs/status is the live status as
// diagnostic_msgs/DiagnosticStatus (bridge/ros1), which users echo with
// standard tools, and one name must not carry two types between a run's
// graph and its recording (rosbag, tcs play). TopicLegacyStatus is where
// earlier recordings kept RunStatus; ReadRun reads it there too.
const (
	TopicClock        = "/clock"
	TopicDiagnostics  = "/diagnostics"
	TopicProgress     = "/tcs/progress"
	TopicRunStatus    = "/tcs/run_status"
	TopicLegacyStatus = "/tcs/status"
)

// Known is a message type tcs records: its ROS 1 type and the converter
// that gives its ROS 2 name and definition.
type Known struct {
	ROS1 msgs.Type
	Conv *Converter
}

// Channel returns the recording channel of topic with this type; its
// metadata keeps the ROS 1 type (for tcs play).
func (k *Known) Channel(topic string) Channel {
	return Channel{Topic: topic, Type: k.Conv.ROS2Name, Definition: k.Conv.ROS2Definition, Metadata: ROS1Metadata(k.ROS1)}
}

// Channel metadata keys that keep a channel's ROS 1 type.
const (
	MetaROS1Type       = "tcs.ros1_type"
	MetaROS1MD5        = "tcs.ros1_md5"
	MetaROS1Definition = "tcs.ros1_definition"
)

// ROS1Metadata is the channel metadata that keeps ROS 1 type t.
func ROS1Metadata(t msgs.Type) map[string]string {
	return map[string]string{MetaROS1Type: t.Name, MetaROS1MD5: t.MD5, MetaROS1Definition: t.Definition}
}

// The types tcs itself records.
var (
	Clock             = mustKnown(msgs.Clock)
	JointState        = mustKnown(msgs.JointState)
	Float64           = mustKnown(msgs.Float64)
	Float64MultiArray = mustKnown(mustType(std_msgs.Float64MultiArray{}))
	DiagnosticArray   = mustKnown(msgs.DiagnosticArray)
	Progress          = mustKnown(mustType(ClientProgress{}))
	Status            = mustKnown(mustType(RunStatus{}))
)

// The types of a world's sensors (msgs.SensorType), recorded as Jazzy
// defines them: its sensor_msgs/Range has a variance field that ROS 1's
// lacks, so the recorded definition has it, like the samples
// (EncodeSensor).
var (
	Imu           = mustKnown(msgs.Imu)
	WrenchStamped = mustKnown(msgs.WrenchStamped)
	Range         = mustKnown(msgs.Range)
)

// SensorChannel is the recording channel of a world sensor of kind k on
// topic.
func SensorChannel(topic string, k sensor.Kind) Channel {
	switch k {
	case sensor.IMU:
		return Imu.Channel(topic)
	case sensor.Range:
		c := Range.Channel(topic)
		c.Definition = strings.Replace(c.Definition, "float32 range\n", "float32 range\nfloat32 variance\n", 1)
		return c
	}
	return WrenchStamped.Channel(topic)
}

// EncodeSensor writes a world sensor's message (SensorChannel's type)
// stamped stamp.
func EncodeSensor(w *cdr.Writer, stamp int64, m *sensor.Message) { ros2.WriteSensor(w, stamp, m) }

func mustType(m any) msgs.Type {
	t, err := msgs.TypeOf(m)
	if err != nil {
		panic(err) // fixed at build time; every test catches it
	}
	return t
}

func mustKnown(t msgs.Type) *Known {
	c, err := NewConverter(t.Name, t.Definition)
	if err != nil {
		panic(fmt.Sprintf("record: %s: %v", t.Name, err)) // fixed at build time
	}
	return &Known{ROS1: t, Conv: c}
}

// EncodeClock writes rosgraph_msgs/msg/Clock{ns}.
func EncodeClock(w *cdr.Writer, ns int64) { w.Time(ns) }

// EncodeJointState writes sensor_msgs/msg/JointState: header (stamp,
// empty frame id), names, positions, velocities, no efforts.
func EncodeJointState(w *cdr.Writer, stamp int64, names []string, pos, vel []float64) {
	w.Time(stamp)
	w.String("")
	w.Strings(names)
	w.Float64s(pos)
	w.Float64s(vel)
	w.Len(0)
}

// EncodeFloat64 writes std_msgs/msg/Float64.
func EncodeFloat64(w *cdr.Writer, v float64) { w.Float64(v) }

// EncodeFloat64MultiArray writes std_msgs/msg/Float64MultiArray with an
// empty layout.
func EncodeFloat64MultiArray(w *cdr.Writer, v []float64) {
	w.Len(0)      // layout.dim
	w.Uint32(0)   // layout.data_offset
	w.Float64s(v) // data
}

// Encode writes m.
func (m *ClientProgress) Encode(w *cdr.Writer) {
	w.Uint8(m.Event)
	w.String(m.Client)
	w.String(m.Robot)
	for _, v := range [...]int64{m.WorldNs, m.ProgressNs, m.CPUNs, m.Activations, m.DeadlineMisses, m.DueNs, m.BeginNs, m.DeadlineMissesHost} {
		w.Int64(v)
	}
}

// Decode reads m from a CDR sample.
func (m *ClientProgress) Decode(sample []byte) error {
	r := cdr.NewReader(sample)
	m.Event = r.Uint8()
	m.Client = r.String()
	m.Robot = r.String()
	for _, p := range [...]*int64{&m.WorldNs, &m.ProgressNs, &m.CPUNs, &m.Activations, &m.DeadlineMisses, &m.DueNs, &m.BeginNs} {
		*p = r.Int64()
	}
	// Recordings made before the host's count was recorded end here.
	m.DeadlineMissesHost = 0
	if r.Err() == nil && r.Rest() > 0 {
		m.DeadlineMissesHost = r.Int64()
	}
	if err := r.Err(); err != nil {
		return fmt.Errorf("tcs_msgs/msg/ClientProgress: %w", err)
	}
	return nil
}

func (m *RunStatus) fields() [11]*int64 {
	return [...]*int64{&m.WorldNs, &m.DriftNs, &m.DriftMaxNs, &m.DriftMaxRunNs, &m.CoordinatorNs, &m.ClientsNs,
		&m.DynamicsNs, &m.Dispatches, &m.DeadlineMisses, &m.RecordingDropped, &m.WallNs}
}

// Encode writes m.
func (m *RunStatus) Encode(w *cdr.Writer) {
	for _, p := range m.fields() {
		w.Int64(*p)
	}
}

// Decode reads m from a CDR sample.
func (m *RunStatus) Decode(sample []byte) error {
	r := cdr.NewReader(sample)
	for _, p := range m.fields() {
		*p = r.Int64()
	}
	if err := r.Err(); err != nil {
		return fmt.Errorf("tcs_msgs/msg/RunStatus: %w", err)
	}
	return nil
}
