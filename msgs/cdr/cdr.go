package cdr

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// Header is the encapsulation header of a little-endian plain-CDR sample.
var Header = [4]byte{0x00, 0x01, 0x00, 0x00}

// HeaderLen is the length of the encapsulation header.
const HeaderLen = 4

// Errors a Reader reports.
var (
	// ErrShort means the sample ended before its type did.
	ErrShort = errors.New("cdr: sample too short")
	// ErrEncapsulation means the sample is not little-endian plain CDR.
	ErrEncapsulation = errors.New("cdr: not a little-endian plain CDR sample")
	// ErrString means a string has no terminating NUL or a zero length.
	ErrString = errors.New("cdr: malformed string")
	// ErrLength means a sequence is longer than the rest of the sample.
	ErrLength = errors.New("cdr: sequence longer than the sample")
)

// Writer appends one CDR sample to Buf. Start it with Begin; the zero
// Writer is not ready.
type Writer struct {
	// Buf is the sample so far (the caller's buffer plus what was
	// appended).
	Buf    []byte
	origin int
}

// Begin starts a sample at the end of dst (usually dst[:0]), writing the
// encapsulation header.
func (w *Writer) Begin(dst []byte) {
	w.Buf = append(dst, Header[:]...)
	w.origin = len(w.Buf)
}

// Bytes returns the sample (header included) written since Begin.
func (w *Writer) Bytes() []byte { return w.Buf[w.origin-HeaderLen:] }

// Align pads with zeros to a multiple of n (1, 2, 4 or 8) from the origin.
func (w *Writer) Align(n int) {
	for (len(w.Buf)-w.origin)%n != 0 {
		w.Buf = append(w.Buf, 0)
	}
}

// Bool writes a boolean (one byte, 0 or 1).
func (w *Writer) Bool(v bool) {
	b := byte(0)
	if v {
		b = 1
	}
	w.Buf = append(w.Buf, b)
}

// Uint8 writes an octet; Int8 a signed one.
func (w *Writer) Uint8(v uint8) { w.Buf = append(w.Buf, v) }

// Int8 writes a signed octet.
func (w *Writer) Int8(v int8) { w.Buf = append(w.Buf, byte(v)) }

// Uint16 writes an aligned unsigned short.
func (w *Writer) Uint16(v uint16) {
	w.Align(2)
	w.Buf = binary.LittleEndian.AppendUint16(w.Buf, v)
}

// Int16 writes an aligned short.
func (w *Writer) Int16(v int16) { w.Uint16(uint16(v)) }

// Uint32 writes an aligned unsigned long.
func (w *Writer) Uint32(v uint32) {
	w.Align(4)
	w.Buf = binary.LittleEndian.AppendUint32(w.Buf, v)
}

// Int32 writes an aligned long.
func (w *Writer) Int32(v int32) { w.Uint32(uint32(v)) }

// Uint64 writes an aligned unsigned long long.
func (w *Writer) Uint64(v uint64) {
	w.Align(8)
	w.Buf = binary.LittleEndian.AppendUint64(w.Buf, v)
}

// Int64 writes an aligned long long.
func (w *Writer) Int64(v int64) { w.Uint64(uint64(v)) }

// Float32 writes an aligned float.
func (w *Writer) Float32(v float32) { w.Uint32(math.Float32bits(v)) }

// Float64 writes an aligned double.
func (w *Writer) Float64(v float64) { w.Uint64(math.Float64bits(v)) }

// String writes a string: its length including the NUL, its bytes, a NUL.
func (w *Writer) String(s string) {
	w.Uint32(uint32(len(s) + 1))
	w.Buf = append(w.Buf, s...)
	w.Buf = append(w.Buf, 0)
}

// Len writes a sequence's element count; the elements follow.
func (w *Writer) Len(n int) { w.Uint32(uint32(n)) }

// Float64s writes a sequence<double>.
func (w *Writer) Float64s(v []float64) {
	w.Len(len(v))
	for _, x := range v {
		w.Float64(x)
	}
}

// Strings writes a sequence<string>.
func (w *Writer) Strings(v []string) {
	w.Len(len(v))
	for _, s := range v {
		w.String(s)
	}
}

// Octets writes a sequence<octet>.
func (w *Writer) Octets(v []byte) {
	w.Len(len(v))
	w.Buf = append(w.Buf, v...)
}

// MaxTime is the latest builtin_interfaces/Time in ns: 2^31−1 s and
// 999,999,999 ns.
const MaxTime = int64(math.MaxInt32)*1e9 + 999_999_999

// Time writes a builtin_interfaces/Time (int32 sec, uint32 nanosec) for
// ns nanoseconds, clamped to [0, MaxTime]: negative times are written as
// 0, later ones as MaxTime (the seconds would wrap to a negative time).
func (w *Writer) Time(ns int64) {
	ns = max(0, min(ns, MaxTime))
	w.Int32(int32(ns / 1e9))
	w.Uint32(uint32(ns % 1e9))
}

// Reader decodes one CDR sample in place. The first error sticks: later
// reads return zero values, and Err reports it.
type Reader struct {
	buf    []byte
	off    int
	origin int
	err    error
}

// NewReader starts reading sample (header included); it checks the
// encapsulation header.
func NewReader(sample []byte) *Reader {
	r := &Reader{}
	r.Reset(sample)
	return r
}

// Reset makes r read sample (header included), without allocating.
func (r *Reader) Reset(sample []byte) {
	*r = Reader{buf: sample, off: HeaderLen, origin: HeaderLen}
	if len(sample) < HeaderLen {
		r.err = ErrShort
		return
	}
	if sample[0] != 0 || sample[1] != 1 {
		r.err = fmt.Errorf("%w (header % x)", ErrEncapsulation, sample[:2])
	}
}

// Err is the first error met, or nil.
func (r *Reader) Err() error { return r.err }

// Rest is the number of bytes not read yet.
func (r *Reader) Rest() int {
	if r.off > len(r.buf) {
		return 0
	}
	return len(r.buf) - r.off
}

// Align skips padding to a multiple of n from the origin.
func (r *Reader) Align(n int) {
	if r.err != nil {
		return
	}
	pad := (n - (r.off-r.origin)%n) % n
	if r.off+pad > len(r.buf) {
		r.err = ErrShort
		return
	}
	r.off += pad
}

func (r *Reader) take(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || r.off+n > len(r.buf) {
		r.err = ErrShort
		return nil
	}
	b := r.buf[r.off : r.off+n]
	r.off += n
	return b
}

// Bool reads a boolean (any non-zero octet is true).
func (r *Reader) Bool() bool { return r.Uint8() != 0 }

// Uint8 reads an octet.
func (r *Reader) Uint8() uint8 {
	if b := r.take(1); b != nil {
		return b[0]
	}
	return 0
}

// Int8 reads a signed octet.
func (r *Reader) Int8() int8 { return int8(r.Uint8()) }

// Uint16 reads an aligned unsigned short.
func (r *Reader) Uint16() uint16 {
	r.Align(2)
	if b := r.take(2); b != nil {
		return binary.LittleEndian.Uint16(b)
	}
	return 0
}

// Int16 reads an aligned short.
func (r *Reader) Int16() int16 { return int16(r.Uint16()) }

// Uint32 reads an aligned unsigned long.
func (r *Reader) Uint32() uint32 {
	r.Align(4)
	if b := r.take(4); b != nil {
		return binary.LittleEndian.Uint32(b)
	}
	return 0
}

// Int32 reads an aligned long.
func (r *Reader) Int32() int32 { return int32(r.Uint32()) }

// Uint64 reads an aligned unsigned long long.
func (r *Reader) Uint64() uint64 {
	r.Align(8)
	if b := r.take(8); b != nil {
		return binary.LittleEndian.Uint64(b)
	}
	return 0
}

// Int64 reads an aligned long long.
func (r *Reader) Int64() int64 { return int64(r.Uint64()) }

// Float32 reads an aligned float.
func (r *Reader) Float32() float32 { return math.Float32frombits(r.Uint32()) }

// Float64 reads an aligned double.
func (r *Reader) Float64() float64 { return math.Float64frombits(r.Uint64()) }

// StringBytes reads a string and returns its bytes without the NUL,
// aliasing the sample.
func (r *Reader) StringBytes() []byte {
	n := r.Uint32()
	if r.err != nil {
		return nil
	}
	if n == 0 {
		r.err = ErrString
		return nil
	}
	b := r.take(int(n))
	if b == nil {
		return nil
	}
	if b[n-1] != 0 {
		r.err = ErrString
		return nil
	}
	return b[:n-1]
}

// String reads a string (allocating it).
func (r *Reader) String() string { return string(r.StringBytes()) }

// Len reads a sequence's element count and checks that at least
// n×minSize bytes remain (minSize is the smallest encoded element, ≥ 1).
func (r *Reader) Len(minSize int) int {
	n := r.Uint32()
	if r.err != nil {
		return 0
	}
	if minSize < 1 {
		minSize = 1
	}
	if uint64(n)*uint64(minSize) > uint64(r.Rest()) {
		r.err = ErrLength
		return 0
	}
	return int(n)
}

// Float64s reads a sequence<double>, appending to dst.
func (r *Reader) Float64s(dst []float64) []float64 {
	n := r.Len(8)
	for i := 0; i < n && r.err == nil; i++ {
		dst = append(dst, r.Float64())
	}
	return dst
}

// Octets reads a sequence<octet>, aliasing the sample.
func (r *Reader) Octets() []byte {
	n := r.Len(1)
	return r.take(n)
}

// Time reads a builtin_interfaces/Time as nanoseconds.
func (r *Reader) Time() int64 {
	sec := r.Int32()
	nsec := r.Uint32()
	return int64(sec)*1e9 + int64(nsec)
}
