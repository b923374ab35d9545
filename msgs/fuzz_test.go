package msgs

import (
	"bytes"
	"encoding/binary"
	"testing"
)

// FuzzDecodeScalars: a std_msgs/Float64 or rosgraph_msgs/Clock body from a
// publisher decodes or fails without a panic; an 8-byte body always
// decodes; what decodes encodes back to the same bytes (a Clock whose
// nsecs field is 1e9 or more, to the same time, or the latest ROS time when
// it is past it).
func FuzzDecodeScalars(f *testing.F) {
	f.Add(AppendFloat64(nil, -2.5)[4:])
	f.Add(AppendClock(nil, 12_345_678_901)[4:])
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, body []byte) {
		v, err := DecodeFloat64(body)
		if (err == nil) != (len(body) == 8) {
			t.Fatalf("Float64 of %d bytes: %v", len(body), err)
		}
		if err == nil && !bytes.Equal(AppendFloat64(nil, v)[4:], body) {
			t.Fatalf("Float64 %v re-encoded as % x, was % x", v, AppendFloat64(nil, v)[4:], body)
		}
		ns, err := DecodeClock(body)
		if (err == nil) != (len(body) == 8) {
			t.Fatalf("Clock of %d bytes: %v", len(body), err)
		}
		if err != nil {
			return
		}
		if ns < 0 {
			t.Fatalf("Clock %d < 0", ns)
		}
		enc := AppendClock(nil, ns)[4:]
		back, err := DecodeClock(enc)
		if err != nil || back != min(ns, maxTime) {
			t.Fatalf("Clock %d re-encoded as % x, read %d, %v", ns, enc, back, err)
		}
		if binary.LittleEndian.Uint32(body[4:]) < 1e9 && !bytes.Equal(enc, body) {
			t.Fatalf("Clock %d re-encoded as % x, was % x", ns, enc, body)
		}
	})
}
