package ros2

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/tcs-robotics/tcs/msgs/cdr"
)

// ErrROS1Frame reports a ROS 1 DiagnosticArray or DiagnosticStatus frame
// that does not parse.
var ErrROS1Frame = errors.New("ros2: malformed ROS 1 diagnostic_msgs frame")

// KeyValue is diagnostic_msgs/KeyValue.
type KeyValue struct{ Key, Value string }

// DiagnosticStatusMsg is diagnostic_msgs/DiagnosticStatus.
type DiagnosticStatusMsg struct {
	Level                     byte
	Name, Message, HardwareID string
	Values                    []KeyValue
}

// DiagnosticArrayMsg is diagnostic_msgs/DiagnosticArray.
type DiagnosticArrayMsg struct {
	Header Header
	Status []DiagnosticStatusMsg
}

// AppendDiagnosticArray appends a diagnostic_msgs/DiagnosticArray sample.
func AppendDiagnosticArray(dst []byte, m *DiagnosticArrayMsg) []byte {
	var w cdr.Writer
	w.Begin(dst)
	writeHeader(&w, m.Header.Stamp, m.Header.FrameID)
	w.Len(len(m.Status))
	for i := range m.Status {
		writeStatus(&w, &m.Status[i])
	}
	return w.Buf
}

// AppendDiagnosticStatus appends a diagnostic_msgs/DiagnosticStatus sample.
func AppendDiagnosticStatus(dst []byte, m *DiagnosticStatusMsg) []byte {
	var w cdr.Writer
	w.Begin(dst)
	writeStatus(&w, m)
	return w.Buf
}

func writeStatus(w *cdr.Writer, s *DiagnosticStatusMsg) {
	w.Uint8(s.Level)
	w.String(s.Name)
	w.String(s.Message)
	w.String(s.HardwareID)
	w.Len(len(s.Values))
	for _, kv := range s.Values {
		w.String(kv.Key)
		w.String(kv.Value)
	}
}

// DecodeDiagnosticArray reads a diagnostic_msgs/DiagnosticArray sample.
func DecodeDiagnosticArray(sample []byte) (DiagnosticArrayMsg, error) {
	var r cdr.Reader
	r.Reset(sample)
	var m DiagnosticArrayMsg
	m.Header = readHeader(&r)
	n := r.Len(1 + 3*5 + 4)
	for i := 0; i < n && r.Err() == nil; i++ {
		m.Status = append(m.Status, readStatus(&r))
	}
	return m, done(&r, DiagnosticArray)
}

// DecodeDiagnosticStatus reads a diagnostic_msgs/DiagnosticStatus sample.
func DecodeDiagnosticStatus(sample []byte) (DiagnosticStatusMsg, error) {
	var r cdr.Reader
	r.Reset(sample)
	m := readStatus(&r)
	return m, done(&r, DiagnosticStatus)
}

func readStatus(r *cdr.Reader) DiagnosticStatusMsg {
	s := DiagnosticStatusMsg{Level: r.Uint8(), Name: r.String(), Message: r.String(), HardwareID: r.String()}
	k := r.Len(10)
	for j := 0; j < k && r.Err() == nil; j++ {
		s.Values = append(s.Values, KeyValue{r.String(), r.String()})
	}
	return s
}

// ros1Reader walks a ROS 1 frame body (little-endian, unaligned).
type ros1Reader struct {
	b   []byte
	bad bool
}

func (r *ros1Reader) u32() uint32 {
	if len(r.b) < 4 {
		r.bad = true
		r.b = nil
		return 0
	}
	v := binary.LittleEndian.Uint32(r.b)
	r.b = r.b[4:]
	return v
}

func (r *ros1Reader) byte1() byte {
	if len(r.b) < 1 {
		r.bad = true
		return 0
	}
	v := r.b[0]
	r.b = r.b[1:]
	return v
}

func (r *ros1Reader) str() []byte {
	n := r.u32()
	if uint64(n) > uint64(len(r.b)) {
		r.bad = true
		r.b = nil
		return nil
	}
	s := r.b[:n]
	r.b = r.b[n:]
	return s
}

// stringBytes writes a CDR string from bytes, without allocating.
func stringBytes(w *cdr.Writer, s []byte) {
	w.Uint32(uint32(len(s) + 1))
	w.Buf = append(w.Buf, s...)
	w.Buf = append(w.Buf, 0)
}

// ros1Body checks a ROS 1 frame's length prefix and returns a reader of
// its body.
func ros1Body(frame []byte) (ros1Reader, error) {
	if len(frame) < 4 || int(binary.LittleEndian.Uint32(frame)) != len(frame)-4 {
		return ros1Reader{}, ErrROS1Frame
	}
	return ros1Reader{b: frame[4:]}, nil
}

// transcodeStatus copies one DiagnosticStatus from r to w.
func transcodeStatus(r *ros1Reader, w *cdr.Writer) error {
	w.Uint8(r.byte1())
	stringBytes(w, r.str())
	stringBytes(w, r.str())
	stringBytes(w, r.str())
	k := r.u32()
	if uint64(k)*8 > uint64(len(r.b)) {
		return fmt.Errorf("%w: %d values in %d bytes", ErrROS1Frame, k, len(r.b))
	}
	w.Len(int(k))
	for j := uint32(0); j < k && !r.bad; j++ {
		stringBytes(w, r.str())
		stringBytes(w, r.str())
	}
	return nil
}

// AppendDiagnosticsFromROS1 transcodes a ROS 1 diagnostic_msgs/DiagnosticArray
// frame (length prefix included, as msgs.DiagWriter makes it) into a ROS 2
// sample appended to dst; the ROS 1 header's seq is dropped. It does not
// allocate once dst has room.
func AppendDiagnosticsFromROS1(dst []byte, frame []byte) ([]byte, error) {
	r, err := ros1Body(frame)
	if err != nil {
		return dst, err
	}
	var w cdr.Writer
	w.Begin(dst)
	r.u32() // seq
	sec, nsec := r.u32(), r.u32()
	w.Int32(int32(sec))
	w.Uint32(nsec)
	stringBytes(&w, r.str())
	n := r.u32()
	if uint64(n)*17 > uint64(len(r.b)) {
		return dst, fmt.Errorf("%w: %d statuses in %d bytes", ErrROS1Frame, n, len(r.b))
	}
	w.Len(int(n))
	for i := uint32(0); i < n && !r.bad; i++ {
		if err := transcodeStatus(&r, &w); err != nil {
			return dst, err
		}
	}
	if r.bad || len(r.b) != 0 {
		return dst, ErrROS1Frame
	}
	return w.Buf, nil
}

// AppendDiagnosticStatusFromROS1 transcodes a ROS 1
// diagnostic_msgs/DiagnosticStatus frame (length prefix included, as
// msgs.DiagWriter makes it from BeginStatus) into a ROS 2 sample appended
// to dst. It does not allocate once dst has room.
func AppendDiagnosticStatusFromROS1(dst []byte, frame []byte) ([]byte, error) {
	r, err := ros1Body(frame)
	if err != nil {
		return dst, err
	}
	var w cdr.Writer
	w.Begin(dst)
	if err := transcodeStatus(&r, &w); err != nil {
		return dst, err
	}
	if r.bad || len(r.b) != 0 {
		return dst, ErrROS1Frame
	}
	return w.Buf, nil
}
