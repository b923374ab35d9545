package native

import (
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
)

// ErrNotUnderTCS is returned by Connect when EnvVar is not set.
var ErrNotUnderTCS = errors.New("not running under tcs: " + EnvVar + " is not set")

// ErrTooMany is returned by Write for more than MaxValues values.
var ErrTooMany = fmt.Errorf("native: more than %d values", MaxValues)

// ErrBadChannel is returned for a negative or too large channel number.
var ErrBadChannel = errors.New("native: bad channel")

// Client is the client side of the native protocol: a process started by
// tcs talks to its coordinator through it. Each call is one request and
// blocks until the coordinator replies; while blocked the client is charged
// nothing, and its virtual time moves as the coordinator says.
//
// A Client is used by one goroutine. Read, Write, Idle and Recv do not
// allocate (except on errors).
type Client struct {
	mem    []byte
	shm    *Shm
	req    int // request pipe, write end
	rep    int // reply pipe, read end
	period int64
	now    int64
	buf    [RecordSize]byte
}

// Connect attaches to the coordinator named by EnvVar, checks the shared
// memory's Magic and Version and says hello; the reply gives the client's
// period (Period) and its virtual time.
func Connect() (*Client, error) {
	v, ok := os.LookupEnv(EnvVar)
	if !ok || v == "" {
		return nil, ErrNotUnderTCS
	}
	var fds [3]int
	parts := strings.Split(v, ",")
	if len(parts) != 3 {
		return nil, fmt.Errorf("native: %s=%q: want three fds \"shm,req,rep\"", EnvVar, v)
	}
	for i, p := range parts {
		fd, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || fd < 0 {
			return nil, fmt.Errorf("native: %s=%q: %q is not a file descriptor", EnvVar, v, p)
		}
		fds[i] = fd
	}
	mem, err := mapShm(fds[0])
	if err != nil {
		return nil, fmt.Errorf("native: connect: %w", err)
	}
	// The mapping stays valid without the fd; the pipes' fds are ours now.
	closeFd(fds[0])
	c := &Client{mem: mem, shm: shmAt(mem), req: fds[1], rep: fds[2]}
	if c.shm.Magic != Magic || c.shm.Version != Version {
		c.Close()
		return nil, fmt.Errorf("native: connect: shared memory has magic %#x version %d, want %#x version %d",
			c.shm.Magic, c.shm.Version, Magic, Version)
	}
	r, err := c.call(OpHello, 0, Version)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("native: connect: %w", err)
	}
	c.period = c.shm.Period
	c.now = r.Now
	return c, nil
}

// call sends one request and waits for its reply.
func (c *Client) call(op Op, ch uint32, arg int64) (Reply, error) {
	if c.shm == nil {
		return Reply{}, ErrClosed
	}
	EncodeRequest(c.buf[:], Request{Op: op, Ch: ch, Arg: arg})
	if n, err := writeFd(c.req, c.buf[:]); err != nil || n != RecordSize {
		if err == nil {
			err = fmt.Errorf("short write %d", n)
		}
		return Reply{}, fmt.Errorf("native: %s: send request: %w", op, err)
	}
	got := 0
	for got < RecordSize {
		n, err := readFd(c.rep, c.buf[got:])
		if err != nil {
			return Reply{}, fmt.Errorf("native: %s: read reply: %w", op, err)
		}
		if n == 0 {
			return Reply{}, fmt.Errorf("native: %s: read reply: coordinator closed the pipe", op)
		}
		got += n
	}
	r, _ := DecodeReply(c.buf[:])
	if r.Op != op {
		return r, fmt.Errorf("native: %s: reply is for %s", op, r.Op)
	}
	if r.Status >= StatusErrorBase {
		return r, &StatusError{Op: op, Status: r.Status}
	}
	return r, nil
}

// Period is the client's period (ns) given at hello; 0 for best-effort.
func (c *Client) Period() int64 { return c.period }

// Now is the client's virtual time as of the last reply that carried it
// (every reply but Recv's).
func (c *Client) Now() int64 { return c.now }

// Read waits for the observation at the client's progress and copies it
// into dst; n is the number of values copied (at most len(dst)), now the
// virtual time it was sampled at.
func (c *Client) Read(dst []float64) (n int, now int64, err error) {
	r, err := c.call(OpRead, 0, 0)
	if err != nil {
		return 0, c.now, err
	}
	c.now = r.Now
	m := int(min(c.shm.ObsLen, MaxValues))
	return copy(dst, c.shm.Obs[:m]), r.Now, nil
}

// Write sends vals as one message on channel ch (0: the robot's actuator
// command; ≥ 1: to the clients subscribed to ch), stamped with the client's
// progress. On a channel ≥ 1, when the coordinator allows it (Shm.PostCap,
// in consistent mode), the message is posted in the shared memory without a
// round trip, and Now is left as it was; otherwise it is a request.
func (c *Client) Write(ch int, vals []float64) error {
	if ch < 0 || ch > math.MaxUint32 {
		return ErrBadChannel
	}
	if len(vals) > MaxValues {
		return ErrTooMany
	}
	if c.shm == nil {
		return ErrClosed
	}
	if ch > 0 && c.post(uint32(ch), vals) {
		return nil
	}
	copy(c.shm.Out[:], vals)
	r, err := c.call(OpWrite, uint32(ch), int64(len(vals)))
	if err != nil {
		return err
	}
	c.now = r.Now
	return nil
}

// post puts vals on channel ch in the post ring's next slot, if posts are
// allowed and one is free, and reports whether it did. The slot is filled
// before PostHead moves (the coordinator reads PostHead, then the slot).
func (c *Client) post(ch uint32, vals []float64) bool {
	s := c.shm
	if s.PostCap == 0 {
		return false
	}
	head := s.PostHead
	if head-atomic.LoadUint32(&s.PostTail) >= MaxPosts {
		return false
	}
	cpu, ok := processCPU()
	if !ok {
		return false
	}
	p := &s.Posts[head%MaxPosts]
	p.Ch, p.N, p.CPU = ch, uint32(len(vals)), cpu
	copy(p.Vals[:], vals)
	atomic.StoreUint32(&s.PostHead, head+1)
	return true
}

// Obs copies the observation delivered with the last Read or activation
// (Idle, WriteIdle) into dst and returns the number of values and the
// virtual time it was sampled at. At an activation the coordinator delivers
// the newest sample the world has computed; when a newer one is due at
// the client's time (see Current: the world lags the robot), Read waits for
// it.
func (c *Client) Obs(dst []float64) (n int, at int64) {
	if c.shm == nil {
		return 0, 0
	}
	m := int(min(c.shm.ObsLen, MaxValues))
	return copy(dst, c.shm.Obs[:m]), c.shm.ObsTime
}

// Current reports whether the observation delivered with the last Read or
// activation (Obs) is the newest sample at the client's time: false when
// the world lags the activation and a sample newer than Obs is due at the
// client's time, which Read then waits for. A coordinator that does not say
// when its next sample is due (Shm.ObsNext 0) makes any older observation
// not current.
func (c *Client) Current() bool {
	if c.shm == nil {
		return false
	}
	if next := c.shm.ObsNext; next > 0 {
		return next > c.now
	}
	return c.shm.ObsTime >= c.now
}

// In copies the message delivered with the last activation (the newest on
// the client's first subscribed channel, see the package doc) into dst and
// returns the number of values (0: none yet) and its stamp.
func (c *Client) In(dst []float64) (n int, stamp int64) {
	if c.shm == nil {
		return 0, 0
	}
	m := int(min(c.shm.InLen, MaxValues))
	return copy(dst, c.shm.In[:m]), c.shm.InTime
}

// WriteIdle writes vals on channel ch (as Write) and idles until until (as
// Idle) in one round trip.
func (c *Client) WriteIdle(ch int, vals []float64, until int64) (now int64, err error) {
	if ch < 0 || ch > math.MaxUint32 {
		return c.now, ErrBadChannel
	}
	if len(vals) > MaxValues {
		return c.now, ErrTooMany
	}
	if c.shm == nil {
		return c.now, ErrClosed
	}
	copy(c.shm.Out[:], vals)
	c.shm.OutLen = uint32(len(vals))
	r, err := c.call(OpWriteIdle, uint32(ch), until)
	if err != nil {
		return c.now, err
	}
	c.now = r.Now
	return r.Now, nil
}

// Idle gives up the CPU until virtual time until (absolute ns); it returns
// at the activation with the client's virtual time (and an observation, see
// Obs).
func (c *Client) Idle(until int64) (now int64, err error) {
	r, err := c.call(OpIdle, 0, until)
	if err != nil {
		return c.now, err
	}
	c.now = r.Now
	return r.Now, nil
}

// Recv copies the newest message delivered to this client on channel ch
// into dst: n values (0 when none has arrived yet) stamped stamp (its
// sender's progress when it was written). It does not wait.
func (c *Client) Recv(ch int, dst []float64) (n int, stamp int64, err error) {
	if ch < 0 || ch > math.MaxUint32 {
		return 0, 0, ErrBadChannel
	}
	r, err := c.call(OpRecv, uint32(ch), 0)
	if err != nil {
		return 0, 0, err
	}
	m := int(min(r.Status, MaxValues))
	return copy(dst, c.shm.In[:m]), r.Now, nil
}

// Close unmaps the shared memory and closes the pipes; the coordinator sees
// the request pipe close.
func (c *Client) Close() error {
	err := unmapShm(c.mem)
	c.mem, c.shm = nil, nil
	err = errors.Join(err, closeFd(c.req), closeFd(c.rep))
	c.req, c.rep = -1, -1
	return err
}
