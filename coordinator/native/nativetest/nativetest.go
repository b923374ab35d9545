// Package nativetest serves one native client process in lockstep with a
// dynamics.World, without the real coordinator: computation costs no
// virtual time, and the world moves only when the client idles. It is for
// tests of native clients (the bundled controllers, C clients), like
// net/http/httptest is for HTTP handlers; it is not the coordinator.
package nativetest

import (
	"errors"
	"fmt"
	"io"
	"os/exec"
	"time"

	"github.com/tcs-robotics/tcs/coordinator/native"
	"github.com/tcs-robotics/tcs/dynamics"
)

// Server is a lockstep fake coordinator for one client. Set its fields
// before Start.
type Server struct {
	// World is stepped to the client's progress on every read, command and
	// idle; Body is the body the client observes and commands.
	World dynamics.World
	Body  int
	// Step is the largest step the world is given, ns.
	Step int64
	// Period is the client's period given at hello, ns (0: best-effort).
	Period int64
	// End: an idle past End is answered with StatusShutdown and Run returns
	// once the client exits.
	End int64
	// MaxRequests, when > 0, ends Run after that many requests: the client
	// is killed (for clients that never idle).
	MaxRequests int
	// Timeout bounds the wait for each request (default 10 s).
	Timeout time.Duration
	// OnRead, if set, is called with the client's progress and observation
	// at every read.
	OnRead func(now int64, obs []float64)

	ep       *native.Endpoint
	cmd      *exec.Cmd
	progress int64
	requests int
	inbox    map[uint32]message
	written  map[uint32]*Written
}

type message struct {
	stamp int64
	vals  []float64
}

// Written is what the client wrote on one channel.
type Written struct {
	Count int       // number of writes
	Last  []float64 // the last message
	Stamp int64     // its stamp (the client's progress)
}

// Start creates the endpoint and starts cmd with it (fds 3, 4, 5 and
// TCS_NATIVE added to cmd).
func (s *Server) Start(cmd *exec.Cmd) error {
	if s.Step <= 0 {
		return errors.New("nativetest: Step must be > 0")
	}
	ep, files, err := native.NewEndpoint()
	if err != nil {
		return err
	}
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	cmd.ExtraFiles = append(files, cmd.ExtraFiles...)
	if cmd.Env == nil {
		cmd.Env = cmd.Environ()
	}
	cmd.Env = append(cmd.Env, native.Env(3))
	if err := cmd.Start(); err != nil {
		ep.Close()
		return fmt.Errorf("nativetest: start %s: %w", cmd.Path, err)
	}
	s.ep, s.cmd = ep, cmd
	if s.written == nil {
		s.written = map[uint32]*Written{}
	}
	return nil
}

// Send makes vals the newest message on channel ch for the client, stamped
// stamp (before or during Run).
func (s *Server) Send(ch uint32, stamp int64, vals []float64) {
	if s.inbox == nil {
		s.inbox = map[uint32]message{}
	}
	s.inbox[ch] = message{stamp: stamp, vals: append([]float64(nil), vals...)}
}

// Written returns what the client wrote on channel ch (nil: nothing).
func (s *Server) Written(ch uint32) *Written { return s.written[ch] }

// Progress is the client's virtual time.
func (s *Server) Progress() int64 { return s.progress }

// Requests is the number of requests served.
func (s *Server) Requests() int { return s.requests }

// ExitError is returned by Run when the client exited with a nonzero code.
type ExitError struct{ Code int }

func (e *ExitError) Error() string {
	return fmt.Sprintf("nativetest: client exited with code %d", e.Code)
}

// Run serves the client until it exits (after a shutdown reply, or by
// itself) or MaxRequests is reached; it returns the client's exit as an
// *ExitError when nonzero.
func (s *Server) Run() error {
	defer s.ep.Close()
	timeout := s.Timeout
	if timeout == 0 {
		timeout = 10 * time.Second
	}
	for {
		if s.MaxRequests > 0 && s.requests >= s.MaxRequests {
			s.cmd.Process.Kill()
			s.cmd.Wait()
			return nil
		}
		req, err := s.ep.WaitRequest(timeout)
		if errors.Is(err, io.EOF) {
			return s.wait()
		}
		if err != nil {
			s.cmd.Process.Kill()
			s.cmd.Wait()
			return fmt.Errorf("nativetest: after %d requests: %w", s.requests, err)
		}
		s.requests++
		r := s.serve(req)
		if err := s.ep.Reply(r); err != nil && !native.ClientGone(err) {
			s.cmd.Process.Kill()
			s.cmd.Wait()
			return err
		}
	}
}

func (s *Server) wait() error {
	err := s.cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return &ExitError{Code: ee.ExitCode()}
	}
	return err
}

func (s *Server) stepTo(t int64) {
	for now := s.World.Now(); now < t; now = s.World.Now() {
		s.World.Step(min(s.Step, t-now))
	}
}

// observe fills the shared memory's observation with the world's state at
// its current time, as a Read reply and an activation do.
func (s *Server) observe(shm *native.Shm) {
	shm.ObsLen = uint32(s.World.Observe(s.Body, shm.Obs[:]))
	shm.ObsTime = s.World.Now()
	shm.ObsNext = 0
	if s.Step > 0 {
		shm.ObsNext = shm.ObsTime + s.Step
	}
	if s.OnRead != nil {
		s.OnRead(s.progress, shm.Obs[:shm.ObsLen])
	}
}

// idle answers OpIdle and OpWriteIdle: the world steps to the wake time and
// the activation comes with its observation.
func (s *Server) idle(req native.Request, r native.Reply, shm *native.Shm) native.Reply {
	if s.End > 0 && req.Arg > s.End {
		r.Status = native.StatusShutdown
		return r
	}
	s.progress = max(s.progress, req.Arg)
	s.stepTo(s.progress)
	s.observe(shm)
	r.Now = s.progress
	return r
}

func (s *Server) serve(req native.Request) native.Reply {
	r := native.Reply{Op: req.Op, Now: s.progress}
	if st := req.Check(); st != native.StatusOK {
		r.Status = st
		return r
	}
	shm := s.ep.Shm()
	switch req.Op {
	case native.OpHello:
		if req.Arg != native.Version {
			r.Status = native.StatusBadVersion
		}
		shm.Period = s.Period
	case native.OpRead:
		s.stepTo(s.progress)
		s.observe(shm)
	case native.OpWrite, native.OpWriteIdle:
		n := req.Arg
		if req.Op == native.OpWriteIdle {
			n = int64(min(shm.OutLen, native.MaxValues))
		}
		vals := shm.Out[:n]
		if req.Ch == 0 {
			s.stepTo(s.progress)
			s.World.SetCommand(s.Body, vals)
		}
		w := s.written[req.Ch]
		if w == nil {
			w = &Written{}
			s.written[req.Ch] = w
		}
		w.Count++
		w.Last = append(w.Last[:0], vals...)
		w.Stamp = s.progress
		if req.Op == native.OpWriteIdle {
			return s.idle(req, r, shm)
		}
	case native.OpIdle:
		return s.idle(req, r, shm)
	case native.OpRecv:
		m := s.inbox[req.Ch]
		r.Status = uint32(copy(shm.In[:], m.vals))
		r.Now = m.stamp
	}
	return r
}
