package ros2

import (
	"testing"

	"github.com/tcs-robotics/tcs/msgs"
)

// FuzzDecode feeds arbitrary samples to every decoder: errors are fine,
// panics are not.
func FuzzDecode(f *testing.F) {
	for _, b := range goldenCases() {
		f.Add(b)
	}
	f.Add([]byte{0, 1, 0, 0, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = DecodeClock(b)
		_, _ = DecodeFloat64(b)
		_, _ = DecodeFloat64MultiArray(b, nil)
		_, _ = DecodeJointState(b)
		_, _ = DecodeTwist(b)
		_, _ = DecodeOdometry(b)
		_, _ = DecodeLaserScan(b)
		_, _ = DecodeDiagnosticArray(b)
		_, _ = DecodeParticipantInfo(b, Humble)
		_, _ = DecodeParticipantInfo(b, Iron)
	})
}

// FuzzDiagnosticsFromROS1 feeds arbitrary ROS 1 frames to the transcoder.
func FuzzDiagnosticsFromROS1(f *testing.F) {
	var w msgs.DiagWriter
	w.Begin(3, 2e9, 1)
	w.Status(msgs.DiagWarn, "tcs: run", "x", "h", 1)
	w.KV("k", []byte("v"))
	f.Add(append([]byte(nil), w.End()...))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = AppendDiagnosticsFromROS1(nil, b)
	})
}

// TestDiagnosticsFromROS1 transcodes the driver's frame and reads it back;
// the transcoder does not allocate once its buffer has grown.
func TestDiagnosticsFromROS1(t *testing.T) {
	var w msgs.DiagWriter
	w.Begin(3, 2_500_000_000, 2)
	w.Status(msgs.DiagOK, "tcs: run", "consistent", "host", 1)
	w.KV("virtual_s", []byte("1.5"))
	w.Status(msgs.DiagWarn, "tcs: arm/pd", "running", "host", 0)
	frame := append([]byte(nil), w.End()...)
	out, err := AppendDiagnosticsFromROS1(nil, frame)
	if err != nil {
		t.Fatal(err)
	}
	d, err := DecodeDiagnosticArray(out)
	if err != nil || d.Header.Stamp != 2_500_000_000 || len(d.Status) != 2 || d.Status[0].Values[0] != (KeyValue{"virtual_s", "1.5"}) || d.Status[1].Level != msgs.DiagWarn {
		t.Fatalf("%+v %v", d, err)
	}
	buf := make([]byte, 0, 1024)
	if n := testing.AllocsPerRun(100, func() { buf, _ = AppendDiagnosticsFromROS1(buf[:0], frame) }); n != 0 {
		t.Errorf("%v allocations per transcoding", n)
	}
	if _, err := AppendDiagnosticsFromROS1(nil, frame[:len(frame)-1]); err == nil {
		t.Error("a truncated frame was accepted")
	}
}

// TestNoAllocs: the codecs on the dispatch path do not allocate.
func TestNoAllocs(t *testing.T) {
	buf := make([]byte, 0, 512)
	names := []string{"pendulum_joint"}
	pos, vel := []float64{1}, []float64{2}
	vals := make([]float64, 0, 8)
	cmd := AppendFloat64(nil, 3)
	arr := AppendFloat64MultiArray(nil, nil, 0, []float64{1, 2})
	n := testing.AllocsPerRun(100, func() {
		buf = AppendJointState(buf[:0], 5, "", names, pos, vel, nil)
		buf = AppendClock(buf[:0], 5)
		_, _ = DecodeFloat64(cmd)
		vals, _ = DecodeFloat64MultiArray(arr, vals[:0])
	})
	if n != 0 {
		t.Errorf("%v allocations", n)
	}
}
