package controllers

import (
	"bytes"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tcs-robotics/tcs/coordinator/native/nativetest"
	"github.com/tcs-robotics/tcs/dynamics"
)

// clientEnv, in a re-executed test binary, names the client to run through
// Main; its arguments follow "--" on the command line.
const clientEnv = "TCS_CONTROLLERS_TEST_CLIENT"

// mallocsEnv, in a re-executed test binary, names a file to write the
// process's total heap allocation count to when Main returns.
const mallocsEnv = "TCS_CONTROLLERS_TEST_MALLOCS"

func TestMain(m *testing.M) {
	if name := os.Getenv(clientEnv); name != "" {
		args := os.Args[1:]
		for i, a := range args {
			if a == "--" {
				args = args[i+1:]
				break
			}
		}
		code := Main(name, args)
		if path := os.Getenv(mallocsEnv); path != "" {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			os.WriteFile(path, []byte(strconv.FormatUint(ms.Mallocs, 10)), 0o644)
		}
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// goClient is the command running bundled client name with args.
func goClient(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^$", "--"}, args...)...)
	cmd.Env = append(os.Environ(), clientEnv+"="+name)
	cmd.Stderr = os.Stderr
	return cmd
}

// pendulumServer serves a client in lockstep with the default pendulum at
// 1 kHz for dur, and records when it got upright for good.
type pendulumRun struct {
	srv     *nativetest.Server
	world   *dynamics.Pendulum
	settled int64 // first virtual time from which it stayed within 0.1 rad of upright; -1 never
}

func newPendulumRun(t *testing.T, dur time.Duration) *pendulumRun {
	t.Helper()
	w, err := dynamics.NewPendulum(1, 1e6, dynamics.DefaultPendulumParams())
	if err != nil {
		t.Fatal(err)
	}
	r := &pendulumRun{world: w, settled: -1}
	r.srv = &nativetest.Server{World: w, Step: 1e6, Period: 1e6, End: int64(dur)}
	r.srv.OnRead = func(now int64, obs []float64) {
		if math.Abs(WrapAngle(obs[0]-math.Pi)) < 0.1 {
			if r.settled < 0 {
				r.settled = now
			}
		} else {
			r.settled = -1
		}
	}
	return r
}

func (r *pendulumRun) run(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if err := r.srv.Start(cmd); err != nil {
		t.Fatal(err)
	}
	if err := r.srv.Run(); err != nil {
		t.Fatalf("client: %v", err)
	}
}

func (r *pendulumRun) checkBalanced(t *testing.T, within time.Duration) {
	t.Helper()
	theta, thetadot := r.world.State(0)
	t.Logf("upright for good from %.3f s; at %.1f s θ−π = %.2g rad, θ̇ = %.2g rad/s",
		float64(r.settled)/1e9, float64(r.world.Now())/1e9, WrapAngle(theta-math.Pi), thetadot)
	if r.settled < 0 || r.settled > int64(within) {
		t.Fatalf("not upright for good within %v (settled at %d ns)", within, r.settled)
	}
	if math.Abs(WrapAngle(theta-math.Pi)) > 1e-3 || math.Abs(thetadot) > 1e-3 {
		t.Fatalf("not balanced at the end: θ−π = %v, θ̇ = %v", WrapAngle(theta-math.Pi), thetadot)
	}
}

// TestPDClientBalances runs `tcs client pd` through the real native
// protocol (pipes, memfd) in lockstep with the pendulum.
func TestPDClientBalances(t *testing.T) {
	r := newPendulumRun(t, 8*time.Second)
	r.run(t, goClient("pd"))
	r.checkBalanced(t, 5*time.Second)
	if w := r.srv.Written(0); w == nil || w.Count != 8001 {
		t.Fatalf("commands written: %+v, want 8001 (activations at 0, 1 ms, …, 8 s)", w)
	}
}

// TestPDClientFollowsPlan: with --plan the PD holds the plan's target
// instead of upright (a PD with gravity leaves an offset: e = kp·δ/(kp−mgl)).
func TestPDClientFollowsPlan(t *testing.T) {
	r := newPendulumRun(t, 8*time.Second)
	const delta = 0.1
	r.srv.Send(1, 0, []float64{math.Pi + delta, 0, 1})
	r.run(t, goClient("pd", "--plan"))
	theta, _ := r.world.State(0)
	law := DefaultPD()
	want := law.Kp * delta / (law.Kp - law.Mass*law.Gravity*law.Length)
	if got := WrapAngle(theta - math.Pi); math.Abs(got-want) > 1e-3 {
		t.Fatalf("θ−π = %v, want %v (held at the plan's target)", got, want)
	}
}

// TestPDClientWork: --work burns the asked CPU per activation.
func TestPDClientWork(t *testing.T) {
	r := newPendulumRun(t, 200*time.Millisecond)
	cmd := goClient("pd", "--work", "1ms")
	start := time.Now()
	r.run(t, cmd)
	cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	t.Logf("200 activations with --work 1ms: %v CPU, %v wall", cpu, time.Since(start))
	if cpu < 200*time.Millisecond {
		t.Fatalf("used %v of CPU, want ≥ 200 × 1ms", cpu)
	}
}

func TestCPDClientBalances(t *testing.T) {
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("gcc not installed")
	}
	bin := filepath.Join(t.TempDir(), "pd")
	build := exec.Command(gcc, "-O2", "-std=c11", "-Wall", "-Wextra", "-Werror",
		"-I", filepath.Join("..", "coordinator", "native"), "-o", bin, filepath.Join("c", "pd.c"), "-lm")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	r := newPendulumRun(t, 8*time.Second)
	cmd := exec.Command(bin)
	cmd.Stderr = os.Stderr
	r.run(t, cmd)
	r.checkBalanced(t, 5*time.Second)

	// Not under tcs: a clear message, exit 1.
	var stderr bytes.Buffer
	cmd = exec.Command(bin)
	cmd.Env = []string{}
	cmd.Stderr = &stderr
	err = cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(stderr.String(), "TCS_NATIVE is not set") {
		t.Fatalf("without tcs: %v, %q", err, stderr.String())
	}
}

func TestCrashClient(t *testing.T) {
	r := newPendulumRun(t, time.Second)
	if err := r.srv.Start(goClient("crash", "--after", "7")); err != nil {
		t.Fatal(err)
	}
	err := r.srv.Run()
	var ee *nativetest.ExitError
	if !errors.As(err, &ee) || ee.Code != 3 {
		t.Fatalf("crash client: %v, want exit code 3", err)
	}
	if got := r.srv.Progress(); got != 7e6 {
		t.Fatalf("progress %d, want 7 activations = 7e6", got)
	}
}

func TestPlannerClient(t *testing.T) {
	w, _ := dynamics.NewPendulum(1, 1e6, dynamics.DefaultPendulumParams())
	srv := &nativetest.Server{World: w, Step: 1e6, MaxRequests: 6}
	if err := srv.Start(goClient("planner", "--chunk", "2ms", "--target", "3")); err != nil {
		t.Fatal(err)
	}
	if err := srv.Run(); err != nil {
		t.Fatal(err)
	}
	p := srv.Written(1)
	if p == nil || p.Count != 5 || len(p.Last) != 3 || p.Last[0] != 3 || p.Last[2] != 5 {
		t.Fatalf("plans: %+v, want 5 (after hello) with [3, cpu, 5]", p)
	}
	if p.Last[1] < 5*0.002 {
		t.Fatalf("planner reports %v s of CPU after 5 chunks of 2ms", p.Last[1])
	}
}

func TestSpinClient(t *testing.T) {
	cmd := goClient("spin")
	cmd.Env = append(cmd.Env, "GOMAXPROCS=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		t.Fatalf("spin exited: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	cmd.Process.Kill()
	<-done
	if cpu := cmd.ProcessState.UserTime(); runtime.NumCPU() > 1 && cpu < 100*time.Millisecond {
		t.Errorf("spin used only %v of CPU in 300 ms", cpu)
	}
}

func TestMainErrors(t *testing.T) {
	var stderr bytes.Buffer
	if code := run("nope", nil, &stderr); code != 2 || !strings.Contains(stderr.String(), `unknown client "nope" (known: crash, pd, planner, spin)`) {
		t.Fatalf("unknown name: %d %q", code, stderr.String())
	}
	stderr.Reset()
	if code := run("pd", []string{"--kp"}, &stderr); code != 2 {
		t.Fatalf("bad flag: %d %q", code, stderr.String())
	}
	stderr.Reset()
	if code := run("pd", []string{"extra"}, &stderr); code != 2 {
		t.Fatalf("extra args: %d %q", code, stderr.String())
	}
	stderr.Reset()
	t.Setenv("TCS_NATIVE", "")
	if code := run("crash", nil, &stderr); code != 1 || !strings.Contains(stderr.String(), "not running under tcs: TCS_NATIVE is not set") {
		t.Fatalf("outside tcs: %d %q", code, stderr.String())
	}
	stderr.Reset()
	if code := run("planner", []string{"-h"}, &stderr); code != 0 || !strings.Contains(stderr.String(), "usage: tcs client planner") {
		t.Fatalf("-h: %d %q", code, stderr.String())
	}
}

// TestPDClientLoopNoAllocs: the pd client's allocations do not grow with the
// number of activations (counted in the client process).
func TestPDClientLoopNoAllocs(t *testing.T) {
	mallocs := func(dur time.Duration) uint64 {
		path := filepath.Join(t.TempDir(), "mallocs")
		r := newPendulumRun(t, dur)
		cmd := goClient("pd", "--plan")
		cmd.Env = append(cmd.Env, mallocsEnv+"="+path)
		r.srv.Send(1, 0, []float64{math.Pi})
		r.run(t, cmd)
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		n, err := strconv.ParseUint(string(b), 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	short, long := mallocs(10*time.Millisecond), mallocs(2*time.Second)
	t.Logf("mallocs: %d for 11 activations, %d for 2001", short, long)
	if long > short+20 {
		t.Fatalf("%d more allocations for 1990 more activations", long-short)
	}
}
