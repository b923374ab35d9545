package remote

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"

	"github.com/tcs-robotics/tcs/dynamics/sensor"
)

// Model is what Serve serves: a dynamics.World (it needs no more).
type Model interface {
	Bodies() int
	CommandLen(b int) int
	SetCommand(b int, cmd []float64)
	Step(h int64)
	Observe(b int, dst []float64) int
	Now() int64
}

// Maker makes the world Serve serves once tcs said hello: bodies bodies,
// stepped by at most step ns.
type Maker func(bodies int, step int64) (Model, error)

// Blocking returns c's socket as a file in blocking mode, for Serve: a
// world process then waits for tcs in the kernel, not through Go's
// network poller, which answers a step sooner. Close the file and c.
func Blocking(c *net.UnixConn) (*os.File, error) {
	f, err := c.File()
	if err != nil {
		return nil, fmt.Errorf("remote: %w", err)
	}
	f.Fd() // blocking mode
	return f, nil
}

// Dial connects to the socket tcs gave in $TCS_WORLD_SOCKET.
func Dial() (*net.UnixConn, error) {
	path := os.Getenv(EnvSocket)
	if path == "" {
		return nil, fmt.Errorf("remote: $%s is not set: tcs starts a world process with the socket to serve on", EnvSocket)
	}
	c, err := net.DialUnix("unixpacket", nil, &net.UnixAddr{Name: path, Net: "unixpacket"})
	if err != nil {
		return nil, fmt.Errorf("remote: %w", err)
	}
	return c, nil
}

// Serve answers tcs on conn (a connection, or its file in blocking mode:
// Blocking) until it says quit or hangs up: it makes the
// world at hello and steps it. A world that is a dynamics.Failer and
// failed answers its error; one whose reset is asked for and that is not
// a Resetter (Reset()) answers that it cannot. Serve returns nil at quit
// or hang-up, else what went wrong; a world with a Close method is
// closed at the end.
func Serve(conn io.ReadWriter, newWorld Maker) error {
	in := make([]byte, maxMessage)
	var out []byte
	var w Model
	var obs []float64
	defer func() {
		if c, ok := w.(interface{ Close() }); ok {
			c.Close()
		}
	}()
	send := func() error {
		if _, err := conn.Write(out); err != nil {
			return fmt.Errorf("remote: %w", err)
		}
		return nil
	}
	fail := func(msg string) error {
		out = putString(append(out[:0], opFailed), msg)
		return send()
	}
	block := func() {
		for b := range w.Bodies() {
			n := w.Observe(b, obs)
			out = putF64s(out, obs[:n])
		}
	}
	errOf := func() error {
		if f, ok := w.(interface{ Err() error }); ok {
			return f.Err()
		}
		return nil
	}
	var cmd []float64
	for {
		n, err := conn.Read(in)
		if errors.Is(err, io.EOF) || err == nil && n == 0 {
			return nil
		}
		if err != nil {
			return fmt.Errorf("remote: %w", err)
		}
		r := reader{b: in[1:n]}
		op := in[0]
		if w == nil && op != opHello && op != opQuit {
			return fmt.Errorf("remote: operation %q before hello", op)
		}
		switch op {
		case opHello:
			v, bodies, step := r.u32(), int(r.u32()), r.i64()
			if err := r.done(); err != nil {
				return fmt.Errorf("remote: hello: %w", err)
			}
			if v != Version {
				return fail(fmt.Sprintf("protocol version %d, this world speaks %d", v, Version))
			}
			if w != nil {
				return fail("a second hello")
			}
			m, err := newWorld(bodies, step)
			if err != nil {
				return errors.Join(err, fail(err.Error()))
			}
			w = m
			obs = make([]float64, MaxValues)
			out = le.AppendUint32(append(out[:0], opHelloOK), Version)
			out = le.AppendUint32(out, uint32(w.Bodies()))
			var flags uint32
			if _, ok := w.(interface{ Reset() }); ok {
				flags |= flagReset
			}
			out = le.AppendUint32(out, flags)
			for b := range w.Bodies() {
				out = le.AppendUint16(out, uint16(w.CommandLen(b)))
				var names []string
				if jn, ok := w.(interface{ JointNames(int) []string }); ok {
					names = jn.JointNames(b)
				}
				out = le.AppendUint16(out, uint16(len(names)))
				for _, s := range names {
					out = putString(out, s)
				}
				var groups []sensor.Sensor
				if sg, ok := w.(interface{ SensorGroups(int) []sensor.Sensor }); ok {
					groups = sg.SensorGroups(b)
				}
				out = le.AppendUint16(out, uint16(len(groups)))
				for _, g := range groups {
					out = append(putString(putString(out, g.Name), g.Frame), byte(g.Kind))
					for _, at := range g.At {
						out = le.AppendUint32(out, uint32(int32(at)))
					}
				}
			}
			block()
			if err := send(); err != nil {
				return err
			}
		case opCommand:
			b := r.u16()
			n := r.f64s(obs)
			if err := r.done(); err != nil {
				return fmt.Errorf("remote: command: %w", err)
			}
			cmd = append(cmd[:0], obs[:n]...)
			w.SetCommand(b, cmd)
		case opStep:
			h := r.i64()
			if err := r.done(); err != nil {
				return fmt.Errorf("remote: step: %w", err)
			}
			w.Step(h)
			if err := errOf(); err != nil {
				if err := fail(err.Error()); err != nil {
					return err
				}
				continue
			}
			out = le.AppendUint64(append(out[:0], opStepped), uint64(w.Now()))
			block()
			if err := send(); err != nil {
				return err
			}
		case opReset:
			rs, ok := w.(interface{ Reset() })
			if !ok {
				if err := fail("this world cannot reset its bodies"); err != nil {
					return err
				}
				continue
			}
			rs.Reset()
			out = le.AppendUint64(append(out[:0], opStepped), uint64(w.Now()))
			block()
			if err := send(); err != nil {
				return err
			}
		case opQuit:
			return nil
		default:
			return fmt.Errorf("remote: unknown operation %q", op)
		}
	}
}
