package cdr

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"testing"
)

// TestAlignmentFromOrigin checks the layout rules against bytes written
// out by hand: alignment counts from the end of the header, strings carry
// their NUL, sequences their count.
func TestAlignmentFromOrigin(t *testing.T) {
	var w Writer
	w.Begin(nil)
	w.Uint8(7)               // off 0
	w.Float64(1)             // pad to 8
	w.String("ab")           // len 3 at 16, "ab\0"
	w.Float64s([]float64{2}) // pad to 24, count at 24, pad to 32
	want := []byte{
		0, 1, 0, 0,
		7, 0, 0, 0, 0, 0, 0, 0,
		0, 0, 0, 0, 0, 0, 0xf0, 0x3f,
		3, 0, 0, 0, 'a', 'b', 0, 0,
		1, 0, 0, 0, 0, 0, 0, 0,
		0, 0, 0, 0, 0, 0, 0, 0x40,
	}
	if !bytes.Equal(w.Bytes(), want) {
		t.Fatalf("got\n% x\nwant\n% x", w.Bytes(), want)
	}
	r := NewReader(w.Bytes())
	if r.Uint8() != 7 || r.Float64() != 1 || r.String() != "ab" {
		t.Fatal("read back differs")
	}
	if v := r.Float64s(nil); len(v) != 1 || v[0] != 2 || r.Err() != nil || r.Rest() != 0 {
		t.Fatalf("sequence read back %v, err %v, rest %d", v, r.Err(), r.Rest())
	}
}

// TestWriterAfterPrefix checks that a sample begun after other bytes
// aligns from its own header.
func TestWriterAfterPrefix(t *testing.T) {
	var w Writer
	w.Begin([]byte{9, 9, 9})
	w.Uint8(1)
	w.Uint32(2)
	if got := w.Bytes(); !bytes.Equal(got, []byte{0, 1, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0}) {
		t.Fatalf("got % x", got)
	}
}

func TestReaderErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		in   []byte
		want error
	}{
		{"empty", nil, ErrShort},
		{"big endian", []byte{0, 0, 0, 0, 1, 0, 0, 0}, ErrEncapsulation},
		{"short string", []byte{0, 1, 0, 0, 9, 0, 0, 0, 'a'}, ErrShort},
		{"no nul", []byte{0, 1, 0, 0, 1, 0, 0, 0, 'a'}, ErrString},
		{"zero length string", []byte{0, 1, 0, 0, 0, 0, 0, 0}, ErrString},
	} {
		r := NewReader(c.in)
		_ = r.String()
		if !errors.Is(r.Err(), c.want) {
			t.Errorf("%s: err %v, want %v", c.name, r.Err(), c.want)
		}
	}
	r := NewReader([]byte{0, 1, 0, 0, 0xff, 0xff, 0xff, 0x7f})
	if v := r.Float64s(nil); v != nil || !errors.Is(r.Err(), ErrLength) {
		t.Errorf("huge sequence: %v, err %v", v, r.Err())
	}
}

// FuzzReader feeds arbitrary samples to every read: errors, never
// panics; the first error sticks, later reads return zero values, and no
// read goes past the sample.
func FuzzReader(f *testing.F) {
	f.Add([]byte{0, 1, 0, 0, 3, 0, 0, 0, 'a', 'b', 0})
	var w Writer
	w.Begin(nil)
	w.Uint8(7)
	w.String("ab")
	w.Float64s([]float64{2, 3})
	w.Octets([]byte{1, 2, 3})
	w.Time(12_345_678_901)
	f.Add(w.Bytes())
	f.Fuzz(func(t *testing.T, b []byte) {
		r := NewReader(b)
		r.Uint8()
		_ = r.String()
		r.Float64s(nil)
		r.Octets()
		r.Time()
		if r.Rest() < 0 || r.Rest() > max(0, len(b)-HeaderLen) {
			t.Fatalf("Rest %d of a %d-byte sample", r.Rest(), len(b))
		}
		err := r.Err()
		if err == nil {
			return
		}
		if r.Uint64() != 0 || r.StringBytes() != nil || r.Len(1) != 0 || r.Octets() != nil || r.Time() != 0 || r.Err() != err {
			t.Fatalf("reads after error %v return values or change it to %v", err, r.Err())
		}
	})
}

// FuzzWriterReader: what the Writer writes, in any mix of alignments, the
// Reader reads back equal (a time clamped to what Time can write), using
// every byte.
func FuzzWriterReader(f *testing.F) {
	f.Add(uint8(7), uint16(0xbeef), uint32(1<<31), uint64(1<<63), uint32(0x3fc00000), uint64(0x3ff8000000000000), "ab",
		[]byte{1, 2, 3}, []byte{0, 0, 0, 0, 0, 0, 0xf0, 0x3f}, int64(12_345_678_901), true)
	f.Add(uint8(0), uint16(0), uint32(0), uint64(0), uint32(0x7fc00001), uint64(0x7ff8000000000001), "", []byte{},
		[]byte{}, int64(-1), false)
	f.Add(uint8(0), uint16(0), uint32(0), uint64(0), uint32(0), uint64(0), "a\x00b", []byte(nil), []byte{1}, int64(math.MaxInt64), false)
	f.Fuzz(func(t *testing.T, u8 uint8, u16 uint16, u32 uint32, u64 uint64, f32 uint32, f64 uint64, s string,
		oct, fl []byte, ns int64, b bool) {
		var floats []float64
		for i := 0; i+8 <= len(fl); i += 8 {
			floats = append(floats, math.Float64frombits(binary.LittleEndian.Uint64(fl[i:])))
		}
		var w Writer
		w.Begin([]byte("prefix"))
		w.Bool(b)
		w.Uint16(u16)
		w.Uint8(u8)
		w.Uint64(u64)
		w.Int8(int8(u8))
		w.Float32(math.Float32frombits(f32))
		w.String(s)
		w.Float64(math.Float64frombits(f64))
		w.Octets(oct)
		w.Int32(int32(u32))
		w.Float64s(floats)
		w.Time(ns)
		w.Strings([]string{s, ""})
		w.Int16(int16(u16))
		w.Int64(int64(u64))
		if !bytes.HasPrefix(w.Buf, []byte("prefix")) || !bytes.Equal(w.Bytes(), w.Buf[6:]) {
			t.Fatal("Begin lost the caller's bytes")
		}
		r := NewReader(w.Bytes())
		got := []any{r.Bool(), r.Uint16(), r.Uint8(), r.Uint64(), r.Int8(), math.Float32bits(r.Float32()), r.String(),
			math.Float64bits(r.Float64()), string(r.Octets()), r.Int32()}
		want := []any{b, u16, u8, u64, int8(u8), f32, s, f64, string(oct), int32(u32)}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("field %d: read %v, wrote %v", i, got[i], want[i])
			}
		}
		back := r.Float64s(nil)
		if len(back) != len(floats) {
			t.Fatalf("%d doubles read, %d written", len(back), len(floats))
		}
		for i := range back {
			if math.Float64bits(back[i]) != math.Float64bits(floats[i]) {
				t.Fatalf("double %d: %v, wrote %v", i, back[i], floats[i])
			}
		}
		if got, want := r.Time(), max(0, min(ns, MaxTime)); got != want {
			t.Fatalf("time %d read as %d, want %d", ns, got, want)
		}
		if n := r.Len(5); n != 2 || r.String() != s || r.String() != "" || r.Int16() != int16(u16) || r.Int64() != int64(u64) {
			t.Fatalf("tail: %d strings, %v", n, r.Err())
		}
		if r.Err() != nil || r.Rest() != 0 {
			t.Fatalf("err %v, %d bytes left", r.Err(), r.Rest())
		}
	})
}
