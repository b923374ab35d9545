package msgs

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/bluenviron/goroslib/v2/pkg/msgproc"
	"github.com/bluenviron/goroslib/v2/pkg/msgs/rosgraph_msgs"
	"github.com/bluenviron/goroslib/v2/pkg/msgs/sensor_msgs"
	"github.com/bluenviron/goroslib/v2/pkg/msgs/std_msgs"
)

// Type is a ROS 1 message type as the wire needs it: its name
// ("pkg/Name"), MD5 sum and full definition.
type Type struct {
	Name       string
	MD5        string
	Definition string
}

// TypeOf returns the Type of a goroslib message value (a struct with a
// msg.Package tag), given by value.
func TypeOf(m any) (Type, error) {
	var t Type
	var err error
	if t.Name, err = msgproc.Type(m); err != nil {
		return t, fmt.Errorf("message type of %T: %w", m, err)
	}
	if t.MD5, err = msgproc.MD5(m); err != nil {
		return t, fmt.Errorf("md5 of %s: %w", t.Name, err)
	}
	if t.Definition, err = msgproc.Definition(m); err != nil {
		return t, fmt.Errorf("definition of %s: %w", t.Name, err)
	}
	return t, nil
}

// The types tcs publishes or reads itself.
var (
	Clock      = mustType(rosgraph_msgs.Clock{})
	Float64    = mustType(std_msgs.Float64{})
	JointState = mustType(sensor_msgs.JointState{})
)

func mustType(m any) Type {
	t, err := TypeOf(m)
	if err != nil {
		// The goroslib types are fixed at build time; a failure here is a
		// programming error caught by every test.
		panic(err)
	}
	return t
}

// Epoch is the ROS time of virtual time 0: rospy and roscpp read ROS time
// 0 as "no clock yet" (a Rate made then runs its first period twice), so
// every time tcs publishes (clocks, header stamps) reads Epoch + t.
const Epoch = int64(1e9)

// ErrShort reports a message body shorter than its type needs.
var ErrShort = errors.New("message body too short")

// Frames: a TCPROS message is a little-endian uint32 length then the body.

// BeginFrame appends a length placeholder to dst; EndFrame fills it in.
func BeginFrame(dst []byte) ([]byte, int) {
	return append(dst, 0, 0, 0, 0), len(dst)
}

// EndFrame writes the body length of the frame begun at off.
func EndFrame(dst []byte, off int) []byte {
	binary.LittleEndian.PutUint32(dst[off:], uint32(len(dst)-off-4))
	return dst
}

// maxTime is the latest ROS 1 time (secs and nsecs are uint32): 2^32−1 s
// and 999,999,999 ns.
const maxTime = int64(math.MaxUint32)*1e9 + 999_999_999

// appendTime appends ns as a ROS 1 time, clamped to [0, maxTime] (beyond,
// the seconds would wrap around to the distant past).
func appendTime(dst []byte, ns int64) []byte {
	ns = max(0, min(ns, maxTime))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(ns/1e9))
	return binary.LittleEndian.AppendUint32(dst, uint32(ns%1e9))
}

func appendString(dst []byte, s string) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(s)))
	return append(dst, s...)
}

func appendFloats(dst []byte, v []float64) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(v)))
	for _, x := range v {
		dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(x))
	}
	return dst
}

// AppendClock appends a rosgraph_msgs/Clock frame for virtual time ns.
func AppendClock(dst []byte, ns int64) []byte {
	dst, off := BeginFrame(dst)
	dst = appendTime(dst, ns)
	return EndFrame(dst, off)
}

// AppendFloat64 appends a std_msgs/Float64 frame.
func AppendFloat64(dst []byte, v float64) []byte {
	dst, off := BeginFrame(dst)
	dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(v))
	return EndFrame(dst, off)
}

// AppendJointState appends a sensor_msgs/JointState frame: header (seq,
// stamp ns, frame id), joint names, positions, velocities and efforts.
func AppendJointState(dst []byte, seq uint32, stamp int64, frame string, names []string, pos, vel, eff []float64) []byte {
	dst, off := BeginFrame(dst)
	dst = binary.LittleEndian.AppendUint32(dst, seq)
	dst = appendTime(dst, stamp)
	dst = appendString(dst, frame)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(names)))
	for _, n := range names {
		dst = appendString(dst, n)
	}
	dst = appendFloats(dst, pos)
	dst = appendFloats(dst, vel)
	return EndFrame(appendFloats(dst, eff), off)
}

// DecodeFloat64 reads a std_msgs/Float64 body (without the length prefix).
// A body longer than 8 bytes is refused too: it is another type.
func DecodeFloat64(body []byte) (float64, error) {
	if len(body) != 8 {
		return 0, fmt.Errorf("std_msgs/Float64: body of %d bytes, want 8: %w", len(body), ErrShort)
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(body)), nil
}

// DecodeClock reads a rosgraph_msgs/Clock body as ns.
func DecodeClock(body []byte) (int64, error) {
	if len(body) != 8 {
		return 0, fmt.Errorf("rosgraph_msgs/Clock: body of %d bytes, want 8: %w", len(body), ErrShort)
	}
	return int64(binary.LittleEndian.Uint32(body))*1e9 + int64(binary.LittleEndian.Uint32(body[4:])), nil
}
