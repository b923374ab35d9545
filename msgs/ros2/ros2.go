package ros2

import (
	"errors"
	"fmt"
	"strings"

	"github.com/tcs-robotics/tcs/msgs/cdr"
)

// Type names (ROS 2 form, pkg/msg/Name) of the messages tcs reads or writes.
const (
	Clock                   = "rosgraph_msgs/msg/Clock"
	Float64                 = "std_msgs/msg/Float64"
	Float64MultiArray       = "std_msgs/msg/Float64MultiArray"
	JointState              = "sensor_msgs/msg/JointState"
	LaserScan               = "sensor_msgs/msg/LaserScan"
	Twist                   = "geometry_msgs/msg/Twist"
	Odometry                = "nav_msgs/msg/Odometry"
	DiagnosticArray         = "diagnostic_msgs/msg/DiagnosticArray"
	DiagnosticStatus        = "diagnostic_msgs/msg/DiagnosticStatus"
	ParticipantEntitiesInfo = "rmw_dds_common/msg/ParticipantEntitiesInfo"
)

// DiscoveryTopic is the DDS topic (no rt/ prefix) on which every ROS 2
// participant publishes its ParticipantEntitiesInfo.
const DiscoveryTopic = "ros_discovery_info"

// ErrName reports a topic or type name that has no DDS form.
var ErrName = errors.New("ros2: not a valid name")

// DDSType returns the DDS type name of ROS 2 type name: pkg/msg/Name (or
// pkg/Name, taken as a message) becomes pkg::msg::dds_::Name_.
func DDSType(name string) (string, error) {
	parts := strings.Split(name, "/")
	switch {
	case len(parts) == 2:
		parts = []string{parts[0], "msg", parts[1]}
	case len(parts) != 3:
		return "", fmt.Errorf("%w: type %q: write it as pkg/msg/Name", ErrName, name)
	}
	for _, p := range parts {
		if p == "" || strings.ContainsAny(p, ": \t") {
			return "", fmt.Errorf("%w: type %q: write it as pkg/msg/Name", ErrName, name)
		}
	}
	return parts[0] + "::" + parts[1] + "::dds_::" + parts[2] + "_", nil
}

// ROSType is the inverse of DDSType ("" when dds is not of that form).
func ROSType(dds string) string {
	parts := strings.Split(dds, "::")
	if len(parts) != 4 || parts[2] != "dds_" || !strings.HasSuffix(parts[3], "_") || len(parts[3]) < 2 {
		return ""
	}
	return parts[0] + "/" + parts[1] + "/" + strings.TrimSuffix(parts[3], "_")
}

// TopicName returns the DDS topic of an absolute ROS 2 topic: /a/b is
// rt/a/b.
func TopicName(topic string) (string, error) {
	if !strings.HasPrefix(topic, "/") || len(topic) < 2 || strings.HasSuffix(topic, "/") ||
		strings.Contains(topic, "//") || strings.ContainsAny(topic, " \t:=~") {
		return "", fmt.Errorf("%w: topic %q: write an absolute name like /arm/command", ErrName, topic)
	}
	return "rt" + topic, nil
}

// sample ends a decode: the reader's error, wrapped with the type.
func done(r *cdr.Reader, typ string) error {
	if err := r.Err(); err != nil {
		return fmt.Errorf("%s: %w", typ, err)
	}
	return nil
}

// AppendClock appends a rosgraph_msgs/Clock sample for ns nanoseconds.
func AppendClock(dst []byte, ns int64) []byte {
	var w cdr.Writer
	w.Begin(dst)
	w.Time(ns)
	return w.Buf
}

// DecodeClock reads a rosgraph_msgs/Clock sample as nanoseconds.
func DecodeClock(sample []byte) (int64, error) {
	var r cdr.Reader
	r.Reset(sample)
	ns := r.Time()
	return ns, done(&r, Clock)
}

// AppendFloat64 appends a std_msgs/Float64 sample.
func AppendFloat64(dst []byte, v float64) []byte {
	var w cdr.Writer
	w.Begin(dst)
	w.Float64(v)
	return w.Buf
}

// DecodeFloat64 reads a std_msgs/Float64 sample.
func DecodeFloat64(sample []byte) (float64, error) {
	var r cdr.Reader
	r.Reset(sample)
	v := r.Float64()
	return v, done(&r, Float64)
}

// MultiArrayDimension is std_msgs/MultiArrayDimension.
type MultiArrayDimension struct {
	Label  string
	Size   uint32
	Stride uint32
}

// AppendFloat64MultiArray appends a std_msgs/Float64MultiArray sample with
// the given layout (dims, data offset) and data.
func AppendFloat64MultiArray(dst []byte, dims []MultiArrayDimension, offset uint32, data []float64) []byte {
	var w cdr.Writer
	w.Begin(dst)
	w.Len(len(dims))
	for _, d := range dims {
		w.String(d.Label)
		w.Uint32(d.Size)
		w.Uint32(d.Stride)
	}
	w.Uint32(offset)
	w.Float64s(data)
	return w.Buf
}

// DecodeFloat64MultiArray reads a std_msgs/Float64MultiArray sample,
// skipping its layout, and appends its data to dst. It does not allocate
// when dst has room.
func DecodeFloat64MultiArray(sample []byte, dst []float64) ([]float64, error) {
	var r cdr.Reader
	r.Reset(sample)
	n := r.Len(12)
	for i := 0; i < n && r.Err() == nil; i++ {
		r.StringBytes()
		r.Uint32()
		r.Uint32()
	}
	r.Uint32()
	dst = r.Float64s(dst)
	return dst, done(&r, Float64MultiArray)
}

// Header is std_msgs/Header (ROS 2: no seq).
type Header struct {
	Stamp   int64 // ns
	FrameID string
}

func writeHeader(w *cdr.Writer, stamp int64, frame string) {
	w.Time(stamp)
	w.String(frame)
}

func readHeader(r *cdr.Reader) Header {
	return Header{Stamp: r.Time(), FrameID: r.String()}
}

// AppendJointState appends a sensor_msgs/JointState sample.
func AppendJointState(dst []byte, stamp int64, frame string, names []string, pos, vel, eff []float64) []byte {
	var w cdr.Writer
	w.Begin(dst)
	writeHeader(&w, stamp, frame)
	w.Strings(names)
	w.Float64s(pos)
	w.Float64s(vel)
	w.Float64s(eff)
	return w.Buf
}

// JointStateMsg is a decoded sensor_msgs/JointState.
type JointStateMsg struct {
	Header                     Header
	Name                       []string
	Position, Velocity, Effort []float64
}

// DecodeJointState reads a sensor_msgs/JointState sample.
func DecodeJointState(sample []byte) (JointStateMsg, error) {
	var r cdr.Reader
	r.Reset(sample)
	var m JointStateMsg
	m.Header = readHeader(&r)
	n := r.Len(5)
	for i := 0; i < n && r.Err() == nil; i++ {
		m.Name = append(m.Name, r.String())
	}
	m.Position = r.Float64s(nil)
	m.Velocity = r.Float64s(nil)
	m.Effort = r.Float64s(nil)
	return m, done(&r, JointState)
}

// Vector3 is geometry_msgs/Vector3 (and Point).
type Vector3 struct{ X, Y, Z float64 }

// TwistMsg is geometry_msgs/Twist.
type TwistMsg struct{ Linear, Angular Vector3 }

func writeVec(w *cdr.Writer, v Vector3) {
	w.Float64(v.X)
	w.Float64(v.Y)
	w.Float64(v.Z)
}

func readVec(r *cdr.Reader) Vector3 { return Vector3{r.Float64(), r.Float64(), r.Float64()} }

func writeTwist(w *cdr.Writer, t TwistMsg) {
	writeVec(w, t.Linear)
	writeVec(w, t.Angular)
}

func readTwist(r *cdr.Reader) TwistMsg { return TwistMsg{readVec(r), readVec(r)} }

// AppendTwist appends a geometry_msgs/Twist sample.
func AppendTwist(dst []byte, t TwistMsg) []byte {
	var w cdr.Writer
	w.Begin(dst)
	writeTwist(&w, t)
	return w.Buf
}

// DecodeTwist reads a geometry_msgs/Twist sample.
func DecodeTwist(sample []byte) (TwistMsg, error) {
	var r cdr.Reader
	r.Reset(sample)
	t := readTwist(&r)
	return t, done(&r, Twist)
}

// Quaternion is geometry_msgs/Quaternion.
type Quaternion struct{ X, Y, Z, W float64 }

// OdometryMsg is nav_msgs/Odometry.
type OdometryMsg struct {
	Header          Header
	ChildFrameID    string
	Position        Vector3
	Orientation     Quaternion
	PoseCovariance  [36]float64
	Twist           TwistMsg
	TwistCovariance [36]float64
}

// AppendOdometry appends a nav_msgs/Odometry sample.
func AppendOdometry(dst []byte, o *OdometryMsg) []byte {
	var w cdr.Writer
	w.Begin(dst)
	writeHeader(&w, o.Header.Stamp, o.Header.FrameID)
	w.String(o.ChildFrameID)
	writeVec(&w, o.Position)
	w.Float64(o.Orientation.X)
	w.Float64(o.Orientation.Y)
	w.Float64(o.Orientation.Z)
	w.Float64(o.Orientation.W)
	for _, c := range o.PoseCovariance {
		w.Float64(c)
	}
	writeTwist(&w, o.Twist)
	for _, c := range o.TwistCovariance {
		w.Float64(c)
	}
	return w.Buf
}

// DecodeOdometry reads a nav_msgs/Odometry sample.
func DecodeOdometry(sample []byte) (OdometryMsg, error) {
	var r cdr.Reader
	r.Reset(sample)
	var o OdometryMsg
	o.Header = readHeader(&r)
	o.ChildFrameID = r.String()
	o.Position = readVec(&r)
	o.Orientation = Quaternion{r.Float64(), r.Float64(), r.Float64(), r.Float64()}
	for i := range o.PoseCovariance {
		o.PoseCovariance[i] = r.Float64()
	}
	o.Twist = readTwist(&r)
	for i := range o.TwistCovariance {
		o.TwistCovariance[i] = r.Float64()
	}
	return o, done(&r, Odometry)
}

// LaserScanMsg is sensor_msgs/LaserScan.
type LaserScanMsg struct {
	Header                                      Header
	AngleMin, AngleMax, AngleIncrement          float32
	TimeIncrement, ScanTime, RangeMin, RangeMax float32
	Ranges, Intensities                         []float32
}

// AppendLaserScan appends a sensor_msgs/LaserScan sample.
func AppendLaserScan(dst []byte, s *LaserScanMsg) []byte {
	var w cdr.Writer
	w.Begin(dst)
	writeHeader(&w, s.Header.Stamp, s.Header.FrameID)
	for _, v := range [...]float32{s.AngleMin, s.AngleMax, s.AngleIncrement, s.TimeIncrement, s.ScanTime, s.RangeMin, s.RangeMax} {
		w.Float32(v)
	}
	for _, seq := range [...][]float32{s.Ranges, s.Intensities} {
		w.Len(len(seq))
		for _, v := range seq {
			w.Float32(v)
		}
	}
	return w.Buf
}

// DecodeLaserScan reads a sensor_msgs/LaserScan sample.
func DecodeLaserScan(sample []byte) (LaserScanMsg, error) {
	var r cdr.Reader
	r.Reset(sample)
	var s LaserScanMsg
	s.Header = readHeader(&r)
	for _, p := range [...]*float32{&s.AngleMin, &s.AngleMax, &s.AngleIncrement, &s.TimeIncrement, &s.ScanTime, &s.RangeMin, &s.RangeMax} {
		*p = r.Float32()
	}
	for _, p := range [...]*[]float32{&s.Ranges, &s.Intensities} {
		n := r.Len(4)
		for i := 0; i < n && r.Err() == nil; i++ {
			*p = append(*p, r.Float32())
		}
	}
	return s, done(&r, LaserScan)
}
