package msgs

import (
	"encoding/binary"
	"strconv"

	"github.com/bluenviron/goroslib/v2/pkg/msgs/diagnostic_msgs"
)

// DiagnosticArray is diagnostic_msgs/DiagnosticArray.
var DiagnosticArray = mustType(diagnostic_msgs.DiagnosticArray{})

// DiagnosticStatus is diagnostic_msgs/DiagnosticStatus.
var DiagnosticStatus = mustType(diagnostic_msgs.DiagnosticStatus{})

// Diagnostic status levels (diagnostic_msgs/DiagnosticStatus).
const (
	DiagOK    byte = 0
	DiagWarn  byte = 1
	DiagError byte = 2
)

// DiagWriter appends a diagnostic_msgs/DiagnosticArray frame (or, from
// BeginStatus, a lone DiagnosticStatus) piece by piece without allocating once its buffer has grown: Begin, then for each
// of the n statuses Status followed by exactly its values' KV calls, then
// End. Counts come first on the wire, so they are given up front.
type DiagWriter struct {
	buf []byte
	off int
}

// Begin starts a frame stamped stamp (ns) with n statuses.
func (w *DiagWriter) Begin(seq uint32, stamp int64, n int) {
	w.buf, w.off = BeginFrame(w.buf[:0])
	w.buf = binary.LittleEndian.AppendUint32(w.buf, seq)
	w.buf = appendTime(w.buf, stamp)
	w.buf = appendString(w.buf, "")
	w.buf = binary.LittleEndian.AppendUint32(w.buf, uint32(n))
}

// BeginStatus starts a diagnostic_msgs/DiagnosticStatus frame: one
// Status call and its values' KV calls follow, then End.
func (w *DiagWriter) BeginStatus() {
	w.buf, w.off = BeginFrame(w.buf[:0])
}

// Status starts one status with nvalues key/value pairs.
func (w *DiagWriter) Status(level byte, name, message, hardwareID string, nvalues int) {
	w.buf = append(w.buf, level)
	w.buf = appendString(w.buf, name)
	w.buf = appendString(w.buf, message)
	w.buf = appendString(w.buf, hardwareID)
	w.buf = binary.LittleEndian.AppendUint32(w.buf, uint32(nvalues))
}

// KV appends one key/value pair of the current status.
func (w *DiagWriter) KV(key string, value []byte) {
	w.buf = appendString(w.buf, key)
	w.buf = binary.LittleEndian.AppendUint32(w.buf, uint32(len(value)))
	w.buf = append(w.buf, value...)
}

// KVString appends a key/value pair whose value is a string.
func (w *DiagWriter) KVString(key, value string) {
	w.buf = appendString(w.buf, key)
	w.buf = appendString(w.buf, value)
}

// KVInt appends a key/value pair whose value is v in decimal.
func (w *DiagWriter) KVInt(key string, v int64) {
	w.buf = appendString(w.buf, key)
	at := len(w.buf)
	w.buf = binary.LittleEndian.AppendUint32(w.buf, 0)
	w.buf = strconv.AppendInt(w.buf, v, 10)
	binary.LittleEndian.PutUint32(w.buf[at:], uint32(len(w.buf)-at-4))
}

// KVFloat appends a key/value pair whose value is v to 9 significant
// digits.
func (w *DiagWriter) KVFloat(key string, v float64) {
	w.buf = appendString(w.buf, key)
	at := len(w.buf)
	w.buf = binary.LittleEndian.AppendUint32(w.buf, 0)
	w.buf = strconv.AppendFloat(w.buf, v, 'g', 9, 64)
	binary.LittleEndian.PutUint32(w.buf[at:], uint32(len(w.buf)-at-4))
}

// KVSeconds appends a key/value pair whose value is ns in seconds.
func (w *DiagWriter) KVSeconds(key string, ns int64) { w.KVFloat(key, float64(ns)/1e9) }

// End finishes the frame and returns it (valid until the next Begin).
func (w *DiagWriter) End() []byte {
	w.buf = EndFrame(w.buf, w.off)
	return w.buf
}
