package driver

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/tcs-robotics/tcs/config"
	"github.com/tcs-robotics/tcs/coordinator/linux"
)

// Attaching: a client with `attach: true` is not started by tcs but by its
// launcher (roslaunch), through `tcs attach --name N -- CMD...` as the
// node's launch-prefix. tcs attach asks the run on its unix socket for the
// client's place (simulation CPU, priority, ROS arguments and environment),
// gates itself exactly as the spawn trampoline does, says so, and execs the
// node; the run adopts the process by its pid. Attaching is open during the
// start-up phase only.

// DefaultAttachSocket is where a run listens for tcs attach unless
// TCS_ATTACH_SOCKET names another path.
const DefaultAttachSocket = "/run/tcs/attach.sock"

// attachWait is how long tcs attach waits for a run to listen.
const attachWait = 30 * time.Second

// AttachSocket is the attach socket's path: $TCS_ATTACH_SOCKET, else
// DefaultAttachSocket.
func AttachSocket() string {
	if p := os.Getenv("TCS_ATTACH_SOCKET"); p != "" {
		return p
	}
	return DefaultAttachSocket
}

// attachRequest is what tcs attach says first. Fields other than Name are
// checked against the scenario when given.
type attachRequest struct {
	Name     string `json:"name"`
	Robot    string `json:"robot,omitempty"`
	Period   string `json:"period,omitempty"`
	Priority *int   `json:"priority,omitempty"`
	Class    string `json:"class,omitempty"`
}

// attachReply is the run's answer: an error, or the client's place.
type attachReply struct {
	Error string   `json:"error,omitempty"`
	CPU   int      `json:"cpu"`
	Prio  int      `json:"prio"`
	Args  []string `json:"args,omitempty"`
	Env   []string `json:"env,omitempty"`
}

// attachReady is what tcs attach says once it is gated.
type attachReady struct {
	Tid int `json:"tid"`
}

// openAttach listens on the attach socket when a client attaches.
func (r *runner) openAttach() error {
	need := false
	for _, c := range r.clients {
		need = need || c.conf.Attach
	}
	if !need {
		return nil
	}
	path := AttachSocket()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("attach socket: %w", err)
	}
	if c, err := net.DialTimeout("unix", path, 200*time.Millisecond); err == nil {
		c.Close()
		return fmt.Errorf("attach socket %s: another run listens there; set TCS_ATTACH_SOCKET to another path for one of them", path)
	}
	_ = os.Remove(path)
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return fmt.Errorf("attach socket: %w", err)
	}
	r.attachLn = ln
	r.log.Info().Str("socket", path).Msg("waiting for attached clients (tcs attach)")
	return nil
}

func (r *runner) closeAttach() {
	if r.attachLn != nil {
		r.attachLn.Close() // removes the socket file
		r.attachLn = nil
	}
}

// acceptAttach takes every tcs attach waiting on the socket, without
// blocking.
func (r *runner) acceptAttach() {
	if r.attachLn == nil {
		return
	}
	for {
		// (A deadline already past would not even look.)
		_ = r.attachLn.SetDeadline(time.Now().Add(time.Millisecond))
		conn, err := r.attachLn.AcceptUnix()
		if err != nil {
			return
		}
		if err := r.attach(conn); err != nil {
			// A launch file that does not match its scenario: the node
			// it meant will not come, so the run stops now.
			r.log.Warn().Err(err).Msg("tcs attach refused")
			if r.attachErr == nil {
				r.attachErr = fmt.Errorf("tcs attach refused: %w", err)
			}
		}
		conn.Close()
	}
}

// attach answers one tcs attach: it checks the request against the
// scenario, sends the client's place, waits until the process says it is
// gated and adopts it.
func (r *runner) attach(conn *net.UnixConn) error {
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	pid, err := linux.PeerPID(conn)
	if err != nil {
		return err
	}
	rd := bufio.NewReader(conn)
	var req attachRequest
	line, err := rd.ReadBytes('\n')
	if err == nil {
		err = json.Unmarshal(line, &req)
	}
	if err != nil {
		return fmt.Errorf("pid %d: bad request: %w", pid, err)
	}
	i, why := r.attachable(req)
	refuse := func(why string) error {
		_ = json.NewEncoder(conn).Encode(attachReply{Error: why})
		return fmt.Errorf("pid %d as %q: %s", pid, req.Name, why)
	}
	if why != "" {
		return refuse(why)
	}
	c := r.clients[i]
	rep := attachReply{CPU: r.mech.CPU(), Prio: r.mech.Base() - 3, Args: r.bridge.Args(i), Env: r.bridge.Env(i)}
	for k, v := range c.conf.Env {
		rep.Env = append(rep.Env, k+"="+v)
	}
	if err := json.NewEncoder(conn).Encode(rep); err != nil {
		return fmt.Errorf("pid %d as %q: %w", pid, req.Name, err)
	}
	var ready attachReady
	if line, err = rd.ReadBytes('\n'); err == nil {
		err = json.Unmarshal(line, &ready)
	}
	if err != nil {
		return fmt.Errorf("pid %d as %q: no word that it is gated: %w", pid, req.Name, err)
	}
	p, err := r.mech.Adopt(pid, ready.Tid, c.conf.Name)
	if err != nil {
		return err
	}
	p.LogPath = "(its launcher's)"
	p.Requeue = c.rosBE
	c.proc = p
	if err := r.mech.Release(p); err != nil { // start-up: it runs ungated
		return err
	}
	r.log.Info().Str("client", c.conf.Name).Int("pid", pid).Msg("attached")
	return nil
}

// attachable finds the client a request names, or says why it cannot
// attach.
func (r *runner) attachable(req attachRequest) (int, string) {
	i := -1
	var names []string
	for k, c := range r.clients {
		if c.conf.Attach {
			names = append(names, c.conf.Name)
		}
		if c.conf.Name == req.Name {
			i = k
		}
	}
	if i < 0 || !r.clients[i].conf.Attach {
		return -1, fmt.Sprintf("%s has no client %q with attach: true (those: %s)", r.sc.File, req.Name, strings.Join(names, ", "))
	}
	c := r.clients[i]
	if c.proc != nil {
		return -1, fmt.Sprintf("client %q is already attached (pid %d)", req.Name, c.proc.Pid)
	}
	if !r.inStartup {
		return -1, "the run is past its start-up; attach before virtual time begins"
	}
	robot := r.sc.Robots[c.robot].Name
	if req.Robot != "" && req.Robot != robot {
		return -1, fmt.Sprintf("--robot %s, but %s puts %q in robot %s", req.Robot, r.sc.File, req.Name, robot)
	}
	if req.Period != "" {
		d, err := config.ParseDuration(req.Period)
		if err != nil || d != c.conf.Period {
			return -1, fmt.Sprintf("--period %s, but %s gives %q period %s", req.Period, r.sc.File, req.Name, c.conf.Period)
		}
	}
	if req.Priority != nil && *req.Priority != c.conf.Priority {
		return -1, fmt.Sprintf("--priority %d, but %s gives %q priority %d", *req.Priority, r.sc.File, req.Name, c.conf.Priority)
	}
	if req.Class != "" && req.Class != c.conf.Class.String() {
		return -1, fmt.Sprintf("--class %s, but %s makes %q %s", req.Class, r.sc.File, req.Name, c.conf.Class)
	}
	return i, ""
}

// AttachMain is `tcs attach [--name N --robot R --period P --priority K
// --class C] -- CMD [ARGS...]`: it joins the run listening on the attach
// socket as client N and execs CMD gated, with the ROS arguments and
// environment the run gives. It returns only on error.
func AttachMain(args []string, stderr io.Writer) int {
	runtime.LockOSThread()
	fs := flag.NewFlagSet("tcs attach", flag.ContinueOnError)
	fs.SetOutput(stderr)
	name := fs.String("name", "", "the client's name in the scenario (required)")
	robot := fs.String("robot", "", "its robot (checked against the scenario)")
	period := fs.String("period", "", "its period, like 10ms (checked against the scenario)")
	prio := fs.Int("priority", -1, "its priority in its robot (checked against the scenario)")
	class := fs.String("class", "", "periodic or best-effort (checked against the scenario)")
	socket := fs.String("socket", AttachSocket(), "the run's attach socket (env TCS_ATTACH_SOCKET)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	argv := fs.Args()
	if *name == "" || len(argv) == 0 {
		fmt.Fprintln(stderr, "tcs attach: usage: tcs attach --name N [--robot R --period P --priority K --class C] -- CMD [ARGS...]")
		return 2
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "tcs attach --name %s: %v\n", *name, err)
		return 1
	}
	path, err := lookExe(argv[0])
	if err != nil {
		return fail(err)
	}
	// A launch file starts the run and its nodes together: wait for the
	// run to listen.
	var conn net.Conn
	for deadline := time.Now().Add(attachWait); ; time.Sleep(100 * time.Millisecond) {
		if conn, err = net.DialTimeout("unix", *socket, 5*time.Second); err == nil {
			break
		}
		if time.Now().After(deadline) {
			return fail(fmt.Errorf("no run listened on %s for %v (tcs run with a scenario where %s has attach: true): %w", *socket, attachWait, *name, err))
		}
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	req := attachRequest{Name: *name, Robot: *robot, Period: *period, Class: *class}
	if *prio >= 0 {
		req.Priority = prio
	}
	if err := json.NewEncoder(conn).Encode(req); err != nil {
		return fail(err)
	}
	var rep attachReply
	line, err := bufio.NewReader(conn).ReadBytes('\n')
	if err == nil {
		err = json.Unmarshal(line, &rep)
	}
	if err != nil {
		return fail(fmt.Errorf("no answer from the run on %s: %w", *socket, err))
	}
	if rep.Error != "" {
		return fail(errors.New(rep.Error))
	}
	ready := func(tid int) error { return json.NewEncoder(conn).Encode(attachReady{Tid: tid}) }
	return fail(gateAndExec(rep.CPU, rep.Prio, ready, path, append(argv, rep.Args...), append(os.Environ(), rep.Env...)))
}
