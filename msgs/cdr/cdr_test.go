package cdr

import (
	"bytes"
	"errors"
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

// FuzzReader feeds arbitrary samples to every read: errors, never panics.
func FuzzReader(f *testing.F) {
	f.Add([]byte{0, 1, 0, 0, 3, 0, 0, 0, 'a', 'b', 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		r := NewReader(b)
		r.Uint8()
		_ = r.String()
		r.Float64s(nil)
		r.Octets()
		r.Time()
		_ = r.Err()
	})
}
