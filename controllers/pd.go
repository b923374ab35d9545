package controllers

import (
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"time"

	"github.com/tcs-robotics/tcs/coordinator/native"
)

// runPD is `tcs client pd`: every activation k (period P from hello) it
// reads [θ, θ̇], computes the PD torque (DefaultPD's law), writes it on
// channel 0 and idles until (k+1)·P. With --plan it takes its target angle
// from the newest plan on channel 1 (plan[0]).
func runPD(args []string, stderr io.Writer) int {
	law := DefaultPD()
	fs := newFlags("pd", pdUsage, stderr)
	fs.Float64Var(&law.Kp, "kp", law.Kp, "proportional gain near the target, N·m/rad")
	fs.Float64Var(&law.Kd, "kd", law.Kd, "derivative gain near the target, N·m·s/rad")
	fs.Float64Var(&law.Ke, "ke", law.Ke, "energy-pumping gain for the swing-up, N·m/J")
	fs.Float64Var(&law.Catch, "catch", law.Catch, "switch from swing-up to PD within this angle of the target, rad")
	fs.Float64Var(&law.MaxTorque, "max-torque", law.MaxTorque, "torque limit, N·m")
	fs.Float64Var(&law.Mass, "mass", law.Mass, "pendulum mass used for the energy, kg")
	fs.Float64Var(&law.Length, "length", law.Length, "pendulum length used for the energy, m")
	fs.Float64Var(&law.Gravity, "gravity", law.Gravity, "gravity used for the energy, m/s²")
	target := fs.Float64("target", math.Pi, "target angle, rad (π: upright)")
	plan := fs.Bool("plan", false, "take the target from the newest plan on channel 1 (plan[0])")
	work := fs.Duration("work", 0, "CPU time to burn per activation (a known cost for tests)")
	period := fs.Duration("period", time.Millisecond, "period when the coordinator gives none (best-effort)")
	if code := parse(fs, args); code >= 0 {
		return code
	}
	if *work < 0 || *period <= 0 {
		fmt.Fprintln(stderr, "tcs client pd: --work must be ≥ 0 and --period > 0")
		return 2
	}
	runtime.LockOSThread() // --work measures this thread's CPU clock
	c, err := native.Connect()
	if err != nil {
		return finish("pd", err, stderr)
	}
	defer c.Close()
	p := c.Period()
	if p <= 0 {
		p = int64(*period)
	}
	return finish("pd", pdLoop(c, &law, p, *target, *plan, int64(*work)), stderr)
}

// pdLoop is the activation loop; it does not allocate. Each activation is
// one round trip (WriteIdle), its observation delivered with it; only when
// the world lags the activation does it Read the sample at its progress.
func pdLoop(c *native.Client, law *PD, period int64, target float64, usePlan bool, work int64) error {
	var obs [2]float64
	var cmd [1]float64
	var planBuf [4]float64
	k := c.Now() / period
	n, _, err := c.Read(obs[:])
	for {
		if err != nil {
			return err
		}
		if n < 2 {
			return errors.New("observation has fewer than 2 values (want [θ, θ̇])")
		}
		if usePlan {
			// The newest plan comes with the activation when channel 1 is
			// the first the client subscribes to; Recv otherwise.
			m, _ := c.In(planBuf[:])
			if m == 0 {
				if m, _, err = c.Recv(1, planBuf[:]); err != nil {
					return err
				}
			}
			if m > 0 && !math.IsNaN(planBuf[0]) {
				target = planBuf[0]
			}
		}
		cmd[0] = law.Torque(obs[0], obs[1], target)
		if work > 0 {
			burn(work)
		}
		k++
		if _, err = c.WriteIdle(0, cmd[:], k*period); err != nil {
			return err
		}
		if n, _ = c.Obs(obs[:]); !c.Current() {
			n, _, err = c.Read(obs[:])
		}
	}
}
