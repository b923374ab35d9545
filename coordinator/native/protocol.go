package native

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Op is a request's operation; a reply carries the op it answers.
type Op uint32

// The operations (values fixed by the protocol; see tcs_native.h).
const (
	OpHello Op = 1 // first request; arg = Version
	OpRead  Op = 2 // wait for the observation at the client's progress
	OpWrite Op = 3 // Shm.Out[0:arg] is a message on channel ch
	OpIdle  Op = 4 // idle until virtual time arg (absolute ns)
	OpRecv  Op = 5 // copy the newest message on ch into Shm.In
	// OpWriteIdle is OpWrite of Shm.Out[0:Shm.OutLen] on channel ch, then
	// OpIdle until arg: a periodic controller's whole exchange in one
	// round trip.
	OpWriteIdle Op = 6
)

func (o Op) String() string {
	switch o {
	case OpHello:
		return "hello"
	case OpRead:
		return "read"
	case OpWrite:
		return "write"
	case OpIdle:
		return "idle"
	case OpRecv:
		return "recv"
	case OpWriteIdle:
		return "write-idle"
	}
	return fmt.Sprintf("op(%d)", uint32(o))
}

// Valid reports whether o is one of the protocol's operations.
func (o Op) Valid() bool { return o >= OpHello && o <= OpWriteIdle }

// Reply statuses. For OpRecv a status below StatusErrorBase is the count of
// values copied into Shm.In; for every other op 0 means done. A status at or
// above StatusErrorBase is an error, the same for every op.
const (
	StatusOK        uint32 = 0
	StatusErrorBase uint32 = 1 << 31
	// StatusBadRequest: unknown op, bad channel, or a length beyond MaxValues.
	StatusBadRequest uint32 = StatusErrorBase + 1
	// StatusBadVersion: the client's Version (OpHello) is not the coordinator's.
	StatusBadVersion uint32 = StatusErrorBase + 2
	// StatusShutdown: the simulation is ending; the client should exit.
	StatusShutdown uint32 = StatusErrorBase + 3
	// StatusNotHello: a request came before OpHello.
	StatusNotHello uint32 = StatusErrorBase + 4
)

// RecordSize is the size of every request and reply record.
const RecordSize = 16

// Request is one client → coordinator record: {op uint32, ch uint32, arg
// int64}, little endian.
type Request struct {
	Op  Op
	Ch  uint32
	Arg int64
}

// Reply is one coordinator → client record: {op uint32, status uint32, now
// int64}, little endian. Now is the client's progress at the reply, except
// for OpRecv, where it is the stamp of the message (0 when none).
type Reply struct {
	Op     Op
	Status uint32
	Now    int64
}

// ErrShortRecord is returned by the decoders for fewer than RecordSize bytes.
var ErrShortRecord = errors.New("native: short record")

// ErrBadOp is returned by DecodeRequest for an unknown operation.
var ErrBadOp = errors.New("native: unknown op")

// EncodeRequest writes r into b[0:16]; b must hold RecordSize bytes.
func EncodeRequest(b []byte, r Request) {
	_ = b[RecordSize-1]
	binary.LittleEndian.PutUint32(b[0:], uint32(r.Op))
	binary.LittleEndian.PutUint32(b[4:], r.Ch)
	binary.LittleEndian.PutUint64(b[8:], uint64(r.Arg))
}

// DecodeRequest reads one request from b[0:16]. Errors: ErrShortRecord,
// ErrBadOp (the record is still returned, so the coordinator can answer it
// with StatusBadRequest).
func DecodeRequest(b []byte) (Request, error) {
	if len(b) < RecordSize {
		return Request{}, ErrShortRecord
	}
	r := Request{
		Op:  Op(binary.LittleEndian.Uint32(b[0:])),
		Ch:  binary.LittleEndian.Uint32(b[4:]),
		Arg: int64(binary.LittleEndian.Uint64(b[8:])),
	}
	if !r.Op.Valid() {
		return r, ErrBadOp
	}
	return r, nil
}

// EncodeReply writes r into b[0:16]; b must hold RecordSize bytes.
func EncodeReply(b []byte, r Reply) {
	_ = b[RecordSize-1]
	binary.LittleEndian.PutUint32(b[0:], uint32(r.Op))
	binary.LittleEndian.PutUint32(b[4:], r.Status)
	binary.LittleEndian.PutUint64(b[8:], uint64(r.Now))
}

// DecodeReply reads one reply from b[0:16] (ErrShortRecord if too short).
func DecodeReply(b []byte) (Reply, error) {
	if len(b) < RecordSize {
		return Reply{}, ErrShortRecord
	}
	return Reply{
		Op:     Op(binary.LittleEndian.Uint32(b[0:])),
		Status: binary.LittleEndian.Uint32(b[4:]),
		Now:    int64(binary.LittleEndian.Uint64(b[8:])),
	}, nil
}

// StatusError is a reply status at or above StatusErrorBase, as an error.
type StatusError struct {
	Op     Op
	Status uint32
}

func (e *StatusError) Error() string {
	var what string
	switch e.Status {
	case StatusBadRequest:
		what = "bad request"
	case StatusBadVersion:
		what = "protocol version mismatch"
	case StatusShutdown:
		what = "simulation is ending"
	case StatusNotHello:
		what = "request before hello"
	default:
		what = fmt.Sprintf("status %#x", e.Status)
	}
	return fmt.Sprintf("native: %s: coordinator replied: %s", e.Op, what)
}

// Is lets errors.Is(err, ErrShutdown) match a StatusShutdown reply.
func (e *StatusError) Is(target error) bool {
	return target == ErrShutdown && e.Status == StatusShutdown
}

// ErrShutdown matches (errors.Is) a reply saying the simulation is ending.
var ErrShutdown = errors.New("native: simulation is ending")
