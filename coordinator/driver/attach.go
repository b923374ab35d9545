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
// TCS_ATTACH_SOCKET names another path. The socket's directory is the
// run's own (mode 0700, owned by the invoking user): not /run/tcs, which
// every user's lock files share.
const DefaultAttachSocket = "/run/tcs/attach/attach.sock"

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
	Args  []string `json:"args,omitempty"`
	Env   []string `json:"env,omitempty"`
}

// attachReady is what tcs attach says once it waits to exec: the thread
// that will.
type attachReady struct {
	Tid int `json:"tid"`
}

// attachGated is the run's answer once it has gated that thread: exec.
type attachGated struct {
	Gated bool `json:"gated"`
}

// dupConn duplicates conn's socket: the attached process's end closes with
// its exec (close-on-exec), which the duplicate sees as end of stream.
func dupConn(conn *net.UnixConn) (int, error) {
	fd, err := linux.DupConn(conn)
	if err != nil {
		return -1, fmt.Errorf("the attach connection: %w", err)
	}
	return fd, nil
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
	owner, err := linux.Invoker()
	if err != nil {
		return fmt.Errorf("attach socket: whom the run is for: %w", err)
	}
	ln, err := listenAttach(AttachSocket(), owner)
	if err != nil {
		return err
	}
	r.attachLn = ln
	r.log.Info().Str("socket", AttachSocket()).Int("uid", owner.Uid).Msg("waiting for attached clients (tcs attach)")
	return nil
}

// listenAttach listens on the attach socket path for owner: mode 0600 in
// a directory of mode 0700, both owned by owner (linux.ListenPrivate).
func listenAttach(path string, owner linux.Cred) (*net.UnixListener, error) {
	if c, err := net.DialTimeout("unix", path, 200*time.Millisecond); err == nil {
		c.Close()
		return nil, fmt.Errorf("attach socket %s: another run listens there; set TCS_ATTACH_SOCKET to another path for one of them", path)
	}
	ln, err := linux.ListenPrivate(path, owner)
	if err != nil {
		return nil, fmt.Errorf("attach socket: %w", err)
	}
	return ln, nil
}

// attachPeerOK says why a peer of the attach socket may not attach, or ""
// when it may: only the invoking user (owner) and root, whom the socket's
// modes let through, are served. Those modes keep other users out; this
// check holds when they do not (a directory loosened by hand, a socket
// passed on).
func attachPeerOK(peer, owner linux.Cred) string {
	if peer.Uid == owner.Uid || peer.Uid == 0 {
		return ""
	}
	return fmt.Sprintf("peer pid %d runs as uid %d; only uid %d (the invoking user) and root may attach", peer.Pid, peer.Uid, owner.Uid)
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
	owner, err := linux.Invoker() // as openAttach found it
	if err != nil {
		return
	}
	for {
		// (A deadline already past would not even look.)
		_ = r.attachLn.SetDeadline(time.Now().Add(time.Millisecond))
		conn, err := r.attachLn.AcceptUnix()
		if err != nil {
			return
		}
		peer, err := linux.PeerCred(conn)
		if err != nil {
			r.log.Warn().Err(err).Msg("tcs attach refused: no peer credentials")
			conn.Close()
			continue
		}
		if why := attachPeerOK(peer, owner); why != "" {
			// Another user's process: refused without an answer, and the
			// run goes on (it must not be able to stop the run).
			r.log.Warn().Int("uid", peer.Uid).Int("pid", peer.Pid).Msg("tcs attach refused: " + why)
			conn.Close()
			continue
		}
		if err := r.attach(conn, peer.Pid); err != nil {
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
func (r *runner) attach(conn *net.UnixConn, pid int) error {
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
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
	rep := attachReply{Args: r.bridge.Args(i), Env: r.bridge.Env(i)}
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
	execFd, err := dupConn(conn)
	if err != nil {
		return fmt.Errorf("pid %d as %q: %w", pid, req.Name, err)
	}
	p, err := r.mech.Adopt(pid, ready.Tid, c.conf.Name, execFd)
	if err != nil {
		return err
	}
	if err := json.NewEncoder(conn).Encode(attachGated{Gated: true}); err != nil {
		return fmt.Errorf("pid %d as %q: %w", pid, req.Name, err)
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
	rd := bufio.NewReader(conn)
	line, err := rd.ReadBytes('\n')
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
	wait := func() error {
		var g attachGated
		line, err := rd.ReadBytes('\n')
		if err == nil {
			err = json.Unmarshal(line, &g)
		}
		if err == nil && !g.Gated {
			err = errors.New("not gated")
		}
		if err != nil {
			return fmt.Errorf("the run did not take this process (see its tcs.log): %w", err)
		}
		return nil
	}
	return fail(execGated(ready, wait, path, append(argv, rep.Args...), append(os.Environ(), rep.Env...)))
}
