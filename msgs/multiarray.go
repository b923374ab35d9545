package msgs

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/bluenviron/goroslib/v2/pkg/msgs/std_msgs"
)

// Float64MultiArray is std_msgs/Float64MultiArray: the actuator type of a
// robot whose body takes more than one command value.
var Float64MultiArray = mustType(std_msgs.Float64MultiArray{})

// ErrTooMany reports an array with more values than the receiver takes.
var ErrTooMany = errors.New("too many values")

// maxDims bounds the layout's dimensions a decoder walks over.
const maxDims = 32

// AppendFloat64MultiArray appends a std_msgs/Float64MultiArray frame with
// an empty layout (no dimensions, data_offset 0) and data v.
func AppendFloat64MultiArray(dst []byte, v []float64) []byte {
	dst, off := BeginFrame(dst)
	dst = binary.LittleEndian.AppendUint32(dst, 0) // layout.dim: none
	dst = binary.LittleEndian.AppendUint32(dst, 0) // layout.data_offset
	return EndFrame(appendFloats(dst, v), off)
}

// DecodeFloat64MultiArray reads a std_msgs/Float64MultiArray body (without
// the length prefix) into dst, from the layout's data_offset on, and
// returns the number of values written. The layout's dimensions are
// skipped. It refuses a body that is cut short or has bytes after the
// data, a data_offset past the data, and more values than dst holds
// (ErrTooMany). It does not allocate unless it fails.
func DecodeFloat64MultiArray(body []byte, dst []float64) (int, error) {
	const name = "std_msgs/Float64MultiArray"
	b := body
	u32 := func() (uint32, bool) {
		if len(b) < 4 {
			return 0, false
		}
		v := binary.LittleEndian.Uint32(b)
		b = b[4:]
		return v, true
	}
	dims, ok := u32()
	if !ok {
		return 0, fmt.Errorf("%s: no layout: %w", name, ErrShort)
	}
	if dims > maxDims {
		return 0, fmt.Errorf("%s: %d layout dimensions, at most %d taken", name, dims, maxDims)
	}
	for range dims {
		l, ok := u32()
		if !ok || uint64(len(b)) < uint64(l)+8 {
			return 0, fmt.Errorf("%s: layout dimension cut short: %w", name, ErrShort)
		}
		b = b[l+8:] // label, size, stride
	}
	offset, ok := u32()
	if !ok {
		return 0, fmt.Errorf("%s: no data_offset: %w", name, ErrShort)
	}
	n, ok := u32()
	if !ok {
		return 0, fmt.Errorf("%s: no data length: %w", name, ErrShort)
	}
	if uint64(len(b)) != 8*uint64(n) {
		if uint64(len(b)) < 8*uint64(n) {
			return 0, fmt.Errorf("%s: %d values announced, %d bytes left: %w", name, n, len(b), ErrShort)
		}
		return 0, fmt.Errorf("%s: %d bytes after the data: another type?", name, uint64(len(b))-8*uint64(n))
	}
	if offset > n {
		return 0, fmt.Errorf("%s: data_offset %d past the %d values", name, offset, n)
	}
	if int(n-offset) > len(dst) {
		return 0, fmt.Errorf("%s: %d values, at most %d taken: %w", name, n-offset, len(dst), ErrTooMany)
	}
	b = b[8*offset:]
	for i := range int(n - offset) {
		dst[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return int(n - offset), nil
}
