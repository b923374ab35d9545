package remote

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// Version is the protocol's version.
const Version = 1

// Limits of a message.
const (
	// MaxBodies and MaxValues bound a world's bodies and a body's command
	// or observation.
	MaxBodies = 64
	MaxValues = 1024
	// maxMessage bounds a packet: a hello of MaxBodies bodies with long
	// joint names, or their observations.
	maxMessage = 1 << 20
)

// Operations.
const (
	opHello   = 'H'
	opCommand = 'C'
	opStep    = 'S'
	opReset   = 'R'
	opQuit    = 'Q'
	opHelloOK = 'h'
	opStepped = 's'
	opFailed  = 'e'
)

// flagReset is the hello's flag of a world that can reset its bodies.
const flagReset = 1

// errShort reports a message shorter than its fields.
var errShort = errors.New("message too short")

var le = binary.LittleEndian

func putF64s(b []byte, v []float64) []byte {
	b = le.AppendUint16(b, uint16(len(v)))
	for _, x := range v {
		b = le.AppendUint64(b, math.Float64bits(x))
	}
	return b
}

func putString(b []byte, s string) []byte {
	b = le.AppendUint16(b, uint16(len(s)))
	return append(b, s...)
}

// reader reads a message's fields; the first error sticks.
type reader struct {
	b   []byte
	err error
}

func (r *reader) take(n int) []byte {
	if r.err != nil || n > len(r.b) {
		if r.err == nil {
			r.err = errShort
		}
		return nil
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

func (r *reader) u16() int {
	if b := r.take(2); b != nil {
		return int(le.Uint16(b))
	}
	return 0
}

func (r *reader) u8() uint8 {
	if b := r.take(1); b != nil {
		return b[0]
	}
	return 0
}

func (r *reader) u32() uint32 {
	if b := r.take(4); b != nil {
		return le.Uint32(b)
	}
	return 0
}

func (r *reader) i64() int64 {
	if b := r.take(8); b != nil {
		return int64(le.Uint64(b))
	}
	return 0
}

func (r *reader) string() string { return string(r.take(r.u16())) }

// f64s reads a u16 count then as many values into dst (which must hold
// MaxValues), returning how many; more than MaxValues is an error.
func (r *reader) f64s(dst []float64) int {
	n := r.u16()
	if n > MaxValues || n > len(dst) {
		if r.err == nil {
			r.err = fmt.Errorf("%d values, at most %d", n, min(MaxValues, len(dst)))
		}
		return 0
	}
	b := r.take(8 * n)
	if b == nil {
		return 0
	}
	for i := range n {
		dst[i] = math.Float64frombits(le.Uint64(b[8*i:]))
	}
	return n
}

// done is the reader's error, or one for bytes left over.
func (r *reader) done() error {
	if r.err == nil && len(r.b) != 0 {
		r.err = fmt.Errorf("%d bytes after the message's fields", len(r.b))
	}
	return r.err
}
