package msgs

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/bluenviron/goroslib/v2/pkg/msgs/diagnostic_msgs"
	"github.com/bluenviron/goroslib/v2/pkg/msgs/rosgraph_msgs"
	"github.com/bluenviron/goroslib/v2/pkg/msgs/sensor_msgs"
	"github.com/bluenviron/goroslib/v2/pkg/msgs/std_msgs"
	"github.com/bluenviron/goroslib/v2/pkg/protocommon"
)

func encode(t *testing.T, m any) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := protocommon.MessageEncode(&b, m); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// The hand-written encoders produce goroslib's bytes exactly.
func TestEncodersMatchGoroslib(t *testing.T) {
	ns := int64(12_345_678_901)
	if got, want := AppendClock(nil, ns), encode(t, &rosgraph_msgs.Clock{Clock: time.Unix(0, ns)}); !bytes.Equal(got, want) {
		t.Errorf("clock: %x, goroslib %x", got, want)
	}
	if got, want := AppendFloat64([]byte("x"), -2.5)[1:], encode(t, &std_msgs.Float64{Data: -2.5}); !bytes.Equal(got, want) {
		t.Errorf("float64: %x, goroslib %x", got, want)
	}
	js := &sensor_msgs.JointState{
		Header:   std_msgs.Header{Seq: 7, Stamp: time.Unix(3, 500), FrameId: "world"},
		Name:     []string{"hinge"},
		Position: []float64{0.25}, Velocity: []float64{-1}, Effort: []float64{},
	}
	got := AppendJointState(nil, 7, 3e9+500, "world", []string{"hinge"}, []float64{0.25}, []float64{-1}, nil)
	if want := encode(t, js); !bytes.Equal(got, want) {
		t.Errorf("joint state:\n%x\ngoroslib\n%x", got, want)
	}
}

func TestDecode(t *testing.T) {
	f := AppendFloat64(nil, 3.5)
	if v, err := DecodeFloat64(f[4:]); err != nil || v != 3.5 {
		t.Errorf("DecodeFloat64 = %v, %v", v, err)
	}
	if _, err := DecodeFloat64(f[4:7]); !errors.Is(err, ErrShort) {
		t.Errorf("truncated Float64: %v, want ErrShort", err)
	}
	c := AppendClock(nil, 1_500_000_000)
	if v, err := DecodeClock(c[4:]); err != nil || v != 1_500_000_000 {
		t.Errorf("DecodeClock = %v, %v", v, err)
	}
}

func TestTypes(t *testing.T) {
	// MD5 sums as genpy computes them (ROS 1 Noetic).
	for _, c := range []struct {
		t         Type
		name, md5 string
	}{
		{Clock, "rosgraph_msgs/Clock", "a9c97c1d230cfc112e270351a944ee47"},
		{Float64, "std_msgs/Float64", "fdb28210bfa9d7c91146260178d9a584"},
		{JointState, "sensor_msgs/JointState", "3066dcd76a6cfaef579bd0f34173e9fd"},
		{DiagnosticArray, "diagnostic_msgs/DiagnosticArray", "60810da900de1dd6ddd437c3503511da"},
		{DiagnosticStatus, "diagnostic_msgs/DiagnosticStatus", "d0ce08bc6e5ba34c7754f563a9cabaf1"},
	} {
		if c.t.Name != c.name || c.t.MD5 != c.md5 || c.t.Definition == "" {
			t.Errorf("%+v, want %s %s", c.t, c.name, c.md5)
		}
	}
}

func TestDiagWriterMatchesGoroslib(t *testing.T) {
	want := diagnostic_msgs.DiagnosticArray{
		Header: std_msgs.Header{Seq: 3, Stamp: time.Unix(12, 345)},
		Status: []diagnostic_msgs.DiagnosticStatus{
			{Level: int8(DiagOK), Name: "tcs: run", Message: "consistent", HardwareId: "cpu1",
				Values: []diagnostic_msgs.KeyValue{{Key: "drift_s", Value: "0.000123"}, {Key: "misses", Value: "0"}}},
			{Level: int8(DiagWarn), Name: "tcs: pd", Message: "deadline missed", Values: nil},
		},
	}
	var w DiagWriter
	for range 2 { // the second time reuses the buffer
		w.Begin(3, 12_000_000_345, 2)
		w.Status(DiagOK, "tcs: run", "consistent", "cpu1", 2)
		w.KV("drift_s", []byte("0.000123"))
		w.KV("misses", []byte("0"))
		w.Status(DiagWarn, "tcs: pd", "deadline missed", "", 0)
		if got, exp := w.End(), encode(t, &want); !bytes.Equal(got, exp) {
			t.Fatalf("frame:\n got %x\nwant %x", got, exp)
		}
	}
	allocs := testing.AllocsPerRun(100, func() {
		w.Begin(3, 12_000_000_345, 1)
		w.Status(DiagOK, "tcs: run", "consistent", "cpu1", 1)
		w.KV("drift_s", []byte("0.000123"))
		w.End()
	})
	if allocs != 0 {
		t.Errorf("DiagWriter allocates %.1f times per frame", allocs)
	}
}

func TestDiagWriterStatusMatchesGoroslib(t *testing.T) {
	want := diagnostic_msgs.DiagnosticStatus{Level: int8(DiagWarn), Name: "tcs", Message: "playing", HardwareId: "",
		Values: []diagnostic_msgs.KeyValue{{Key: "state", Value: "playing"}, {Key: "virtual_s", Value: "1.5"}}}
	var w DiagWriter
	w.Begin(1, 2, 1) // a previous array frame in the buffer
	w.Status(DiagOK, "x", "", "", 0)
	w.End()
	w.BeginStatus()
	w.Status(DiagWarn, "tcs", "playing", "", 2)
	w.KV("state", []byte("playing"))
	w.KV("virtual_s", []byte("1.5"))
	if got, exp := w.End(), encode(t, &want); !bytes.Equal(got, exp) {
		t.Fatalf("frame:\n got %x\nwant %x", got, exp)
	}
}

// KVInt, KVFloat, KVSeconds and KVString write what KV writes with the
// value formatted (decimal; 9 significant digits).
func TestDiagWriterTypedKV(t *testing.T) {
	var a, b DiagWriter
	a.BeginStatus()
	a.Status(0, "tcs", "playing", "", 4)
	a.KVString("state", "playing")
	a.KVInt("n", -42)
	a.KVFloat("f", 0.123456789123)
	a.KVSeconds("s", 1_500_000_000)
	b.BeginStatus()
	b.Status(0, "tcs", "playing", "", 4)
	b.KV("state", []byte("playing"))
	b.KV("n", []byte("-42"))
	b.KV("f", []byte("0.123456789"))
	b.KV("s", []byte("1.5"))
	if got, want := a.End(), b.End(); !bytes.Equal(got, want) {
		t.Fatalf("typed:\n%x\nwant:\n%x", got, want)
	}
}
