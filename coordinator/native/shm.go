package native

import "unsafe"

// Magic is Shm.Magic: "TCSNATV1" read as a little-endian uint64.
const Magic uint64 = 0x315654414E534354

// Version is the protocol version (Shm.Version and OpHello's arg).
const Version = 1

// MaxValues is the capacity of Shm.Obs, Shm.Out and Shm.In.
const MaxValues = 64

// Shm is the shared memory region of one native client, fixed layout, little
// endian, 1600 bytes; tcs_native.h declares the same struct (struct
// tcs_shm) and TestLayoutMatchesC checks they agree byte for byte.
//
//	offset  size  field
//	     0     8  Magic     Magic, written by the coordinator
//	     8     4  Version   Version, written by the coordinator
//	    12     4  ObsLen    values valid in Obs (set on an OpRead reply)
//	    16     8  Period    client's period, ns (0: best-effort), set before the OpHello reply
//	    24     8  ObsTime   virtual time Obs was sampled at (set with Obs)
//	    32     4  OutLen    values valid in Out for OpWriteIdle
//	    36     4  InLen     values valid in In delivered with an activation
//	    40     8  InTime    stamp of that message (0: none)
//	    48     8  ObsNext   virtual time of the sample after Obs (0: unknown)
//	    56     8  Reserved  zero
//	    64   512  Obs       observation, coordinator → client
//	   576   512  Out       outgoing message, client → coordinator (OpWrite)
//	  1088   512  In        received message, coordinator → client (OpRecv)
//
// Each side touches the region only while it holds the turn: the client
// between a reply and its next request, the coordinator between a request
// and its reply. The pipe round trip orders the accesses.
type Shm struct {
	Magic    uint64
	Version  uint32
	ObsLen   uint32
	Period   int64
	ObsTime  int64
	OutLen   uint32
	InLen    uint32
	InTime   int64
	ObsNext  int64
	Reserved int64
	Obs      [MaxValues]float64
	Out      [MaxValues]float64
	In       [MaxValues]float64
}

// ShmSize is the size of Shm in bytes (the memfd's size).
const ShmSize = int(unsafe.Sizeof(Shm{}))

// Compile-time layout checks: a change to Shm that would break tcs_native.h
// fails the build even where the C test is skipped.
var (
	_ [ShmSize - 1600]struct{}
	_ [1600 - ShmSize]struct{}
	_ [unsafe.Offsetof(Shm{}.Obs) - 64]struct{}
	_ [64 - unsafe.Offsetof(Shm{}.Obs)]struct{}
	_ [unsafe.Offsetof(Shm{}.In) - 1088]struct{}
	_ [1088 - unsafe.Offsetof(Shm{}.In)]struct{}
)
