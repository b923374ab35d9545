package native

import "unsafe"

// Magic is Shm.Magic: "TCSNATV1" read as a little-endian uint64.
const Magic uint64 = 0x315654414E534354

// Version is the protocol version (Shm.Version and OpHello's arg).
const Version = 1

// MaxValues is the capacity of Shm.Obs, Shm.Out and Shm.In.
const MaxValues = 64

// MaxPosts is the number of slots of the post ring (Shm.Posts).
const MaxPosts = 4

// Shm is the shared memory region of one native client, fixed layout, little
// endian, 3728 bytes; tcs_native.h declares the same struct (struct
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
//	  1600     4  PostCap   post slots the client may use (0: none), set before the OpHello reply
//	  1604     4  PostHead  posts written, counted by the client
//	  1608     4  PostTail  posts taken, counted by the coordinator
//	  1612     4  PostPad   zero
//	  1616  2112  Posts     MaxPosts slots of Post, slot = count % MaxPosts
//
// Each side touches the region only while it holds the turn: the client
// between a reply and its next request, the coordinator between a request
// and its reply. The pipe round trip orders the accesses. The post ring is
// the exception: the client fills slot PostHead and then advances
// PostHead while it runs, the coordinator takes posts up to PostHead and
// advances PostTail when it has taken the CPU back (both atomically: see
// Client.Write and Endpoint.Post).
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
	PostCap  uint32
	PostHead uint32
	PostTail uint32
	PostPad  uint32
	Posts    [MaxPosts]Post
}

// Post is one message a client wrote without a request (Client.Write on a
// channel ≥ 1 when Shm.PostCap allows): its channel, its values and the
// client's process CPU clock (CLOCK_PROCESS_CPUTIME_ID, ns) when it wrote
// it, from which the coordinator stamps it with the client's progress at
// that instant. 528 bytes.
type Post struct {
	Ch   uint32
	N    uint32
	CPU  int64
	Vals [MaxValues]float64
}

// ShmSize is the size of Shm in bytes (the memfd's size).
const ShmSize = int(unsafe.Sizeof(Shm{}))

// Compile-time layout checks: a change to Shm that would break tcs_native.h
// fails the build even where the C test is skipped.
var (
	_ [ShmSize - 3728]struct{}
	_ [3728 - ShmSize]struct{}
	_ [unsafe.Offsetof(Shm{}.Posts) - 1616]struct{}
	_ [1616 - unsafe.Offsetof(Shm{}.Posts)]struct{}
	_ [unsafe.Offsetof(Shm{}.Obs) - 64]struct{}
	_ [64 - unsafe.Offsetof(Shm{}.Obs)]struct{}
	_ [unsafe.Offsetof(Shm{}.In) - 1088]struct{}
	_ [1088 - unsafe.Offsetof(Shm{}.In)]struct{}
)
