package remote

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/tcs-robotics/tcs/dynamics/sensor"
)

// Conf says where the world is and how long to wait for it.
type Conf struct {
	// Cmd starts the world process: tcs listens on a socket of its own and
	// gives its path in the environment as TCS_WORLD_SOCKET (Accept).
	Cmd []string
	// Socket is the path of a world already serving (exclusive with Cmd).
	Socket string
	// Timeout bounds the wait for the world's start and hello; default
	// 10 s. A world that stops answering later holds the run until the
	// stall watchdog ends it (stall_timeout), killing a process tcs
	// started.
	Timeout time.Duration
}

// EnvSocket is the environment variable that gives a world process the
// socket to connect to.
const EnvSocket = "TCS_WORLD_SOCKET"

// ErrWorld wraps what the world reported or did wrong.
var ErrWorld = errors.New("remote world")

// World is a world served by another process (see the package doc).
type World struct {
	conf Conf
	name string // what the errors call it: the command or the socket
	conn *net.UnixConn
	// sock is the connection in blocking mode after the hello, so that
	// the dispatch thread waits for an answer in the kernel and is woken
	// by it directly, not through Go's network poller and scheduler.
	sock   *os.File
	proc   *exec.Cmd
	dir    string        // the listening socket's folder (Cmd)
	stderr *output       // the process's output (Cmd), for errors
	exited chan struct{} // closed when proc ended

	bodies   int
	step     int64
	now      int64
	cmdLen   []int
	joints   [][]string
	sensors  [][]sensor.Sensor
	obs      [][]float64
	obsN     []int
	canReset bool
	err      error
	out, in  []byte
	deadline time.Duration
}

// New starts or connects to the world and says hello: bodies bodies,
// stepped by at most step ns.
func New(conf Conf, bodies int, step int64) (*World, error) {
	if (len(conf.Cmd) == 0) == (conf.Socket == "") {
		return nil, fmt.Errorf("%w: give one of params cmd (a command that serves the world) and socket (where one serves)", ErrWorld)
	}
	if bodies < 1 || bodies > MaxBodies {
		return nil, fmt.Errorf("%w: %d bodies, want 1 to %d", ErrWorld, bodies, MaxBodies)
	}
	if conf.Timeout <= 0 {
		conf.Timeout = 10 * time.Second
	}
	w := &World{conf: conf, bodies: bodies, step: step, deadline: conf.Timeout,
		out: make([]byte, 0, 16+8*MaxValues), in: make([]byte, maxMessage)}
	var err error
	if len(conf.Cmd) > 0 {
		w.name = strings.Join(conf.Cmd, " ")
		err = w.start()
	} else {
		w.name = conf.Socket
		err = w.dial()
	}
	if err == nil {
		err = w.hello()
	}
	if err != nil {
		w.Close()
		return nil, err
	}
	return w, nil
}

func (w *World) dial() error {
	c, err := net.DialUnix("unixpacket", nil, &net.UnixAddr{Name: w.conf.Socket, Net: "unixpacket"})
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrWorld, w.name, err)
	}
	w.conn = c
	return nil
}

// start listens on a socket in a private folder, starts the command with
// its path in the environment (from a fresh goroutine: see the package
// doc) and waits for it to connect.
func (w *World) start() error {
	dir, err := os.MkdirTemp("", "tcs-world-")
	if err != nil {
		return fmt.Errorf("%w: %v", ErrWorld, err)
	}
	w.dir = dir
	path := filepath.Join(dir, "world.sock")
	l, err := net.ListenUnix("unixpacket", &net.UnixAddr{Name: path, Net: "unixpacket"})
	if err != nil {
		return fmt.Errorf("%w: %v", ErrWorld, err)
	}
	defer l.Close()
	prog := w.conf.Cmd[0]
	if prog == "tcs" { // tcs itself, as in a client's cmd
		if self, err := os.Executable(); err == nil {
			prog = self
		}
	}
	cmd := exec.Command(prog, w.conf.Cmd[1:]...)
	cmd.Env = append(os.Environ(), EnvSocket+"="+path)
	w.stderr = &output{}
	cmd.Stdout, cmd.Stderr = w.stderr, w.stderr
	started := make(chan error, 1)
	go func() { started <- cmd.Start() }()
	if err := <-started; err != nil {
		return fmt.Errorf("%w: %s: %v", ErrWorld, w.name, err)
	}
	w.proc = cmd
	w.exited = make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(w.exited)
		l.Close() // a world that never connected: Accept returns
	}()
	if err := l.SetDeadline(time.Now().Add(w.deadline)); err != nil {
		return fmt.Errorf("%w: %v", ErrWorld, err)
	}
	c, err := l.AcceptUnix()
	if err != nil {
		select {
		case <-w.exited:
			return fmt.Errorf("%w: %s ended (%s) before connecting to $%s%s", ErrWorld, w.name, cmd.ProcessState, EnvSocket, w.output())
		default:
			return fmt.Errorf("%w: %s did not connect to $%s within %s%s", ErrWorld, w.name, EnvSocket, w.deadline, w.output())
		}
	}
	w.conn = c
	return nil
}

// output keeps the last 2,000 bytes a world process wrote; exec's copying
// goroutine writes while an error reads.
type output struct {
	mu sync.Mutex
	b  []byte
}

func (o *output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.b = append(o.b, p...)
	if len(o.b) > 4000 {
		o.b = append(o.b[:0], o.b[len(o.b)-2000:]...)
	}
	return len(p), nil
}

// output is the end of the world process's output, for an error.
func (w *World) output() string {
	if w.stderr == nil {
		return ""
	}
	w.stderr.mu.Lock()
	s := strings.TrimSpace(string(w.stderr.b))
	w.stderr.mu.Unlock()
	if s == "" {
		return ""
	}
	if len(s) > 2000 {
		s = "..." + s[len(s)-2000:]
	}
	return "; its output:\n" + s
}

// send writes w.out as one packet.
func (w *World) send() error {
	var err error
	if w.sock != nil {
		_, err = w.sock.Write(w.out)
	} else {
		_, err = w.conn.Write(w.out)
	}
	if err != nil {
		return fmt.Errorf("%w: %s: %v%s", ErrWorld, w.name, err, w.exitNote())
	}
	return nil
}

// recv reads one packet into w.in, waiting at most the timeout, and
// returns a reader of it after its operation, which must be want (or the
// world's failure).
func (w *World) recv(want byte, what string) (reader, error) {
	var n int
	var err error
	if w.sock != nil {
		n, err = w.sock.Read(w.in)
	} else {
		if err := w.conn.SetReadDeadline(time.Now().Add(w.deadline)); err != nil {
			return reader{}, fmt.Errorf("%w: %s: %v", ErrWorld, w.name, err)
		}
		n, err = w.conn.Read(w.in)
	}
	switch {
	case err != nil:
		return reader{}, fmt.Errorf("%w: %s: no answer to %s: %v%s", ErrWorld, w.name, what, err, w.exitNote())
	case n == 0:
		return reader{}, fmt.Errorf("%w: %s closed the connection at %s%s", ErrWorld, w.name, what, w.exitNote())
	}
	r := reader{b: w.in[1:n]}
	switch w.in[0] {
	case want:
		return r, nil
	case opFailed:
		return reader{}, fmt.Errorf("%w: %s failed at %s: %s", ErrWorld, w.name, what, r.string())
	}
	return reader{}, fmt.Errorf("%w: %s answered %s with operation %q, want %q", ErrWorld, w.name, what, w.in[0], want)
}

// exitNote says how the world process ended, if it did.
func (w *World) exitNote() string {
	if w.exited == nil {
		return ""
	}
	select {
	case <-w.exited:
		return fmt.Sprintf(" (the process ended: %s)%s", w.proc.ProcessState, w.output())
	case <-time.After(100 * time.Millisecond):
		return ""
	}
}

func (w *World) hello() error {
	w.out = append(w.out[:0], opHello)
	w.out = le.AppendUint32(w.out, Version)
	w.out = le.AppendUint32(w.out, uint32(w.bodies))
	w.out = le.AppendUint64(w.out, uint64(w.step))
	if err := w.send(); err != nil {
		return err
	}
	r, err := w.recv(opHelloOK, "hello")
	if err != nil {
		return err
	}
	if v := r.u32(); v != Version {
		return fmt.Errorf("%w: %s speaks protocol version %d, tcs %d", ErrWorld, w.name, v, Version)
	}
	if n := int(r.u32()); n != w.bodies && r.err == nil {
		return fmt.Errorf("%w: %s has %d bodies, the scenario %d robots", ErrWorld, w.name, n, w.bodies)
	}
	w.canReset = r.u32()&flagReset != 0
	w.cmdLen = make([]int, w.bodies)
	w.joints = make([][]string, w.bodies)
	w.sensors = make([][]sensor.Sensor, w.bodies)
	for b := range w.bodies {
		w.cmdLen[b] = r.u16()
		nj := r.u16()
		for range nj {
			w.joints[b] = append(w.joints[b], r.string())
		}
		ns := r.u16()
		for range ns {
			s := sensor.Sensor{Name: r.string(), Frame: r.string(), Kind: sensor.Kind(r.u8())}
			for p := range s.At {
				s.At[p] = int(int32(r.u32()))
			}
			w.sensors[b] = append(w.sensors[b], s)
		}
		if w.cmdLen[b] > MaxValues {
			return fmt.Errorf("%w: %s: body %d takes %d command values, at most %d", ErrWorld, w.name, b, w.cmdLen[b], MaxValues)
		}
	}
	w.obs = make([][]float64, w.bodies)
	w.obsN = make([]int, w.bodies)
	for b := range w.obs {
		w.obs[b] = make([]float64, MaxValues)
	}
	w.readObs(&r)
	if err := r.done(); err != nil {
		return fmt.Errorf("%w: %s: hello: %v", ErrWorld, w.name, err)
	}
	f, err := w.conn.File()
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrWorld, w.name, err)
	}
	f.Fd() // blocking mode (the connection's too: they share it)
	w.sock = f
	return nil
}

// readObs reads an observation block into the cache.
func (w *World) readObs(r *reader) {
	for b := range w.bodies {
		w.obsN[b] = r.f64s(w.obs[b])
	}
}

// Pid is the world process's id when tcs started it (Conf.Cmd), else 0.
func (w *World) Pid() int {
	if w.proc == nil || w.proc.Process == nil {
		return 0
	}
	return w.proc.Process.Pid
}

// Bodies implements dynamics.World.
func (w *World) Bodies() int { return w.bodies }

// CommandLen implements dynamics.World: as the world said in its hello.
func (w *World) CommandLen(b int) int {
	if b < 0 || b >= w.bodies {
		return 0
	}
	return w.cmdLen[b]
}

// ObservationLen implements dynamics.World: the length of the body's
// observation in the world's hello.
func (w *World) ObservationLen(b int) int {
	if b < 0 || b >= w.bodies {
		return 0
	}
	return w.obsN[b]
}

// JointNames implements dynamics.JointNamer: the names of the world's
// hello; nil when it named none.
func (w *World) JointNames(b int) []string {
	if b < 0 || b >= w.bodies {
		return nil
	}
	return w.joints[b]
}

// SensorGroups implements dynamics.Sensorer: the sensors of the world's
// hello; nil when it named none.
func (w *World) SensorGroups(b int) []sensor.Sensor {
	if b < 0 || b >= w.bodies {
		return nil
	}
	return w.sensors[b]
}

// SetCommand implements dynamics.World: the command goes to the world now
// (no answer). Extra values are cut to the body's command length.
func (w *World) SetCommand(b int, cmd []float64) {
	if w.err != nil || b < 0 || b >= w.bodies {
		return
	}
	cmd = cmd[:min(len(cmd), w.cmdLen[b])]
	w.out = append(w.out[:0], opCommand)
	w.out = le.AppendUint16(w.out, uint16(b))
	w.out = putF64s(w.out, cmd)
	w.err = w.send()
}

// Step implements dynamics.World: the world advances by h and answers with
// its time and observations. Once it failed (Err) only the time goes on.
func (w *World) Step(h int64) {
	if h <= 0 {
		return
	}
	w.now += h
	if w.err != nil {
		return
	}
	w.out = append(w.out[:0], opStep)
	w.out = le.AppendUint64(w.out, uint64(h))
	if w.err = w.send(); w.err != nil {
		return
	}
	r, err := w.recv(opStepped, "a step")
	if err != nil {
		w.err = err
		return
	}
	now := r.i64()
	w.readObs(&r)
	if err := r.done(); err != nil {
		w.err = fmt.Errorf("%w: %s: a step: %v", ErrWorld, w.name, err)
		return
	}
	if now != w.now {
		w.err = fmt.Errorf("%w: %s is at %d ns after a step to %d ns", ErrWorld, w.name, now, w.now)
	}
}

// Observe implements dynamics.World: body b's observation of the world's
// last answer.
func (w *World) Observe(b int, dst []float64) int {
	if b < 0 || b >= w.bodies {
		return 0
	}
	return copy(dst, w.obs[b][:w.obsN[b]])
}

// Now implements dynamics.World.
func (w *World) Now() int64 { return w.now }

// Err implements dynamics.Failer: what the world or its connection did
// wrong, first; nil until then.
func (w *World) Err() error { return w.err }

// CanReset reports whether the world said in its hello that it can reset
// its bodies.
func (w *World) CanReset() bool { return w.canReset }

// Reset implements dynamics.Resetter: the world puts its bodies back; one
// that cannot (CanReset) is not asked.
func (w *World) Reset() {
	if w.err != nil || !w.canReset {
		return
	}
	w.out = append(w.out[:0], opReset)
	if w.err = w.send(); w.err != nil {
		return
	}
	r, err := w.recv(opStepped, "a reset")
	if err != nil {
		w.err = err
		return
	}
	r.i64()
	w.readObs(&r)
	if err := r.done(); err != nil {
		w.err = fmt.Errorf("%w: %s: a reset: %v", ErrWorld, w.name, err)
	}
}

// Close implements dynamics.Closer: it says quit, closes the connection
// and waits up to the timeout for the world process to end (then kills
// it).
func (w *World) Close() {
	if w.conn != nil {
		w.out = append(w.out[:0], opQuit)
		_ = w.send()
		if w.sock != nil {
			w.sock.Close()
			w.sock = nil
		}
		w.conn.Close()
		w.conn = nil
	}
	if w.proc != nil {
		select {
		case <-w.exited:
		case <-time.After(w.deadline):
			_ = w.proc.Process.Kill()
			<-w.exited
		}
		w.proc = nil
	}
	if w.dir != "" {
		os.RemoveAll(w.dir)
		w.dir = ""
	}
}
