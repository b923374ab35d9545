package controllers

import (
	"math"
	"testing"

	"github.com/tcs-robotics/tcs/dynamics"
)

// simulatePD runs law at 1 kHz on the default pendulum for dur seconds
// (torque held between activations, as the hold actuation does) and
// returns the first time from which the pendulum stayed within 0.1 rad of
// upright until the end (−1 if it never settled), and the final state.
func simulatePD(t *testing.T, law PD, p dynamics.PendulumParams, dur float64) (settled, theta, thetadot float64) {
	return simulatePDLatency(t, law, p, dur, 0)
}

// simulatePDLatency is simulatePD with the command taking effect lat ns
// after the observation it was computed from (0 ≤ lat < 1 ms), as when the
// controller's computation is charged to virtual time.
func simulatePDLatency(t *testing.T, law PD, p dynamics.PendulumParams, dur float64, lat int64) (settled, theta, thetadot float64) {
	t.Helper()
	w, err := dynamics.NewPendulum(1, 1e6, p)
	if err != nil {
		t.Fatal(err)
	}
	var obs [2]float64
	var cmd [1]float64
	settled = -1
	steps := int(dur * 1000)
	for k := range steps {
		w.Observe(0, obs[:])
		if math.Abs(WrapAngle(obs[0]-math.Pi)) < 0.1 {
			if settled < 0 {
				settled = float64(k) / 1000
			}
		} else {
			settled = -1
		}
		cmd[0] = law.Torque(obs[0], obs[1], math.Pi)
		if lat > 0 {
			w.Step(lat)
		}
		w.SetCommand(0, cmd[:])
		w.Step(1e6 - lat)
	}
	theta, thetadot = w.State(0)
	return settled, theta, thetadot
}

func TestDefaultPDSwingsUpAndBalances(t *testing.T) {
	settled, theta, thetadot := simulatePD(t, DefaultPD(), dynamics.DefaultPendulumParams(), 10)
	t.Logf("upright (within 0.1 rad, for good) from t = %.3f s; final θ−π = %.2g rad, θ̇ = %.2g rad/s", settled, WrapAngle(theta-math.Pi), thetadot)
	if settled < 0 || settled > 5 {
		t.Fatalf("did not swing up and stay upright within 5 s (settled at %v)", settled)
	}
	if math.Abs(WrapAngle(theta-math.Pi)) > 1e-3 || math.Abs(thetadot) > 1e-3 {
		t.Fatalf("final state θ−π = %v, θ̇ = %v: not balanced", WrapAngle(theta-math.Pi), thetadot)
	}
}

func TestPDFromOtherStarts(t *testing.T) {
	for _, th0 := range []float64{0, -0.05, 1, -2, 3} {
		p := dynamics.DefaultPendulumParams()
		p.InitialTheta = th0
		settled, _, _ := simulatePD(t, DefaultPD(), p, 15)
		t.Logf("θ0 = %v: settled at %.3f s", th0, settled)
		if settled < 0 {
			t.Errorf("θ0 = %v: never balanced", th0)
		}
	}
}

// TestPDToleratesComputeLatency: the default gains still balance when each
// command lands 0.9 ms after its observation (a controller that uses 90% of
// its period under consistent time).
func TestPDToleratesComputeLatency(t *testing.T) {
	settled, theta, thetadot := simulatePDLatency(t, DefaultPD(), dynamics.DefaultPendulumParams(), 10, 900_000)
	t.Logf("with 0.9 ms latency: upright for good from %.3f s", settled)
	if settled < 0 || settled > 5 || math.Abs(WrapAngle(theta-math.Pi)) > 1e-3 || math.Abs(thetadot) > 1e-3 {
		t.Fatalf("not balanced with 0.9 ms latency: settled %v, θ−π %v, θ̇ %v", settled, WrapAngle(theta-math.Pi), thetadot)
	}
}

func TestWrapAngle(t *testing.T) {
	for _, tc := range [][2]float64{{0, 0}, {math.Pi, math.Pi}, {-math.Pi, math.Pi}, {3 * math.Pi, math.Pi}, {2*math.Pi + 0.5, 0.5}, {-0.5, -0.5}} {
		if got := WrapAngle(tc[0]); math.Abs(got-tc[1]) > 1e-12 {
			t.Errorf("WrapAngle(%v) = %v, want %v", tc[0], got, tc[1])
		}
	}
}

func TestPDTorqueNoAllocs(t *testing.T) {
	law := DefaultPD()
	if a := testing.AllocsPerRun(100, func() { law.Torque(1, 2, math.Pi) }); a != 0 {
		t.Fatalf("%v allocations", a)
	}
	if u := law.Torque(math.NaN(), 0, math.Pi); u != 0 {
		t.Fatalf("NaN state gives %v", u)
	}
}
