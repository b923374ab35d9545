package remote_test

import (
	"errors"
	"math"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tcs-robotics/tcs/dynamics"
	"github.com/tcs-robotics/tcs/dynamics/remote"
	"github.com/tcs-robotics/tcs/dynamics/sensor"
)

const ms = int64(time.Millisecond)

// serveOn listens on a socket in a temporary folder and serves each
// connection with newWorld; it returns the socket's path.
func serveOn(t testing.TB, newWorld remote.Maker) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "w.sock")
	l, err := net.ListenUnix("unixpacket", &net.UnixAddr{Name: path, Net: "unixpacket"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_ = remote.Serve(c, newWorld)
			}()
		}
	}()
	return path
}

func pendulums(bodies int, step int64) (remote.Model, error) {
	return dynamics.New("pendulum", bodies, step, nil)
}

// A pendulum served over the protocol moves exactly as the embedded one
// under the same commands, partial steps included: the same float64s.
func TestMatchesEmbedded(t *testing.T) {
	path := serveOn(t, pendulums)
	w, err := remote.New(remote.Conf{Socket: path}, 2, ms)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	local, err := dynamics.New("pendulum", 2, ms, nil)
	if err != nil {
		t.Fatal(err)
	}
	if w.Bodies() != 2 || w.CommandLen(0) != local.CommandLen(0) || w.ObservationLen(1) != local.ObservationLen(1) ||
		strings.Join(w.JointNames(0), ",") != strings.Join(dynamics.JointNames(local, "pendulum", 0), ",") {
		t.Fatalf("remote: %d bodies, command %d, observation %d, joints %v", w.Bodies(), w.CommandLen(0), w.ObservationLen(1), w.JointNames(0))
	}
	var a, b [8]float64
	for k := 0; k < 3000; k++ {
		if k%7 == 3 { // a command between two steps: a partial step
			u := []float64{math.Sin(float64(k)) * 4}
			for _, x := range []dynamics.World{w, local} {
				x.Step(ms / 3)
				x.SetCommand(k%2, u)
				x.Step(ms - ms/3)
			}
		} else {
			w.Step(ms)
			local.Step(ms)
		}
		for body := range 2 {
			n, m := w.Observe(body, a[:]), local.Observe(body, b[:])
			if n != m || a != b {
				t.Fatalf("step %d body %d: remote %v, embedded %v", k, body, a[:n], b[:m])
			}
		}
	}
	if w.Err() != nil || w.Now() != 3000*ms {
		t.Fatalf("err %v, now %d", w.Err(), w.Now())
	}
	u := []float64{1}
	if n := testing.AllocsPerRun(200, func() {
		w.SetCommand(0, u)
		w.Step(ms)
		w.Observe(0, a[:])
	}); n != 0 {
		t.Errorf("%g allocations per step", n)
	}
}

// The world process tcs starts: this test binary, serving a pendulum.
func TestMain(m *testing.M) {
	if os.Getenv("TCS_REMOTE_TEST_WORLD") != "" {
		switch os.Getenv("TCS_REMOTE_TEST_WORLD") {
		case "exit":
			os.Stderr.WriteString("no world here\n")
			os.Exit(3)
		case "silent": // connects, never answers
			c, err := remote.Dial()
			if err == nil {
				time.Sleep(5 * time.Second)
				c.Close()
			}
			os.Exit(0)
		}
		c, err := remote.Dial()
		if err == nil {
			err = remote.Serve(c, pendulums)
		}
		if err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestStartsTheWorldProcess(t *testing.T) {
	t.Setenv("TCS_REMOTE_TEST_WORLD", "serve")
	w, err := remote.New(remote.Conf{Cmd: []string{os.Args[0]}}, 1, ms)
	if err != nil {
		t.Fatal(err)
	}
	w.SetCommand(0, []float64{2})
	for range 100 {
		w.Step(ms)
	}
	var obs [2]float64
	if w.Err() != nil || w.Observe(0, obs[:]) != 2 || obs[1] == 0 {
		t.Fatalf("err %v, observation %v", w.Err(), obs)
	}
	w.Close()
}

func TestErrors(t *testing.T) {
	t.Run("process ends first", func(t *testing.T) {
		t.Setenv("TCS_REMOTE_TEST_WORLD", "exit")
		_, err := remote.New(remote.Conf{Cmd: []string{os.Args[0], "-x"}}, 1, ms)
		if err == nil || !errors.Is(err, remote.ErrWorld) || !strings.Contains(err.Error(), "exit status 3") ||
			!strings.Contains(err.Error(), "no world here") || !strings.Contains(err.Error(), " -x") {
			t.Fatalf("%v: want the command, its exit and its output", err)
		}
	})
	t.Run("no answer", func(t *testing.T) {
		t.Setenv("TCS_REMOTE_TEST_WORLD", "silent")
		t0 := time.Now()
		_, err := remote.New(remote.Conf{Cmd: []string{os.Args[0]}, Timeout: 300 * time.Millisecond}, 1, ms)
		if err == nil || !strings.Contains(err.Error(), "no answer to hello") || time.Since(t0) > 4*time.Second {
			t.Fatalf("%v after %v: want no answer to hello, soon", err, time.Since(t0))
		}
	})
	t.Run("bodies", func(t *testing.T) {
		path := serveOn(t, func(int, int64) (remote.Model, error) { return dynamics.New("pendulum", 3, ms, nil) })
		_, err := remote.New(remote.Conf{Socket: path}, 2, ms)
		if err == nil || !strings.Contains(err.Error(), "3 bodies, the scenario 2 robots") {
			t.Fatalf("%v", err)
		}
	})
	t.Run("world refuses", func(t *testing.T) {
		path := serveOn(t, func(int, int64) (remote.Model, error) { return nil, errors.New("no such robot") })
		_, err := remote.New(remote.Conf{Socket: path}, 1, ms)
		if err == nil || !strings.Contains(err.Error(), "failed at hello: no such robot") {
			t.Fatalf("%v", err)
		}
	})
	t.Run("world fails while stepping", func(t *testing.T) {
		path := serveOn(t, func(int, int64) (remote.Model, error) { return &failing{}, nil })
		w, err := remote.New(remote.Conf{Socket: path}, 1, ms)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		w.Step(ms)
		w.Step(ms)
		if err := w.Err(); err == nil || !strings.Contains(err.Error(), "failed at a step: unstable") || w.Now() != 2*ms {
			t.Fatalf("err %v, now %d", err, w.Now())
		}
	})
	t.Run("neither or both", func(t *testing.T) {
		for _, c := range []remote.Conf{{}, {Cmd: []string{"x"}, Socket: "y"}} {
			if _, err := remote.New(c, 1, ms); err == nil || !strings.Contains(err.Error(), "cmd") {
				t.Errorf("%+v: %v", c, err)
			}
		}
	})
	t.Run("no socket", func(t *testing.T) {
		_, err := remote.New(remote.Conf{Socket: filepath.Join(t.TempDir(), "none")}, 1, ms)
		if err == nil || !strings.Contains(err.Error(), "none") {
			t.Fatalf("%v", err)
		}
	})
}

// failing is a world that fails at its first step.
type failing struct{ now int64 }

func (f *failing) Bodies() int                { return 1 }
func (f *failing) CommandLen(int) int         { return 1 }
func (f *failing) SetCommand(int, []float64)  {}
func (f *failing) Step(h int64)               { f.now += h }
func (f *failing) Observe(int, []float64) int { return 0 }
func (f *failing) Now() int64                 { return f.now }
func (f *failing) Err() error                 { return errors.New("unstable") }

// A world says in its hello whether it can reset: the pendulum can, and
// its reset answers its initial state; a world without Reset cannot, and
// tcs does not ask it.
func TestReset(t *testing.T) {
	w, err := remote.New(remote.Conf{Socket: serveOn(t, pendulums)}, 1, ms)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	var before, after [2]float64
	w.Observe(0, before[:])
	w.SetCommand(0, []float64{3})
	for range 200 {
		w.Step(ms)
	}
	w.Reset()
	w.Observe(0, after[:])
	if !dynamics.CanReset(w) || w.Err() != nil || after != before || w.Now() != 200*ms {
		t.Fatalf("can reset %v, err %v, state %v after a reset (initial %v), now %d", dynamics.CanReset(w), w.Err(), after, before, w.Now())
	}
	f, err := remote.New(remote.Conf{Socket: serveOn(t, func(int, int64) (remote.Model, error) { return &failing{}, nil })}, 1, ms)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.Reset()
	if dynamics.CanReset(f) || f.Err() != nil {
		t.Fatalf("a world without Reset: can reset %v, err %v", dynamics.CanReset(f), f.Err())
	}
}

// sensing is a pendulum that names a sensor group.
type sensing struct{ remote.Model }

func (sensing) SensorGroups(b int) []sensor.Sensor {
	return []sensor.Sensor{{Name: "imu", Frame: "imu_link", Kind: sensor.IMU, At: [3]int{2, -1, 6}}}
}

// A world's sensor groups cross in its hello.
func TestSensorsCross(t *testing.T) {
	path := serveOn(t, func(bodies int, step int64) (remote.Model, error) {
		m, err := pendulums(bodies, step)
		return sensing{m}, err
	})
	w, err := remote.New(remote.Conf{Socket: path}, 2, ms)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	want := sensing{}.SensorGroups(0)
	for b := range 2 {
		if got := dynamics.Sensors(w, b); len(got) != 1 || got[0] != want[0] {
			t.Errorf("body %d: sensors %+v, want %+v", b, got, want)
		}
	}
}
