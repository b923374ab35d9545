package ros2

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/tcs-robotics/tcs/msgs"
)

// FuzzDecode feeds arbitrary samples to every decoder: errors are fine,
// panics are not. What a decoder accepts its encoder writes in canonical
// form (little-endian, the layout and padding the encoder chooses), and
// that form is a fixed point: it decodes, and encodes to the same bytes.
func FuzzDecode(f *testing.F) {
	for _, b := range goldenCases() {
		f.Add(b)
	}
	for _, b := range simulationCases() {
		f.Add(b)
	}
	f.Add([]byte{0, 1, 0, 0, 0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0}) // big-endian
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, c := range []struct {
			name string
			conv func([]byte) ([]byte, error) // decode, then encode
		}{
			{"Clock", func(b []byte) ([]byte, error) { v, err := DecodeClock(b); return AppendClock(nil, v), err }},
			{"Float64", func(b []byte) ([]byte, error) { v, err := DecodeFloat64(b); return AppendFloat64(nil, v), err }},
			{"Float64MultiArray", func(b []byte) ([]byte, error) {
				v, err := DecodeFloat64MultiArray(b, nil)
				return AppendFloat64MultiArray(nil, nil, 0, v), err
			}},
			{"JointState", func(b []byte) ([]byte, error) {
				m, err := DecodeJointState(b)
				return AppendJointState(nil, m.Header.Stamp, m.Header.FrameID, m.Name, m.Position, m.Velocity, m.Effort), err
			}},
			{"Twist", func(b []byte) ([]byte, error) { m, err := DecodeTwist(b); return AppendTwist(nil, m), err }},
			{"Odometry", func(b []byte) ([]byte, error) { m, err := DecodeOdometry(b); return AppendOdometry(nil, &m), err }},
			{"LaserScan", func(b []byte) ([]byte, error) { m, err := DecodeLaserScan(b); return AppendLaserScan(nil, &m), err }},
			{"DiagnosticArray", func(b []byte) ([]byte, error) {
				m, err := DecodeDiagnosticArray(b)
				return AppendDiagnosticArray(nil, &m), err
			}},
			{"DiagnosticStatus", func(b []byte) ([]byte, error) {
				m, err := DecodeDiagnosticStatus(b)
				return AppendDiagnosticStatus(nil, &m), err
			}},
			{"ParticipantInfo/Humble", func(b []byte) ([]byte, error) {
				p, err := DecodeParticipantInfo(b, Humble)
				return AppendParticipantInfo(nil, Humble, &p), err
			}},
			{"ParticipantInfo/Iron", func(b []byte) ([]byte, error) {
				p, err := DecodeParticipantInfo(b, Iron)
				return AppendParticipantInfo(nil, Iron, &p), err
			}},
			{"EmptyRequest", func(b []byte) ([]byte, error) {
				h, err := DecodeEmptyRequest(b)
				return AppendEmptyRequest(nil, h), err
			}},
			{"Uint8Request", func(b []byte) ([]byte, error) {
				h, v, err := DecodeUint8Request(b)
				return AppendUint8Request(nil, h, v), err
			}},
			{"Uint64Request", func(b []byte) ([]byte, error) {
				h, v, err := DecodeUint64Request(b)
				return AppendUint64Request(nil, h, v), err
			}},
			{"FeaturesResponse", func(b []byte) ([]byte, error) {
				h, f, err := DecodeFeaturesResponse(b)
				return AppendFeaturesResponse(nil, h, &f), err
			}},
			{"StateResponse", func(b []byte) ([]byte, error) {
				h, s, res, err := DecodeStateResponse(b)
				return AppendStateResponse(nil, h, s, res), err
			}},
			{"ResultResponse", func(b []byte) ([]byte, error) {
				h, res, err := DecodeResultResponse(b)
				return AppendResultResponse(nil, h, res), err
			}},
			{"SendGoalRequest", func(b []byte) ([]byte, error) {
				h, id, steps, err := DecodeSendGoalRequest(b)
				return AppendSendGoalRequest(nil, h, id, steps), err
			}},
			{"SendGoalResponse", func(b []byte) ([]byte, error) {
				h, acc, stamp, err := DecodeSendGoalResponse(b)
				return AppendSendGoalResponse(nil, h, acc, stamp), err
			}},
			{"GoalIDRequest", func(b []byte) ([]byte, error) {
				h, id, err := DecodeGoalIDRequest(b)
				return AppendGoalIDRequest(nil, h, id), err
			}},
			{"GetResultResponse", func(b []byte) ([]byte, error) {
				h, st, res, err := DecodeGetResultResponse(b)
				return AppendGetResultResponse(nil, h, st, res), err
			}},
			{"CancelGoalRequest", func(b []byte) ([]byte, error) {
				h, g, err := DecodeCancelGoalRequest(b)
				return AppendCancelGoalRequest(nil, h, g), err
			}},
			{"CancelGoalResponse", func(b []byte) ([]byte, error) {
				h, code, gs, err := DecodeCancelGoalResponse(b)
				return AppendCancelGoalResponse(nil, h, code, gs), err
			}},
			{"StepsFeedback", func(b []byte) ([]byte, error) {
				id, c, r, err := DecodeStepsFeedback(b)
				return AppendStepsFeedback(nil, id, c, r), err
			}},
			{"GoalStatusArray", func(b []byte) ([]byte, error) {
				st, err := DecodeGoalStatusArray(b)
				return AppendGoalStatusArray(nil, st), err
			}},
		} {
			e1, err := c.conv(b)
			if err != nil {
				if err.Error() == "" {
					t.Fatalf("%s: empty error", c.name)
				}
				continue
			}
			e2, err := c.conv(e1)
			if err != nil {
				t.Fatalf("%s: its own encoding % x does not decode: %v", c.name, e1, err)
			}
			if !bytes.Equal(e1, e2) {
				t.Fatalf("%s: encoded % x, re-encoded % x", c.name, e1, e2)
			}
		}
	})
}

// FuzzDiagnosticsFromROS1 feeds arbitrary ROS 1 frames to the transcoders:
// no panic, and what they write is a DiagnosticArray (DiagnosticStatus)
// sample that decodes.
func FuzzDiagnosticsFromROS1(f *testing.F) {
	var w msgs.DiagWriter
	w.Begin(3, 2e9, 1)
	w.Status(msgs.DiagWarn, "tcs: run", "x", "h", 1)
	w.KV("k", []byte("v"))
	f.Add(append([]byte(nil), w.End()...))
	w.BeginStatus()
	w.Status(msgs.DiagOK, "tcs", "playing", "", 1)
	w.KV("state", []byte("playing"))
	f.Add(append([]byte(nil), w.End()...))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		if out, err := AppendDiagnosticsFromROS1(nil, b); err == nil {
			if _, err := DecodeDiagnosticArray(out); err != nil {
				t.Fatalf("transcoded % x to % x, which does not decode as an array: %v", b, out, err)
			}
		}
		if out, err := AppendDiagnosticStatusFromROS1(nil, b); err == nil {
			if _, err := DecodeDiagnosticStatus(out); err != nil {
				t.Fatalf("transcoded % x to % x, which does not decode as a status: %v", b, out, err)
			}
		}
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

// TestDiagnosticStatusFromROS1 transcodes a lone status as bridge/livestatus
// makes it and reads it back; the transcoder does not allocate once its
// buffer has grown, and refuses an array frame.
func TestDiagnosticStatusFromROS1(t *testing.T) {
	var w msgs.DiagWriter
	w.BeginStatus()
	w.Status(msgs.DiagWarn, "tcs", "playing, deadline misses", "", 2)
	w.KV("state", []byte("playing"))
	w.KV("real_time_factor", []byte("0.5"))
	frame := append([]byte(nil), w.End()...)
	out, err := AppendDiagnosticStatusFromROS1(nil, frame)
	if err != nil {
		t.Fatal(err)
	}
	want := DiagnosticStatusMsg{Level: msgs.DiagWarn, Name: "tcs", Message: "playing, deadline misses",
		Values: []KeyValue{{"state", "playing"}, {"real_time_factor", "0.5"}}}
	if d, err := DecodeDiagnosticStatus(out); err != nil || !reflect.DeepEqual(d, want) {
		t.Fatalf("%+v %v", d, err)
	}
	if !bytes.Equal(out, AppendDiagnosticStatus(nil, &want)) {
		t.Errorf("transcoded % x, encoded % x", out, AppendDiagnosticStatus(nil, &want))
	}
	buf := make([]byte, 0, 1024)
	if n := testing.AllocsPerRun(100, func() { buf, _ = AppendDiagnosticStatusFromROS1(buf[:0], frame) }); n != 0 {
		t.Errorf("%v allocations per transcoding", n)
	}
	for _, bad := range [][]byte{frame[:len(frame)-1], append(append([]byte(nil), frame...), 0)} {
		if _, err := AppendDiagnosticStatusFromROS1(nil, bad); err == nil {
			t.Errorf("malformed frame % x accepted", bad)
		}
	}
	w.Begin(1, 2e9, 0)
	if _, err := AppendDiagnosticStatusFromROS1(nil, w.End()); err == nil {
		t.Error("an array frame was accepted as a status")
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
