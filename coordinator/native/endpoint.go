package native

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync/atomic"
	"time"
)

// EnvVar is the environment variable naming a native client's fds: the
// shared memory, the request pipe's write end and the reply pipe's read end,
// as "shm,req,rep" (e.g. "3,4,5").
const EnvVar = "TCS_NATIVE"

// Env returns the EnvVar=... entry for a child whose three files from
// NewEndpoint are at fds first, first+1, first+2 (first = 3 when they are
// the first exec.Cmd ExtraFiles).
func Env(first int) string {
	return EnvVar + "=" + strconv.Itoa(first) + "," + strconv.Itoa(first+1) + "," + strconv.Itoa(first+2)
}

// ErrReplyBlocked is returned by Reply when the reply pipe is full: the
// client stopped reading replies (the coordinator never blocks on a client).
var ErrReplyBlocked = errors.New("native: reply pipe full: client is not reading replies")

// ErrClosed is returned by an Endpoint or Client used after Close.
var ErrClosed = errors.New("native: closed")

// ErrTimeout is returned by WaitRequest when no request came in time.
var ErrTimeout = errors.New("native: timed out waiting for a request")

// Endpoint is the coordinator's side of one native client: the shared
// memory mapping, the request pipe's read end (non-blocking) and the reply
// pipe's write end (non-blocking). It holds no policy: the coordinator reads
// requests when RequestFd is readable, fills Shm, and replies.
//
// An Endpoint is used by one goroutine; ReadRequest and Reply do not
// allocate.
type Endpoint struct {
	mem  []byte
	shm  *Shm
	reqR int // request pipe, read end (coordinator)
	repW int // reply pipe, write end (coordinator)
	rbuf [RecordSize]byte
	rn   int // bytes of a partial request in rbuf
	wbuf [RecordSize]byte
}

// NewEndpoint creates the shared memory (a memfd of ShmSize bytes, Magic and
// Version written) and the two pipes. The coordinator's ends are
// close-on-exec. childFiles are the client's ends, in fd order: shared
// memory, request pipe write end, reply pipe read end; pass them as
// exec.Cmd.ExtraFiles (fds 3, 4, 5) with Env(3) in the child's environment,
// and close them once the child is started.
func NewEndpoint() (e *Endpoint, childFiles []*os.File, err error) {
	memFd, mem, err := createShm()
	if err != nil {
		return nil, nil, fmt.Errorf("native: create shared memory: %w", err)
	}
	e = &Endpoint{mem: mem, shm: shmAt(mem), reqR: -1, repW: -1}
	e.shm.Magic = Magic
	e.shm.Version = Version
	fail := func(err error, fds ...int) (*Endpoint, []*os.File, error) {
		for _, fd := range fds {
			closeFd(fd)
		}
		closeFd(memFd)
		e.Close()
		return nil, nil, fmt.Errorf("native: create endpoint: %w", err)
	}
	reqR, reqW, err := pipe()
	if err != nil {
		return fail(err)
	}
	e.reqR = reqR
	repR, repW, err := pipe()
	if err != nil {
		return fail(err, reqW)
	}
	e.repW = repW
	if err := setNonblock(reqR); err != nil {
		return fail(err, reqW, repR)
	}
	if err := setNonblock(repW); err != nil {
		return fail(err, reqW, repR)
	}
	childFiles = []*os.File{
		os.NewFile(uintptr(memFd), "tcs-native-shm"),
		os.NewFile(uintptr(reqW), "tcs-native-req"),
		os.NewFile(uintptr(repR), "tcs-native-rep"),
	}
	return e, childFiles, nil
}

// Shm is the shared memory region. It is valid until Close.
func (e *Endpoint) Shm() *Shm { return e.shm }

// RequestFd is the request pipe's read end, to watch for readability (epoll).
func (e *Endpoint) RequestFd() int { return e.reqR }

// ReadRequest reads one request if a whole one is available. ok is false
// when none is (EAGAIN; a partial record is kept for the next call). err is
// io.EOF when the client closed its end (it exited), ErrBadOp (with
// the record in req) for an unknown op.
func (e *Endpoint) ReadRequest() (req Request, ok bool, err error) {
	if e.reqR < 0 {
		return Request{}, false, ErrClosed
	}
	n, err := readFd(e.reqR, e.rbuf[e.rn:])
	if err != nil {
		if isAgain(err) {
			return Request{}, false, nil
		}
		return Request{}, false, fmt.Errorf("native: read request: %w", err)
	}
	if n == 0 {
		return Request{}, false, io.EOF
	}
	e.rn += n
	if e.rn < RecordSize {
		return Request{}, false, nil
	}
	e.rn = 0
	req, err = DecodeRequest(e.rbuf[:])
	if err != nil {
		return req, true, err
	}
	return req, true, nil
}

// WaitRequest waits up to timeout (< 0: forever) for a whole request. It is
// for tests and simple single-client loops; the dispatch loop watches
// RequestFd in its own wait set and calls ReadRequest.
func (e *Endpoint) WaitRequest(timeout time.Duration) (Request, error) {
	var deadline time.Time
	if timeout >= 0 {
		deadline = time.Now().Add(timeout)
	}
	for {
		req, ok, err := e.ReadRequest()
		if err != nil || ok {
			return req, err
		}
		ms := -1
		if timeout >= 0 {
			left := time.Until(deadline)
			if left <= 0 {
				return Request{}, ErrTimeout
			}
			ms = int((left + time.Millisecond - 1) / time.Millisecond)
		}
		if _, err := pollIn(e.reqR, ms); err != nil {
			return Request{}, fmt.Errorf("native: wait request: %w", err)
		}
	}
}

// Reply writes one reply record. It never blocks: a full pipe is
// ErrReplyBlocked; a client that closed its end gives an error wrapping
// EPIPE.
func (e *Endpoint) Reply(r Reply) error {
	if e.repW < 0 {
		return ErrClosed
	}
	EncodeReply(e.wbuf[:], r)
	n, err := writeFd(e.repW, e.wbuf[:])
	if err != nil {
		if isAgain(err) {
			return ErrReplyBlocked
		}
		return fmt.Errorf("native: write reply: %w", err)
	}
	if n != RecordSize { // cannot happen: pipe writes ≤ PIPE_BUF are atomic
		return fmt.Errorf("native: write reply: short write %d", n)
	}
	return nil
}

// ErrPostRing is returned by Post when the client's post count is more than
// MaxPosts ahead of the coordinator's: it wrote the ring itself, not through
// a client library.
var ErrPostRing = errors.New("native: post ring overrun: PostHead is more than MaxPosts past PostTail")

// AllowPosts lets the client write messages on channels ≥ 1 without a
// request (Shm.PostCap; see Client.Write). A coordinator allows them where
// it needs no decision at the instant a message is written, only its
// stamp, and calls Post whenever it takes the CPU back from the client.
// Call it before the reply to OpHello.
func (e *Endpoint) AllowPosts() {
	if e.shm != nil {
		e.shm.PostCap = MaxPosts
	}
}

// Post returns the oldest post not yet taken (ok false: none); it stays
// valid until Taken. Its fields are the client's: check Ch ≥ 1 and N ≤
// MaxValues. On ErrPostRing the ring is emptied (those posts are lost).
func (e *Endpoint) Post() (p *Post, ok bool, err error) {
	s := e.shm
	if s == nil {
		return nil, false, ErrClosed
	}
	head := atomic.LoadUint32(&s.PostHead)
	tail := s.PostTail
	switch {
	case head == tail:
		return nil, false, nil
	case head-tail > MaxPosts:
		atomic.StoreUint32(&s.PostTail, head)
		return nil, false, ErrPostRing
	}
	return &s.Posts[tail%MaxPosts], true, nil
}

// Taken frees the slot of the post Post returned last.
func (e *Endpoint) Taken() {
	if s := e.shm; s != nil {
		atomic.StoreUint32(&s.PostTail, s.PostTail+1)
	}
}

// ClientGone reports whether err from Reply or ReadRequest means the client
// closed its end of the pipes.
func ClientGone(err error) bool { return errors.Is(err, io.EOF) || isBrokenPipe(err) }

// Close unmaps the shared memory and closes the coordinator's ends. Shm must
// not be used afterwards.
func (e *Endpoint) Close() error {
	err := unmapShm(e.mem)
	e.mem, e.shm = nil, nil
	err = errors.Join(err, closeFd(e.reqR), closeFd(e.repW))
	e.reqR, e.repW = -1, -1
	return err
}

// Check validates a request's arguments against the protocol (not against
// a scenario): it returns StatusOK or StatusBadRequest. OpWrite needs 0 ≤
// arg ≤ MaxValues, OpIdle arg ≥ 0.
func (r Request) Check() uint32 {
	switch r.Op {
	case OpHello, OpRead, OpRecv:
		return StatusOK
	case OpWrite:
		if r.Arg < 0 || r.Arg > MaxValues {
			return StatusBadRequest
		}
		return StatusOK
	case OpIdle, OpWriteIdle:
		// OpWriteIdle's count is Shm.OutLen, which the coordinator
		// checks when it reads the shared memory.
		if r.Arg < 0 {
			return StatusBadRequest
		}
		return StatusOK
	}
	return StatusBadRequest
}
