package msgs

import (
	"bytes"
	"errors"
	"math"
	"testing"

	"github.com/bluenviron/goroslib/v2/pkg/msgs/std_msgs"
	"github.com/bluenviron/goroslib/v2/pkg/protocommon"
)

func TestFloat64MultiArrayMatchesGoroslib(t *testing.T) {
	m := &std_msgs.Float64MultiArray{Data: []float64{1.5, -2, 3}}
	m.Layout.Dim = []std_msgs.MultiArrayDimension{{Label: "force", Size: 3, Stride: 3}}
	var buf bytes.Buffer
	if err := protocommon.MessageEncode(&buf, m); err != nil {
		t.Fatal(err)
	}
	frame := buf.Bytes()
	dst := make([]float64, 6)
	n, err := DecodeFloat64MultiArray(frame[4:], dst)
	if err != nil || n != 3 || dst[0] != 1.5 || dst[1] != -2 || dst[2] != 3 {
		t.Fatalf("decode goroslib's frame: %v %v %v", n, dst, err)
	}
	ours := AppendFloat64MultiArray(nil, []float64{1.5, -2, 3})
	var back std_msgs.Float64MultiArray
	if err := protocommon.MessageDecode(bytes.NewReader(ours), &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Data) != 3 || back.Data[2] != 3 {
		t.Fatalf("goroslib decoded our frame as %+v", back)
	}
	if Float64MultiArray.Name != "std_msgs/Float64MultiArray" {
		t.Fatalf("type name %q", Float64MultiArray.Name)
	}
}

func TestFloat64MultiArrayRejects(t *testing.T) {
	dst := make([]float64, 2)
	good := AppendFloat64MultiArray(nil, []float64{1, 2})[4:]
	if n, err := DecodeFloat64MultiArray(good, dst); n != 2 || err != nil {
		t.Fatalf("good: %v %v", n, err)
	}
	if _, err := DecodeFloat64MultiArray(AppendFloat64MultiArray(nil, []float64{1, 2, 3})[4:], dst); !errors.Is(err, ErrTooMany) {
		t.Errorf("oversized: %v", err)
	}
	for i := range good {
		if _, err := DecodeFloat64MultiArray(good[:i], dst); err == nil {
			t.Errorf("cut at %d bytes: no error", i)
		}
	}
	if _, err := DecodeFloat64MultiArray(append(bytes.Clone(good), 0), dst); err == nil {
		t.Error("a trailing byte: no error")
	}
	if _, err := DecodeFloat64MultiArray(AppendFloat64(nil, 1)[4:], dst); err == nil {
		t.Error("a Float64 body: no error")
	}
}

func TestFloat64MultiArrayDecodeDoesNotAllocate(t *testing.T) {
	body := AppendFloat64MultiArray(nil, []float64{1, 2, 3, 4, 5, 6})[4:]
	dst := make([]float64, 6)
	if n := testing.AllocsPerRun(100, func() { _, _ = DecodeFloat64MultiArray(body, dst) }); n != 0 {
		t.Fatalf("%v allocations", n)
	}
}

// FuzzDecodeFloat64MultiArray: any body decodes or fails without a panic;
// what decodes encodes (empty layout) and decodes again to the same values,
// bit for bit, and a body that had an empty layout is re-encoded exactly.
func FuzzDecodeFloat64MultiArray(f *testing.F) {
	f.Add(AppendFloat64MultiArray(nil, []float64{1, 2, 3})[4:])
	f.Add(AppendFloat64MultiArray(nil, nil)[4:])
	f.Add([]byte{1, 0, 0, 0, 255, 255, 255, 255})
	// one dimension "x" (size 2, stride 2), data_offset 1, 2 values
	f.Add([]byte{1, 0, 0, 0, 1, 0, 0, 0, 'x', 2, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0,
		0, 0, 0, 0, 0, 0, 0xf0, 0x3f, 0, 0, 0, 0, 0, 0, 0, 0x40})
	f.Fuzz(func(t *testing.T, body []byte) {
		dst := make([]float64, 8)
		n, err := DecodeFloat64MultiArray(body, dst)
		if err != nil {
			return
		}
		if n < 0 || n > len(dst) {
			t.Fatalf("n = %d", n)
		}
		enc := AppendFloat64MultiArray(nil, dst[:n])
		back := make([]float64, 8)
		m, err := DecodeFloat64MultiArray(enc[4:], back)
		if err != nil || m != n {
			t.Fatalf("re-encoded %v: %d values, %v", dst[:n], m, err)
		}
		for i := range n {
			if math.Float64bits(back[i]) != math.Float64bits(dst[i]) {
				t.Fatalf("value %d: %v, want %v", i, back[i], dst[i])
			}
		}
		if bytes.HasPrefix(body, make([]byte, 8)) && !bytes.Equal(enc[4:], body) {
			t.Fatalf("empty layout re-encoded as % x, was % x", enc[4:], body)
		}
	})
}
