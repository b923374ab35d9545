//go:build ros2

package bench

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed" // the Fast DDS readers' source
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"golang.org/x/sys/unix"

	"github.com/tcs-robotics/tcs/bridge/layout"
	"github.com/tcs-robotics/tcs/bridge/ros2"
	"github.com/tcs-robotics/tcs/msgs"
	rmsgs "github.com/tcs-robotics/tcs/msgs/ros2"
)

//go:embed c/fastdds_readers.cpp
var fastddsReadersSrc []byte

//go:embed c/rawtype.hpp
var rawTypeHdr []byte

func init() { deliveryROS2 = runDeliveryROS2 }

// runDeliveryROS2 is the ROS 2 part of Delivery. It builds (once, cached)
// and starts c/fastdds_readers.cpp: one process holding o.Subscribers Fast
// DDS participants configured like rmw_fastrtps, each reading its private
// clock (so that the gate knows it as a client) and the robot's
// JointState. It then publishes, through a real bridge/ros2 Gate on a
// loopback-bound Cyclone participant, warm-up samples until every reader
// has one and the gate reaches every client, and o.Messages samples paced
// at o.Rate, timing each Gate.Sample call. Arrival times come back from the
// readers (CLOCK_MONOTONIC, the clock Go's monotonic time reads).
//
// The readers are in another process because Cyclone delivers to readers
// of its own process without any socket: in-process readers would time a
// memory copy, not a delivery. The bench runs on its own DDS domain and
// names its robot and clients after its PID, so that other DDS users on
// the host neither see its samples nor disturb its count of reached
// clients.
func runDeliveryROS2(o DeliveryOpts) (*ROS2Delivery, error) {
	if o.Subscribers > 64 {
		return nil, fmt.Errorf("%d subscribers: the ROS 2 gate tells at most 64 clients apart", o.Subscribers)
	}
	bin, err := buildFastDDSReaders()
	if err != nil {
		return nil, err
	}
	pid := os.Getpid()
	domain := 60 + pid%40 // below the ephemeral port range, off the default 0
	robot := fmt.Sprintf("bench%d", pid)
	clients := make([]ros2.GateClient, o.Subscribers)
	args := []string{strconv.Itoa(o.Messages), strconv.FormatInt(msgs.Epoch, 10), "rt" + layout.SensorTopic(robot)}
	for i := range clients {
		clients[i] = ros2.GateClient{Name: fmt.Sprintf("%s_sub%d", robot, i), Robot: 0, ROS: true}
		args = append(args, "rt"+layout.ClockTopic(clients[i].Name))
	}

	// The readers first: the bridge's participant then finds them with its
	// first discovery round.
	budget := 2*time.Minute + time.Duration(o.Messages)*time.Second/time.Duration(o.Rate)
	ctx, cancel := context.WithTimeout(context.Background(), budget)
	defer cancel()
	rd, err := startReaders(ctx, bin, args, domain)
	if err != nil {
		return nil, err
	}
	defer rd.stop()
	if err := rd.waitUp(20 * time.Second); err != nil {
		return nil, err
	}

	node, err := ros2.NewNode(ros2.NodeConf{Domain: domain, Name: robot})
	if err != nil {
		return nil, fmt.Errorf("bridge node: %w", err)
	}
	defer node.Close()
	names := jointNames(o.Joints)
	g, err := ros2.NewGate(ros2.GateConf{Node: node, Robots: []ros2.GateRobot{{Name: robot, Joints: names, Commands: 1}},
		Clients: clients, Log: zerolog.Nop()})
	if err != nil {
		return nil, fmt.Errorf("bridge gate: %w", err)
	}
	defer g.Close()

	obs := make([]float64, 2*o.Joints)
	reached := 0
	count := func(int) { reached++ }
	every := func(int) bool { return true } // every sample to every client
	n := o.Messages

	// Warm up until every reader has a sample and the gate reaches every
	// client.
	deadline := time.Now().Add(30 * time.Second)
	for {
		reached = 0
		g.Sample(0, int64(n), obs, every, count)
		if reached == o.Subscribers && rd.warmCount() == o.Subscribers {
			break
		}
		if time.Now().After(deadline) {
			miss, _, _ := g.Waiting()
			return nil, fmt.Errorf("readers not all matched after 30 s (gate reaches %d of %d, %d warm; %s)%s",
				reached, o.Subscribers, rd.warmCount(), strings.Join(miss, "; "), rd.stderrTail())
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond)

	// since and mono0 put Go's clock and the readers' on one scale.
	epoch, mono0 := clocks()
	since := func() int64 { return int64(time.Since(epoch)) }
	calls := make([]int64, 0, n)
	sent := make([]int64, n)
	period := time.Second / time.Duration(o.Rate)
	next := time.Now()
	for k := range n {
		next = next.Add(period)
		time.Sleep(time.Until(next))
		for j := range o.Joints {
			obs[j] = float64(k) * 1e-3
		}
		reached = 0
		t0 := since()
		g.Sample(0, int64(k), obs, every, count)
		t1 := since()
		if reached != o.Subscribers {
			return nil, fmt.Errorf("gated message %d reached %d of %d readers", k, reached, o.Subscribers)
		}
		calls = append(calls, t1-t0)
		sent[k] = t0
	}
	time.Sleep(500 * time.Millisecond)
	arrivals, err := rd.finish(n, o.Subscribers)
	if err != nil {
		return nil, err
	}
	all, lost := lastArrivals(arrivals, sent, mono0)
	for k, d := range all {
		if d < 0 {
			return nil, fmt.Errorf("a message was taken %d ns before it was sent (the %d-th delivered): the readers' clock is not Go's monotonic clock", -d, k+1)
		}
	}
	pos, vel := obs[:o.Joints], obs[o.Joints:]
	return &ROS2Delivery{
		GatedCall: stats(calls), GatedAll: stats(all), GatedLost: lost,
		Bytes:   len(rmsgs.AppendJointState(nil, msgs.Epoch, "", names, pos, vel, nil)),
		Readers: fmt.Sprintf("%d Fast DDS readers (rmw_fastrtps QoS, reliable, one participant each) in another process", o.Subscribers),
	}, nil
}

// clocks returns a time.Time and the CLOCK_MONOTONIC reading (ns) of the
// same instant, to within the few hundred ns the two reads take.
func clocks() (time.Time, int64) {
	var a, b unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &a)
	t := time.Now()
	_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &b)
	return t, (a.Nano() + b.Nano()) / 2
}

// buildFastDDSReaders compiles c/fastdds_readers.cpp with $CXX (default
// g++) into the user's cache folder, once per version of the source, and
// returns the program's path.
func buildFastDDSReaders() (string, error) {
	sum := sha256.Sum256(append(append([]byte(nil), fastddsReadersSrc...), rawTypeHdr...))
	dir, err := os.UserCacheDir()
	if err == nil {
		dir = filepath.Join(dir, "tcs")
		err = os.MkdirAll(dir, 0o755)
	}
	if err != nil {
		dir = os.TempDir()
	}
	bin := filepath.Join(dir, "bench-fastdds-readers-"+hex.EncodeToString(sum[:6]))
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	tmp, err := os.MkdirTemp(dir, "build-")
	if err != nil {
		return "", fmt.Errorf("build the Fast DDS readers: %w", err)
	}
	defer os.RemoveAll(tmp)
	src := filepath.Join(tmp, "fastdds_readers.cpp")
	if err := os.WriteFile(src, fastddsReadersSrc, 0o644); err != nil {
		return "", fmt.Errorf("build the Fast DDS readers: %w", err)
	}
	if err := os.WriteFile(filepath.Join(tmp, "rawtype.hpp"), rawTypeHdr, 0o644); err != nil {
		return "", fmt.Errorf("build the Fast DDS readers: %w", err)
	}
	cxx := os.Getenv("CXX")
	if cxx == "" {
		cxx = "g++"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out := filepath.Join(tmp, "fastdds_readers")
	if b, err := exec.CommandContext(ctx, cxx, "-O2", "-std=c++17", src, "-o", out, "-lfastrtps", "-lfastcdr").CombinedOutput(); err != nil {
		return "", fmt.Errorf("build the Fast DDS readers with %s (apt-get install g++ libfastrtps-dev libfastcdr-dev): %w\n%s", cxx, err, b)
	}
	// Rename is atomic: a concurrent run sees the whole program or none.
	if err := os.Rename(out, bin); err != nil {
		return "", fmt.Errorf("build the Fast DDS readers: %w", err)
	}
	return bin, nil
}

// readers is the running fastdds_readers process.
type readers struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr *tailBuffer
	up     chan struct{}
	done   chan struct{} // stdout closed

	mu    sync.Mutex
	warm  map[int]bool
	lines []string // "a I K NS" and "end"
	bad   string   // the first unexpected line
}

func startReaders(ctx context.Context, bin string, args []string, domain int) (*readers, error) {
	r := &readers{up: make(chan struct{}), done: make(chan struct{}), warm: map[int]bool{}, stderr: &tailBuffer{max: 4096}}
	r.cmd = exec.CommandContext(ctx, bin, args...)
	r.cmd.Env = append(os.Environ(), fmt.Sprintf("ROS_DOMAIN_ID=%d", domain), "ROS_LOCALHOST_ONLY=1")
	r.cmd.Stderr = r.stderr
	var err error
	if r.stdin, err = r.cmd.StdinPipe(); err != nil {
		return nil, fmt.Errorf("start the Fast DDS readers: %w", err)
	}
	out, err := r.cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("start the Fast DDS readers: %w", err)
	}
	if err := r.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the Fast DDS readers %s: %w", bin, err)
	}
	go r.read(out)
	return r, nil
}

func (r *readers) read(out io.Reader) {
	defer close(r.done)
	sc := bufio.NewScanner(out)
	upped := false
	for sc.Scan() {
		line := sc.Text()
		f := strings.Fields(line)
		r.mu.Lock()
		switch {
		case len(f) == 2 && f[0] == "up" && !upped:
			upped = true
			close(r.up)
		case len(f) == 2 && f[0] == "warm":
			if i, err := strconv.Atoi(f[1]); err == nil {
				r.warm[i] = true
			}
		case len(f) == 4 && f[0] == "a", line == "end":
			r.lines = append(r.lines, line)
		default:
			if r.bad == "" {
				r.bad = line
			}
		}
		r.mu.Unlock()
	}
}

func (r *readers) waitUp(limit time.Duration) error {
	select {
	case <-r.up:
		return nil
	case <-r.done:
		return fmt.Errorf("the Fast DDS readers exited before they were up%s", r.stderrTail())
	case <-time.After(limit):
		return fmt.Errorf("the Fast DDS readers not up after %v%s", limit, r.stderrTail())
	}
}

func (r *readers) warmCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.warm)
}

// finish closes the readers' stdin and collects what they got:
// arrivals[k][i] is when reader i took message k (CLOCK_MONOTONIC ns), 0
// when it never did.
func (r *readers) finish(n, subs int) ([][]int64, error) {
	_ = r.stdin.Close()
	select {
	case <-r.done:
	case <-time.After(30 * time.Second):
		return nil, fmt.Errorf("the Fast DDS readers did not report within 30 s%s", r.stderrTail())
	}
	if err := r.cmd.Wait(); err != nil {
		return nil, fmt.Errorf("the Fast DDS readers: %w%s", err, r.stderrTail())
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.bad != "" {
		return nil, fmt.Errorf("the Fast DDS readers printed %q", r.bad)
	}
	if len(r.lines) == 0 || r.lines[len(r.lines)-1] != "end" {
		return nil, fmt.Errorf("the Fast DDS readers' report is cut short%s", r.stderrTail())
	}
	arr := make([][]int64, n)
	for k := range arr {
		arr[k] = make([]int64, subs)
	}
	for _, line := range r.lines[:len(r.lines)-1] {
		f := strings.Fields(line)
		i, err1 := strconv.Atoi(f[1])
		k, err2 := strconv.Atoi(f[2])
		t, err3 := strconv.ParseInt(f[3], 10, 64)
		if err := errors.Join(err1, err2, err3); err != nil || i < 0 || i >= subs || k < 0 || k >= n {
			return nil, fmt.Errorf("the Fast DDS readers' line %q: out of range or malformed", line)
		}
		arr[k][i] = t
	}
	return arr, nil
}

// stop ends the readers if they still run (after an error).
func (r *readers) stop() {
	if r.cmd.ProcessState == nil {
		_ = r.stdin.Close()
		_ = r.cmd.Process.Kill()
		_ = r.cmd.Wait()
	}
}

func (r *readers) stderrTail() string {
	s := strings.TrimSpace(r.stderr.String())
	if s == "" {
		return ""
	}
	return "\nreaders' stderr:\n" + s
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   bytes.Buffer
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b.Write(p)
	if over := t.b.Len() - t.max; over > 0 {
		t.b.Next(over)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.b.String()
}
