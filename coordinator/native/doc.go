// Package native is the coordinator's native client protocol (papers 000
// §3.3 and 004 §3.5) and the Go client package for it.
//
// A native client talks to the coordinator over two pipes and one shared
// memory region that the coordinator creates and passes at spawn:
//
//	fd 3  shared memory (memfd), Layout below, mapped read-write by both
//	fd 4  request pipe, client → coordinator (write end)
//	fd 5  reply pipe, coordinator → client (read end)
//
// The environment variable TCS_NATIVE=3,4,5 names them (a client that does
// not find it is not running under tcs and says so).
//
// Each request is one 16-byte record {op uint32, ch uint32, arg int64},
// little endian; each reply is one 16-byte record {op uint32, status uint32,
// now int64} where now is the client's progress (its virtual time) at the
// reply. The client blocks reading the reply after every request, so the
// coordinator always knows what a native client is waiting for:
//
//	OpRead  (arg unused)      wait for the observation sampled at the
//	                          client's progress; it is in Shm.Obs on reply
//	OpWrite (ch, arg = n)     Shm.Out[0:n] is a message on channel ch:
//	                          ch 0 is the robot's actuator command, ch ≥ 1
//	                          a message to the clients subscribed to ch;
//	                          stamped with the client's progress
//	OpIdle  (arg = wake ns)   idle until virtual time arg (absolute); the
//	                          reply comes at the activation
//	OpRecv  (ch)              copy the newest message on ch delivered to
//	                          this client into Shm.In; reply status = count
//	                          of values (0: none yet), now = its stamp
//	OpWriteIdle (ch, arg = wake ns)
//	                          OpWrite of Shm.Out[0:Shm.OutLen] on ch, then
//	                          OpIdle until arg: one round trip per activation
//	OpHello (arg = version)   first request: the reply carries the
//	                          client's period in Shm.Period and virtual 0
//
// The op values are Hello 1, Read 2, Write 3, Idle 4, Recv 5; a reply
// carries the op it answers. Status 0 is success (for OpRecv, the count);
// a status ≥ 1<<31 is an error for any op: StatusBadRequest (unknown op,
// n > MaxValues, negative wake time), StatusBadVersion, StatusNotHello, and
// StatusShutdown — the simulation is ending and the client should exit (the
// Go client returns an error matching ErrShutdown; the C client sets errno
// to ESHUTDOWN). A client whose request pipe closes has exited.
//
// At every activation (the reply to OpIdle or OpWriteIdle) Shm.Obs holds
// the newest sensor sample the world has computed, Shm.ObsTime its virtual
// time and Shm.ObsNext the time of the sample after it (sensors are sampled
// at the world's step boundaries); a client whose activation is at or after
// ObsNext (the world lags its robot) calls OpRead for the sample at its
// progress (Client.Current, tcs_obs_current). A client that
// subscribes to channels also finds, at every activation, the newest message
// of its first subscribed channel that its progress has reached in Shm.In
// (Shm.InLen values, stamped Shm.InTime; 0 when none): no OpRecv needed.
//
// Posts: where the coordinator needs only a message's stamp, not a decision
// at the instant it is written (consistent mode), it sets Shm.PostCap before
// its hello reply, and a message on a channel ≥ 1 (a planner's plan) need
// not cost a round trip. The client puts it in the next slot of the post
// ring (Shm.Posts, MaxPosts slots) with its own process CPU clock, then
// advances Shm.PostHead, and computes on. When the coordinator takes the
// CPU back, it takes every post up to PostHead in order, stamps each with
// the client's progress at that CPU clock (the same stamp a request would
// have had) and advances Shm.PostTail. Nothing else runs in between: the
// client runs only while the coordinator waits. A full ring, a channel 0
// command, a coordinator that left PostCap 0 (lockstep and free mode),
// or a client that never posts: the message is an OpWrite request.
// Measured on two-robots (its planner writes 50 plans a second): 499 posts
// in 10 s.
//
// The shared memory layout is fixed (see Shm and tcs_native.h, which must
// agree byte for byte). Each side touches it only while it holds the turn:
// the client between a reply and its next request, the coordinator between
// a request and its reply; the post ring is the one exception, above.
//
// The package has three parts: the records (Request, Reply and their
// encoders/decoders, pure functions on byte slices); the coordinator's side,
// Endpoint, which creates the memfd and pipes, reads requests without
// blocking and writes replies, and holds no policy; and the client side,
// Client (Connect, Read, Write, Idle, Recv), whose C twin is the
// header-only tcs_native.h. Subpackage nativetest serves a client in
// lockstep with a dynamics world, for tests.
//
// Every raw system call of the package is in shm_linux.go.
package native
